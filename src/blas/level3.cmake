# trsm, trmm, syrk, trtri: append sources to BLAS_SOURCES / BLAS_AVX2 / BLAS_AVX512.
