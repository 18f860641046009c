// Depthwise convolution kernels for AVX2 + FMA (compiled with the AVX2 flags only): 8 channels
// per vector, one vector per channel block with 8-pixel register blocks (8 accumulators, the
// row's 3 weights and one input of the 16 registers), masked channel tails. The kernels
// themselves are DwBody in depthwise_kernels.hpp.
#include <cmath>
#include <cstdint>

#include <immintrin.h>

#include "depthwise_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

struct S {
  using V = __m256;
  using Mask = __m256i;
  static constexpr std::int64_t kWidth = 8;
  static constexpr int kMaxNv = 1;
  static constexpr int kBlock = 8;
  static constexpr int kNchwVecs = 2;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float a) { return _mm256_set1_ps(a); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static Mask mask(std::int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V load_m(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store_m(float* p, V v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static V load_s2(const float* p) {  // p[0], p[2], ..., p[14]
    const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_maskload_ps(p + 8, mask(7));
    const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));  // 0 2 8 10 | 4 6 12 14
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static V pin(V v) {
    asm("" : "+x"(v));
    return v;
  }
  static const float* step(const float* p, std::int64_t n) {
    p += n;
    asm("" : "+r"(p));
    return p;
  }
  static Mask mask_range(std::int64_t lo, std::int64_t hi) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lo)), lane),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane));
  }
  static V fmadd_m(V a, V b, V c, Mask m) {
    return _mm256_blendv_ps(c, _mm256_fmadd_ps(a, b, c), _mm256_castsi256_ps(m));
  }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static float hsum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float fma1(float a, float b, float c) { return std::fma(a, b, c); }
};

// dst[j * ds + i] = src[i * ss + j] by 8 x 8 in-register transposes, masked only at the edges
// (a masked store is microcoded on Zen: masked everywhere, the transposes took 70% of the
// channels-first depthwise layers' time).
void transpose(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ss, float* dst,
               std::int64_t ds) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += 8) {
    const std::int64_t nr = rows - i0 < 8 ? rows - i0 : 8;
    const __m256i mr = S::mask_range(0, nr);
    for (std::int64_t j0 = 0; j0 < cols; j0 += 8) {
      const std::int64_t nc = cols - j0 < 8 ? cols - j0 : 8;
      const __m256i mc = S::mask_range(0, nc);
      const bool whole = nr == 8 && nc == 8;
      __m256 r[8], t[8];
      for (int i = 0; i < 8; ++i)
        r[i] = whole    ? _mm256_loadu_ps(src + (i0 + i) * ss + j0)
               : i < nr ? _mm256_maskload_ps(src + (i0 + i) * ss + j0, mc)
                        : _mm256_setzero_ps();
      for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
      }
      for (int i = 0; i < 8; i += 4) {  // r[i + k], lane L: column 4L + k of rows i..i+3
        const __m256d a0 = _mm256_castps_pd(t[i]), a1 = _mm256_castps_pd(t[i + 1]);
        const __m256d a2 = _mm256_castps_pd(t[i + 2]), a3 = _mm256_castps_pd(t[i + 3]);
        r[i] = _mm256_castpd_ps(_mm256_unpacklo_pd(a0, a2));
        r[i + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a0, a2));
        r[i + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(a1, a3));
        r[i + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(a1, a3));
      }
      for (int k = 0; k < 4; ++k) {  // columns k (lane 0 of rows 0-3 and 4-7) and 4 + k (lane 1)
        const __m256 lo = _mm256_permute2f128_ps(r[k], r[4 + k], 0x20);
        const __m256 hi = _mm256_permute2f128_ps(r[k], r[4 + k], 0x31);
        if (whole) {
          _mm256_storeu_ps(dst + (j0 + k) * ds + i0, lo);
          _mm256_storeu_ps(dst + (j0 + 4 + k) * ds + i0, hi);
          continue;
        }
        if (k < nc) _mm256_maskstore_ps(dst + (j0 + k) * ds + i0, mr, lo);
        if (4 + k < nc) _mm256_maskstore_ps(dst + (j0 + 4 + k) * ds + i0, mr, hi);
      }
    }
  }
}

// Channels [c0, c1) of each pixel with non-temporal stores (see DwKernels::stream_pixels).
void stream_pixels(const float* src, float* dst, std::int64_t pixels, std::int64_t C,
                   std::int64_t c0, std::int64_t c1) {
  for (std::int64_t q = 0; q < pixels; ++q)
    for (std::int64_t c = c0; c < c1; c += 8)
      _mm256_stream_ps(dst + q * C + c, _mm256_loadu_ps(src + q * C + c));
}
void stream_fence() {
  _mm_sfence();
}

}  // namespace

// Outputs are streamed only when the input rows are staged: on Zen 3 streaming alone was slower
// than plain stores (MobileNet-V2's b3_dw at mb8, 14.4 MB out, 2 threads: 3.3-3.9 -> 2.8-3.4 ms
// stored, session 45), staged and streamed faster than staged alone (session 50).
const DwKernels kDwAvx2 = DwBody<S>::kernels("avx2", transpose, stream_pixels, stream_fence, false);

}  // namespace tessera::dnn::conv
