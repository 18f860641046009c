// conv-fusion: Conv, then optionally an Add of a residual of the same dims, then optionally an
// activation, each read only by the next, become one tessera.FusedConv that applies bias,
// residual and activation as it writes the output (one pass over it instead of three). The
// fused node takes the place of the chain's last node and its output value (name and type).
// A candidate left alone is reported with the reason.
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

// The activations the convolution's epilogue applies: op -> whether it needs constant bounds (Clip).
const std::map<std::string, bool>& activations() {
  static const std::map<std::string, bool> a = {{"Relu", false},    {"LeakyRelu", false}, {"Clip", true},     {"Sigmoid", false},
                                                {"Tanh", false},    {"HardSigmoid", false}, {"HardSwish", false}};
  return a;
}

std::string label(const Node& n, std::size_t i) { return n.op_type + " node " + std::to_string(i) + (n.name.empty() ? "" : " '" + n.name + "'"); }

}  // namespace

Status conv_fusion(Model& m, const OptimizeOptions&, PassReport& report) {
  Graph& g = m.graph;
  const std::int64_t opset = m.opsets.count("") ? m.opsets.at("") : 0;
  const std::vector<int> reader = sole_readers(g);
  std::vector<char> keep(g.nodes.size(), 1), absorbed(g.nodes.size(), 0);
  auto sole_reader = [&](ValueId v) -> int {  // -1 also when that reader joined another fusion
    const int r = reader[static_cast<std::size_t>(v)];
    return r >= 0 && absorbed[static_cast<std::size_t>(r)] ? -1 : r;
  };
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& conv = g.nodes[i];
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1) continue;
    Node fused;
    fused.name = conv.name;
    fused.op_type = "FusedConv";
    fused.domain = kTesseraDomain;
    fused.attrs = conv.attrs;
    fused.inputs = conv.inputs;
    fused.inputs.resize(3, kNoValue);
    ValueId y = conv.outputs[0];
    std::vector<std::size_t> chain;  // the absorbed nodes
    std::string parts = "Conv";
    // The residual: Add(y, r) or Add(r, y) with r of y's dims.
    int next = sole_reader(y);
    if (next >= 0 && g.nodes[static_cast<std::size_t>(next)].op_type == "Add" && g.nodes[static_cast<std::size_t>(next)].domain.empty()) {
      const Node& add = g.nodes[static_cast<std::size_t>(next)];
      const ValueId r = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
      const ValueType& yt = g.values[static_cast<std::size_t>(y)].type;
      const ValueType& rt = g.values[static_cast<std::size_t>(r)].type;
      if (r == y) {
        report.refused.push_back(label(conv, i) + " + " + label(add, static_cast<std::size_t>(next)) + ": the Add adds the output to itself");
      } else if (!yt.shape || !rt.shape || *yt.shape != *rt.shape || yt.elem != rt.elem) {
        report.refused.push_back(label(conv, i) + " + " + label(add, static_cast<std::size_t>(next)) + ": the residual's type " + to_text(rt) +
                                 " is not known to equal the output's " + to_text(yt));
      } else {
        fused.inputs.push_back(r);
        chain.push_back(static_cast<std::size_t>(next));
        y = add.outputs[0];
        parts += " + Add";
        next = sole_reader(y);
      }
    }
    if (next >= 0) {
      const Node& act = g.nodes[static_cast<std::size_t>(next)];
      const auto a = activations().find(act.op_type);
      if (act.domain.empty() && a != activations().end()) {
        float alpha = float_attr(act, "alpha", act.op_type == "LeakyRelu" ? 0.01f : 0.2f), beta = float_attr(act, "beta", 0.5f);
        std::optional<std::string> why;
        if (act.op_type == "Clip") why = clip_bounds(g, act, opset, alpha, beta);
        if (why) {
          report.refused.push_back(label(conv, i) + " + " + label(act, static_cast<std::size_t>(next)) + ": " + *why);
        } else {
          Attribute s;
          s.kind = Attribute::Kind::kString;
          s.s = act.op_type;
          fused.attrs["activation"] = s;
          Attribute fa;
          fa.kind = Attribute::Kind::kFloat;
          fa.f = alpha;
          fused.attrs["activation_alpha"] = fa;
          fa.f = beta;
          fused.attrs["activation_beta"] = fa;
          chain.push_back(static_cast<std::size_t>(next));
          y = act.outputs[0];
          parts += " + " + act.op_type;
        }
      }
    }
    if (chain.empty()) continue;  // a Conv alone already fuses its bias
    fused.outputs = {y};
    keep[i] = 0;
    for (std::size_t k : chain) absorbed[k] = 1;
    for (std::size_t k = 0; k + 1 < chain.size(); ++k) keep[chain[k]] = 0;
    g.nodes[chain.back()] = std::move(fused);  // the chain's last place: every input is defined there
    report.applied.push_back(parts + " -> FusedConv '" + g.values[static_cast<std::size_t>(y)].name + "'");
    report.changes += static_cast<int>(chain.size()) + 1;
  }
  compact(g, keep);
  if (report.changes > 0 && !m.opsets.count(kTesseraDomain)) m.opsets[kTesseraDomain] = 1;
  return Status::ok();
}

}  // namespace tessera::graph::passes
