// Softmax kernels for AVX2 + FMA + F16C, compiled with those flags only.
#include <cstdint>
#include <type_traits>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::softmax_kernels {
namespace {

// The vector type, the math written against it, then the kernels (order matters).
#include "../activation/avx2_vec.inc"
// (vector math)
#include "../activation/simd_math.inc"
// (storage loops)
#include "../activation/simd_loops.inc"
// (kernels)
#include "softmax_body.inc"

}  // namespace

extern const Kernels kAvx2 = make_kernels("avx2");

}  // namespace tessera::dnn::softmax_kernels
