tessera_test(tessera_dnn_depthwise_test depthwise_test.cpp)
# The paths past the last-level cache (staged input rows, streamed outputs) on the same sweeps:
# TESSERA_STREAM_BYTES=0 sends every problem down them.
add_test(NAME tessera_dnn_depthwise_test_streamed COMMAND tessera_dnn_depthwise_test)
set_tests_properties(tessera_dnn_depthwise_test_streamed PROPERTIES ENVIRONMENT "TESSERA_STREAM_BYTES=0")
