# Winograd F(2x2,3x3) and F(4x4,3x3) convolution: the driver, and the kernels per instruction
# set (transforms written once in ops/conv/winograd_body.inc).
list(APPEND DNN_SOURCES
  ops/conv/winograd.cpp
  ops/conv/winograd_wgrad.cpp
  ops/conv/winograd_generic.cpp
  ops/conv/winograd_avx2.cpp
  ops/conv/winograd_avx512.cpp
)
list(APPEND DNN_AVX2 ops/conv/winograd_avx2.cpp)
list(APPEND DNN_AVX512 ops/conv/winograd_avx512.cpp)
