// Reduction kernels compiled for avx512 (body.inc).
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels.hpp"

namespace tessera::dnn::red_kernels {
namespace {
#include "body.inc"
}  // namespace

constinit const Kernels kAvx512 = make_table("avx512");

}  // namespace tessera::dnn::red_kernels
