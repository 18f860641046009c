// Type and shape inference against ONNX's own (Debian's libonnx, which knows opsets up to 17:
// a cross-check, never linked into libtessera): a network of the common ops with every dim
// known, each value's inferred type compared with the one ONNX infers; symbolic batch dims
// carried through; declared types that contradict the inferred ones, and impossible reshapes,
// rejected naming the node.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/shape_inference/implementation.h>

#include <tessera/graph.hpp>

#include "onnx_builder.hpp"

namespace tessera::graph {
namespace {

struct Builder : testing::OnnxBuilder {
  using OnnxBuilder::OnnxBuilder;
  // A zero-filled f32 initializer.
  void weight(const std::string& name, const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    raw_floats(name, dims, std::vector<float>(static_cast<std::size_t>(n), 0.0f));
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
  Builder::attr_string(avg, "auto_pad", "SAME_UPPER");
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
  // Slice with steps and an end past the dim, Split by sizes, Expand, Tile, Pad.
  b.ints("sl_starts", {1, 2});
  b.ints("sl_ends", {8, 100});
  b.ints("sl_axes", {1, 3});
  b.ints("sl_steps", {2, 3});
  b.node("Slice", {"p", "sl_starts", "sl_ends", "sl_axes", "sl_steps"}, {"sl"});
  b.ints("parts", {3, 5});
  auto* split = b.node("Split", {"p", "parts"}, {"sp0", "sp1"});
  Builder::attr(split, "axis", 1);
  b.ints("ex_shape", {2, 1, 6});
  b.node("Expand", {"v", "ex_shape"}, {"ex"});
  b.ints("reps", {3});
  b.node("Tile", {"v", "reps"}, {"tl"});
  b.ints("pads", {0, 0, 1, 1, 0, 0, 2, 2});
  b.node("Pad", {"p", "pads"}, {"pd"});
  for (const char* o : {"s", "t", "cat", "mv", "bc", "lt", "rm", "sq", "shf", "sl", "sp0", "sp1", "ex", "tl", "pd"}) b.output(std::string(o));
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
  EXPECT_GE(compared, 31);  // every node output
  // Spot values (so a change in both libraries would not pass unnoticed).
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("c"))].type), "f32[2,8,17,16]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("p"))].type), "f32[2,8,9,9]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("mm"))].type), "f32[2,3,4,6]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("rs"))].type), "f32[2,4,162]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("sl"))].type), "f32[2,4,9,3]");
  EXPECT_EQ(to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("pd"))].type), "f32[2,8,12,12]");
}

TEST(InferTypes, SymbolicBatchIsCarriedThrough) {
  Builder b = network("N");
  Result<Model> r = b.import();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  Model m = std::move(r).value();
  ASSERT_TRUE(infer_types(m).is_ok());
  auto type_of = [&](const char* name) { return to_text(m.graph.values[static_cast<std::size_t>(m.graph.find(name))].type); };
  EXPECT_EQ(type_of("c"), "f32[N,8,17,16]");
  EXPECT_EQ(type_of("f"), "f32[N,8]");   // Flatten at axis 1: the outer dim is N alone
  EXPECT_EQ(type_of("s"), "f32[N,10]");
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

// Convolution and pooling need x's N and C dims; a scalar or 1-D input is an error naming the
// node, not a read past the shape (a fuzz input found the read: corpus/onnx_import/crashes/).
TEST(InferTypes, PoolingAndConvolutionNeedNAndC) {
  for (const char* op : {"MaxPool", "AveragePool", "GlobalMaxPool", "Conv"}) {
    for (const std::vector<std::string>& dims : {std::vector<std::string>{}, {"5"}}) {
      SCOPED_TRACE(std::string(op) + " rank " + std::to_string(dims.size()));
      Builder b(17);
      b.input("x", dims);
      std::vector<std::string> inputs = {"x"};
      if (std::string(op) == "Conv") {
        b.input("w", dims);
        inputs.push_back("w");
      }
      auto* n = b.node(op, inputs, {"y"});
      if (std::string(op) != "GlobalMaxPool") Builder::attr(n, "kernel_shape", {1});
      b.output("y");
      Result<Model> r = b.import();
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      const Status st = infer_types(r.value());
      ASSERT_FALSE(st.is_ok());
      EXPECT_NE(st.message().find(std::string(op) + " needs an input with N and C dims; it has rank " +
                                  std::to_string(dims.size())),
                std::string::npos)
          << st.to_string();
    }
  }
}

}  // namespace
}  // namespace tessera::graph
