// f16 via AVX-512 conversions, bf16 via AVX512-BF16. Compiled with the AVX-512 flags.
// Whole vectors use plain loads and stores (masked stores are slow on some cores, AMD Zen 4
// among them); the tail uses masked ones, so every element takes the vector path.
#include <immintrin.h>

#include "half_kernels.hpp"

namespace tessera::detail {
namespace {
__mmask16 tail_mask(std::size_t left) {
  return left >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << left) - 1);
}
}  // namespace

void f32_to_f16_avx512(const float* src, std::uint16_t* dst, std::size_t n) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtps_ph(_mm512_loadu_ps(src + i), kRound));
  if (i < n) {
    __mmask16 m = tail_mask(n - i);
    _mm256_mask_storeu_epi16(dst + i, m, _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, src + i), kRound));
  }
}

void f16_to_f32_avx512(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
  if (i < n) {
    __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, src + i)));
  }
}

void f32_to_bf16_avx512bf16(const float* src, std::uint16_t* dst, std::size_t n) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i exp_mask = _mm512_set1_epi32(0x7f800000);
  for (std::size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m512 v = m == 0xffff ? _mm512_loadu_ps(src + i) : _mm512_maskz_loadu_ps(m, src + i);
    __m256i r = (__m256i)_mm512_cvtneps_pbh(v);
    // VCVTNEPS2BF16 treats f32 subnormals as zero; those lanes take integer rounding instead.
    __m512i x = _mm512_castps_si512(v);
    __mmask16 subnormal = _mm512_mask_cmpeq_epi32_mask(
        _mm512_test_epi32_mask(x, abs_mask), _mm512_and_si512(x, exp_mask), _mm512_setzero_si512());
    if (subnormal) {
      __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
      __m512i rounded = _mm512_srli_epi32(
          _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
      r = _mm256_mask_blend_epi16(subnormal, r, _mm512_cvtepi32_epi16(rounded));
    }
    if (m == 0xffff) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), r);
    else _mm256_mask_storeu_epi16(dst + i, m, r);
  }
}

void bf16_to_f32_avx512(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_storeu_si512(dst + i, _mm512_slli_epi32(w, 16));
  }
  if (i < n) {
    __mmask16 m = tail_mask(n - i);
    __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, src + i));
    _mm512_mask_storeu_epi32(dst + i, m, _mm512_slli_epi32(w, 16));
  }
}

}  // namespace tessera::detail
