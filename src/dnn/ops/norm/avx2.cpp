// Norm kernels (batch, layer, group, instance) for AVX2 + FMA, compiled with the AVX2 flags only.
// The bodies are in body.inc over the traits of simd_avx2.inc.
#include <cstdint>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::norm {
namespace {

// The vector traits, then the kernel bodies written against them (order matters).
#include "simd_avx2.inc"
// (kernel bodies)
#include "body.inc"

}  // namespace

const NormKernels kNormAvx2 = make_norm_kernels("avx2");

}  // namespace tessera::dnn::norm
