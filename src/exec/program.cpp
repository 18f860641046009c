// Programs (program.hpp): compiling a graph for the executor and running its nodes.
#include "program.hpp"

#include <algorithm>
#include <climits>

#include "tessera/graph/passes.hpp"

namespace tessera::exec::detail {

std::string node_name(const graph::Node& n, std::size_t i) {
  return "node " + std::to_string(i) + (n.name.empty() ? "" : " '" + n.name + "'") + " (" + n.op_type + ")";
}

Result<std::unique_ptr<Program>> compile(const graph::Graph& g, std::int64_t opset, const std::string& what) {
  auto p = std::make_unique<Program>();
  p->graph = &g;
  p->opset = opset;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    if (!n.domain.empty() && n.domain != graph::kTesseraDomain)
      return unsupported(what + ": " + node_name(n, i) + ": the domain '" + n.domain + "' is not supported");
    const Kernel k = find_kernel(n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type);
    if (!k) return unsupported(what + ": " + node_name(n, i) + ": the op " + n.op_type + " is not supported yet");
    p->kernels.push_back(k);
    p->outer.push_back(graph::subgraph_reads(g, n));
  }
  p->constants.resize(g.values.size());
  p->is_constant.assign(g.values.size(), 0);
  for (graph::ValueId v : g.initializers) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    Tensor& t = p->constants[static_cast<std::size_t>(v)];
    TESSERA_ASSIGN_OR_RETURN(t, constant_tensor(*val.constant, what + ": constant '" + val.name + "'"));
    p->constant_buffers.insert(t.buffer().get());
    p->is_constant[static_cast<std::size_t>(v)] = 1;
  }
  for (graph::ValueId v : g.inputs) p->is_constant[static_cast<std::size_t>(v)] = 0;  // a default an input may replace
  p->caches.resize(g.nodes.size());
  p->last_use.assign(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (graph::ValueId v : g.nodes[i].inputs)
      if (v != graph::kNoValue) p->last_use[static_cast<std::size_t>(v)] = static_cast<int>(i);
    for (graph::ValueId v : p->outer[i]) p->last_use[static_cast<std::size_t>(v)] = static_cast<int>(i);
  }
  for (graph::ValueId v : g.outputs) p->last_use[static_cast<std::size_t>(v)] = INT_MAX;
  return p;
}

Status run_nodes(Program& p, dnn::Handle& h, std::vector<Tensor>& vals, NodeHooks* hooks) {
  const graph::Graph& g = *p.graph;
  const auto at = [](graph::ValueId v) { return static_cast<std::size_t>(v); };
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    const auto value = [&](graph::ValueId v) -> Result<const Tensor*> {
      if (!vals[at(v)].defined()) return internal_error(node_name(n, i) + ": input '" + g.values[at(v)].name + "' has no value");
      return &vals[at(v)];
    };
    std::vector<const Tensor*> in;
    std::vector<char> constant;
    for (graph::ValueId v : n.inputs) {
      constant.push_back(v != graph::kNoValue && p.is_constant[at(v)]);
      if (v == graph::kNoValue) {
        in.push_back(nullptr);
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(const Tensor* t, value(v));
      in.push_back(t);
    }
    std::vector<Tensor> out(n.outputs.size());
    KernelCall call{n, p.opset, std::move(in), out, h, std::move(constant), p.caches[i]};
    for (graph::ValueId v : p.outer[i]) {
      TESSERA_ASSIGN_OR_RETURN(const Tensor* t, value(v));
      call.captured.emplace_back(g.values[at(v)].name, t);
    }
    if (hooks) hooks->before(i, call);
    if (const Status st = p.kernels[i](call); !st.is_ok()) return Status(st.code(), node_name(n, i) + ": " + st.message());
    for (std::size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k] != graph::kNoValue && !out[k].defined())
        return internal_error(node_name(n, i) + " left output " + std::to_string(k) + " empty");
    if (hooks) TESSERA_RETURN_IF_ERROR(hooks->after(i, call));
    for (std::size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k] != graph::kNoValue) vals[at(n.outputs[k])] = std::move(out[k]);
    // Dropping a value frees a tensor of its own; a slot's memory stays with the arena.
    const auto drop = [&](graph::ValueId v) {
      if (v != graph::kNoValue && p.last_use[at(v)] == static_cast<int>(i)) vals[at(v)] = Tensor();
    };
    std::for_each(n.inputs.begin(), n.inputs.end(), drop);
    std::for_each(p.outer[i].begin(), p.outer[i].end(), drop);
  }
  return Status::ok();
}

Result<std::vector<Tensor>> run_subgraph(Program& p, dnn::Handle& h, std::vector<Tensor> inputs, const Captured& captured) {
  const graph::Graph& g = *p.graph;
  if (inputs.size() != g.inputs.size())
    return invalid_argument("subgraph '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " inputs, given " + std::to_string(inputs.size()));
  std::vector<Tensor> vals = p.constants;
  for (std::size_t k = 0; k < inputs.size(); ++k) vals[static_cast<std::size_t>(g.inputs[k])] = std::move(inputs[k]);
  for (graph::ValueId c : g.captures) {
    const std::string& name = g.values[static_cast<std::size_t>(c)].name;
    const auto it = std::find_if(captured.begin(), captured.end(), [&](const auto& e) { return e.first == name; });
    if (it == captured.end() || !it->second) return internal_error("subgraph '" + g.name + "': the captured value '" + name + "' is not given");
    vals[static_cast<std::size_t>(c)] = *it->second;
  }
  TESSERA_RETURN_IF_ERROR(run_nodes(p, h, vals).with_context("subgraph '" + g.name + "'"));
  std::vector<Tensor> out;
  for (graph::ValueId v : g.outputs) {
    Tensor t = vals[static_cast<std::size_t>(v)];
    if (!t.defined()) return internal_error("subgraph '" + g.name + "': output '" + g.values[static_cast<std::size_t>(v)].name + "' has no value");
    if (p.constant_buffers.count(t.buffer().get())) {
      TESSERA_ASSIGN_OR_RETURN(t, t.clone());
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tessera::exec::detail
