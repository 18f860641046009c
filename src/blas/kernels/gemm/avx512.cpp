// AVX-512 microkernels. Compiled with the AVX-512 flags only (tessera_isa_sources).
//
// Register blocking: C tile = MR rows (2 zmm per column) x 12 columns = 24 accumulators; each
// step loads 2 vectors of the A micro-panel and broadcasts 12 values of the B micro-panel
// (embedded-broadcast FMAs), leaving room for the A loads and one broadcast.
#include <immintrin.h>

#include <algorithm>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

constexpr int kNr = 12;

struct F32 {
  using T = float;
  using V = __m512;
  static constexpr int kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const T* p) { return _mm512_load_ps(p); }
  static V loadu(const T* p) { return _mm512_loadu_ps(p); }
  static void storeu(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(T v) { return _mm512_set1_ps(v); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using V = __m512d;
  static constexpr int kLanes = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_load_pd(p); }
  static V loadu(const T* p) { return _mm512_loadu_pd(p); }
  static void storeu(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V set1(T v) { return _mm512_set1_pd(v); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
};

#include "tile_body.inc"

}  // namespace

void gemm_f32_avx512_32x12(std::int64_t k, const float* a, const float* b, float* c,
                           std::int64_t ldc, float alpha, float beta) {
  fp_tile<F32, kNr>(k, a, b, c, ldc, alpha, beta);
}

void gemm_f64_avx512_16x12(std::int64_t k, const double* a, const double* b, double* c,
                           std::int64_t ldc, double alpha, double beta) {
  fp_tile<F64, kNr>(k, a, b, c, ldc, alpha, beta);
}

// bf16 pairs: vdpbf16ps adds a[2i]*b[2i] + a[2i+1]*b[2i+1] into each f32 lane, so one
// instruction does the work of two f32 FMAs. k is a multiple of 2.
void gemm_bf16_avx512bf16_32x12(std::int64_t k, const std::uint16_t* a, const std::uint16_t* b,
                                float* c, std::int64_t ldc, float alpha, float beta) {
  __m512 acc[2 * kNr];
#pragma GCC unroll 24
  for (int i = 0; i < 2 * kNr; ++i) acc[i] = _mm512_setzero_ps();
  for (int j = 0; j < kNr; ++j) _mm_prefetch(reinterpret_cast<const char*>(c + j * ldc), _MM_HINT_T0);
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < k; p += 2) {
    _mm_prefetch(reinterpret_cast<const char*>(a + 8 * 64), _MM_HINT_T0);
    const __m512bh a0 = (__m512bh)_mm512_load_si512(a);
    const __m512bh a1 = (__m512bh)_mm512_load_si512(a + 32);
#pragma GCC unroll 12
    for (int j = 0; j < kNr; ++j) {
      std::int32_t pair;
      __builtin_memcpy(&pair, b + 2 * j, sizeof pair);
      const __m512bh bj = (__m512bh)_mm512_set1_epi32(pair);
      acc[2 * j] = _mm512_dpbf16_ps(acc[2 * j], a0, bj);
      acc[2 * j + 1] = _mm512_dpbf16_ps(acc[2 * j + 1], a1, bj);
    }
    a += 64;
    b += 2 * kNr;
  }
  store_tile<F32, kNr>(acc, c, ldc, alpha, beta);
}

