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

#include "tile_body.inc"

}  // namespace

void gemm_f32_avx2_16x6(std::int64_t k, const float* a, const float* b, float* c,
                        std::int64_t ldc, float alpha, float beta) {
  fp_tile<F32, kNr>(k, a, b, c, ldc, alpha, beta);
}

void gemm_f64_avx2_8x6(std::int64_t k, const double* a, const double* b, double* c,
                       std::int64_t ldc, double alpha, double beta) {
  fp_tile<F64, kNr>(k, a, b, c, ldc, alpha, beta);
}

}  // namespace tessera::blas::kernels
