// ONNX import: a ModelProto (parsed by protobuf against Debian's ONNX schema) into the IR.
// Per graph: inputs, then initializers (an initializer of an input's name is that input's
// default), then the nodes sorted topologically (ONNX requires the order; an unsorted file is
// sorted, a cycle is an error), their subgraphs imported first so that what a subgraph reads
// from enclosing graphs orders its node too. Every check names the node, value or tensor.
#include <bit>
#include <climits>
#include <cstring>
#include <fstream>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include "tessera/graph.hpp"

namespace tessera::graph {
namespace {

static_assert(std::endian::native == std::endian::little, "constants are kept little-endian");
namespace fs = std::filesystem;
using NameSet = std::unordered_set<std::string>;

template <typename T>
void append(std::vector<std::byte>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

class Importer {
 public:
  explicit Importer(fs::path dir) : dir_(std::move(dir)) {}

  Result<std::shared_ptr<const Constant>> tensor(const onnx::TensorProto& t, const std::string& what);

  // `outer`: the names every enclosing graph defines, innermost last. `reads` gets the names
  // this graph (or its subgraphs) reads from the enclosing graphs.
  Status graph(const onnx::GraphProto& gp, const std::vector<const NameSet*>& outer, Graph& g, std::set<std::string>& reads);

 private:
  Status external(const onnx::TensorProto& t, const std::string& what, std::int64_t want, Constant& c);
  Result<ValueType> value_type(const onnx::TypeProto& t, const std::string& what);
  Result<Attribute> attribute(const onnx::AttributeProto& a, const std::string& what,
                              const std::vector<const NameSet*>& outer, std::set<std::string>& reads);

  fs::path dir_;
};

Result<ElemType> elem_type(std::int32_t t, const std::string& what) {
  if (t <= 0 || t > kMaxElemType) return invalid_argument(what + ": unknown element type " + std::to_string(t));
  return static_cast<ElemType>(t);
}

Result<std::shared_ptr<const Constant>> Importer::tensor(const onnx::TensorProto& t, const std::string& what) {
  auto c = std::make_shared<Constant>();
  TESSERA_ASSIGN_OR_RETURN(c->elem, elem_type(t.data_type(), what));
  std::int64_t n = 1;
  for (std::int64_t d : t.dims()) {
    if (d < 0) return invalid_argument(what + ": dim " + std::to_string(d) + " is negative");
    if (d != 0 && n > (std::int64_t{1} << 40) / d) return invalid_argument(what + ": more than 2^40 elements");
    n *= d;
    c->dims.push_back(d);
  }
  const int bits = elem_bits(c->elem);
  const std::int64_t want = (n * bits + 7) / 8;
  const std::string count = std::to_string(n) + " " + std::string(elem_type_name(c->elem)) + " elements";
  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL) {
    TESSERA_RETURN_IF_ERROR(external(t, what, want, *c));
    return std::shared_ptr<const Constant>(std::move(c));
  }
  if (t.has_raw_data()) {
    if (c->elem == ElemType::kString) return invalid_argument(what + ": strings cannot be raw data");
    if (static_cast<std::int64_t>(t.raw_data().size()) != want)
      return invalid_argument(what + ": raw data of " + std::to_string(t.raw_data().size()) + " bytes for " + count +
                              " (" + std::to_string(want) + " bytes expected)");
    const auto* p = reinterpret_cast<const std::byte*>(t.raw_data().data());
    c->bytes.assign(p, p + t.raw_data().size());
    return std::shared_ptr<const Constant>(std::move(c));
  }
  // The typed fields: complex numbers are two values each.
  const std::int64_t values = n * (c->elem == ElemType::kC64 || c->elem == ElemType::kC128 ? 2 : 1);
  auto expect = [&](int have) -> Status {
    if (have == values) return Status::ok();
    return invalid_argument(what + ": " + std::to_string(have) + " values for " + count);
  };
  // Reserved only once the value count matches the dims: dims alone may claim 2^40 elements.
  auto reserve = [&] { c->bytes.reserve(static_cast<std::size_t>(want)); };
  switch (c->elem) {
    case ElemType::kF32:
    case ElemType::kC64:
      TESSERA_RETURN_IF_ERROR(expect(t.float_data_size()));
      reserve();
      for (float v : t.float_data()) append(c->bytes, v);
      break;
    case ElemType::kF64:
    case ElemType::kC128:
      TESSERA_RETURN_IF_ERROR(expect(t.double_data_size()));
      reserve();
      for (double v : t.double_data()) append(c->bytes, v);
      break;
    case ElemType::kI64:
      TESSERA_RETURN_IF_ERROR(expect(t.int64_data_size()));
      reserve();
      for (std::int64_t v : t.int64_data()) append(c->bytes, v);
      break;
    case ElemType::kU32:
    case ElemType::kU64:
      TESSERA_RETURN_IF_ERROR(expect(t.uint64_data_size()));
      reserve();
      for (std::uint64_t v : t.uint64_data()) {
        if (c->elem == ElemType::kU32) append(c->bytes, static_cast<std::uint32_t>(v));
        else append(c->bytes, v);
      }
      break;
    case ElemType::kString:
      TESSERA_RETURN_IF_ERROR(expect(t.string_data_size()));
      c->strings.assign(t.string_data().begin(), t.string_data().end());
      break;
    default:  // int32_data holds the narrower types, one element each (halves as bit patterns)
      if (bits < 8) {  // ... but one packed byte each for the 4- and 2-bit types
        if (t.int32_data_size() != want) return invalid_argument(what + ": " + std::to_string(t.int32_data_size()) + " packed values for " + count + " (" + std::to_string(want) + " expected)");
        reserve();
        for (std::int32_t v : t.int32_data()) append(c->bytes, static_cast<std::uint8_t>(v));
        break;
      }
      if (bits % 8 != 0) return unsupported(what + ": " + std::string(elem_type_name(c->elem)) + " outside raw data is not supported");
      TESSERA_RETURN_IF_ERROR(expect(t.int32_data_size()));
      reserve();
      for (std::int32_t v : t.int32_data()) {
        if (bits == 8) append(c->bytes, static_cast<std::uint8_t>(v));
        else if (bits == 16) append(c->bytes, static_cast<std::uint16_t>(v));
        else append(c->bytes, v);
      }
      break;
  }
  return std::shared_ptr<const Constant>(std::move(c));
}

Status Importer::external(const onnx::TensorProto& t, const std::string& what, std::int64_t want, Constant& c) {
  std::string location;
  std::int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    auto number = [&](std::int64_t& out) -> Status {
      try {
        std::size_t used = 0;
        out = std::stoll(kv.value(), &used);
        if (used == kv.value().size() && out >= 0) return Status::ok();
      } catch (const std::exception&) {
      }
      return invalid_argument(what + ": external data " + kv.key() + " '" + kv.value() + "' is not a number >= 0");
    };
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") TESSERA_RETURN_IF_ERROR(number(offset));
    else if (kv.key() == "length") TESSERA_RETURN_IF_ERROR(number(length));
  }
  if (c.elem == ElemType::kString) return invalid_argument(what + ": strings cannot be external data");
  if (location.empty()) return invalid_argument(what + ": external data without a location");
  if (dir_.empty()) return invalid_argument(what + ": external data '" + location + "' needs the model's folder (import the file by path)");
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name()) return invalid_argument(what + ": external data location '" + location + "' is absolute");
  for (const auto& part : rel)
    if (part == "..") return invalid_argument(what + ": external data location '" + location + "' leaves the model's folder");
  if (length >= 0 && length != want)
    return invalid_argument(what + ": external data length " + std::to_string(length) + " for " + std::to_string(want) + " bytes");
  std::ifstream in(dir_ / rel, std::ios::binary);
  if (!in) return not_found(what + ": external data file '" + (dir_ / rel).string() + "' cannot be opened");
  in.seekg(0, std::ios::end);
  const std::int64_t size = static_cast<std::int64_t>(in.tellg());
  if (offset > size || size - offset < want)
    return invalid_argument(what + ": external data file '" + location + "' has " + std::to_string(size) + " bytes, " +
                            std::to_string(want) + " needed from offset " + std::to_string(offset));
  c.bytes.resize(static_cast<std::size_t>(want));
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(c.bytes.data()), want);
  if (!in) return io_error(what + ": reading external data file '" + location + "' failed");
  return Status::ok();
}

