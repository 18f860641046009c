// eltwise-fusion: a chain of two or more elementwise f32 ops, each read only by the next,
// becomes one tessera.FusedElementwise, which computes the whole chain on cache-sized blocks
// of the output (one pass over memory instead of one per op). A step is a unary math op, an
// activation, or a binary arithmetic op whose other input (an operand) broadcasts into the
// running value without growing it. The fused node takes the place of the chain's last node
// and its output value. Candidates left alone are reported with the reason.
#include <algorithm>
#include <map>

#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

enum class Kind { kUnary, kActivation, kBinary };

const std::map<std::string, Kind, std::less<>>& fusible() {
  static const std::map<std::string, Kind, std::less<>> m = [] {
    std::map<std::string, Kind, std::less<>> r;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"}) r[op] = Kind::kBinary;
    for (const char* op : {"Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                           "Sinh", "Cosh", "Erf", "Floor", "Ceil", "Round", "Sign"})
      r[op] = Kind::kUnary;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Softplus", "Softsign", "HardSwish", "Mish", "LeakyRelu", "Elu",
                           "Celu", "Selu", "HardSigmoid", "Gelu", "Clip"})
      r[op] = Kind::kActivation;
    return r;
  }();
  return m;
}

struct Step {
  std::string op;
  std::int64_t operand = 0;  // 0: none; k > 0: op(v, input k); -k: op(input k, v)
  float alpha = 0, beta = 0;
};

// f32 with a known rank (dims may be unknown).
bool f32_ranked(const ValueType& t) { return t.elem == ElemType::kF32 && t.shape.has_value(); }

// Dims known to be equal: the same size, or the same symbol.
bool same_dim(const Dim& a, const Dim& b) { return (a.has_size() && b.has_size() && a.size == b.size) || (!a.symbol.empty() && a.symbol == b.symbol); }

// Whether operand o is known to broadcast into v without growing it: its rank no larger, each
// of its dims 1 or known equal to v's.
bool fits(const ValueType& o, const ValueType& v) {
  if (!f32_ranked(o) || !f32_ranked(v) || o.shape->size() > v.shape->size()) return false;
  const std::size_t off = v.shape->size() - o.shape->size();
  for (std::size_t i = 0; i < o.shape->size(); ++i) {
    const Dim& d = (*o.shape)[i];
    if (!(d.has_size() && d.size == 1) && !same_dim(d, (*v.shape)[off + i])) return false;
  }
  return true;
}

std::string label(const Node& n, std::size_t i) { return n.op_type + " node " + std::to_string(i) + (n.name.empty() ? "" : " '" + n.name + "'"); }

// The activation's parameters as the executor takes them (its ONNX defaults); Gelu's alpha
// is 1 for approximate=tanh. A reason when the node cannot be a step.
std::optional<std::string> activation_params(const Graph& g, const Node& n, std::int64_t opset, Step& s) {
  const std::string& op = n.op_type;
  if (op == "LeakyRelu") s.alpha = float_attr(n, "alpha", 0.01f);
  else if (op == "Elu" || op == "Celu") s.alpha = float_attr(n, "alpha", 1.0f);
  else if (op == "Selu") s.alpha = float_attr(n, "alpha", 1.67326319217681884765625f), s.beta = float_attr(n, "gamma", 1.05070102214813232421875f);
  else if (op == "HardSigmoid") s.alpha = float_attr(n, "alpha", 0.2f), s.beta = float_attr(n, "beta", 0.5f);
  else if (op == "Gelu") {
    const auto it = n.attrs.find("approximate");
    s.alpha = it != n.attrs.end() && it->second.s == "tanh" ? 1.0f : 0.0f;
  } else if (op == "Clip") {
    return clip_bounds(g, n, opset, s.alpha, s.beta);
  }
  return std::nullopt;
}

}  // namespace

