// AVX2 + FMA microkernels. Compiled with the AVX2 flags only (tessera_isa_sources).
//
// C tile = 2 ymm per column x 6 columns = 12 accumulators, 2 A loads and 1 broadcast.
#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

constexpr int kNr = 6;

struct F32 {
  using T = float;
  using V = __m256;
  static constexpr int kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_load_ps(p); }
  static V loadu(const T* p) { return _mm256_loadu_ps(p); }
  static void storeu(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T v) { return _mm256_broadcast_ss(&v); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using V = __m256d;
  static constexpr int kLanes = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_load_pd(p); }
  static V loadu(const T* p) { return _mm256_loadu_pd(p); }
  static void storeu(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T v) { return _mm256_broadcast_sd(&v); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
};

template <typename S>
inline void fp_tile(std::int64_t k, const typename S::T* a, const typename S::T* b,
                    typename S::T* c, std::int64_t ldc, typename S::T alpha,
                    typename S::T beta) {
  constexpr int mr = 2 * S::kLanes;
  typename S::V acc[2 * kNr];
#pragma GCC unroll 12
  for (int i = 0; i < 2 * kNr; ++i) acc[i] = S::zero();
  for (int j = 0; j < kNr; ++j) _mm_prefetch(reinterpret_cast<const char*>(c + j * ldc), _MM_HINT_T0);
#pragma GCC unroll 4
  for (std::int64_t p = 0; p < k; ++p) {
    _mm_prefetch(reinterpret_cast<const char*>(a + 8 * mr), _MM_HINT_T0);
    const auto a0 = S::load(a), a1 = S::load(a + S::kLanes);
#pragma GCC unroll 6
    for (int j = 0; j < kNr; ++j) {
      const auto bj = S::set1(b[j]);
      acc[2 * j] = S::fmadd(a0, bj, acc[2 * j]);
      acc[2 * j + 1] = S::fmadd(a1, bj, acc[2 * j + 1]);
    }
    a += mr;
    b += kNr;
  }
  const auto va = S::set1(alpha);
  if (beta == typename S::T(0)) {
    for (int j = 0; j < kNr; ++j) {
      S::storeu(c + j * ldc, S::mul(acc[2 * j], va));
      S::storeu(c + j * ldc + S::kLanes, S::mul(acc[2 * j + 1], va));
    }
  } else {
    const auto vb = S::set1(beta);
    for (int j = 0; j < kNr; ++j) {
      typename S::T* cj = c + j * ldc;
      S::storeu(cj, S::fmadd(acc[2 * j], va, S::mul(S::loadu(cj), vb)));
      S::storeu(cj + S::kLanes, S::fmadd(acc[2 * j + 1], va, S::mul(S::loadu(cj + S::kLanes), vb)));
    }
  }
}

}  // namespace

void gemm_f32_avx2_16x6(std::int64_t k, const float* a, const float* b, float* c,
                        std::int64_t ldc, float alpha, float beta) {
  fp_tile<F32>(k, a, b, c, ldc, alpha, beta);
}

void gemm_f64_avx2_8x6(std::int64_t k, const double* a, const double* b, double* c,
                       std::int64_t ldc, double alpha, double beta) {
  fp_tile<F64>(k, a, b, c, ldc, alpha, beta);
}

}  // namespace tessera::blas::kernels
