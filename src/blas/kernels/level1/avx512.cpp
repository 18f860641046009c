// Level-1 kernels for AVX-512 (F/BW/DQ/VL), compiled with the AVX-512 flags only. The bodies
// are in simd_body.inc over the 256-bit AVX-512VL traits of avx512_traits.inc (why 256 bits:
// see there); this file adds the f16/bf16 loaders and the f32 sum of squares widened to f64.
#include <cstdint>

// GCC 12's AVX-512 intrinsics pass _mm*_undefined_*() (a self-initialised variable) as the
// unused merge source of max/min/shuffle/extract; once inlined, -Wuninitialized may flag it.
// A false positive (the flags already drop -Wmaybe-uninitialized for the same reason).
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

#include "avx512_traits.inc"

__mmask8 first_lanes(std::int64_t count) {
  return count >= 8 ? __mmask8(0xff) : static_cast<__mmask8>((1u << count) - 1u);
}

struct F16 {
  static __m256 load(const std::uint16_t* p, std::int64_t count) {
    return _mm256_cvtph_ps(_mm_maskz_loadu_epi16(first_lanes(count), p));
  }
  static void store(std::uint16_t* p, __m256 v, std::int64_t count) {
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_mask_storeu_epi16(p, first_lanes(count), h);
  }
};

// bf16 rounding in integer arithmetic, bit for bit as f32_to_bf16_bits: round to nearest
// even; a NaN keeps its sign and top payload bits and is made quiet.
struct Bf16 {
  static __m256 load(const std::uint16_t* p, std::int64_t count) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_maskz_loadu_epi16(first_lanes(count), p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static void store(std::uint16_t* p, __m256 v, std::int64_t count) {
    const __m256i x = _mm256_castps_si256(v);
    const __mmask8 nan = _mm256_cmpgt_epi32_mask(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                                 _mm256_set1_epi32(0x7f800000));
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i r =
        _mm256_mask_mov_epi32(rounded, nan, _mm256_or_si256(high, _mm256_set1_epi32(0x40)));
    _mm_mask_storeu_epi16(p, first_lanes(count), _mm256_cvtepi32_epi16(r));
  }
};

#include "simd_body.inc"

// f32 squares summed in f64: eight floats per (256-bit) load, widened to eight doubles.
double sumsq_f32(i64 n, const float* x, float* max_abs) {
  __m512d s[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                  _mm512_setzero_pd()};
  __m512d m = _mm512_setzero_pd();  // f32 values are exact in f64
  i64 i = 0;
  for (; i + 32 <= n; i += 32)
    for (int u = 0; u < 4; ++u) {
      const __m512d d = _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * u));
      s[u] = _mm512_fmadd_pd(d, d, s[u]);
      m = _mm512_max_pd(_mm512_abs_pd(d), m);
    }
  for (; i < n; i += 8) {
    const __m512d d = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(first_lanes(n - i), x + i));
    s[0] = _mm512_fmadd_pd(d, d, s[0]);
    m = _mm512_max_pd(_mm512_abs_pd(d), m);
  }
  *max_abs = static_cast<float>(_mm512_reduce_max_pd(m));
  return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s[0], s[1]), _mm512_add_pd(s[2], s[3])));
}

}  // namespace

extern const Level1Kernels kLevel1Avx512 = {
    "avx512",
    copy_stream,
    real_table<float>(sumsq_f32),
    real_table<double>(sumsq_f64),
    complex_table<float>(),
    complex_table<double>(),
    half_table<F16>(),
    half_table<Bf16>(),
};

}  // namespace tessera::blas::kernels
