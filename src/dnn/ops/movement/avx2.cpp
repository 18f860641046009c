// Data-movement kernels compiled for avx2 (body.inc over convert.inc, avx_transpose.inc and its
// table).
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

constinit const Kernels kAvx2 = avx_table("avx2");

}  // namespace tessera::dnn::move_kernels
