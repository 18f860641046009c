// Type and shape inference against ONNX's own (Debian's libonnx, which knows opsets up to 17:
// a cross-check, never linked into libtessera): a network of the common ops with every dim
// known, each value's inferred type compared with the one ONNX infers; symbolic batch dims
// carried through; declared types that contradict the inferred ones, and impossible reshapes,
// rejected naming the node.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <tessera/graph.hpp>

namespace tessera::graph {
namespace {

struct Builder {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  explicit Builder(std::int64_t opset) {
    m.set_ir_version(8);
    auto* os = m.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
    g = m.mutable_graph();
    g->set_name("main");
  }
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
  void weight(const std::string& name, const std::vector<std::int64_t>& dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= d;
    }
    t->mutable_raw_data()->assign(static_cast<std::size_t>(n) * 4, '\0');
  }
  void ints(const std::string& name, const std::vector<std::int64_t>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(g->node_size()));
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::vector<std::int64_t> v) {
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
  Result<Model> import() const {
    const std::string s = m.SerializeAsString();
    return import_onnx(std::as_bytes(std::span<const char>(s.data(), s.size())));
  }
};

// Conv, pools, Gemm, MatMul with batch broadcasting, Reshape, Transpose, Concat, Unsqueeze,
// Squeeze, Gather, reductions, Shape, Cast, comparisons.
Builder network(const std::string& batch) {
  Builder b(17);
  b.input("x", {batch, "3", "33", "32"});
  b.weight("w1", {8, 3, 3, 3});
  b.weight("w2", {10, 8});
  b.weight("b2", {10});
  auto* conv = b.node("Conv", {"x", "w1"}, {"c"});
  Builder::attr(conv, "pads", {1, 1, 1, 1});
  Builder::attr(conv, "strides", {2, 2});
  b.node("Relu", {"c"}, {"r"});
  auto* pool = b.node("MaxPool", {"r"}, {"p"});
  Builder::attr(pool, "kernel_shape", {3, 3});
  Builder::attr(pool, "strides", {2, 2});
  Builder::attr(pool, "pads", {1, 1, 1, 1});
  Builder::attr(pool, "ceil_mode", 1);
  auto* avg = b.node("AveragePool", {"p"}, {"a"});
  Builder::attr(avg, "kernel_shape", {2, 2});
  Builder::attr(avg, "auto_pad", {});
  avg->mutable_attribute(1)->set_type(onnx::AttributeProto::STRING);
  avg->mutable_attribute(1)->set_s("SAME_UPPER");
  b.node("GlobalAveragePool", {"a"}, {"gp"});
  b.node("Flatten", {"gp"}, {"f"});
  auto* gemm = b.node("Gemm", {"f", "w2", "b2"}, {"g"});
  Builder::attr(gemm, "transB", 1);
  b.node("Softmax", {"g"}, {"s"});
  // Reshape with a 0 and a -1; Transpose; Concat along channels.
  b.ints("shape", {0, 4, -1});
  b.node("Reshape", {"p", "shape"}, {"rs"});
  auto* tr = b.node("Transpose", {"rs"}, {"t"});
  Builder::attr(tr, "perm", {0, 2, 1});
  auto* cat = b.node("Concat", {"p", "p"}, {"cat"});
  Builder::attr(cat, "axis", 1);
  // MatMul: [2,1,4,5] x [3,5,6] -> [2,3,4,6]; 1-D on the right.
  b.input("ma", {"2", "1", "4", "5"});
  b.input("mb", {"3", "5", "6"});
  b.input("v", {"6"});
  b.node("MatMul", {"ma", "mb"}, {"mm"});
  b.node("MatMul", {"mm", "v"}, {"mv"});
  b.node("Add", {"mm", "v"}, {"bc"});
  b.node("Less", {"mm", "v"}, {"lt"});
  auto* red = b.node("ReduceMean", {"mm"}, {"rm"});
  Builder::attr(red, "axes", {1, -1});
  Builder::attr(red, "keepdims", 0);
  b.ints("ax", {0, 3});
  b.node("Unsqueeze", {"mv", "ax"}, {"us"});
  b.node("Squeeze", {"us", "ax"}, {"sq"});
  b.input("idx", {"7", "2"}, onnx::TensorProto::INT64);
  auto* gat = b.node("Gather", {"mm", "idx"}, {"ga"});
  Builder::attr(gat, "axis", 2);
  b.node("Shape", {"ga"}, {"sh"});
  auto* cast = b.node("Cast", {"sh"}, {"shf"});
  Builder::attr(cast, "to", static_cast<std::int64_t>(onnx::TensorProto::FLOAT));
  for (const char* o : {"s", "t", "cat", "mv", "bc", "lt", "rm", "sq", "shf"}) b.output(o);
  return b;
}

TEST(InferTypes, MatchesOnnxShapeInference) {
  Builder b = network("2");
  Result<Model> r = b.import();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  Model m = std::move(r).value();
  const Status s = infer_types(m);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  ASSERT_TRUE(verify(m).is_ok());

  onnx::ModelProto theirs = b.m;
  onnx::shape_inference::InferShapes(theirs);
  int compared = 0;
  auto compare = [&](const onnx::ValueInfoProto& vi) {
    const ValueId id = m.graph.find(vi.name());
    ASSERT_NE(id, kNoValue) << vi.name();
    const ValueType& ours = m.graph.values[static_cast<std::size_t>(id)].type;
    const auto& tt = vi.type().tensor_type();
    EXPECT_EQ(static_cast<int>(ours.elem), tt.elem_type()) << vi.name() << ": " << to_text(ours);
    ASSERT_TRUE(ours.shape.has_value()) << vi.name();
    ASSERT_EQ(static_cast<int>(ours.shape->size()), tt.shape().dim_size()) << vi.name() << ": " << to_text(ours);
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      ASSERT_TRUE(tt.shape().dim(i).has_dim_value()) << vi.name();
      EXPECT_EQ((*ours.shape)[static_cast<std::size_t>(i)].size, tt.shape().dim(i).dim_value()) << vi.name() << " dim " << i << ": " << to_text(ours);
    }
    ++compared;
  };
  for (const auto& vi : theirs.graph().value_info()) compare(vi);
  for (const auto& vi : theirs.graph().output()) compare(vi);
  EXPECT_GE(compared, 25);  // every node output
  // Spot values (so a change in both libraries would not pass unnoticed).
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("c"))].type), "f32[2,8,17,16]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("p"))].type), "f32[2,8,9,9]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("mm"))].type), "f32[2,3,4,6]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("rs"))].type), "f32[2,4,162]");
}

