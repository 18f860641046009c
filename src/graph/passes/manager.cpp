// The pass list, optimize() (order, levels, disabled names, verify after each, dumps) and the
// graph edits the passes share.
#include <cstring>
#include <fstream>
#include <limits>
#include <iomanip>
#include <map>
#include <sstream>

#include "pass.hpp"

namespace tessera::graph {
namespace {

struct Entry {
  PassInfo info;
  passes::PassFn run;
};

const std::vector<Entry>& entries() {
  static const Entry dead_code = {{"dead-code", 1, "remove nodes whose outputs nothing reads, and unread constants"}, &passes::dead_code};
  static const std::vector<Entry> e = {
      dead_code,  // first, and last again for what the others leave unread
      {{"identity", 1, "let the uses of Identity, inference Dropout and same-type Cast read their input"}, &passes::identity},
      {{"constant-folding", 1, "evaluate nodes whose inputs are all constants; Shape and Size of fully known dims"},
       &passes::constant_folding},
      {{"simplify", 1, "merge Transpose and Reshape chains; drop identity Transposes and no-op reshapes; Pow(x, 2) -> Mul(x, x)"}, &passes::simplify},
      {{"cse", 1, "merge equal constants and nodes computing the same op on the same inputs"}, &passes::cse},
      {{"layernorm-fusion", 2, "layer normalisation written out in ReduceMean, Sub, Mul, Add, Sqrt, Div into LayerNormalization"},
       &passes::layernorm_fusion},
      {{"conv-fusion", 2, "Conv [+ Add residual] [+ activation] into tessera.FusedConv"}, &passes::conv_fusion},
      {{"eltwise-fusion", 2, "chains of elementwise f32 ops into tessera.FusedElementwise (one pass over memory)"},
       &passes::eltwise_fusion},
      {{"layout", 2, "channels-last regions around the convolutions that run faster so; Transposes only at their borders"},
       &passes::layout},
      dead_code,
  };
  return e;
}

Status dump(const OptimizeOptions& o, int step, const std::string& pass, const char* when, const Model& m) {
  std::ostringstream name;
  name << std::setw(2) << std::setfill('0') << step << "-" << pass << "-" << when << ".txt";
  std::ofstream out(o.dump_dir / name.str());
  out << to_text(m);
  if (!out) return io_error("optimize: writing the dump '" + (o.dump_dir / name.str()).string() + "' failed");
  return Status::ok();
}

}  // namespace

const std::vector<PassInfo>& pass_list() {
  static const std::vector<PassInfo> v = [] {
    std::vector<PassInfo> r;
    for (const Entry& e : entries()) {
      bool seen = false;
      for (const PassInfo& p : r) seen = seen || p.name == e.info.name;
      if (!seen) r.push_back(e.info);
    }
    return r;
  }();
  return v;
}

Result<std::vector<PassReport>> optimize(Model& m, const OptimizeOptions& o) {
  if (o.level < 0 || o.level > 3) return invalid_argument("optimize: level " + std::to_string(o.level) + " (0 to 3)");
  for (const std::string& name : o.disabled) {
    bool known = false;
    for (const PassInfo& p : pass_list()) known = known || p.name == name;
    if (!known) {
      std::string names;
      for (const PassInfo& p : pass_list()) names += (names.empty() ? "" : ", ") + p.name;
      return invalid_argument("optimize: no pass is named '" + name + "' (passes: " + names + ")");
    }
  }
  if (!o.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.dump_dir, ec);
    if (ec) return io_error("optimize: cannot make the dump folder '" + o.dump_dir.string() + "': " + ec.message());
  }
  Model work = m;
  std::vector<PassReport> reports;
  int step = 0;
  for (const Entry& e : entries()) {
    if (e.info.level > o.level || o.disabled.count(e.info.name)) continue;
    ++step;
    PassReport r;
    r.pass = e.info.name;
    Model before;
    if (!o.dump_dir.empty()) before = work;
    TESSERA_RETURN_IF_ERROR(e.run(work, o, r).with_context("optimize: pass " + e.info.name));
    TESSERA_RETURN_IF_ERROR(verify(work).with_context("optimize: after pass " + e.info.name));
    if (!o.dump_dir.empty() && r.changes > 0) {
      TESSERA_RETURN_IF_ERROR(dump(o, step, e.info.name, "before", before));
      TESSERA_RETURN_IF_ERROR(dump(o, step, e.info.name, "after", work));
    }
    reports.push_back(std::move(r));
  }
  m = std::move(work);
  return reports;
}

namespace passes {

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue) ++uses[static_cast<std::size_t>(v)];
  for (ValueId v : g.outputs) ++uses[static_cast<std::size_t>(v)];
  return uses;
}

namespace {
void collect_captures(const Graph& g, std::set<std::string>& names) {
  for (ValueId v : g.captures) names.insert(g.values[static_cast<std::size_t>(v)].name);
  for (const Node& n : g.nodes)
    for (const auto& [k, a] : n.attrs) {
      if (a.g) collect_captures(*a.g, names);
      for (const auto& sg : a.graphs) collect_captures(*sg, names);
    }
}
}  // namespace

std::set<std::string> captured_names(const Graph& g) {
  std::set<std::string> names;
  for (const Node& n : g.nodes)
    for (const auto& [k, a] : n.attrs) {
      if (a.g) collect_captures(*a.g, names);
      for (const auto& sg : a.graphs) collect_captures(*sg, names);
    }
  return names;
}

