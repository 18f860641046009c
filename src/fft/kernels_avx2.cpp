// FFT passes with AVX2 + FMA: 4 single or 2 double complex numbers per vector (interleaved
// re, im), complex products by fmaddsub.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels.hpp"

namespace tessera::fft::detail {
namespace {

alignas(32) constexpr int kMaskLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

struct OpsF {
  using R = float;
  using T = __m256;
  static constexpr int W = 4;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskLanes + 8 - 2 * n)); }
  static T load(const cx<R>* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static T loadn(const cx<R>* p, int n) { return _mm256_maskload_ps(reinterpret_cast<const float*>(p), mask(n)); }
  static void store(cx<R>* p, T v) { _mm256_storeu_ps(reinterpret_cast<float*>(p), v); }
  static void storen(cx<R>* p, T v, int n) { _mm256_maskstore_ps(reinterpret_cast<float*>(p), mask(n), v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, R c) { return _mm256_mul_ps(a, _mm256_set1_ps(c)); }
  static T fmadd(T a, R c, T acc) { return _mm256_fmadd_ps(a, _mm256_set1_ps(c), acc); }
  static T cmul_split(T a, T re, T im) { return _mm256_fmaddsub_ps(a, re, _mm256_mul_ps(swap(a), im)); }
  static T dup_re(T a) { return _mm256_moveldup_ps(a); }
  static T dup_im(T a) { return _mm256_movehdup_ps(a); }
  static T swap(T a) { return _mm256_permute_ps(a, 0xB1); }
  static T reverse(T a) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(a), 0x1B)); }
  static T neg_re(T a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi64x(0x80000000LL))); }
  static T neg_im(T a) {
    return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ULL))));
  }
  static T bcast(cx<R> c) {
    double d;
    std::memcpy(&d, &c, sizeof d);
    return _mm256_castpd_ps(_mm256_set1_pd(d));
  }
  // 4 x 4 complex (64-bit elements) in registers.
  [[gnu::always_inline]] static void transpose(T* v) {
    const __m256d a0 = _mm256_castps_pd(v[0]), a1 = _mm256_castps_pd(v[1]);
    const __m256d a2 = _mm256_castps_pd(v[2]), a3 = _mm256_castps_pd(v[3]);
    const __m256d t0 = _mm256_unpacklo_pd(a0, a1), t1 = _mm256_unpackhi_pd(a0, a1);
    const __m256d t2 = _mm256_unpacklo_pd(a2, a3), t3 = _mm256_unpackhi_pd(a2, a3);
    v[0] = _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x20));
    v[1] = _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x20));
    v[2] = _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x31));
    v[3] = _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x31));
  }
};

struct OpsD {
  using R = double;
  using T = __m256d;
  static constexpr int W = 2;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskLanes + 8 - 4 * n)); }
  static T load(const cx<R>* p) { return _mm256_loadu_pd(reinterpret_cast<const double*>(p)); }
  static T loadn(const cx<R>* p, int n) { return _mm256_maskload_pd(reinterpret_cast<const double*>(p), mask(n)); }
  static void store(cx<R>* p, T v) { _mm256_storeu_pd(reinterpret_cast<double*>(p), v); }
  static void storen(cx<R>* p, T v, int n) { _mm256_maskstore_pd(reinterpret_cast<double*>(p), mask(n), v); }
  static T add(T a, T b) { return _mm256_add_pd(a, b); }
  static T sub(T a, T b) { return _mm256_sub_pd(a, b); }
  static T mul(T a, R c) { return _mm256_mul_pd(a, _mm256_set1_pd(c)); }
  static T fmadd(T a, R c, T acc) { return _mm256_fmadd_pd(a, _mm256_set1_pd(c), acc); }
  static T cmul_split(T a, T re, T im) { return _mm256_fmaddsub_pd(a, re, _mm256_mul_pd(swap(a), im)); }
  static T dup_re(T a) { return _mm256_movedup_pd(a); }
  static T dup_im(T a) { return _mm256_permute_pd(a, 0xF); }
  static T swap(T a) { return _mm256_permute_pd(a, 0x5); }
  static T reverse(T a) { return _mm256_permute2f128_pd(a, a, 0x01); }
  static T neg_re(T a) { return _mm256_xor_pd(a, _mm256_set_pd(0.0, -0.0, 0.0, -0.0)); }
  static T neg_im(T a) { return _mm256_xor_pd(a, _mm256_set_pd(-0.0, 0.0, -0.0, 0.0)); }
  static T bcast(cx<R> c) { return _mm256_broadcast_pd(reinterpret_cast<const __m128d*>(&c)); }
  // 2 x 2 complex (128-bit halves) in registers.
  [[gnu::always_inline]] static void transpose(T* v) {
    const T t0 = _mm256_permute2f128_pd(v[0], v[1], 0x20);
    v[1] = _mm256_permute2f128_pd(v[0], v[1], 0x31);
    v[0] = t0;
  }
};

#include "kernels_body.inc"

}  // namespace

const Kernels<float>& kernels_f32_avx2() {
  static const Kernels<float> k = make_table<OpsF>("avx2");
  return k;
}
const Kernels<double>& kernels_f64_avx2() {
  static const Kernels<double> k = make_table<OpsD>("avx2");
  return k;
}

}  // namespace tessera::fft::detail
