// The graph passes: each on a model built for it (what it rewrites, what it must leave), the
// model verified after every pass, and the optimised model computing what the original does
// (sessions at opt_level 0 and 2 compared bitwise on the same inputs). optimize()'s options:
// levels, disabled and unknown pass names, dumps.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <tessera/graph/passes.hpp>
#include <tessera/session.hpp>

#include "onnx_builder.hpp"
#include "test_util.hpp"

namespace tessera::graph {
namespace {

using Dims = std::vector<std::int64_t>;
using testing::OnnxBuilder;

Model imported(const OnnxBuilder& b) {
  Model m = b.import().value_or_throw();
  EXPECT_TRUE(infer_types(m).is_ok());
  return m;
}

int count_op(const Model& m, const std::string& op) {
  int n = 0;
  for (const Node& node : m.graph.nodes) n += node.op_type == op;
  return n;
}

OptimizeOptions only(const std::string& keep, const std::string& also = "") {
  OptimizeOptions o;
  o.level = 3;
  o.evaluate = &exec::evaluate_node;
  for (const PassInfo& p : pass_list())
    if (p.name != keep && p.name != also) o.disabled.insert(p.name);
  return o;
}

// The outputs of the model at opt_level 0 and 2 on the same input x, which must be equal bitwise
// (the fusions keep the bits; the layout pass, off here, may choose other algorithms).
void expect_same_outputs(const OnnxBuilder& b, const Dims& xdims) {
  const Tensor x = Tensor::from_vector<float>(Shape(xdims), testing::random_floats(static_cast<std::size_t>(Shape(xdims).numel()), 7)).value_or_throw();
  std::vector<std::vector<float>> results;
  for (int level : {0, 2}) {
    exec::SessionOptions o;
    o.opt_level = level;
    o.disabled_passes = {"layout"};
    exec::Session s = exec::Session::create(b.import().value_or_throw(), o).value_or_throw();
    auto out = s.run({{"x", x}}).value_or_throw();
    results.push_back(out[0].tensor.to_vector<float>());
  }
  EXPECT_EQ(results[0], results[1]);
}

// Output 0 of a model run at level 0 (the passes already applied, or none) on input x.
std::vector<float> output_at_level0(const Model& m, const Tensor& x) {
  exec::SessionOptions o;
  o.opt_level = 0;
  exec::Session s = exec::Session::create(m, o).value_or_throw();
  return s.run({{"x", x}}).value_or_throw()[0].tensor.to_vector<float>();
}

// The model, exported, passes Debian's ONNX checker (which knows IR versions up to 8).
void expect_valid_onnx(const Model& m) {
  onnx::ModelProto mp;
  ASSERT_TRUE(mp.ParseFromString(export_onnx(m).value_or_throw()));
  mp.set_ir_version(std::min<std::int64_t>(mp.ir_version(), 8));
  EXPECT_NO_THROW(onnx::checker::check_model(mp));
}

TEST(Passes, DeadCodeRemovesUnreadChainsAndConstants) {
  OnnxBuilder b;
  b.input("x", {"4"});
  b.floats("unused", {4}, {1, 2, 3, 4});
  b.floats("k", {4}, {1, 1, 1, 1});
  b.node("Add", {"x", "k"}, {"dead1"});
  b.node("Relu", {"dead1"}, {"dead2"});
  b.node("Neg", {"x"}, {"y"});
  b.output("y");
  Model m = imported(b);
  auto r = optimize(m, only("dead-code")).value_or_throw();
  EXPECT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_EQ(m.graph.nodes[0].op_type, "Neg");
  EXPECT_TRUE(m.graph.initializers.empty());
  EXPECT_EQ(r[0].changes, 4);  // two nodes, two constants
  EXPECT_TRUE(verify(m).is_ok());
}

TEST(Passes, IdentityKeepsGraphOutputNames) {
  OnnxBuilder b;
  b.input("x", {"4"});
  b.node("Identity", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  auto* cast = b.node("Cast", {"r"}, {"c"});
  OnnxBuilder::attr(cast, "to", std::int64_t{1});
  b.node("Identity", {"c"}, {"y"});  // a graph output: stays
  b.output("y");
  Model m = imported(b);
  optimize(m, only("identity")).value_or_throw();
  ASSERT_EQ(m.graph.nodes.size(), 2u);
  EXPECT_EQ(m.graph.nodes[0].op_type, "Relu");
  EXPECT_EQ(m.graph.values[static_cast<std::size_t>(m.graph.nodes[0].inputs[0])].name, "x");
  EXPECT_EQ(m.graph.nodes[1].op_type, "Identity");
  EXPECT_EQ(m.graph.values[static_cast<std::size_t>(m.graph.outputs[0])].name, "y");
}

TEST(Passes, ConstantFoldingEvaluatesShapeChainsButNotInputs) {
  // A reshape target computed from x's known shape, as exporters write it; and an input with a
  // default (run() may replace it), which must not fold.
  OnnxBuilder b;
  b.input("x", {"2", "3", "4"});
  b.input("d", {"1"});
  b.floats("d", {1}, {5});
  b.ints("idx", {0});
  b.ints("minus1", {-1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "idx"}, {"n"});
  b.node("Concat", {"n", "minus1"}, {"target"});
  OnnxBuilder::attr(b.g->mutable_node(2), "axis", std::int64_t{0});
  b.node("Reshape", {"x", "target"}, {"flat"});
  b.node("Mul", {"flat", "d"}, {"y"});
  b.output("y");
  Model m = imported(b);
  auto r = optimize(m, only("constant-folding")).value_or_throw();
  EXPECT_EQ(r[0].changes, 3);
  ASSERT_EQ(m.graph.nodes.size(), 2u);
  EXPECT_EQ(m.graph.nodes[0].op_type, "Reshape");
  const Value& target = m.graph.values[static_cast<std::size_t>(m.graph.nodes[0].inputs[1])];
  ASSERT_TRUE(target.constant);
  std::vector<std::int64_t> t(2);
  std::memcpy(t.data(), target.constant->bytes.data(), 16);
  EXPECT_EQ(t, (std::vector<std::int64_t>{2, -1}));
  EXPECT_EQ(m.graph.nodes[1].op_type, "Mul");  // d is an input: not folded
}

TEST(Passes, ConvFusionAbsorbsResidualAndActivation) {
  OnnxBuilder b;
  b.input("x", {"1", "2", "5", "5"});
  b.floats("w1", {2, 2, 3, 3}, testing::random_floats(36, 1));
  b.floats("w2", {2, 2, 1, 1}, testing::random_floats(4, 2));
  b.floats("b1", {2}, {0.1f, -0.2f});
  auto* c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"});
  OnnxBuilder::attr(c1, "pads", {1, 1, 1, 1});
  b.node("Conv", {"x", "w2"}, {"c2"});  // both convs feed the Add: one of them takes it
  b.node("Add", {"c1", "c2"}, {"sum"});
  b.node("Relu", {"sum"}, {"y"});
  b.output("y");
  Model m = imported(b);
  auto r = optimize(m, only("conv-fusion")).value_or_throw();
  EXPECT_EQ(count_op(m, "FusedConv"), 1);
  EXPECT_EQ(count_op(m, "Conv"), 1);
  EXPECT_EQ(count_op(m, "Add") + count_op(m, "Relu"), 0);
  ASSERT_EQ(r[0].applied.size(), 1u);
  EXPECT_EQ(r[0].applied[0], "Conv + Add + Relu -> FusedConv 'y'");
  EXPECT_EQ(m.opsets.at(kTesseraDomain), 1);
  expect_same_outputs(b, {1, 2, 5, 5});
}

TEST(Passes, ConvFusionRefusesWithReasons) {
  OnnxBuilder b(13);
  b.input("x", {"1", "2", "4", "4"});
  b.input("lo", {});
  b.floats("w", {2, 2, 1, 1}, testing::random_floats(4, 3));
  b.floats("row", {4}, {1, 2, 3, 4});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Add", {"c", "row"}, {"a"});  // a broadcast add: not a residual
  b.node("Conv", {"x", "w"}, {"c2"});
  b.node("Clip", {"c2", "lo"}, {"k"});  // bounds from an input: not fused
  b.node("Add", {"a", "k"}, {"y"});
  b.output("y");
  Model m = imported(b);
  auto r = optimize(m, only("conv-fusion")).value_or_throw();
  EXPECT_EQ(count_op(m, "FusedConv"), 0);
  ASSERT_EQ(r[0].refused.size(), 2u);
  EXPECT_NE(r[0].refused[0].find("is not known to equal the output's"), std::string::npos) << r[0].refused[0];
  EXPECT_NE(r[0].refused[1].find("Clip's bounds are not f32 constants"), std::string::npos) << r[0].refused[1];
}

TEST(Passes, SimplifyMergesTransposeAndReshapeChains) {
  OnnxBuilder b;
  b.input("x", {"2", "3", "4"});
  b.ints("flat", {6, 4});
  b.ints("back", {2, 12});
  b.ints("keep_dim", {0, -1});  // 0: copies a dim of its input, so this chain stays
  b.ints("same", {2, 3, 4});
  // Transpose(Transpose(x)) back to x's layout: both go, Relu reads x.
  OnnxBuilder::attr(b.node("Transpose", {"x"}, {"t1"}), "perm", Dims{1, 2, 0});
  OnnxBuilder::attr(b.node("Transpose", {"t1"}, {"t2"}), "perm", Dims{2, 0, 1});
  b.node("Relu", {"t2"}, {"r"});
  // Two transposes that compose to a third permutation: one Transpose of x.
  OnnxBuilder::attr(b.node("Transpose", {"r"}, {"u1"}), "perm", Dims{1, 0, 2});
  OnnxBuilder::attr(b.node("Transpose", {"u1"}, {"u2"}), "perm", Dims{0, 2, 1});
  b.node("Reshape", {"u2", "flat"}, {"f1"});
  b.node("Reshape", {"f1", "back"}, {"f2"});
  b.node("Reshape", {"f2", "keep_dim"}, {"f3"});
  b.node("Reshape", {"f3", "same"}, {"f4"});
  b.node("Reshape", {"f4", "same"}, {"y"});  // a graph output: its name stays
  b.output("y");
  Model m = imported(b);
  auto r = optimize(m, only("simplify", "dead-code")).value_or_throw();  // dead code: the chains' unread heads
  EXPECT_TRUE(verify(m).is_ok());
  EXPECT_EQ(count_op(m, "Transpose"), 1);
  for (const Node& n : m.graph.nodes)
    if (n.op_type == "Transpose") {
      EXPECT_EQ(n.attrs.at("perm").ints, (Dims{1, 2, 0}));  // u1 then u2: [1,0,2][[0,2,1]]
      EXPECT_EQ(m.graph.values[static_cast<std::size_t>(n.inputs[0])].name, "r");
    }
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "Relu") {
      EXPECT_EQ(m.graph.values[static_cast<std::size_t>(n.inputs[0])].name, "x");
    }
  }
  // f2 reads u2 (f1 goes); f3 ([0, -1]: not merged) gives f2's own dims and goes; f4 then reads
  // u2, and y (a graph output: kept, by name) reads u2 too.
  ASSERT_EQ(count_op(m, "Reshape"), 1);
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "Reshape") {
      EXPECT_EQ(m.graph.values[static_cast<std::size_t>(n.inputs[0])].name, "u2");
    }
  }
  EXPECT_EQ(r[1].changes, 7);  // transposes: two merges and one drop; reshapes: three merges and one drop
  expect_same_outputs(b, {2, 3, 4});
}

