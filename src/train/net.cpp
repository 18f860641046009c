// NetBuilder (train.hpp): a classifier's layers written straight into the graph IR.
#include <cmath>
#include <cstring>
#include <set>

#include "splitmix.hpp"
#include "tessera/train.hpp"

namespace tessera::train {
namespace {

using graph::Attribute;
using graph::Dim;
using graph::ElemType;
using graph::ValueId;

// A uniform float in [-1, 1) from the seed and the draw's number (splitmix64).
float uniform(std::uint64_t seed, std::uint64_t n) {
  const std::uint64_t x = detail::splitmix64_mix(seed * 0x9e3779b97f4a7c15ULL + n + 0x632be59bd9b4e019ULL);
  return static_cast<float>(static_cast<double>(x >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

}  // namespace

NetBuilder::NetBuilder(std::vector<std::int64_t> image_dims, std::uint64_t seed) : dims_(std::move(image_dims)), x_("images"), seed_(seed) {
  m_.ir_version = 8;
  m_.opsets[""] = 17;
  m_.producer_name = "tessera";
  graph::Graph& g = m_.graph;
  g.name = "net";
  std::vector<Dim> shape = {Dim{-1, "N"}};
  for (std::int64_t d : dims_) shape.push_back(Dim{d, {}});
  g.values.push_back(graph::Value{"images", {ElemType::kF32, shape}, -1, nullptr});
  g.values.push_back(graph::Value{"labels", {ElemType::kI64, std::vector<Dim>{Dim{-1, "N"}}}, -1, nullptr});
  g.inputs = {0, 1};
  if (dims_.empty() || dims_.size() > 3) error_ = "NetBuilder: samples must be images [C, H, W], sequences [T, F] or feature rows [F]";
}

std::string NetBuilder::add_initializer(const std::string& kind, const std::vector<std::int64_t>& dims, std::int64_t fan_in, float fill) {
  graph::Graph& g = m_.graph;
  const std::string name = "layer" + std::to_string(layer_) + "." + kind;
  auto c = std::make_shared<graph::Constant>();
  c->elem = ElemType::kF32;
  c->dims = dims;
  std::int64_t n = 1;
  std::vector<Dim> shape;
  for (std::int64_t d : dims) n *= d, shape.push_back(Dim{d, {}});
  std::vector<float> v(static_cast<std::size_t>(n), fill);
  const float bound = std::sqrt(6.0f / static_cast<float>(std::max<std::int64_t>(fan_in, 1)));
  if (fan_in > 0)
    for (float& x : v) x = bound * uniform(seed_, draws_++);
  c->bytes.resize(v.size() * sizeof(float));
  std::memcpy(c->bytes.data(), v.data(), c->bytes.size());
  g.values.push_back(graph::Value{name, {ElemType::kF32, shape}, -1, std::move(c)});
  g.initializers.push_back(static_cast<ValueId>(g.values.size() - 1));
  return name;
}

std::string NetBuilder::add_param(const std::string& kind, const std::vector<std::int64_t>& dims, std::int64_t fan_in, float fill) {
  const std::string name = add_initializer(kind, dims, fan_in, fill);
  m_.graph.inputs.push_back(m_.graph.initializers.back());  // a default a session's caller may replace
  params_.push_back(name);
  return name;
}

std::string NetBuilder::add_state(const std::string& kind, const std::vector<std::int64_t>& dims, float fill) {
  return add_initializer(kind, dims, 0, fill);
}

std::string NetBuilder::add_node(const std::string& op, std::vector<std::string> inputs, std::map<std::string, Attribute> attrs, std::size_t slot) {
  graph::Graph& g = m_.graph;
  graph::Node n;
  n.name = "layer" + std::to_string(layer_) + "." + op;
  n.op_type = op;
  for (const std::string& in : inputs) n.inputs.push_back(g.find(in));
  n.attrs = std::move(attrs);
  const std::string out = n.name + ".out";
  g.values.push_back(graph::Value{out, {ElemType::kF32, std::nullopt}, static_cast<int>(g.nodes.size()), nullptr});
  n.outputs.assign(slot + 1, graph::kNoValue);
  n.outputs[slot] = static_cast<ValueId>(g.values.size() - 1);
  g.nodes.push_back(std::move(n));
  x_ = out;
  return out;
}

std::string NetBuilder::add_ints(const std::string& kind, const std::vector<std::int64_t>& v) {
  graph::Graph& g = m_.graph;
  const std::string name = "layer" + std::to_string(layer_) + "." + kind;
  auto c = std::make_shared<graph::Constant>();
  c->elem = ElemType::kI64;
  c->dims = {static_cast<std::int64_t>(v.size())};
  c->bytes.resize(v.size() * sizeof(std::int64_t));
  if (!v.empty()) std::memcpy(c->bytes.data(), v.data(), c->bytes.size());
  g.values.push_back(graph::Value{name, {ElemType::kI64, std::vector<Dim>{Dim{static_cast<std::int64_t>(v.size()), {}}}}, -1, std::move(c)});
  g.initializers.push_back(static_cast<ValueId>(g.values.size() - 1));
  return name;
}

NetBuilder& NetBuilder::conv(std::int64_t channels, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
  if (!error_.empty()) return *this;
  if (dims_.size() != 3 || channels < 1 || kernel < 1 || stride < 1 || pad < 0) {
    error_ = "NetBuilder: conv " + std::to_string(layer_) + " needs an image-shaped input and positive sizes";
    return *this;
  }
  const std::int64_t c = dims_[0];
  std::vector<std::int64_t> out = {channels};
  for (int i = 1; i < 3; ++i) {
    const std::int64_t o = (dims_[static_cast<std::size_t>(i)] + 2 * pad - kernel) / stride + 1;
    if (o < 1) {
      error_ = "NetBuilder: conv " + std::to_string(layer_) + "'s kernel is larger than its padded input";
      return *this;
    }
    out.push_back(o);
  }
  ++layer_;
  const std::string w = add_weight({channels, c, kernel, kernel}, c * kernel * kernel, channels * kernel * kernel);
  const std::string b = add_param("bias", {channels}, 0, 0.0f);
  add_node("Conv", {x_, w, b}, {{"kernel_shape", graph::ints_attribute({kernel, kernel})}, {"strides", graph::ints_attribute({stride, stride})}, {"pads", graph::ints_attribute({pad, pad, pad, pad})}});
  dims_ = out;
  return *this;
}

NetBuilder& NetBuilder::linear(std::int64_t features) {
  if (!error_.empty()) return *this;
  if (dims_.size() != 1 || features < 1) {
    error_ = "NetBuilder: linear " + std::to_string(layer_) + " needs a flat input (flatten() first) and features >= 1";
    return *this;
  }
  ++layer_;
  const std::string w = add_weight({features, dims_[0]}, dims_[0], features);
  const std::string b = add_param("bias", {features}, 0, 0.0f);
  add_node("Gemm", {x_, w, b}, {{"transB", graph::int_attribute(1)}});
  dims_ = {features};
  return *this;
}

NetBuilder& NetBuilder::relu() { return activation("Relu"); }

NetBuilder& NetBuilder::activation(const std::string& op) {
  static const std::set<std::string> kKnown = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Gelu", "Elu", "Selu", "Celu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Mish"};
  if (!error_.empty()) return *this;
  if (!kKnown.count(op)) {
    std::string names;
    for (const std::string& k : kKnown) names += (names.empty() ? "" : ", ") + k;
    error_ = "NetBuilder: activation '" + op + "' after layer " + std::to_string(layer_) + " (" + names + ")";
    return *this;
  }
  add_node(op, {x_});
  return *this;
}

NetBuilder& NetBuilder::init(WeightInit w) {
  init_ = w;
  return *this;
}

std::string NetBuilder::add_weight(const std::vector<std::int64_t>& dims, std::int64_t fan_in, std::int64_t fan_out) {
  // Both draw uniformly within a bound: Kaiming's sqrt(6 / fan_in), Xavier's sqrt(6 / (fan_in + fan_out)),
  // which add_initializer's Kaiming bound gives for a fan_in of fan_in + fan_out.
  return add_param("weight", dims, init_ == WeightInit::kXavierUniform ? fan_in + fan_out : fan_in);
}

NetBuilder& NetBuilder::max_pool(std::int64_t kernel) {
  if (!error_.empty()) return *this;
  if (dims_.size() != 3 || kernel < 1 || dims_[1] < kernel || dims_[2] < kernel) {
    error_ = "NetBuilder: max_pool after layer " + std::to_string(layer_) + " needs an image at least as large as its kernel";
    return *this;
  }
  add_node("MaxPool", {x_}, {{"kernel_shape", graph::ints_attribute({kernel, kernel})}, {"strides", graph::ints_attribute({kernel, kernel})}});
  dims_ = {dims_[0], dims_[1] / kernel, dims_[2] / kernel};
  return *this;
}

NetBuilder& NetBuilder::batch_norm() {
  if (!error_.empty()) return *this;
  if (dims_.size() != 3) {
    error_ = "NetBuilder: batch_norm after layer " + std::to_string(layer_) + " needs an image-shaped input";
    return *this;
  }
  const std::int64_t c = dims_[0];
  ++layer_;
  const std::string scale = add_param("scale", {c}, 0, 1.0f), bias = add_param("bias", {c}, 0, 0.0f);
  const std::string mean = add_state("running_mean", {c}, 0.0f), var = add_state("running_var", {c}, 1.0f);
  add_node("BatchNormalization", {x_, scale, bias, mean, var}, {{"epsilon", graph::float_attribute(1e-5f)}, {"momentum", graph::float_attribute(0.9f)}});
  return *this;
}

NetBuilder& NetBuilder::residual(std::int64_t channels, std::int64_t stride, bool norm) {
  if (!error_.empty()) return *this;
  if (dims_.size() != 3 || channels < 1 || stride < 1) {
    error_ = "NetBuilder: residual after layer " + std::to_string(layer_) + " needs an image-shaped input and positive sizes";
    return *this;
  }
  const std::string in = x_;
  const std::vector<std::int64_t> in_dims = dims_;
  conv(channels, 3, stride, 1);
  if (norm) batch_norm();
  relu().conv(channels, 3, 1, 1);
  if (norm) batch_norm();
  if (!error_.empty()) return *this;
  std::string skip = in;
  if (in_dims[0] != channels || stride != 1) {  // a 1x1 projection of the block's input
    const std::string main = x_;
    const std::vector<std::int64_t> main_dims = dims_;
    x_ = in;
    dims_ = in_dims;
    conv(channels, 1, stride, 0);
    if (norm) batch_norm();
    skip = x_;
    x_ = main;
    dims_ = main_dims;
  }
  add_node("Add", {x_, skip});
  return relu();
}

NetBuilder& NetBuilder::lstm(std::int64_t hidden) {
  if (!error_.empty()) return *this;
  if ((dims_.size() != 3 && dims_.size() != 2) || hidden < 1) {
    error_ = "NetBuilder: lstm after layer " + std::to_string(layer_) + " needs images [C, H, W] or sequences [T, F] and hidden >= 1";
    return *this;
  }
  // The rows are the time steps: [N, C, H, W] -> [N, H, C*W] (batch-major: ONNX's layout 1).
  const bool image = dims_.size() == 3;
  const std::int64_t steps = image ? dims_[1] : dims_[0], features = image ? dims_[0] * dims_[2] : dims_[1];
  if (image && dims_[0] != 1) add_node("Transpose", {x_}, {{"perm", graph::ints_attribute({0, 2, 1, 3})}});
  ++layer_;
  add_node("Reshape", {x_, add_ints("shape", {0, steps, features})});
  // PyTorch's initialisation, U(-1/sqrt(hidden), 1/sqrt(hidden)): Kaiming's bound with fan_in 6 hidden.
  const std::string w = add_param("W", {1, 4 * hidden, features}, 6 * hidden), r = add_param("R", {1, 4 * hidden, hidden}, 6 * hidden);
  const std::string b = add_param("B", {1, 8 * hidden}, 0, 0.0f);
  add_node("LSTM", {x_, w, r, b}, {{"hidden_size", graph::int_attribute(hidden)}, {"layout", graph::int_attribute(1)}}, 1);  // Y_h only
  add_node("Flatten", {x_});  // [N, 1, hidden] -> [N, hidden]
  dims_ = {hidden};
  return *this;
}

NetBuilder& NetBuilder::dropout(float ratio) {
  if (!error_.empty()) return *this;
  if (!(ratio >= 0 && ratio < 1)) {
    error_ = "NetBuilder: dropout after layer " + std::to_string(layer_) + " needs a ratio in [0, 1)";
    return *this;
  }
  add_node("Dropout", {x_, add_initializer("dropout_ratio", {}, 0, ratio)});
  return *this;
}

NetBuilder& NetBuilder::layer_norm() {
  if (!error_.empty()) return *this;
  if (dims_.size() != 1) {
    error_ = "NetBuilder: layer_norm after layer " + std::to_string(layer_) + " needs a flat input (flatten() first)";
    return *this;
  }
  ++layer_;
  const std::string scale = add_param("scale", dims_, 0, 1.0f), bias = add_param("bias", dims_, 0, 0.0f);
  add_node("LayerNormalization", {x_, scale, bias}, {{"axis", graph::int_attribute(-1)}});
  return *this;
}

NetBuilder& NetBuilder::global_avg_pool() {
  if (!error_.empty()) return *this;
  if (dims_.size() != 3) {
    error_ = "NetBuilder: global_avg_pool after layer " + std::to_string(layer_) + " needs an image-shaped input";
    return *this;
  }
  add_node("GlobalAveragePool", {x_});
  add_node("Flatten", {x_});
  dims_ = {dims_[0]};
  return *this;
}

NetBuilder& NetBuilder::flatten() {
  if (!error_.empty()) return *this;
  add_node("Flatten", {x_});
  std::int64_t n = 1;
  for (std::int64_t d : dims_) n *= d;
  dims_ = {n};
  return *this;
}

Result<graph::Model> NetBuilder::build() {
  if (!error_.empty()) return invalid_argument(error_);
  if (dims_.size() != 1) return invalid_argument("NetBuilder: the last layer must give flat scores (flatten() and linear())");
  graph::Model m = m_;
  graph::Graph& g = m.graph;
  const ValueId scores = g.find(x_);
  g.values[static_cast<std::size_t>(scores)].name = "scores";
  graph::Node loss;
  loss.name = "loss";
  loss.op_type = "SoftmaxCrossEntropyLoss";
  loss.inputs = {scores, g.find("labels")};
  g.values.push_back(graph::Value{"loss", {ElemType::kF32, std::vector<Dim>{}}, static_cast<int>(g.nodes.size()), nullptr});
  loss.outputs = {static_cast<ValueId>(g.values.size() - 1)};
  g.nodes.push_back(std::move(loss));
  g.outputs = {static_cast<ValueId>(g.values.size() - 1), scores};
  TESSERA_RETURN_IF_ERROR(graph::verify(m).with_context("NetBuilder"));
  TESSERA_RETURN_IF_ERROR(graph::infer_types(m).with_context("NetBuilder"));
  return m;
}

}  // namespace tessera::train
