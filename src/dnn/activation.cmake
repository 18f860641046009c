# Activations (elementwise kinds, PReLU, CReLU) and softmax / log-softmax: references, ordered
# lists and per-ISA kernels. Paths are relative to src/dnn.
list(APPEND DNN_SOURCES
  ops/activation/dense.cpp
  ops/activation/ref.cpp
  ops/activation/impls.cpp
  ops/activation/generic.cpp
  ops/activation/avx2.cpp
  ops/activation/avx512.cpp
  ops/softmax/ref.cpp
  ops/softmax/impls.cpp
  ops/softmax/generic.cpp
  ops/softmax/avx2.cpp
  ops/softmax/avx512.cpp)
list(APPEND DNN_AVX2 ops/activation/avx2.cpp ops/softmax/avx2.cpp)
list(APPEND DNN_AVX512 ops/activation/avx512.cpp ops/softmax/avx512.cpp)
