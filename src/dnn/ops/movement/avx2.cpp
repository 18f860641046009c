// Data-movement kernels compiled for avx2 (body.inc over convert.inc, avx_transpose.inc).
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

constexpr Kernels table() {
  Kernels k = make_table("avx2", &transpose_blocks<std::uint8_t, 16, 32, &t16x32_b8>,
                         &transpose_blocks<std::uint16_t, 8, 16, &t8x16_b16>, &transpose_blocks<float, 8, 8, &t8x8_b32>,
                         &transpose_blocks<double, 4, 4, &t4x4_b64>);
  k.transpose_lines[0] = &transpose_lines<std::uint8_t, 64, &l64_b8<false>, &l64_b8<true>, 16, 32, &t16x32_b8>;
  k.transpose_lines[1] = &transpose_lines<std::uint16_t, 32, &l32_b16<false>, &l32_b16<true>, 8, 16, &t8x16_b16>;
  k.transpose_lines[2] = &transpose_lines<float, 16, &l16_b32<false>, &l16_b32<true>, 8, 8, &t8x8_b32>;
  k.transpose_lines[3] = &transpose_lines<double, 8, &l8_b64<false>, &l8_b64<true>, 4, 4, &t4x4_b64>;
  return k;
}
}  // namespace

constinit const Kernels kAvx2 = table();

}  // namespace tessera::dnn::move_kernels
