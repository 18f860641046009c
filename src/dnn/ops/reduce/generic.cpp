// Reduction kernels compiled for generic (body.inc).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels.hpp"

namespace tessera::dnn::red_kernels {
namespace {
#include "../half_blocks.inc"
#include "body.inc"
}  // namespace

constinit const Kernels kGeneric = make_table("generic");

}  // namespace tessera::dnn::red_kernels
