// Level-2 kernels for AVX-512 (F/BW/DQ/VL), compiled with the AVX-512 flags only. The bodies
// are in simd_body.inc, over the traits of ../level1/avx512_traits.inc.
#include <cstdint>

// See ../level1/avx512.cpp: GCC 12's intrinsics trip -Wuninitialized on their own
// _mm*_undefined_*() merge sources.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

#include "../level1/avx512_traits.inc"
#include "simd_body.inc"

}  // namespace

extern const Level2Kernels kLevel2Avx512 = {"avx512", real_table<float>(), real_table<double>(),
                                            complex_table<float>(), complex_table<double>()};

}  // namespace tessera::blas::kernels
