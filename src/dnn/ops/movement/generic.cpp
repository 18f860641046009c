// Data-movement kernels compiled for generic (body.inc over convert.inc).
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
}  // namespace

constinit const Kernels kGeneric = make_table("generic", &transpose_loop<std::uint8_t>, &transpose_loop<std::uint16_t>, &transpose_loop<std::uint32_t>,
                                                 &transpose_loop<std::uint64_t>);

}  // namespace tessera::dnn::move_kernels
