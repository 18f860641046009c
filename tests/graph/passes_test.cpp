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

}  // namespace
}  // namespace tessera::graph
