// ONNX import into the IR: models built with the protobuf classes of the ONNX schema,
// serialised, imported and verified; the topological sort, subgraph captures, initializers in
// every storage form (raw, typed fields, external files), input defaults; and bad models
// (truncated, cyclic, undefined inputs, duplicate producers, opsets out of range, wrong data
// sizes, external paths leaving the model's folder), each one clear error naming the culprit.
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/graph.hpp>

#include "onnx_builder.hpp"
#include "test_util.hpp"

namespace tessera::graph {
namespace {

using testing::OnnxBuilder;

onnx::ModelProto base_model(std::int64_t opset = 17) { return OnnxBuilder(opset).m; }

void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<std::string>& dims) {
  OnnxBuilder::type(vi, name, elem, dims);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                          const std::vector<std::string>& out, const std::string& name = "") {
  return OnnxBuilder::add_node(g, op, in, out, name);
}

void add_raw_f32(onnx::GraphProto* g, const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<float>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

// Conv(x, w, b) -> Relu -> y, with x's batch symbolic.
onnx::ModelProto conv_relu() {
  auto m = base_model();
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {"N", "2", "4", "4"});
  add_raw_f32(g, "w", {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(3);
  for (float v : {0.5f, -1.0f, 2.0f}) b->add_float_data(v);
  auto* conv = add_node(g, "Conv", {"x", "w", "b"}, {"c"}, "conv1");
  auto* a = conv->add_attribute();
  a->set_name("strides");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(1);
  a->add_ints(1);
  add_node(g, "Relu", {"c"}, {"y"}, "relu1");
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {"N", "3", "4", "4"});
  return m;
}

std::vector<std::byte> bytes_of(const onnx::ModelProto& m) {
  const std::string s = m.SerializeAsString();
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

Model import_ok(const onnx::ModelProto& m) {
  Result<Model> r = import_onnx(bytes_of(m));
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (!r.is_ok()) return {};
  const Status v = verify(r.value());
  EXPECT_TRUE(v.is_ok()) << v.to_string();
  return std::move(r).value();
}

void expect_error(const Result<Model>& r, StatusCode code, const std::string& needle) {
  ASSERT_FALSE(r.is_ok()) << "expected an error containing '" << needle << "'";
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().to_string();
}

TEST(OnnxImport, ConvReluBecomesTheIr) {
  const Model m = import_ok(conv_relu());
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.opsets.at(""), 17);
  const Graph& g = m.graph;
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Conv");
  EXPECT_EQ(g.nodes[1].op_type, "Relu");
  ASSERT_EQ(g.inputs.size(), 1u);
  const Value& x = g.values[static_cast<std::size_t>(g.inputs[0])];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.type.elem, ElemType::kF32);
  ASSERT_TRUE(x.type.shape.has_value());
  EXPECT_EQ((*x.type.shape)[0].symbol, "N");
  EXPECT_EQ((*x.type.shape)[1].size, 2);
  // Initializers: raw data and float_data give the same little-endian f32 bytes.
  ASSERT_EQ(g.initializers.size(), 2u);
  const Value& b = g.values[static_cast<std::size_t>(g.find("b"))];
  ASSERT_TRUE(b.constant);
  ASSERT_EQ(b.constant->bytes.size(), 12u);
  float bv[3];
  std::memcpy(bv, b.constant->bytes.data(), 12);
  EXPECT_EQ(bv[1], -1.0f);
  EXPECT_EQ(g.values[static_cast<std::size_t>(g.find("w"))].constant->numel(), 6);
  const Node& conv = g.nodes[0];
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(conv.inputs[1], g.find("w"));
  EXPECT_EQ(conv.attrs.at("strides").kind, Attribute::Kind::kInts);
  EXPECT_EQ(conv.attrs.at("strides").ints, (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(g.values[static_cast<std::size_t>(g.find("c"))].producer, 0);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(to_text(g.values[static_cast<std::size_t>(g.outputs[0])].type), "f32[N,3,4,4]");
  const std::string text = to_text(m);
  EXPECT_NE(text.find("%c: ?[...] = Conv"), std::string::npos) << text;
  EXPECT_NE(text.find("= Conv(%x, %w, %b) {strides=[1,1]}  # conv1"), std::string::npos) << text;
  EXPECT_NE(text.find("const %w: f32[3,2,1,1] = [1,2,3,4,5,6]"), std::string::npos) << text;
  EXPECT_NE(text.find("const %b: f32[3] = [0.5,-1,2]"), std::string::npos) << text;
  EXPECT_NE(text.find("return %y"), std::string::npos) << text;
}

TEST(OnnxImport, NodesOutOfOrderAreSorted) {
  auto m = conv_relu();
  m.mutable_graph()->mutable_node()->SwapElements(0, 1);  // Relu before Conv in the file
  const Model g = import_ok(m);
  ASSERT_EQ(g.graph.nodes.size(), 2u);
  EXPECT_EQ(g.graph.nodes[0].op_type, "Conv");
  EXPECT_EQ(g.graph.nodes[1].op_type, "Relu");
}

TEST(OnnxImport, SubgraphsCaptureOuterValuesAndOrderTheirNode) {
  auto m = base_model();
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {"3"});
  // The If comes first in the file but its branches read "t", produced after it.
  auto* iff = add_node(g, "If", {"cond"}, {"y"}, "if1");
  add_node(g, "Neg", {"x"}, {"t"}, "neg1");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = iff->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sg = a->mutable_g();
    sg->set_name(branch);
    add_node(sg, std::string(branch) == "then_branch" ? "Abs" : "Identity", {"t"}, {"r"});
    set_tensor_type(sg->add_output(), "r", onnx::TensorProto::FLOAT, {"3"});
  }
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {"3"});
  const Model model = import_ok(m);
  const Graph& main = model.graph;
  ASSERT_EQ(main.nodes.size(), 2u);
  EXPECT_EQ(main.nodes[0].op_type, "Neg");
  EXPECT_EQ(main.nodes[1].op_type, "If");
  const Graph& then_g = *main.nodes[1].attrs.at("then_branch").g;
  ASSERT_EQ(then_g.captures.size(), 1u);
  EXPECT_EQ(then_g.values[static_cast<std::size_t>(then_g.captures[0])].name, "t");
  EXPECT_NE(to_text(model).find("capture %t"), std::string::npos) << to_text(model);

