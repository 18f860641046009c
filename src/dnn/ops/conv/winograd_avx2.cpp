// Winograd kernels for AVX2 + FMA (compiled with the AVX2 flags only): 8-lane vectors, the
// GEMM register block 6 tiles x 16 output channels (12 accumulators of the 16 registers), and
// an 8 x 8 in-register transpose for the NCHW staging.
#include <cstdint>

#include <immintrin.h>

#include "winograd_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

__m256i first_lanes(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

struct S {
  using V = __m256;
  static constexpr std::int64_t kWidth = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float a) { return _mm256_set1_ps(a); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V load_n(const float* p, std::int64_t n) { return _mm256_maskload_ps(p, first_lanes(n)); }
  static void store_n(float* p, V v, std::int64_t n) { _mm256_maskstore_ps(p, first_lanes(n), v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V relu(V v) { return _mm256_and_ps(v, _mm256_cmp_ps(v, zero(), _CMP_GT_OQ)); }
  static V leaky(V v, float a) {
    return _mm256_blendv_ps(_mm256_mul_ps(v, set1(a)), v, _mm256_cmp_ps(v, zero(), _CMP_GT_OQ));
  }
  // max/min return the second operand when either is NaN, as fmax(NaN, lo) = lo.
  static V clip(V v, float lo, float hi) {
    return _mm256_min_ps(_mm256_max_ps(v, set1(lo)), set1(hi));
  }
};
constexpr int kMr = 6;
constexpr int kNv = 2;

#include "winograd_body.inc"

// A full 8 x 8 block.
void transpose8(const float* src, i64 ss, float* dst, i64 ds) {
  __m256 a[8], t[8];
  for (int i = 0; i < 8; ++i) a[i] = _mm256_loadu_ps(src + i * ss);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(a[i], a[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(a[i], a[i + 1]);
  }
  for (int q = 0; q < 2; ++q) {  // a[4q + e]: column 4l + e of rows 4q..4q+3 in 128-bit lane l
    const __m256d x0 = _mm256_castps_pd(t[4 * q]), x1 = _mm256_castps_pd(t[4 * q + 1]);
    const __m256d x2 = _mm256_castps_pd(t[4 * q + 2]), x3 = _mm256_castps_pd(t[4 * q + 3]);
    a[4 * q + 0] = _mm256_castpd_ps(_mm256_unpacklo_pd(x0, x2));
    a[4 * q + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(x0, x2));
    a[4 * q + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(x1, x3));
    a[4 * q + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(x1, x3));
  }
  for (int e = 0; e < 4; ++e) {
    _mm256_storeu_ps(dst + e * ds, _mm256_permute2f128_ps(a[e], a[4 + e], 0x20));
    _mm256_storeu_ps(dst + (4 + e) * ds, _mm256_permute2f128_ps(a[e], a[4 + e], 0x31));
  }
}

void transpose(i64 rows, i64 cols, const float* src, i64 ss, float* dst, i64 ds) {
  const i64 r8 = rows - rows % 8, c8 = cols - cols % 8;
  for (i64 i = 0; i < r8; i += 8)
    for (i64 j = 0; j < c8; j += 8) transpose8(src + i * ss + j, ss, dst + j * ds + i, ds);
  for (i64 i = 0; i < rows; ++i)  // the edges
    for (i64 j = i < r8 ? c8 : 0; j < cols; ++j) dst[j * ds + i] = src[i * ss + j];
}

}  // namespace

const WinoKernels kWinoAvx2 = {
    "avx2",
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
