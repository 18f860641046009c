// Activation kernels for AVX-512 (F/BW/DQ/VL), compiled with the AVX-512 flags only: 16-lane
// f32 vectors, masked tails, bf16/f16 converted in registers.
#include <bit>
#include <cstdint>
#include <utility>

// GCC 12's AVX-512 intrinsics pass _mm*_undefined_*() (a self-initialised variable) as the
// unused merge source of some conversions; once inlined, -Wuninitialized may flag it.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::act_kernels {
namespace {

// The vector type, the math written against it, then the kernels (order matters).
#include "avx512_vec.inc"
// (vector math)
#include "simd_math.inc"
// (storage loops)
#include "simd_loops.inc"
// (kernels)
#include "act_body.inc"

}  // namespace

extern const Kernels kAvx512 = make_kernels("avx512", std::make_integer_sequence<int, kNumKinds>{});

}  // namespace tessera::dnn::act_kernels