// u8 x s8 quads: vpdpbusd adds four u8*s8 products into each s32 lane. k is a multiple of 4.
// Sums wrap like the generic kernel (vpdpbusd does not saturate).
void gemm_u8s8s32_avx512vnni_32x12(std::int64_t k, const std::uint8_t* a, const std::int8_t* b,
                                   std::int32_t* c, std::int64_t ldc, std::int32_t alpha,
                                   std::int32_t beta) {
  __m512i acc[2 * kNr];
#pragma GCC unroll 24
  for (int i = 0; i < 2 * kNr; ++i) acc[i] = _mm512_setzero_si512();
  for (int j = 0; j < kNr; ++j) _mm_prefetch(reinterpret_cast<const char*>(c + j * ldc), _MM_HINT_T0);
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < k; p += 4) {
    _mm_prefetch(reinterpret_cast<const char*>(a + 8 * 128), _MM_HINT_T0);
    const __m512i a0 = _mm512_load_si512(a);
    const __m512i a1 = _mm512_load_si512(a + 64);
#pragma GCC unroll 12
    for (int j = 0; j < kNr; ++j) {
      std::int32_t quad;
      __builtin_memcpy(&quad, b + 4 * j, sizeof quad);
      const __m512i bj = _mm512_set1_epi32(quad);
      // GCC 12 allocates registers badly around the vpdpbusd intrinsic (the accumulators end
      // up shuffled through the stack); the same instruction as inline asm keeps all 24 in
      // registers.
      asm("vpdpbusd %2, %1, %0" : "+v"(acc[2 * j]) : "v"(a0), "v"(bj));
      asm("vpdpbusd %2, %1, %0" : "+v"(acc[2 * j + 1]) : "v"(a1), "v"(bj));
    }
    a += 128;
    b += 4 * kNr;
  }
  // Fully unrolled so the accumulators stay in registers (a runtime index would force the
  // array to memory for the whole kernel).
  const __m512i va = _mm512_set1_epi32(alpha), vb = _mm512_set1_epi32(beta);
#pragma GCC unroll 12
  for (int j = 0; j < kNr; ++j) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      std::int32_t* cj = c + j * ldc + 16 * h;
      __m512i v = _mm512_mullo_epi32(acc[2 * j + h], va);
      if (beta != 0) v = _mm512_add_epi32(v, _mm512_mullo_epi32(_mm512_loadu_si512(cj), vb));
      _mm512_storeu_si512(cj, v);
    }
  }
}

}  // namespace tessera::blas::kernels