  // A capture of a name no enclosing graph defines is an error naming it.
  auto bad = m;
  bad.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(0, "nowhere");
  expect_error(import_onnx(bytes_of(bad)), StatusCode::kInvalidArgument, "input 'nowhere' is not defined");
}

TEST(OnnxImport, InitializersInEveryStorageForm) {
  auto m = base_model();
  auto* g = m.mutable_graph();
  auto* h = g->add_initializer();  // f16 bit patterns in int32_data
  h->set_name("h");
  h->set_data_type(onnx::TensorProto::FLOAT16);
  h->add_dims(2);
  h->add_int32_data(0x3c00);
  h->add_int32_data(0xc000);
  auto* i = g->add_initializer();
  i->set_name("i");
  i->set_data_type(onnx::TensorProto::INT64);
  i->add_dims(2);
  i->add_int64_data(-5);
  i->add_int64_data(1ll << 40);
  auto* s = g->add_initializer();
  s->set_name("s");
  s->set_data_type(onnx::TensorProto::STRING);
  s->add_string_data("hello");
  // An input with a default: the initializer of its name.
  set_tensor_type(g->add_input(), "d", onnx::TensorProto::FLOAT, {"2"});
  add_raw_f32(g, "d", {2}, {7, 8});
  add_node(g, "Cast", {"h"}, {"hf"});
  add_node(g, "Add", {"hf", "d"}, {"y"});
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {"2"});
  const Model model = import_ok(m);
  const Graph& gr = model.graph;
  const auto& hc = *gr.values[static_cast<std::size_t>(gr.find("h"))].constant;
  ASSERT_EQ(hc.bytes.size(), 4u);
  std::uint16_t hv[2];
  std::memcpy(hv, hc.bytes.data(), 4);
  EXPECT_EQ(hv[0], 0x3c00);
  EXPECT_EQ(hv[1], 0xc000);
  const auto& ic = *gr.values[static_cast<std::size_t>(gr.find("i"))].constant;
  std::int64_t iv[2];
  std::memcpy(iv, ic.bytes.data(), 16);
  EXPECT_EQ(iv[1], 1ll << 40);
  EXPECT_EQ(gr.values[static_cast<std::size_t>(gr.find("s"))].constant->strings, (std::vector<std::string>{"hello"}));
  const ValueId d = gr.find("d");
  EXPECT_EQ(gr.inputs, (std::vector<ValueId>{d}));
  EXPECT_TRUE(gr.values[static_cast<std::size_t>(d)].constant);
}