TEST(Passes, SimplifySquaresByMultiplying) {
  OnnxBuilder b;
  b.input("x", {"2", "3"});
  b.floats("two", {}, {2.0f});
  b.floats("three", {}, {3.0f});
  b.node("Pow", {"x", "two"}, {"sq"});
  b.node("Pow", {"x", "three"}, {"cube"});  // stays
  b.node("Add", {"sq", "cube"}, {"y"});
  b.output("y");
  Model m = imported(b);
  auto r = optimize(m, only("simplify")).value_or_throw();
  EXPECT_TRUE(verify(m).is_ok());
  EXPECT_EQ(count_op(m, "Pow"), 1);
  EXPECT_EQ(count_op(m, "Mul"), 1);
  EXPECT_EQ(r[0].changes, 1);
  exec::Session s = exec::Session::create(std::move(m), exec::SessionOptions{}).value_or_throw();
  const std::vector<float> x = {-1.5f, 0.0f, 2.0f, 3.25f, -0.0f, 1e-20f};
  const auto y = s.run({{"x", Tensor::from_vector<float>(Shape({2, 3}), x).value_or_throw()}}).value_or_throw()[0].tensor.to_vector<float>();
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], x[i] * x[i] + std::pow(x[i], 3.0f)) << i;
}

// Gemm with transB = 1 on a constant B: simplify stores B transposed once (BLAS then reads it
// in place); a B that is computed stays transposed. The exec Gemm's alpha, beta and a
// broadcast C, against the formula in double.
TEST(Passes, SimplifyStoresGemmConstantBTransposed) {
  OnnxBuilder b;
  b.input("x", {"3", "5"});
  std::vector<float> w(20), c(4);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i) - 1.5f;
  b.floats("w", {4, 5}, w);
  b.floats("c", {4}, c);
  auto* g1 = b.node("Gemm", {"x", "w", "c"}, {"g1"});
  OnnxBuilder::attr(g1, "transB", std::int64_t{1});
  OnnxBuilder::attr_float(g1, "alpha", 1.5f);
  OnnxBuilder::attr_float(g1, "beta", 0.5f);
  b.node("Relu", {"w"}, {"wr"});  // computed: its Gemm keeps transB
  auto* g2 = b.node("Gemm", {"x", "wr"}, {"g2"});
  OnnxBuilder::attr(g2, "transB", std::int64_t{1});
  b.node("Add", {"g1", "g2"}, {"y"});
  b.output("y");
  Model m = imported(b);
  auto r = optimize(m, only("simplify")).value_or_throw();
  EXPECT_TRUE(verify(m).is_ok());
  EXPECT_EQ(r[0].changes, 1);
  int transposed = 0;
  for (const Node& n : m.graph.nodes) {
    if (n.op_type != "Gemm") continue;
    const Value& bv = m.graph.values[static_cast<std::size_t>(n.inputs[1])];
    if (n.attrs.count("transB") == 0) {
      ++transposed;
      ASSERT_TRUE(bv.constant);
      EXPECT_EQ(bv.constant->dims, (Dims{5, 4}));
    } else {
      EXPECT_FALSE(bv.constant);
    }
  }
  EXPECT_EQ(transposed, 1);
  expect_valid_onnx(m);
  std::vector<float> xv(15);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = 0.3f * static_cast<float>(i) - 2.0f;
  const auto y = output_at_level0(m, Tensor::from_vector<float>(Shape({3, 5}), xv).value_or_throw());
  ASSERT_EQ(y.size(), 12u);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      double p = 0, q = 0;
      for (int k = 0; k < 5; ++k) {
        const double wk = w[static_cast<std::size_t>(j * 5 + k)];
        p += xv[static_cast<std::size_t>(i * 5 + k)] * wk;
        q += xv[static_cast<std::size_t>(i * 5 + k)] * std::max(wk, 0.0);
      }
      EXPECT_NEAR(y[static_cast<std::size_t>(i * 4 + j)], 1.5 * p + 0.5 * c[static_cast<std::size_t>(j)] + q, 1e-5) << i << "," << j;
    }
}

