// f16/bf16 conversions: every 16-bit pattern both ways, every rounding boundary, a sweep of
// f32 patterns, against the reference in half_ref.hpp; and every ISA path of the bulk
// conversions bit-identical to the scalar ones.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/core/half.hpp>
#include <tessera/core/log.hpp>

#include "core/half_ref.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::for_each_isa;

std::uint32_t bits_of(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

// Expected narrowing of an f32 NaN: sign, quiet bit and the top payload bits kept.
std::uint16_t nan_to_f16(std::uint32_t x) {
  return static_cast<std::uint16_t>(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x3ffu));
}
std::uint16_t nan_to_bf16(std::uint32_t x) {
  return static_cast<std::uint16_t>((x >> 16) | 0x40u);
}

std::vector<std::uint16_t> all_patterns() {
  std::vector<std::uint16_t> v(65536);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint16_t>(i);
  return v;
}

// f32 values on and next to every midpoint between adjacent finite values of the format,
// plus the largest finite value and just past the overflow threshold.
std::vector<float> boundary_values(ref::Format f) {
  std::vector<float> out;
  const std::uint32_t max_finite =
      ((f.exp_all_ones() - 1) << f.mant_bits) | ((1u << f.mant_bits) - 1);
  for (std::uint32_t b = 0; b < max_finite; ++b) {
    double lo = ref::decode(f, static_cast<std::uint16_t>(b));
    double hi = ref::decode(f, static_cast<std::uint16_t>(b + 1));
    auto mid = static_cast<float>((lo + hi) / 2);  // exact: needs mant_bits + 2 bits
    for (float v :
         {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), static_cast<float>(lo)}) {
      out.push_back(v);
      out.push_back(-v);
    }
  }
  double max = ref::decode(f, static_cast<std::uint16_t>(max_finite));
  double ulp = max - ref::decode(f, static_cast<std::uint16_t>(max_finite - 1));
  if (max + ulp / 2 < std::numeric_limits<float>::max()) {
    auto over = static_cast<float>(max + ulp / 2);
    for (float v : {over, std::nextafter(over, 0.0f), std::nextafter(over, INFINITY)}) {
      out.push_back(v);
      out.push_back(-v);
    }
  }
  for (float v :
       {INFINITY, -INFINITY, std::numeric_limits<float>::max(),
        std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
        std::numeric_limits<float>::min(), 0.0f, -0.0f})
    out.push_back(v);
  return out;
}

TEST(F16, EveryPatternWidensToItsValue) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const float f = f16_bits_to_f32(h);
    if (ref::is_nan(ref::kF16, h)) {
      ASSERT_TRUE(std::isnan(f)) << "pattern " << b;
      const std::uint32_t x = bits_of(f);
      EXPECT_EQ(x >> 31, b >> 15) << "sign of NaN pattern " << b;
      EXPECT_EQ((x >> 13) & 0x3ffu, (b & 0x3ffu) | 0x200u) << "payload of NaN pattern " << b;
    } else {
      ASSERT_EQ(static_cast<double>(f), ref::decode(ref::kF16, h)) << "pattern " << b;
      ASSERT_EQ(std::signbit(f), (b >> 15) != 0) << "pattern " << b;
    }
  }
}

TEST(F16, EveryPatternNarrowsBackToItself) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    if (ref::is_nan(ref::kF16, h)) {
      EXPECT_EQ(f32_to_f16_bits(f16_bits_to_f32(h)), h | 0x200u) << "NaN pattern " << b;
    } else {
      ASSERT_EQ(f32_to_f16_bits(static_cast<float>(ref::decode(ref::kF16, h))), h)
          << "pattern " << b;
    }
  }
}

TEST(F16, RoundsToNearestEvenAtEveryBoundary) {
  const ref::Narrower narrow(ref::kF16);
  for (float v : boundary_values(ref::kF16))
    ASSERT_EQ(f32_to_f16_bits(v), narrow(v))
        << "value " << v << " (bits 0x" << std::hex << bits_of(v) << ")";
}