TEST(OnnxImport, ExternalDataIsReadFromTheModelsFolder) {
  testing::TempDir dir;
  const std::vector<float> w = {1.5f, -2.5f, 3.5f, 4.5f};
  {
    std::ofstream f(dir.path() / "weights.bin", std::ios::binary);
    const char pad[8] = {};
    f.write(pad, 8);
    f.write(reinterpret_cast<const char*>(w.data()), 16);
  }
  auto make = [&](const std::string& location, const std::string& offset, const std::string& length) {
    auto m = base_model();
    auto* g = m.mutable_graph();
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", location);
    if (!offset.empty()) kv("offset", offset);
    if (!length.empty()) kv("length", length);
    add_node(g, "Relu", {"w"}, {"y"});
    set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {"4"});
    const auto path = dir.path() / "model.onnx";
    std::ofstream(path, std::ios::binary) << m.SerializeAsString();
    return import_onnx(path);
  };
  Result<Model> ok = make("weights.bin", "8", "16");
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  const auto& c = *ok.value().graph.values[static_cast<std::size_t>(ok.value().graph.find("w"))].constant;
  ASSERT_EQ(c.bytes.size(), 16u);
  float got[4];
  std::memcpy(got, c.bytes.data(), 16);
  EXPECT_EQ(got[1], -2.5f);
  expect_error(make("../weights.bin", "8", ""), StatusCode::kInvalidArgument, "leaves the model's folder");
  expect_error(make("/etc/passwd", "", ""), StatusCode::kInvalidArgument, "is absolute");
  expect_error(make("missing.bin", "", ""), StatusCode::kNotFound, "missing.bin");
  expect_error(make("weights.bin", "16", ""), StatusCode::kInvalidArgument, "has 24 bytes, 16 needed from offset 16");
  expect_error(make("weights.bin", "x", ""), StatusCode::kInvalidArgument, "offset 'x' is not a number");
  expect_error(make("weights.bin", "8", "12"), StatusCode::kInvalidArgument, "length 12 for 16 bytes");
  // From bytes there is no folder to look in.
  auto m = base_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "needs the model's folder");
}

TEST(OnnxImport, BadModelsGiveOneClearError) {
  const auto good = bytes_of(conv_relu());
  // Truncated: every prefix either fails cleanly or (rarely) parses into a smaller model.
  for (std::size_t n = 0; n < good.size(); n += 7) {
    Result<Model> r = import_onnx(std::span<const std::byte>(good.data(), n));
    if (r.is_ok()) {
      EXPECT_TRUE(verify(r.value()).is_ok());
    }
  }
  expect_error(import_onnx(std::span<const std::byte>(good.data(), good.size() / 2)), StatusCode::kParseError, "does not parse");
  expect_error(import_onnx(std::filesystem::path("/nonexistent/model.onnx")), StatusCode::kNotFound, "cannot open");

  auto m = conv_relu();
  m.mutable_opset_import(0)->set_version(6);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kUnsupported, "opset ai.onnx 6 is outside the supported range [7, 28]");
  m.mutable_opset_import(0)->set_version(kMaxOpset + 1);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kUnsupported, "outside the supported range");
  m.mutable_opset_import(0)->set_domain("ai.onnx.ml");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "imports no ai.onnx opset");

  m = conv_relu();
  m.mutable_graph()->mutable_node(1)->set_input(0, "nope");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "node 1 'relu1' (Relu): input 'nope' is not defined");

  m = conv_relu();  // a cycle: Conv reads Relu's output
  m.mutable_graph()->mutable_node(0)->set_input(0, "y");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "is on a cycle");

  m = conv_relu();
  m.mutable_graph()->mutable_node(1)->set_output(0, "c");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "output 'c' is also produced by node 0");

  m = conv_relu();
  m.mutable_graph()->mutable_node(0)->set_output(0, "w");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "output 'w' is already an input or initializer");

  m = conv_relu();
  m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(20);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "initializer 'w': raw data of 20 bytes for 6 f32 elements (24 bytes expected)");

  m = conv_relu();
  m.mutable_graph()->mutable_initializer(1)->add_float_data(1);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "initializer 'b': 4 values for 3 f32 elements");

  // Dims claiming 3 x 2^38 elements with 3 values: refused by the count, with no attempt to
  // reserve 3 TiB first (the fuzzer found the out-of-memory reserve; the seed corpus holds valid models only).
  m = conv_relu();
  m.mutable_graph()->mutable_initializer(1)->set_dims(0, std::int64_t{1} << 38);
  m.mutable_graph()->mutable_initializer(1)->add_dims(3);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "initializer 'b': 3 values for 824633720832 f32 elements");

  m = conv_relu();
  m.mutable_graph()->mutable_initializer(0)->set_data_type(99);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "unknown element type 99");

  m = conv_relu();
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, -3);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "dim -3 is negative");

  m = conv_relu();
  m.mutable_graph()->mutable_output(0)->set_name("zz");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "output 'zz' is not defined");

  m = conv_relu();
  auto* dup = m.mutable_graph()->mutable_node(0)->add_attribute();
  dup->set_name("strides");
  dup->set_type(onnx::AttributeProto::INT);
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "attribute 'strides' appears twice");

  m = conv_relu();
  m.mutable_graph()->mutable_node(0)->set_op_type("");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "has no op type");
}

