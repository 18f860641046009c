# Activations, PReLU, CReLU and softmax against their references (all ISA paths).
tessera_test(tessera_dnn_activation_test activation_test.cpp prelu_crelu_test.cpp softmax_test.cpp)
