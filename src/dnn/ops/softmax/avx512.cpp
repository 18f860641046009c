// Softmax kernels for AVX-512 (F/BW/DQ/VL), compiled with the AVX-512 flags only.
#include <bit>
#include <cstdint>
#include <type_traits>

// GCC 12's AVX-512 intrinsics pass _mm*_undefined_*() (a self-initialised variable) as the
// unused merge source of some conversions; once inlined, -Wuninitialized may flag it.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::softmax_kernels {
namespace {

// The vector type, the math written against it, then the kernels (order matters).
#include "../activation/avx512_vec.inc"
// (vector math)
#include "../activation/simd_math.inc"
// (storage loops)
#include "../activation/simd_loops.inc"
// (kernels)
#include "softmax_body.inc"

}  // namespace

extern const Kernels kAvx512 = make_kernels("avx512");

}  // namespace tessera::dnn::softmax_kernels
