// dead-code: nodes none of whose outputs is read (by a node, a graph output or a subgraph),
// found from the last node back so whole dead chains go; then every unread constant.
#include "pass.hpp"

namespace tessera::graph::passes {

Status dead_code(Model& m, const OptimizeOptions&, PassReport& report) {
  Graph& g = m.graph;
  std::vector<int> uses = use_counts(g);
  const std::set<std::string> captured = captured_names(g);
  std::vector<char> keep(g.nodes.size(), 1);
  for (std::size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool read = false;
    for (ValueId v : n.outputs)
      read = read || (v != kNoValue && (uses[static_cast<std::size_t>(v)] > 0 || captured.count(g.values[static_cast<std::size_t>(v)].name)));
    if (read) continue;
    keep[i] = 0;
    ++report.changes;
    for (ValueId v : n.inputs)
      if (v != kNoValue) --uses[static_cast<std::size_t>(v)];
  }
  const std::size_t constants = g.initializers.size();
  compact(g, keep);
  report.changes += static_cast<int>(constants - g.initializers.size());
  return Status::ok();
}

}  // namespace tessera::graph::passes
