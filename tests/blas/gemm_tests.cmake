tessera_test(tessera_blas_gemm_test gemm_test.cpp handle_test.cpp)
target_link_libraries(tessera_blas_gemm_test PRIVATE ${CMAKE_DL_LIBS})
