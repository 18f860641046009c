// Data-movement kernels compiled for generic (body.inc over convert.inc).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels.hpp"

namespace tessera::dnn::move_kernels {
namespace {
#include "convert.inc"
#include "body.inc"
}  // namespace

constinit const Kernels kGeneric = make_table("generic", nullptr, nullptr);

}  // namespace tessera::dnn::move_kernels
