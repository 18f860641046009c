// Peak loops for AVX-512 (F, BF16, VNNI). Compiled with the TESSERA_AVX512_FLAGS.
#include <immintrin.h>

#include "peak_kernels.hpp"

namespace tessera::cli::detail {
namespace {

volatile double sink;

// kChains independent chains c = step(c), fully unrolled into registers at -O2 and above.
// Each chain starts from its own value init(j), or the compiler would merge identical chains
// into one.
template <int kChains, typename Init, typename Step>
auto run_chains(std::int64_t iters, Init init, Step step) {
  decltype(init(0)) c[kChains];
#pragma GCC unroll 16
  for (int j = 0; j < kChains; ++j) c[j] = init(j);
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) c[j] = step(c[j]);
  }
  auto sum = c[0];
  for (int j = 1; j < kChains; ++j) sum = sum + c[j];
  return sum;
}

// FMA: 16 chains keep two pipes with a latency of up to eight cycles busy and fit in the 32
// zmm registers with the operands. The dot-product instructions use 12: GCC 12 copies their
// accumulators through extra registers, and with 16 it spills to the stack.
constexpr int kFmaChains = 16;
constexpr int kDotChains = 12;

// One lane of the sum is enough to keep the loop alive (GCC 12's _mm512_reduce_* trips
// -Wuninitialized inside its own headers).
template <typename V>
double first_lane(V v) {
  double lanes[8];
  _mm512_storeu_pd(lanes, reinterpret_cast<__m512d>(v));
  return lanes[0];
}

}  // namespace

double fma_f32_avx512(std::int64_t iters) {
  const __m512 a = _mm512_set1_ps(0.5f), b = _mm512_set1_ps(0.5f);
  __m512 s = run_chains<kFmaChains>(
      iters, [](int j) { return _mm512_set1_ps(static_cast<float>(j)); },
      [&](__m512 c) { return _mm512_fmadd_ps(c, a, b); });
  sink = first_lane(s);
  return static_cast<double>(iters) * kFmaChains * 16 * 2;
}

double fma_f64_avx512(std::int64_t iters) {
  const __m512d a = _mm512_set1_pd(0.5), b = _mm512_set1_pd(0.5);
  __m512d s = run_chains<kFmaChains>(
      iters, [](int j) { return _mm512_set1_pd(static_cast<double>(j)); },
      [&](__m512d c) { return _mm512_fmadd_pd(c, a, b); });
  sink = first_lane(s);
  return static_cast<double>(iters) * kFmaChains * 8 * 2;
}

double dpbf16_avx512(std::int64_t iters) {
  // bf16 pairs of (0.5, 0.5) and (0.25, 0.25): each step adds 0.25 per lane, exactly.
  const __m512bh a = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3f00));
  const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3e80));
  __m512 s = run_chains<kDotChains>(
      iters, [](int j) { return _mm512_set1_ps(static_cast<float>(j)); },
      [&](__m512 c) { return _mm512_dpbf16_ps(c, a, b); });
  sink = first_lane(s);
  return static_cast<double>(iters) * kDotChains * 16 * 2 * 2;
}

double dpbusd_avx512(std::int64_t iters) {
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  __m512i s = run_chains<kDotChains>(
      iters, [](int j) { return _mm512_set1_epi32(j); },
      [&](__m512i c) { return _mm512_dpbusd_epi32(c, a, b); });
  sink = first_lane(s);
  return static_cast<double>(iters) * kDotChains * 16 * 4 * 2;
}

}  // namespace tessera::cli::detail
