// The executor's reference-grade kernels on cases ONNX's node tests leave out, against plain
// loops written here: ConvTranspose with an output_shape beyond the input's reach, Attention
// with a fully masked row and a causal mask, Einsum on diagonals and broadcast batches, a
// reverse LSTM against the forward one on the reversed sequence, QuantizeLinear's rounding and
// saturation, the losses' label checks, and ONNX's other integer types (i16, u16, u32, u64)
// through the widened paths.
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/session.hpp>

#include "onnx_builder.hpp"
#include "test_util.hpp"

namespace tessera::exec {
namespace {

using Dims = std::vector<std::int64_t>;

struct Builder : testing::OnnxBuilder {
  using OnnxBuilder::OnnxBuilder;
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& in) const {
    TESSERA_ASSIGN_OR_RETURN(graph::Model model, import());
    TESSERA_ASSIGN_OR_RETURN(Session s, Session::create(std::move(model)));
    return s.run(in);
  }
};

Tensor tensor(const Dims& dims, const std::vector<float>& v) { return Tensor::from_vector<float>(Shape(dims), v).value_or_throw(); }

TEST(ExecOps, ConvTransposeBeyondTheInputsReach) {
  // x [1, 2, 3], w [2, 1, 2] (C = 2 -> M = 1), stride 2, output_shape 9: the natural size is
  // 2 * 2 + 2 = 6, so outputs 6..8 are 0 plus the bias.
  const auto x = testing::random_floats(6, 1), w = testing::random_floats(4, 2);
  Builder m(17);
  m.input("x", {"1", "2", "3"});
  m.floats("w", {2, 1, 2}, w);
  m.floats("b", {1}, {0.5f});
  auto* n = m.node("ConvTranspose", {"x", "w", "b"}, {"y"});
  Builder::attr(n, "strides", Dims{2});
  Builder::attr(n, "output_shape", Dims{9});
  m.output("y");
  const auto out = m.run({{"x", tensor({1, 2, 3}, x)}}).value_or_throw();
  ASSERT_EQ(out[0].tensor.shape().dims(), (Dims{1, 1, 9}));
  std::vector<float> want(9, 0.5f);
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 2; ++k) want[static_cast<std::size_t>(2 * i + k)] += x[static_cast<std::size_t>(c * 3 + i)] * w[static_cast<std::size_t>(c * 2 + k)];
  const auto got = out[0].tensor.to_vector<float>();
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)], 1e-6) << i;
}

TEST(ExecOps, AttentionMaskedRowsAndCausalMatchLoops) {
  constexpr int L = 3, D = 4;
  const auto q = testing::random_floats(L * D, 3), k = testing::random_floats(L * D, 4), v = testing::random_floats(L * D, 5);
  Builder m(23);
  m.input("q", {"1", "1", "3", "4"});
  m.input("k", {"1", "1", "3", "4"});
  m.input("v", {"1", "1", "3", "4"});
  m.input("mask", {"3", "3"}, onnx::TensorProto::BOOL);
  auto* n = m.node("Attention", {"q", "k", "v", "mask"}, {"y"});
  Builder::attr(n, "is_causal", 1);
  m.output("y");
  // Row 0 may see key 0 only (causal) and the mask hides it: a row with no key gives zeros.
  const std::vector<bool> mask = {false, true, true, true, true, true, true, false, true};
  Tensor mt = Tensor::empty(Shape({3, 3}), DType::kBool).value_or_throw();
  for (int i = 0; i < 9; ++i) mt.data<bool>()[i] = mask[static_cast<std::size_t>(i)];
  const auto out = m.run({{"q", tensor({1, 1, L, D}, q)}, {"k", tensor({1, 1, L, D}, k)}, {"v", tensor({1, 1, L, D}, v)}, {"mask", mt}}).value_or_throw();
  const auto got = out[0].tensor.to_vector<float>();
  for (int i = 0; i < L; ++i) {
    std::vector<double> s;
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < L; ++j) {
      const bool ok = j <= i && mask[static_cast<std::size_t>(i * L + j)];
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += q[static_cast<std::size_t>(i * D + d)] * k[static_cast<std::size_t>(j * D + d)];
      s.push_back(ok ? dot / std::sqrt(double{D}) : -INFINITY);
      mx = std::max(mx, s.back());
    }
    for (double& e : s) sum += e = mx == -INFINITY ? 0 : std::exp(e - mx);
    for (int d = 0; d < D; ++d) {
      double want = 0;
      for (int j = 0; j < L; ++j) want += (sum > 0 ? s[static_cast<std::size_t>(j)] / sum : 0) * v[static_cast<std::size_t>(j * D + d)];
      EXPECT_NEAR(got[static_cast<std::size_t>(i * D + d)], want, 1e-5) << i << "," << d;
    }
  }
  EXPECT_EQ(got[0], 0.0f);
}