Status eltwise_fusion(Model& m, const OptimizeOptions&, PassReport& report) {
  Graph& g = m.graph;
  const std::int64_t opset = m.opsets.count("") ? m.opsets.at("") : 0;
  const std::vector<int> reader = sole_readers(g);
  std::vector<char> keep(g.nodes.size(), 1), absorbed(g.nodes.size(), 0);
  const auto type = [&](ValueId v) -> const ValueType& { return g.values[static_cast<std::size_t>(v)].type; };
  const auto sole_reader = [&](ValueId v) { return reader[static_cast<std::size_t>(v)]; };

  // Node n as a step on the running value v (kNoValue: n starts the chain, picking v); the
  // fused node's inputs so far in `inputs` (input 0 is x). A reason when it cannot be one.
  const auto as_step = [&](const Node& n, ValueId& v, std::vector<ValueId>& inputs, Step& s) -> std::optional<std::string> {
    const auto f = fusible().find(n.op_type);
    if (!n.domain.empty() || f == fusible().end() || n.outputs.size() != 1 || n.outputs[0] == kNoValue) return "not an elementwise op";
    if (type(n.outputs[0]).elem != ElemType::kF32) return "its output is not f32";
    s.op = n.op_type;
    if (f->second != Kind::kBinary) {
      if (n.inputs.empty() || n.inputs[0] == kNoValue) return "no input";
      if (v == kNoValue) {
        v = n.inputs[0];
        inputs.push_back(v);
      }
      if (n.inputs[0] != v) return "it does not read the running value";
      if (type(v).elem != ElemType::kF32) return "its input is not f32";
      if (f->second == Kind::kActivation) return activation_params(g, n, opset, s);
      return std::nullopt;
    }
    if (n.inputs.size() != 2 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue) return "not two inputs";
    if (n.inputs[0] == n.inputs[1]) return "both inputs are one value";
    if (v == kNoValue) {  // the chain starts here: x is the input the other one fits into
      v = fits(type(n.inputs[1]), type(n.inputs[0])) ? n.inputs[0] : n.inputs[1];
      inputs.push_back(v);
    }
    const int at = n.inputs[0] == v ? 0 : n.inputs[1] == v ? 1 : -1;
    if (at < 0) return "it does not read the running value";
    const ValueId o = n.inputs[static_cast<std::size_t>(1 - at)];
    if (!fits(type(o), type(v))) return "its other input " + to_text(type(o)) + " is not known to broadcast into " + to_text(type(v));
    auto k = std::find(inputs.begin() + 1, inputs.end(), o);
    if (k == inputs.end()) {
      if (inputs.size() > 4) return "a fifth operand (at most four)";
      inputs.push_back(o);
      k = inputs.end() - 1;
    }
    const auto index = static_cast<std::int64_t>(k - inputs.begin());
    s.operand = at == 0 ? index : -index;
    return std::nullopt;
  };

  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (absorbed[i]) continue;
    std::vector<ValueId> inputs;
    ValueId v = kNoValue;
    Step first;
    if (as_step(g.nodes[i], v, inputs, first)) continue;  // not a start
    std::vector<Step> steps{first};
    std::vector<std::size_t> chain{i};
    v = g.nodes[i].outputs[0];
    std::string refusal;
    for (int next = sole_reader(v); next >= 0 && !absorbed[static_cast<std::size_t>(next)]; next = sole_reader(v)) {
      const Node& n = g.nodes[static_cast<std::size_t>(next)];
      Step s;
      std::vector<ValueId> tried = inputs;
      if (const auto why = as_step(n, v, tried, s)) {
        if (fusible().count(n.op_type) && n.domain.empty()) refusal = label(n, static_cast<std::size_t>(next)) + ": " + *why;
        break;
      }
      inputs = std::move(tried);
      steps.push_back(s);
      chain.push_back(static_cast<std::size_t>(next));
      v = n.outputs[0];
    }
    if (chain.size() < 2) {
      if (!refusal.empty()) report.refused.push_back(label(g.nodes[i], i) + " + " + refusal);
      continue;
    }
    Node fused;
    fused.name = g.nodes[chain.back()].name;
    fused.op_type = "FusedElementwise";
    fused.domain = kTesseraDomain;
    fused.inputs = inputs;
    fused.outputs = {v};
    Attribute ops, operands, alphas, betas;
    ops.kind = Attribute::Kind::kStrings;
    operands.kind = Attribute::Kind::kInts;
    alphas.kind = betas.kind = Attribute::Kind::kFloats;
    std::string parts;
    for (const Step& s : steps) {
      ops.strings.push_back(s.op);
      operands.ints.push_back(s.operand);
      alphas.floats.push_back(s.alpha);
      betas.floats.push_back(s.beta);
      parts += (parts.empty() ? "" : " + ") + s.op;
    }
    fused.attrs["ops"] = ops;
    fused.attrs["operands"] = operands;
    fused.attrs["alphas"] = alphas;
    fused.attrs["betas"] = betas;
    for (std::size_t k : chain) absorbed[k] = 1, keep[k] = 0;
    keep[chain.back()] = 1;
    g.nodes[chain.back()] = std::move(fused);  // every input is defined by the chain's last place
    report.applied.push_back(parts + " -> FusedElementwise '" + g.values[static_cast<std::size_t>(v)].name + "'" +
                             (refusal.empty() ? "" : " (stopped at " + refusal + ")"));
    report.changes += static_cast<int>(chain.size());
  }
  compact(g, keep);
  if (report.changes > 0 && !m.opsets.count(kTesseraDomain)) m.opsets[kTesseraDomain] = 1;
  return Status::ok();
}

}  // namespace tessera::graph::passes
