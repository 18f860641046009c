// Elementwise chains against the same steps run one operation at a time (binary, unary,
// activation_forward into temporaries), bit for bit, on every ISA path: operands broadcast as
// scalars, rows, columns and middle dims, rows longer than a block and shorter ones, a
// strided output, in place, a scalar, empty tensors, NaN and infinities in x; and the
// argument errors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using i64 = std::int64_t;
using Dims = std::vector<i64>;

TensorDesc packed(const Dims& dims) {
  TensorDesc d{DType::kF32, dims, Dims(dims.size())};
  i64 s = 1;
  for (std::size_t i = dims.size(); i-- > 0;) {
    d.strides[i] = s;
    s *= std::max<i64>(dims[i], 1);  // an empty tensor keeps distinct strides
  }
  return d;
}
i64 numel(const Dims& d) {
  i64 n = 1;
  for (i64 v : d) n *= v;
  return n;
}
std::vector<float> values(i64 n, unsigned seed, bool specials = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(rng);
  if (specials && n >= 4) {
    v[0] = std::numeric_limits<float>::quiet_NaN();
    v[1] = std::numeric_limits<float>::infinity();
    v[2] = -std::numeric_limits<float>::infinity();
    v[3] = 0.0f;
  }
  return v;
}
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

ChainStep bin(BinaryOp op, int operand, bool first = false) {
  ChainStep s;
  s.kind = ChainStep::Kind::kBinary;
  s.binary = op;
  s.operand = operand;
  s.operand_first = first;
  return s;
}
ChainStep un(UnaryOp op) {
  ChainStep s;
  s.kind = ChainStep::Kind::kUnary;
  s.unary = op;
  return s;
}
ChainStep act(Activation a) {
  ChainStep s;
  s.kind = ChainStep::Kind::kActivation;
  s.activation = a;
  return s;
}

// The chain one operation at a time, each into a new packed tensor.
std::vector<float> unfused(Handle& h, const std::vector<ChainStep>& steps, const Dims& dims, std::vector<float> v,
                           const std::vector<Dims>& odims, const std::vector<std::vector<float>>& ops) {
  const TensorDesc d = packed(dims);
  for (const ChainStep& s : steps) {
    std::vector<float> y(v.size());
    if (s.kind == ChainStep::Kind::kBinary) {
      const TensorDesc od = packed(odims[static_cast<std::size_t>(s.operand)]);
      const float* o = ops[static_cast<std::size_t>(s.operand)].data();
      const Status st = s.operand_first ? binary(h, s.binary, od, o, d, v.data(), d, y.data()) : binary(h, s.binary, d, v.data(), od, o, d, y.data());
      EXPECT_TRUE(st.is_ok()) << st.to_string();
    } else if (s.kind == ChainStep::Kind::kUnary) {
      EXPECT_TRUE(unary(h, s.unary, d, v.data(), d, y.data()).is_ok());
    } else if (!dims.empty()) {
      EXPECT_TRUE(activation_forward(h, s.activation, d, v.data(), d, y.data()).is_ok());
    } else {  // activations take rank >= 1: the scalar as one element
      const TensorDesc one = packed({1});
      EXPECT_TRUE(activation_forward(h, s.activation, one, v.data(), one, y.data()).is_ok());
    }
    v = std::move(y);
  }
  return v;
}

std::vector<ChainStep> mixed_chain() {
  return {bin(BinaryOp::kAdd, 0),
          act(Activation::make(ActKind::kGeluErf)),
          bin(BinaryOp::kMul, 1),
          un(UnaryOp::kExp),
          bin(BinaryOp::kSub, 2, true),
          act({ActKind::kClip, -1.5f, 3.0f}),
          un(UnaryOp::kSqrt),
          bin(BinaryOp::kMax, 0),
          act({ActKind::kLeakyRelu, 0.1f, 0}),
          un(UnaryOp::kTanh),
          bin(BinaryOp::kDiv, 3)};
}

TEST(ElementwiseChain, MatchesTheUnfusedStepsBitwise) {
  struct Case {
    Dims y;
    std::vector<Dims> ops;
  };
  const std::vector<Case> cases = {
      {{3, 1000}, {{1}, {1000}, {3, 1}, {3, 1000}}},            // scalar, row, column, full
      {{2, 3, 4097}, {{3, 1}, {4097}, {2, 1, 1}, {1, 3, 4097}}},  // rows longer than a block
      {{5, 7}, {{7}, {5, 1}, {}, {5, 7}}},
      {{17}, {{1}, {17}, {17}, {1}}},
      {{}, {{}, {}, {}, {}}},                                     // a scalar
      {{4, 0, 3}, {{3}, {1}, {4, 1, 1}, {3}}},                   // empty
  };
  testing::for_each_isa([&](Isa) {
    Handle h;
    for (const Case& c : cases) {
      SCOPED_TRACE("y [" + std::to_string(c.y.size()) + " dims, " + std::to_string(numel(c.y)) + " elements]");
      const std::vector<float> x = values(numel(c.y), 1, true);
      std::vector<std::vector<float>> ops;
      std::vector<TensorDesc> descs;
      std::vector<const void*> ptrs;
      for (std::size_t k = 0; k < c.ops.size(); ++k) {
        ops.push_back(values(numel(c.ops[k]), 10 + static_cast<unsigned>(k)));
        descs.push_back(packed(c.ops[k]));
      }
      for (auto& o : ops) ptrs.push_back(o.data());
      const std::vector<ChainStep> steps = mixed_chain();
      const std::vector<float> want = unfused(h, steps, c.y, x, c.ops, ops);
      std::vector<float> y(x.size());
      ASSERT_TRUE(elementwise_chain(h, steps, packed(c.y), x.data(), descs, ptrs, packed(c.y), y.data()).is_ok());
      EXPECT_TRUE(same_bits(y, want));
      // In place.
      std::vector<float> v = x;
      ASSERT_TRUE(elementwise_chain(h, steps, packed(c.y), v.data(), descs, ptrs, packed(c.y), v.data()).is_ok());
      EXPECT_TRUE(same_bits(v, want));
    }
  });
}

