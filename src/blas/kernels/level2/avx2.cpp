// Level-2 kernels for AVX2 + FMA, compiled with those flags only. The bodies
// are in simd_body.inc, over the traits of ../level1/avx2_traits.inc.
#include <cstdint>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

#include "../level1/avx2_traits.inc"
#include "simd_body.inc"

}  // namespace

extern const Level2Kernels kLevel2Avx2 = {"avx2", real_table<float>(), real_table<double>(),
                                          complex_table<float>(), complex_table<double>()};

}  // namespace tessera::blas::kernels
