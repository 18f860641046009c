// The FP8 formats (and f4e2m1, e8m0 at the end) against their definitions: named patterns decode to the values the table of
// float8.hpp gives; every finite pattern survives decode -> encode; and f32 values across the
// whole range (every 65536th bit pattern, 128 per binade, plus each format's midpoints and their
// neighbours) encode to the pattern a
// brute-force search picks: the nearest of all finite values and the one just past the largest
// (which means overflow), ties to the even pattern.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/core/float8.hpp>

namespace tessera {
namespace {

constexpr Float8 kFormats[] = {Float8::kE4M3FN, Float8::kE4M3FNUZ, Float8::kE5M2, Float8::kE5M2FNUZ};

bool uz(Float8 f) { return f == Float8::kE4M3FNUZ || f == Float8::kE5M2FNUZ; }
std::uint8_t max_bits(Float8 f) { return f == Float8::kE4M3FN ? 0x7E : f == Float8::kE5M2 ? 0x7B : 0x7F; }
int mbits(Float8 f) { return f == Float8::kE4M3FN || f == Float8::kE4M3FNUZ ? 3 : 2; }

TEST(Float8, NamedPatterns) {
  EXPECT_EQ(f8_bits_to_f32(0x7E, Float8::kE4M3FN), 448.0f);
  EXPECT_EQ(f8_bits_to_f32(0x01, Float8::kE4M3FN), std::ldexp(1.0f, -9));
  EXPECT_EQ(f8_bits_to_f32(0x38, Float8::kE4M3FN), 1.0f);
  EXPECT_TRUE(std::isnan(f8_bits_to_f32(0x7F, Float8::kE4M3FN)));
  EXPECT_TRUE(std::isnan(f8_bits_to_f32(0xFF, Float8::kE4M3FN)));
  EXPECT_TRUE(std::signbit(f8_bits_to_f32(0x80, Float8::kE4M3FN)));
  EXPECT_EQ(f8_bits_to_f32(0x7F, Float8::kE4M3FNUZ), 240.0f);
  EXPECT_EQ(f8_bits_to_f32(0x01, Float8::kE4M3FNUZ), std::ldexp(1.0f, -10));
  EXPECT_EQ(f8_bits_to_f32(0x40, Float8::kE4M3FNUZ), 1.0f);
  EXPECT_TRUE(std::isnan(f8_bits_to_f32(0x80, Float8::kE4M3FNUZ)));
  EXPECT_EQ(f8_bits_to_f32(0x7B, Float8::kE5M2), 57344.0f);
  EXPECT_EQ(f8_bits_to_f32(0x7C, Float8::kE5M2), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f8_bits_to_f32(0xFC, Float8::kE5M2), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f8_bits_to_f32(0x7D, Float8::kE5M2)));
  EXPECT_EQ(f8_bits_to_f32(0x01, Float8::kE5M2), std::ldexp(1.0f, -16));
  EXPECT_EQ(f8_bits_to_f32(0x3C, Float8::kE5M2), 1.0f);
  EXPECT_EQ(f8_bits_to_f32(0x7F, Float8::kE5M2FNUZ), 57344.0f);
  EXPECT_EQ(f8_bits_to_f32(0x01, Float8::kE5M2FNUZ), std::ldexp(1.0f, -17));
  EXPECT_TRUE(std::isnan(f8_bits_to_f32(0x80, Float8::kE5M2FNUZ)));
  for (Float8 f : kFormats) {
    EXPECT_EQ(float8_of(f == Float8::kE4M3FN ? DType::kF8E4M3FN : f == Float8::kE4M3FNUZ ? DType::kF8E4M3FNUZ
                        : f == Float8::kE5M2 ? DType::kF8E5M2 : DType::kF8E5M2FNUZ), f);
    EXPECT_EQ(dtype_size(DType::kF8E5M2), 1u);
  }
  EXPECT_FALSE(float8_of(DType::kU8));
}

TEST(Float8, SpecialValuesAndSaturation) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (Float8 f : kFormats) {
    const std::uint8_t nan_bits = uz(f) ? 0x80 : 0x7F;
    EXPECT_EQ(f32_to_f8_bits(nan, f), nan_bits);
    EXPECT_EQ(f32_to_f8_bits(inf, f, true), max_bits(f));
    EXPECT_EQ(f32_to_f8_bits(-inf, f, true), 0x80 | max_bits(f));
    EXPECT_EQ(f32_to_f8_bits(1e6f, f, true), max_bits(f));
    const std::uint8_t over = f == Float8::kE5M2 ? 0x7C : nan_bits;
    EXPECT_EQ(f32_to_f8_bits(inf, f, false), over);
    EXPECT_EQ(f32_to_f8_bits(1e6f, f, false), over);
    EXPECT_EQ(f32_to_f8_bits(-0.0f, f), uz(f) ? 0x00 : 0x80);  // the uz formats have no -0
    EXPECT_EQ(f32_to_f8_bits(-1e-30f, f), uz(f) ? 0x00 : 0x80);
  }
}

