# Convolution: descriptors and reference, GEMM-based algorithms, depthwise, direct, Winograd,
# the ordered lists and entry points, Find mode.
list(APPEND DNN_SOURCES
  ops/conv/problem.cpp
  ops/conv/ref.cpp
  ops/conv/gemm_algos.cpp
  ops/conv/depthwise.cpp
  ops/conv/depthwise_generic.cpp
  ops/conv/depthwise_avx2.cpp
  ops/conv/depthwise_avx512.cpp
  ops/conv/direct.cpp
  ops/conv/fft_conv.cpp
  ops/conv/brgemm.cpp
  ops/conv/brgemm_avx2.cpp
  ops/conv/brgemm_avx512.cpp
  ops/conv/impls.cpp
  ops/conv/api.cpp
  ops/conv/plan.cpp
  ops/conv/find.cpp
  ops/conv/layout.cpp
)
list(APPEND DNN_AVX2 ops/conv/depthwise_avx2.cpp ops/conv/brgemm_avx2.cpp)
list(APPEND DNN_AVX512 ops/conv/depthwise_avx512.cpp ops/conv/brgemm_avx512.cpp)
include(winograd.cmake)
