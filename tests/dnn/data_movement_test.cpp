// Data movement: cast's written rules value by value and every dtype pair against the element
// rule; transpose, slice, concat/split, pad, tile, expand, depth/space against index formulas
// written here (independent of the views the library builds), over layouts (packed, dims
// reversed, gaps), tile edges, empty and scalar tensors, on every ISA path and thread count;
// reshape views; bad arguments.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/core/cpu.hpp>
#include <tessera/dnn.hpp>

#include "../../src/dnn/ops/movement/move.hpp"
#include "../../src/dnn/ops/movement/ref.hpp"
#include "tensor_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using testing::for_each_isa;
using namespace tensor_test;

T random(DType t, const Idx& dims, Lay lay, std::mt19937& rng) {
  T x = make(t, dims, lay);
  fill(x, rng);
  return x;
}

constexpr DType kSizes[] = {DType::kU8, DType::kF16, DType::kF32, DType::kF64};  // 1, 2, 4, 8 bytes
constexpr Lay kLays[] = {Lay::kPacked, Lay::kReversed, Lay::kGaps};

// ---- cast -------------------------------------------------------------------------------------
template <typename V>
std::vector<unsigned char> bytes_of(V v) {
  std::vector<unsigned char> b(sizeof(V));
  std::memcpy(b.data(), &v, sizeof(V));
  return b;
}
struct CastCase {
  DType from;
  std::vector<unsigned char> in;
  DType to;
  std::vector<unsigned char> want;
  const char* what;
};

TEST(DataMovement, CastFollowsTheWrittenRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  using I8 = std::int8_t;
  using U8 = std::uint8_t;
  using I32 = std::int32_t;
  using I64 = std::int64_t;
  using U16 = std::uint16_t;
  const std::vector<CastCase> cases = {
      {DType::kF32, bytes_of(nan), DType::kI32, bytes_of(I32{0}), "NaN -> 0"},
      {DType::kF32, bytes_of(-0.7f), DType::kI32, bytes_of(I32{0}), "truncates toward zero"},
      {DType::kF32, bytes_of(2.9f), DType::kI8, bytes_of(I8{2}), "truncates"},
      {DType::kF32, bytes_of(-2.9f), DType::kI8, bytes_of(I8{-2}), "truncates negative"},
      {DType::kF32, bytes_of(127.9f), DType::kI8, bytes_of(I8{127}), "just below the top"},
      {DType::kF32, bytes_of(-128.5f), DType::kI8, bytes_of(I8{-128}), "just below the bottom"},
      {DType::kF32, bytes_of(1e10f), DType::kI32, bytes_of(I32{INT32_MAX}), "saturates high"},
      {DType::kF32, bytes_of(-1e10f), DType::kI32, bytes_of(I32{INT32_MIN}), "saturates low"},
      {DType::kF32, bytes_of(2147483648.0f), DType::kI32, bytes_of(I32{INT32_MAX}), "2^31"},
      {DType::kF32, bytes_of(300.0f), DType::kU8, bytes_of(U8{255}), "u8 high"},
      {DType::kF32, bytes_of(-5.0f), DType::kU8, bytes_of(U8{0}), "u8 low"},
      {DType::kF32, bytes_of(inf), DType::kI64, bytes_of(I64{INT64_MAX}), "inf"},
      {DType::kF64, bytes_of(-std::numeric_limits<double>::infinity()), DType::kI64, bytes_of(I64{INT64_MIN}), "-inf"},
      {DType::kF64, bytes_of(9223372036854775808.0), DType::kI64, bytes_of(I64{INT64_MAX}), "2^63"},
      {DType::kI32, bytes_of(I32{300}), DType::kI8, bytes_of(I8{44}), "wraps"},
      {DType::kI32, bytes_of(I32{-129}), DType::kI8, bytes_of(I8{127}), "wraps negative"},
      {DType::kI32, bytes_of(I32{-1}), DType::kU8, bytes_of(U8{255}), "-1 to u8"},
      {DType::kI64, bytes_of(I64{(I64{1} << 40) + 5}), DType::kI32, bytes_of(I32{5}), "i64 wraps to i32"},
      {DType::kU8, bytes_of(U8{200}), DType::kI8, bytes_of(I8{-56}), "u8 to i8"},
      {DType::kI8, bytes_of(I8{-1}), DType::kI64, bytes_of(I64{-1}), "sign extends"},
      {DType::kF32, bytes_of(nan), DType::kBool, bytes_of(true), "NaN is true"},
      {DType::kF32, bytes_of(-0.0f), DType::kBool, bytes_of(false), "-0 is false"},
      {DType::kI32, bytes_of(I32{256}), DType::kBool, bytes_of(true), "256 is true"},
      {DType::kBool, bytes_of(true), DType::kF32, bytes_of(1.0f), "true is 1"},
      {DType::kI64, bytes_of(I64{(I64{1} << 53) + 1}), DType::kF64, bytes_of(9007199254740992.0), "ties to even"},
      {DType::kI32, bytes_of(I32{16777217}), DType::kF32, bytes_of(16777216.0f), "ties to even f32"},
      {DType::kF64, bytes_of(1.0 + 0x1p-11 + 0x1p-40), DType::kF16, bytes_of(U16{0x3C01}), "f64 to f16 rounds once"},
      {DType::kF64, bytes_of(65520.0), DType::kF16, bytes_of(U16{0x7C00}), "f16 overflow"},
      {DType::kF64, bytes_of(65519.99), DType::kF16, bytes_of(U16{0x7BFF}), "f16 largest"},
      {DType::kF64, bytes_of(1e300), DType::kF32, bytes_of(inf), "f32 overflow"},
      {DType::kI64, bytes_of(I64{(I64{1} << 40) + (I64{1} << 32) + 1}), DType::kBF16,
       bytes_of(f32_to_bf16_bits(std::ldexp(1.0f + 0x1p-7f, 40))), "i64 to bf16 rounds once"},
      {DType::kI32, bytes_of(I32{(1 << 24) + (1 << 16) + 1}), DType::kBF16,
       bytes_of(f32_to_bf16_bits(std::ldexp(1.0f + 0x1p-7f, 24))), "i32 to bf16 rounds once"},
      {DType::kF16, bytes_of(U16{0x3C01}), DType::kBF16, bytes_of(U16{0x3F80}), "f16 to bf16"},
      {DType::kBF16, bytes_of(U16{0xC2F7}), DType::kI8, bytes_of(I8{-123}), "bf16 to i8"},
      // ONNX's other integer types (element by element, the same rules).
      {DType::kU16, bytes_of(U16{65535}), DType::kI16, bytes_of(std::int16_t{-1}), "u16 to i16 wraps"},
      {DType::kI16, bytes_of(std::int16_t{-1}), DType::kU64, bytes_of(~std::uint64_t{0}), "i16 sign extends to u64"},
      {DType::kU64, bytes_of((std::uint64_t{1} << 63) + 5), DType::kI32, bytes_of(I32{5}), "u64 wraps to i32"},
      {DType::kU64, bytes_of(~std::uint64_t{0}), DType::kF32, bytes_of(18446744073709551616.0f), "u64 max to f32"},
      {DType::kU64, bytes_of((std::uint64_t{1} << 53) + 1), DType::kF64, bytes_of(9007199254740992.0), "u64 ties to even"},
      {DType::kU64, bytes_of((std::uint64_t{1} << 40) + (std::uint64_t{1} << 32) + 1), DType::kBF16,
       bytes_of(f32_to_bf16_bits(std::ldexp(1.0f + 0x1p-7f, 40))), "u64 to bf16 rounds once"},
      {DType::kU32, bytes_of(std::uint32_t{4294967295u}), DType::kF32, bytes_of(4294967296.0f), "u32 max to f32"},
      {DType::kF32, bytes_of(70000.0f), DType::kU16, bytes_of(U16{65535}), "u16 saturates"},
      {DType::kF32, bytes_of(-3.5f), DType::kU32, bytes_of(std::uint32_t{0}), "u32 low"},
      {DType::kF64, bytes_of(1e30), DType::kU64, bytes_of(~std::uint64_t{0}), "u64 saturates"},
      {DType::kI16, bytes_of(std::int16_t{-32768}), DType::kF16, bytes_of(U16{0xF800}), "i16 to f16"},
      {DType::kF16, bytes_of(U16{0xC500}), DType::kI16, bytes_of(std::int16_t{-5}), "f16 to i16"},
  };
  for_each_isa([&](Isa) {
    Handle h;
    for (const CastCase& c : cases) {
      // Long enough for the vector loops, with the value at a block edge too.
      constexpr i64 kN = 1500;
      T x = make(c.from, {kN}), y = make(c.to, {kN});
      for (i64 i = 0; i < kN; ++i) std::memcpy(x.mem.data() + i * static_cast<i64>(c.in.size()), c.in.data(), c.in.size());
      ASSERT_TRUE(cast(h, x.d, x.p(), y.d, y.p()).is_ok()) << c.what;
      for (i64 i : {i64{0}, i64{1023}, i64{1024}, kN - 1}) {
        EXPECT_EQ(0, std::memcmp(y.mem.data() + i * static_cast<i64>(c.want.size()), c.want.data(), c.want.size()))
            << c.what << " (" << dtype_name(c.from) << " to " << dtype_name(c.to) << ") at " << i;
      }
      std::vector<unsigned char> one(c.want.size());
      detail::convert_element(c.from, c.in.data(), c.to, one.data());
      EXPECT_EQ(one, c.want) << c.what << ": the element rule";
    }
  });
}

