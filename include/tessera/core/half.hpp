// f16 (IEEE 754 binary16) and bf16 (bfloat16) value types.
//
// Conversions from f32 round to nearest, ties to even; subnormals are kept (never flushed)
// in both directions; infinities map to infinities; a NaN stays a NaN with its sign and the
// top mantissa bits of its payload, and is made quiet (as F16C and AVX512-BF16 do). Widening
// (f16/bf16 -> f32) is exact. The bulk functions pick the fastest path the CPU allows
// (F16C, AVX-512, AVX512-BF16) and give bit-identical results to the scalar ones.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera {

std::uint16_t f32_to_f16_bits(float value);
float f16_bits_to_f32(std::uint16_t bits);
std::uint16_t f32_to_bf16_bits(float value);
inline float bf16_bits_to_f32(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

struct f16 {
  std::uint16_t bits = 0;
  f16() = default;
  explicit f16(float v) : bits(f32_to_f16_bits(v)) {}
  static f16 from_bits(std::uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return f16_bits_to_f32(bits); }
  friend bool operator==(f16 a, f16 b) { return float(a) == float(b); }
};

struct bf16 {
  std::uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float v) : bits(f32_to_bf16_bits(v)) {}
  static bf16 from_bits(std::uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return bf16_bits_to_f32(bits); }
  friend bool operator==(bf16 a, bf16 b) { return float(a) == float(b); }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2);

// Bulk conversions; `n` may be 0; src and dst must not overlap.
void convert_f32_to_f16(const float* src, f16* dst, std::size_t n);
void convert_f16_to_f32(const f16* src, float* dst, std::size_t n);
void convert_f32_to_bf16(const float* src, bf16* dst, std::size_t n);
void convert_bf16_to_f32(const bf16* src, float* dst, std::size_t n);

// Which path the bulk conversions take on this machine under TESSERA_MAX_ISA, e.g.
// "f16: f16c, bf16: avx512_bf16".
std::string half_conversion_paths();

}  // namespace tessera
