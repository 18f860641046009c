// ONNX export: the IR back into a ModelProto. Constants go out as raw data (strings as
// string_data), every value with a known type gets its ValueInfo (inputs, outputs,
// value_info), subgraphs recursively (their captures are plain references by name, as ONNX
// writes them).
#include <climits>
#include <fstream>
#include <string>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include "tessera/graph.hpp"
#include "tessera/version.hpp"

namespace tessera::graph {
namespace {

void put_type(const ValueType& t, onnx::TypeProto* tp) {
  auto* tt = tp->mutable_tensor_type();
  if (t.elem != ElemType::kUndefined) tt->set_elem_type(static_cast<int>(t.elem));
  if (!t.shape) return;
  auto* shape = tt->mutable_shape();
  for (const Dim& d : *t.shape) {
    auto* dim = shape->add_dim();
    if (d.has_size()) dim->set_dim_value(d.size);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

bool known_type(const ValueType& t) { return t.elem != ElemType::kUndefined || t.shape.has_value(); }

void put_value_info(const Value& v, onnx::ValueInfoProto* vi) {
  vi->set_name(v.name);
  if (known_type(v.type)) put_type(v.type, vi->mutable_type());
}

void put_tensor(const Constant& c, const std::string& name, onnx::TensorProto* t) {
  t->set_name(name);
  t->set_data_type(static_cast<int>(c.elem));
  for (std::int64_t d : c.dims) t->add_dims(d);
  if (c.elem == ElemType::kString) {
    for (const auto& s : c.strings) t->add_string_data(s);
  } else {
    t->set_raw_data(std::string(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size()));
  }
}

void put_graph(const Graph& g, onnx::GraphProto* gp);

void put_attribute(const std::string& name, const Attribute& a, onnx::AttributeProto* ap) {
  using K = Attribute::Kind;
  using P = onnx::AttributeProto;
  ap->set_name(name);
  switch (a.kind) {
    case K::kFloat: ap->set_type(P::FLOAT); ap->set_f(a.f); break;
    case K::kInt: ap->set_type(P::INT); ap->set_i(a.i); break;
    case K::kString: ap->set_type(P::STRING); ap->set_s(a.s); break;
    case K::kTensor: ap->set_type(P::TENSOR); put_tensor(*a.t, "", ap->mutable_t()); break;
    case K::kGraph: ap->set_type(P::GRAPH); put_graph(*a.g, ap->mutable_g()); break;
    case K::kFloats:
      ap->set_type(P::FLOATS);
      for (float f : a.floats) ap->add_floats(f);
      break;
    case K::kInts:
      ap->set_type(P::INTS);
      for (std::int64_t i : a.ints) ap->add_ints(i);
      break;
    case K::kStrings:
      ap->set_type(P::STRINGS);
      for (const auto& s : a.strings) ap->add_strings(s);
      break;
    case K::kTensors:
      ap->set_type(P::TENSORS);
      for (const auto& t : a.tensors) put_tensor(*t, "", ap->add_tensors());
      break;
    case K::kGraphs:
      ap->set_type(P::GRAPHS);
      for (const auto& s : a.graphs) put_graph(*s, ap->add_graphs());
      break;
    case K::kType: ap->set_type(P::TYPE_PROTO); put_type(a.type, ap->mutable_tp()); break;
  }
}

void put_graph(const Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.name);
  auto value = [&](ValueId v) -> const Value& { return g.values[static_cast<std::size_t>(v)]; };
  for (ValueId v : g.inputs) put_value_info(value(v), gp->add_input());
  for (ValueId v : g.initializers) put_tensor(*value(v).constant, value(v).name, gp->add_initializer());
  for (const Node& n : g.nodes) {
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    for (ValueId v : n.inputs) np->add_input(v == kNoValue ? std::string() : value(v).name);
    for (ValueId v : n.outputs) np->add_output(v == kNoValue ? std::string() : value(v).name);
    for (const auto& [key, a] : n.attrs) put_attribute(key, a, np->add_attribute());
    for (ValueId v : n.outputs)
      if (v != kNoValue && known_type(value(v).type)) put_value_info(value(v), gp->add_value_info());
  }
  for (ValueId v : g.outputs) put_value_info(value(v), gp->add_output());
}

}  // namespace

Result<std::string> export_onnx(const Model& m) {
  TESSERA_RETURN_IF_ERROR(verify(m).with_context("export_onnx"));
  onnx::ModelProto mp;
  mp.set_ir_version(m.ir_version);
  mp.set_producer_name("tessera");
  mp.set_producer_version(kVersion);
  for (const auto& [domain, version] : m.opsets) {
    auto* os = mp.add_opset_import();
    os->set_domain(domain);
    os->set_version(version);
  }
  try {
    put_graph(m.graph, mp.mutable_graph());
  } catch (const std::bad_alloc&) {
    return out_of_memory("export_onnx: out of memory");
  }
  if (mp.ByteSizeLong() > static_cast<std::size_t>(INT_MAX))
    return unsupported("export_onnx: the model is over 2 GiB (external data is not written yet)");
  return mp.SerializeAsString();
}

Status save_onnx(const Model& m, const std::filesystem::path& path) {
  TESSERA_ASSIGN_OR_RETURN(const std::string bytes, export_onnx(m));
  // Written beside the target and renamed over it: a failed write leaves the old file.
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return io_error("save_onnx: writing '" + tmp.string() + "' failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return io_error("save_onnx: renaming to '" + path.string() + "' failed: " + ec.message());
  return Status::ok();
}

}  // namespace tessera::graph