TEST(ExecOps, EinsumDiagonalAndBroadcastBatches) {
  const auto a = testing::random_floats(2 * 3 * 4, 6), b = testing::random_floats(4 * 5, 7), sq = testing::random_floats(9, 8);
  Builder m(17);
  m.input("a", {"2", "3", "4"});
  m.input("b", {"1", "4", "5"});
  m.input("s", {"3", "3"});
  auto* e1 = m.node("Einsum", {"a", "b"}, {"y"});
  Builder::attr_string(e1, "equation", "...ij,...jk->...ik");
  auto* e2 = m.node("Einsum", {"s"}, {"d"});
  Builder::attr_string(e2, "equation", "ii->i");
  m.output("y");
  m.output("d");
  const auto out = m.run({{"a", tensor({2, 3, 4}, a)}, {"b", tensor({1, 4, 5}, b)}, {"s", tensor({3, 3}, sq)}}).value_or_throw();
  ASSERT_EQ(out[0].tensor.shape().dims(), (Dims{2, 3, 5}));
  const auto y = out[0].tensor.to_vector<float>();
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k) {
        double want = 0;
        for (int j = 0; j < 4; ++j) want += a[static_cast<std::size_t>((n * 3 + i) * 4 + j)] * b[static_cast<std::size_t>(j * 5 + k)];
        EXPECT_NEAR(y[static_cast<std::size_t>((n * 3 + i) * 5 + k)], want, 1e-5);
      }
  EXPECT_EQ(out[1].tensor.to_vector<float>(), (std::vector<float>{sq[0], sq[4], sq[8]}));
}

TEST(ExecOps, ReverseLstmIsTheForwardOneOnTheReversedSequence) {
  constexpr int T = 4, B = 2, I = 3, H = 5;
  const auto x = testing::random_floats(T * B * I, 9), w = testing::random_floats(4 * H * I, 10), r = testing::random_floats(4 * H * H, 11), bias = testing::random_floats(8 * H, 12);
  auto make = [&](const char* dir) {
    Builder m(14);
    m.input("x", {"4", "2", "3"});
    m.floats("w", {1, 4 * H, I}, w);
    m.floats("r", {1, 4 * H, H}, r);
    m.floats("b", {1, 8 * H}, bias);
    auto* n = m.node("LSTM", {"x", "w", "r", "b"}, {"y", "yh"});
    Builder::attr(n, "hidden_size", H);
    Builder::attr_string(n, "direction", dir);
    m.output("y");
    m.output("yh");
    return m;
  };
  std::vector<float> xr(x.size());
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < B * I; ++i) xr[static_cast<std::size_t>(t * B * I + i)] = x[static_cast<std::size_t>((T - 1 - t) * B * I + i)];
  const auto rev = make("reverse").run({{"x", tensor({T, B, I}, x)}}).value_or_throw();
  const auto fwd = make("forward").run({{"x", tensor({T, B, I}, xr)}}).value_or_throw();
  EXPECT_EQ(rev[1].tensor.to_vector<float>(), fwd[1].tensor.to_vector<float>());
  const auto yr = rev[0].tensor.to_vector<float>(), yf = fwd[0].tensor.to_vector<float>();
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < B * H; ++i) EXPECT_EQ(yr[static_cast<std::size_t>(t * B * H + i)], yf[static_cast<std::size_t>((T - 1 - t) * B * H + i)]);
}

TEST(ExecOps, QuantizeRoundsHalfToEvenAndSaturates) {
  Builder m(19);
  m.input("x", {"7"});
  m.floats("s", {}, {2.0f});
  auto* zp = m.g->add_initializer();
  zp->set_name("z");
  zp->set_data_type(onnx::TensorProto::INT8);
  zp->add_int32_data(1);
  m.node("QuantizeLinear", {"x", "s", "z"}, {"y"});
  m.output("y");
  const auto out = m.run({{"x", tensor({7}, {1.0f, 3.0f, 5.0f, -1.0f, -3.0f, 1000.0f, -1000.0f})}}).value_or_throw();
  ASSERT_EQ(out[0].tensor.dtype(), DType::kI8);
  // x / 2 = 0.5, 1.5, 2.5, -0.5, -1.5 round to 0, 2, 2, -0, -2; then + 1, saturated to [-128, 127].
  EXPECT_EQ(out[0].tensor.to_vector<std::int8_t>(), (std::vector<std::int8_t>{1, 3, 3, 1, -1, 127, -128}));
}

