// The FP8 formats (float8.hpp): decoding by the formula, encoding by rounding the value onto
// the format's grid in double (exact: an f32 has 24 significant bits, the grid steps are powers
// of two) and reading the fields back.
#include <tessera/core/float8.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace tessera {
namespace {

struct Format {
  int mbits;           // mantissa bits (3 or 2); the exponent has 7 - mbits
  int bias;
  bool uz;             // no -0, NaN is 0x80 alone, no infinity
  bool inf;            // IEEE-style infinity and NaNs in the top exponent (e5m2)
  std::uint8_t max;    // the largest finite value's bits
};

constexpr Format format_of(Float8 f) {
  switch (f) {
    case Float8::kE4M3FN: return {3, 7, false, false, 0x7E};
    case Float8::kE4M3FNUZ: return {3, 8, true, false, 0x7F};
    case Float8::kE5M2: return {2, 15, false, true, 0x7B};
    case Float8::kE5M2FNUZ: return {2, 16, true, false, 0x7F};
  }
  return {3, 7, false, false, 0x7E};
}

}  // namespace

float f8_bits_to_f32(std::uint8_t bits, Float8 format) {
  const Format f = format_of(format);
  const bool neg = (bits & 0x80) != 0;
  const int ebits = 7 - f.mbits;
  const int e = (bits >> f.mbits) & ((1 << ebits) - 1);
  const int m = bits & ((1 << f.mbits) - 1);
  if (f.uz && bits == 0x80) return NAN;
  if (!f.uz && !f.inf && (bits & 0x7F) == 0x7F) return NAN;  // e4m3fn
  if (f.inf && e == (1 << ebits) - 1) return m == 0 ? (neg ? -INFINITY : INFINITY) : NAN;
  const double v = e == 0 ? std::ldexp(m, 1 - f.bias - f.mbits) : std::ldexp((1 << f.mbits) + m, e - f.bias - f.mbits);
  return static_cast<float>(neg ? -v : v);
}

std::uint8_t f32_to_f8_bits(float x, Float8 format, bool saturate) {
  const Format f = format_of(format);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const std::uint8_t nan = f.uz ? 0x80 : static_cast<std::uint8_t>(sign | 0x7F);
  const std::uint8_t overflow = saturate ? static_cast<std::uint8_t>(sign | f.max) : f.inf ? static_cast<std::uint8_t>(sign | 0x7C) : nan;
  if (std::isnan(x)) return nan;
  if (std::isinf(x)) return overflow;
  const double a = std::fabs(static_cast<double>(x));
  const int emin = 1 - f.bias;  // the smallest normal exponent; below it the step stays 2^(emin - mbits)
  int e = 0;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const int exp = std::max(e - 1, emin);
  const double r = std::nearbyint(std::ldexp(a, f.mbits - exp));  // ties to even
  const double largest = static_cast<double>(f8_bits_to_f32(f.max, format));
  const double v = std::ldexp(r, exp - f.mbits);
  if (v > largest) return overflow;
  if (v == 0) return f.uz ? 0 : sign;
  std::frexp(v, &e);
  int field = 0, mant = 0;
  if (e - 1 < emin) {  // subnormal
    mant = static_cast<int>(std::ldexp(v, f.mbits - emin));
  } else {
    field = e - 1 + f.bias;
    mant = static_cast<int>(std::ldexp(v, f.mbits - (e - 1))) - (1 << f.mbits);
  }
  return static_cast<std::uint8_t>(sign | (field << f.mbits) | mant);
}

std::optional<Float8> float8_of(DType t) {
  switch (t) {
    case DType::kF8E4M3FN: return Float8::kE4M3FN;
    case DType::kF8E4M3FNUZ: return Float8::kE4M3FNUZ;
    case DType::kF8E5M2: return Float8::kE5M2;
    case DType::kF8E5M2FNUZ: return Float8::kE5M2FNUZ;
    default: return std::nullopt;
  }
}

namespace {
constexpr std::array<float, 8> kF4Magnitudes = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
}  // namespace

float f4e2m1_bits_to_f32(std::uint8_t bits) {
  const float m = kF4Magnitudes[bits & 0x7];
  return (bits & 0x8) ? -m : m;
}

std::uint8_t f32_to_f4e2m1_bits(float x) {
  if (std::isnan(x)) return 0x8;
  const std::uint8_t sign = std::signbit(x) ? 0x8 : 0;
  const float a = std::fabs(x);
  std::uint8_t code = 7;  // saturated
  for (std::uint8_t c = 0; c < 7; ++c) {
    const float mid = (kF4Magnitudes[c] + kF4Magnitudes[c + 1]) / 2;  // exact in f32
    if (a < mid || (a == mid && c % 2 == 0)) {  // a tie goes to the even code (mantissa bit 0)
      code = c;
      break;
    }
  }
  return static_cast<std::uint8_t>(sign | code);
}

float e8m0_bits_to_f32(std::uint8_t bits) { return bits == 0xFF ? NAN : std::ldexp(1.0f, static_cast<int>(bits) - 127); }

std::uint8_t f32_to_e8m0_bits(float x, bool saturate, E8M0Round mode) {
  const auto b = std::bit_cast<std::uint32_t>(x);
  int e = static_cast<int>((b >> 23) & 0xFF);
  if (e == 0xFF) return 0xFF;
  const std::uint32_t frac = b & 0x7FFFFF;
  bool up = false;
  if (mode == E8M0Round::kUp) {
    up = frac != 0;
  } else if (mode == E8M0Round::kNearest) {
    // The guard bit decides; an exact half goes up unless the exponent is 0 and nothing follows.
    const bool guard = (frac & 0x400000) != 0, rest = (frac & 0x3FFFFF) != 0;
    up = guard && (rest || e > 0);
  }
  if (up && !(saturate && e == 0xFE)) ++e;
  return static_cast<std::uint8_t>(e);
}

}  // namespace tessera