TEST(Passes, CseMergesEqualNodesAndConstantsButNotRandomOnes) {
  OnnxBuilder b;
  b.input("x", {"2", "3"});
  b.floats("k1", {3}, {1, 2, 3});
  b.floats("k2", {3}, {1, 2, 3});  // equal to k1
  b.floats("k3", {3}, {1, 2, 4});
  b.node("Add", {"x", "k1"}, {"a1"});
  b.node("Add", {"x", "k2"}, {"a2"});  // = a1 once k2 is k1
  b.node("Add", {"x", "k3"}, {"a3"});
  OnnxBuilder::attr(b.node("Softmax", {"a1"}, {"s1"}), "axis", std::int64_t{1});
  OnnxBuilder::attr(b.node("Softmax", {"a2"}, {"s2"}), "axis", std::int64_t{1});
  OnnxBuilder::attr(b.node("Softmax", {"a2"}, {"s3"}), "axis", std::int64_t{0});  // another axis
  b.node("Mul", {"s1", "s2"}, {"m1"});
  b.node("Mul", {"m1", "s3"}, {"m2"});
  b.node("Mul", {"m2", "a3"}, {"y"});
  b.node("RandomNormalLike", {"x"}, {"n1"});
  b.node("RandomNormalLike", {"x"}, {"n2"});
  b.node("Add", {"n1", "n2"}, {"noise"});
  b.output("y");
  b.output("noise");
  Model m = imported(b);
  auto r = optimize(m, only("cse")).value_or_throw();
  EXPECT_TRUE(verify(m).is_ok());
  EXPECT_EQ(r[0].changes, 3);  // k2, the second Add, the second Softmax over axis 1
  EXPECT_EQ(count_op(m, "Add"), 3);
  EXPECT_EQ(count_op(m, "Softmax"), 2);
  EXPECT_EQ(count_op(m, "RandomNormalLike"), 2);
  EXPECT_EQ(m.graph.initializers.size(), 2u);
}

