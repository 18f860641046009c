// constant-folding: a node of the ai.onnx domain whose inputs are all constants (initializers
// that are not graph inputs, which run() could replace) is evaluated once by the executor's
// kernels and its outputs become constants; Shape and Size of a value whose dims are all
// known become constants without evaluating anything. Random ops, ops with subgraphs and
// results over `fold_limit` elements stay.
#include <cstring>

#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

bool deterministic(const Node& n) {
  for (const char* op : {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"})
    if (n.op_type == op) return false;
  for (const auto& [k, a] : n.attrs)
    if (a.g || !a.graphs.empty()) return false;
  return true;
}

// Shape (with opset 15's start/end) or Size of a fully known shape, else null.
std::shared_ptr<Constant> shape_constant(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.inputs[0] == kNoValue) return nullptr;
  const auto& shape = g.values[static_cast<std::size_t>(n.inputs[0])].type.shape;
  if (!shape) return nullptr;
  std::vector<std::int64_t> dims;
  for (const Dim& d : *shape) {
    if (!d.has_size()) return nullptr;
    dims.push_back(d.size);
  }
  std::vector<std::int64_t> v;
  if (n.op_type == "Size") {
    std::int64_t p = 1;
    for (std::int64_t d : dims) p *= d;
    v = {p};
  } else {
    const auto r = static_cast<std::int64_t>(dims.size());
    auto at = [&](const char* name, std::int64_t dflt) {
      const auto it = n.attrs.find(name);
      std::int64_t a = it == n.attrs.end() ? dflt : it->second.i;
      if (a < 0) a += r;
      return std::clamp<std::int64_t>(a, 0, r);
    };
    const std::int64_t start = at("start", 0), end = at("end", r);
    for (std::int64_t i = start; i < end; ++i) v.push_back(dims[static_cast<std::size_t>(i)]);
  }
  auto c = std::make_shared<Constant>();
  c->elem = ElemType::kI64;
  if (n.op_type == "Shape") c->dims = {static_cast<std::int64_t>(v.size())};
  c->bytes.resize(v.size() * sizeof(std::int64_t));
  if (!v.empty()) std::memcpy(c->bytes.data(), v.data(), c->bytes.size());
  return c;
}

}  // namespace

Status constant_folding(Model& m, const OptimizeOptions& o, PassReport& report) {
  Graph& g = m.graph;
  const std::int64_t opset = m.opsets.count("") ? m.opsets.at("") : 0;
  std::vector<char> is_input(g.values.size(), 0);
  for (ValueId v : g.inputs) is_input[static_cast<std::size_t>(v)] = 1;
  std::vector<char> keep(g.nodes.size(), 1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.domain.empty() || !deterministic(n)) continue;
    std::vector<std::shared_ptr<const Constant>> results;
    if ((n.op_type == "Shape" || n.op_type == "Size") && n.outputs.size() == 1) {
      if (auto c = shape_constant(g, n)) results.push_back(std::move(c));
    }
    if (results.empty()) {
      std::vector<const Constant*> in;
      bool all = o.evaluate != nullptr;
      for (ValueId v : n.inputs) {
        if (v == kNoValue) {
          in.push_back(nullptr);
          continue;
        }
        const Value& val = g.values[static_cast<std::size_t>(v)];
        all = all && val.constant && !is_input[static_cast<std::size_t>(v)];
        in.push_back(val.constant.get());
      }
      if (!all) continue;
      Result<std::vector<Constant>> r = o.evaluate(n, opset, in);
      if (!r.is_ok() || r.value().size() != n.outputs.size()) continue;  // the node stays, to fail (or not) at run time
      bool small = true;
      for (const Constant& c : r.value()) small = small && c.numel() <= o.fold_limit;
      if (!small) continue;
      for (Constant& c : r.value()) results.push_back(std::make_shared<const Constant>(std::move(c)));
    }
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      const ValueId v = n.outputs[k];
      if (v == kNoValue) continue;
      Value& val = g.values[static_cast<std::size_t>(v)];
      val.constant = results[k];
      val.type.elem = results[k]->elem;
      std::vector<Dim> dims;
      for (std::int64_t d : results[k]->dims) dims.push_back(Dim{d, {}});
      val.type.shape = std::move(dims);
      g.initializers.push_back(v);
    }
    keep[i] = 0;
    ++report.changes;
  }
  compact(g, keep);
  return Status::ok();
}

}  // namespace tessera::graph::passes
