// Reduction kernels compiled for avx512 (body.inc).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::red_kernels {
namespace {
#include "../half_blocks.inc"
#include "body.inc"
}  // namespace

constinit const Kernels kAvx512 = make_table("avx512");

}  // namespace tessera::dnn::red_kernels