TEST(Passes, EltwiseFusionChainsElementwiseOpsUpToARefusal) {
  OnnxBuilder b(17);
  b.input("x", {"2", "8"});
  b.floats("bias", {8}, {1, -1, 2, -2, 0.5f, -0.5f, 0, 3});
  b.floats("col", {2, 1}, {0.5f, -2});
  b.floats("lo", {}, {-1});
  b.node("Add", {"x", "bias"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Mul", {"col", "r"}, {"m"});  // the running value second
  b.node("Exp", {"m"}, {"e"});
  OnnxBuilder::attr(b.node("ReduceMax", {"x"}, {"hi"}), "keepdims", std::int64_t{0});
  b.node("Clip", {"e", "lo", "hi"}, {"c"});  // a computed bound: not a step
  b.node("Neg", {"c"}, {"n"});
  b.node("Abs", {"n"}, {"y"});
  b.node("Sigmoid", {"x"}, {"alone"});  // a chain of one stays
  b.output("y");
  b.output("alone");
  Model m = imported(b);
  auto r = optimize(m, only("eltwise-fusion")).value_or_throw();
  EXPECT_TRUE(verify(m).is_ok());
  EXPECT_EQ(count_op(m, "FusedElementwise"), 2);
  EXPECT_EQ(count_op(m, "Clip"), 1);
  EXPECT_EQ(count_op(m, "Sigmoid"), 1);
  EXPECT_EQ(count_op(m, "Relu"), 0);
  ASSERT_EQ(r[0].applied.size(), 2u);
  EXPECT_NE(r[0].applied[0].find("Add + Relu + Mul + Exp"), std::string::npos) << r[0].applied[0];
  EXPECT_NE(r[0].applied[0].find("Clip's bounds are not f32 constants"), std::string::npos) << r[0].applied[0];
  for (const Node& n : m.graph.nodes) {
    if (n.op_type != "FusedElementwise" || n.attrs.at("ops").strings.size() != 4) continue;
    EXPECT_EQ(n.attrs.at("operands").ints, (Dims{1, 0, -2, 0}));  // bias as op(v, in 1), col as op(in 2, v)
    EXPECT_EQ(m.graph.values[static_cast<std::size_t>(n.inputs[0])].name, "x");
  }
  expect_same_outputs(b, {2, 8});
}

TEST(Passes, PortableExpansionGivesCheckedOnnxComputingTheSame) {
  OnnxBuilder b(17);
  b.input("x", {"1", "2", "5", "5"});
  b.floats("w1", {2, 2, 3, 3}, testing::random_floats(36, 1));
  b.floats("w2", {2, 2, 1, 1}, testing::random_floats(4, 2));
  b.floats("b1", {2}, {0.1f, -0.2f});
  b.floats("k", {}, {1.5f});
  b.floats("lo", {}, {-0.5f});
  b.floats("hi", {}, {2.0f});
  OnnxBuilder::attr(b.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.node("Conv", {"x", "w2"}, {"c2"});
  b.node("Add", {"c1", "c2"}, {"sum"});
  b.node("Relu", {"sum"}, {"r"});  // FusedConv with a residual and Relu
  b.node("Mul", {"r", "k"}, {"m"});
  b.node("Clip", {"m", "lo", "hi"}, {"c"});
  OnnxBuilder::attr_float(b.node("LeakyRelu", {"c"}, {"l"}), "alpha", 0.25f);
  b.node("Sub", {"k", "l"}, {"y"});  // FusedElementwise: Mul, Clip, LeakyRelu, Sub(operand, v)
  b.output("y", {"1", "2", "5", "5"});
  const Model original = imported(b);
  Model m = original;
  OptimizeOptions o;
  o.evaluate = &exec::evaluate_node;
  ASSERT_TRUE(optimize(m, o).is_ok());
  ASSERT_EQ(count_op(m, "FusedConv"), 1);
  ASSERT_EQ(count_op(m, "FusedElementwise"), 1);
  const Model fused = m;
  ASSERT_TRUE(expand_fused_ops(m).is_ok());
  EXPECT_EQ(count_op(m, "FusedConv") + count_op(m, "FusedElementwise"), 0);
  EXPECT_EQ(m.opsets.count(kTesseraDomain), 0u);
  for (const Node& n : m.graph.nodes) EXPECT_TRUE(n.domain.empty()) << n.op_type;
  // Valid ONNX by Debian's checker, and the same outputs bit for bit as the original and the
  // fused model.
  expect_valid_onnx(m);
  const Tensor x = Tensor::from_vector<float>(Shape({1, 2, 5, 5}), testing::random_floats(50, 9)).value_or_throw();
  const std::vector<std::vector<float>> results = {output_at_level0(original, x), output_at_level0(fused, x), output_at_level0(m, x)};
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

// A layer norm over the last axis written out as exporters before opset 17 write it; with the
// scale and bias when `affine`. Opset 18 takes ReduceMean's axes as an input.
OnnxBuilder written_out_layer_norm(std::int64_t opset, bool affine) {
  OnnxBuilder b(opset);
  b.input("x", {"N", "4", "6"});
  b.floats("two", {}, {2.0f});
  b.floats("eps", {}, {1e-5f});
  b.floats("gamma", {6}, {1, 2, 0.5f, -1, 1.5f, 3});
  b.floats("beta", {6}, {0, 0.1f, -0.2f, 0.3f, 0, 1});
  const auto mean = [&](const std::string& in, const std::string& out) {
    if (opset >= 18) {
      b.ints(out + "_axes", {-1});
      b.node("ReduceMean", {in, out + "_axes"}, {out});
    } else {
      OnnxBuilder::attr(b.node("ReduceMean", {in}, {out}), "axes", Dims{-1});
    }
  };
  mean("x", "m");
  b.node("Sub", {"x", "m"}, {"d"});
  b.node("Pow", {"d", "two"}, {"p"});
  mean("p", "v");
  b.node("Add", {"v", "eps"}, {"e"});
  b.node("Sqrt", {"e"}, {"s"});
  b.node("Div", {"d", "s"}, {affine ? "n" : "y"});
  if (affine) {
    b.node("Mul", {"n", "gamma"}, {"g"});
    b.node("Add", {"g", "beta"}, {"y"});
  }
  b.output("y", {"N", "4", "6"});
  return b;
}

TEST(Passes, LayerNormFusionAndItsExpansion) {
  const Tensor x = Tensor::from_vector<float>(Shape({3, 4, 6}), testing::random_floats(72, 4)).value_or_throw();
  for (const auto& [opset, affine] : {std::pair<std::int64_t, bool>{14, true}, {18, false}}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    const OnnxBuilder b = written_out_layer_norm(opset, affine);
    const Model original = imported(b);
    Model m = original;
    auto r = optimize(m, only("layernorm-fusion")).value_or_throw();
    EXPECT_TRUE(verify(m).is_ok());
    ASSERT_EQ(m.graph.nodes.size(), 1u) << to_text(m);
    EXPECT_EQ(m.graph.nodes[0].op_type, "LayerNormalization");
    EXPECT_EQ(m.graph.nodes[0].domain, opset >= 17 ? "" : kTesseraDomain);
    EXPECT_EQ(r[0].changes, affine ? 9 : 7);
    Model expanded = m;
    ASSERT_TRUE(expand_fused_ops(expanded).is_ok());
    // tessera's LayerNormalization is written out; ai.onnx's (opset 17 on) stays.
    EXPECT_EQ(count_op(expanded, "ReduceMean"), opset < 17 ? 2 : 0);
    if (opset <= 17) expect_valid_onnx(expanded);  // Debian's checker knows opsets up to 17
    const std::vector<std::vector<float>> y = {output_at_level0(original, x), output_at_level0(m, x), output_at_level0(expanded, x)};
    for (std::size_t i = 0; i < y[0].size(); ++i) {
      EXPECT_NEAR(y[1][i], y[0][i], 2e-6f * (1 + std::fabs(y[0][i]))) << i;
      EXPECT_NEAR(y[2][i], y[0][i], 1e-6f * (1 + std::fabs(y[0][i]))) << i;  // the original chain (Mul for Pow)
    }
  }
}

TEST(Passes, LayerNormFusionLeavesOtherReductions) {
  // The mean over a middle axis, and a centred value read a third time, are not layer norms.
  for (const bool middle : {true, false}) {
    OnnxBuilder b(14);
    b.input("x", {"2", "4", "6"});
    b.floats("eps", {}, {1e-5f});
    OnnxBuilder::attr(b.node("ReduceMean", {"x"}, {"m"}), "axes", Dims{middle ? 1 : -1});
    b.node("Sub", {"x", "m"}, {"d"});
    b.node("Mul", {"d", "d"}, {"p"});
    OnnxBuilder::attr(b.node("ReduceMean", {"p"}, {"v"}), "axes", Dims{middle ? 1 : -1});
    b.node("Add", {"v", "eps"}, {"e"});
    b.node("Sqrt", {"e"}, {"s"});
    b.node("Div", {"d", "s"}, {"y"});
    b.output("y");
    if (!middle) {
      b.node("Neg", {"d"}, {"extra"});
      b.output("extra");
    }
    Model m = imported(b);
    optimize(m, only("layernorm-fusion")).value_or_throw();
    EXPECT_EQ(count_op(m, "LayerNormalization"), 0);
  }
}

TEST(Passes, OptionsLevelsNamesAndDumps) {
  OnnxBuilder b;
  b.input("x", {"4"});
  b.node("Identity", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"y"});
  b.output("y");
  Model m = imported(b);
  OptimizeOptions none;
  none.level = 0;
  EXPECT_TRUE(optimize(m, none).value_or_throw().empty());
  EXPECT_EQ(m.graph.nodes.size(), 2u);
  OptimizeOptions bad;
  bad.disabled = {"no-such-pass"};
  const auto e = optimize(m, bad);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("no pass is named 'no-such-pass'"), std::string::npos);
  EXPECT_EQ(m.graph.nodes.size(), 2u);  // untouched by the failed call
  OptimizeOptions level;
  level.level = 4;
  EXPECT_FALSE(optimize(m, level).is_ok());
  testing::TempDir dir;
  OptimizeOptions dumped;
  dumped.dump_dir = dir.path() / "dumps";
  optimize(m, dumped).value_or_throw();
  EXPECT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(dumped.dump_dir / "02-identity-before.txt"));
  EXPECT_TRUE(std::filesystem::exists(dumped.dump_dir / "02-identity-after.txt"));
  EXPECT_FALSE(std::filesystem::exists(dumped.dump_dir / "01-dead-code-before.txt"));  // changed nothing
}

// ---- layout ---------------------------------------------------------------------------------

OptimizeOptions with_layout(bool channels_last) {
  OptimizeOptions o;
  o.evaluate = &exec::evaluate_node;
  o.conv_layout = [channels_last](const Graph&, const Node&) { return LayoutAdvice{channels_last, channels_last ? "test: yes" : "test: no"}; };
  return o;
}

int count_channels_last(const Model& m, const std::string& op) {
  int n = 0;
  for (const Node& node : m.graph.nodes) n += node.op_type == op && node.domain == kTesseraDomain && node.attrs.count("channels_last");
  return n;
}

// A small CNN over x [N, 3, 9, 9]: a strided conv + Relu, a ceil-mode MaxPool, a depthwise
// conv with a residual, PRelu and a per-channel Mul (constant operands of rank 3 and 4), a 1x1
// conv concatenated with its input, an AveragePool, a global pool, Flatten; `m` is also a
// graph output from the middle of the region.
OnnxBuilder layout_cnn() {
  OnnxBuilder b(17);
  b.input("x", {"N", "3", "9", "9"});
  b.floats("w1", {8, 3, 3, 3}, testing::random_floats(216, 11));
  b.floats("b1", {8}, testing::random_floats(8, 12));
  b.floats("w2", {8, 1, 3, 3}, testing::random_floats(72, 13));
  b.floats("w3", {4, 8, 1, 1}, testing::random_floats(32, 14));
  b.floats("slope", {8, 1, 1}, testing::random_floats(8, 15));
  b.floats("scale", {1, 8, 1, 1}, testing::random_floats(8, 16));
  auto* c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"});
  OnnxBuilder::attr(c1, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"});
  auto* p1 = b.node("MaxPool", {"r1"}, {"p1"});
  OnnxBuilder::attr(p1, "kernel_shape", {2, 2});
  OnnxBuilder::attr(p1, "strides", {2, 2});
  OnnxBuilder::attr(p1, "ceil_mode", std::int64_t{1});
  auto* c2 = b.node("Conv", {"p1", "w2"}, {"c2"});
  OnnxBuilder::attr(c2, "pads", {1, 1, 1, 1});
  OnnxBuilder::attr(c2, "group", std::int64_t{8});
  b.node("Add", {"c2", "p1"}, {"a"});
  b.node("PRelu", {"a", "slope"}, {"pr"});
  b.node("Mul", {"pr", "scale"}, {"m"});
  b.node("Conv", {"m", "w3"}, {"c3"});
  OnnxBuilder::attr(b.node("Concat", {"c3", "m"}, {"cat"}), "axis", std::int64_t{-3});
  auto* ap = b.node("AveragePool", {"cat"}, {"ap"});
  OnnxBuilder::attr(ap, "kernel_shape", {3, 3});
  OnnxBuilder::attr(ap, "pads", {1, 1, 1, 1});
  b.node("GlobalAveragePool", {"ap"}, {"g"});
  b.node("Flatten", {"g"}, {"y"});
  b.output("y");
  b.output("m");
  return b;
}

// Outputs of model m (no further passes) on x.
std::vector<std::vector<float>> outputs_at_level0(const Model& m, const Tensor& x) {
  exec::SessionOptions o;
  o.opt_level = 0;
  exec::Session s = exec::Session::create(m, o).value_or_throw();
  std::vector<std::vector<float>> r;
  for (const auto& t : s.run({{"x", x}}).value_or_throw()) r.push_back(t.tensor.to_vector<float>());
  return r;
}

void expect_close(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].size(), b[k].size());
    float scale = 0;
    for (float v : a[k]) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < a[k].size(); ++i) EXPECT_NEAR(a[k][i], b[k][i], 1e-5f * scale) << "output " << k << " element " << i;
  }
}

