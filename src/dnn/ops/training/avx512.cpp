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

// The high and low 32 bits of a * m (m in every 64-bit lane's low half) per 32-bit lane.
TESSERA_ACT_INLINE void mulhilo(__m512i a, __m512i m, __m512i* hi, __m512i* lo) {
  const __m512i even = _mm512_mul_epu32(a, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
  *lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

// 16 bits, one per lane, spread to every fourth bit of 64 (lane j to bit 4 j).
TESSERA_ACT_INLINE std::uint64_t spread4(std::uint64_t v) {
  v = (v | v << 24) & 0x000000FF000000FFull;
  v = (v | v << 12) & 0x000F000F000F000Full;
  v = (v | v << 6) & 0x0303030303030303ull;
  v = (v | v << 3) & 0x1111111111111111ull;
  return v;
}

// Keep bits of the 64 elements of groups [g, g + 16) (g a multiple of 16, so the counters'
// low words do not wrap within the vector).
TESSERA_ACT_INLINE std::uint64_t philox_keep(std::uint64_t g, const DropoutArgs& a) {
  __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(g))),
                                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  __m512i c1 = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(g >> 32)));
  __m512i c2 = _mm512_set1_epi32(static_cast<int>(a.offset[0]));
  __m512i c3 = _mm512_set1_epi32(static_cast<int>(a.offset[1]));
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
  std::uint32_t k0 = a.key[0], k1 = a.key[1];
  for (int round = 0; round < 10; ++round) {
    __m512i hi0, lo0, hi1, lo1;
    mulhilo(c0, m0, &hi0, &lo0);
    mulhilo(c2, m1, &hi1, &lo1);
    c0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32(static_cast<int>(k0)), 0x96);
    c1 = lo1;
    c2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32(static_cast<int>(k1)), 0x96);
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  // threshold - 1 as a signed compare: (r >> 8) < 2^24 and threshold <= 2^24.
  const __m512i t = _mm512_set1_epi32(static_cast<int>(a.threshold) - 1);
  const auto keep = [&](__m512i r) {
    return spread4(_mm512_cmpgt_epi32_mask(_mm512_srli_epi32(r, 8), t));
  };
  return keep(c0) | keep(c1) << 1 | keep(c2) << 2 | keep(c3) << 3;
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
