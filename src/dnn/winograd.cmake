# Winograd F(2x2,3x3) and F(4x4,3x3) convolution.
list(APPEND DNN_SOURCES ops/conv/winograd.cpp)
