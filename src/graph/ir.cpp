// The IR's small helpers and its verifier.
#include <set>
#include <string>
#include <unordered_map>

#include "tessera/graph.hpp"

namespace tessera::graph {
namespace {

struct TypeInfo {
  const char* name;
  int bits;
};
constexpr TypeInfo kTypes[kMaxElemType + 1] = {
    {"undefined", 0}, {"f32", 32},     {"u8", 8},          {"i8", 8},        {"u16", 16},
    {"i16", 16},      {"i32", 32},     {"i64", 64},        {"string", 0},    {"bool", 8},
    {"f16", 16},      {"f64", 64},     {"u32", 32},        {"u64", 64},      {"c64", 64},
    {"c128", 128},    {"bf16", 16},    {"f8e4m3fn", 8},    {"f8e4m3fnuz", 8}, {"f8e5m2", 8},
    {"f8e5m2fnuz", 8}, {"u4", 4},      {"i4", 4},          {"f4e2m1", 4},    {"f8e8m0", 8},
    {"u2", 2},        {"i2", 2},       {"f6e2m3", 6},      {"f6e3m2", 6},
};

bool in_range(ElemType t) { return static_cast<int>(t) >= 0 && static_cast<int>(t) <= kMaxElemType; }

// One graph's check with the names visible from its enclosing graphs.
class Verifier {
 public:
  explicit Verifier(const std::vector<std::set<std::string>>& outer) : outer_(outer) {}

  Status run(const Graph& g) {
    const std::string where = g.name.empty() ? "graph" : "graph '" + g.name + "'";
    const auto n = static_cast<ValueId>(g.values.size());
    auto bad = [&](std::string m) { return invalid_argument("verify: " + where + ": " + m); };
    auto valid = [&](ValueId v) { return v >= 0 && v < n; };
    std::set<std::string> names;
    for (const Value& v : g.values) {
      if (v.name.empty()) return bad("a value has no name");
      if (!names.insert(v.name).second) return bad("two values are named '" + v.name + "'");
      if (v.constant) TESSERA_RETURN_IF_ERROR(check_constant(*v.constant, "constant '" + v.name + "'", bad));
    }
    // Values defined before the first node: inputs, initializers, captures.
    std::vector<char> defined(g.values.size(), 0);
    auto define_source = [&](ValueId v, const char* what) -> Status {
      if (!valid(v)) return bad(std::string(what) + " id " + std::to_string(v) + " is out of range");
      const Value& val = g.values[static_cast<std::size_t>(v)];
      if (val.producer >= 0) return bad(std::string(what) + " '" + val.name + "' has a producer");
      defined[static_cast<std::size_t>(v)] = 1;
      return Status::ok();
    };
    for (ValueId v : g.inputs) TESSERA_RETURN_IF_ERROR(define_source(v, "input"));
    for (ValueId v : g.initializers) {
      TESSERA_RETURN_IF_ERROR(define_source(v, "initializer"));
      if (!g.values[static_cast<std::size_t>(v)].constant) return bad("initializer '" + g.values[static_cast<std::size_t>(v)].name + "' has no data");
    }
    for (ValueId v : g.captures) {
      TESSERA_RETURN_IF_ERROR(define_source(v, "capture"));
      const std::string& name = g.values[static_cast<std::size_t>(v)].name;
      bool found = false;
      for (const auto& scope : outer_) found = found || scope.count(name) != 0;
      if (!found) return bad("capture '" + name + "' is not defined in an enclosing graph");
    }
    std::vector<int> produced_by(g.values.size(), -1);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& node = g.nodes[i];
      const std::string what = "node " + std::to_string(i) + " '" + node.name + "' (" + node.op_type + ")";
      if (node.op_type.empty()) return bad(what + " has no op type");
      for (std::size_t k = 0; k < node.inputs.size(); ++k) {
        const ValueId v = node.inputs[k];
        if (v == kNoValue) continue;
        if (!valid(v)) return bad(what + ": input " + std::to_string(k) + " id " + std::to_string(v) + " is out of range");
        if (!defined[static_cast<std::size_t>(v)])
          return bad(what + ": input '" + g.values[static_cast<std::size_t>(v)].name + "' is used before it is defined");
      }
      // Subgraphs see every value defined so far.
      std::set<std::string> scope;
      for (std::size_t v = 0; v < g.values.size(); ++v)
        if (defined[v]) scope.insert(g.values[v].name);
      for (const auto& [key, attr] : node.attrs) {
        std::vector<const Graph*> subs;
        if (attr.kind == Attribute::Kind::kGraph && attr.g) subs.push_back(attr.g.get());
        if (attr.kind == Attribute::Kind::kGraphs)
          for (const auto& s : attr.graphs) subs.push_back(s.get());
        for (const Graph* s : subs) {
          std::vector<std::set<std::string>> inner = outer_;
          inner.push_back(scope);
          const Status st = Verifier(inner).run(*s);
          if (!st.is_ok()) return st.with_context(what + " attribute '" + key + "'");
        }
        if (attr.kind == Attribute::Kind::kTensor && attr.t)
          TESSERA_RETURN_IF_ERROR(check_constant(*attr.t, what + " attribute '" + key + "'", bad));
      }
      for (ValueId v : node.outputs) {
        if (v == kNoValue) continue;
        if (!valid(v)) return bad(what + ": output id " + std::to_string(v) + " is out of range");
        const auto u = static_cast<std::size_t>(v);
        if (defined[u]) return bad(what + ": output '" + g.values[u].name + "' is already defined");
        if (g.values[u].producer != static_cast<int>(i))
          return bad(what + ": output '" + g.values[u].name + "' names another producer");
        defined[u] = 1;
        produced_by[u] = static_cast<int>(i);
      }
    }
    for (std::size_t v = 0; v < g.values.size(); ++v)
      if (g.values[v].producer >= 0 && produced_by[v] != g.values[v].producer)
        return bad("value '" + g.values[v].name + "' names node " + std::to_string(g.values[v].producer) + " as producer, which does not output it");
    for (ValueId v : g.outputs) {
      if (!valid(v)) return bad("output id " + std::to_string(v) + " is out of range");
      if (!defined[static_cast<std::size_t>(v)]) return bad("output '" + g.values[static_cast<std::size_t>(v)].name + "' is never defined");
    }
    return Status::ok();
  }

