# Pooling, batch/layer/group/instance norm and LRN: each against its reference, every ISA,
# both layouts, bf16/f16, thread counts, finite differences, bad arguments.
tessera_test(tessera_dnn_pooling_test pooling_test.cpp)
tessera_test(tessera_dnn_norm_test norm_test.cpp)
tessera_test(tessera_dnn_lrn_test lrn_test.cpp)
# The paths that stream their outputs past the last-level cache (non-temporal stores: pooling's
# dx rows, the norms' and LRN's outputs) on the same sweeps: TESSERA_STREAM_BYTES=0 streams all.
foreach(exe IN ITEMS tessera_dnn_pooling_test tessera_dnn_norm_test tessera_dnn_lrn_test)
  add_test(NAME ${exe}_streamed COMMAND ${exe})
  set_tests_properties(${exe}_streamed PROPERTIES ENVIRONMENT "TESSERA_STREAM_BYTES=0")
endforeach()