TEST(ElementwiseChain, StridedOutputAndNoSteps) {
  Handle h;
  // y is the transpose of a packed [6, 5] buffer: strides (1, 5) over dims [5, 6].
  const Dims dims = {5, 6};
  const std::vector<float> x = values(30, 3), r = values(6, 4);
  const std::vector<ChainStep> steps = {bin(BinaryOp::kMul, 0), act(Activation::make(ActKind::kSigmoid))};
  const std::vector<float> want = unfused(h, steps, dims, x, {{6}}, {r});
  std::vector<float> buf(30);
  const TensorDesc yt{DType::kF32, dims, {1, 5}};
  const TensorDesc od = packed({6});
  const void* op = r.data();
  ASSERT_TRUE(elementwise_chain(h, steps, packed(dims), x.data(), {&od, 1}, {&op, 1}, yt, buf.data()).is_ok());
  for (i64 i = 0; i < 5; ++i)
    for (i64 j = 0; j < 6; ++j) {
      const float got = buf[static_cast<std::size_t>(j * 5 + i)], w = want[static_cast<std::size_t>(i * 6 + j)];
      EXPECT_EQ(std::memcmp(&got, &w, sizeof got), 0) << i << "," << j;
    }
  std::vector<float> copy(30);
  ASSERT_TRUE(elementwise_chain(h, {}, packed(dims), x.data(), {}, {}, packed(dims), copy.data()).is_ok());
  EXPECT_TRUE(same_bits(copy, x));
}

TEST(ElementwiseChain, BadArgumentsAreErrors) {
  Handle h;
  std::vector<float> x(12, 1.0f), y(12), o(12, 2.0f);
  const TensorDesc d = packed({3, 4});
  const void* op = o.data();
  const std::vector<ChainStep> add = {bin(BinaryOp::kAdd, 0)};
  const auto message = [](const Status& s) { return s.message(); };
  // An operand that does not broadcast, one of another dtype, one overlapping y, one missing.
  const TensorDesc wide = packed({5});
  EXPECT_NE(message(elementwise_chain(h, add, d, x.data(), {&wide, 1}, {&op, 1}, d, y.data())).find("do not broadcast"), std::string::npos);
  TensorDesc i32 = d;
  i32.dtype = DType::kI32;
  EXPECT_NE(message(elementwise_chain(h, add, d, x.data(), {&i32, 1}, {&op, 1}, d, y.data())).find("not f32"), std::string::npos);
  const void* yp = y.data();
  EXPECT_FALSE(elementwise_chain(h, add, d, x.data(), {&d, 1}, {&yp, 1}, d, y.data()).is_ok());
  const std::vector<ChainStep> add1 = {bin(BinaryOp::kAdd, 1)}, less = {bin(BinaryOp::kLess, 0)}, isnan = {un(UnaryOp::kIsNan)};
  EXPECT_NE(message(elementwise_chain(h, add1, d, x.data(), {&d, 1}, {&op, 1}, d, y.data())).find("operand 1 of 1"), std::string::npos);
  // Comparisons and bool-valued unary steps are not chain steps.
  EXPECT_NE(message(elementwise_chain(h, less, d, x.data(), {&d, 1}, {&op, 1}, d, y.data())).find("not an arithmetic"), std::string::npos);
  EXPECT_FALSE(elementwise_chain(h, isnan, d, x.data(), {}, {}, d, y.data()).is_ok());
  // x of other dims than y; f16 x.
  EXPECT_NE(message(elementwise_chain(h, add, packed({12}), x.data(), {&d, 1}, {&op, 1}, d, y.data())).find("differ"), std::string::npos);
  TensorDesc half = d;
  half.dtype = DType::kF16;
  EXPECT_FALSE(elementwise_chain(h, add, half, x.data(), {&d, 1}, {&op, 1}, d, y.data()).is_ok());
  // Five operands.
  const std::vector<TensorDesc> five(5, d);
  const std::vector<const void*> five_p(5, op);
  EXPECT_NE(message(elementwise_chain(h, add, d, x.data(), five, five_p, d, y.data())).find("at most 4"), std::string::npos);
}

}  // namespace
}  // namespace tessera::dnn