// f64, i32 and i64 to f16 and bf16 (the kernels round to odd at f32's precision without
// branches, i64 beyond 2^53 by a second scalar pass, then once to the half type) against the
// element rule on every ISA: doubles of every exponent and both signs, halfway and
// just-off-halfway values of both half types, NaN, infinities, overflow past FLT_MAX, f32
// subnormals; i64 on both sides of 2^53 and the extremes; i32 extremes and random values.
TEST(DataMovement, CastToHalfRoundsOnceAsTheElementRule) {
  std::mt19937_64 rng(17);
  std::vector<double> f64;
  for (int e = -160; e <= 140; ++e)
    for (int k = 0; k < 6; ++k) {
      const double m = 1.0 + static_cast<double>(rng() >> 11) * 0x1p-53;
      f64.push_back((k % 2 ? -1 : 1) * std::ldexp(m, e));
    }
  for (double base : {1.0, 3.0, 1000.0, 65504.0})
    for (double off : {0x1p-11, 0x1p-8, 0x1p-11 + 0x1p-40, 0x1p-8 + 0x1p-45, 0x1p-11 - 0x1p-40, 0x1p-8 - 0x1p-45})
      f64.insert(f64.end(), {base * (1 + off), -base * (1 + off)});
  f64.insert(f64.end(), {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity(), 3.4028235677973366e38, 3.5e38, -3.5e38, 1e300,
                         0x1p-149, 0x1.8p-149, 0x1p-150, 0.0, -0.0});
  std::vector<std::int64_t> w64 = {INT64_MIN, INT64_MAX, -1, 0, 1, (std::int64_t{1} << 53), (std::int64_t{1} << 53) + 1,
                                   -(std::int64_t{1} << 53) - 1, (std::int64_t{1} << 62) + 12345,
                                   (std::int64_t{1} << 60) + (std::int64_t{1} << 52) + 1,  // f64 would round it to a bf16 tie
                                   -(std::int64_t{1} << 60) - (std::int64_t{1} << 52) - 1};
  for (int i = 0; i < 3000; ++i) w64.push_back(static_cast<std::int64_t>(rng()) >> (rng() % 64));
  std::vector<std::int32_t> w32 = {INT32_MIN, INT32_MAX, -1, 0, 1, (1 << 24) + 1, (1 << 24) + (1 << 16) + 1};
  for (int i = 0; i < 3000; ++i) w32.push_back(static_cast<std::int32_t>(rng() >> (32 + rng() % 32)));
  const auto check = [&](DType from, const void* data, i64 n) {
    for (DType to : {DType::kF16, DType::kBF16})
      for_each_isa([&](Isa isa) {
        Handle h;
        T x = make(from, {n}), y = make(to, {n}), want = make(to, {n});
        std::memcpy(x.mem.data(), data, static_cast<std::size_t>(n) * dtype_size(from));
        ASSERT_TRUE(cast(h, x.d, x.p(), y.d, y.p()).is_ok());
        for (i64 i = 0; i < n; ++i)
          detail::convert_element(from, x.mem.data() + i * static_cast<i64>(dtype_size(from)), to, want.mem.data() + i * 2);
        expect_same(y, want, std::string("cast ") + std::string(dtype_name(from)) + " to " + std::string(dtype_name(to)) + " on " + std::string(isa_name(isa)));
      });
  };
  check(DType::kF64, f64.data(), static_cast<i64>(f64.size()));
  check(DType::kI64, w64.data(), static_cast<i64>(w64.size()));
  check(DType::kI32, w32.data(), static_cast<i64>(w32.size()));
}