TEST(Float8, EveryFinitePatternRoundTrips) {
  for (Float8 f : kFormats)
    for (int b = 0; b < 256; ++b) {
      const float v = f8_bits_to_f32(static_cast<std::uint8_t>(b), f);
      if (std::isnan(v) || std::isinf(v)) continue;
      if (uz(f) && b == 0x80) continue;
      EXPECT_EQ(f32_to_f8_bits(v, f), b) << static_cast<int>(f) << " " << b;
      EXPECT_EQ(f32_to_f8_bits(v, f, false), b) << static_cast<int>(f) << " " << b;
    }
}

// The pattern of |x| by search: the nearest finite value or the one past the largest (overflow,
// reported as 0xFF), ties to the even pattern.
int reference(double a, Float8 f) {
  std::vector<std::pair<double, int>> c;
  for (int b = 0; b <= max_bits(f); ++b) c.push_back({f8_bits_to_f32(static_cast<std::uint8_t>(b), f), b});
  const double top = c.back().first;
  c.push_back({top + std::ldexp(1.0, std::ilogb(top) - mbits(f)), max_bits(f) + 1});
  int best = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    const double d = std::fabs(c[i].first - a), e = std::fabs(c[static_cast<std::size_t>(best)].first - a);
    if (d < e || (d == e && c[i].second % 2 == 0)) best = static_cast<int>(i);
  }
  return c[static_cast<std::size_t>(best)].second == max_bits(f) + 1 ? 0xFF : c[static_cast<std::size_t>(best)].second;
}

TEST(Float8, EncodingRoundsToNearestEven) {
  for (Float8 f : kFormats) {
    std::vector<float> xs;
    for (std::uint64_t bits = 0; bits < 0x7F800000u; bits += 65536) {
      float x;
      const auto b = static_cast<std::uint32_t>(bits);
      std::memcpy(&x, &b, 4);
      xs.push_back(x);
    }
    for (int b = 0; b < max_bits(f); ++b) {  // every midpoint (the ties) and its neighbours
      const auto mid = static_cast<float>((f8_bits_to_f32(static_cast<std::uint8_t>(b), f) + f8_bits_to_f32(static_cast<std::uint8_t>(b + 1), f)) / 2);
      xs.insert(xs.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)});
    }
    for (float x : xs)
      for (float s : {1.0f, -1.0f}) {
        const float v = s * x;
        const int want = reference(std::fabs(static_cast<double>(v)), f);
        const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
        const bool zero = want == 0;
        const std::uint8_t sat = want == 0xFF ? static_cast<std::uint8_t>(sign | max_bits(f))
                                 : zero && uz(f) ? 0
                                               : static_cast<std::uint8_t>(sign | want);
        ASSERT_EQ(f32_to_f8_bits(v, f, true), sat) << static_cast<int>(f) << " " << v;
        if (want == 0xFF) {
          ASSERT_EQ(f32_to_f8_bits(v, f, false), f == Float8::kE5M2 ? (sign | 0x7C) : uz(f) ? 0x80 : (sign | 0x7F)) << v;
        }
      }
  }
}

