// Level-1 kernels for AVX2 + FMA + F16C, compiled with those flags only. The bodies are in
// simd_body.inc; this file supplies the 8 x f32 / 4 x f64 traits (tails through maskload and
// maskstore) and the f16/bf16 loaders, plus the f32 sum of squares widened to f64.
#include <cstdint>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

#include "avx2_traits.inc"

// 8 halves from p, or `count` < 8 of them (zero-filled) through a small buffer.
__m128i load8(const std::uint16_t* p, std::int64_t count) {
  if (count >= 8) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  alignas(16) std::uint16_t buf[8] = {};
  for (std::int64_t i = 0; i < count; ++i) buf[i] = p[i];
  return _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
}
void store8(std::uint16_t* p, __m128i h, std::int64_t count) {
  if (count >= 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
    return;
  }
  alignas(16) std::uint16_t buf[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(buf), h);
  for (std::int64_t i = 0; i < count; ++i) p[i] = buf[i];
}

struct F16 {
  static __m256 load(const std::uint16_t* p, std::int64_t count) {
    return _mm256_cvtph_ps(load8(p, count));
  }
  static void store(std::uint16_t* p, __m256 v, std::int64_t count) {
    store8(p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), count);
  }
};

// bf16 rounding in integer arithmetic, bit for bit as f32_to_bf16_bits.
struct Bf16 {
  static __m256 load(const std::uint16_t* p, std::int64_t count) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load8(p, count)), 16));
  }
  static void store(std::uint16_t* p, __m256 v, std::int64_t count) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i r =
        _mm256_blendv_epi8(rounded, _mm256_or_si256(high, _mm256_set1_epi32(0x40)), nan);
    // packus works per 128-bit lane: gather the two low quadwords.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    store8(p, _mm256_castsi256_si128(packed), count);
  }
};

#include "simd_body.inc"

double sumsq_f32(i64 n, const float* x, float* max_abs) {
  __m256d s[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                  _mm256_setzero_pd()};
  __m256 m = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  i64 i = 0;
  for (; i + 16 <= n; i += 16)
    for (int u = 0; u < 2; ++u) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * u);
      m = _mm256_max_ps(_mm256_andnot_ps(sign, v), m);
      const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
      const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      s[2 * u] = _mm256_fmadd_pd(lo, lo, s[2 * u]);
      s[2 * u + 1] = _mm256_fmadd_pd(hi, hi, s[2 * u + 1]);
    }
  for (; i < n; i += 8) {
    const __m256 v =
        n - i >= 8 ? _mm256_loadu_ps(x + i) : _mm256_maskload_ps(x + i, Simd<float>::tail(n - i));
    m = _mm256_max_ps(_mm256_andnot_ps(sign, v), m);
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    s[0] = _mm256_fmadd_pd(lo, lo, s[0]);
    s[1] = _mm256_fmadd_pd(hi, hi, s[1]);
  }
  *max_abs = Simd<float>::hmax(m);
  return Simd<double>::hsum(_mm256_add_pd(_mm256_add_pd(s[0], s[1]), _mm256_add_pd(s[2], s[3])));
}

}  // namespace

extern const Level1Kernels kLevel1Avx2 = {
    "avx2",
    copy_stream,
    real_table<float>(sumsq_f32),
    real_table<double>(sumsq_f64),
    complex_table<float>(),
    complex_table<double>(),
    half_table<F16>(),
    half_table<Bf16>(),
};

}  // namespace tessera::blas::kernels