TEST(DataMovement, CastEveryPairOnEveryLayout) {
  std::mt19937 rng(7);
  struct L {
    Idx dims;
    Lay x, y;
  };
  const L lays[] = {{{3, 700}, Lay::kPacked, Lay::kPacked}, {{9, 70}, Lay::kReversed, Lay::kPacked},
                    {{5, 6}, Lay::kGaps, Lay::kGaps},       {{9, 70}, Lay::kPacked, Lay::kReversed},
                    {{}, Lay::kPacked, Lay::kPacked},       {{0, 5}, Lay::kPacked, Lay::kPacked}};
  for_each_isa([&](Isa) {
    Handle h;
    std::vector<DType> types(std::begin(kTypes), std::end(kTypes));
    types.insert(types.end(), std::begin(kStorageTypes), std::end(kStorageTypes));
    for (DType from : types)
      for (DType to : types)
        for (const L& l : lays) {
          T x = random(from, l.dims, l.x, rng), y = make(to, l.dims, l.y);
          ASSERT_TRUE(cast(h, x.d, x.p(), y.d, y.p()).is_ok());
          T want = make(to, l.dims, l.y);
          const auto xo = offsets(x.d), yo = offsets(y.d);
          for (std::size_t i = 0; i < xo.size(); ++i)
            detail::convert_element(from, x.mem.data() + xo[i] * static_cast<i64>(dtype_size(from)), to,
                                    want.mem.data() + yo[i] * static_cast<i64>(dtype_size(to)));
          expect_same(y, want, std::string("cast ") + std::string(dtype_name(from)) + " to " +
                                   std::string(dtype_name(to)) + " " + x.d.to_string() + " -> " + y.d.to_string());
        }
  });
}

// ---- transpose --------------------------------------------------------------------------------
TEST(DataMovement, TransposeMatchesIndexFormula) {
  std::mt19937 rng(11);
  struct C {
    Idx dims;
    std::vector<int> perm;
  };
  const C cases[] = {{{}, {}},
                     {{5}, {0}},
                     {{3, 4}, {1, 0}},
                     {{70, 130}, {1, 0}},
                     {{8, 8}, {}},
                     {{2, 3, 4, 5}, {3, 1, 0, 2}},
                     {{4, 65, 9}, {2, 0, 1}},
                     {{1, 33, 1, 17}, {3, 2, 1, 0}},
                     {{0, 4}, {1, 0}},
                     {{3, 64, 66}, {0, 2, 1}},
                     {{2, 3, 17, 19}, {0, 2, 3, 1}},
                     {{2, 19, 17, 5}, {0, 3, 1, 2}},
                     {{300, 270}, {1, 0}},   // past a tile edge (256 bytes, 64 elements) with ragged blocks
                     {{40, 4096}, {1, 0}},   // 1-byte rows of 4 KiB: staged tiles
                     {{4096, 24}, {1, 0}}};  // written rows of 4 KiB
  for_each_isa([&](Isa) {
    for (int threads : {1, 2}) {
      Handle h;
      ASSERT_TRUE(h.set_num_threads(threads).is_ok());
      for (DType t : kSizes)
        for (const C& c : cases)
          for (Lay xl : kLays)
            for (Lay yl : {Lay::kPacked, Lay::kGaps}) {
              const int r = static_cast<int>(c.dims.size());
              std::vector<int> p = c.perm;
              if (p.empty())
                for (int i = r - 1; i >= 0; --i) p.push_back(i);
              Idx yd(c.dims.size());
              for (int i = 0; i < r; ++i) yd[static_cast<std::size_t>(i)] = c.dims[static_cast<std::size_t>(p[static_cast<std::size_t>(i)])];
              T x = random(t, c.dims, xl, rng), y = make(t, yd, yl);
              ASSERT_TRUE(transpose(h, c.perm, x.d, x.p(), y.d, y.p()).is_ok());
              const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
                for (int i = 0; i < r; ++i) xi[static_cast<std::size_t>(p[static_cast<std::size_t>(i)])] = yi[static_cast<std::size_t>(i)];
                return true;
              });
              expect_same(y, want, "transpose " + x.d.to_string() + " -> " + y.d.to_string());
            }
    }
  });
}

// Transposes x (packed `dims`, random bytes) by `perm` into packed y, both in buffers aligned to
// 64 bytes with the views x_off and y_off elements in. Returns the number of elements of y that
// differ from x's by the index formula, plus the bytes written outside y.
i64 transpose_on_aligned(Handle& h, DType t, const std::vector<i64>& dims, const std::vector<int>& perm, i64 x_off, i64 y_off,
                         std::mt19937& rng) {
  const auto e = static_cast<i64>(dtype_size(t));
  const auto r = dims.size();
  const i64 n = std::accumulate(dims.begin(), dims.end(), i64{1}, std::multiplies<>());
  std::vector<i64> yd(r);
  for (std::size_t i = 0; i < r; ++i) yd[i] = dims[static_cast<std::size_t>(perm[i])];
  const TensorDesc xdesc = TensorDesc::make(t, dims), ydesc = TensorDesc::make(t, yd);
  const auto bytes = static_cast<std::size_t>(((n + 2) * e + 63) / 64 * 64);
  std::unique_ptr<unsigned char, decltype(&std::free)> xm(static_cast<unsigned char*>(std::aligned_alloc(64, bytes)), &std::free),
      ym(static_cast<unsigned char*>(std::aligned_alloc(64, bytes)), &std::free);
  if (!xm || !ym) return -1;
  unsigned char* xp = xm.get() + x_off * e;
  unsigned char* yp = ym.get() + y_off * e;
  for (i64 i = 0; i < n * e; ++i) xp[i] = static_cast<unsigned char>(rng());
  std::memset(ym.get(), 0xA5, bytes);
  if (!transpose(h, perm, xdesc, xp, ydesc, yp).is_ok()) return -1;
  i64 bad = 0;
  std::vector<i64> yi(r, 0);
  for (i64 k = 0; k < n; ++k) {  // y's elements in order, yi their index
    i64 xo = 0;
    for (std::size_t i = 0; i < r; ++i) xo += yi[i] * xdesc.strides[static_cast<std::size_t>(perm[i])];
    bad += std::memcmp(yp + k * e, xp + xo * e, static_cast<std::size_t>(e)) != 0;
    for (auto i = r; i-- > 0;)
      if (++yi[i] < yd[i]) break;
      else yi[i] = 0;
  }
  for (i64 i = 0; i < y_off * e; ++i) bad += ym.get()[i] != 0xA5;
  for (auto i = static_cast<std::size_t>((y_off + n) * e); i < bytes; ++i) bad += ym.get()[i] != 0xA5;
  return bad;
}