Result<ValueType> Importer::value_type(const onnx::TypeProto& t, const std::string& what) {
  ValueType vt;
  if (t.value_case() == onnx::TypeProto::VALUE_NOT_SET) return vt;  // unknown
  if (t.value_case() != onnx::TypeProto::kTensorType)
    return unsupported(what + ": only tensor types are supported (sequences, maps, optionals and sparse tensors are not)");
  const auto& tt = t.tensor_type();
  if (tt.elem_type() != 0) {
    TESSERA_ASSIGN_OR_RETURN(vt.elem, elem_type(tt.elem_type(), what));
  }
  if (tt.has_shape()) {
    vt.shape.emplace();
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) return invalid_argument(what + ": dim " + std::to_string(d.dim_value()) + " is negative");
        dim.size = d.dim_value();
      } else if (d.has_dim_param()) {
        dim.symbol = d.dim_param();
      }
      vt.shape->push_back(std::move(dim));
    }
  }
  return vt;
}

Result<Attribute> Importer::attribute(const onnx::AttributeProto& a, const std::string& what,
                                      const std::vector<const NameSet*>& outer, std::set<std::string>& reads) {
  using P = onnx::AttributeProto;
  using K = Attribute::Kind;
  if (!a.ref_attr_name().empty()) return unsupported(what + " refers to function attribute '" + a.ref_attr_name() + "' outside a function");
  P::AttributeType type = a.type();
  if (type == P::UNDEFINED) {  // IR v1/v2 files: the field that is set says
    if (a.has_f()) type = P::FLOAT;
    else if (a.has_i()) type = P::INT;
    else if (a.has_s()) type = P::STRING;
    else if (a.has_t()) type = P::TENSOR;
    else if (a.has_g()) type = P::GRAPH;
    else if (a.floats_size()) type = P::FLOATS;
    else if (a.ints_size()) type = P::INTS;
    else if (a.strings_size()) type = P::STRINGS;
    else if (a.tensors_size()) type = P::TENSORS;
    else if (a.graphs_size()) type = P::GRAPHS;
    else return invalid_argument(what + " has no type and no value");
  }
  Attribute r;
  auto sub = [&](const onnx::GraphProto& gp) -> Result<std::shared_ptr<const Graph>> {
    auto g = std::make_shared<Graph>();
    TESSERA_RETURN_IF_ERROR(graph(gp, outer, *g, reads).with_context(what));
    return std::shared_ptr<const Graph>(std::move(g));
  };
  switch (type) {
    case P::FLOAT: r.kind = K::kFloat; r.f = a.f(); break;
    case P::INT: r.kind = K::kInt; r.i = a.i(); break;
    case P::STRING: r.kind = K::kString; r.s = a.s(); break;
    case P::TENSOR: {
      r.kind = K::kTensor;
      TESSERA_ASSIGN_OR_RETURN(r.t, tensor(a.t(), what));
      break;
    }
    case P::GRAPH: {
      r.kind = K::kGraph;
      TESSERA_ASSIGN_OR_RETURN(r.g, sub(a.g()));
      break;
    }
    case P::FLOATS: r.kind = K::kFloats; r.floats.assign(a.floats().begin(), a.floats().end()); break;
    case P::INTS: r.kind = K::kInts; r.ints.assign(a.ints().begin(), a.ints().end()); break;
    case P::STRINGS: r.kind = K::kStrings; r.strings.assign(a.strings().begin(), a.strings().end()); break;
    case P::TENSORS:
      r.kind = K::kTensors;
      for (const auto& t : a.tensors()) {
        TESSERA_ASSIGN_OR_RETURN(auto c, tensor(t, what));
        r.tensors.push_back(std::move(c));
      }
      break;
    case P::GRAPHS:
      r.kind = K::kGraphs;
      for (const auto& gp : a.graphs()) {
        TESSERA_ASSIGN_OR_RETURN(auto g, sub(gp));
        r.graphs.push_back(std::move(g));
      }
      break;
    case P::TYPE_PROTO: {
      r.kind = K::kType;
      TESSERA_ASSIGN_OR_RETURN(r.type, value_type(a.tp(), what));
      break;
    }
    default: return unsupported(what + " has attribute type " + std::to_string(static_cast<int>(type)) + " (sparse tensors and type lists are not supported)");
  }
  return r;
}

