// Depthwise convolution kernels for AVX-512 (compiled with the AVX-512 flags only): 16 channels
// per vector, channel blocks of 32 (two vectors) with 8-pixel register blocks, masked channel
// tails. The kernels themselves are DwBody in depthwise_kernels.hpp.
#include <cmath>
#include <cstdint>

#include <immintrin.h>

#include "depthwise_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

struct S {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr std::int64_t kWidth = 16;
  static constexpr int kMaxNv = 2;
  static constexpr int kBlock = 8;
  static constexpr int kNchwVecs = 4;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float a) { return _mm512_set1_ps(a); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static Mask mask(std::int64_t n) { return static_cast<Mask>((1u << n) - 1u); }
  static V load_m(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store_m(float* p, V v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static V load_s2(const float* p) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_maskz_loadu_ps(0x7FFF, p + 16));
  }
  static V pin(V v) {
    asm("" : "+v"(v));
    return v;
  }
  static const float* step(const float* p, std::int64_t n) {
    p += n;
    asm("" : "+r"(p));
    return p;
  }
  static Mask mask_range(std::int64_t lo, std::int64_t hi) {
    return static_cast<Mask>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  }
  static V fmadd_m(V a, V b, V c, Mask m) { return _mm512_mask3_fmadd_ps(a, b, c, m); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static float hsum(V v) { return _mm512_reduce_add_ps(v); }
  static float fma1(float a, float b, float c) { return std::fma(a, b, c); }
};

// dst[j * ds + i] = src[i * ss + j] by 16 x 16 in-register transposes (masked at the edges).
void transpose(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ss, float* dst,
               std::int64_t ds) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += 16) {
    const std::int64_t nr = rows - i0 < 16 ? rows - i0 : 16;
    const __mmask16 mr = S::mask_range(0, nr);
    for (std::int64_t j0 = 0; j0 < cols; j0 += 16) {
      const std::int64_t nc = cols - j0 < 16 ? cols - j0 : 16;
      const __mmask16 mc = S::mask_range(0, nc);
      __m512 r[16], t[16];
      for (int i = 0; i < 16; ++i)
        r[i] = i < nr ? _mm512_maskz_loadu_ps(mc, src + (i0 + i) * ss + j0) : _mm512_setzero_ps();
      for (int i = 0; i < 16; i += 2) {  // lane L: r_i[4L], r_i+1[4L], r_i[4L+1], r_i+1[4L+1]
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
      }
      for (int i = 0; i < 16; i += 4) {  // r[i + k], lane L: column 4L + k of rows i..i+3
        const __m512d a0 = _mm512_castps_pd(t[i]), a1 = _mm512_castps_pd(t[i + 1]);
        const __m512d a2 = _mm512_castps_pd(t[i + 2]), a3 = _mm512_castps_pd(t[i + 3]);
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
      }
      for (int k = 0; k < 4; ++k) {  // columns k, 4 + k, 8 + k, 12 + k
        const __m512 a = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
        const __m512 b = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xdd);
        const __m512 e = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
        const __m512 f = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xdd);
        const __m512 col[4] = {_mm512_shuffle_f32x4(a, e, 0x88), _mm512_shuffle_f32x4(b, f, 0x88),
                               _mm512_shuffle_f32x4(a, e, 0xdd), _mm512_shuffle_f32x4(b, f, 0xdd)};
        for (int q = 0; q < 4; ++q)
          if (4 * q + k < nc) _mm512_mask_storeu_ps(dst + (j0 + 4 * q + k) * ds + i0, mr, col[q]);
      }
    }
  }
}

void stream_pixels(const float* src, float* dst, std::int64_t pixels, std::int64_t C, std::int64_t c0,
                   std::int64_t c1) {
  for (std::int64_t q = 0; q < pixels; ++q)
    for (std::int64_t c = c0; c < c1; c += 16) _mm512_stream_ps(dst + q * C + c, _mm512_loadu_ps(src + q * C + c));
}
void stream_fence() { _mm_sfence(); }

}  // namespace

const DwKernels kDwAvx512 = DwBody<S>::kernels("avx512", transpose, stream_pixels, stream_fence, true);

}  // namespace tessera::dnn::conv
