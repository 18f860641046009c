// Peak loops for AVX2 + FMA. Compiled with -mavx2 -mfma -mf16c.
#include <immintrin.h>

#include "peak_kernels.hpp"

namespace tessera::cli::detail {
namespace {
volatile double sink;
}  // namespace

// 12 chains of acc = acc * a + b: enough independent FMAs in flight to cover two pipes with a
// latency of up to six cycles, and few enough to stay in the 16 ymm registers.
double fma_f32_avx2(std::int64_t iters) {
  const __m256 a = _mm256_set1_ps(0.5f), b = _mm256_set1_ps(0.5f);
  // Distinct starting values, or the compiler would merge identical chains into one.
  __m256 c0 = _mm256_set1_ps(0), c1 = _mm256_set1_ps(1), c2 = _mm256_set1_ps(2),
         c3 = _mm256_set1_ps(3), c4 = _mm256_set1_ps(4), c5 = _mm256_set1_ps(5),
         c6 = _mm256_set1_ps(6), c7 = _mm256_set1_ps(7), c8 = _mm256_set1_ps(8),
         c9 = _mm256_set1_ps(9), c10 = _mm256_set1_ps(10), c11 = _mm256_set1_ps(11);
  for (std::int64_t i = 0; i < iters; ++i) {
    c0 = _mm256_fmadd_ps(c0, a, b);
    c1 = _mm256_fmadd_ps(c1, a, b);
    c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b);
    c4 = _mm256_fmadd_ps(c4, a, b);
    c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b);
    c7 = _mm256_fmadd_ps(c7, a, b);
    c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b);
    c10 = _mm256_fmadd_ps(c10, a, b);
    c11 = _mm256_fmadd_ps(c11, a, b);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                           _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
  sink = _mm256_cvtss_f32(s);
  return static_cast<double>(iters) * 12 * 8 * 2;
}

double fma_f64_avx2(std::int64_t iters) {
  const __m256d a = _mm256_set1_pd(0.5), b = _mm256_set1_pd(0.5);
  __m256d c0 = _mm256_set1_pd(0), c1 = _mm256_set1_pd(1), c2 = _mm256_set1_pd(2),
          c3 = _mm256_set1_pd(3), c4 = _mm256_set1_pd(4), c5 = _mm256_set1_pd(5),
          c6 = _mm256_set1_pd(6), c7 = _mm256_set1_pd(7), c8 = _mm256_set1_pd(8),
          c9 = _mm256_set1_pd(9), c10 = _mm256_set1_pd(10), c11 = _mm256_set1_pd(11);
  for (std::int64_t i = 0; i < iters; ++i) {
    c0 = _mm256_fmadd_pd(c0, a, b);
    c1 = _mm256_fmadd_pd(c1, a, b);
    c2 = _mm256_fmadd_pd(c2, a, b);
    c3 = _mm256_fmadd_pd(c3, a, b);
    c4 = _mm256_fmadd_pd(c4, a, b);
    c5 = _mm256_fmadd_pd(c5, a, b);
    c6 = _mm256_fmadd_pd(c6, a, b);
    c7 = _mm256_fmadd_pd(c7, a, b);
    c8 = _mm256_fmadd_pd(c8, a, b);
    c9 = _mm256_fmadd_pd(c9, a, b);
    c10 = _mm256_fmadd_pd(c10, a, b);
    c11 = _mm256_fmadd_pd(c11, a, b);
  }
  __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(c0, c1), _mm256_add_pd(c2, c3)),
                            _mm256_add_pd(_mm256_add_pd(c4, c5), _mm256_add_pd(c6, c7)));
  s = _mm256_add_pd(s, _mm256_add_pd(_mm256_add_pd(c8, c9), _mm256_add_pd(c10, c11)));
  sink = _mm256_cvtsd_f64(s);
  return static_cast<double>(iters) * 12 * 4 * 2;
}

}  // namespace tessera::cli::detail
