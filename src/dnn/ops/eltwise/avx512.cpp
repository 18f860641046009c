// Elementwise tensor-operation kernels compiled for avx512 (body.inc over scalar.inc; f32 pow
// on intrinsics, pow_avx512.inc).
// GCC 12's AVX-512 intrinsics pass _mm*_undefined_*() (a self-initialised variable) as the
// unused merge source of some conversions; once inlined, -Wuninitialized may flag it.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels.hpp"

namespace tessera::dnn::elt_kernels {
namespace {
#include "scalar.inc"
#include "../half_blocks.inc"
// One 64-byte line of y (aligned) from an aligned block, with a non-temporal store.
constexpr int kLine = 64;
inline void stream_line(void* dst, const void* src) {
  const auto* s = static_cast<const __m256i*>(src);
  _mm256_stream_si256(static_cast<__m256i*>(dst), _mm256_load_si256(s));
  _mm256_stream_si256(static_cast<__m256i*>(dst) + 1, _mm256_load_si256(s + 1));
}
#include "body.inc"
void copy_stream(void* dst, const void* src, std::int64_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // Up to the first aligned address with plain stores, then whole vectors streamed.
  const auto head = static_cast<std::int64_t>((-reinterpret_cast<std::uintptr_t>(d)) & 63u);
  const std::int64_t h = head < bytes ? head : bytes;
  std::memcpy(d, s, static_cast<std::size_t>(h));
  std::int64_t i = h;
  for (; i + 64 <= bytes; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(reinterpret_cast<const __m512i*>(s + i)));
  std::memcpy(d + i, s + i, static_cast<std::size_t>(bytes - i));
}
void sfence() { _mm_sfence(); }
}  // namespace

constinit const Kernels kAvx512 = make_table("avx512", &copy_stream, &sfence);

}  // namespace tessera::dnn::elt_kernels
