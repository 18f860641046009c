# Pooling, batch/layer/group/instance norm and LRN: each against its reference, every ISA,
# both layouts, bf16/f16, thread counts, finite differences, bad arguments.
tessera_test(tessera_dnn_pooling_test pooling_test.cpp)
tessera_test(tessera_dnn_norm_test norm_test.cpp)
tessera_test(tessera_dnn_lrn_test lrn_test.cpp)
