# Tensor operations (elementwise with broadcasting, where, reductions) against their references.
tessera_test(tessera_dnn_tensor_ops_test tensor_ops_test.cpp)
# Elementwise chains (the fused elementwise op) against the unfused operations, bitwise.
tessera_test(tessera_dnn_chain_test chain_test.cpp)
# Data movement (cast, transpose, slice, concat/split, pad, tile, expand, depth/space, reshape).
tessera_test(tessera_dnn_data_movement_test data_movement_test.cpp)
# Indexing (gather family, scatter family, one-hot), cumsum, top-k.
tessera_test(tessera_dnn_indexing_test indexing_test.cpp)
# MatMul with batch broadcasting (BLAS underneath).
tessera_test(tessera_dnn_matmul_test matmul_test.cpp)
# Dropout and losses, forward and backward (finite differences).
tessera_test(tessera_dnn_training_test training_test.cpp)
# Recurrent networks against the ONNX equations and finite differences.
tessera_test(tessera_dnn_rnn_test rnn_test.cpp)

# The streamed-output paths (non-temporal stores, taken for outputs past the last-level cache)
# on the same sweeps: TESSERA_STREAM_BYTES=0 streams every output.
foreach(suite IN ITEMS "tessera_dnn_tensor_ops_test;TensorOps.Binary*:TensorOps.Unary*:TensorOps.Where*"
                       "tessera_dnn_data_movement_test;DataMovement.Transpose*:DataMovement.Cast*:DataMovement.MoveEngine*:DataMovement.Concat*")
  list(GET suite 0 exe)
  list(GET suite 1 filter)
  add_test(NAME ${exe}_streamed COMMAND ${exe} --gtest_filter=${filter})
  set_tests_properties(${exe}_streamed PROPERTIES ENVIRONMENT "TESSERA_STREAM_BYTES=0")
endforeach()
