// The IR as text: one line per value source and per node, subgraphs indented.
#include <cstring>
#include <iomanip>
#include <sstream>
#include <string>

#include "tessera/graph.hpp"

namespace tessera::graph {
namespace {

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// "<n what>" (built by appends: GCC 12 warns falsely on literal + temporary string).
std::string count_text(std::size_t n, const char* what) {
  std::string s = "<";
  s += std::to_string(n);
  s += ' ';
  s += what;
  s += '>';
  return s;
}

std::string float_text(double f) {
  std::ostringstream o;
  o << f;
  return o.str();
}

// The elements of small numeric constants ("[1,-1]"), else the size ("<24 bytes>").
std::string data_text(const Constant& c) {
  if (c.elem == ElemType::kString) return count_text(c.strings.size(), "strings");
  const std::int64_t n = c.numel();
  auto elems = [&](auto zero, auto&& text) {
    using T = decltype(zero);
    if (n > 8 || static_cast<std::int64_t>(c.bytes.size()) != n * static_cast<std::int64_t>(sizeof(T))) return std::string();
    std::string s = "[";
    for (std::int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, c.bytes.data() + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
      if (i) s += ',';
      s += text(v);
    }
    return s + "]";
  };
  auto integer = [](auto v) { return std::to_string(v); };
  auto real = [](auto v) { return float_text(static_cast<double>(v)); };
  std::string s;
  switch (c.elem) {
    case ElemType::kF32: s = elems(float{}, real); break;
    case ElemType::kF64: s = elems(double{}, real); break;
    case ElemType::kI64: s = elems(std::int64_t{}, integer); break;
    case ElemType::kI32: s = elems(std::int32_t{}, integer); break;
    case ElemType::kI8: s = elems(std::int8_t{}, integer); break;
    case ElemType::kU8:
    case ElemType::kBool: s = elems(std::uint8_t{}, integer); break;
    default: break;
  }
  return s.empty() ? count_text(c.bytes.size(), "bytes") : s;
}

std::string constant_text(const Constant& c) {
  std::string s(elem_type_name(c.elem));
  s += dims_text(c.dims);
  s += ' ';
  s += data_text(c);
  return s;
}

void print_graph(std::ostringstream& o, const Graph& g, const std::string& indent);

std::string value_ref(const Graph& g, ValueId v) {
  if (v == kNoValue) return "_";
  return "%" + g.values[static_cast<std::size_t>(v)].name;
}

void print_attr(std::ostringstream& o, const Attribute& a, const std::string& indent) {
  using K = Attribute::Kind;
  auto list = [&](std::size_t n, auto&& item) {
    o << "[";
    for (std::size_t i = 0; i < n; ++i) o << (i ? "," : "") << item(i);
    o << "]";
  };
  switch (a.kind) {
    case K::kFloat: o << float_text(a.f); break;
    case K::kInt: o << a.i; break;
    case K::kString: o << std::quoted(a.s); break;
    case K::kTensor: o << (a.t ? constant_text(*a.t) : "?"); break;
    case K::kFloats: list(a.floats.size(), [&](std::size_t i) { return float_text(a.floats[i]); }); break;
    case K::kInts: list(a.ints.size(), [&](std::size_t i) { return std::to_string(a.ints[i]); }); break;
    case K::kStrings: list(a.strings.size(), [&](std::size_t i) { return std::quoted(a.strings[i]); }); break;
    case K::kTensors: list(a.tensors.size(), [&](std::size_t i) { return constant_text(*a.tensors[i]); }); break;
    case K::kType: o << to_text(a.type); break;
    case K::kGraph:
    case K::kGraphs: {
      o << "{\n";
      if (a.kind == K::kGraph && a.g) print_graph(o, *a.g, indent + "    ");
      for (const auto& s : a.graphs) print_graph(o, *s, indent + "    ");
      o << indent << "  }";
      break;
    }
  }
}

void print_graph(std::ostringstream& o, const Graph& g, const std::string& indent) {
  o << indent << "graph " << (g.name.empty() ? "_" : g.name) << " {\n";
  auto decl = [&](const char* what, ValueId v) {
    const Value& val = g.values[static_cast<std::size_t>(v)];
    o << indent << "  " << what << " %" << val.name << ": " << to_text(val.type);
    if (val.constant) o << " = " << data_text(*val.constant);
    o << "\n";
  };
  for (ValueId v : g.captures) decl("capture", v);
  for (ValueId v : g.inputs) decl("input", v);
  for (ValueId v : g.initializers) decl("const", v);
  for (const Node& n : g.nodes) {
    o << indent << "  ";
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      o << (k ? ", " : "") << value_ref(g, n.outputs[k]);
      if (n.outputs[k] != kNoValue) o << ": " << to_text(g.values[static_cast<std::size_t>(n.outputs[k])].type);
    }
    o << " = " << (n.domain.empty() ? "" : n.domain + ".") << n.op_type << "(";
    for (std::size_t k = 0; k < n.inputs.size(); ++k) o << (k ? ", " : "") << value_ref(g, n.inputs[k]);
    o << ")";
    if (!n.attrs.empty()) {
      o << " {";
      bool first = true;
      for (const auto& [key, a] : n.attrs) {
        o << (first ? "" : ", ") << key << "=";
        print_attr(o, a, indent);
        first = false;
      }
      o << "}";
    }
    if (!n.name.empty()) o << "  # " << n.name;
    o << "\n";
  }
  o << indent << "  return";
  for (std::size_t k = 0; k < g.outputs.size(); ++k) o << (k ? ", " : " ") << value_ref(g, g.outputs[k]);
  o << "\n" << indent << "}\n";
}

}  // namespace

std::string to_text(const ValueType& t) {
  std::string s(t.elem == ElemType::kUndefined ? "?" : elem_type_name(t.elem));
  if (!t.shape) return s + "[...]";
  s += "[";
  for (std::size_t i = 0; i < t.shape->size(); ++i) {
    const Dim& d = (*t.shape)[i];
    if (i) s += ',';
    s += d.has_size() ? std::to_string(d.size) : d.symbol.empty() ? "?" : d.symbol;
  }
  return s + "]";
}

std::string to_text(const Graph& g) {
  std::ostringstream o;
  print_graph(o, g, "");
  return o.str();
}

std::string to_text(const Model& m) {
  std::ostringstream o;
  o << "model ir_version " << m.ir_version;
  if (!m.producer_name.empty()) o << ", producer " << m.producer_name;
  if (!m.producer_version.empty()) o << " " << m.producer_version;
  o << "\nopsets";
  for (const auto& [domain, version] : m.opsets) o << " " << (domain.empty() ? "ai.onnx" : domain) << ":" << version;
  o << "\n";
  print_graph(o, m.graph, "");
  return o.str();
}

}  // namespace tessera::graph