// Transposes of `shapes` by `perm_of(rank)` on aligned buffers at offsets 0 and 1 element, every
// element size, ISA and thread count.
void expect_aligned_transposes(const std::vector<std::vector<i64>>& shapes, std::vector<int> (*perm_of)(std::size_t), unsigned seed) {
  std::mt19937 rng(seed);
  for_each_isa([&](Isa) {
    for (int threads : {1, 2}) {
      Handle h;
      ASSERT_TRUE(h.set_num_threads(threads).is_ok());
      for (DType t : kSizes)
        for (const auto& dims : shapes)
          for (i64 x_off : {0, 1})
            for (i64 y_off : {0, 1})
              EXPECT_EQ(transpose_on_aligned(h, t, dims, perm_of(dims.size()), x_off, y_off, rng), 0)
                  << dtype_name(t) << " " << TensorDesc::make(t, dims).to_string() << " offsets " << x_off << ", " << y_off << ", " << threads << " threads";
    }
  });
}

// The last two dims swapped.
std::vector<int> swap_last_two(std::size_t r) {
  std::vector<int> p(r);
  std::iota(p.begin(), p.end(), 0);
  std::swap(p[r - 2], p[r - 1]);
  return p;
}
// The two dims before the last swapped.
std::vector<int> swap_middle(std::size_t r) {
  std::vector<int> p(r);
  std::iota(p.begin(), p.end(), 0);
  std::swap(p[r - 3], p[r - 2]);
  return p;
}

// The line kernels read x's rows and write y's columns as whole 64-byte vectors, straight from
// x where its rows are aligned lines and, streamed, straight to y where its columns are: row
// lengths of whole lines, ragged ones, and strides of 4 KiB (the staged case).
TEST(DataMovement, TransposeOnAlignedAndUnalignedLines) {
  expect_aligned_transposes({{16, 16}, {64, 64}, {48, 80}, {130, 70}, {33, 1024}, {1024, 40}, {96, 512}, {3, 64, 48}}, &swap_last_two, 12);
}

// A transpose that keeps the inner dim (attention's [b, h, s, d] -> [b, s, h, d]) moves whole
// rows; streamed, by runs of rows back to back in y, with masked heads and tails where y's lines
// are not whole: rows of 1 to 100 elements; a long second dim of y (700) is cut in runs.
TEST(DataMovement, TransposeKeepingTheInnerDim) {
  expect_aligned_transposes({{2, 3, 5, 1}, {2, 12, 7, 3}, {2, 5, 9, 16}, {2, 3, 4, 17}, {2, 12, 33, 64}, {2, 2, 70, 100}, {2, 700, 3, 5}},
                            &swap_middle, 14);
}

// Pixels of C elements to planes and back (NHWC <-> NCHW of images): C = 2 to 8 take the narrow
// kernels (planes to pixels only under 32 bytes a pixel), 1 and 9 the other walks. 1100 pixels
// cross the streamed blocks of 512; 17000 the units of 16384 pixels.
TEST(DataMovement, TransposeNarrowPixelsToPlanesAndBack) {
  std::mt19937 rng(13);
  for_each_isa([&](Isa) {
    for (int threads : {1, 2}) {
      Handle h;
      ASSERT_TRUE(h.set_num_threads(threads).is_ok());
      for (DType t : kSizes)
        for (i64 c = 1; c <= 9; ++c)
          for (i64 pixels : {i64{1100}, i64{17000}}) {
            if (pixels > 1100 && c != 3) continue;
            for (bool to_planes : {true, false})
              for (Lay xl : {Lay::kPacked, Lay::kGaps}) {
                const Idx xd = to_planes ? Idx{2, pixels, c} : Idx{2, c, pixels};
                const Idx yd = to_planes ? Idx{2, c, pixels} : Idx{2, pixels, c};
                const std::vector<int> perm = {0, 2, 1};
                T x = random(t, xd, xl, rng), y = make(t, yd, Lay::kPacked);
                ASSERT_TRUE(transpose(h, perm, x.d, x.p(), y.d, y.p()).is_ok());
                const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
                  xi = {yi[0], yi[2], yi[1]};
                  return true;
                });
                expect_same(y, want, "transpose " + x.d.to_string() + " -> " + y.d.to_string());
              }
          }
    }
  });
}

// ---- slice ------------------------------------------------------------------------------------
// Python's slice-index adjustment, which ONNX Slice follows: the indices a slice visits.
std::vector<i64> slice_indices(i64 d, i64 s, i64 e, i64 t) {
  auto adjust = [&](i64 v, bool is_start) -> i64 {
    if (v < 0) {
      const __int128 w = static_cast<__int128>(v) + d;
      return static_cast<i64>(w < 0 ? (t < 0 ? -1 : 0) : w);
    }
    if (t < 0) return std::min(v, d - 1);
    (void)is_start;
    return std::min(v, d);
  };
  const i64 a = adjust(s, true), b = adjust(e, false);
  std::vector<i64> out;
  for (__int128 i = a; t > 0 ? i < b : i > b; i += t) out.push_back(static_cast<i64>(i));
  return out;
}