TEST(OnnxImport, VerifyCatchesBrokenGraphs) {
  Model m = import_ok(conv_relu());
  Graph g = m.graph;
  std::swap(g.nodes[0], g.nodes[1]);  // Relu now reads c before Conv defines it
  const Status s = verify(g);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("input 'c' is used before it is defined"), std::string::npos) << s.to_string();

  g = m.graph;
  g.nodes[1].inputs[0] = 99;
  EXPECT_NE(verify(g).message().find("id 99 is out of range"), std::string::npos);

  g = m.graph;
  g.values[static_cast<std::size_t>(g.find("y"))].name = "c";
  EXPECT_NE(verify(g).message().find("two values are named 'c'"), std::string::npos);

  g = m.graph;
  auto broken = std::make_shared<Constant>(*g.values[static_cast<std::size_t>(g.find("w"))].constant);
  broken->bytes.pop_back();
  g.values[static_cast<std::size_t>(g.find("w"))].constant = broken;
  EXPECT_NE(verify(g).message().find("holds 23 bytes for 6 f32 elements (24 expected)"), std::string::npos) << verify(g).to_string();

  m.opsets[""] = 3;
  EXPECT_NE(verify(m).message().find("opset ai.onnx 3 is outside"), std::string::npos);
}

// Every node of a known op has the inputs and outputs its op's signature (at the model's
// opset) allows, required ones present: the passes and kernels index inputs by position.
TEST(OnnxImport, NodesMustMatchTheirOpsSignature) {
  auto m = conv_relu();
  m.mutable_graph()->mutable_node(0)->set_input(0, "");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "node 0 'conv1' (Conv-11): input 0 is omitted; it is required");

  m = conv_relu();
  m.mutable_graph()->mutable_node(0)->add_input("b");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "(Conv-11): has 4 inputs; it takes 2 to 3");

  m = conv_relu();
  m.mutable_graph()->mutable_node(1)->add_output("extra");
  expect_error(import_onnx(bytes_of(m)), StatusCode::kInvalidArgument, "(Relu-14): has 2 outputs; it gives 1");

  OnnxBuilder b(17);
  b.input("x", {"2"});
  b.node("Add", {"x"}, {"y"});
  b.output("y");
  expect_error(import_onnx(bytes_of(b.m)), StatusCode::kInvalidArgument, "(Add-14): has 1 input; it takes 2");

  OnnxBuilder c(17);  // Concat's inputs are one variadic list: none may be omitted
  c.input("x", {"2"});
  OnnxBuilder::attr(c.node("Concat", {"x", ""}, {"y"}), "axis", std::int64_t{0});
  c.output("y");
  expect_error(import_onnx(bytes_of(c.m)), StatusCode::kInvalidArgument, "(Concat-13): input 1 is omitted");

  for (const std::int64_t opset : {7, 11}) {  // Clip's bounds became optional inputs at opset 11
    OnnxBuilder d(opset);
    d.input("x", {"2"});
    d.node("Clip", {"x", "", ""}, {"y"});
    d.output("y");
    const Result<Model> r = import_onnx(bytes_of(d.m));
    if (opset < 11) expect_error(r, StatusCode::kInvalidArgument, "(Clip-6): has 3 inputs; it takes 1");
    else EXPECT_TRUE(r.is_ok()) << r.status().to_string();  // the omitted bounds are optional
  }

  // Ops it does not know, in any domain, keep whatever inputs they have.
  OnnxBuilder e(17);
  e.input("x", {"2"});
  e.node("NoSuchOp", {"x", "", "x"}, {"y"});
  e.output("y");
  EXPECT_TRUE(import_onnx(bytes_of(e.m)).is_ok());

  // verify() holds the passes to it, tessera's own ops included.
  Model ok = import_ok(conv_relu());
  ok.graph.nodes[0].domain = "tessera";
  ok.graph.nodes[0].op_type = "FusedConv";
  EXPECT_TRUE(verify(ok).is_ok()) << verify(ok).to_string();
  ok.graph.nodes[0].inputs.resize(1);
  EXPECT_NE(verify(ok).message().find("(tessera.FusedConv): has 1 input; it takes 2 to 4"), std::string::npos) << verify(ok).to_string();
}

}  // namespace
}  // namespace tessera::graph
