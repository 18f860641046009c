// identity: Identity, Dropout at inference (no training_mode input, its mask unread) and Cast
// to the type its input already has compute nothing; their uses read the input instead. A node
// whose output is a graph output (whose name must stay) or read by a subgraph is kept.
#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

bool is_identity(const Graph& g, const Node& n, const std::vector<int>& uses) {
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] == kNoValue || n.outputs.empty()) return false;
  if (n.op_type == "Identity") return true;
  if (n.op_type == "Dropout") {
    const bool training_input = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
    const bool mask_read = n.outputs.size() > 1 && n.outputs[1] != kNoValue && uses[static_cast<std::size_t>(n.outputs[1])] > 0;
    return !training_input && !mask_read;
  }
  if (n.op_type == "Cast") {
    const auto to = n.attrs.find("to");
    const ElemType in = g.values[static_cast<std::size_t>(n.inputs[0])].type.elem;
    return to != n.attrs.end() && in != ElemType::kUndefined && static_cast<int>(in) == to->second.i;
  }
  return false;
}

}  // namespace

Status identity(Model& m, const OptimizeOptions&, PassReport& report) {
  Graph& g = m.graph;
  const std::vector<int> uses = use_counts(g);
  const std::set<std::string> captured = captured_names(g);
  std::vector<char> is_output(g.values.size(), 0);
  for (ValueId v : g.outputs) is_output[static_cast<std::size_t>(v)] = 1;
  std::vector<char> keep(g.nodes.size(), 1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!is_identity(g, n, uses)) continue;
    const ValueId out = n.outputs[0];
    if (is_output[static_cast<std::size_t>(out)] || captured.count(g.values[static_cast<std::size_t>(out)].name)) continue;
    replace_uses(g, out, n.inputs[0]);
    keep[i] = 0;
    ++report.changes;
  }
  compact(g, keep);
  return Status::ok();
}

}  // namespace tessera::graph::passes