TEST(DataMovement, SliceMatchesPythonSlicing) {
  std::mt19937 rng(13);
  constexpr i64 kMin = std::numeric_limits<i64>::min(), kMax = std::numeric_limits<i64>::max();
  struct C {
    Idx starts, ends;
    std::vector<int> axes;
    Idx steps;
  };
  const C cases[] = {{{1}, {5}, {0}, {}},
                     {{-1, 0}, {kMin, 70}, {0, 2}, {-1, 2}},
                     {{10}, {-10}, {1}, {-3}},
                     {{2}, {2}, {}, {}},
                     {{5}, {kMin}, {0}, {kMin}},
                     {{0, -4, 3}, {kMax, kMax, 71}, {}, {2, 1, 5}},
                     {{-100}, {100}, {-1}, {7}},
                     {{3, 69}, {0, 2}, {-3, 2}, {-1, -4}}};
  const Idx dims{6, 7, 70};
  for_each_isa([&](Isa) {
    Handle h;
    for (DType t : kSizes)
      for (const C& c : cases)
        for (Lay xl : kLays) {
          T x = random(t, dims, xl, rng);
          auto yd = slice_output_desc(x.d, c.starts, c.ends, c.axes, c.steps);
          ASSERT_TRUE(yd.is_ok()) << yd.status().to_string();
          std::vector<std::vector<i64>> pick(3);
          for (std::size_t a = 0; a < 3; ++a) {
            pick[a].resize(static_cast<std::size_t>(dims[a]));
            std::iota(pick[a].begin(), pick[a].end(), 0);
          }
          for (std::size_t i = 0; i < c.starts.size(); ++i) {
            const int a0 = c.axes.empty() ? static_cast<int>(i) : c.axes[i];
            const auto a = static_cast<std::size_t>(a0 < 0 ? a0 + 3 : a0);
            pick[a] = slice_indices(dims[a], c.starts[i], c.ends[i], c.steps.empty() ? 1 : c.steps[i]);
          }
          for (std::size_t a = 0; a < 3; ++a) ASSERT_EQ(yd.value().dims[a], static_cast<i64>(pick[a].size())) << a;
          T y = make(t, yd.value().dims, Lay::kGaps);
          ASSERT_TRUE(slice(h, c.starts, c.ends, c.axes, c.steps, x.d, x.p(), y.d, y.p()).is_ok());
          const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
            for (std::size_t a = 0; a < 3; ++a) xi[a] = pick[a][static_cast<std::size_t>(yi[a])];
            return true;
          });
          expect_same(y, want, "slice " + x.d.to_string());
        }
  });
}

// ---- concat / split ---------------------------------------------------------------------------
// Packed tensors cut along an inner axis with rows up to 16 KiB go in one walk over the rows for
// all the parts (parts.cpp), in units of up to 16 KiB of rows, streamed when forced: rows of
// the whole against the parts' rows back to back, byte for byte, with an empty part, on every
// ISA and thread count. Along axis 1 of f64 the rows are 31 KiB: the moves per part.
TEST(DataMovement, ConcatAndSplitPackedRowsInOneWalk) {
  std::mt19937 rng(18);
  const Idx base{3, 97, 41};
  for_each_isa([&](Isa) {
    for (int threads : {1, 2}) {
      Handle h;
      ASSERT_TRUE(h.set_num_threads(threads).is_ok());
      for (DType t : kSizes)
        for (int axis : {1, 2}) {
          const auto a = static_cast<std::size_t>(axis);
          const std::vector<i64> sizes = axis == 1 ? std::vector<i64>{13, 0, 57, 27} : std::vector<i64>{5, 0, 30, 6};
          const i64 e = static_cast<i64>(dtype_size(t)), outer = axis == 1 ? 3 : 3 * 97, inner = axis == 1 ? 41 : 1;
          std::vector<T> parts;
          std::vector<TensorDesc> descs;
          std::vector<const void*> ptrs;
          for (i64 n : sizes) {
            Idx d = base;
            d[a] = n;
            parts.push_back(random(t, d, Lay::kPacked, rng));
          }
          for (T& p : parts) {  // (the empty part's pointer null, as a caller may pass it)
            descs.push_back(p.d);
            ptrs.push_back(p.d.numel() > 0 ? p.p() : nullptr);
          }
          T y = make(t, base, Lay::kPacked);
          ASSERT_TRUE(concat(h, axis, descs, ptrs, y.d, y.p()).is_ok());
          const i64 row = base[a] * inner * e;
          i64 bad = 0, at = 0;
          for (std::size_t i = 0; i < parts.size(); ++i) {
            const i64 w = sizes[i] * inner * e;
            for (i64 o = 0; o < outer; ++o)
              bad += std::memcmp(static_cast<const unsigned char*>(y.p()) + o * row + at, static_cast<const unsigned char*>(parts[i].p()) + o * w,
                                 static_cast<std::size_t>(w)) != 0;
            at += w;
          }
          EXPECT_EQ(bad, 0) << "concat " << y.d.to_string() << " axis " << axis << ", " << threads << " threads";
          std::vector<T> outs;
          std::vector<TensorDesc> odescs;
          std::vector<void*> optrs;
          for (const T& p : parts) outs.push_back(make(t, p.d.dims, Lay::kPacked));
          for (T& o : outs) {
            odescs.push_back(o.d);
            optrs.push_back(o.d.numel() > 0 ? o.p() : nullptr);
          }
          ASSERT_TRUE(split(h, axis, y.d, y.p(), odescs, optrs).is_ok());
          for (std::size_t i = 0; i < parts.size(); ++i) {
            if (sizes[i] == 0) continue;  // its storage is one element nothing writes
            EXPECT_EQ(outs[i].mem, parts[i].mem) << "split part " << i << " of " << y.d.to_string() << " axis " << axis << ", " << threads << " threads";
          }
        }
    }
  });
}