namespace tessera::blas::kernels {
namespace {

template <typename S>
struct Masked;
template <>
struct Masked<F32> {
  using M = __mmask16;
  static M mask(std::int64_t rows) {
    return rows >= 16 ? M(0xFFFF) : rows <= 0 ? M(0) : static_cast<M>((1u << rows) - 1);
  }
  static __m512 load(M m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, M m, __m512 v) { _mm512_mask_storeu_ps(p, m, v); }
};
template <>
struct Masked<F64> {
  using M = __mmask8;
  static M mask(std::int64_t rows) {
    return rows >= 8 ? M(0xFF) : rows <= 0 ? M(0) : static_cast<M>((1u << rows) - 1);
  }
  static __m512d load(M m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  static void store(double* p, M m, __m512d v) { _mm512_mask_storeu_pd(p, m, v); }
};

// One block of up to 2*L rows x NR columns, A and B read in place.
template <typename S, int NR>
inline void small_block(std::int64_t rows, std::int64_t k, typename S::T alpha,
                        const typename S::T* a, std::int64_t lda, const typename S::T* b,
                        std::int64_t rsb, std::int64_t csb, typename S::T beta,
                        typename S::T* c, std::int64_t ldc) {
  using MK = Masked<S>;
  const auto m0 = MK::mask(rows), m1 = MK::mask(rows - S::kLanes);
  typename S::V acc[2 * NR];
#pragma GCC unroll 24
  for (int i = 0; i < 2 * NR; ++i) acc[i] = S::zero();
  for (std::int64_t p = 0; p < k; ++p) {
    const auto a0 = MK::load(m0, a + p * lda), a1 = MK::load(m1, a + p * lda + S::kLanes);
    const typename S::T* bp = b + p * rsb;
#pragma GCC unroll 12
    for (int j = 0; j < NR; ++j) {
      const auto bj = S::set1(bp[j * csb]);
      acc[2 * j] = S::fmadd(a0, bj, acc[2 * j]);
      acc[2 * j + 1] = S::fmadd(a1, bj, acc[2 * j + 1]);
    }
  }
  const auto va = S::set1(alpha), vb = S::set1(beta);
#pragma GCC unroll 12
  for (int j = 0; j < NR; ++j) {
    typename S::T* cj = c + j * ldc;
    auto r0 = S::mul(acc[2 * j], va), r1 = S::mul(acc[2 * j + 1], va);
    if (beta != typename S::T(0)) {
      r0 = S::fmadd(MK::load(m0, cj), vb, r0);
      r1 = S::fmadd(MK::load(m1, cj + S::kLanes), vb, r1);
    }
    MK::store(cj, m0, r0);
    MK::store(cj + S::kLanes, m1, r1);
  }
}

// One tile of rows x cols (cols <= 12), dispatched to the kernel instantiated for cols.
template <typename S>
void small_tile(std::int64_t rows, std::int64_t cols, std::int64_t k, typename S::T alpha,
                const typename S::T* a, std::int64_t lda, const typename S::T* b,
                std::int64_t rsb, std::int64_t csb, typename S::T beta, typename S::T* c,
                std::int64_t ldc) {
  switch (cols) {
#define TESSERA_SMALL_CASE(N) \
  case N: small_block<S, N>(rows, k, alpha, a, lda, b, rsb, csb, beta, c, ldc); break;
    TESSERA_SMALL_CASE(1) TESSERA_SMALL_CASE(2) TESSERA_SMALL_CASE(3) TESSERA_SMALL_CASE(4)
    TESSERA_SMALL_CASE(5) TESSERA_SMALL_CASE(6) TESSERA_SMALL_CASE(7) TESSERA_SMALL_CASE(8)
    TESSERA_SMALL_CASE(9) TESSERA_SMALL_CASE(10) TESSERA_SMALL_CASE(11)
#undef TESSERA_SMALL_CASE
    default: small_block<S, 12>(rows, k, alpha, a, lda, b, rsb, csb, beta, c, ldc); break;
  }
}

// Tiles of 2L rows x 12 columns. Tall problems walk row blocks outside (each block of A is
// read once, the narrow B stays in cache); wide ones walk column blocks outside (B streams
// past once, the short A stays in cache). Every tile is computed the same way either way.
template <typename S>
void small(std::int64_t m, std::int64_t n, std::int64_t k, typename S::T alpha,
           const typename S::T* a, std::int64_t lda, const typename S::T* b, std::int64_t rsb,
           std::int64_t csb, typename S::T beta, typename S::T* c, std::int64_t ldc) {
  constexpr std::int64_t mb = 2 * S::kLanes, nb = 12;
  auto tile = [&](std::int64_t i, std::int64_t j) {
    small_tile<S>(std::min(mb, m - i), std::min(nb, n - j), k, alpha, a + i, lda, b + j * csb,
                  rsb, csb, beta, c + i + j * ldc, ldc);
  };
  if (m > n) {
    for (std::int64_t i = 0; i < m; i += mb)
      for (std::int64_t j = 0; j < n; j += nb) tile(i, j);
  } else {
    for (std::int64_t j = 0; j < n; j += nb)
      for (std::int64_t i = 0; i < m; i += mb) tile(i, j);
  }
}

}  // namespace

void gemm_small_f32_avx512(std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                           const float* a, std::int64_t lda, const float* b, std::int64_t rsb,
                           std::int64_t csb, float beta, float* c, std::int64_t ldc) {
  small<F32>(m, n, k, alpha, a, lda, b, rsb, csb, beta, c, ldc);
}

void gemm_small_f64_avx512(std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                           const double* a, std::int64_t lda, const double* b, std::int64_t rsb,
                           std::int64_t csb, double beta, double* c, std::int64_t ldc) {
  small<F64>(m, n, k, alpha, a, lda, b, rsb, csb, beta, c, ldc);
}

}  // namespace tessera::blas::kernels
