// training_form (forms.hpp).
#include "forms.hpp"

#include <algorithm>

#include "tessera/graph/passes.hpp"

namespace tessera::train::detail {

Result<TrainingForm> training_form(const graph::Model& m) {
  TrainingForm f;
  f.model = m;
  f.inference = m;
  graph::Graph& g = f.model.graph;
  const std::int64_t opset = m.opsets.count("") ? m.opsets.at("") : graph::kMaxOpset;
  const auto make_input = [](graph::Graph& gr, graph::ValueId v) {
    if (std::find(gr.inputs.begin(), gr.inputs.end(), v) == gr.inputs.end()) gr.inputs.push_back(v);
  };
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op_type != "BatchNormalization" || !g.nodes[i].domain.empty()) continue;
    const std::string what = "fit: node " + std::to_string(i) + " '" + g.nodes[i].name + "' (BatchNormalization)";
    if (opset < 14) return unsupported(what + ": training mode needs opset 14 or newer (the model's is " + std::to_string(opset) + ")");
    if (g.nodes[i].inputs.size() < 5) return invalid_argument(what + ": it has no running statistics");
    for (std::size_t k = 3; k < 5; ++k) {
      const graph::ValueId v = g.nodes[i].inputs[k];
      if (v == graph::kNoValue || !g.values[static_cast<std::size_t>(v)].constant)
        return unsupported(what + ": its running statistics are not initializers");
      const std::string name = g.values[static_cast<std::size_t>(v)].name;  // a copy: add_value grows the list
      if (std::find(f.state.begin(), f.state.end(), name) != f.state.end()) return unsupported(what + ": running statistics shared with another node");
      const graph::ValueId next = graph::passes::add_value(g, name + ".next", g.values[static_cast<std::size_t>(v)].type);
      g.values[static_cast<std::size_t>(next)].producer = static_cast<int>(i);
      graph::Node& n = g.nodes[i];
      if (n.outputs.size() < 3) n.outputs.resize(3, graph::kNoValue);
      if (n.outputs[k - 2] != graph::kNoValue) return unsupported(what + ": it already gives its running statistics");
      n.outputs[k - 2] = next;
      f.state.push_back(name);
      f.updates.push_back(g.values[static_cast<std::size_t>(next)].name);
      make_input(g, v);
      make_input(f.inference.graph, f.inference.graph.find(name));
    }
    g.nodes[i].attrs["training_mode"] = graph::int_attribute(1);
  }
  return f;
}

}  // namespace tessera::train::detail
