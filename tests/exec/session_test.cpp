// Sessions: small models built with the ONNX schema's protobuf classes, run, and compared with
// plain loops written here (a CNN: Conv with bias and padding, Relu, MaxPool, global average
// pool, Flatten, Gemm, Softmax; broadcasting elementwise and shape ops; softmax before and
// after opset 13; MaxPool's flat indices); symbolic batch dims; and every way to call run()
// wrongly, or to open a model that cannot run, giving one clear error.
#include <cmath>
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

// Opens a session on the builder's model.
struct Builder : testing::OnnxBuilder {
  using OnnxBuilder::OnnxBuilder;
  Result<Session> open() const {
    TESSERA_ASSIGN_OR_RETURN(graph::Model model, import());
    return Session::create(std::move(model));
  }
};

Tensor tensor(const Dims& dims, const std::vector<float>& v) { return Tensor::from_vector<float>(Shape(dims), v).value_or_throw(); }

TEST(Session, SmallCnnMatchesPlainLoops) {
  constexpr int kN = 2, kC = 2, kH = 5, kW = 5, kK = 3, kOut = 4;
  const auto w = testing::random_floats(kK * kC * 9, 1), b = testing::random_floats(kK, 2), fw = testing::random_floats(kOut * kK, 3), fb = testing::random_floats(kOut, 4);
  Builder m;
  m.input("x", {"N", "2", "5", "5"});
  m.floats("w", {kK, kC, 3, 3}, w);
  m.floats("b", {kK}, b);
  m.floats("fw", {kOut, kK}, fw);
  m.floats("fb", {kOut}, fb);
  auto* conv = m.node("Conv", {"x", "w", "b"}, {"c"});
  Builder::attr(conv, "pads", {1, 1, 1, 1});
  Builder::attr(conv, "strides", {2, 2});
  m.node("Relu", {"c"}, {"r"});
  auto* pool = m.node("MaxPool", {"r"}, {"p"});
  Builder::attr(pool, "kernel_shape", {2, 2});
  m.node("GlobalAveragePool", {"p"}, {"gap"});
  m.node("Flatten", {"gap"}, {"f"});
  auto* gemm = m.node("Gemm", {"f", "fw", "fb"}, {"g"});
  Builder::attr(gemm, "transB", 1);
  m.node("Softmax", {"g"}, {"y"});
  m.output("y");
  Result<Session> s = m.open();
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const auto xv = testing::random_floats(kN * kC * kH * kW, 5);
  Result<std::vector<NamedTensor>> out = s.value().run({{"x", tensor({kN, kC, kH, kW}, xv)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_EQ(out.value().size(), 1u);
  const Tensor& y = out.value()[0].tensor;
  ASSERT_EQ(y.shape(), (Shape{kN, kOut}));

  for (int n = 0; n < kN; ++n) {
    // conv (pad 1, stride 2): 5x5 -> 3x3, relu
    float c[kK][3][3];
    for (int k = 0; k < kK; ++k)
      for (int oh = 0; oh < 3; ++oh)
        for (int ow = 0; ow < 3; ++ow) {
          double acc = b[k];
          for (int ci = 0; ci < kC; ++ci)
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j) {
                const int ih = oh * 2 - 1 + i, iw = ow * 2 - 1 + j;
                if (ih < 0 || iw < 0 || ih >= kH || iw >= kW) continue;
                acc += static_cast<double>(w[((k * kC + ci) * 3 + i) * 3 + j]) * xv[((n * kC + ci) * kH + ih) * kW + iw];
              }
          c[k][oh][ow] = std::max(0.0f, static_cast<float>(acc));
        }
    // max pool 2x2 stride 1: 3x3 -> 2x2, then the mean
    double gap[kK];
    for (int k = 0; k < kK; ++k) {
      double sum = 0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) sum += std::max(std::max(c[k][i][j], c[k][i][j + 1]), std::max(c[k][i + 1][j], c[k][i + 1][j + 1]));
      gap[k] = sum / 4;
    }
    double logits[kOut], mx = -1e30, z = 0;
    for (int o = 0; o < kOut; ++o) {
      logits[o] = fb[o];
      for (int k = 0; k < kK; ++k) logits[o] += static_cast<double>(fw[o * kK + k]) * gap[k];
      mx = std::max(mx, logits[o]);
    }
    for (int o = 0; o < kOut; ++o) z += std::exp(logits[o] - mx);
    for (int o = 0; o < kOut; ++o) EXPECT_NEAR(y.at<float>({n, o}), std::exp(logits[o] - mx) / z, 2e-6) << n << " " << o;
  }
}

TEST(Session, ElementwiseAndShapeOps) {
  Builder m;
  m.input("a", {"2", "3"});
  m.input("v", {"3"});
  m.floats("two", {}, {2.0f});
  m.ints("shape", {3, -1});
  m.ints("axes", {0});
  m.node("Add", {"a", "v"}, {"s"});         // broadcast a row
  m.node("Mul", {"s", "two"}, {"d"});       // and a scalar
  m.node("Reshape", {"d", "shape"}, {"r"});  // [3, 2]
  m.node("Transpose", {"r"}, {"t"});         // [2, 3]
  auto* cat = m.node("Concat", {"t", "a"}, {"cat"});
  Builder::attr(cat, "axis", 0);  // [4, 3]
  auto* red = m.node("ReduceSum", {"cat", "axes"}, {"sum"});
  Builder::attr(red, "keepdims", 0);  // [3]
  m.node("Greater", {"sum", "v"}, {"gt"});
  m.node("Shape", {"cat"}, {"shp"});
  m.output("sum");
  m.output("gt");
  m.output("shp");
  Result<Session> s = m.open();
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, v = {10, 20, 30};
  auto out = s.value().run({{"a", tensor({2, 3}, a)}, {"v", tensor({3}, v)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // d = 2 (a + v) = [[22, 44, 66], [28, 50, 72]]; as [3, 2]: [[22, 44], [66, 28], [50, 72]];
  // transposed: [[22, 66, 50], [44, 28, 72]]; with a below; column sums.
  EXPECT_EQ(out.value()[0].tensor.to_vector<float>(), (std::vector<float>{22 + 44 + 1 + 4, 66 + 28 + 2 + 5, 50 + 72 + 3 + 6}));
  EXPECT_EQ(out.value()[1].tensor.to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(out.value()[2].tensor.to_vector<std::int64_t>(), (std::vector<std::int64_t>{4, 3}));
}

TEST(Session, SoftmaxAxisSemanticsFollowTheOpset) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  for (std::int64_t opset : {11, 13}) {
    Builder m(opset);
    m.input("x", {"2", "2", "2"});
    auto* sm = m.node("Softmax", {"x"}, {"y"});
    Builder::attr(sm, "axis", 1);
    m.output("y");
    Result<Session> s = m.open();
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    auto out = s.value().run({{"x", tensor({2, 2, 2}, x)}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    const auto y = out.value()[0].tensor.to_vector<float>();
    // opset 11: over the 4 elements after the batch dim; 13: over dim 1 (pairs 2 apart).
    const double e = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
    if (opset == 11) EXPECT_NEAR(y[0], 1 / (1 + e + e2 + e3), 1e-6);
    else EXPECT_NEAR(y[0], 1 / (1 + e2), 1e-6);
  }
}

TEST(Session, MaxPoolIndicesCountOverTheWholeTensor) {
  Builder m;
  m.input("x", {"1", "2", "2", "2"});
  auto* pool = m.node("MaxPool", {"x"}, {"y", "i"});
  Builder::attr(pool, "kernel_shape", {2, 2});
  m.output("y");
  m.output("i");
  Result<Session> s = m.open();
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  auto out = s.value().run({{"x", tensor({1, 2, 2, 2}, {1, 4, 2, 3, 9, 5, 6, 7})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out.value()[0].tensor.to_vector<float>(), (std::vector<float>{4, 9}));
  EXPECT_EQ(out.value()[1].tensor.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 4}));
}

TEST(Session, SymbolicBatchTakesAnySize) {
  Builder m;
  m.input("x", {"N", "3"});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  Result<Session> s = m.open();
  ASSERT_TRUE(s.is_ok());
  for (std::int64_t n : {1, 5, 0}) {
    auto out = s.value().run({{"x", tensor({n, 3}, std::vector<float>(static_cast<std::size_t>(n * 3), -1.0f))}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    EXPECT_EQ(out.value()[0].tensor.shape(), (Shape{n, 3}));
  }
}

TEST(Session, DataMovementAndGeneratorOps) {
  Builder m(18);
  m.input("x", {"3", "4"});
  m.ints("starts", {1, 0});
  m.ints("ends", {3, 4});
  m.ints("axes", {0, 1});
  m.ints("steps", {1, 2});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"sl"});  // rows 1-2, columns 0 and 2
  m.ints("parts", {1, 3});
  auto* split = m.node("Split", {"x", "parts"}, {"p0", "p1"});
  Builder::attr(split, "axis", 1);
  m.ints("col_shape", {2, 3, 1});
  m.ints("one_col", {3, 1});
  m.node("Reshape", {"p0", "one_col"}, {"c"});
  m.node("Expand", {"c", "col_shape"}, {"ex"});  // [2, 3, 1]
  m.ints("pads", {0, 1, 0, 0});
  m.floats("fill", {}, {-5.0f});
  m.node("Pad", {"sl", "pads", "fill"}, {"pd"});  // a column of -5 in front: [2, 3]
  m.ints("reps", {1, 2});
  m.node("Tile", {"sl", "reps"}, {"tl"});  // [2, 4]
  m.ints("shape22", {2, 2});
  m.node("ConstantOfShape", {"shape22"}, {"zeros"});
  m.floats("r0", {}, {1.0f});
  m.floats("r1", {}, {10.0f});
  m.floats("r2", {}, {3.0f});
  m.node("Range", {"r0", "r1", "r2"}, {"rg"});
  m.floats("gamma", {4}, {1, 2, 1, 1});
  m.floats("beta", {4}, {0, 0, 0, 1});
  m.node("LayerNormalization", {"x", "gamma", "beta"}, {"ln"});
  for (const char* o : {"sl", "p1", "ex", "pd", "tl", "zeros", "rg", "ln"}) m.output(std::string(o));
  Result<Session> s = m.open();
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  auto out = s.value().run({{"x", tensor({3, 4}, x)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const auto& o = out.value();
  EXPECT_EQ(o[0].tensor.to_vector<float>(), (std::vector<float>{4, 6, 8, 10}));
  EXPECT_EQ(o[1].tensor.shape(), (Shape{3, 3}));
  EXPECT_EQ(o[1].tensor.to_vector<float>(), (std::vector<float>{1, 2, 3, 5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(o[2].tensor.shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(o[2].tensor.to_vector<float>(), (std::vector<float>{0, 4, 8, 0, 4, 8}));
  EXPECT_EQ(o[3].tensor.to_vector<float>(), (std::vector<float>{-5, 4, 6, -5, 8, 10}));
  EXPECT_EQ(o[4].tensor.to_vector<float>(), (std::vector<float>{4, 6, 4, 6, 8, 10, 8, 10}));
  EXPECT_EQ(o[5].tensor.to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(o[6].tensor.to_vector<float>(), (std::vector<float>{1, 4, 7}));
  // Each row of x is (a, a+1, a+2, a+3): normalised (-1.5, -0.5, 0.5, 1.5) / sqrt(1.25 + eps).
  const auto ln = o[7].tensor.to_vector<float>();
  const double inv = 1.0 / std::sqrt(1.25 + 1e-5);
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(ln[static_cast<std::size_t>(r * 4 + 0)], -1.5 * inv, 1e-5);
    EXPECT_NEAR(ln[static_cast<std::size_t>(r * 4 + 1)], -0.5 * inv * 2, 1e-5);
    EXPECT_NEAR(ln[static_cast<std::size_t>(r * 4 + 3)], 1.5 * inv + 1, 1e-5);
  }
}

// Constant weights run a plan made on first use (per input layout); weights given as an input
// run conv_forward each time. Both choose the algorithm the same way: the same bits, for every
// batch size the plan cache sees.
// Independent branches run at once (parallel_branches): four branches of two convolutions
// from x, joined by Concat and Sum, and a second output from one branch. The
// same bits as one node after another on every run (the first ones alternate how each wave
// runs, later ones keep the faster; the memory plan is in waves), every node profiled once per run.
TEST(Session, ParallelBranchesGiveTheSequentialBits) {
  Builder b;
  b.input("x", {"N", "4", "12", "12"});
  const char* w[] = {"w0", "w1", "w2", "w3"};
  const char* c[] = {"c0", "c1", "c2", "c3"};
  const char* a[] = {"a0", "a1", "a2", "a3"};
  for (int k = 0; k < 4; ++k) {
    b.floats(w[k], {4, 4, 3, 3}, testing::random_floats(144, 30 + static_cast<unsigned>(k)));
    Builder::attr(b.node("Conv", {"x", w[k]}, {c[k]}), "pads", {1, 1, 1, 1});
    Builder::attr(b.node("Conv", {c[k], w[k]}, {a[k]}), "pads", {1, 1, 1, 1});  // c[k] dies: the next branch's c may reuse it
  }
  Builder::attr(b.node("Concat", {"a0", "a1", "a2", "a3"}, {"cat"}), "axis", std::int64_t{1});
  b.node("Sum", {"a0", "a1", "a2", "a3"}, {"sum"});
  b.node("ReduceSum", {"cat"}, {"total"});
  b.node("Add", {"sum", "total"}, {"y"});
  b.output("y");
  b.output("a2");
  SessionOptions seq_options, par_options;
  seq_options.disabled_passes = par_options.disabled_passes = {"conv-fusion", "eltwise-fusion"};
  par_options.parallel_branches = true;
  par_options.profile = true;
  Session seq = Session::create(b.import().value_or_throw(), seq_options).value_or_throw();
  Session par = Session::create(b.import().value_or_throw(), par_options).value_or_throw();
  for (int run = 0; run < 12; ++run) {
    const std::int64_t n = run < 11 ? 2 : 1;  // a new signature re-plans
    const Tensor x = tensor({n, 4, 12, 12}, testing::random_floats(static_cast<std::size_t>(n * 576), 40 + static_cast<unsigned>(run)));
    const auto ys = seq.run({{"x", x}}).value_or_throw();
    const auto yp = par.run({{"x", x}}).value_or_throw();
    ASSERT_EQ(ys.size(), yp.size());
    for (std::size_t k = 0; k < ys.size(); ++k) EXPECT_EQ(ys[k].tensor.to_vector<float>(), yp[k].tensor.to_vector<float>()) << "run " << run << " output " << k;
  }
  EXPECT_TRUE(par.memory_plan().made);
  ASSERT_EQ(par.profiles().size(), 12u);
  for (const RunProfile& r : par.profiles()) {
    ASSERT_EQ(r.nodes.size(), par.model().graph.nodes.size());
    for (std::size_t i = 0; i < r.nodes.size(); ++i) EXPECT_EQ(r.nodes[i].node, i);
  }
}

TEST(Session, ConvPlansGiveTheBitsOfDirectCalls) {
  const auto w = testing::random_floats(8 * 4 * 9, 7);
  Builder constant, input;
  for (Builder* m : {&constant, &input}) {
    m->input("x", {"N", "4", "9", "9"});
    if (m == &input) m->input("w", {"8", "4", "3", "3"});
    else m->floats("w", {8, 4, 3, 3}, w);
    auto* conv = m->node("Conv", {"x", "w"}, {"y"});
    Builder::attr(conv, "pads", {1, 1, 1, 1});
    m->output("y");
  }
  Result<Session> a = constant.open(), b = input.open();
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  for (std::int64_t n : {1, 3, 1}) {
    const Tensor x = tensor({n, 4, 9, 9}, testing::random_floats(static_cast<std::size_t>(n * 4 * 81), 8));
    auto ya = a.value().run({{"x", x}});
    auto yb = b.value().run({{"x", x}, {"w", tensor({8, 4, 3, 3}, w)}});
    ASSERT_TRUE(ya.is_ok() && yb.is_ok());
    EXPECT_EQ(ya.value()[0].tensor.to_vector<float>(), yb.value()[0].tensor.to_vector<float>()) << n;
  }
}

TEST(Session, OutputsNeverShareTheModelsConstants) {
  Builder m;
  m.floats("c", {2, 2}, {1, 2, 3, 4});
  m.ints("shape", {4});
  m.node("Reshape", {"c", "shape"}, {"y"});  // a view of the constant
  m.output("y");
  m.output("c");
  Result<Session> s = m.open();
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  for (int run = 0; run < 2; ++run) {
    auto out = s.value().run({});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    EXPECT_EQ(out.value()[0].tensor.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(out.value()[1].tensor.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
    out.value()[0].tensor.fill(-1.0f);
    out.value()[1].tensor.fill(-1.0f);
  }
}

void expect_error(const Status& s, StatusCode code, const std::string& needle) {
  ASSERT_FALSE(s.is_ok()) << needle;
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.to_string();
}

TEST(Session, BadCallsAndModelsGiveOneClearError) {
  Builder m;
  m.input("x", {"N", "3"});
  m.input("k", {"3"});
  m.node("Add", {"x", "k"}, {"y"});
  m.output("y");
  Result<Session> s = m.open();
  ASSERT_TRUE(s.is_ok());
  const Tensor x = tensor({2, 3}, std::vector<float>(6, 1.0f)), k = tensor({3}, {1, 2, 3});
  expect_error(s.value().run({{"x", x}}).status(), StatusCode::kInvalidArgument, "input 'k' is missing");
  expect_error(s.value().run({{"x", x}, {"k", k}, {"z", k}}).status(), StatusCode::kInvalidArgument, "'z' is not an input of the model (its inputs: x, k)");
  expect_error(s.value().run({{"x", x}, {"k", k}, {"k", k}}).status(), StatusCode::kInvalidArgument, "input 'k' is given twice");
  expect_error(s.value().run({{"x", x}, {"k", tensor({4}, {1, 2, 3, 4})}}).status(), StatusCode::kInvalidArgument, "input 'k' has dims [4], the model wants f32[3]");
  const Tensor xi = Tensor::from_vector<std::int32_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}).value_or_throw();
  expect_error(s.value().run({{"x", xi}, {"k", k}}).status(), StatusCode::kInvalidArgument, "input 'x' is i32, the model wants f32[N,3]");
  EXPECT_TRUE(s.value().run({{"x", x}, {"k", k}}).is_ok());

  Builder u;
  u.input("x", {"3"});
  u.node("Relu", {"x"}, {"r"});
  u.node("TfIdfVectorizer", {"r"}, {"y"});
  u.output("y");
  expect_error(u.open().status(), StatusCode::kUnsupported, "node 1 'TfIdfVectorizer2' (TfIdfVectorizer): the op TfIdfVectorizer is not supported yet");

  // A failing kernel names its node: Reshape to a shape of another size.
  Builder r;
  r.input("x", {"N", "3"});
  r.ints("shape", {4, -1});
  r.node("Reshape", {"x", "shape"}, {"y"});
  r.output("y");
  Result<Session> rs = r.open();
  ASSERT_TRUE(rs.is_ok()) << rs.status().to_string();
  expect_error(rs.value().run({{"x", x}}).status(), StatusCode::kInvalidArgument, "run: node 0 'Reshape1' (Reshape): 6 elements do not reshape to the shape");
}

}  // namespace
}  // namespace tessera::exec
