// Data-movement kernels compiled for avx2 (body.inc over convert.inc, avx_transpose.inc: its
// blocks, and the streamed short rows).
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
  // (No line transposes: the 256-bit blocks as line blocks, their pieces streamed in order,
  // ran f32 8192^2 no faster and f16 3x slower: 16-byte non-temporal stores.)
  k.stream_rows = &stream_rows_t<&stream_span256>;
  return k;
}
}  // namespace

constinit const Kernels kAvx2 = table();

}  // namespace tessera::dnn::move_kernels