TEST(DataMovement, ConcatAndSplitAlongEveryAxis) {
  std::mt19937 rng(17);
  const Idx base{4, 5, 67};
  for_each_isa([&](Isa) {
    Handle h;
    for (DType t : kSizes)
      for (int axis : {0, 1, 2, -1})
        for (Lay lay : kLays) {
          const auto a = static_cast<std::size_t>(axis < 0 ? axis + 3 : axis);
          const i64 sizes[] = {2, 0, 3, 1};
          std::vector<T> parts;
          std::vector<TensorDesc> descs;
          std::vector<const void*> ptrs;
          Idx yd = base;
          yd[a] = 6;
          for (i64 s : sizes) {
            Idx d = base;
            d[a] = s;
            parts.push_back(random(t, d, lay, rng));
          }
          for (T& p : parts) {
            descs.push_back(p.d);
            ptrs.push_back(p.p());
          }
          T y = make(t, yd, lay == Lay::kReversed ? Lay::kPacked : lay);
          ASSERT_TRUE(concat(h, axis, descs, ptrs, y.d, y.p()).is_ok());
          // Each part of y (sliced back out) equals its input.
          i64 at = 0;
          for (const T& p : parts) {
            T from_y = make(t, p.d.dims, Lay::kPacked);
            const Idx starts{at}, ends{at + p.d.dims[a]};
            const int axes[] = {static_cast<int>(a)};
            ASSERT_TRUE(slice(h, starts, ends, axes, {}, y.d, y.p(), from_y.d, from_y.p()).is_ok());
            T p_packed = make(t, p.d.dims, Lay::kPacked);
            ASSERT_TRUE(cast(h, p.d, p.p(), p_packed.d, p_packed.p()).is_ok());
            expect_same(from_y, p_packed, "concat part " + p.d.to_string() + " axis " + std::to_string(axis));
            at += p.d.dims[a];
          }
          // Split it back into fresh parts (gapped) and compare with the inputs.
          std::vector<T> outs;
          std::vector<TensorDesc> odescs;
          std::vector<void*> optrs;
          for (const T& p : parts) outs.push_back(make(t, p.d.dims, Lay::kGaps));
          for (T& o : outs) {
            odescs.push_back(o.d);
            optrs.push_back(o.p());
          }
          ASSERT_TRUE(split(h, axis, y.d, y.p(), odescs, optrs).is_ok());
          for (std::size_t i = 0; i < parts.size(); ++i) {
            const T want_i = expected(parts[i], outs[i].d, [&](const Idx& yi, Idx& xi) {
              xi = yi;
              return true;
            });
            expect_same(outs[i], want_i, "split part " + std::to_string(i) + " axis " + std::to_string(axis));
          }
        }
  });
}

// ---- pad --------------------------------------------------------------------------------------
// The row pass (pad_rows) and the reference (pad_ref) against the index map written here.
TEST(DataMovement, PadEveryModeWithNegativePads) {
  std::mt19937 rng(19);
  struct C {
    Idx dims, pads;
  };
  const C cases[] = {{{4, 5}, {1, 2, 3, 4}},
                     {{4, 70}, {2, 0, 0, 3}},
                     {{3, 4, 6}, {1, 0, 2, 2, 3, 5}},
                     {{3, 4, 6}, {-1, 2, -2, 1, -1, 1}},
                     {{5}, {0, 0}},
                     {{2, 0}, {1, 1, 0, 0}}};
  for_each_isa([&](Isa) {
    Handle h;
    for (DType t : {DType::kBool, DType::kI8, DType::kI32, DType::kF16, DType::kF32, DType::kF64})
      for (PadMode mode : {PadMode::kConstant, PadMode::kReflect, PadMode::kEdge, PadMode::kWrap})
        for (const C& c : cases)
          for (Lay lay : kLays) {
            const std::size_t r = c.dims.size();
            Idx yd(r), c0(r), inner(r), b(r);
            bool valid = true;
            for (std::size_t i = 0; i < r; ++i) {
              const i64 pb = c.pads[i], pe = c.pads[i + r];
              yd[i] = c.dims[i] + pb + pe;
              c0[i] = std::max<i64>(0, -pb);
              inner[i] = c.dims[i] - c0[i] - std::max<i64>(0, -pe);
              b[i] = std::max<i64>(0, pb);
              const i64 most = std::max<i64>({0, pb, pe});
              if (most > 0 && mode == PadMode::kReflect && most > inner[i] - 1) valid = false;
              if (most > 0 && mode == PadMode::kEdge && inner[i] < 1) valid = false;
              if (most > 0 && mode == PadMode::kWrap && most > inner[i]) valid = false;
            }
            T x = random(t, c.dims, lay, rng), y = make(t, yd, lay);
            const Status s = pad(h, mode, c.pads, 2.5, x.d, x.p(), y.d, y.p());
            const std::string what = "pad " + std::string(pad_mode_name(mode)) + " " + x.d.to_string() + " -> " + y.d.to_string();
            if (!valid) {
              EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what;
              continue;
            }
            ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
            unsigned char fill_bytes[8];
            const double v = 2.5;
            detail::convert_element(DType::kF64, &v, t, fill_bytes);
            const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
              for (std::size_t i = 0; i < r; ++i) {
                i64 j = yi[i] - b[i];
                const i64 n = inner[i];
                if (j < 0 || j >= n) {
                  if (mode == PadMode::kConstant) return false;
                  if (mode == PadMode::kEdge) j = std::clamp<i64>(j, 0, n - 1);
                  if (mode == PadMode::kReflect) j = j < 0 ? -j : 2 * (n - 1) - j;
                  if (mode == PadMode::kWrap) j = ((j % n) + n) % n;
                }
                xi[i] = c0[i] + j;
              }
              return true;
            }, fill_bytes);
            expect_same(y, want, what);
            T y_ref = make(t, yd, lay);  // the library's reference (pad_ref), the same way
            ref::pad(mode, c.pads, 2.5, x.d, x.p(), y_ref.d, y_ref.p());
            expect_same(y_ref, want, what + " (pad_ref)");
          }
  });
}