TEST(ExecOps, LossLabelsOutOfRangeAreNamed) {
  Builder m(13);
  m.input("x", {"2", "3"});
  m.input("t", {"2"}, onnx::TensorProto::INT64);
  auto* n = m.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"y"});
  Builder::attr(n, "ignore_index", -1);
  m.output("y");
  const Tensor x = tensor({2, 3}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  const auto bad = m.run({{"x", x}, {"t", Tensor::from_vector<std::int64_t>(Shape({2}), {1, 3}).value_or_throw()}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("label 3 is outside [0, 3)"), std::string::npos) << bad.status().message();
  // ignore_index -1 counts nowhere in the loss but, as ONNX's reference has it, in the mean's count.
  const auto ok = m.run({{"x", x}, {"t", Tensor::from_vector<std::int64_t>(Shape({2}), {2, -1}).value_or_throw()}}).value_or_throw();
  EXPECT_FLOAT_EQ(ok[0].tensor.to_vector<float>()[0], -0.3f / 2);
}

// f32 scores run the DNN primitives, f64 scores the f64 loops: the same losses to f32's
// precision, for every reduction, with and without class weights and ignore_index, for both
// loss nodes. Without ignore_index, -100 (the primitives' default) is a bad label like any other.
TEST(ExecOps, ClassLossesOnThePrimitivesMatchTheF64Loops) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> xs(2 * 4 * 5);
  for (float& v : xs) v = u(rng);
  const std::vector<std::int64_t> labels = {0, 3, 2, 2, 1, 3, 0, 1, 2, 3};
  const std::vector<float> w = {0.5f, 1.0f, 2.0f, 0.25f};
  for (const char* op : {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"})
    for (const char* reduction : {"none", "sum", "mean"})
      for (bool weighted : {false, true})
        for (bool ignore : {false, true}) {
          std::vector<float> got[2];
          for (int f64 = 0; f64 < 2; ++f64) {
            Builder m(13);
            m.input("x", {"2", "4", "5"}, f64 != 0 ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT);
            m.input("t", {"2", "5"}, onnx::TensorProto::INT64);
            std::vector<std::string> in = {"x", "t"};
            if (weighted) {
              m.input("w", {"4"}, f64 != 0 ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT);
              in.push_back("w");
            }
            auto* n = m.node(op, in, {"y"});
            Builder::attr_string(n, "reduction", reduction);
            if (ignore) Builder::attr(n, "ignore_index", std::int64_t{3});
            m.output("y");
            std::vector<double> xd(xs.begin(), xs.end()), wd(w.begin(), w.end());
            std::vector<NamedTensor> feeds = {
                {"x", f64 != 0 ? Tensor::from_vector<double>(Shape({2, 4, 5}), xd).value_or_throw() : tensor({2, 4, 5}, xs)},
                {"t", Tensor::from_vector<std::int64_t>(Shape({2, 5}), labels).value_or_throw()}};
            if (weighted) feeds.push_back({"w", f64 != 0 ? Tensor::from_vector<double>(Shape({4}), wd).value_or_throw() : tensor({4}, w)});
            const auto out = m.run(feeds).value_or_throw();
            const Tensor& y = out[0].tensor;
            if (f64 != 0) {
              for (double v : y.to_vector<double>()) got[1].push_back(static_cast<float>(v));
            } else {
              got[0] = y.to_vector<float>();
            }
          }
          const std::string what = std::string(op) + " " + reduction + (weighted ? " weighted" : "") + (ignore ? " ignore 3" : "");
          ASSERT_EQ(got[0].size(), got[1].size()) << what;
          for (std::size_t i = 0; i < got[0].size(); ++i) EXPECT_NEAR(got[0][i], got[1][i], 2e-6 * (1 + std::fabs(got[1][i]))) << what << " at " << i;
        }
  Builder m(13);
  m.input("x", {"2", "3"});
  m.input("t", {"2"}, onnx::TensorProto::INT64);
  m.node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"y"});
  m.output("y");
  const auto bad = m.run({{"x", tensor({2, 3}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f})},
                          {"t", Tensor::from_vector<std::int64_t>(Shape({2}), {1, -100}).value_or_throw()}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("label -100"), std::string::npos) << bad.status().message();
}

