// Node signatures: how many inputs and outputs a node of a known op may have and which of them
// must be present, per opset (ai.onnx, from the ONNX schemas: onnx_signatures.inc) and for
// tessera's own ops. The passes, type inference and the kernels read a node's inputs by
// position; a model that breaks its op's signature is refused here, at import and by
// verify(), so none of them meets a Conv without X or an Add with one input.
#include <algorithm>
#include <string>
#include <string_view>

#include "tessera/graph.hpp"

namespace tessera::graph {
namespace {

struct Signature {
  std::string_view op;
  int since;
  int min_in, max_in;  // max -1: any number
  unsigned required_in;  // bit k: input k must be present (not "")
  int variadic_from;     // inputs from here on must all be present; -1: none
  int min_out, max_out;
  unsigned required_out;
};

constexpr Signature kOnnx[] = {
#include "onnx_signatures.inc"
};

// tessera's ops: those the passes make (conv-fusion, eltwise-fusion, layout, layernorm-fusion)
// and the training layer's gradients.
constexpr Signature kTessera[] = {
    {"ActivationGrad", 1, 2, 2, 0x3u, -1, 1, 1, 0x1u},      // X, dY
    {"AveragePool", 1, 1, 1, 0x1u, -1, 1, 1, 0x1u},         // channels-last
    {"BatchNormGrad", 1, 3, 3, 0x7u, -1, 1, 3, 0x0u},       // X, dY, scale -> [dX], [dScale], [dBias]
    {"BatchNormalization", 1, 5, 5, 0x1fu, -1, 1, 3, 0x1u},  // channels-last: X, scale, B, mean, var -> Y, [running mean, var]
    {"ConvGradData", 1, 3, 3, 0x7u, -1, 1, 1, 0x1u},        // dY, W, X's dims
    {"ConvGradWeight", 1, 3, 3, 0x7u, -1, 1, 1, 0x1u},      // X, dY, W's dims
    {"Dropout", 1, 3, 3, 0x7u, -1, 1, 2, 0x1u},             // X, ratio, offset -> Y, [mask] (fit's step-seeded dropout)
    {"FusedConv", 1, 2, 4, 0x3u, -1, 1, 1, 0x1u},           // X, W, [B], [residual]
    {"FusedElementwise", 1, 1, -1, 0x0u, 0, 1, 1, 0x1u},    // the chain's inputs
    {"GatherGrad", 1, 3, 3, 0x7u, -1, 1, 1, 0x1u},          // dY, indices, X's dims
    {"GlobalAveragePool", 1, 1, 1, 0x1u, -1, 1, 1, 0x1u},
    {"GlobalMaxPool", 1, 1, 1, 0x1u, -1, 1, 1, 0x1u},
    {"InstanceNormGrad", 1, 3, 3, 0x7u, -1, 1, 3, 0x0u},    // X, dY, scale -> [dX], [dScale], [dBias]
    {"LayerNormGrad", 1, 5, 5, 0x1fu, -1, 1, 3, 0x0u},      // X, dY, scale, mean, invstd -> [dX], [dScale], [dBias]
    {"LayerNormalization", 1, 2, 3, 0x3u, -1, 1, 3, 0x1u},  // X, scale, [bias]
    {"MaxPool", 1, 1, 1, 0x1u, -1, 1, 2, 0x1u},             // Y, [indices]
    {"NLLLossGrad", 1, 3, 3, 0x7u, -1, 1, 1, 0x1u},         // dLoss, X, target
    {"PoolGrad", 1, 2, 2, 0x3u, -1, 1, 1, 0x1u},            // X, dY
    {"RNNGrad", 1, 11, 11, 0x7u, -1, 1, 8, 0x0u},           // the node's 8 inputs, dY, dY_h, dY_c -> per input its gradient
    {"SoftmaxCrossEntropyLossGrad", 1, 3, 3, 0x7u, -1, 1, 1, 0x1u},  // dLoss, scores, labels
};

// The entry of `op` in force at `opset` in a table sorted by (op, since); null when none is.
template <std::size_t N>
const Signature* find(const Signature (&table)[N], std::string_view op, std::int64_t opset) {
  const auto first = std::lower_bound(std::begin(table), std::end(table), op, [](const Signature& s, std::string_view o) { return s.op < o; });
  const Signature* found = nullptr;
  for (auto it = first; it != std::end(table) && it->op == op && it->since <= opset; ++it) found = &*it;
  return found;
}

std::string count(std::size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

std::string range(int lo, int hi) {
  if (hi < 0) return std::to_string(lo) + " or more";
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
}

Status check_node(const Node& n, std::size_t index, std::int64_t opset, const std::string& where) {
  const bool onnx = n.domain.empty() || n.domain == "ai.onnx";
  const Signature* s = onnx ? find(kOnnx, n.op_type, opset) : n.domain == "tessera" ? find(kTessera, n.op_type, 1) : nullptr;
  if (!s) return Status::ok();  // an op it does not know: the kernels and passes check what they use
  const std::string label = (onnx ? n.op_type + "-" + std::to_string(s->since) : n.domain + "." + n.op_type);
  auto bad = [&](const std::string& m) {
    return invalid_argument(where + ": node " + std::to_string(index) + (n.name.empty() ? "" : " '" + n.name + "'") + " (" + label +
                            "): " + m);
  };
  const auto in = n.inputs.size(), out = n.outputs.size();
  if (in < static_cast<std::size_t>(s->min_in) || (s->max_in >= 0 && in > static_cast<std::size_t>(s->max_in)))
    return bad("has " + count(in, "input") + "; it takes " + range(s->min_in, s->max_in));
  if (out < static_cast<std::size_t>(s->min_out) || (s->max_out >= 0 && out > static_cast<std::size_t>(s->max_out)))
    return bad("has " + count(out, "output") + "; it gives " + range(s->min_out, s->max_out));
  for (std::size_t k = 0; k < in; ++k) {
    const bool required = (k < 32 && (s->required_in >> k) & 1u) || (s->variadic_from >= 0 && k >= static_cast<std::size_t>(s->variadic_from));
    if (required && n.inputs[k] == kNoValue) return bad("input " + std::to_string(k) + " is omitted; it is required");
  }
  for (std::size_t k = 0; k < out && k < 32; ++k)
    if ((s->required_out >> k) & 1u && n.outputs[k] == kNoValue) return bad("output " + std::to_string(k) + " is omitted; it is required");
  return Status::ok();
}

Status check_graph(const Graph& g, std::int64_t opset) {
  const std::string where = g.name.empty() ? "graph" : "graph '" + g.name + "'";
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    TESSERA_RETURN_IF_ERROR(check_node(n, i, opset, where));
    for (const auto& [name, a] : n.attrs) {
      if (a.kind == Attribute::Kind::kGraph && a.g) TESSERA_RETURN_IF_ERROR(check_graph(*a.g, opset));
      if (a.kind == Attribute::Kind::kGraphs)
        for (const auto& sg : a.graphs)
          if (sg) TESSERA_RETURN_IF_ERROR(check_graph(*sg, opset));
    }
  }
  return Status::ok();
}

}  // namespace

Status check_signatures(const Model& m) {
  const auto it = m.opsets.find("");
  return check_graph(m.graph, it == m.opsets.end() ? kMaxOpset : it->second);
}

}  // namespace tessera::graph