// ---- tile, expand, depth/space ----------------------------------------------------------------
TEST(DataMovement, TileExpandDepthToSpaceSpaceToDepth) {
  std::mt19937 rng(23);
  for_each_isa([&](Isa) {
    Handle h;
    for (DType t : kSizes)
      for (Lay lay : kLays) {
        {  // tile
          const Idx reps[] = {{3, 1, 2}, {1, 0, 4}, {2, 5, 1}};
          for (const Idx& rep : reps) {
            T x = random(t, {2, 3, 33}, lay, rng);
            T y = make(t, {2 * rep[0], 3 * rep[1], 33 * rep[2]}, lay);
            ASSERT_TRUE(tile(h, rep, x.d, x.p(), y.d, y.p()).is_ok());
            const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
              for (std::size_t i = 0; i < 3; ++i) xi[i] = yi[i] % x.d.dims[i];
              return true;
            });
            expect_same(y, want, "tile " + x.d.to_string());
          }
        }
        {  // expand: [3, 1] to [2, 3, 70]; a scalar to [5]
          T x = random(t, {3, 1}, lay, rng), y = make(t, {2, 3, 70}, lay);
          ASSERT_TRUE(expand(h, x.d, x.p(), y.d, y.p()).is_ok());
          const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
            xi = {yi[1], 0};
            return true;
          });
          expect_same(y, want, "expand " + x.d.to_string());
          T s = random(t, {}, lay, rng), ys = make(t, {5}, lay);
          ASSERT_TRUE(expand(h, s.d, s.p(), ys.d, ys.p()).is_ok());
          expect_same(ys, expected(s, ys.d, [](const Idx&, Idx&) { return true; }), "expand scalar");
        }
        for (bool crd : {false, true}) {  // depth_to_space, then DCR's inverse
          const i64 bs = 2;
          T x = random(t, {2, 12, 3, 5}, lay, rng), y = make(t, {2, 3, 6, 10}, lay);
          ASSERT_TRUE(depth_to_space(h, bs, crd, x.d, x.p(), y.d, y.p()).is_ok());
          const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
            const i64 i = yi[2] % bs, j = yi[3] % bs, c = yi[1];
            xi = {yi[0], crd ? c * bs * bs + i * bs + j : (i * bs + j) * 3 + c, yi[2] / bs, yi[3] / bs};
            return true;
          });
          expect_same(y, want, std::string("depth_to_space ") + (crd ? "crd " : "dcr ") + x.d.to_string());
          if (crd) continue;
          T back = make(t, {2, 12, 3, 5}, Lay::kPacked), x_packed = make(t, {2, 12, 3, 5}, Lay::kPacked);
          ASSERT_TRUE(space_to_depth(h, bs, y.d, y.p(), back.d, back.p()).is_ok());
          ASSERT_TRUE(cast(h, x.d, x.p(), x_packed.d, x_packed.p()).is_ok());
          expect_same(back, x_packed, "space_to_depth inverts depth_to_space");
        }
      }
  });
}

// ---- the move engine against its reference on random views ----------------------------------
// Random boxes of rank 1-6 with dims of 1-70, x strides permuted, negative, zero (broadcast) or
// with gaps, y strides permuted or reversed, any dtype pair: every walk (rows, tiles, strided)
// on every ISA path must give the reference's bytes, and leave y's gaps alone.
std::string joined(const Idx& v) {
  std::string s;
  for (i64 e : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(e);
  }
  return s;
}

TEST(DataMovement, MoveEngineMatchesReferenceOnRandomViews) {
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> rank_d(1, 6), pick(0, 9);
  for (int trial = 0; trial < 300; ++trial) {
    const int r = rank_d(rng);
    Idx dims(static_cast<std::size_t>(r));
    i64 total = 1;
    for (i64& d : dims) {
      d = pick(rng) < 2 ? 1 : std::uniform_int_distribution<int>(2, total > 4096 ? 3 : 70)(rng);
      total *= d;
    }
    const DType xt = kTypes[static_cast<std::size_t>(pick(rng) % 9)];
    const DType yt = pick(rng) < 6 ? xt : kTypes[static_cast<std::size_t>(pick(rng) % 9)];
    // x: a packed tensor of its own dims in a random dim order, viewed through a random
    // permutation, some dims broadcast (stride 0) or reversed (negative stride).
    std::vector<int> order(static_cast<std::size_t>(r));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    Idx xs(static_cast<std::size_t>(r)), ys(static_cast<std::size_t>(r));
    i64 span = 1;
    for (int i : order) {
      xs[static_cast<std::size_t>(i)] = span;
      span *= dims[static_cast<std::size_t>(i)] + (pick(rng) == 0 ? 1 : 0);
    }
    T x = make(xt, {span}, Lay::kPacked);
    fill(x, rng);
    i64 xbase = 0;
    for (int i = 0; i < r; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const int c = pick(rng);
      if (c == 0) xs[k] = 0;
      if (c == 1 && dims[k] > 1) {  // reversed: start at the far end
        xbase += (dims[k] - 1) * xs[k];
        xs[k] = -xs[k];
      }
    }
    std::shuffle(order.begin(), order.end(), rng);
    i64 yspan = 1;
    for (int i : order) {
      ys[static_cast<std::size_t>(i)] = yspan;
      yspan *= dims[static_cast<std::size_t>(i)] + (pick(rng) == 0 ? 1 : 0);
    }
    T want = make(yt, {yspan}), got = make(yt, {yspan});
    i64 ybase = 0;
    if (pick(rng) == 0) {  // y reversed along one dim
      const auto k = static_cast<std::size_t>(std::uniform_int_distribution<int>(0, r - 1)(rng));
      ybase = (dims[k] - 1) * ys[k];
      ys[k] = -ys[k];
    }
    detail::Move m;
    m.xt = xt;
    m.yt = yt;
    m.x = detail::at_elem(x.p(), xt, xbase);
    for (int i = 0; i < r; ++i) m.add(dims[static_cast<std::size_t>(i)], xs[static_cast<std::size_t>(i)], ys[static_cast<std::size_t>(i)]);
    m.y = detail::at_elem(want.p(), yt, ybase);
    detail::move_reference(m);
    for_each_isa([&](Isa) {
      for (int threads : {1, 2}) {
        Handle h;
        ASSERT_TRUE(h.set_num_threads(threads).is_ok());
        std::fill(got.mem.begin(), got.mem.end(), 0xA5);
        m.y = detail::at_elem(got.p(), yt, ybase);
        ASSERT_TRUE(detail::run_move(h, m).is_ok());
        ASSERT_EQ(got.mem, want.mem) << "trial " << trial << ": " << dtype_name(xt) << " -> " << dtype_name(yt) << " dims ["
                                     << joined(dims) << "] x strides [" << joined(xs) << "] y strides [" << joined(ys)
                                     << "] threads " << threads;
      }
    });
  }
}

