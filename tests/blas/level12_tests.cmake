# Levels 1 and 2 against the plain references in ref_level12.hpp (and OpenBLAS where installed).
tessera_test(tessera_blas_level12_test level1_test.cpp level2_test.cpp)
target_link_libraries(tessera_blas_level12_test PRIVATE ${CMAKE_DL_LIBS})