TEST(F16, SweepOfF32PatternsMatchesReference) {
  const ref::Narrower narrow(ref::kF16);
  for (std::uint64_t x = 0; x < (1ull << 32); x += 251) {
    const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(x));
    const std::uint16_t expected =
        std::isnan(f) ? nan_to_f16(static_cast<std::uint32_t>(x)) : narrow(f);
    ASSERT_EQ(f32_to_f16_bits(f), expected) << "f32 bits 0x" << std::hex << x;
  }
}

TEST(BF16, EveryPatternWidensToItsValue) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const float f = bf16_bits_to_f32(h);
    if (ref::is_nan(ref::kBF16, h)) {
      ASSERT_TRUE(std::isnan(f)) << "pattern " << b;
      EXPECT_EQ(bits_of(f) >> 16, b) << "NaN pattern " << b << " keeps its bits";
    } else {
      ASSERT_EQ(static_cast<double>(f), ref::decode(ref::kBF16, h)) << "pattern " << b;
      ASSERT_EQ(std::signbit(f), (b >> 15) != 0) << "pattern " << b;
    }
  }
}

TEST(BF16, EveryPatternNarrowsBackToItself) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const std::uint16_t expected =
        ref::is_nan(ref::kBF16, h) ? static_cast<std::uint16_t>(h | 0x40u) : h;
    ASSERT_EQ(f32_to_bf16_bits(bf16_bits_to_f32(h)), expected) << "pattern " << b;
  }
}

TEST(BF16, RoundsToNearestEvenAtEveryBoundary) {
  const ref::Narrower narrow(ref::kBF16);
  for (float v : boundary_values(ref::kBF16))
    ASSERT_EQ(f32_to_bf16_bits(v), narrow(v))
        << "value " << v << " (bits 0x" << std::hex << bits_of(v) << ")";
}

TEST(BF16, SweepOfF32PatternsMatchesReference) {
  const ref::Narrower narrow(ref::kBF16);
  for (std::uint64_t x = 0; x < (1ull << 32); x += 251) {
    const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(x));
    const std::uint16_t expected =
        std::isnan(f) ? nan_to_bf16(static_cast<std::uint32_t>(x)) : narrow(f);
    ASSERT_EQ(f32_to_bf16_bits(f), expected) << "f32 bits 0x" << std::hex << x;
  }
}

TEST(HalfBulk, F16PathsMatchScalarOnEveryPatternAndBoundary) {
  const std::vector<std::uint16_t> patterns = all_patterns();
  std::vector<float> inputs = boundary_values(ref::kF16);
  for (std::uint16_t h : patterns) inputs.push_back(f16_bits_to_f32(h));
  for (std::uint32_t x : {0x7f800001u, 0xffc00001u, 0x7fbfffffu, 0x00000001u, 0x807fffffu})
    inputs.push_back(std::bit_cast<float>(x));
  for_each_isa([&](Isa) {
    // Odd lengths and offsets: the vector body, the tail and unaligned starts.
    for (std::size_t len :
         {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9},
          std::size_t{15}, std::size_t{16}, std::size_t{17}, patterns.size()}) {
      std::vector<float> wide(len + 1);
      convert_f16_to_f32(reinterpret_cast<const f16*>(patterns.data()) + (len < 65536 ? 3 : 0),
                         wide.data(), len);
      for (std::size_t i = 0; i < len; ++i)
        ASSERT_EQ(bits_of(wide[i]), bits_of(f16_bits_to_f32(patterns[i + (len < 65536 ? 3 : 0)])))
            << i;
    }
    std::vector<f16> narrow(inputs.size() + 1, f16::from_bits(0xabcd));
    convert_f32_to_f16(inputs.data(), narrow.data(), inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i)
      ASSERT_EQ(narrow[i].bits, f32_to_f16_bits(inputs[i]))
          << "input bits 0x" << std::hex << bits_of(inputs[i]);
    EXPECT_EQ(narrow.back().bits, 0xabcd) << "wrote past the end";
  });
}

