# Tensor operations (elementwise with broadcasting, where, reductions) against their references.
tessera_test(tessera_dnn_tensor_ops_test tensor_ops_test.cpp)