// The integer types the primitives do not compute on: widened, computed, narrowed modulo 2^bits.
template <typename T>
void check_integer_ops(int onnx_type) {
  const std::vector<T> a = {T(0), T(1), T(7), std::numeric_limits<T>::max(), T(100), T(3)};
  const std::vector<T> b = {T(5), T(1), T(2), T(1), T(100), T(9)};
  Builder m(18);
  m.input("a", {"6"}, onnx_type);
  m.input("b", {"6"}, onnx_type);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Less", "Max", "BitwiseXor"}) m.node(op, {"a", "b"}, {std::string(op) + "_y"});
  m.output("Add_y");
  m.output("Sub_y");
  m.output("Mul_y");
  m.output("Div_y");
  m.output("Less_y");
  m.output("Max_y");
  m.output("BitwiseXor_y");
  const auto A = Tensor::from_vector<T>(Shape{6}, a).value_or_throw(), B = Tensor::from_vector<T>(Shape{6}, b).value_or_throw();
  const auto out = m.run({{"a", A}, {"b", B}}).value_or_throw();
  const std::string type(dtype_name(dtype_of<T>()));
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(out[0].tensor.template to_vector<T>()[i], static_cast<T>(a[i] + b[i])) << type << " Add " << i;  // wraps
    EXPECT_EQ(out[1].tensor.template to_vector<T>()[i], static_cast<T>(a[i] - b[i])) << type << " Sub " << i;
    EXPECT_EQ(out[2].tensor.template to_vector<T>()[i], static_cast<T>(a[i] * b[i])) << type << " Mul " << i;
    EXPECT_EQ(out[3].tensor.template to_vector<T>()[i], static_cast<T>(a[i] / b[i])) << type << " Div " << i;
    EXPECT_EQ(out[4].tensor.template to_vector<bool>()[i], a[i] < b[i]) << type << " Less " << i;
    EXPECT_EQ(out[5].tensor.template to_vector<T>()[i], std::max(a[i], b[i])) << type << " Max " << i;
    EXPECT_EQ(out[6].tensor.template to_vector<T>()[i], static_cast<T>(a[i] ^ b[i])) << type << " BitwiseXor " << i;
  }
}