TEST(HalfBulk, BF16PathsMatchScalarOnEveryPatternAndBoundary) {
  const std::vector<std::uint16_t> patterns = all_patterns();
  std::vector<float> inputs = boundary_values(ref::kBF16);
  for (std::uint32_t x = 0; x < (1u << 20); ++x) inputs.push_back(std::bit_cast<float>(x * 4099u));
  for (std::uint32_t x :
       {0x7f800001u, 0xffc00001u, 0x7fbfffffu, 0x00000001u, 0x807fffffu, 0x00008000u})
    inputs.push_back(std::bit_cast<float>(x));
  for_each_isa([&](Isa) {
    std::vector<float> wide(patterns.size());
    convert_bf16_to_f32(reinterpret_cast<const bf16*>(patterns.data()), wide.data(),
                        patterns.size());
    for (std::size_t i = 0; i < patterns.size(); ++i)
      ASSERT_EQ(bits_of(wide[i]), bits_of(bf16_bits_to_f32(patterns[i]))) << i;
    for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{9},
                            std::size_t{17}, inputs.size()}) {
      std::vector<bf16> narrow(len + 1, bf16::from_bits(0xabcd));
      convert_f32_to_bf16(inputs.data() + (inputs.size() - len), narrow.data(), len);
      for (std::size_t i = 0; i < len; ++i) {
        const float in = inputs[inputs.size() - len + i];
        ASSERT_EQ(narrow[i].bits, f32_to_bf16_bits(in))
            << "input bits 0x" << std::hex << bits_of(in);
      }
      EXPECT_EQ(narrow.back().bits, 0xabcd) << "wrote past the end";
    }
  });
}

TEST(HalfBulk, DispatchLogNamesTheChoiceAndEveryRefusal) {
  const std::uint32_t saved_mask = log::enabled_mask();
  log::set_enabled_mask(static_cast<std::uint32_t>(log::Category::kDispatch));
  float x = 1.0f;
  bf16 y;
  ::testing::internal::CaptureStderr();
  {
    ScopedIsaCap cap(Isa::kGeneric);
    convert_f32_to_bf16(&x, &y, 1);
  }
  const std::string out = ::testing::internal::GetCapturedStderr();
  log::set_enabled_mask(saved_mask);
  EXPECT_NE(
      out.find("tessera[dispatch] convert f32->bf16: avx512_bf16 refused: needs avx512_bf16 ("),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("convert f32->bf16: avx2 refused: needs avx2 ("), std::string::npos) << out;
  EXPECT_NE(out.find("convert f32->bf16: chose scalar"), std::string::npos) << out;
  EXPECT_EQ(y.bits, 0x3f80);
}

// The bulk conversions remember their choice per ISA cap level: lowering the cap after a
// faster path was chosen, and raising it again, still picks the path of each level.
TEST(HalfBulk, ChoiceFollowsTheCap) {
  for (int round = 0; round < 2; ++round)
    for (Isa isa : supported_isa_levels()) {
      ScopedIsaCap cap(isa);
      float x = 1.5f;
      f16 y;
      convert_f32_to_f16(&x, &y, 1);  // chooses (or reuses the choice)
      EXPECT_EQ(y.bits, 0x3e00);
      const std::string paths = half_conversion_paths();
      const bool f16c = cpu_info().usable(CpuFeature::kF16c);
      const char* want = cpu_info().usable(CpuFeature::kAvx512f) ? "f32->f16: avx512" : f16c ? "f32->f16: f16c" : "f32->f16: scalar";
      EXPECT_NE(paths.find(want), std::string::npos) << isa_name(isa) << ": " << paths;
      if (isa == Isa::kGeneric) {
        EXPECT_NE(paths.find("bf16->f32: scalar"), std::string::npos) << paths;
      }
    }
}

TEST(Half, ValueTypesConvertAndCompare) {
  EXPECT_EQ(float(f16(1.0f)), 1.0f);
  EXPECT_EQ(f16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(f16(65520.0f).bits, 0x7c00);
  EXPECT_EQ(f16(-0.0f).bits, 0x8000);
  EXPECT_EQ(f16(0.0f), f16(-0.0f));             // value comparison
  EXPECT_EQ(f16(5.9604645e-08f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(bf16(1.00390625f).bits, 0x3f80);    // tie between 1 and 1+2^-7: to even
  EXPECT_EQ(bf16(1.01171875f).bits, 0x3f82);    // tie between 1+2^-7 and 1+2^-6: to even
  EXPECT_FALSE(bf16(NAN) == bf16(NAN));
}

}  // namespace
}  // namespace tessera
