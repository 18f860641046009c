# trsm, trmm, syrk, trtri (plain and batched) against plain references.
tessera_test(tessera_blas_level3_test level3_test.cpp)
