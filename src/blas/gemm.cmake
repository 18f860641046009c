# gemm: the engine (five loops around packing), microkernels per ISA, batched and
# low-precision entry points.
list(APPEND BLAS_SOURCES
  gemm/engine.cpp
  gemm/gemm.cpp
  gemm/gemm_common.cpp
  gemm/gemm_lowp.cpp
  gemm/tune.cpp
  kernels/gemm/generic.cpp
  kernels/gemm/avx2.cpp
  kernels/gemm/avx512.cpp
)
list(APPEND BLAS_AVX2 kernels/gemm/avx2.cpp)
list(APPEND BLAS_AVX512 kernels/gemm/avx512.cpp)
