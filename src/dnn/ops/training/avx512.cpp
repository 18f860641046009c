// Dropout and loss kernels for AVX-512 (F/BW/DQ/VL), compiled with the AVX-512 flags only:
// Philox4x32-10 for 16 counters at once (64 elements' keep bits per call).
#include <bit>
#include <cstdint>

// GCC 12's AVX-512 intrinsics pass _mm*_undefined_*() (a self-initialised variable) as the
// unused merge source of some conversions; once inlined, -Wuninitialized may flag it.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::training_kernels {
namespace {

// The vector type, the math written against it, then the kernels (order matters).
#include "../activation/avx512_vec.inc"
// (vector math)
#include "../activation/simd_math.inc"
// (storage loops)
#include "../activation/simd_loops.inc"

constexpr i64 kDropBlock = 64;

// 16 bits, one per lane, spread to every fourth bit of 64 (lane j to bit 4 j).
TESSERA_ACT_INLINE std::uint64_t spread4(std::uint64_t v) {
  v = (v | v << 24) & 0x000000FF000000FFull;
  v = (v | v << 12) & 0x000F000F000F000Full;
  v = (v | v << 6) & 0x0303030303030303ull;
  v = (v | v << 3) & 0x1111111111111111ull;
  return v;
}

// Philox's state for 8 counters, each 32-bit word in the low half of a 64-bit lane: one
// VPMULUDQ then gives the whole 64-bit product (its high half is the word's next value's
// garbage-free source, its low half the other). The high halves of the lanes carry garbage that
// no multiply reads; the words are masked to their low halves at the end.
struct Philox8 {
  __m512i c0, c1, c2, c3;
};
TESSERA_ACT_INLINE void philox_round(Philox8& s, __m512i m0, __m512i m1, __m512i k0, __m512i k1) {
  const __m512i p0 = _mm512_mul_epu32(s.c0, m0), p1 = _mm512_mul_epu32(s.c2, m1);
  s.c0 = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p1, 32), s.c1, k0, 0x96);
  s.c1 = p1;
  s.c2 = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), s.c3, k1, 0x96);
  s.c3 = p0;
}

// Keep bits of the 64 elements of groups [g, g + 16) (g a multiple of 16, so the counters'
// low words do not wrap within the vector): the even groups in one Philox8, the odd ones in
// another, their words interleaved back into group order at the end.
TESSERA_ACT_INLINE std::uint64_t philox_keep(std::uint64_t g, const DropoutArgs& a) {
  const __m512i lo = _mm512_set1_epi64(static_cast<long long>(static_cast<std::uint32_t>(g)));
  const __m512i even = _mm512_add_epi64(lo, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14));
  const __m512i hi = _mm512_set1_epi64(static_cast<long long>(g >> 32));
  const __m512i o0 = _mm512_set1_epi64(a.offset[0]), o1 = _mm512_set1_epi64(a.offset[1]);
  Philox8 e{even, hi, o0, o1};
  Philox8 o{_mm512_add_epi64(even, _mm512_set1_epi64(1)), hi, o0, o1};
  const __m512i m0 = _mm512_set1_epi64(0xD2511F53u), m1 = _mm512_set1_epi64(0xCD9E8D57u);
  for (int round = 0; round < 10; ++round) {
    const __m512i kv0 = _mm512_set1_epi32(static_cast<int>(a.round_key[round][0])), kv1 = _mm512_set1_epi32(static_cast<int>(a.round_key[round][1]));
    philox_round(e, m0, m1, kv0, kv1);
    philox_round(o, m0, m1, kv0, kv1);
  }
  // threshold - 1 as a signed compare: (r >> 8) < 2^24 and threshold <= 2^24.
  const __m512i t = _mm512_set1_epi32(static_cast<int>(a.threshold) - 1);
  const auto keep = [&](__m512i re, __m512i ro) {
    const __m512i r = _mm512_mask_blend_epi32(0xAAAA, re, _mm512_slli_epi64(ro, 32));  // group order
    return spread4(_mm512_cmpgt_epi32_mask(_mm512_srli_epi32(r, 8), t));
  };
  return keep(e.c0, o.c0) | keep(e.c1, o.c1) << 1 | keep(e.c2, o.c2) << 2 | keep(e.c3, o.c3) << 3;
}

TESSERA_ACT_INLINE Vec::M bits_mask(std::uint64_t bits) { return static_cast<Vec::M>(bits); }

TESSERA_ACT_INLINE void store_mask_bytes(unsigned char* p, std::uint64_t bits, i64 count) {
  const __m512i v = _mm512_maskz_mov_epi8(bits, _mm512_set1_epi8(1));
  const __mmask64 m = count >= 64 ? ~__mmask64{0} : (__mmask64{1} << count) - 1;
  _mm512_mask_storeu_epi8(p, m, v);
}

TESSERA_ACT_INLINE Vec::M bytes_mask(const unsigned char* p, i64 count) {
  const __m128i b = _mm_maskz_loadu_epi8(Vec::tail(count), p);
  return _mm_test_epi8_mask(b, b);
}

// (kernels)
#include "body.inc"

}  // namespace

extern const Kernels kAvx512 = make_kernels("avx512");

}  // namespace tessera::dnn::training_kernels
