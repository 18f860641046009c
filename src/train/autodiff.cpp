// differentiate (tessera/train.hpp): reverse-mode automatic differentiation on the graph IR.
// The nodes on a path from a `wrt` value to the loss are visited from the loss back; each
// adds the nodes that compute its inputs' gradient contributions from its outputs' gradients,
// and a value read by several nodes sums its contributions with Add.
#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "tessera/graph/passes.hpp"
#include "tessera/train.hpp"

namespace tessera::train {
namespace {

using graph::Attribute;
using graph::Dim;
using graph::ElemType;
using graph::Graph;
using graph::kNoValue;
using graph::Node;
using graph::ValueId;
using graph::ValueType;
using Dims = std::vector<std::int64_t>;

std::size_t at(ValueId v) { return static_cast<std::size_t>(v); }

std::string label(const Node& n, std::size_t i) { return "node " + std::to_string(i) + (n.name.empty() ? "" : " '" + n.name + "'") + " (" + n.op_type + ")"; }

// Known dims of a value's type, or nullopt.
std::optional<Dims> known_dims(const ValueType& t) {
  if (!t.shape) return std::nullopt;
  Dims d;
  for (const Dim& x : *t.shape) {
    if (!x.has_size()) return std::nullopt;
    d.push_back(x.size);
  }
  return d;
}

bool same_dims(const ValueType& a, const ValueType& b) {
  if (!a.shape || !b.shape || a.shape->size() != b.shape->size()) return false;
  for (std::size_t i = 0; i < a.shape->size(); ++i) {
    const Dim &x = (*a.shape)[i], &y = (*b.shape)[i];
    if (!((x.has_size() && y.has_size() && x.size == y.size) || (!x.symbol.empty() && x.symbol == y.symbol))) return false;
  }
  return true;
}

class Differentiator {
 public:
  Differentiator(graph::Model& m) : m_(m), g_(m.graph), opset_(m.opsets.count("") ? m.opsets.at("") : graph::kMaxOpset) {}

  Status run(const std::string& loss_name, const std::vector<std::string>& wrt) {
    const ValueId loss = g_.find(loss_name);
    if (loss == kNoValue) return invalid_argument("differentiate: the graph has no value '" + loss_name + "'");
    const ValueType lt = g_.values[at(loss)].type;
    if (lt.elem != ElemType::kF32 || !lt.shape) return invalid_argument("differentiate: the loss '" + loss_name + "' is not known to be f32 of one element");
    for (const Dim& d : *lt.shape)
      if (d.size != 1) return invalid_argument("differentiate: the loss '" + loss_name + "' is not known to be one element");
    std::vector<ValueId> params;
    for (const std::string& name : wrt) {
      const ValueId v = g_.find(name);
      if (v == kNoValue) return invalid_argument("differentiate: the graph has no value '" + name + "'");
      if (g_.values[at(v)].producer >= 0) return invalid_argument("differentiate: '" + name + "' is computed by a node; gradients are taken with respect to inputs and initializers");
      if (g_.values[at(v)].type.elem != ElemType::kF32) return unsupported("differentiate: '" + name + "' is not f32");
      params.push_back(v);
    }
    // Which values depend on a parameter, and which nodes lead to the loss.
    std::vector<char> varies(g_.values.size(), 0), needed(g_.values.size(), 0);
    for (ValueId v : params) varies[at(v)] = 1;
    // A node's reads: its inputs and what its subgraphs capture (so control flow that reads a
    // parameter is on the path, and refused, rather than skipped).
    const auto reads = [&](const Node& n) {
      std::vector<ValueId> r = n.inputs;
      for (ValueId v : graph::subgraph_reads(g_, n)) r.push_back(v);
      return r;
    };
    for (const Node& n : g_.nodes) {
      bool any = false;
      for (ValueId v : reads(n)) any = any || (v != kNoValue && varies[at(v)]);
      for (ValueId v : n.outputs)
        if (v != kNoValue) varies[at(v)] = any;
    }
    needed[at(loss)] = 1;
    std::vector<std::size_t> order;
    for (std::size_t i = g_.nodes.size(); i-- > 0;) {
      const Node& n = g_.nodes[i];
      bool out_needed = false;
      for (ValueId v : n.outputs) out_needed = out_needed || (v != kNoValue && needed[at(v)]);
      if (!out_needed) continue;
      bool in_varies = false;
      for (ValueId v : reads(n)) in_varies = in_varies || (v != kNoValue && varies[at(v)]);
      if (!in_varies) continue;
      if (!graph::subgraph_reads(g_, n).empty())
        return unsupported("differentiate: " + label(n, i) + ": control flow (subgraphs) cannot be differentiated yet");
      for (ValueId v : n.inputs)
        if (v != kNoValue) needed[at(v)] = 1;
      order.push_back(i);
    }
    grad_.assign(g_.values.size(), kNoValue);
    const float one = 1.0f;
    grad_[at(loss)] = graph::passes::add_constant(g_, loss_name + "_grad_seed", ElemType::kF32, known_dims(lt).value_or(Dims{}), &one, sizeof one);
    grad_.resize(g_.values.size(), kNoValue);
    for (std::size_t i : order) {
      const Node n = g_.nodes[i];  // a copy: emitting nodes grows the list
      TESSERA_RETURN_IF_ERROR(backward(n, i, varies));
    }
    // Outputs: the loss, then each parameter's gradient (zeros where the loss does not reach it).
    g_.outputs = {loss};
    for (ValueId p : params) {
      ValueId gv = grad_[at(p)];
      if (gv == kNoValue) {
        const float zero = 0.0f;
        const ValueId z = constant_f32(g_.values[at(p)].name + "_zero", {}, zero);
        gv = emit("Mul", {p, z}, g_.values[at(p)].type);
      }
      gv = emit("Identity", {gv}, g_.values[at(p)].type, g_.values[at(p)].name + "_grad");
      g_.outputs.push_back(gv);
    }
    // Parameters become inputs with their values as defaults.
    for (ValueId p : params)
      if (std::find(g_.inputs.begin(), g_.inputs.end(), p) == g_.inputs.end()) g_.inputs.push_back(p);
    if (!m_.opsets.count(graph::kTesseraDomain)) m_.opsets[graph::kTesseraDomain] = 1;
    return graph::verify(m_).with_context("differentiate");
  }

