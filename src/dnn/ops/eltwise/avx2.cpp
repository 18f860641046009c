// Elementwise tensor-operation kernels compiled for avx2 (body.inc over scalar.inc).
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
// One 64-byte line of y (aligned) from an aligned block, with non-temporal stores. Read in
// 16-byte pieces: the block was just written by 16-byte F16C stores (8 results each), and a
// 32-byte load spanning two of them cannot take their data from the store buffer (on Zen 3
// the f16 add at one thread spent three quarters of its time in those two loads).
constexpr int kLine = 64;
inline void stream_line(void* dst, const void* src) {
  const auto* s = static_cast<const __m128i*>(src);
  auto* d = static_cast<__m128i*>(dst);
  for (int i = 0; i < 4; ++i) _mm_stream_si128(d + i, _mm_load_si128(s + i));
}
#include "body.inc"
void copy_stream(void* dst, const void* src, std::int64_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // Up to the first aligned address with plain stores, then whole vectors streamed.
  const auto head = static_cast<std::int64_t>((-reinterpret_cast<std::uintptr_t>(d)) & 31u);
  const std::int64_t h = head < bytes ? head : bytes;
  std::memcpy(d, s, static_cast<std::size_t>(h));
  std::int64_t i = h;
  for (; i + 32 <= bytes; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  std::memcpy(d + i, s + i, static_cast<std::size_t>(bytes - i));
}
void sfence() { _mm_sfence(); }
}  // namespace

constinit const Kernels kAvx2 = make_table("avx2", &copy_stream, &sfence);

}  // namespace tessera::dnn::elt_kernels
