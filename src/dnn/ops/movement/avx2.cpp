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
}  // namespace

constinit const Kernels kAvx2 = make_table("avx2", &transpose_blocks<std::uint8_t, 16, 32, &t16x32_b8>,
                                              &transpose_blocks<std::uint16_t, 8, 16, &t8x16_b16>,
                                              &transpose_blocks<float, 8, 8, &t8x8_b32>,
                                              &transpose_blocks<double, 4, 4, &t4x4_b64>);

}  // namespace tessera::dnn::move_kernels
