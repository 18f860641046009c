// FFT passes with AVX-512F: 8 single or 4 double complex numbers per vector (interleaved
// re, im), complex products by fmaddsub.
#include <immintrin.h>

// GCC 12's unpack and shuffle intrinsics pass _mm512_undefined_pd() as the unused merge
// source, which -Wuninitialized reports at -O3: a false positive in the compiler's header.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstring>

#include "kernels.hpp"

namespace tessera::fft::detail {
namespace {

struct OpsF {
  using R = float;
  using T = __m512;
  static constexpr int W = 8;
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << (2 * n)) - 1u); }
  static T load(const cx<R>* p) { return _mm512_loadu_ps(reinterpret_cast<const float*>(p)); }
  static T loadn(const cx<R>* p, int n) {
    return _mm512_maskz_loadu_ps(mask(n), reinterpret_cast<const float*>(p));
  }
  static void store(cx<R>* p, T v) { _mm512_storeu_ps(reinterpret_cast<float*>(p), v); }
  static void storen(cx<R>* p, T v, int n) {
    _mm512_mask_storeu_ps(reinterpret_cast<float*>(p), mask(n), v);
  }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, R c) { return _mm512_mul_ps(a, _mm512_set1_ps(c)); }
  static T fmadd(T a, R c, T acc) { return _mm512_fmadd_ps(a, _mm512_set1_ps(c), acc); }
  static T cmul_split(T a, T re, T im) { return _mm512_fmaddsub_ps(a, re, _mm512_mul_ps(swap(a), im)); }
  static T dup_re(T a) { return _mm512_moveldup_ps(a); }
  static T dup_im(T a) { return _mm512_movehdup_ps(a); }
  static T swap(T a) { return _mm512_shuffle_ps(a, a, 0xB1); }
  static T reverse(T a) {
    return _mm512_castpd_ps(_mm512_permutexvar_pd(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_castps_pd(a)));
  }
  static T neg_re(T a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi64(0x80000000LL)));
  }
  static T neg_im(T a) {
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi64(static_cast<long long>(0x8000000000000000ULL))));
  }
  static T bcast(cx<R> c) {
    double d;
    std::memcpy(&d, &c, sizeof d);
    return _mm512_castpd_ps(_mm512_set1_pd(d));
  }
  // 8 x 8 complex (64-bit elements) in registers: pairs, then 128-bit blocks twice.
  [[gnu::always_inline]] static void transpose(T* v) {
    __m512d t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm512_unpacklo_pd(_mm512_castps_pd(v[i]), _mm512_castps_pd(v[i + 1]));
      t[i + 1] = _mm512_unpackhi_pd(_mm512_castps_pd(v[i]), _mm512_castps_pd(v[i + 1]));
    }
    for (int i = 0; i < 8; i += 4) {
      u[i] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0x88);
      u[i + 1] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0xDD);
      u[i + 2] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0x88);
      u[i + 3] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0xDD);
    }
    // u[0]: columns 0/4, u[1]: 2/6, u[2]: 1/5, u[3]: 3/7 of rows 0-3; u[4..7] rows 4-7.
    const int col[4][2] = {{0, 4}, {2, 6}, {1, 5}, {3, 7}};
    for (int i = 0; i < 4; ++i) {
      v[col[i][0]] = _mm512_castpd_ps(_mm512_shuffle_f64x2(u[i], u[i + 4], 0x88));
      v[col[i][1]] = _mm512_castpd_ps(_mm512_shuffle_f64x2(u[i], u[i + 4], 0xDD));
    }
  }
};

struct OpsD {
  using R = double;
  using T = __m512d;
  static constexpr int W = 4;
  static __mmask8 mask(int n) { return static_cast<__mmask8>((1u << (2 * n)) - 1u); }
  static T load(const cx<R>* p) { return _mm512_loadu_pd(reinterpret_cast<const double*>(p)); }
  static T loadn(const cx<R>* p, int n) {
    return _mm512_maskz_loadu_pd(mask(n), reinterpret_cast<const double*>(p));
  }
  static void store(cx<R>* p, T v) { _mm512_storeu_pd(reinterpret_cast<double*>(p), v); }
  static void storen(cx<R>* p, T v, int n) {
    _mm512_mask_storeu_pd(reinterpret_cast<double*>(p), mask(n), v);
  }
  static T add(T a, T b) { return _mm512_add_pd(a, b); }
  static T sub(T a, T b) { return _mm512_sub_pd(a, b); }
  static T mul(T a, R c) { return _mm512_mul_pd(a, _mm512_set1_pd(c)); }
  static T fmadd(T a, R c, T acc) { return _mm512_fmadd_pd(a, _mm512_set1_pd(c), acc); }
  static T cmul_split(T a, T re, T im) { return _mm512_fmaddsub_pd(a, re, _mm512_mul_pd(swap(a), im)); }
  static T dup_re(T a) { return _mm512_movedup_pd(a); }
  static T dup_im(T a) { return _mm512_shuffle_pd(a, a, 0xFF); }
  static T swap(T a) { return _mm512_shuffle_pd(a, a, 0x55); }
  static T reverse(T a) { return _mm512_shuffle_f64x2(a, a, 0x1B); }
  static T neg_re(T a) {
    return _mm512_castsi512_pd(_mm512_xor_si512(
        _mm512_castpd_si512(a), _mm512_set_epi64(0, static_cast<long long>(0x8000000000000000ULL), 0,
                                                 static_cast<long long>(0x8000000000000000ULL), 0,
                                                 static_cast<long long>(0x8000000000000000ULL), 0,
                                                 static_cast<long long>(0x8000000000000000ULL))));
  }
  static T neg_im(T a) {
    return _mm512_castsi512_pd(_mm512_xor_si512(
        _mm512_castpd_si512(a), _mm512_set_epi64(static_cast<long long>(0x8000000000000000ULL), 0,
                                                 static_cast<long long>(0x8000000000000000ULL), 0,
                                                 static_cast<long long>(0x8000000000000000ULL), 0,
                                                 static_cast<long long>(0x8000000000000000ULL), 0)));
  }
  static T bcast(cx<R> c) { return _mm512_broadcast_f64x2(_mm_loadu_pd(reinterpret_cast<const double*>(&c))); }
  // 4 x 4 complex (128-bit blocks) in registers.
  [[gnu::always_inline]] static void transpose(T* v) {
    const T t0 = _mm512_shuffle_f64x2(v[0], v[1], 0x44), t1 = _mm512_shuffle_f64x2(v[0], v[1], 0xEE);
    const T t2 = _mm512_shuffle_f64x2(v[2], v[3], 0x44), t3 = _mm512_shuffle_f64x2(v[2], v[3], 0xEE);
    v[0] = _mm512_shuffle_f64x2(t0, t2, 0x88);
    v[1] = _mm512_shuffle_f64x2(t0, t2, 0xDD);
    v[2] = _mm512_shuffle_f64x2(t1, t3, 0x88);
    v[3] = _mm512_shuffle_f64x2(t1, t3, 0xDD);
  }
};

#include "kernels_body.inc"

}  // namespace

const Kernels<float>& kernels_f32_avx512() {
  static const Kernels<float> k = make_table<OpsF>("avx512");
  return k;
}
const Kernels<double>& kernels_f64_avx512() {
  static const Kernels<double> k = make_table<OpsD>("avx512");
  return k;
}

}  // namespace tessera::fft::detail
