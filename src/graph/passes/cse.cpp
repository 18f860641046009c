// cse: common-subexpression elimination. Constants with the same element type, dims and bytes
// become one (not the defaults of graph inputs, which a caller may replace); then a node with
// the same op, domain, attributes and inputs as an earlier one is dropped and its uses read the
// earlier node's outputs. Left alone: ops whose outputs are random (the Random* family,
// Bernoulli, Multinomial, Dropout), nodes with subgraphs, and nodes whose outputs are graph
// outputs (their names must stay) or read by a subgraph.
#include <cstring>
#include <map>

#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

bool is_random(const Node& n) {
  return n.domain.empty() && (n.op_type.rfind("Random", 0) == 0 || n.op_type == "Bernoulli" ||
                              n.op_type == "Multinomial" || n.op_type == "Dropout");
}

void put(std::string& k, const void* p, std::size_t n) { k.append(static_cast<const char*>(p), n); }
template <typename T>
void put(std::string& k, const T& v) {
  put(k, &v, sizeof v);
}
void put_str(std::string& k, const std::string& s) {
  put(k, s.size());
  k += s;
}

void put_constant(std::string& k, const Constant& c) {
  put(k, static_cast<int>(c.elem));
  put(k, c.dims.size());
  for (std::int64_t d : c.dims) put(k, d);
  put(k, c.bytes.size());
  put(k, c.bytes.data(), c.bytes.size());
  put(k, c.strings.size());
  for (const std::string& s : c.strings) put_str(k, s);
}

// The attribute's value as bytes (floats by their bits: -0 and 0 differ, NaN equals itself);
// false for a subgraph, which this pass does not compare.
bool put_attribute(std::string& k, const Attribute& a) {
  put(k, static_cast<int>(a.kind));
  switch (a.kind) {
    case Attribute::Kind::kFloat: put(k, a.f); return true;
    case Attribute::Kind::kInt: put(k, a.i); return true;
    case Attribute::Kind::kString: put_str(k, a.s); return true;
    case Attribute::Kind::kFloats:
      put(k, a.floats.size());
      put(k, a.floats.data(), a.floats.size() * sizeof(float));
      return true;
    case Attribute::Kind::kInts:
      put(k, a.ints.size());
      put(k, a.ints.data(), a.ints.size() * sizeof(std::int64_t));
      return true;
    case Attribute::Kind::kStrings:
      put(k, a.strings.size());
      for (const std::string& s : a.strings) put_str(k, s);
      return true;
    case Attribute::Kind::kTensor:
      if (!a.t) return false;
      put_constant(k, *a.t);
      return true;
    case Attribute::Kind::kTensors:
      put(k, a.tensors.size());
      for (const auto& t : a.tensors) {
        if (!t) return false;
        put_constant(k, *t);
      }
      return true;
    case Attribute::Kind::kType: return false;
    case Attribute::Kind::kGraph:
    case Attribute::Kind::kGraphs: return false;
  }
  return false;
}

}  // namespace

Status cse(Model& m, const OptimizeOptions&, PassReport& report) {
  Graph& g = m.graph;
  const std::set<std::string> captured = captured_names(g);
  std::vector<char> is_output(g.values.size(), 0), is_input(g.values.size(), 0);
  for (ValueId v : g.outputs) is_output[static_cast<std::size_t>(v)] = 1;
  for (ValueId v : g.inputs) is_input[static_cast<std::size_t>(v)] = 1;
  const auto pinned = [&](ValueId v) {
    return is_output[static_cast<std::size_t>(v)] || captured.count(g.values[static_cast<std::size_t>(v)].name);
  };

  // Equal constants: the first of each kind stands for the others.
  std::map<std::string, ValueId> constants;
  for (ValueId v : g.initializers) {
    const Value& val = g.values[static_cast<std::size_t>(v)];
    if (!val.constant || is_input[static_cast<std::size_t>(v)] || pinned(v)) continue;
    std::string key;
    put_constant(key, *val.constant);
    const auto [it, fresh] = constants.emplace(std::move(key), v);
    if (fresh) continue;
    replace_uses(g, v, it->second);
    ++report.changes;
  }

  // Equal nodes, in order: inputs already point at the survivors of earlier merges.
  std::map<std::string, std::size_t> seen;
  std::vector<char> keep(g.nodes.size(), 1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (is_random(n) || n.outputs.empty()) continue;
    bool ok = true;
    for (ValueId v : n.outputs) ok = ok && v != kNoValue && !pinned(v);
    if (!ok) continue;
    std::string key;
    put_str(key, n.domain);
    put_str(key, n.op_type);
    put(key, n.inputs.size());
    for (ValueId v : n.inputs) put(key, v);
    put(key, n.outputs.size());
    for (const auto& [name, a] : n.attrs) {
      put_str(key, name);
      ok = ok && put_attribute(key, a);
    }
    if (!ok) continue;
    const auto [it, fresh] = seen.emplace(std::move(key), i);
    if (fresh) continue;
    const Node& first = g.nodes[it->second];
    for (std::size_t k = 0; k < n.outputs.size(); ++k) replace_uses(g, n.outputs[k], first.outputs[k]);
    keep[i] = 0;
    ++report.changes;
  }
  compact(g, keep);
  return Status::ok();
}

}  // namespace tessera::graph::passes
