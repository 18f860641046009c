// Small ONNX models for tests, built with the ONNX schema's protobuf classes (Debian's
// libonnx_proto): inputs and outputs with their types, initializers, nodes and attributes.
#pragma once

#include <cctype>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <tessera/graph.hpp>

namespace tessera::testing {

struct OnnxBuilder {
  onnx::ModelProto m;
  onnx::GraphProto* g;

  explicit OnnxBuilder(std::int64_t opset = 17, const std::string& name = "main") {
    m.set_ir_version(8);
    m.set_producer_name("tessera-test");
    auto* os = m.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
    g = m.mutable_graph();
    g->set_name(name);
  }

  // A tensor type: dims that start with a digit are sizes, others symbols.
  static void type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<std::string>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const auto& d : dims) {
      auto* dim = shape->add_dim();
      if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  }
  void input(const std::string& name, const std::vector<std::string>& dims, int elem = onnx::TensorProto::FLOAT) {
    type(g->add_input(), name, elem, dims);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  void output(const std::string& name, const std::vector<std::string>& dims, int elem = onnx::TensorProto::FLOAT) {
    type(g->add_output(), name, elem, dims);
  }

  // f32 initializers: as raw data, or in float_data.
  void raw_floats(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<float>& v) {
    auto* t = f32_tensor(name, dims);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  }
  void floats(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<float>& v) {
    auto* t = f32_tensor(name, dims);
    for (float x : v) t->add_float_data(x);
  }
  // A 1-D i64 initializer.
  void ints(const std::string& name, const std::vector<std::int64_t>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }

  // A node, named "<Op><index>" unless named (of any graph, subgraphs too).
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& name = "") {
    return add_node(g, op, in, out, name);
  }
  static onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                   const std::vector<std::string>& out, const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + std::to_string(g->node_size()) : name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  std::string bytes() const { return m.SerializeAsString(); }
  static Result<graph::Model> import(const onnx::ModelProto& model) {
    const std::string s = model.SerializeAsString();
    return graph::import_onnx(std::as_bytes(std::span<const char>(s.data(), s.size())));
  }
  Result<graph::Model> import() const { return import(m); }

 private:
  onnx::TensorProto* f32_tensor(const std::string& name, const std::vector<std::int64_t>& dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    return t;
  }
};

}  // namespace tessera::testing
