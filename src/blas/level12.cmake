# Levels 1 and 2: append sources to BLAS_SOURCES / BLAS_AVX2 / BLAS_AVX512.