// f4e2m1 against its value table, with a brute-force nearest search for the encoder.
TEST(Float4E2M1, DecodesEveryCodeAndEncodesToTheNearestEvenCode) {
  const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (unsigned code = 0; code < 16; ++code) {
    const float v = f4e2m1_bits_to_f32(static_cast<std::uint8_t>(code));
    EXPECT_EQ(std::fabs(v), mags[code & 7]) << code;
    EXPECT_EQ(std::signbit(v), (code & 8) != 0) << code;
    EXPECT_EQ(f32_to_f4e2m1_bits(v), code) << code;  // every code round-trips, -0 included
  }
  for (float x = -8.0f; x <= 8.0f; x += 0.0625f) {
    // The nearest magnitude; a tie to the even code; beyond 6 the largest.
    const float a = std::fabs(x);
    unsigned best = 0;
    for (unsigned c = 1; c < 8; ++c) {
      const float d = std::fabs(mags[c] - a), db = std::fabs(mags[best] - a);
      if (d < db || (d == db && c % 2 == 0)) best = c;
    }
    const unsigned want = (std::signbit(x) ? 8u : 0u) | best;
    EXPECT_EQ(f32_to_f4e2m1_bits(x), want) << x;
  }
  EXPECT_EQ(f32_to_f4e2m1_bits(std::numeric_limits<float>::infinity()), 0x7);
  EXPECT_EQ(f32_to_f4e2m1_bits(-std::numeric_limits<float>::infinity()), 0xF);
  EXPECT_EQ(f32_to_f4e2m1_bits(std::numeric_limits<float>::quiet_NaN()), 0x8);  // as ml_dtypes
  EXPECT_EQ(f32_to_f4e2m1_bits(0.25f), 0x0);  // a tie between 0 and 0.5: the even code 0
  EXPECT_EQ(f32_to_f4e2m1_bits(5.0f), 0x6);   // between 4 and 6: the even code (4)
}

TEST(Float8E8M0, PowersOfTwoAndTheRoundingModes) {
  EXPECT_EQ(e8m0_bits_to_f32(127), 1.0f);
  EXPECT_EQ(e8m0_bits_to_f32(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(e8m0_bits_to_f32(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(e8m0_bits_to_f32(255)));
  // 2^-127 is an f32 subnormal (a fraction, no exponent): rounding up gives 2^-126, as in
  // ONNX's reference, which rounds on the f32 bits.
  EXPECT_EQ(f32_to_e8m0_bits(std::ldexp(1.0f, -127), true, E8M0Round::kUp), 1);
  EXPECT_EQ(f32_to_e8m0_bits(std::ldexp(1.0f, -127), true, E8M0Round::kNearest), 0);
  for (int e = 1; e < 255; ++e) {  // normal powers of two are exact in every mode
    const float v = e8m0_bits_to_f32(static_cast<std::uint8_t>(e));
    for (E8M0Round m : {E8M0Round::kUp, E8M0Round::kDown, E8M0Round::kNearest}) EXPECT_EQ(f32_to_e8m0_bits(v, true, m), e) << e;
  }
  // 3 = 1.5 * 2^1: up 4, down 2, nearest 4 (a tie goes up); 2.9 nearest 2; 5 nearest 4.
  EXPECT_EQ(f32_to_e8m0_bits(3.0f, true, E8M0Round::kUp), 129);
  EXPECT_EQ(f32_to_e8m0_bits(3.0f, true, E8M0Round::kDown), 128);
  EXPECT_EQ(f32_to_e8m0_bits(3.0f, true, E8M0Round::kNearest), 129);
  EXPECT_EQ(f32_to_e8m0_bits(2.9f, true, E8M0Round::kNearest), 128);
  EXPECT_EQ(f32_to_e8m0_bits(5.0f, true, E8M0Round::kNearest), 129);
  EXPECT_EQ(f32_to_e8m0_bits(-4.0f), 129);  // no sign: the magnitude's exponent
  // Beyond 2^127: saturating stays at 254, otherwise NaN.
  const float big = std::ldexp(1.5f, 127);
  EXPECT_EQ(f32_to_e8m0_bits(big, true, E8M0Round::kUp), 254);
  EXPECT_EQ(f32_to_e8m0_bits(big, false, E8M0Round::kUp), 255);
  EXPECT_EQ(f32_to_e8m0_bits(std::numeric_limits<float>::infinity()), 255);
  EXPECT_EQ(f32_to_e8m0_bits(std::numeric_limits<float>::quiet_NaN()), 255);
}

}  // namespace
}  // namespace tessera
