# gemm: the engine (five loops around packing), microkernels per ISA, batched and
# low-precision entry points.
list(APPEND BLAS_SOURCES
  gemm/gemm.cpp
)
