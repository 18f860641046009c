// Dropout and loss kernels for AVX2 + FMA + F16C, compiled with those flags only: Philox4x32-10
// for 8 counters at once (32 elements' keep bits per call).
#include <bit>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels.hpp"

namespace tessera::dnn::training_kernels {
namespace {

// The vector type, the math written against it, then the kernels (order matters).
#include "../activation/avx2_vec.inc"
// (vector math)
#include "../activation/simd_math.inc"
// (storage loops)
#include "../activation/simd_loops.inc"

constexpr i64 kDropBlock = 32;

// The high and low 32 bits of a * m (m in every 64-bit lane's low half) per 32-bit lane.
TESSERA_ACT_INLINE void mulhilo(__m256i a, __m256i m, __m256i* hi, __m256i* lo) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// 8 bits, one per lane, spread to every fourth bit of 32 (lane j to bit 4 j).
TESSERA_ACT_INLINE std::uint64_t spread4(std::uint64_t v) {
  v = (v | v << 12) & 0x000F000Full;
  v = (v | v << 6) & 0x03030303ull;
  v = (v | v << 3) & 0x11111111ull;
  return v;
}

// Keep bits of the 32 elements of groups [g, g + 8) (g a multiple of 8).
TESSERA_ACT_INLINE std::uint64_t philox_keep(std::uint64_t g, const DropoutArgs& a) {
  __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(g))),
                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i c1 = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(g >> 32)));
  __m256i c2 = _mm256_set1_epi32(static_cast<int>(a.offset[0]));
  __m256i c3 = _mm256_set1_epi32(static_cast<int>(a.offset[1]));
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int round = 0; round < 10; ++round) {
    __m256i hi0, lo0, hi1, lo1;
    mulhilo(c0, m0, &hi0, &lo0);
    mulhilo(c2, m1, &hi1, &lo1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(a.round_key[round][0])));
    c1 = lo1;
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(a.round_key[round][1])));
    c3 = lo0;
  }
  // threshold - 1 as a signed compare: (r >> 8) < 2^24 and threshold <= 2^24.
  const __m256i t = _mm256_set1_epi32(static_cast<int>(a.threshold) - 1);
  const auto keep = [&](__m256i r) {
    const __m256i gt = _mm256_cmpgt_epi32(_mm256_srli_epi32(r, 8), t);
    return spread4(static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(gt))));
  };
  return keep(c0) | keep(c1) << 1 | keep(c2) << 2 | keep(c3) << 3;
}

TESSERA_ACT_INLINE Vec::M bits_mask(std::uint64_t bits) {
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i b = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits & 0xff)), lane);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, lane));
}

TESSERA_ACT_INLINE void store_mask_bytes(unsigned char* p, std::uint64_t bits, i64 count) {
  // Byte i of the 32 takes bit i: its source byte of the 32 bits broadcast, then one bit each.
  const __m256i pick = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                        2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  for (i64 h = 0; h < count; h += 32) {
    const __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits >> h)), pick);
    const __m256i v = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit), _mm256_set1_epi8(1));
    if (count - h >= 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + h), v);
    } else {
      alignas(32) unsigned char tmp[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v);
      std::memcpy(p + h, tmp, static_cast<std::size_t>(count - h));
    }
  }
}

TESSERA_ACT_INLINE Vec::M bytes_mask(const unsigned char* p, i64 count) {
  std::uint64_t b = 0;
  std::memcpy(&b, p, static_cast<std::size_t>(count < 8 ? count : 8));
  const __m256i v = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(b)));
  const __m256i zero = _mm256_cmpeq_epi32(v, _mm256_setzero_si256());
  return _mm256_castsi256_ps(_mm256_xor_si256(zero, _mm256_set1_epi32(-1)));
}

// (kernels)
#include "body.inc"

}  // namespace

extern const Kernels kAvx2 = make_kernels("avx2");

}  // namespace tessera::dnn::training_kernels
