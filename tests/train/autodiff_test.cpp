// Reverse-mode differentiation (tessera/train.hpp): every differentiated op's gradient checked
// by central finite differences of the loss, on small models that combine them (a classifier
// MLP, a CNN with both pools, broadcasting elementwise ops and reductions), with the gradient
// model run by a session (and again after the level-2 passes); the errors for what it cannot
// differentiate; and SGD on the gradients lowering a loss.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/session.hpp>
#include <tessera/train.hpp>

#include "onnx_builder.hpp"
#include "test_util.hpp"

namespace tessera::train {
namespace {

using Dims = std::vector<std::int64_t>;
using testing::OnnxBuilder;

Tensor f32(const Dims& dims, const std::vector<float>& v) { return Tensor::from_vector<float>(Shape(dims), v).value_or_throw(); }

graph::Model typed(const OnnxBuilder& b) {
  graph::Model m = b.import().value_or_throw();
  EXPECT_TRUE(graph::infer_types(m).is_ok());
  return m;
}

// Checks d loss / d p for every parameter p (each element, central differences with step 1e-3
// in a session of the gradient model itself: its parameters are inputs) at opt levels 0 and 2.
void check_gradients(const OnnxBuilder& b, const std::vector<std::string>& params, const std::vector<exec::NamedTensor>& inputs) {
  const graph::Model g = differentiate(typed(b), "loss", params).value_or_throw();
  ASSERT_EQ(g.graph.outputs.size(), params.size() + 1);
  for (int level : {0, 2}) {
    SCOPED_TRACE("opt level " + std::to_string(level));
    exec::SessionOptions o;
    o.opt_level = level;
    exec::Session s = exec::Session::create(g, o).value_or_throw();
    const auto out = s.run(inputs).value_or_throw();
    std::map<std::string, Tensor> values;
    for (const exec::IoInfo& io : s.inputs())
      if (io.has_default) {
        const graph::ValueId v = g.graph.find(io.name);
        values[io.name] = exec::tensor_from_constant(*g.graph.values[static_cast<std::size_t>(v)].constant, io.name).value_or_throw();
      }
    const auto loss_with = [&](const std::string& name, const Tensor& t) {
      std::vector<exec::NamedTensor> in = inputs;
      in.push_back({name, t});
      return s.run(in).value_or_throw()[0].tensor.to_vector<float>()[0];
    };
    for (std::size_t k = 0; k < params.size(); ++k) {
      SCOPED_TRACE("d loss / d " + params[k]);
      ASSERT_EQ(out[k + 1].name, params[k] + "_grad");
      const std::vector<float> grad = out[k + 1].tensor.to_vector<float>();
      const Tensor& p = values.at(params[k]);
      ASSERT_EQ(out[k + 1].tensor.shape().dims(), p.shape().dims());
      std::vector<float> base = p.to_vector<float>();
      float scale = 0;
      for (float x : grad) scale = std::max(scale, std::fabs(x));
      for (std::size_t i = 0; i < base.size(); ++i) {
        const float eps = 1e-3f;
        std::vector<float> up = base, down = base;
        up[i] += eps;
        down[i] -= eps;
        const float fd = (loss_with(params[k], f32(p.shape().dims(), up)) - loss_with(params[k], f32(p.shape().dims(), down))) / (2 * eps);
        EXPECT_NEAR(grad[i], fd, 3e-3f + 2e-2f * std::max(std::fabs(fd), 0.1f * scale)) << "element " << i;
      }
    }
  }
}

// x [4, 6] -> Gemm(W1, b1, transB) -> Relu -> MatMul(W2) -> Add(b2) -> SoftmaxCrossEntropyLoss.
OnnxBuilder mlp() {
  OnnxBuilder b(17);
  b.input("x", {"4", "6"});
  b.input("labels", {"4"}, onnx::TensorProto::INT64);
  b.floats("W1", {5, 6}, testing::random_floats(30, 1));
  b.floats("b1", {5}, testing::random_floats(5, 2));
  b.floats("W2", {5, 3}, testing::random_floats(15, 3));
  b.floats("b2", {3}, testing::random_floats(3, 4));
  OnnxBuilder::attr(b.node("Gemm", {"x", "W1", "b1"}, {"h"}), "transB", std::int64_t{1});
  b.node("Relu", {"h"}, {"r"});
  b.node("MatMul", {"r", "W2"}, {"m"});
  b.node("Add", {"m", "b2"}, {"scores"});
  b.node("SoftmaxCrossEntropyLoss", {"scores", "labels"}, {"loss"});
  b.output("loss");
  return b;
}

Tensor labels(const std::vector<std::int64_t>& v) { return Tensor::from_vector<std::int64_t>(Shape({static_cast<std::int64_t>(v.size())}), v).value_or_throw(); }

TEST(Autodiff, MlpClassifierMatchesFiniteDifferences) {
  check_gradients(mlp(), {"W1", "b1", "W2", "b2"}, {{"x", f32({4, 6}, testing::random_floats(24, 5))}, {"labels", labels({0, 2, 1, 2})}});
}

// A CNN: Conv (bias, pads) -> LeakyRelu -> MaxPool -> Conv (2 groups) -> Sigmoid -> AveragePool
// -> GlobalAveragePool -> Flatten -> Gemm -> Sub(target) -> squared -> ReduceMean.
TEST(Autodiff, CnnMatchesFiniteDifferences) {
  OnnxBuilder b(17);
  b.input("x", {"2", "2", "6", "6"});
  b.input("target", {"2", "3"});
  b.floats("W1", {4, 2, 3, 3}, testing::random_floats(72, 11));
  b.floats("b1", {4}, testing::random_floats(4, 12));
  b.floats("W2", {4, 2, 2, 2}, testing::random_floats(32, 13));
  b.floats("W3", {3, 4}, testing::random_floats(12, 14));
  OnnxBuilder::attr(b.node("Conv", {"x", "W1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  OnnxBuilder::attr_float(b.node("LeakyRelu", {"c1"}, {"l1"}), "alpha", 0.1f);
  auto* mp = b.node("MaxPool", {"l1"}, {"p1"});
  OnnxBuilder::attr(mp, "kernel_shape", {2, 2});
  OnnxBuilder::attr(mp, "strides", {2, 2});
  auto* c2 = b.node("Conv", {"p1", "W2"}, {"c2"});
  OnnxBuilder::attr(c2, "group", std::int64_t{2});
  OnnxBuilder::attr(c2, "pads", {1, 1, 0, 0});
  b.node("Sigmoid", {"c2"}, {"s2"});
  auto* ap = b.node("AveragePool", {"s2"}, {"p2"});
  OnnxBuilder::attr(ap, "kernel_shape", {2, 2});
  b.node("GlobalAveragePool", {"p2"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  OnnxBuilder::attr(b.node("Gemm", {"f", "W3"}, {"y"}), "transB", std::int64_t{1});
  b.node("Sub", {"y", "target"}, {"d"});
  b.node("Mul", {"d", "d"}, {"sq"});
  OnnxBuilder::attr(b.node("ReduceMean", {"sq"}, {"loss"}), "keepdims", std::int64_t{0});
  b.output("loss");
  std::vector<float> x = testing::random_floats(144, 15);
  for (float& v : x) v *= 3;  // spread the pooled windows apart
  check_gradients(b, {"W1", "b1", "W2", "W3"}, {{"x", f32({2, 2, 6, 6}, x)}, {"target", f32({2, 3}, testing::random_floats(6, 16))}});
}

// Batch normalisation in training mode (the batch's statistics: every sample's gradient reaches
// every other's) and Dropout in training mode (a seeded mask, the same on every run, so finite
// differences see one function): Conv -> BatchNormalization -> Relu -> Dropout -> Flatten ->
// Gemm -> SoftmaxCrossEntropyLoss.
TEST(Autodiff, BatchNormAndDropoutInTrainingModeMatchFiniteDifferences) {
  OnnxBuilder b(17);
  b.input("x", {"3", "2", "4", "4"});
  b.input("labels", {"3"}, onnx::TensorProto::INT64);
  b.floats("W", {3, 2, 3, 3}, testing::random_floats(54, 21));
  b.floats("scale", {3}, {1.2f, 0.7f, -0.9f});
  b.floats("bias", {3}, {0.1f, -0.2f, 0.3f});
  b.floats("mean", {3}, {0, 0, 0});
  b.floats("var", {3}, {1, 1, 1});
  b.floats("W2", {4, 12}, testing::random_floats(48, 22));
  b.floats("ratio", {}, {0.25f});
  auto* mode = b.m.mutable_graph()->add_initializer();
  mode->set_name("train");
  mode->set_data_type(onnx::TensorProto::BOOL);
  mode->add_int32_data(1);
  OnnxBuilder::attr(b.node("Conv", {"x", "W"}, {"c"}), "pads", {1, 1, 1, 1});
  OnnxBuilder::attr(b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"n"}), "training_mode", std::int64_t{1});
  b.node("Relu", {"n"}, {"r"});
  OnnxBuilder::attr(b.node("Dropout", {"r", "ratio", "train"}, {"d"}), "seed", std::int64_t{7});
  auto* pool = b.node("AveragePool", {"d"}, {"p"});
  OnnxBuilder::attr(pool, "kernel_shape", {2, 2});
  OnnxBuilder::attr(pool, "strides", {2, 2});
  b.node("Flatten", {"p"}, {"f"});
  OnnxBuilder::attr(b.node("Gemm", {"f", "W2"}, {"scores"}), "transB", std::int64_t{1});
  b.node("SoftmaxCrossEntropyLoss", {"scores", "labels"}, {"loss"});
  b.output("loss");
  std::vector<float> x = testing::random_floats(96, 23);
  check_gradients(b, {"W", "scale", "bias", "W2"}, {{"x", f32({3, 2, 4, 4}, x)}, {"labels", labels({0, 3, 1})}});
  // Inference mode has no batch statistics to differentiate through here: refused by name.
  b.m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->set_i(0);
  const Result<graph::Model> r = differentiate(typed(b), "loss", {"W"});
  EXPECT_NE(r.status().message().find("BatchNormalization in inference mode"), std::string::npos) << r.status().message();
}

// Split, Softmax, Log, LogSoftmax, Exp, Concat, Pad, Slice, LayerNormalization, Pow, Abs,
// Reciprocal and Sqrt in one model, against finite differences.
TEST(Autodiff, SoftmaxDataMovementAndLayerNormMatchFiniteDifferences) {
  OnnxBuilder b(17);
  b.input("x", {"3", "4"});
  b.floats("W", {6, 4}, testing::random_floats(24, 31));
  b.floats("scale", {6}, {1.1f, 0.9f, -0.8f, 1.3f, 0.7f, 1.0f});
  b.floats("bias", {6}, testing::random_floats(6, 32));
  b.ints("split", {2, 4});
  b.ints("pads", {1, 0, 0, 2});
  b.ints("starts", {1, 1});
  b.ints("ends", {4, 7});
  b.ints("axes", {0, 1});
  b.floats("k03", {}, {0.3f});
  b.floats("three", {}, {3.0f});
  b.floats("one", {}, {1.0f});
  b.floats("half", {}, {0.5f});
  OnnxBuilder::attr(b.node("Gemm", {"x", "W"}, {"h"}), "transB", std::int64_t{1});
  OnnxBuilder::attr(b.node("Split", {"h", "split"}, {"a", "bb"}), "axis", std::int64_t{1});
  OnnxBuilder::attr(b.node("Softmax", {"a"}, {"sa"}), "axis", std::int64_t{1});
  b.node("Log", {"sa"}, {"la"});
  OnnxBuilder::attr(b.node("LogSoftmax", {"bb"}, {"lb"}), "axis", std::int64_t{-1});
  b.node("Mul", {"bb", "k03"}, {"bs"});
  b.node("Exp", {"bs"}, {"e"});
  OnnxBuilder::attr(b.node("Concat", {"la", "lb"}, {"c"}), "axis", std::int64_t{1});
  b.node("Pad", {"c", "pads"}, {"p"});
  b.node("Slice", {"p", "starts", "ends", "axes"}, {"s"});
  OnnxBuilder::attr(b.node("LayerNormalization", {"s", "scale", "bias"}, {"ln"}), "axis", std::int64_t{-1});
  b.node("Pow", {"ln", "three"}, {"q"});
  b.node("Abs", {"q"}, {"aq"});
  b.node("Add", {"aq", "one"}, {"aq1"});
  b.node("Reciprocal", {"aq1"}, {"r"});
  b.node("Mul", {"r", "r"}, {"rr"});
  b.node("Add", {"rr", "half"}, {"rh"});
  b.node("Sqrt", {"rh"}, {"t"});
  OnnxBuilder::attr(b.node("ReduceSum", {"t"}, {"st"}), "keepdims", std::int64_t{0});
  OnnxBuilder::attr(b.node("ReduceSum", {"e"}, {"se"}), "keepdims", std::int64_t{0});
  b.node("Add", {"st", "se"}, {"loss"});
  b.output("loss");
  check_gradients(b, {"W", "scale", "bias"}, {{"x", f32({3, 4}, testing::random_floats(12, 33))}});
}

// LSTM (bidirectional, peepholes, an initial state), GRU (batch-major layout, linear before
// reset) and RNN (reverse): the gradients of W, R, B, P and the initial state from Y and Y_h
// together, against finite differences.
TEST(Autodiff, RecurrentNetworksMatchFiniteDifferences) {
  struct Case {
    const char* op;
    int gates;
    const char* direction;
    std::int64_t layout;
  };
  for (const Case& k : {Case{"LSTM", 4, "bidirectional", 0}, Case{"GRU", 3, "forward", 1}, Case{"RNN", 1, "reverse", 0}}) {
    SCOPED_TRACE(k.op);
    const std::int64_t seq = 3, batch = 2, in = 3, hidden = 4, dirs = std::string(k.direction) == "bidirectional" ? 2 : 1, gh = k.gates * hidden;
    OnnxBuilder b(17);
    const std::vector<std::string> xdims = k.layout ? std::vector<std::string>{"2", "3", "3"} : std::vector<std::string>{"3", "2", "3"};
    b.input("x", xdims);
    b.floats("W", {dirs, gh, in}, testing::random_floats(static_cast<std::size_t>(dirs * gh * in), 41));
    b.floats("R", {dirs, gh, hidden}, testing::random_floats(static_cast<std::size_t>(dirs * gh * hidden), 42));
    b.floats("B", {dirs, 2 * gh}, testing::random_floats(static_cast<std::size_t>(dirs * 2 * gh), 43));
    const std::vector<std::int64_t> hdims = k.layout ? std::vector<std::int64_t>{batch, dirs, hidden} : std::vector<std::int64_t>{dirs, batch, hidden};
    b.floats("h0", hdims, testing::random_floats(static_cast<std::size_t>(dirs * batch * hidden), 44));
    b.floats("P", {dirs, 3 * hidden}, testing::random_floats(static_cast<std::size_t>(dirs * 3 * hidden), 45));
    b.floats("k", {}, {0.7f});
    std::vector<std::string> ins = {"x", "W", "R", "B", "", "h0"};
    if (std::string(k.op) == "LSTM") ins.insert(ins.end(), {"", "P"});
    auto* node = b.node(k.op, ins, {"Y", "Y_h"});
    OnnxBuilder::attr(node, "hidden_size", hidden);
    OnnxBuilder::attr(node, "layout", k.layout);
    OnnxBuilder::attr_string(node, "direction", k.direction);
    if (std::string(k.op) == "GRU") OnnxBuilder::attr(node, "linear_before_reset", std::int64_t{1});
    b.node("Mul", {"Y", "k"}, {"Yk"});
    b.node("Tanh", {"Yk"}, {"Yt"});
    OnnxBuilder::attr(b.node("ReduceSum", {"Yt"}, {"sy"}), "keepdims", std::int64_t{0});
    b.node("Mul", {"Y_h", "Y_h"}, {"hh"});
    OnnxBuilder::attr(b.node("ReduceSum", {"hh"}, {"sh"}), "keepdims", std::int64_t{0});
    b.node("Add", {"sy", "sh"}, {"loss"});
    b.output("loss");
    std::vector<std::string> params = {"W", "R", "B", "h0"};
    if (std::string(k.op) == "LSTM") params.push_back("P");
    std::vector<std::int64_t> x_dims;
    for (const std::string& d : xdims) x_dims.push_back(std::stoll(d));
    check_gradients(b, params, {{"x", f32(x_dims, testing::random_floats(static_cast<std::size_t>(seq * batch * in), 46))}});
  }
}

// An embedding (Gather with repeated indices), InstanceNormalization, ReduceMax and ReduceMin,
// LogSoftmax and NegativeLogLikelihoodLoss, against finite differences.
TEST(Autodiff, EmbeddingsNormsExtremesAndNllMatchFiniteDifferences) {
  OnnxBuilder b(17);
  b.input("ids", {"2", "3"}, onnx::TensorProto::INT64);
  b.input("target", {"2"}, onnx::TensorProto::INT64);
  b.floats("E", {10, 4}, testing::random_floats(40, 51));
  b.floats("scale", {3}, {1.2f, -0.7f, 0.9f});
  b.floats("bias", {3}, {0.1f, 0.2f, -0.3f});
  b.ints("last", {2});
  b.floats("tenth", {}, {0.1f});
  OnnxBuilder::attr(b.node("Gather", {"E", "ids"}, {"e"}), "axis", std::int64_t{0});
  b.node("InstanceNormalization", {"e", "scale", "bias"}, {"n"});
  OnnxBuilder::attr(b.node("ReduceMax", {"n"}, {"mx"}), "axes", std::vector<std::int64_t>{2});
  OnnxBuilder::attr(b.m.mutable_graph()->mutable_node(2), "keepdims", std::int64_t{0});
  OnnxBuilder::attr(b.node("LogSoftmax", {"mx"}, {"ls"}), "axis", std::int64_t{1});
  b.node("NegativeLogLikelihoodLoss", {"ls", "target"}, {"nll"});
  OnnxBuilder::attr(b.node("ReduceMin", {"n"}, {"mn"}), "axes", std::vector<std::int64_t>{2});
  OnnxBuilder::attr(b.node("ReduceSum", {"mn"}, {"smn"}), "keepdims", std::int64_t{0});
  b.node("Mul", {"smn", "tenth"}, {"part"});
  b.node("Add", {"nll", "part"}, {"loss"});
  b.output("loss");
  const Tensor ids = Tensor::from_vector<std::int64_t>(Shape({2, 3}), {1, 4, 1, 7, 4, 0}).value_or_throw();
  check_gradients(b, {"E", "scale", "bias"}, {{"ids", ids}, {"target", labels({2, 0})}});
}

// The class losses with ignored labels: SoftmaxCrossEntropyLoss with ignore_index 2 (the mean
// over the labels counted) and LogSoftmax -> NegativeLogLikelihoodLoss with ignore_index -1
// (ONNX's mean over every sample, the ignored ones included), against finite differences: the
// gradient nodes divide as the forward does.
TEST(Autodiff, IgnoredLabelsDivideTheMeanAsTheForwardDoes) {
  for (const std::int64_t ignore : {std::int64_t{2}, std::int64_t{-1}}) {
    OnnxBuilder b(17);
    b.input("x", {"5", "3"});
    b.input("labels", {"5"}, onnx::TensorProto::INT64);
    b.floats("W", {4, 3}, testing::random_floats(12, 61));
    OnnxBuilder::attr(b.node("Gemm", {"x", "W"}, {"scores"}), "transB", std::int64_t{1});
    OnnxBuilder::attr(b.node("SoftmaxCrossEntropyLoss", {"scores", "labels"}, {"sce"}), "ignore_index", ignore);
    OnnxBuilder::attr(b.node("LogSoftmax", {"scores"}, {"ls"}), "axis", std::int64_t{1});
    OnnxBuilder::attr(b.node("NegativeLogLikelihoodLoss", {"ls", "labels"}, {"nll"}), "ignore_index", ignore);
    b.node("Add", {"sce", "nll"}, {"loss"});
    b.output("loss");
    SCOPED_TRACE("ignore_index " + std::to_string(ignore));
    check_gradients(b, {"W"}, {{"x", f32({5, 3}, testing::random_floats(15, 62))}, {"labels", labels({0, ignore, 3, ignore, 1})}});
  }
}

// Broadcasting: Mul by a row, Div by a column, Tanh, Sub of a scalar, a transposed MatMul of a
// batch with a shared matrix, ReduceSum over one axis, then over all.
TEST(Autodiff, BroadcastingAndReductionsMatchFiniteDifferences) {
  OnnxBuilder b(17);
  b.input("x", {"2", "3", "4"});
  b.floats("row", {4}, testing::random_floats(4, 21));
  b.floats("col", {3, 1}, {1.5f, 2.0f, -1.7f});
  b.floats("shift", {1}, {0.3f});
  b.floats("M", {4, 2}, testing::random_floats(8, 22));
  b.ints("ax1", {1});
  b.node("Mul", {"x", "row"}, {"a"});
  b.node("Div", {"a", "col"}, {"q"});
  b.node("Tanh", {"q"}, {"t"});
  b.node("Sub", {"t", "shift"}, {"u"});
  b.node("MatMul", {"u", "M"}, {"v"});                // [2, 3, 2]
  OnnxBuilder::attr(b.node("Transpose", {"v"}, {"vt"}), "perm", {0, 2, 1});
  b.node("Mul", {"vt", "vt"}, {"w"});
  OnnxBuilder::attr(b.node("ReduceSum", {"w", "ax1"}, {"r"}), "keepdims", std::int64_t{0});
  OnnxBuilder::attr(b.node("ReduceSum", {"r"}, {"loss"}), "keepdims", std::int64_t{0});
  b.output("loss");
  check_gradients(b, {"row", "col", "shift", "M"}, {{"x", f32({2, 3, 4}, testing::random_floats(24, 23))}});
}

// The layout pass takes a gradient model's convolutional body channels-last, the backward ops
// included (ConvGradData/Weight, BatchNormGrad, PoolGrad, ActivationGrad, the bias gradients'
// ReduceSum, Shape of a region's value): the loss and every gradient as without it, and the
// Transposes only at the region's borders.
TEST(Autodiff, GradientsRunChannelsLastInTheLayoutRegion) {
  OnnxBuilder b(17);
  b.input("x", {"3", "2", "8", "8"});
  b.input("labels", {"3"}, onnx::TensorProto::INT64);
  b.floats("W1", {4, 2, 3, 3}, testing::random_floats(72, 31));
  b.floats("b1", {4}, testing::random_floats(4, 32));
  b.floats("scale", {4}, {1.2f, 0.7f, -0.9f, 1.1f});
  b.floats("bias", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
  b.floats("mean", {4}, {0, 0, 0, 0});
  b.floats("var", {4}, {1, 1, 1, 1});
  b.floats("W2", {4, 2, 3, 3}, testing::random_floats(72, 33));
  b.floats("W3", {4, 4, 1, 1}, testing::random_floats(16, 34));
  b.floats("W4", {5, 4}, testing::random_floats(20, 35));
  OnnxBuilder::attr(b.node("Conv", {"x", "W1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  OnnxBuilder::attr(b.node("BatchNormalization", {"c1", "scale", "bias", "mean", "var"}, {"n1"}), "training_mode", std::int64_t{1});
  b.node("Relu", {"n1"}, {"r1"});
  auto* mp = b.node("MaxPool", {"r1"}, {"p1"});
  OnnxBuilder::attr(mp, "kernel_shape", {2, 2});
  OnnxBuilder::attr(mp, "strides", {2, 2});
  auto* c2 = b.node("Conv", {"p1", "W2"}, {"c2"});  // grouped, strided
  OnnxBuilder::attr(c2, "group", std::int64_t{2});
  OnnxBuilder::attr(c2, "strides", {2, 2});
  OnnxBuilder::attr(c2, "pads", {1, 1, 1, 1});
  OnnxBuilder::attr_float(b.node("LeakyRelu", {"c2"}, {"l2"}), "alpha", 0.1f);
  b.node("Conv", {"l2", "W3"}, {"c3"});
  b.node("Add", {"c3", "l2"}, {"a3"});
  b.node("GlobalAveragePool", {"a3"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  OnnxBuilder::attr(b.node("Gemm", {"f", "W4"}, {"scores"}), "transB", std::int64_t{1});
  b.node("SoftmaxCrossEntropyLoss", {"scores", "labels"}, {"loss"});
  b.output("loss");
  const graph::Model g = differentiate(typed(b), "loss", {"W1", "b1", "scale", "bias", "W2", "W3", "W4"}).value_or_throw();
  graph::Model cl = g;
  graph::OptimizeOptions o;
  o.evaluate = &exec::evaluate_node;
  o.conv_layout = [](const graph::Graph&, const graph::Node&) { return graph::LayoutAdvice{true, "test: yes"}; };
  graph::optimize(cl, o).value_or_throw();
  std::map<std::string, int> last;  // channels-last ops
  int transposes = 0;
  for (const graph::Node& n : cl.graph.nodes) {
    if (n.attrs.count("channels_last")) ++last[n.op_type];
    transposes += n.op_type == "Transpose";
  }
  EXPECT_EQ(last["FusedConv"], 3) << graph::to_text(cl);
  EXPECT_EQ(last["BatchNormalization"], 1);
  EXPECT_EQ(last["BatchNormGrad"], 1);
  EXPECT_EQ(last["ConvGradData"], 2);  // not the first convolution's: x needs no gradient
  EXPECT_EQ(last["ConvGradWeight"], 3);
  EXPECT_EQ(last["PoolGrad"], 2);  // the max pool's and the global pool's
  // x in, the pooled [3, 4, 1, 1] out to Flatten, its gradient back in.
  EXPECT_EQ(transposes, 3) << graph::to_text(cl);
  const std::vector<exec::NamedTensor> in = {{"x", f32({3, 2, 8, 8}, testing::random_floats(384, 36))}, {"labels", labels({0, 4, 2})}};
  exec::SessionOptions level0;
  level0.opt_level = 0;
  const auto want = exec::Session::create(g, level0).value_or_throw().run(in).value_or_throw();
  const auto got = exec::Session::create(cl, level0).value_or_throw().run(in).value_or_throw();
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE(want[k].name);
    ASSERT_EQ(got[k].tensor.shape().dims(), want[k].tensor.shape().dims());
    const std::vector<float> a = got[k].tensor.to_vector<float>(), e = want[k].tensor.to_vector<float>();
    float scale = 0;
    for (float v : e) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(a[i], e[i], 1e-5f * std::max(scale, 1.0f)) << "element " << i;
  }
}

TEST(Autodiff, GradientModelOutputsAndParameterInputs) {
  const graph::Model g = differentiate(typed(mlp()), "loss", {"W2", "b1"}).value_or_throw();
  std::vector<std::string> outs;
  for (graph::ValueId v : g.graph.outputs) outs.push_back(g.graph.values[static_cast<std::size_t>(v)].name);
  EXPECT_EQ(outs, (std::vector<std::string>{"loss", "W2_grad", "b1_grad"}));
  exec::Session s = exec::Session::create(g).value_or_throw();
  bool w2_input = false;
  for (const exec::IoInfo& io : s.inputs()) w2_input = w2_input || (io.name == "W2" && io.has_default);
  EXPECT_TRUE(w2_input);
  // A parameter the loss does not depend on has a zero gradient.
  OnnxBuilder b = mlp();
  b.floats("unused", {2}, {1, 2});
  const graph::Model h = differentiate(typed(b), "loss", {"unused"}).value_or_throw();
  exec::Session su = exec::Session::create(h).value_or_throw();
  const auto out = su.run({{"x", f32({4, 6}, testing::random_floats(24, 5))}, {"labels", labels({0, 1, 2, 0})}}).value_or_throw();
  EXPECT_EQ(out[1].tensor.to_vector<float>(), (std::vector<float>{0, 0}));
}

TEST(Autodiff, WhatCannotBeDifferentiatedIsAClearError) {
  const graph::Model m = typed(mlp());
  Result<graph::Model> r = differentiate(m, "nope", {"W1"});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("no value 'nope'"), std::string::npos) << r.status().message();
  r = differentiate(m, "loss", {"W9"});
  EXPECT_NE(r.status().message().find("no value 'W9'"), std::string::npos) << r.status().message();
  r = differentiate(m, "scores", {"W1"});  // not one element
  EXPECT_NE(r.status().message().find("one element"), std::string::npos) << r.status().message();
  r = differentiate(m, "loss", {"h"});  // computed, not a parameter
  EXPECT_NE(r.status().message().find("computed by a node"), std::string::npos) << r.status().message();
  OnnxBuilder b(17);
  b.input("x", {"3"});
  b.floats("w", {3}, {1, 2, 3});
  b.ints("ax", {0});
  b.node("Mul", {"x", "w"}, {"a"});
  b.node("Sin", {"a"}, {"s"});
  OnnxBuilder::attr(b.node("ReduceSum", {"s", "ax"}, {"loss"}), "keepdims", std::int64_t{0});
  b.output("loss");
  r = differentiate(typed(b), "loss", {"w"});
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("(Sin): the op Sin cannot be differentiated yet"), std::string::npos) << r.status().message();
  // A parameter read only inside an If's branch: refused, not a silent zero gradient.
  OnnxBuilder f(17);
  f.input("cond", {}, onnx::TensorProto::BOOL);
  f.input("x", {"3"});
  f.floats("w", {3}, {1, 2, 3});
  f.ints("ax", {0});
  auto* iff = f.node("If", {"cond"}, {"y"});
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = iff->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    OnnxBuilder::add_node(a->mutable_g(), "Mul", {"x", "w"}, {"t"});
    OnnxBuilder::type(a->mutable_g()->add_output(), "t", onnx::TensorProto::FLOAT, {"3"});
  }
  OnnxBuilder::attr(f.node("ReduceSum", {"y", "ax"}, {"loss"}), "keepdims", std::int64_t{0});
  f.output("loss", {});
  r = differentiate(typed(f), "loss", {"w"});
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("(If): control flow (subgraphs) cannot be differentiated yet"), std::string::npos) << r.status().message();
}

// An ONNX classifier made trainable: labels and a loss added (on the logits when the output is
// a Softmax's), the parameters all f32 initializers but batch norm's running statistics; what
// is not a classifier is refused by name.
TEST(Autodiff, OnnxClassifiersGetALossAndParameters) {
  OnnxBuilder b(17);
  b.input("x", {"N", "2", "4", "4"});
  b.floats("W", {3, 2, 3, 3}, testing::random_floats(54, 1));
  b.floats("s", {3}, {1, 1, 1});
  b.floats("bb", {3}, {0, 0, 0});
  b.floats("rm", {3}, {0, 0, 0});
  b.floats("rv", {3}, {1, 1, 1});
  b.floats("W2", {5, 3}, testing::random_floats(15, 2));
  b.node("Conv", {"x", "W"}, {"c"});
  b.node("BatchNormalization", {"c", "s", "bb", "rm", "rv"}, {"n"});
  b.node("GlobalAveragePool", {"n"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  OnnxBuilder::attr(b.node("Gemm", {"f", "W2"}, {"logits"}), "transB", std::int64_t{1});
  b.node("Softmax", {"logits"}, {"probabilities"});
  b.output("probabilities");
  graph::Model m = with_classifier_loss(typed(b)).value_or_throw();
  std::vector<std::string> io;
  for (graph::ValueId v : m.graph.outputs) io.push_back(m.graph.values[static_cast<std::size_t>(v)].name);
  EXPECT_EQ(io, (std::vector<std::string>{"loss", "scores"}));
  EXPECT_EQ(m.graph.values[static_cast<std::size_t>(m.graph.find("scores"))].producer, 4);  // the Gemm: the loss takes the logits
  EXPECT_NE(m.graph.find("images"), graph::kNoValue);
  EXPECT_NE(m.graph.find("labels"), graph::kNoValue);
  EXPECT_EQ(trainable_parameters(m), (std::vector<std::string>{"W", "s", "bb", "W2"}));
  EXPECT_TRUE(with_classifier_loss(m).is_ok());  // already trainable: unchanged
  // Two data inputs: not a classifier.
  OnnxBuilder two(17);
  two.input("a", {"N", "3"});
  two.input("b", {"N", "3"});
  two.node("Add", {"a", "b"}, {"y"});
  two.output("y");
  EXPECT_NE(with_classifier_loss(typed(two)).status().message().find("is not a classifier with one f32 input"), std::string::npos);
  // A name the loss needs is taken.
  OnnxBuilder clash(17);
  clash.input("x", {"N", "3"});
  clash.floats("labels", {3, 2}, testing::random_floats(6, 3));
  clash.node("MatMul", {"x", "labels"}, {"y"});
  clash.output("y");
  EXPECT_NE(with_classifier_loss(typed(clash)).status().message().find("already has a value named 'labels'"), std::string::npos);
}

// Plain SGD with the gradient model: the MLP's loss on a fixed batch falls.
TEST(Autodiff, SgdStepsLowerTheLoss) {
  const std::vector<std::string> params = {"W1", "b1", "W2", "b2"};
  const graph::Model g = differentiate(typed(mlp()), "loss", params).value_or_throw();
  exec::Session s = exec::Session::create(g).value_or_throw();
  std::map<std::string, Tensor> p;
  for (const std::string& name : params) {
    const graph::ValueId v = g.graph.find(name);
    p[name] = exec::tensor_from_constant(*g.graph.values[static_cast<std::size_t>(v)].constant, name).value_or_throw();
  }
  const Tensor x = f32({4, 6}, testing::random_floats(24, 31));
  const Tensor y = labels({2, 0, 1, 1});
  float first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    std::vector<exec::NamedTensor> in = {{"x", x}, {"labels", y}};
    for (const auto& [name, t] : p) in.push_back({name, t});
    const auto out = s.run(in).value_or_throw();
    last = out[0].tensor.to_vector<float>()[0];
    if (step == 0) first = last;
    for (std::size_t k = 0; k < params.size(); ++k) {
      std::vector<float> w = p[params[k]].to_vector<float>();
      const std::vector<float> gr = out[k + 1].tensor.to_vector<float>();
      for (std::size_t i = 0; i < w.size(); ++i) w[i] -= 0.5f * gr[i];
      p[params[k]] = f32(p[params[k]].shape().dims(), w);
    }
  }
  EXPECT_LT(last, 0.2f * first) << "first " << first << ", last " << last;
}

}  // namespace
}  // namespace tessera::train