TEST(ExecOps, WidenedIntegerTypes) {
  check_integer_ops<std::int16_t>(5);    // INT16
  check_integer_ops<std::uint16_t>(4);   // UINT16
  check_integer_ops<std::uint32_t>(12);  // UINT32
  // u64: max() is 2^64 - 1, which the ordered ops refuse (they compute in i64); the wrapping ops keep its bits.
  const std::vector<std::uint64_t> big = {~std::uint64_t{0}, 3};
  Builder m(18);
  m.input("a", {"2"}, 13);
  m.input("b", {"2"}, 13);
  m.node("Add", {"a", "b"}, {"sum"});
  m.node("Div", {"a", "b"}, {"q"});
  m.output("sum");
  m.output("q");
  const auto A = Tensor::from_vector<std::uint64_t>(Shape{2}, big).value_or_throw();
  const auto B = Tensor::from_vector<std::uint64_t>(Shape{2}, {2, 2}).value_or_throw();
  const auto r = m.run({{"a", A}, {"b", B}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("u64 values from 2^63 on are not supported"), std::string::npos) << r.status().to_string();
  Builder ok(18);
  ok.input("a", {"2"}, 13);
  ok.input("b", {"2"}, 13);
  ok.node("Add", {"a", "b"}, {"sum"});
  ok.output("sum");
  EXPECT_EQ(ok.run({{"a", A}, {"b", B}}).value_or_throw()[0].tensor.to_vector<std::uint64_t>(), (std::vector<std::uint64_t>{1, 5}));
  const auto small = Tensor::from_vector<std::uint64_t>(Shape{2}, {10, 3}).value_or_throw();
  EXPECT_EQ(m.run({{"a", small}, {"b", B}}).value_or_throw()[1].tensor.to_vector<std::uint64_t>(), (std::vector<std::uint64_t>{5, 1}));
}

// 8-bit floats through Cast (saturating and not), Transpose and Concat, back to f32.
TEST(ExecOps, Float8ThroughCastAndDataMovement) {
  Builder m(21);
  m.input("x", {"2", "3"});
  Builder::attr(m.node("Cast", {"x"}, {"q"}), "to", std::int64_t{17});  // FLOAT8E4M3FN, saturating
  auto* raw = m.node("Cast", {"x"}, {"r"});
  Builder::attr(raw, "to", std::int64_t{17});
  Builder::attr(raw, "saturate", std::int64_t{0});
  Builder::attr(m.node("Transpose", {"q"}, {"t"}), "perm", Dims{1, 0});
  Builder::attr(m.node("Concat", {"q", "r"}, {"c"}), "axis", std::int64_t{0});
  Builder::attr(m.node("Cast", {"t"}, {"tf"}), "to", std::int64_t{1});
  Builder::attr(m.node("Cast", {"c"}, {"cf"}), "to", std::int64_t{1});
  m.output("tf");
  m.output("cf");
  const std::vector<float> x = {1.0f, 0.3f, -500.0f, 1000.0f, 17.0f, -0.0f};
  const auto out = m.run({{"x", tensor({2, 3}, x)}}).value_or_throw();
  // e4m3fn: 0.3 -> 0.3125 (nearest of 0.28125, 0.3125); 17 -> 16 (a tie to the even pattern);
  // beyond 448: 448 saturating, NaN not.
  const std::vector<float> sat = {1.0f, 0.3125f, -448.0f, 448.0f, 16.0f, -0.0f};
  EXPECT_EQ(out[0].tensor.to_vector<float>(), (std::vector<float>{sat[0], sat[3], sat[1], sat[4], sat[2], sat[5]}));
  const auto c = out[1].tensor.to_vector<float>();
  ASSERT_EQ(c.size(), 12u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c[static_cast<std::size_t>(i)], sat[static_cast<std::size_t>(i)]) << i;
  EXPECT_TRUE(std::isnan(c[8]) && std::isnan(c[9]));
  EXPECT_EQ(c[10], 16.0f);
}

TEST(ExecOps, SubByteIntegersPackUnpackAndWrap) {
  // w: i4 [-8, 7, -1] as packed raw data (0x78, 0x0F); v: the same in int32_data, one packed
  // byte per entry. Cast truncates and wraps; Add computes widened and wraps back; Add(w, v) is
  // folded into a constant, so packed again.
  Builder m(21);
  m.input("x", {"3"});
  for (const bool raw : {true, false}) {
    auto* t = m.g->add_initializer();
    t->set_name(raw ? "w" : "v");
    t->set_data_type(22 /* INT4 */);
    t->add_dims(3);
    if (raw) t->set_raw_data(std::string("\x78\x0F", 2));
    else for (int b : {0x78, 0x0F}) t->add_int32_data(b);
  }
  Builder::attr(m.node("Cast", {"x"}, {"xi"}), "to", std::int64_t{22 /* INT4 */});
  m.node("Add", {"xi", "w"}, {"s"});
  m.node("Add", {"w", "v"}, {"f"});
  Builder::attr(m.node("Cast", {"s"}, {"s8"}), "to", std::int64_t{onnx::TensorProto::INT8});
  Builder::attr(m.node("Cast", {"f"}, {"f8"}), "to", std::int64_t{onnx::TensorProto::INT8});
  Builder::attr(m.node("Cast", {"x"}, {"u2"}), "to", std::int64_t{25 /* UINT2 */});
  Builder::attr(m.node("Cast", {"u2"}, {"u2f"}), "to", std::int64_t{onnx::TensorProto::FLOAT});
  m.output("s8");
  m.output("f8");
  m.output("u2f");
  const auto out = m.run({{"x", tensor({3}, {1.0f, 2.7f, -9.5f})}}).value_or_throw();
  // xi = [1, 2, -9 -> 7]; s = [1 - 8, 2 + 7 = 9 -> -7, 7 - 1] ; f = [-16 -> 0, 14 -> -2, -2]
  EXPECT_EQ(out[0].tensor.to_vector<std::int8_t>(), (std::vector<std::int8_t>{-7, -7, 6}));
  EXPECT_EQ(out[1].tensor.to_vector<std::int8_t>(), (std::vector<std::int8_t>{0, -2, -2}));
  // u2: 1, 2, -9 mod 4 = 3.
  EXPECT_EQ(out[2].tensor.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(ExecOps, SmallFloatsThroughCastAndQuantize) {
  // f4e2m1 by Cast and by QuantizeLinear (x / 2), e8m0 with each rounding mode. (Debian's ONNX
  // schema predates these types: their numbers are written out.)
  Builder m(24);
  m.input("x", {"4"});
  m.floats("scale", {}, {2.0f});
  Builder::attr(m.node("Cast", {"x"}, {"f4"}), "to", std::int64_t{23 /* FLOAT4E2M1 */});
  Builder::attr(m.node("Cast", {"f4"}, {"f4f"}), "to", std::int64_t{onnx::TensorProto::FLOAT});
  auto* q = m.node("QuantizeLinear", {"x", "scale"}, {"q4"});
  Builder::attr(q, "output_dtype", std::int64_t{23 /* FLOAT4E2M1 */});
  m.node("DequantizeLinear", {"q4", "scale"}, {"dq"});
  m.output("f4f");
  m.output("dq");
  for (const char* mode : {"up", "down", "nearest"}) {
    auto* c = m.node("Cast", {"x"}, {std::string("e_") + mode});
    Builder::attr(c, "to", std::int64_t{24 /* FLOAT8E8M0 */});
    Builder::attr_string(c, "round_mode", mode);
    Builder::attr(m.node("Cast", {std::string("e_") + mode}, {std::string("ef_") + mode}), "to", std::int64_t{onnx::TensorProto::FLOAT});
    m.output(std::string("ef_") + mode);
  }
  const auto out = m.run({{"x", tensor({4}, {0.8f, 3.0f, -5.0f, 100.0f})}}).value_or_throw();
  EXPECT_EQ(out[0].tensor.to_vector<float>(), (std::vector<float>{1, 3, -4, 6}));
  EXPECT_EQ(out[1].tensor.to_vector<float>(), (std::vector<float>{1, 3, -4, 12}));  // (0.4 -> 0.5, 1.5, -2.5 -> -2, 50 -> 6) * 2
  EXPECT_EQ(out[2].tensor.to_vector<float>(), (std::vector<float>{1, 4, 8, 128}));
  EXPECT_EQ(out[3].tensor.to_vector<float>(), (std::vector<float>{0.5f, 2, 4, 64}));
  EXPECT_EQ(out[4].tensor.to_vector<float>(), (std::vector<float>{1, 4, 4, 128}));
}

TEST(ExecOps, TrainingDropoutKeepsAndScalesBySeed) {
  // Dropout in training mode: kept elements are x / (1 - ratio), dropped ones 0, the mask says
  // which; about 1 - ratio are kept; a seed gives the same mask in every run and session,
  // another seed another mask; without a seed each run draws a new one.
  constexpr int n = 20000;
  const auto x = testing::random_floats(n, 21);
  const auto model = [](std::optional<std::int64_t> seed) {
    Builder m(13);
    m.input("x", {std::to_string(n)});
    m.floats("ratio", {}, {0.25f});
    auto* t = m.g->add_initializer();
    t->set_name("train");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(1);
    auto* d = m.node("Dropout", {"x", "ratio", "train"}, {"y", "mask"});
    if (seed) Builder::attr(d, "seed", *seed);
    m.output("y");
    m.output("mask");
    return m;
  };
  const auto run = [&](Session& s) {
    auto out = s.run({{"x", tensor({n}, x)}}).value_or_throw();
    const auto y = out[0].tensor.to_vector<float>();
    const auto mask = out[1].tensor.to_vector<bool>();
    int kept = 0;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      kept += mask[k];
      if (mask[k]) {
        EXPECT_FLOAT_EQ(y[k], x[k] / 0.75f) << i;
      } else {
        EXPECT_EQ(y[k], 0.0f) << i;
      }
    }
    EXPECT_NEAR(static_cast<double>(kept) / n, 0.75, 0.02);
    return mask;
  };
  const auto open = [](const Builder& b) { return Session::create(b.import().value_or_throw()).value_or_throw(); };
  Session a = open(model(7)), b = open(model(7)), c = open(model(8)), u = open(model(std::nullopt));
  const auto ma = run(a);
  EXPECT_EQ(run(a), ma);  // the same seed: the same mask on the next run
  EXPECT_EQ(run(b), ma);  // ... and in another session
  EXPECT_NE(run(c), ma);  // another seed
  const auto u1 = run(u);
  EXPECT_NE(run(u), u1);  // no seed: a new mask each run
}

}  // namespace
}  // namespace tessera::exec
