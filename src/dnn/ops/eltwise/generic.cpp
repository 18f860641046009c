// Elementwise tensor-operation kernels compiled for generic (body.inc over scalar.inc).
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

constinit const Kernels kGeneric = make_table("generic");

}  // namespace tessera::dnn::elt_kernels