Status Importer::graph(const onnx::GraphProto& gp, const std::vector<const NameSet*>& outer, Graph& g,
                       std::set<std::string>& reads) {
  g.name = gp.name();
  const std::string where = "graph '" + g.name + "'";
  std::unordered_map<std::string, ValueId> ids;
  auto add_value = [&](const std::string& name, const std::string& what) -> Result<ValueId> {
    if (name.empty()) return invalid_argument(where + ": " + what + " has an empty name");
    if (ids.count(name)) return invalid_argument(where + ": " + what + " '" + name + "' is defined twice");
    const auto id = static_cast<ValueId>(g.values.size());
    g.values.push_back(Value{name, {}, -1, nullptr});
    ids.emplace(name, id);
    return id;
  };
  for (const auto& vi : gp.input()) {
    TESSERA_ASSIGN_OR_RETURN(const ValueId id, add_value(vi.name(), "input"));
    TESSERA_ASSIGN_OR_RETURN(g.values[static_cast<std::size_t>(id)].type, value_type(vi.type(), where + " input '" + vi.name() + "'"));
    g.inputs.push_back(id);
  }
  for (const auto& t : gp.initializer()) {
    const std::string what = where + " initializer '" + t.name() + "'";
    TESSERA_ASSIGN_OR_RETURN(auto c, tensor(t, what));
    ValueId id = kNoValue;
    if (const auto it = ids.find(t.name()); it != ids.end() && !g.values[static_cast<std::size_t>(it->second)].constant) {
      id = it->second;  // an input's default
    } else {
      TESSERA_ASSIGN_OR_RETURN(id, add_value(t.name(), "initializer"));
    }
    Value& v = g.values[static_cast<std::size_t>(id)];
    if (v.type.elem != ElemType::kUndefined && v.type.elem != c->elem)
      return invalid_argument(what + " is " + std::string(elem_type_name(c->elem)) + ", its input is declared " + std::string(elem_type_name(v.type.elem)));
    v.type.elem = c->elem;
    if (!v.type.shape) {
      v.type.shape.emplace();
      for (std::int64_t d : c->dims) v.type.shape->push_back(Dim{d, {}});
    }
    v.constant = std::move(c);
    g.initializers.push_back(id);
  }
  if (gp.sparse_initializer_size() > 0) return unsupported(where + ": sparse initializers are not supported");

  // Every name this graph defines, for its subgraphs' scope.
  NameSet here;
  for (const auto& [name, id] : ids) here.insert(name);
  for (const auto& np : gp.node())
    for (const auto& o : np.output())
      if (!o.empty()) here.insert(o);
  std::vector<const NameSet*> inner = outer;
  inner.push_back(&here);

  // Nodes as given, with what each reads (inputs, and its subgraphs' outer reads).
  const int n = gp.node_size();
  std::vector<Node> nodes(static_cast<std::size_t>(n));
  std::vector<std::vector<std::string>> needs(static_cast<std::size_t>(n));
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    const auto& np = gp.node(i);
    Node& node = nodes[static_cast<std::size_t>(i)];
    node.name = np.name();
    node.op_type = np.op_type();
    node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    const std::string what = where + " node " + std::to_string(i) + " '" + node.name + "' (" + node.op_type + ")";
    if (node.op_type.empty()) return invalid_argument(what + " has no op type");
    for (const auto& o : np.output()) {
      if (o.empty()) continue;
      if (ids.count(o)) return invalid_argument(what + ": output '" + o + "' is already an input or initializer");
      if (!producer.emplace(o, i).second) return invalid_argument(what + ": output '" + o + "' is also produced by node " + std::to_string(producer[o]));
    }
    auto& need = needs[static_cast<std::size_t>(i)];
    for (const auto& in : np.input())
      if (!in.empty()) need.push_back(in);
    for (const auto& ap : np.attribute()) {
      std::set<std::string> sub_reads;
      TESSERA_ASSIGN_OR_RETURN(Attribute a, attribute(ap, what + " attribute '" + ap.name() + "'", inner, sub_reads));
      if (!node.attrs.emplace(ap.name(), std::move(a)).second) return invalid_argument(what + ": attribute '" + ap.name() + "' appears twice");
      need.insert(need.end(), sub_reads.begin(), sub_reads.end());
    }
  }

  // Topological order, as close to the file's as it allows (the smallest ready index first).
  std::vector<int> pending(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<int>> users(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    for (const auto& name : needs[static_cast<std::size_t>(i)])
      if (const auto it = producer.find(name); it != producer.end()) {
        users[static_cast<std::size_t>(it->second)].push_back(i);
        ++pending[static_cast<std::size_t>(i)];
      }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[static_cast<std::size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[static_cast<std::size_t>(i)])
      if (--pending[static_cast<std::size_t>(u)] == 0) ready.push(u);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (pending[static_cast<std::size_t>(i)] > 0)
        return invalid_argument(where + ": node " + std::to_string(i) + " '" + nodes[static_cast<std::size_t>(i)].name + "' (" +
                                nodes[static_cast<std::size_t>(i)].op_type + ") is on a cycle");
  }

  // The nodes in that order: outputs become values, inputs are resolved (local, or captured
  // from an enclosing graph).
  auto resolve = [&](const std::string& name, const std::string& what) -> Result<ValueId> {
    if (const auto it = ids.find(name); it != ids.end()) return it->second;
    for (const NameSet* scope : outer)
      if (scope->count(name)) {
        TESSERA_ASSIGN_OR_RETURN(const ValueId id, add_value(name, "capture"));
        g.captures.push_back(id);
        reads.insert(name);
        return id;
      }
    return invalid_argument(what + ": input '" + name + "' is not defined");
  };
  for (int i : order) {
    const auto& np = gp.node(i);
    Node& node = nodes[static_cast<std::size_t>(i)];
    const std::string what = where + " node " + std::to_string(i) + " '" + node.name + "' (" + node.op_type + ")";
    for (const auto& in : np.input()) {
      if (in.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(const ValueId id, resolve(in, what));
      node.inputs.push_back(id);
    }
    for (const auto& o : np.output()) {
      if (o.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(const ValueId id, add_value(o, "output"));
      g.values[static_cast<std::size_t>(id)].producer = static_cast<int>(g.nodes.size());
      node.outputs.push_back(id);
    }
    // The outer names its subgraphs read are this graph's reads too unless defined here.
    for (const auto& name : needs[static_cast<std::size_t>(i)])
      if (!ids.count(name)) TESSERA_RETURN_IF_ERROR(resolve(name, what).status());
    g.nodes.push_back(std::move(node));
  }
  for (const auto& vi : gp.value_info()) {
    const auto it = ids.find(vi.name());
    if (it == ids.end()) continue;  // type information about an unused name
    TESSERA_ASSIGN_OR_RETURN(g.values[static_cast<std::size_t>(it->second)].type, value_type(vi.type(), where + " value '" + vi.name() + "'"));
  }
  for (const auto& vi : gp.output()) {
    const auto it = ids.find(vi.name());
    if (it == ids.end()) return invalid_argument(where + ": output '" + vi.name() + "' is not defined");
    TESSERA_ASSIGN_OR_RETURN(ValueType t, value_type(vi.type(), where + " output '" + vi.name() + "'"));
    Value& v = g.values[static_cast<std::size_t>(it->second)];
    if (t.elem != ElemType::kUndefined || t.shape) v.type = std::move(t);
    g.outputs.push_back(it->second);
  }
  return Status::ok();
}

}  // namespace

Result<Model> import_onnx(std::span<const std::byte> bytes, const fs::path& dir) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    return unsupported("import_onnx: a model file over 2 GiB (keep the weights as external data)");
  onnx::ModelProto mp;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  if (!mp.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return parse_error("import_onnx: not an ONNX model (the protobuf does not parse)");
  if (!mp.has_graph()) return parse_error("import_onnx: the model has no graph");
  if (mp.ir_version() < 3) return unsupported("import_onnx: IR version " + std::to_string(mp.ir_version()) + " (3 or newer is supported)");
  Model m;
  m.ir_version = mp.ir_version();
  m.producer_name = mp.producer_name();
  m.producer_version = mp.producer_version();
  for (const auto& os : mp.opset_import()) {
    const std::string domain = os.domain() == "ai.onnx" ? "" : os.domain();
    if (!m.opsets.emplace(domain, os.version()).second)
      return invalid_argument("import_onnx: opset domain '" + os.domain() + "' is imported twice");
  }
  const auto it = m.opsets.find("");
  if (it == m.opsets.end()) return invalid_argument("import_onnx: the model imports no ai.onnx opset");
  if (it->second < kMinOpset || it->second > kMaxOpset)
    return unsupported("import_onnx: opset ai.onnx " + std::to_string(it->second) + " is outside the supported range [" +
                       std::to_string(kMinOpset) + ", " + std::to_string(kMaxOpset) + "]");
  std::set<std::string> reads;
  try {
    TESSERA_RETURN_IF_ERROR(Importer(dir).graph(mp.graph(), {}, m.graph, reads).with_context("import_onnx"));
  } catch (const std::bad_alloc&) {
    return out_of_memory("import_onnx: out of memory");
  }
  TESSERA_RETURN_IF_ERROR(check_signatures(m).with_context("import_onnx"));
  return m;
}

Result<Constant> import_tensor(std::span<const std::byte> bytes, const std::string& what) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return unsupported(what + ": a tensor file over 2 GiB");
  onnx::TensorProto tp;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  if (!tp.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) return parse_error(what + ": not an ONNX tensor (the protobuf does not parse)");
  if (tp.has_data_location() && tp.data_location() == onnx::TensorProto::EXTERNAL)
    return unsupported(what + ": a tensor file with external data");
  try {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const Constant> c, Importer({}).tensor(tp, what));
    return *c;
  } catch (const std::bad_alloc&) {
    return out_of_memory(what + ": out of memory");
  }
}

Result<Model> import_onnx(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("import_onnx: cannot open '" + path.string() + "'");
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return io_error("import_onnx: reading '" + path.string() + "' failed");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  return import_onnx(std::as_bytes(std::span<const char>(data)), dir);
}

}  // namespace tessera::graph
