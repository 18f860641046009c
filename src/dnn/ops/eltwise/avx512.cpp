// Elementwise tensor-operation kernels compiled for avx512 (body.inc over scalar.inc).
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels.hpp"

namespace tessera::dnn::elt_kernels {
namespace {
#include "scalar.inc"
#include "body.inc"
}  // namespace

constinit const Kernels kAvx512 = make_table("avx512");

}  // namespace tessera::dnn::elt_kernels
