// Norm kernels (batch, layer, group, instance) in plain C++ (one-lane traits of simd_generic.inc):
// the same bodies as the AVX2 and AVX-512 files, for CPUs (or TESSERA_MAX_ISA caps) without them.
#include <cmath>
#include <cstdint>

#include "kernels.hpp"

namespace tessera::dnn::norm {
namespace {

// The vector traits, then the kernel bodies written against them (order matters).
#include "simd_generic.inc"
// (kernel bodies)
#include "body.inc"

}  // namespace

const NormKernels kNormGeneric = make_norm_kernels("generic");

}  // namespace tessera::dnn::norm
