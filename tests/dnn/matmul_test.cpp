// MatMul (and the library's matmul_ref) against a plain triple loop in double: batch
// broadcasting, 1-D operands, empty M and K, operands stored transposed or with gaps, strided
// and transposed outputs pre-filled with NaN; f32, f64, bf16, f16 and u8 x i8 -> i32 (exact).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "../../src/dnn/ops/matmul/ref.hpp"
#include "tensor_test_util.hpp"

namespace tessera::dnn {
namespace {

using namespace tensor_test;

// Element (batch index of y, row, col) of a matmul operand, broadcast and 1-D aware.
double elem(const T& x, const Idx& ybatch, i64 r, i64 c, bool vec_is_row) {
  const int rank = x.d.rank();
  i64 off = 0;
  if (rank == 1) return value(x, (vec_is_row ? c : r) * x.d.strides[0]);
  const int nb = rank - 2, yb = static_cast<int>(ybatch.size());
  for (int i = 0; i < nb; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const i64 idx = x.d.dims[k] == 1 ? 0 : ybatch[static_cast<std::size_t>(yb - nb + i)];
    off += idx * x.d.strides[k];
  }
  off += r * x.d.strides[static_cast<std::size_t>(nb)] + c * x.d.strides[static_cast<std::size_t>(nb + 1)];
  return value(x, off);
}

void fill_values(T& x, std::mt19937& rng) {
  std::uniform_int_distribution<int> small(-8, 8);
  std::uniform_real_distribution<double> real(-1, 1);
  const std::size_t n = x.mem.size() / dtype_size(x.d.dtype);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = is_floating(x.d.dtype) ? real(rng) : x.d.dtype == DType::kU8 ? small(rng) + 8 : small(rng);
    void* at = x.mem.data() + i * dtype_size(x.d.dtype);
    switch (x.d.dtype) {
      case DType::kF32: *static_cast<float*>(at) = static_cast<float>(v); break;
      case DType::kF64: *static_cast<double*>(at) = v; break;
      case DType::kBF16: *static_cast<std::uint16_t*>(at) = f32_to_bf16_bits(static_cast<float>(v)); break;
      case DType::kF16: *static_cast<std::uint16_t*>(at) = f32_to_f16_bits(static_cast<float>(v)); break;
      case DType::kU8: *static_cast<std::uint8_t*>(at) = static_cast<std::uint8_t>(v); break;
      case DType::kI8: *static_cast<std::int8_t*>(at) = static_cast<std::int8_t>(v); break;
      default: break;
    }
  }
}

TEST(MatMul, MatchesTripleLoop) {
  std::mt19937 rng(21);
  Handle h;
  struct C {
    Idx a, b;
  };
  const C shapes[] = {{{3, 4}, {4, 5}},       {{4}, {4}},           {{4}, {3, 4, 5}},        {{2, 3, 4}, {4}},
                      {{2, 1, 3, 4}, {5, 4, 6}}, {{1, 0, 4}, {4, 3}}, {{2, 3, 0}, {0, 5}},     {{7, 33, 65}, {65, 17}},
                      {{3, 1, 9}, {1, 9, 1}},
                      {{6, 1, 9}, {9, 5}}, {{2, 3, 4, 7}, {7, 6}}};  // a 2-D b shared by every batch: one gemm where a and y are packed
  struct Types {
    DType a, b, y;
  };
  const Types types[] = {{DType::kF32, DType::kF32, DType::kF32},
                         {DType::kF64, DType::kF64, DType::kF64},
                         {DType::kBF16, DType::kBF16, DType::kBF16},
                         {DType::kF16, DType::kF16, DType::kF16},
                         {DType::kU8, DType::kI8, DType::kI32}};
  for (const Types& ty : types)
    for (const C& c : shapes)
      for (Lay la : {Lay::kPacked, Lay::kReversed, Lay::kGaps})
        for (Lay ly : {Lay::kPacked, Lay::kReversed, Lay::kGaps}) {
          const Lay lb = la == Lay::kReversed ? Lay::kGaps : la == Lay::kGaps ? Lay::kReversed : Lay::kPacked;
          T a = make(ty.a, c.a, la), b = make(ty.b, c.b, lb);
          fill_values(a, rng);
          fill_values(b, rng);
          auto yd = matmul_output_dims(c.a, c.b);
          ASSERT_TRUE(yd.is_ok()) << yd.status().to_string();
          T y = make(ty.y, yd.value(), ly);
          for (i64 o : offsets(y.d)) {  // NaN (or garbage) where y goes: it must be overwritten
            unsigned char* at = y.mem.data() + o * static_cast<i64>(dtype_size(ty.y));
            if (ty.y == DType::kF32) *reinterpret_cast<float*>(at) = std::numeric_limits<float>::quiet_NaN();
            if (ty.y == DType::kF64) *reinterpret_cast<double*>(at) = std::numeric_limits<double>::quiet_NaN();
            if (ty.y == DType::kBF16 || ty.y == DType::kF16) *reinterpret_cast<std::uint16_t*>(at) = 0x7E00;
            if (ty.y == DType::kI32) *reinterpret_cast<std::int32_t*>(at) = 12345;
          }
          const std::string what = std::string(dtype_name(ty.a)) + " " + a.d.to_string() + " @ " + b.d.to_string() + " -> " + y.d.to_string();
          T yr = y;  // the library's reference (matmul_ref) into the same layout
          const Status s = matmul(h, a.d, a.p(), b.d, b.p(), y.d, y.p());
          ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
          ref::matmul(a.d, a.p(), b.d, b.p(), yr.d, yr.p());
          const bool a1 = c.a.size() == 1, b1 = c.b.size() == 1;
          const i64 K = c.a.back();
          const int ym = (a1 ? 0 : 1) + (b1 ? 0 : 1);
          const Idx ydims = yd.value();
          const Idx batch(ydims.begin(), ydims.end() - ym);
          int bad = 0;
          // Walk y's elements by multi-index.
          Idx yi(ydims.size(), 0);
          const i64 total = y.d.numel();
          for (i64 e = 0; e < total; ++e) {
            const Idx yb(yi.begin(), yi.end() - ym);
            const i64 m = a1 ? 0 : yi[yi.size() - static_cast<std::size_t>(ym)];
            const i64 n = b1 ? 0 : yi.back();
            double want = 0, mag = 0;
            for (i64 k = 0; k < K; ++k) {
              const double p = elem(a, yb, m, k, true) * elem(b, yb, k, n, false);
              want += p;
              mag += std::fabs(p);
            }
            i64 off = 0;
            for (std::size_t i = 0; i < yi.size(); ++i) off += yi[i] * y.d.strides[i];
            const double got = value(y, off), got_ref = value(yr, off);
            const double tol = ty.y == DType::kI32 ? 0
                               : ty.y == DType::kF64 ? 1e-12 * (mag + 1)
                               : ty.y == DType::kF32 ? 1e-5 * (mag + 1)
                               : ty.y == DType::kBF16 ? 0x1p-8 * std::fabs(want) + 1e-5 * (mag + 1)
                                                      : 0x1p-11 * std::fabs(want) + 1e-5 * (mag + 1);
            if (!(std::fabs(got - want) <= tol) && ++bad <= 3) ADD_FAILURE() << what << ": element " << e << " got " << got << " want " << want;
            if (!(std::fabs(got_ref - want) <= tol) && ++bad <= 3) ADD_FAILURE() << what << ": matmul_ref element " << e << " got " << got_ref << " want " << want;
            for (int i = static_cast<int>(yi.size()) - 1; i >= 0; --i) {
              const auto k = static_cast<std::size_t>(i);
              if (++yi[k] < ydims[k]) break;
              yi[k] = 0;
            }
          }
        }
}

TEST(MatMul, BadArguments) {
  Handle h;
  T a = make(DType::kF32, {3, 4}), b = make(DType::kF32, {5, 6}), y = make(DType::kF32, {3, 6});
  Status s = matmul(h, a.d, a.p(), b.d, b.p(), y.d, y.p());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("a's columns (4) differ from b's rows (5)"), std::string::npos) << s.message();
  T bi = make(DType::kI32, {4, 6});
  s = matmul(h, a.d, a.p(), bi.d, bi.p(), y.d, y.p());
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  T b2 = make(DType::kF32, {2, 4, 6}), a2 = make(DType::kF32, {3, 3, 4}), y2 = make(DType::kF32, {3, 3, 6});
  s = matmul(h, a2.d, a2.p(), b2.d, b2.p(), y2.d, y2.p());
  EXPECT_NE(s.message().find("do not broadcast"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::dnn
