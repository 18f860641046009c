# Pooling, batch/layer/group/instance norm and LRN: each against its reference, every ISA,
# both layouts, bf16/f16, thread counts, finite differences, bad arguments.
tessera_test(tessera_dnn_pooling_test pooling_test.cpp)
tessera_test(tessera_dnn_norm_test norm_test.cpp)
tessera_test(tessera_dnn_lrn_test lrn_test.cpp)
# The pooling paths that stream their outputs past the last-level cache (dx rows written out
# with non-temporal stores), on the bit-for-bit sweeps: TESSERA_STREAM_BYTES=0 streams all.
add_test(NAME tessera_dnn_pooling_test_streamed
         COMMAND tessera_dnn_pooling_test
                 --gtest_filter=Pooling.*MatchReference*:Pooling.*MatchesReference*)
set_tests_properties(tessera_dnn_pooling_test_streamed PROPERTIES ENVIRONMENT
                     "TESSERA_STREAM_BYTES=0")