std::vector<int> sole_readers(const Graph& g) {
  const std::vector<int> uses = use_counts(g);
  const std::set<std::string> captured = captured_names(g);
  std::vector<int> reader(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].inputs)
      if (v != kNoValue) reader[static_cast<std::size_t>(v)] = static_cast<int>(i);
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (uses[v] != 1 || captured.count(g.values[v].name)) reader[v] = -1;  // use_counts counts graph outputs
  return reader;
}

void replace_uses(Graph& g, ValueId from, ValueId to) {
  for (Node& n : g.nodes)
    for (ValueId& v : n.inputs)
      if (v == from) v = to;
}

void compact(Graph& g, const std::vector<char>& keep) {
  std::vector<Node> nodes;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (keep[i]) nodes.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(nodes);
  const std::set<std::string> captured = captured_names(g);
  std::vector<char> live(g.values.size(), 0);
  for (ValueId v : g.inputs) live[static_cast<std::size_t>(v)] = 1;
  for (ValueId v : g.outputs) live[static_cast<std::size_t>(v)] = 1;
  for (ValueId v : g.captures) live[static_cast<std::size_t>(v)] = 1;
  for (const Node& n : g.nodes) {
    for (ValueId v : n.inputs)
      if (v != kNoValue) live[static_cast<std::size_t>(v)] = 1;
    for (ValueId v : n.outputs)
      if (v != kNoValue) live[static_cast<std::size_t>(v)] = 1;
  }
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (captured.count(g.values[v].name)) live[v] = 1;
  std::vector<ValueId> remap(g.values.size(), kNoValue);
  std::vector<Value> values;
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (live[v]) {
      remap[v] = static_cast<ValueId>(values.size());
      values.push_back(std::move(g.values[v]));
    }
  g.values = std::move(values);
  auto fix = [&](std::vector<ValueId>& ids, bool drop_dead) {
    std::vector<ValueId> r;
    for (ValueId v : ids) {
      const ValueId m = v == kNoValue ? kNoValue : remap[static_cast<std::size_t>(v)];
      if (m != kNoValue || !drop_dead) r.push_back(m);
    }
    ids = std::move(r);
  };
  fix(g.inputs, true);
  fix(g.outputs, true);
  fix(g.captures, true);
  fix(g.initializers, true);
  for (Value& v : g.values) v.producer = -1;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    fix(g.nodes[i].inputs, false);
    fix(g.nodes[i].outputs, false);
    for (ValueId v : g.nodes[i].outputs)
      if (v != kNoValue) g.values[static_cast<std::size_t>(v)].producer = static_cast<int>(i);
  }
}

ValueId add_value(Graph& g, const std::string& name, ValueType type) {
  std::string n = name;
  for (int k = 1; g.find(n) != kNoValue; ++k) n = name + "_" + std::to_string(k);
  Value v;
  v.name = n;
  v.type = std::move(type);
  g.values.push_back(std::move(v));
  return static_cast<ValueId>(g.values.size() - 1);
}

ValueId add_constant(Graph& g, const std::string& name, ElemType elem, const std::vector<std::int64_t>& dims, const void* data, std::size_t bytes) {
  std::vector<Dim> shape;
  for (std::int64_t d : dims) shape.push_back(Dim{d, {}});
  const ValueId id = add_value(g, name, ValueType{elem, std::move(shape)});
  auto c = std::make_shared<Constant>();
  c->elem = elem;
  c->dims = dims;
  c->bytes.resize(bytes);
  if (bytes > 0) std::memcpy(c->bytes.data(), data, bytes);
  g.values[static_cast<std::size_t>(id)].constant = std::move(c);
  g.initializers.push_back(id);
  return id;
}

std::optional<double> scalar_constant(const Graph& g, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& val = g.values[static_cast<std::size_t>(v)];
  if (!val.constant || val.constant->numel() != 1) return std::nullopt;
  const std::byte* p = val.constant->bytes.data();
  switch (val.constant->elem) {
    case ElemType::kF32: {
      float f = 0;
      std::memcpy(&f, p, sizeof f);
      return f;
    }
    case ElemType::kF64: {
      double d = 0;
      std::memcpy(&d, p, sizeof d);
      return d;
    }
    case ElemType::kI32: {
      std::int32_t i = 0;
      std::memcpy(&i, p, sizeof i);
      return i;
    }
    case ElemType::kI64: {
      std::int64_t i = 0;
      std::memcpy(&i, p, sizeof i);
      return static_cast<double>(i);
    }
    default: return std::nullopt;
  }
}

float float_attr(const Node& n, const char* name, float dflt) {
  const auto it = n.attrs.find(name);
  return it == n.attrs.end() ? dflt : it->second.f;
}

// Clip's bounds from its attributes (before opset 11) or constant inputs, or a reason why not.
std::optional<std::string> clip_bounds(const Graph& g, const Node& n, std::int64_t opset, float& lo, float& hi) {
  lo = -std::numeric_limits<float>::infinity();
  hi = std::numeric_limits<float>::infinity();
  if (opset < 11) {
    lo = float_attr(n, "min", lo);
    hi = float_attr(n, "max", hi);
    return std::nullopt;
  }
  for (std::size_t k = 1; k < 3 && k < n.inputs.size(); ++k) {
    if (n.inputs[k] == kNoValue) continue;
    const Value& v = g.values[static_cast<std::size_t>(n.inputs[k])];
    if (!v.constant || v.constant->elem != ElemType::kF32 || v.constant->numel() != 1) return "Clip's bounds are not f32 constants";
    float b = 0;
    std::memcpy(&b, v.constant->bytes.data(), sizeof b);
    (k == 1 ? lo : hi) = b;
  }
  return std::nullopt;
}

}  // namespace passes
}  // namespace tessera::graph
