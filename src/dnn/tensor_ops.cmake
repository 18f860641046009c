# Tensor operations: elementwise binary/unary/where with broadcasting and reductions. Per family
# the entry points (impls.cpp), the reference (eltwise/ref.cpp) and one kernel file per
# instruction set compiled from a shared body. The kernels do not read errno: -fno-math-errno
# lets the compiler vectorise sqrt, floor, ceil and rounding. Nor do they read the floating-point
# exception flags: -fno-trapping-math lets it turn selects that follow comparisons (f32 pow's
# special cases) into blends. Neither changes a result.
set(TENSOR_OPS_KERNELS
  ops/eltwise/generic.cpp ops/eltwise/avx2.cpp ops/eltwise/avx512.cpp
  ops/reduce/generic.cpp ops/reduce/avx2.cpp ops/reduce/avx512.cpp)
list(APPEND DNN_SOURCES
  ops/eltwise/nest.cpp ops/eltwise/ref.cpp ops/eltwise/impls.cpp ops/eltwise/chain.cpp ops/reduce/impls.cpp ops/reduce/api.cpp
  ${TENSOR_OPS_KERNELS})
list(APPEND DNN_AVX2 ops/eltwise/avx2.cpp ops/reduce/avx2.cpp)
list(APPEND DNN_AVX512 ops/eltwise/avx512.cpp ops/reduce/avx512.cpp)

# Data movement: the move engine (movement/move.cpp; parts.cpp: packed concat/split along
# short rows in one walk), the operations as views of it
# (movement/ops.cpp), the references of pad and resize (movement/ref.cpp), the indexing
# operations (movement/indexing.cpp: checks and references; index_dense.cpp: the fast entries)
# and one kernel file per instruction set.
set(MOVEMENT_KERNELS ops/movement/generic.cpp ops/movement/avx2.cpp ops/movement/avx512.cpp)
list(APPEND DNN_SOURCES ops/movement/move.cpp ops/movement/parts.cpp ops/movement/ops.cpp ops/movement/indexing.cpp ops/movement/index_dense.cpp ops/movement/resize.cpp ops/movement/ref.cpp ${MOVEMENT_KERNELS})
list(APPEND DNN_AVX2 ops/movement/avx2.cpp)
list(APPEND DNN_AVX512 ops/movement/avx512.cpp)

# MatMul with batch broadcasting on BLAS.
list(APPEND DNN_SOURCES ops/matmul/matmul.cpp ops/matmul/ref.cpp)

# Training operations: dropout and losses.
set(TRAINING_KERNELS ops/training/generic.cpp ops/training/avx2.cpp ops/training/avx512.cpp)
list(APPEND DNN_SOURCES ops/training/training.cpp ops/training/ref.cpp ${TRAINING_KERNELS})
list(APPEND DNN_AVX2 ops/training/avx2.cpp)
list(APPEND DNN_AVX512 ops/training/avx512.cpp)

# Recurrent networks (RNN, LSTM, GRU): the BLAS path and the per-step reference.
list(APPEND DNN_SOURCES ops/rnn/rnn.cpp ops/rnn/ref.cpp)