TEST(Passes, LayoutMakesTheConvolutionalBodyOneChannelsLastRegion) {
  const OnnxBuilder b = layout_cnn();
  const Model original = imported(b);
  Model m = original;
  const auto reports = optimize(m, with_layout(true)).value_or_throw();
  // Transposes: x in; g out to Flatten; m out as a graph output. Nothing else crosses layouts.
  EXPECT_EQ(count_op(m, "Transpose"), 3) << to_text(m);
  EXPECT_EQ(count_channels_last(m, "FusedConv"), 3);
  EXPECT_EQ(count_channels_last(m, "MaxPool") + count_channels_last(m, "AveragePool") + count_channels_last(m, "GlobalAveragePool"), 3);
  for (const Node& n : m.graph.nodes)
    if (n.op_type == "Concat") {
      EXPECT_EQ(n.attrs.at("axis").i, 3);
    }
  const auto layout = std::find_if(reports.begin(), reports.end(), [](const PassReport& r) { return r.pass == "layout"; });
  ASSERT_NE(layout, reports.end());
  EXPECT_EQ(layout->applied.size(), 3u);
  // The same numbers within rounding (other algorithms run channels-last), at a batch of 2.
  const Tensor x = Tensor::from_vector<float>(Shape({2, 3, 9, 9}), testing::random_floats(486, 17)).value_or_throw();
  testing::for_each_isa([&](Isa) { expect_close(outputs_at_level0(original, x), outputs_at_level0(m, x)); });
  // Expanded back to ai.onnx: checked ONNX computing the same bits as the channels-last model
  // (the same kernels run, between Transposes).
  Model portable = m;
  ASSERT_TRUE(expand_fused_ops(portable).is_ok());
  for (const Node& n : portable.graph.nodes) EXPECT_TRUE(n.domain.empty()) << n.op_type;
  expect_valid_onnx(portable);
  expect_close(outputs_at_level0(original, x), outputs_at_level0(portable, x));
}