 private:
  template <typename Bad>
  static Status check_constant(const Constant& c, const std::string& what, Bad&& bad) {
    if (!in_range(c.elem) || c.elem == ElemType::kUndefined) return bad(what + " has no element type");
    std::int64_t n = 1;
    for (std::int64_t d : c.dims) {
      if (d < 0) return bad(what + " has a negative dim");
      if (d != 0 && n > INT64_MAX / d) return bad(what + " has too many elements");
      n *= d;
    }
    if (c.elem == ElemType::kString) {
      if (static_cast<std::int64_t>(c.strings.size()) != n) return bad(what + " holds " + std::to_string(c.strings.size()) + " strings for " + std::to_string(n) + " elements");
      return Status::ok();
    }
    const std::int64_t want = (n / 8) * elem_bits(c.elem) + ((n % 8) * elem_bits(c.elem) + 7) / 8;
    if (static_cast<std::int64_t>(c.bytes.size()) != want)
      return bad(what + " holds " + std::to_string(c.bytes.size()) + " bytes for " + std::to_string(n) + " " +
                 std::string(elem_type_name(c.elem)) + " elements (" + std::to_string(want) + " expected)");
    return Status::ok();
  }

  std::vector<std::set<std::string>> outer_;
};

}  // namespace

std::string_view elem_type_name(ElemType t) { return in_range(t) ? kTypes[static_cast<int>(t)].name : "?"; }
int elem_bits(ElemType t) { return in_range(t) ? kTypes[static_cast<int>(t)].bits : 0; }

std::optional<DType> to_dtype(ElemType t) {
  switch (t) {
    case ElemType::kBool: return DType::kBool;
    case ElemType::kI8: return DType::kI8;
    case ElemType::kU8: return DType::kU8;
    case ElemType::kI32: return DType::kI32;
    case ElemType::kI64: return DType::kI64;
    case ElemType::kF16: return DType::kF16;
    case ElemType::kBF16: return DType::kBF16;
    case ElemType::kF32: return DType::kF32;
    case ElemType::kF64: return DType::kF64;
    case ElemType::kC64: return DType::kC64;
    case ElemType::kC128: return DType::kC128;
    case ElemType::kI16: return DType::kI16;
    case ElemType::kU16: return DType::kU16;
    case ElemType::kU32: return DType::kU32;
    case ElemType::kU64: return DType::kU64;
    case ElemType::kF8E4M3FN: return DType::kF8E4M3FN;
    case ElemType::kF8E4M3FNUZ: return DType::kF8E4M3FNUZ;
    case ElemType::kF8E5M2: return DType::kF8E5M2;
    case ElemType::kF8E5M2FNUZ: return DType::kF8E5M2FNUZ;
    case ElemType::kI4: return DType::kI4;
    case ElemType::kU4: return DType::kU4;
    case ElemType::kI2: return DType::kI2;
    case ElemType::kU2: return DType::kU2;
    case ElemType::kF4E2M1: return DType::kF4E2M1;
    case ElemType::kF8E8M0: return DType::kF8E8M0;
    default: return std::nullopt;
  }
}

Attribute int_attribute(std::int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
Attribute ints_attribute(std::vector<std::int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute float_attribute(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
Attribute string_attribute(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}

std::string_view attribute_kind_name(Attribute::Kind k) {
  static constexpr const char* kNames[] = {"float", "int", "string", "tensor", "graph", "floats",
                                           "ints",  "strings", "tensors", "graphs", "type"};
  return kNames[static_cast<int>(k)];
}

std::int64_t Constant::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

ValueId Graph::find(std::string_view value_name) const {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].name == value_name) return static_cast<ValueId>(i);
  return kNoValue;
}

std::vector<ValueId> subgraph_reads(const Graph& g, const Node& n) {
  std::set<ValueId> reads;
  const auto add = [&](const Graph& sub) {
    for (ValueId c : sub.captures)
      if (const ValueId v = g.find(sub.values[static_cast<std::size_t>(c)].name); v != kNoValue) reads.insert(v);
  };
  for (const auto& [name, a] : n.attrs) {
    if (a.kind == Attribute::Kind::kGraph && a.g) add(*a.g);
    if (a.kind == Attribute::Kind::kGraphs)
      for (const auto& sg : a.graphs)
        if (sg) add(*sg);
  }
  return {reads.begin(), reads.end()};
}

Status verify(const Graph& g) { return Verifier({}).run(g); }

Status verify(const Model& m) {
  const auto it = m.opsets.find("");
  if (it == m.opsets.end()) return invalid_argument("verify: the model imports no ai.onnx opset");
  if (it->second < kMinOpset || it->second > kMaxOpset)
    return invalid_argument("verify: opset ai.onnx " + std::to_string(it->second) + " is outside [" +
                            std::to_string(kMinOpset) + ", " + std::to_string(kMaxOpset) + "]");
  TESSERA_RETURN_IF_ERROR(verify(m.graph));
  return check_signatures(m).with_context("verify");
}

}  // namespace tessera::graph
