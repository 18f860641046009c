// Reduction kernels compiled for avx2 (body.inc).
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

constinit const Kernels kAvx2 = make_table("avx2");

}  // namespace tessera::dnn::red_kernels