TEST(Passes, LayoutKeepsChannelsFirstWhereTheAdvisorSaysSo) {
  const OnnxBuilder b = layout_cnn();
  Model m = imported(b);
  const auto reports = optimize(m, with_layout(false)).value_or_throw();
  EXPECT_EQ(count_op(m, "Transpose"), 0);
  for (const Node& n : m.graph.nodes) EXPECT_FALSE(n.attrs.count("channels_last")) << n.op_type;
  const auto layout = std::find_if(reports.begin(), reports.end(), [](const PassReport& r) { return r.pass == "layout"; });
  ASSERT_NE(layout, reports.end());
  ASSERT_EQ(layout->refused.size(), 3u);
  EXPECT_NE(layout->refused[0].find("stays channels-first: test: no"), std::string::npos) << layout->refused[0];
  // Without an advisor (the graph layer alone cannot tell) the pass changes nothing.
  Model plain = imported(b);
  OptimizeOptions o;
  o.evaluate = &exec::evaluate_node;
  optimize(plain, o).value_or_throw();
  EXPECT_EQ(count_op(plain, "Transpose"), 0);
}

// Where the region meets a reader it cannot take in (an Add with a non-constant channels-first
// operand, a Reshape), the value is made channels-first once, however many such readers.
TEST(Passes, LayoutTransposesOnceWhereTheRegionMeetsChannelsFirstReaders) {
  OnnxBuilder b(17);
  b.input("x", {"1", "4", "6", "6"});
  b.input("z", {"1", "4", "6", "6"});
  b.floats("w", {4, 4, 3, 3}, testing::random_floats(144, 21));
  b.ints("shape", {1, -1});
  OnnxBuilder::attr(b.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.node("Add", {"c", "z"}, {"a"});        // z has no channels-last twin: the Add stays channels-first
  b.node("Reshape", {"c", "shape"}, {"r"});  // reads c channels-first too: the same Transpose
  b.node("Sigmoid", {"c"}, {"s"});         // follows c into the region
  OnnxBuilder::attr(b.node("Conv", {"s", "w"}, {"c2"}), "pads", {1, 1, 1, 1});
  b.output("a");
  b.output("r");
  b.output("c2");
  const Model original = imported(b);
  Model m = original;
  optimize(m, with_layout(true)).value_or_throw();
  // x in; c out (once, for the Add and the Reshape); c2 out.
  EXPECT_EQ(count_op(m, "Transpose"), 3) << to_text(m);
  EXPECT_EQ(count_channels_last(m, "FusedConv"), 2);
  const Tensor x = Tensor::from_vector<float>(Shape({1, 4, 6, 6}), testing::random_floats(144, 22)).value_or_throw();
  const Tensor z = Tensor::from_vector<float>(Shape({1, 4, 6, 6}), testing::random_floats(144, 23)).value_or_throw();
  std::vector<std::vector<float>> got[2];
  for (int k = 0; k < 2; ++k) {
    exec::SessionOptions o;
    o.opt_level = 0;
    exec::Session s = exec::Session::create(k == 0 ? original : m, o).value_or_throw();
    for (const auto& t : s.run({{"x", x}, {"z", z}}).value_or_throw()) got[k].push_back(t.tensor.to_vector<float>());
  }
  expect_close(got[0], got[1]);
}

// An inference-mode BatchNormalization (not folded: a batch norm after a residual Add, as
// pre-activation networks place it) follows the region as tessera's channels-last one; the
// same outputs, and the portable form is checked ONNX with it back as ai.onnx between
// Transposes.
TEST(Passes, LayoutTakesBatchNormIntoTheRegion) {
  OnnxBuilder b(17);
  b.input("x", {"2", "4", "6", "6"});
  b.floats("w", {4, 4, 3, 3}, testing::random_floats(144, 41));
  b.floats("scale", {4}, {1.5f, 0.5f, -1.0f, 2.0f});
  b.floats("bias", {4}, {0.1f, 0.2f, -0.3f, 0.0f});
  b.floats("mean", {4}, {0.05f, -0.1f, 0.2f, 0.0f});
  b.floats("var", {4}, {1.0f, 0.5f, 2.0f, 0.25f});
  OnnxBuilder::attr(b.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.node("Add", {"c", "c"}, {"a"});
  b.node("BatchNormalization", {"a", "scale", "bias", "mean", "var"}, {"n"});
  b.node("Relu", {"n"}, {"r"});
  b.node("GlobalAveragePool", {"r"}, {"g"});
  b.output("g");
  const Model original = imported(b);
  Model m = original;
  optimize(m, with_layout(true)).value_or_throw();
  EXPECT_EQ(count_channels_last(m, "BatchNormalization"), 1) << to_text(m);
  EXPECT_EQ(count_op(m, "Transpose"), 2) << to_text(m);  // x in, g out
  const Tensor x = Tensor::from_vector<float>(Shape({2, 4, 6, 6}), testing::random_floats(288, 42)).value_or_throw();
  expect_close(outputs_at_level0(original, x), outputs_at_level0(m, x));
  Model portable = m;
  ASSERT_TRUE(expand_fused_ops(portable).is_ok());
  for (const Node& n : portable.graph.nodes) EXPECT_TRUE(n.domain.empty()) << n.op_type;
  expect_valid_onnx(portable);
  expect_close(outputs_at_level0(original, x), outputs_at_level0(portable, x));
}

}  // namespace
}  // namespace tessera::graph