// ---- reshape ----------------------------------------------------------------------------------
TEST(DataMovement, ReshapeViews) {
  const TensorDesc x = TensorDesc::make(DType::kF32, {2, 3, 4});
  const i64 s1[] = {6, -1}, s2[] = {0, 12}, s3[] = {24}, s4[] = {2, 3, 2, 2}, s5[] = {1, 24, 1};
  auto v = reshape_view(x, s1);
  ASSERT_TRUE(v.is_ok());
  EXPECT_EQ(v.value().dims, (Idx{6, 4}));
  EXPECT_EQ(v.value().strides, (Idx{4, 1}));
  EXPECT_EQ(reshape_view(x, s2).value().dims, (Idx{2, 12}));
  EXPECT_EQ(reshape_view(x, s3).value().strides, (Idx{1}));
  EXPECT_EQ(reshape_view(x, s4).value().strides, (Idx{12, 4, 2, 1}));
  EXPECT_EQ(reshape_view(x, s5).value().dims, (Idx{1, 24, 1}));
  // A transposed [4, 6] (strides 1, 4): splitting dim 1 into [2, 3] is a view, merging is not.
  TensorDesc t;
  t.dtype = DType::kF32;
  t.dims = {4, 6};
  t.strides = {1, 4};
  const i64 split_dims[] = {4, 2, 3}, merge[] = {24};
  auto sv = reshape_view(t, split_dims);
  ASSERT_TRUE(sv.is_ok());
  EXPECT_EQ(sv.value().strides, (Idx{1, 12, 4}));
  auto bad = reshape_view(t, merge);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("cannot be viewed"), std::string::npos) << bad.status().message();
  const i64 two_inferred[] = {-1, -1}, wrong[] = {5, -1}, zero_allowed[] = {0, 3};
  EXPECT_NE(reshape_view(x, two_inferred).status().message().find("more than one -1"), std::string::npos);
  EXPECT_NE(reshape_view(x, wrong).status().message().find("do not divide"), std::string::npos);
  EXPECT_FALSE(reshape_view(x, zero_allowed, true).is_ok());  // 0 elements, not 24
}

// ---- bad arguments ----------------------------------------------------------------------------
TEST(DataMovement, BadArgumentsAreRejectedNamingTheProblem) {
  Handle h;
  auto expect_err = [](const Status& s, const std::string& needle) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  T x = make(DType::kF32, {3, 4}), y = make(DType::kF32, {4, 3}), yi = make(DType::kI32, {4, 3});
  const int dup[] = {0, 0}, three[] = {0, 1, 2};
  expect_err(transpose(h, dup, x.d, x.p(), y.d, y.p()), "not a permutation");
  expect_err(transpose(h, three, x.d, x.p(), y.d, y.p()), "not a permutation");
  expect_err(transpose(h, {}, x.d, x.p(), yi.d, yi.p()), "dtype");
  T wrong = make(DType::kF32, {3, 4});
  expect_err(transpose(h, {}, x.d, x.p(), wrong.d, wrong.p()), "must be [4,3]");
  // Operations that read other elements than they write never run in place.
  T sq = make(DType::kF32, {4, 4});
  expect_err(transpose(h, {}, sq.d, sq.p(), sq.d, sq.p()), "cannot run in place");
  const i64 shift[] = {0, -1, 0, 1};
  expect_err(pad(h, PadMode::kConstant, shift, 0, sq.d, sq.p(), sq.d, sq.p()), "cannot run in place");
  expect_err(cast(h, x.d, x.p(), y.d, y.p()), "dims");
  TensorDesc shifted = x.d;
  expect_err(cast(h, x.d, x.p(), shifted, static_cast<float*>(x.p()) + 1), "overlaps");
  const i64 st[] = {0}, en[] = {2}, zero_step[] = {0};
  const int ax[] = {2};
  expect_err(slice(h, st, en, {}, zero_step, x.d, x.p(), y.d, y.p()), "step");
  expect_err(slice(h, st, en, ax, {}, x.d, x.p(), y.d, y.p()), "out of range");
  T a = make(DType::kF32, {3, 2}), b = make(DType::kF32, {2, 2}), c = make(DType::kF32, {3, 5});
  const TensorDesc ds[] = {a.d, b.d};
  const void* ps[] = {a.p(), b.p()};
  expect_err(concat(h, 1, ds, ps, c.d, c.p()), "differ from y dims");
  const TensorDesc ds2[] = {a.d, a.d};
  const void* ps2[] = {a.p(), a.p()};
  expect_err(concat(h, 1, ds2, ps2, c.d, c.p()), "add up to 4");
  T s0 = make(DType::kF32, {3, 1}), s1 = make(DType::kF32, {3, 1});
  const TensorDesc sd[] = {s0.d, s1.d};
  void* same_ptr[] = {s0.p(), s0.p()};
  expect_err(split(h, 1, a.d, a.p(), sd, same_ptr), "overlaps y[0]");
  void* sp[] = {s0.p(), s1.p()};
  expect_err(split(h, 1, c.d, c.p(), sd, sp), "add up to 2");
  const i64 pads_short[] = {1, 1}, reflect_big[] = {0, 4, 0, 0};
  T p = make(DType::kF32, {3, 8});
  expect_err(pad(h, PadMode::kConstant, pads_short, 0, x.d, x.p(), p.d, p.p()), "need 4");
  expect_err(pad(h, PadMode::kReflect, reflect_big, 0, x.d, x.p(), p.d, p.p()), "pads <= dim - 1");
  const i64 neg_rep[] = {1, -1};
  expect_err(tile(h, neg_rep, x.d, x.p(), y.d, y.p()), "negative");
  T d4 = make(DType::kF32, {1, 6, 2, 2}), d4y = make(DType::kF32, {1, 1, 4, 4});
  expect_err(depth_to_space(h, 2, false, d4.d, d4.p(), d4y.d, d4y.p()), "dividing C");
  expect_err(space_to_depth(h, 3, d4.d, d4.p(), d4y.d, d4y.p()), "divide H");
  T e = make(DType::kF32, {2, 4});
  expect_err(expand(h, x.d, x.p(), e.d, e.p()), "broadcast");
}

}  // namespace
}  // namespace tessera::dnn
