# Pooling, batch/layer/group/instance norm and local response normalisation: per family a
# reference, the entry points with their ordered implementation lists, and one kernel file per
# instruction set (bodies written once in body.inc over the traits in ops/norm/simd_*.inc).
list(APPEND DNN_SOURCES
  ops/pooling/ref.cpp ops/pooling/impls.cpp ops/pooling/backward.cpp ops/pooling/generic.cpp
  ops/pooling/avx2.cpp ops/pooling/avx512.cpp)
list(APPEND DNN_AVX2 ops/pooling/avx2.cpp)
list(APPEND DNN_AVX512 ops/pooling/avx512.cpp)
list(APPEND DNN_SOURCES
  ops/norm/common.cpp ops/norm/ref.cpp ops/norm/batch_norm.cpp ops/norm/layer_norm.cpp
  ops/norm/group_norm.cpp ops/norm/generic.cpp ops/norm/avx2.cpp ops/norm/avx512.cpp)
list(APPEND DNN_AVX2 ops/norm/avx2.cpp)
list(APPEND DNN_AVX512 ops/norm/avx512.cpp)
list(APPEND DNN_SOURCES
  ops/lrn/ref.cpp ops/lrn/impls.cpp ops/lrn/generic.cpp ops/lrn/avx2.cpp ops/lrn/avx512.cpp)
list(APPEND DNN_AVX2 ops/lrn/avx2.cpp)
list(APPEND DNN_AVX512 ops/lrn/avx512.cpp)
