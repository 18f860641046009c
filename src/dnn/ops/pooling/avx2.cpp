// Pooling kernels for AVX2 + FMA, compiled with the AVX2 flags only. The bodies are in
// body.inc over the traits of ../norm/simd_avx2.inc.
#include <cstdint>
#include <type_traits>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::pool {
namespace {

// The vector traits, then the kernel bodies written against them (order matters).
#include "../norm/simd_avx2.inc"
// (kernel bodies)
#include "body.inc"

}  // namespace

const PoolKernels kPoolAvx2 = make_pool_kernels("avx2");

}  // namespace tessera::dnn::pool