 private:
  // One node's gradient contributions to its inputs that vary.
  Status backward(const Node& n, std::size_t i, const std::vector<char>& varies) {
    if (n.domain.empty() && n.op_type == "Split") return split(n, i);
    if (n.domain.empty() && (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN")) return rnn(n, i, varies);
    const ValueId y = n.outputs.empty() ? kNoValue : n.outputs[0];
    const ValueId dy = y == kNoValue ? kNoValue : grad_[at(y)];
    if (dy == kNoValue) return Status::ok();  // its output does not reach the loss
    for (std::size_t k = 1; k < n.outputs.size(); ++k)
      if (n.outputs[k] != kNoValue && grad_[at(n.outputs[k])] != kNoValue)
        return unsupported("differentiate: " + label(n, i) + ": only its first output can be differentiated");
    const auto wants = [&](std::size_t k) { return k < n.inputs.size() && n.inputs[k] != kNoValue && varies[at(n.inputs[k])]; };
    const auto in = [&](std::size_t k) { return n.inputs[k]; };
    const auto type = [&](ValueId v) -> ValueType { return g_.values[at(v)].type; };
    const std::string& op = n.op_type;
    const bool onnx = n.domain.empty();
    if (onnx && op == "Identity") return add_grad(in(0), dy);
    if (onnx && op == "Dropout") return dropout(n, i, dy);
    if (n.domain == graph::kTesseraDomain && op == "Dropout") {  // fit's step-seeded dropout: always training
      const std::optional<double> ratio = scalar_constant(in(1));
      if (!ratio || *ratio >= 1) return unsupported("differentiate: " + label(n, i) + ": a dropout ratio that is not a constant below 1");
      return add_grad(in(0), masked(i, in(0), dy, *ratio));
    }
    if (onnx && (op == "Softmax" || op == "LogSoftmax")) {
      if (opset_ < 13) return unsupported("differentiate: " + label(n, i) + ": " + op + " before opset 13 (over a 2-D coercion)");
      const ValueType t = type(y);
      const std::int64_t axis = n.attrs.count("axis") ? n.attrs.at("axis").i : -1;
      ValueType kept = t;  // the sum over the axis, kept as 1
      if (kept.shape) {
        const auto r = static_cast<std::int64_t>(kept.shape->size());
        if (axis < -r || axis >= r) return invalid_argument("differentiate: " + label(n, i) + ": axis " + std::to_string(axis) + " for rank " + std::to_string(r));
        (*kept.shape)[static_cast<std::size_t>(axis < 0 ? axis + r : axis)] = Dim{1, {}};
      }
      const auto sum = [&](ValueId v) { return emit("ReduceSum", {v, constant_i64(n.name + "_axis", {axis})}, kept, "", {{"keepdims", graph::int_attribute(1)}}); };
      if (op == "Softmax")  // y (dy - sum(dy y))
        return add_grad(in(0), emit("Mul", {y, emit("Sub", {dy, sum(emit("Mul", {dy, y}, t))}, t)}, t));
      return add_grad(in(0), emit("Sub", {dy, emit("Mul", {emit("Exp", {y}, t), sum(dy)}, t)}, t));  // dy - exp(y) sum(dy)
    }
    if (onnx && (op == "Exp" || op == "Log" || op == "Sqrt" || op == "Abs" || op == "Reciprocal")) {
      const ValueType t = type(in(0));
      if (op == "Exp") return add_grad(in(0), emit("Mul", {dy, y}, t));
      if (op == "Log") return add_grad(in(0), emit("Div", {dy, in(0)}, t));
      if (op == "Sqrt") return add_grad(in(0), emit("Div", {dy, emit("Mul", {y, constant_f32(n.name + "_two", {}, 2.0f)}, t)}, t));
      if (op == "Abs") return add_grad(in(0), emit("Mul", {dy, emit("Sign", {in(0)}, t)}, t));
      return add_grad(in(0), emit("Neg", {emit("Mul", {dy, emit("Mul", {y, y}, t)}, t)}, t));  // d(1/x) = -y^2
    }
    if (onnx && op == "Pow") {
      const std::optional<double> c = scalar_constant(in(1));
      if (!c || wants(1)) return unsupported("differentiate: " + label(n, i) + ": Pow by an exponent that is not a constant scalar");
      const ValueType t = type(in(0));
      const ValueId p = emit("Pow", {in(0), constant_f32(n.name + "_exponent_less_one", {}, static_cast<float>(*c - 1))}, t);
      return add_grad(in(0), emit("Mul", {dy, emit("Mul", {p, constant_f32(n.name + "_exponent", {}, static_cast<float>(*c))}, t)}, t));
    }
    if (onnx && op == "Concat") return concat(n, i, dy, wants);
    if (onnx && op == "Slice") return slice(n, i, dy);
    if (onnx && op == "Pad") return pad(n, i, dy);
    if (onnx && op == "LayerNormalization") return layer_norm(n, i, dy, wants);
    if (onnx && op == "BatchNormalization") {
      const auto mode = n.attrs.find("training_mode");
      if (mode == n.attrs.end() || mode->second.i == 0)
        return unsupported("differentiate: " + label(n, i) + ": BatchNormalization in inference mode (fit trains it in training mode)");
      if (wants(3) || wants(4)) return unsupported("differentiate: " + label(n, i) + ": a gradient of the running statistics");
      return norm_grad(n, "BatchNormGrad", dy, wants);  // the batch's statistics, recomputed from X by the kernel
    }
    if (onnx && (op == "Add" || op == "Sub")) {
      if (wants(0)) TESSERA_RETURN_IF_ERROR(add_grad(in(0), unbroadcast(dy, type(y), in(0))));
      if (wants(1)) TESSERA_RETURN_IF_ERROR(add_grad(in(1), unbroadcast(op == "Sub" ? emit("Neg", {dy}, type(y)) : dy, type(y), in(1))));
      return Status::ok();
    }
    if (onnx && op == "Mul") {
      if (wants(0)) TESSERA_RETURN_IF_ERROR(add_grad(in(0), unbroadcast(emit("Mul", {dy, in(1)}, type(y)), type(y), in(0))));
      if (wants(1)) TESSERA_RETURN_IF_ERROR(add_grad(in(1), unbroadcast(emit("Mul", {dy, in(0)}, type(y)), type(y), in(1))));
      return Status::ok();
    }
    if (onnx && op == "Div") {  // y = a / b: da = dy / b, db = -dy * y / b
      if (wants(0)) TESSERA_RETURN_IF_ERROR(add_grad(in(0), unbroadcast(emit("Div", {dy, in(1)}, type(y)), type(y), in(0))));
      if (wants(1)) {
        const ValueId t = emit("Div", {emit("Mul", {dy, y}, type(y)), in(1)}, type(y));
        TESSERA_RETURN_IF_ERROR(add_grad(in(1), unbroadcast(emit("Neg", {t}, type(y)), type(y), in(1))));
      }
      return Status::ok();
    }
    if (onnx && op == "Neg") return add_grad(in(0), emit("Neg", {dy}, type(in(0))));
    if (onnx && op == "Gemm") return gemm(n, dy, wants);
    if (onnx && op == "MatMul") return matmul(n, i, dy, wants);
    if ((onnx && op == "Conv") || (n.domain == graph::kTesseraDomain && op == "FusedConv" && !n.attrs.count("activation") && n.inputs.size() <= 3))
      return conv(n, dy, wants);
    if (onnx && (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool")) {
      Node p = gradient_node("PoolGrad", n);
      p.attrs["pool"] = graph::string_attribute(op);
      p.inputs = {in(0), dy};
      return add_grad(in(0), emit_node(std::move(p), type(in(0))));
    }
    if (onnx && activation(op)) {
      Node a = gradient_node("ActivationGrad", n);
      a.attrs.clear();
      a.attrs["activation"] = graph::string_attribute(op);
      const auto [alpha, beta] = activation_params(n);
      a.attrs["activation_alpha"] = graph::float_attribute(alpha);
      a.attrs["activation_beta"] = graph::float_attribute(beta);
      a.inputs = {in(0), dy};
      return add_grad(in(0), emit_node(std::move(a), type(in(0))));
    }
    if (onnx && (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze"))
      return add_grad(in(0), emit("Reshape", {dy, emit("Shape", {in(0)}, {ElemType::kI64, std::vector<Dim>{Dim{}}})}, type(in(0))));
    if (onnx && op == "Transpose") {
      const auto it = n.attrs.find("perm");
      Dims perm;
      if (it != n.attrs.end()) perm = it->second.ints;
      else if (const auto d = type(in(0)).shape) {
        for (std::size_t k = d->size(); k-- > 0;) perm.push_back(static_cast<std::int64_t>(k));
      } else {
        return unsupported("differentiate: " + label(n, i) + ": Transpose without perm of an input of unknown rank");
      }
      Dims inverse(perm.size());
      for (std::size_t k = 0; k < perm.size(); ++k) inverse[static_cast<std::size_t>(perm[k])] = static_cast<std::int64_t>(k);
      return add_grad(in(0), emit("Transpose", {dy}, type(in(0)), "", {{"perm", graph::ints_attribute(inverse)}}));
    }
    if (onnx && (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin")) return reduce(n, i, dy);
    if (onnx && op == "Gather") {  // dY's slices added back at their indices
      Node gg = gradient_node("GatherGrad", n);
      gg.attrs.clear();
      if (n.attrs.count("axis")) gg.attrs["axis"] = n.attrs.at("axis");
      gg.inputs = {dy, in(1), emit("Shape", {in(0)}, {ElemType::kI64, std::vector<Dim>{Dim{}}})};
      return add_grad(in(0), emit_node(std::move(gg), type(in(0))));
    }
    if (onnx && op == "NegativeLogLikelihoodLoss") {
      if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) return unsupported("differentiate: " + label(n, i) + ": class weights");
      Node l = gradient_node("NLLLossGrad", n);
      l.attrs.clear();
      for (const char* a : {"reduction", "ignore_index"})
        if (n.attrs.count(a)) l.attrs[a] = n.attrs.at(a);
      l.inputs = {dy, in(0), in(1)};
      return add_grad(in(0), emit_node(std::move(l), type(in(0))));
    }
    if (onnx && op == "InstanceNormalization") return norm_grad(n, "InstanceNormGrad", dy, wants);
    if (onnx && op == "SoftmaxCrossEntropyLoss") {
      if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) return unsupported("differentiate: " + label(n, i) + ": class weights");
      Node s = gradient_node("SoftmaxCrossEntropyLossGrad", n);
      s.attrs.clear();
      for (const char* a : {"reduction", "ignore_index"})
        if (n.attrs.count(a)) s.attrs[a] = n.attrs.at(a);
      s.inputs = {dy, in(0), in(1)};
      return add_grad(in(0), emit_node(std::move(s), type(in(0))));
    }
    return unsupported("differentiate: " + label(n, i) + ": the op " + (onnx ? "" : n.domain + ".") + op + " cannot be differentiated yet");
  }

  static bool activation(const std::string& op) {
    static const std::set<std::string> a = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Softplus", "Softsign", "Gelu",
                                            "HardSigmoid", "HardSwish", "Mish", "Selu", "Celu"};
    return a.count(op) > 0;
  }

  // The activation's parameters with ONNX's defaults, as the executor's activation kernel reads them.
  static std::pair<float, float> activation_params(const Node& n) {
    const auto f = [&](const char* name, float dflt) {
      const auto it = n.attrs.find(name);
      return it == n.attrs.end() ? dflt : it->second.f;
    };
    const std::string& op = n.op_type;
    if (op == "LeakyRelu") return {f("alpha", 0.01f), 0.0f};
    if (op == "Elu" || op == "Celu") return {f("alpha", 1.0f), 0.0f};
    if (op == "Selu") return {f("alpha", 1.67326319217681884765625f), f("gamma", 1.05070102214813232421875f)};
    if (op == "HardSigmoid") return {f("alpha", 0.2f), f("beta", 0.5f)};
    if (op == "Gelu") {
      const auto it = n.attrs.find("approximate");
      return {it != n.attrs.end() && it->second.s == "tanh" ? 1.0f : 0.0f, 0.0f};
    }
    return {0.0f, 0.0f};
  }

  // Y = alpha op(A) op(B) + beta C.
  Status gemm(const Node& n, ValueId dy, const std::function<bool(std::size_t)>& wants) {
    const auto attr_i = [&](const char* name) { return n.attrs.count(name) ? n.attrs.at(name).i : 0; };
    const auto attr_f = [&](const char* name) { return n.attrs.count(name) ? n.attrs.at(name).f : 1.0f; };
    const bool ta = attr_i("transA") != 0, tb = attr_i("transB") != 0;
    const float alpha = attr_f("alpha"), beta = attr_f("beta");
    const ValueId a = n.inputs[0], b = n.inputs[1];
    const auto gemm_of = [&](ValueId x, bool tx, ValueId z, bool tz, const ValueType& t) {
      return emit("Gemm", {x, z}, t, "", {{"transA", graph::int_attribute(tx)}, {"transB", graph::int_attribute(tz)}, {"alpha", graph::float_attribute(alpha)}});
    };
    // op(A) op(B) = dY-side products: dA = dY op(B)^T (or its transpose), dB likewise.
    if (wants(0)) TESSERA_RETURN_IF_ERROR(add_grad(a, ta ? gemm_of(b, tb, dy, true, type(a)) : gemm_of(dy, false, b, !tb, type(a))));
    if (wants(1)) TESSERA_RETURN_IF_ERROR(add_grad(b, tb ? gemm_of(dy, true, a, ta, type(b)) : gemm_of(a, !ta, dy, false, type(b))));
    if (wants(2)) {
      ValueId dc = dy;
      if (beta != 1.0f) dc = emit("Mul", {dy, constant_f32("gemm_beta", {}, beta)}, type(n.outputs[0]));
      TESSERA_RETURN_IF_ERROR(add_grad(n.inputs[2], unbroadcast(dc, type(n.outputs[0]), n.inputs[2])));
    }
    return Status::ok();
  }

  // Y = A B over the last two axes (batch axes broadcast).
  Status matmul(const Node& n, std::size_t i, ValueId dy, const std::function<bool(std::size_t)>& wants) {
    const ValueId a = n.inputs[0], b = n.inputs[1];
    const ValueType ta = type(a), tb = type(b), ty = type(n.outputs[0]);
    if (!ta.shape || !tb.shape || ta.shape->size() < 2 || tb.shape->size() < 2)
      return unsupported("differentiate: " + label(n, i) + ": MatMul of operands of rank below 2 or unknown");
    const auto swap_last = [&](ValueId v, const ValueType& t) {
      Dims perm;
      for (std::size_t k = 0; k < t.shape->size(); ++k) perm.push_back(static_cast<std::int64_t>(k));
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      ValueType r = t;
      std::swap((*r.shape)[r.shape->size() - 1], (*r.shape)[r.shape->size() - 2]);
      return emit("Transpose", {v}, r, "", {{"perm", graph::ints_attribute(perm)}});
    };
    ValueType unknown{ElemType::kF32, std::nullopt};
    if (wants(0)) TESSERA_RETURN_IF_ERROR(add_grad(a, unbroadcast(emit("MatMul", {dy, swap_last(b, tb)}, unknown), ty, a, true)));
    if (wants(1)) TESSERA_RETURN_IF_ERROR(add_grad(b, unbroadcast(emit("MatMul", {swap_last(a, ta), dy}, unknown), ty, b, true)));
    return Status::ok();
  }

  Status conv(const Node& n, ValueId dy, const std::function<bool(std::size_t)>& wants) {
    const ValueId x = n.inputs[0], w = n.inputs[1];
    const ValueType shape_type{ElemType::kI64, std::vector<Dim>{Dim{}}};
    if (wants(0)) {
      Node d = gradient_node("ConvGradData", n);
      d.inputs = {dy, w, emit("Shape", {x}, shape_type)};
      TESSERA_RETURN_IF_ERROR(add_grad(x, emit_node(std::move(d), type(x))));
    }
    if (wants(1)) {
      Node d = gradient_node("ConvGradWeight", n);
      d.inputs = {x, dy, emit("Shape", {w}, shape_type)};
      TESSERA_RETURN_IF_ERROR(add_grad(w, emit_node(std::move(d), type(w))));
    }
    if (wants(2)) {  // the bias: dY summed over every axis but the channels
      const ValueType& ty = type(n.outputs[0]);
      if (!ty.shape) return unsupported("differentiate: the rank of a convolution's output is unknown");
      Dims axes = {0};
      for (std::size_t k = 2; k < ty.shape->size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
      TESSERA_RETURN_IF_ERROR(add_grad(n.inputs[2], reduce_sum(dy, axes, false, type(n.inputs[2]))));
    }
    return Status::ok();
  }

  // ReduceSum / ReduceMean / ReduceMax / ReduceMin: dY spread back over the reduced axes (scaled
  // by 1/count for the mean; only where X equals the maximum or minimum for those).
  Status reduce(const Node& n, std::size_t i, ValueId dy) {
    const ValueId x = n.inputs[0];
    const std::optional<Dims> xd = known_dims(type(x));
    if (!xd) return unsupported("differentiate: " + label(n, i) + ": a reduction over an input of unknown dims");
    const auto rank = static_cast<std::int64_t>(xd->size());
    Dims axes;
    bool from_input = n.inputs.size() > 1 && n.inputs[1] != kNoValue;
    if (from_input) {
      const std::optional<Dims> c = ints_constant(n.inputs[1]);
      if (!c) return unsupported("differentiate: " + label(n, i) + ": axes that are not a constant");
      axes = *c;
    } else if (n.attrs.count("axes")) {
      axes = n.attrs.at("axes").ints;
    }
    const bool noop_empty = n.attrs.count("noop_with_empty_axes") && n.attrs.at("noop_with_empty_axes").i != 0;
    if (axes.empty() && noop_empty) return add_grad(x, dy);
    std::vector<char> reduced(xd->size(), axes.empty() ? 1 : 0);
    for (std::int64_t a : axes) reduced[static_cast<std::size_t>(a < 0 ? a + rank : a)] = 1;
    Dims kept = *xd;
    std::int64_t count = 1;
    for (std::size_t k = 0; k < kept.size(); ++k)
      if (reduced[k]) count *= kept[k], kept[k] = 1;
    const ValueId kept_dims = constant_i64("reduce_kept_dims", kept);
    ValueId g = emit("Reshape", {dy, kept_dims}, {ElemType::kF32, dims_type(kept)});
    if (n.op_type == "ReduceMean") g = emit("Mul", {g, constant_f32("reduce_mean_scale", {}, 1.0f / static_cast<float>(std::max<std::int64_t>(count, 1)))}, {ElemType::kF32, dims_type(kept)});
    const ValueId input_dims = constant_i64("reduce_input_dims", *xd);
    g = emit("Expand", {g, input_dims}, type(x));
    if (n.op_type == "ReduceMax" || n.op_type == "ReduceMin") {  // to where X is the extreme (every tie)
      const ValueId y = emit("Expand", {emit("Reshape", {n.outputs[0], kept_dims}, {ElemType::kF32, dims_type(kept)}), input_dims}, type(x));
      const ValueId at_extreme = emit("Equal", {x, y}, {ElemType::kBool, type(x).shape});
      g = emit("Mul", {g, emit("Cast", {at_extreme}, type(x), "", {{"to", graph::int_attribute(static_cast<std::int64_t>(ElemType::kF32))}})}, type(x));
    }
    return add_grad(x, g);
  }

  // dY (of y_type) summed down to the dims of `to`, as broadcasting spread `to` into y. With
  // `batch_only`, only the leading axes (MatMul's batch axes) can have been broadcast.
  ValueId unbroadcast(ValueId dy, const ValueType& y_type, ValueId to, bool batch_only = false) {
    const ValueType& tt = type(to);
    if (!batch_only && same_dims(tt, y_type)) return dy;
    const std::optional<Dims> td = known_dims(tt);
    if (!td) {
      fail_ = "the dims of '" + g_.values[at(to)].name + "' are not known, so its broadcast gradient cannot be summed";
      return dy;
    }
    if (batch_only && same_dims(tt, y_type)) return dy;
    // Axes of y that `to` did not have or had as 1: summed (keepdims), then reshaped to `to`.
    const std::size_t yr = y_type.shape ? y_type.shape->size() : td->size();
    Dims axes;
    for (std::size_t k = 0; k < yr; ++k) {
      const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(k) - static_cast<std::ptrdiff_t>(yr - td->size());
      const bool y_one = y_type.shape && (*y_type.shape)[k].has_size() && (*y_type.shape)[k].size == 1;
      if (j < 0 || ((*td)[static_cast<std::size_t>(j)] == 1 && !y_one)) axes.push_back(static_cast<std::int64_t>(k));
    }
    ValueId s = axes.empty() ? dy : reduce_sum(dy, axes, true, {ElemType::kF32, std::nullopt});
    return emit("Reshape", {s, constant_i64("unbroadcast_dims", *td)}, tt);
  }

  ValueId reduce_sum(ValueId x, const Dims& axes, bool keep, const ValueType& t) {
    if (opset_ >= 13) return emit("ReduceSum", {x, constant_i64("reduce_axes", axes)}, t, "", {{"keepdims", graph::int_attribute(keep)}});
    return emit("ReduceSum", {x}, t, "", {{"axes", graph::ints_attribute(axes)}, {"keepdims", graph::int_attribute(keep)}});
  }

  // Adds a gradient contribution to v's.
  Status add_grad(ValueId v, ValueId contribution) {
    if (!fail_.empty()) return unsupported("differentiate: " + fail_);
    grow();
    if (grad_[at(v)] == kNoValue) grad_[at(v)] = contribution;
    else grad_[at(v)] = emit("Add", {grad_[at(v)], contribution}, type(v));
    return Status::ok();
  }

  // A tessera gradient node carrying the forward node's attributes.
  Node gradient_node(const std::string& op, const Node& forward) const {
    Node g;
    g.name = forward.name.empty() ? op : forward.name + "_" + op;
    g.op_type = op;
    g.domain = graph::kTesseraDomain;
    g.attrs = forward.attrs;
    return g;
  }

  // Appends n with one new output of type t (named `out`, else after the node); its id.
  ValueId emit_node(Node n, const ValueType& t, const std::string& out = "") {
    const ValueId v = graph::passes::add_value(g_, out.empty() ? (n.name.empty() ? n.op_type : n.name) + "_out" : out, t);
    grow();
    n.outputs = {v};
    g_.values[at(v)].producer = static_cast<int>(g_.nodes.size());
    g_.nodes.push_back(std::move(n));
    return v;
  }

  // The value of a constant scalar (an initializer or a Constant node's, f32, f64, bool or an
  // integer), or nullopt.
  std::optional<double> scalar_constant(ValueId v) const {
    if (v == kNoValue) return std::nullopt;
    const graph::Constant* c = constant_of(v);
    if (!c || c->numel() != 1) return std::nullopt;
    switch (c->elem) {
      case ElemType::kBool: return c->bytes[0] != std::byte{0} ? 1.0 : 0.0;
      case ElemType::kF32: {
        float f;
        std::memcpy(&f, c->bytes.data(), 4);
        return f;
      }
      case ElemType::kF64: {
        double d;
        std::memcpy(&d, c->bytes.data(), 8);
        return d;
      }
      case ElemType::kI64: {
        std::int64_t k;
        std::memcpy(&k, c->bytes.data(), 8);
        return static_cast<double>(k);
      }
      case ElemType::kI32: {
        std::int32_t k;
        std::memcpy(&k, c->bytes.data(), 4);
        return k;
      }
      default: return std::nullopt;
    }
  }
  // The integers of a constant i64/i32 value, or nullopt.
  std::optional<Dims> ints_constant(ValueId v) const {
    if (v == kNoValue) return std::nullopt;
    const graph::Constant* c = constant_of(v);
    if (!c || (c->elem != ElemType::kI64 && c->elem != ElemType::kI32)) return std::nullopt;
    Dims d(static_cast<std::size_t>(c->numel()));
    for (std::size_t k = 0; k < d.size(); ++k) {
      if (c->elem == ElemType::kI64) {
        std::memcpy(&d[k], c->bytes.data() + 8 * k, 8);
      } else {
        std::int32_t x;
        std::memcpy(&x, c->bytes.data() + 4 * k, 4);
        d[k] = x;
      }
    }
    return d;
  }
  const graph::Constant* constant_of(ValueId v) const {
    const graph::Value& val = g_.values[at(v)];
    if (val.constant) return val.constant.get();
    if (val.producer < 0) return nullptr;
    const Node& p = g_.nodes[static_cast<std::size_t>(val.producer)];
    if (p.op_type != "Constant" || !p.domain.empty()) return nullptr;
    const auto it = p.attrs.find("value");
    return it != p.attrs.end() && it->second.kind == Attribute::Kind::kTensor ? it->second.t.get() : nullptr;
  }

  // Concat: each input's gradient is its slice of dY along the axis (known extents).
  Status concat(const Node& n, std::size_t i, ValueId dy, const std::function<bool(std::size_t)>& wants) {
    const std::int64_t axis = n.attrs.count("axis") ? n.attrs.at("axis").i : 0;
    std::int64_t at_ = 0;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const std::optional<Dims> d = known_dims(type(n.inputs[k]));
      const auto r = d ? static_cast<std::int64_t>(d->size()) : 0;
      if (!d || axis < -r || axis >= r) return unsupported("differentiate: " + label(n, i) + ": a Concat input of unknown dims");
      const std::int64_t len = (*d)[static_cast<std::size_t>(axis < 0 ? axis + r : axis)];
      if (wants(k))
        TESSERA_RETURN_IF_ERROR(add_grad(n.inputs[k], emit("Slice", {dy, constant_i64(n.name + "_start", {at_}), constant_i64(n.name + "_end", {at_ + len}),
                                                                   constant_i64(n.name + "_axis", {axis})}, type(n.inputs[k]))));
      at_ += len;
    }
    return Status::ok();
  }

  // Slice with unit steps (constant starts, ends, axes): dY padded with zeros back to X's dims.
  Status slice(const Node& n, std::size_t i, ValueId dy) {
    const ValueId x = n.inputs[0];
    const std::optional<Dims> xd = known_dims(type(x));
    if (!xd) return unsupported("differentiate: " + label(n, i) + ": a Slice of an input of unknown dims");
    const auto rank = static_cast<std::int64_t>(xd->size());
    std::optional<Dims> starts, ends, axes, steps;
    if (opset_ >= 10) {
      starts = ints_constant(n.inputs.size() > 1 ? n.inputs[1] : kNoValue);
      ends = ints_constant(n.inputs.size() > 2 ? n.inputs[2] : kNoValue);
      if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) axes = ints_constant(n.inputs[3]);
      if (n.inputs.size() > 4 && n.inputs[4] != kNoValue) steps = ints_constant(n.inputs[4]);
      if (!starts || !ends || (n.inputs.size() > 3 && n.inputs[3] != kNoValue && !axes) || (n.inputs.size() > 4 && n.inputs[4] != kNoValue && !steps))
        return unsupported("differentiate: " + label(n, i) + ": a Slice whose starts, ends, axes or steps are not constants");
    } else {
      starts = n.attrs.count("starts") ? n.attrs.at("starts").ints : Dims{};
      ends = n.attrs.count("ends") ? n.attrs.at("ends").ints : Dims{};
      if (n.attrs.count("axes")) axes = n.attrs.at("axes").ints;
    }
    if (!axes) {
      axes = Dims{};
      for (std::size_t k = 0; k < starts->size(); ++k) axes->push_back(static_cast<std::int64_t>(k));
    }
    Dims pads(2 * xd->size(), 0);
    for (std::size_t k = 0; k < starts->size() && k < ends->size() && k < axes->size(); ++k) {
      if (steps && k < steps->size() && (*steps)[k] != 1) return unsupported("differentiate: " + label(n, i) + ": a Slice with steps other than 1");
      const std::int64_t a = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
      if (a < 0 || a >= rank) return invalid_argument("differentiate: " + label(n, i) + ": axis " + std::to_string((*axes)[k]));
      const std::int64_t dim = (*xd)[static_cast<std::size_t>(a)];
      const auto clamp = [&](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + dim : v, 0, dim); };
      const std::int64_t b = clamp((*starts)[k]), e = std::max(b, clamp((*ends)[k]));
      pads[static_cast<std::size_t>(a)] = b;
      pads[static_cast<std::size_t>(a + rank)] = dim - e;
    }
    return add_grad(x, emit("Pad", {dy, constant_i64(n.name + "_pads", pads)}, type(x)));
  }

  // Pad (constant mode, constant non-negative pads): dX is the middle of dY.
  Status pad(const Node& n, std::size_t i, ValueId dy) {
    const ValueId x = n.inputs[0];
    const std::optional<Dims> xd = known_dims(type(x));
    const std::string mode = n.attrs.count("mode") ? n.attrs.at("mode").s : "constant";
    std::optional<Dims> pads = opset_ >= 11 ? ints_constant(n.inputs.size() > 1 ? n.inputs[1] : kNoValue)
                                            : (n.attrs.count("pads") ? std::optional<Dims>(n.attrs.at("pads").ints) : std::nullopt);
    if (!xd || !pads || mode != "constant" || pads->size() != 2 * xd->size() || (n.inputs.size() > 3 && n.inputs[3] != kNoValue))
      return unsupported("differentiate: " + label(n, i) + ": a Pad other than constant mode with constant pads over every axis of known dims");
    Dims starts, ends, axes;
    for (std::size_t k = 0; k < xd->size(); ++k) {
      if ((*pads)[k] < 0 || (*pads)[k + xd->size()] < 0) return unsupported("differentiate: " + label(n, i) + ": a Pad that crops");
      starts.push_back((*pads)[k]);
      ends.push_back((*pads)[k] + (*xd)[k]);
      axes.push_back(static_cast<std::int64_t>(k));
    }
    return add_grad(x, emit("Slice", {dy, constant_i64(n.name + "_starts", starts), constant_i64(n.name + "_ends", ends), constant_i64(n.name + "_axes", axes)},
                            type(x)));
  }

  // Split: dX is the outputs' gradients concatenated (zeros for an output the loss does not reach).
  Status split(const Node& n, std::size_t i) {
    bool any = false;
    for (ValueId v : n.outputs) any = any || (v != kNoValue && grad_[at(v)] != kNoValue);
    if (!any) return Status::ok();
    const std::int64_t axis = n.attrs.count("axis") ? n.attrs.at("axis").i : 0;
    std::vector<ValueId> parts;
    for (ValueId v : n.outputs) {
      if (v == kNoValue) return unsupported("differentiate: " + label(n, i) + ": a Split with an omitted output");
      if (grad_[at(v)] != kNoValue) {
        parts.push_back(grad_[at(v)]);
        continue;
      }
      const std::optional<Dims> d = known_dims(type(v));
      if (!d) return unsupported("differentiate: " + label(n, i) + ": an unused Split output of unknown dims");
      parts.push_back(emit("Expand", {constant_f32(n.name + "_zero", {}, 0.0f), constant_i64(n.name + "_dims", *d)}, type(v)));
    }
    return add_grad(n.inputs[0], emit("Concat", parts, type(n.inputs[0]), "", {{"axis", graph::int_attribute(axis)}}));
  }

  // RNN, LSTM, GRU: tessera:RNNGrad(the node's inputs, dY, dY_h, dY_c) gives the gradient of
  // each input that varies (X, W, R, B, initial_h, initial_c, P), from any of the outputs.
  Status rnn(const Node& n, std::size_t i, const std::vector<char>& varies) {
    std::vector<ValueId> dys(3, kNoValue);
    bool any = false;
    for (std::size_t k = 0; k < 3 && k < n.outputs.size(); ++k)
      if (n.outputs[k] != kNoValue && grad_[at(n.outputs[k])] != kNoValue) dys[k] = grad_[at(n.outputs[k])], any = true;
    if (!any) return Status::ok();
    if (n.inputs.size() > 4 && n.inputs[4] != kNoValue && varies[at(n.inputs[4])])
      return unsupported("differentiate: " + label(n, i) + ": sequence lengths that depend on a parameter");
    Node b = gradient_node("RNNGrad", n);
    b.attrs["rnn_op"] = graph::string_attribute(n.op_type);
    b.inputs = n.inputs;
    b.inputs.resize(8, kNoValue);
    b.inputs.insert(b.inputs.end(), dys.begin(), dys.end());
    std::vector<std::pair<std::size_t, ValueId>> wanted;
    b.outputs.assign(8, kNoValue);
    for (std::size_t k = 0; k < 8 && k < n.inputs.size(); ++k)
      if (k != 4 && n.inputs[k] != kNoValue && varies[at(n.inputs[k])]) {
        const ValueId v = graph::passes::add_value(g_, (n.name.empty() ? n.op_type : n.name) + "_RNNGrad_out" + std::to_string(k), type(n.inputs[k]));
        g_.values[at(v)].producer = static_cast<int>(g_.nodes.size());
        b.outputs[k] = v;
        wanted.emplace_back(k, v);
      }
    while (!b.outputs.empty() && b.outputs.back() == kNoValue) b.outputs.pop_back();
    grow();
    g_.nodes.push_back(std::move(b));
    for (const auto& [k, v] : wanted) TESSERA_RETURN_IF_ERROR(add_grad(n.inputs[k], v));
    return Status::ok();
  }

  // BatchNormalization (training mode), InstanceNormalization: tessera's `grad_op`(X, dY,
  // scale) {epsilon} gives dX, dScale, dBias.
  Status norm_grad(const Node& n, const std::string& grad_op, ValueId dy, const std::function<bool(std::size_t)>& wants) {
    Node b = gradient_node(grad_op, n);
    b.attrs.clear();
    if (n.attrs.count("epsilon")) b.attrs["epsilon"] = n.attrs.at("epsilon");
    b.inputs = {n.inputs[0], dy, n.inputs[1]};
    const std::vector<ValueId> d = emit_outputs(std::move(b), {type(n.inputs[0]), type(n.inputs[1]), type(n.inputs[2])});
    for (std::size_t k = 0; k < 3; ++k)
      if (wants(k)) TESSERA_RETURN_IF_ERROR(add_grad(n.inputs[k], d[k]));
    return Status::ok();
  }

  // LayerNormalization: the node gives its Mean and InvStdDev (made outputs when it had none);
  // tessera:LayerNormGrad(X, dY, scale, mean, invstd) gives dX, dScale, dBias.
  Status layer_norm(const Node& n, std::size_t i, ValueId dy, const std::function<bool(std::size_t)>& wants) {
    const ValueId x = n.inputs[0], scale = n.inputs[1];
    const ValueType xt = type(x);
    const std::optional<Dims> sd = known_dims(type(scale));
    std::int64_t axis = n.attrs.count("axis") ? n.attrs.at("axis").i : -1;
    const auto rank = xt.shape ? static_cast<std::int64_t>(xt.shape->size()) : 0;
    if (!xt.shape || !sd || axis < -rank || axis >= rank) return unsupported("differentiate: " + label(n, i) + ": a LayerNormalization of unknown rank or scale dims");
    if (axis < 0) axis += rank;
    // The normalised dims must be known and be the scale's (and the bias's): no broadcasting.
    ValueType stat = xt;  // X's dims with the normalised ones 1
    Dims normalised;
    for (std::size_t k = static_cast<std::size_t>(axis); k < xt.shape->size(); ++k) {
      normalised.push_back((*xt.shape)[k].has_size() ? (*xt.shape)[k].size : -1);
      (*stat.shape)[k] = Dim{1, {}};
    }
    stat.elem = ElemType::kF32;
    if (*sd != normalised || (n.inputs.size() > 2 && n.inputs[2] != kNoValue && known_dims(type(n.inputs[2])) != sd))
      return unsupported("differentiate: " + label(n, i) + ": a scale or bias that broadcasts");
    const ValueId mean = forward_output(i, 1, "_mean", stat);
    const ValueId invstd = forward_output(i, 2, "_invstd", stat);
    Node b = gradient_node("LayerNormGrad", n);
    b.attrs.clear();
    b.attrs["axis"] = graph::int_attribute(axis);
    b.inputs = {x, dy, scale, mean, invstd};
    const std::vector<ValueId> d = emit_outputs(std::move(b), {type(x), type(scale), type(scale)});
    for (std::size_t k = 0; k < 3; ++k)
      if (wants(k)) TESSERA_RETURN_IF_ERROR(add_grad(n.inputs[k], d[k]));
    return Status::ok();
  }

  // Output k of forward node i (its mask, its statistics): made, of type t, when the node had
  // none there.
  ValueId forward_output(std::size_t i, std::size_t k, const std::string& suffix, const ValueType& t) {
    if (g_.nodes[i].outputs.size() <= k) g_.nodes[i].outputs.resize(k + 1, kNoValue);
    if (g_.nodes[i].outputs[k] == kNoValue) {
      const ValueId v = graph::passes::add_value(g_, (g_.nodes[i].name.empty() ? g_.nodes[i].op_type : g_.nodes[i].name) + suffix, t);
      g_.values[at(v)].producer = static_cast<int>(i);
      g_.nodes[i].outputs[k] = v;
      grow();
    }
    return g_.nodes[i].outputs[k];
  }

  // Appends n with one new output per type (named after the node); their ids.
  std::vector<ValueId> emit_outputs(Node n, const std::vector<ValueType>& types) {
    n.outputs.clear();
    for (std::size_t k = 0; k < types.size(); ++k) {
      const ValueId v = graph::passes::add_value(g_, (n.name.empty() ? n.op_type : n.name) + "_out" + std::to_string(k), types[k]);
      g_.values[at(v)].producer = static_cast<int>(g_.nodes.size());
      n.outputs.push_back(v);
    }
    grow();
    std::vector<ValueId> r = n.outputs;
    g_.nodes.push_back(std::move(n));
    return r;
  }

  // Dropout: the identity outside training mode; in training mode dY times the node's mask
  // (made an output of the node when it had none) over 1 - ratio, for a constant ratio.
  Status dropout(const Node& n, std::size_t i, ValueId dy) {
    const ValueId x = n.inputs[0];
    const auto scalar = [&](std::size_t k) { return k < n.inputs.size() ? scalar_constant(n.inputs[k]) : std::nullopt; };
    const bool has_mode = opset_ >= 12 && n.inputs.size() > 2 && n.inputs[2] != kNoValue;
    if (!has_mode) return add_grad(x, dy);
    const std::optional<double> mode = scalar(2);
    if (mode && *mode == 0) return add_grad(x, dy);
    if (!mode) return unsupported("differentiate: " + label(n, i) + ": Dropout whose training_mode is not a constant");
    const std::optional<double> ratio = n.inputs.size() > 1 && n.inputs[1] != kNoValue ? scalar(1) : std::optional<double>(0.5);
    if (!ratio || *ratio >= 1) return unsupported("differentiate: " + label(n, i) + ": Dropout whose ratio is not a constant below 1");
    return add_grad(x, masked(i, x, dy, *ratio));
  }

  // dY times dropout node i's mask (made its output 1 when it had none) over 1 - ratio.
  ValueId masked(std::size_t i, ValueId x, ValueId dy, double ratio) {
    const ValueId mask = forward_output(i, 1, "_mask", ValueType{ElemType::kBool, type(x).shape});
    const ValueId m = emit("Cast", {mask}, type(x), "", {{"to", graph::int_attribute(static_cast<std::int64_t>(ElemType::kF32))}});
    const ValueId scale = constant_f32(g_.nodes[i].name + "_scale", {}, static_cast<float>(1.0 / (1.0 - ratio)));
    return emit("Mul", {emit("Mul", {dy, m}, type(x)), scale}, type(x));
  }

  ValueId emit(const std::string& op, std::vector<ValueId> inputs, const ValueType& t, const std::string& out = "",
               std::map<std::string, Attribute> attrs = {}) {
    Node n;
    n.name = out.empty() ? "grad_" + op + "_" + std::to_string(g_.nodes.size()) : out;
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    return emit_node(std::move(n), t, out);
  }

  ValueId constant_i64(const std::string& name, const Dims& v) {
    const ValueId c = graph::passes::add_constant(g_, name, ElemType::kI64, {static_cast<std::int64_t>(v.size())}, v.data(), v.size() * sizeof(std::int64_t));
    grow();
    return c;
  }
  ValueId constant_f32(const std::string& name, const Dims& dims, float v) {
    const ValueId c = graph::passes::add_constant(g_, name, ElemType::kF32, dims, &v, sizeof v);
    grow();
    return c;
  }
  static std::optional<std::vector<Dim>> dims_type(const Dims& d) {
    std::vector<Dim> r;
    for (std::int64_t x : d) r.push_back(Dim{x, {}});
    return r;
  }
  ValueType type(ValueId v) const { return g_.values[at(v)].type; }
  void grow() { grad_.resize(g_.values.size(), kNoValue); }

  graph::Model& m_;
  Graph& g_;
  std::int64_t opset_;
  std::vector<ValueId> grad_;  // per value: its gradient so far
  std::string fail_;           // why a contribution could not be built
};

}  // namespace

Result<graph::Model> differentiate(const graph::Model& model, const std::string& loss, const std::vector<std::string>& wrt) {
  graph::Model m = model;
  TESSERA_RETURN_IF_ERROR(Differentiator(m).run(loss, wrt));
  return m;
}

}  // namespace tessera::train
