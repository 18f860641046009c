# trsm, trmm, syrk, trtri: recursive drivers whose bulk work is gemm, plain C++ leaves.
list(APPEND BLAS_SOURCES
  level3/args.cpp
  level3/syrk.cpp
  level3/trmm.cpp
  level3/trsm.cpp
  level3/trtri.cpp
  level3/unblocked.cpp
)
