// Data-movement kernels compiled for avx512 (body.inc over convert.inc, avx_transpose.inc,
// avx512_transpose.inc).
// GCC 12's AVX-512 shuffle and unpack intrinsics pass _mm512_undefined_*() as the unused
// merge source; once inlined, -Wuninitialized may flag it.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels.hpp"

namespace tessera::dnn::move_kernels {
namespace {
#include "convert.inc"
#include "body.inc"
#include "avx_transpose.inc"
#include "avx512_transpose.inc"

constexpr Kernels table() {
  Kernels k = avx_table("avx512");
  k.transpose_lines[0] = &transpose_lines<std::uint8_t, 64, &t64x64_b8<false>, &t64x64_b8<true>, 16, 32, &t16x32_b8>;
  k.transpose_lines[1] = &transpose_lines<std::uint16_t, 32, &t32x32_b16<false>, &t32x32_b16<true>, 8, 16, &t8x16_b16>;
  k.transpose_lines[2] = &transpose_lines<float, 16, &t16x16_b32<false>, &t16x16_b32<true>, 8, 8, &t8x8_b32>;
  k.transpose_lines[3] = &transpose_lines<double, 8, &t8x8_b64<false>, &t8x8_b64<true>, 4, 4, &t4x4_b64>;
  return k;
}
}  // namespace

constinit const Kernels kAvx512 = table();

}  // namespace tessera::dnn::move_kernels
