// Winograd kernels for AVX-512 (compiled with the AVX-512 flags only): 16-lane vectors, the
// GEMM register block 8 tiles x 32 output channels (16 accumulators), and a 16 x 16 in-register
// transpose for the NCHW staging.
#include <cstdint>

#pragma GCC diagnostic ignored "-Wuninitialized"  // see src/blas/kernels/level1/avx512.cpp
#include <immintrin.h>

#include "winograd_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

__mmask16 first_lanes(std::int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
}

struct S {
  using V = __m512;
  static constexpr std::int64_t kWidth = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float a) { return _mm512_set1_ps(a); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V load_n(const float* p, std::int64_t n) {
    return _mm512_maskz_loadu_ps(first_lanes(n), p);
  }
  static void store_n(float* p, V v, std::int64_t n) {
    _mm512_mask_storeu_ps(p, first_lanes(n), v);
  }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V relu(V v) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero(), _CMP_GT_OQ), v); }
  static V leaky(V v, float a) {
    return _mm512_mask_mov_ps(_mm512_mul_ps(v, set1(a)), _mm512_cmp_ps_mask(v, zero(), _CMP_GT_OQ),
                              v);
  }
  // max/min return the second operand when either is NaN, as fmax(NaN, lo) = lo.
  static V clip(V v, float lo, float hi) {
    return _mm512_min_ps(_mm512_max_ps(v, set1(lo)), set1(hi));
  }
};
constexpr int kMr = 8;
constexpr int kNv = 2;

#include "winograd_body.inc"

// 16 x 16 block: rows i < r of src (each cols c wide, zero beyond) to dst rows j < c.
void transpose16(const float* src, i64 ss, float* dst, i64 ds, i64 r, i64 c) {
  const __mmask16 cm = first_lanes(c), rm = first_lanes(r);
  __m512 a[16], t[16];
  for (int i = 0; i < 16; ++i) a[i] = i < r ? _mm512_maskz_loadu_ps(cm, src + i * ss) : S::zero();
  for (int i = 0; i < 16; i += 2) {  // pairs of rows interleaved
    t[i] = _mm512_unpacklo_ps(a[i], a[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(a[i], a[i + 1]);
  }
  for (int q = 0; q < 4; ++q) {  // a[4q + e]: column 4l + e of rows 4q..4q+3 in 128-bit lane l
    const __m512d x0 = _mm512_castps_pd(t[4 * q]), x1 = _mm512_castps_pd(t[4 * q + 1]);
    const __m512d x2 = _mm512_castps_pd(t[4 * q + 2]), x3 = _mm512_castps_pd(t[4 * q + 3]);
    a[4 * q + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(x0, x2));
    a[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x0, x2));
    a[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(x1, x3));
    a[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(x1, x3));
  }
  for (int e = 0; e < 4; ++e) {
    const __m512 v0 = _mm512_shuffle_f32x4(a[e], a[4 + e], 0x88);
    const __m512 v1 = _mm512_shuffle_f32x4(a[e], a[4 + e], 0xdd);
    const __m512 w0 = _mm512_shuffle_f32x4(a[8 + e], a[12 + e], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(a[8 + e], a[12 + e], 0xdd);
    const __m512 out[4] = {_mm512_shuffle_f32x4(v0, w0, 0x88), _mm512_shuffle_f32x4(v1, w1, 0x88),
                           _mm512_shuffle_f32x4(v0, w0, 0xdd), _mm512_shuffle_f32x4(v1, w1, 0xdd)};
    for (int l = 0; l < 4; ++l) {
      const int j = 4 * l + e;  // output row = input column
      if (j < c) _mm512_mask_storeu_ps(dst + j * ds, rm, out[l]);
    }
  }
}

void transpose(i64 rows, i64 cols, const float* src, i64 ss, float* dst, i64 ds) {
  for (i64 i = 0; i < rows; i += 16)
    for (i64 j = 0; j < cols; j += 16)
      transpose16(src + i * ss + j, ss, dst + j * ds + i, ds, rows - i < 16 ? rows - i : 16,
                  cols - j < 16 ? cols - j : 16);
}

}  // namespace

const WinoKernels kWinoAvx512 = {
    "avx512",
    {input_tile<F2>, input_tile<F4>},
    {output_tile<F2>, output_tile<F4>},
    {weights_tile<F2>, weights_tile<F4>},
    gemm,
    transpose,
    {grad_tile<F2>, grad_tile<F4>},
    {wgrad_tile<F2>, wgrad_tile<F4>},
    gemm_at,
};

}  // namespace tessera::dnn::conv