TEST(InferTypes, SymbolicBatchIsCarriedThrough) {
  Builder b = network("N");
  Result<Model> r = b.import();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  Model m = std::move(r).value();
  ASSERT_TRUE(infer_types(m).is_ok());
  auto type_of = [&](const char* name) { return to_text(m.graph.values[static_cast<std::size_t>(m.graph.find(name))].type); };
  EXPECT_EQ(type_of("c"), "f32[N,8,17,16]");
  EXPECT_EQ(type_of("s"), "f32[?,10]");  // Flatten multiplies N into the outer dim
  EXPECT_EQ(type_of("rs"), "f32[N,4,?]");
  EXPECT_EQ(type_of("cat"), "f32[N,16,9,9]");
}

TEST(InferTypes, ContradictionsNameTheNode) {
  Builder b = network("2");
  Builder::type(b.g->mutable_output(0), "s", onnx::TensorProto::FLOAT, {"2", "11"});
  Result<Model> r = b.import();
  ASSERT_TRUE(r.is_ok());
  Status s = infer_types(r.value());
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("(Softmax): output 's' is inferred f32[2,10] but declared f32[2,11]"), std::string::npos) << s.to_string();

  Builder c = network("2");
  c.g->mutable_initializer(3)->set_int64_data(1, 5);  // Reshape [0, 5, -1] of 2*8*9*9
  r = c.import();
  ASSERT_TRUE(r.is_ok());
  s = infer_types(r.value());
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("(Reshape): 1296 elements do not reshape to the target"), std::string::npos) << s.to_string();

  Builder d = network("2");
  d.g->mutable_node(0)->mutable_attribute(0)->set_ints(0, -40);  // pads: a kernel larger than the input
  r = d.import();
  ASSERT_TRUE(r.is_ok());
  s = infer_types(r.value());
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("(Conv): kernel extent 3 exceeds the padded input"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace tessera::graph
