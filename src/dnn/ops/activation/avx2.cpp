// Activation kernels for AVX2 + FMA + F16C, compiled with those flags only: 8-lane f32
// vectors, tails through maskload/maskstore or a small buffer, bf16/f16 converted in registers.
#include <cstdint>
#include <utility>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::act_kernels {
namespace {

// The vector type, the math written against it, then the kernels (order matters).
#include "avx2_vec.inc"
// (vector math)
#include "simd_math.inc"
// (storage loops)
#include "simd_loops.inc"
// (kernels)
#include "act_body.inc"

}  // namespace

extern const Kernels kAvx2 = make_kernels("avx2", std::make_integer_sequence<int, kNumKinds>{});

}  // namespace tessera::dnn::act_kernels
