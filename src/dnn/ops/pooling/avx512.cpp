// Pooling kernels for AVX-512 (F/BW/DQ/VL), compiled with the AVX-512 flags only. The bodies
// are in body.inc over the 512-bit traits of ../norm/simd_avx512.inc.
#include <cstdint>
#include <type_traits>

// GCC 12's AVX-512 intrinsics pass _mm*_undefined_*() (a self-initialised variable) as the
// unused merge source of some conversions; once inlined, -Wuninitialized may flag it.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::pool {
namespace {

// The vector traits, then the kernel bodies written against them (order matters).
#include "../norm/simd_avx512.inc"
// (kernel bodies)
#include "body.inc"

}  // namespace

const PoolKernels kPoolAvx512 = make_pool_kernels("avx512");

}  // namespace tessera::dnn::pool
