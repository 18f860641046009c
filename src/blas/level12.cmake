# Levels 1 and 2: drivers (argument checks, threading, strided vectors) and the contiguous
# kernels, one file per instruction set (kernels/level1, kernels/level2).
list(APPEND BLAS_SOURCES
  level1.cpp
  level1_rotg.cpp
  kernels/level1/list.cpp
  kernels/level1/generic.cpp
  kernels/level1/avx2.cpp
  kernels/level1/avx512.cpp
)
list(APPEND BLAS_AVX2 kernels/level1/avx2.cpp)
list(APPEND BLAS_AVX512 kernels/level1/avx512.cpp)
list(APPEND BLAS_SOURCES
  level2_gemv.cpp
  level2_sym.cpp
  level2_tri.cpp
  kernels/level2/list.cpp
  kernels/level2/generic.cpp
  kernels/level2/avx2.cpp
  kernels/level2/avx512.cpp
)
list(APPEND BLAS_AVX2 kernels/level2/avx2.cpp)
list(APPEND BLAS_AVX512 kernels/level2/avx512.cpp)
