// If, Loop and Scan against plain loops written here: branches reading values of the graph
// around them, loops ended by their trip count or their body's condition, loops of no
// iteration, Scan's directions and axes, a subgraph nested in a subgraph reading the model's
// graph, the memory plan keeping a value only a subgraph reads, and the errors of malformed
// control flow.
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/session.hpp>

#include "onnx_builder.hpp"
#include "test_util.hpp"

namespace tessera::exec {
namespace {

using Dims = std::vector<std::int64_t>;
using B = testing::OnnxBuilder;
constexpr int kF32 = onnx::TensorProto::FLOAT, kI64 = onnx::TensorProto::INT64, kBool = onnx::TensorProto::BOOL;

onnx::GraphProto* graph_attr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}
void in(onnx::GraphProto* g, const std::string& name, int elem, const std::vector<std::string>& dims) { B::type(g->add_input(), name, elem, dims); }
void out(onnx::GraphProto* g, const std::string& name, int elem, const std::vector<std::string>& dims) { B::type(g->add_output(), name, elem, dims); }

Tensor floats(const Dims& dims, const std::vector<float>& v) { return Tensor::from_vector<float>(Shape(dims), v).value_or_throw(); }
Tensor scalar_bool(bool v) { return Tensor::from_vector<bool>(Shape(Dims{}), {v}).value_or_throw(); }
Tensor scalar_i64(std::int64_t v) { return Tensor::from_vector<std::int64_t>(Shape(Dims{}), {v}).value_or_throw(); }

Session open(const B& m) {
  graph::Model model = m.import().value_or_throw();
  return Session::create(std::move(model)).value_or_throw();
}

void expect_floats(const Tensor& t, const Dims& dims, const std::vector<float>& want) {
  ASSERT_EQ(t.shape().dims(), dims);
  const auto got = t.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(ControlFlow, IfRunsTheChosenBranchWithCapturedValues) {
  B m(17);
  m.input("cond", {}, kBool);
  m.input("x", {"3"});
  m.floats("w", {3}, {10, 20, 30});
  m.node("Relu", {"x"}, {"r"});  // read only by the branches
  auto* n = m.node("If", {"cond"}, {"y"});
  auto* then_g = graph_attr(n, "then_branch");
  B::add_node(then_g, "Add", {"r", "w"}, {"t"});
  out(then_g, "t", kF32, {"3"});
  auto* else_g = graph_attr(n, "else_branch");
  B::add_node(else_g, "Neg", {"r"}, {"e"});
  out(else_g, "e", kF32, {"3"});
  m.node("Mul", {"y", "y"}, {"z"});
  m.output("z");
  Session s = open(m);
  const Tensor x = floats({3}, {-1, 2, 3});
  for (int pass = 0; pass < 2; ++pass) {  // recording, then planned
    auto y = s.run({{"cond", scalar_bool(true)}, {"x", x}}).value_or_throw();
    expect_floats(y[0].tensor, {3}, {100, 22 * 22, 33 * 33});
    y = s.run({{"cond", scalar_bool(false)}, {"x", x}}).value_or_throw();
    expect_floats(y[0].tensor, {3}, {0, 4, 9});
  }
}

// Loop body: (i, cond, s) -> (cond, s + i * x, s + i * x as a scan value). x is captured.
B accumulating_loop(bool with_cond, bool stop_after_two) {
  B m(17);
  m.input("M", {}, kI64);
  if (with_cond) m.input("c", {}, kBool);
  m.input("s0", {"2"});
  m.input("x", {"2"});
  auto* n = m.node("Loop", {"M", with_cond ? "c" : "", "s0"}, {"s", "scan"});
  auto* body = graph_attr(n, "body");
  in(body, "i", kI64, {});
  in(body, "ci", kBool, {});
  in(body, "si", kF32, {"2"});
  B::add_node(body, "Cast", {"i"}, {"fi"});
  B::attr(body->mutable_node(0), "to", static_cast<std::int64_t>(kF32));
  B::add_node(body, "Mul", {"fi", "x"}, {"ix"});
  B::add_node(body, "Add", {"si", "ix"}, {"so"});
  B::add_node(body, "Identity", {"so"}, {"scan_out"});
  if (stop_after_two) {
    auto* two = B::add_node(body, "Constant", {}, {"two"});
    auto* a = two->add_attribute();
    a->set_name("value_int");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(2);
    B::add_node(body, "Less", {"i", "two"}, {"co"});
  } else {
    B::add_node(body, "Identity", {"ci"}, {"co"});
  }
  out(body, "co", kBool, {});
  out(body, "so", kF32, {"2"});
  out(body, "scan_out", kF32, {"2"});
  m.output("s");
  m.output("scan");
  return m;
}

TEST(ControlFlow, LoopCarriesValuesAndStacksScanOutputs) {
  Session s = open(accumulating_loop(false, false));
  const Tensor s0 = floats({2}, {1, 2}), x = floats({2}, {0.5f, -1});
  const auto y = s.run({{"M", scalar_i64(4)}, {"s0", s0}, {"x", x}}).value_or_throw();
  std::vector<float> acc = {1, 2}, stacked;
  for (int i = 0; i < 4; ++i) {
    acc[0] += static_cast<float>(i) * 0.5f;
    acc[1] += static_cast<float>(i) * -1.0f;
    stacked.insert(stacked.end(), acc.begin(), acc.end());
  }
  expect_floats(y[0].tensor, {2}, acc);
  expect_floats(y[1].tensor, {4, 2}, stacked);
}

TEST(ControlFlow, LoopStopsOnTheBodysCondition) {
  // The condition after iteration i is i < 2: iterations 0, 1 and 2 run, of at most 10.
  Session s = open(accumulating_loop(true, true));
  const auto y = s.run({{"M", scalar_i64(10)}, {"c", scalar_bool(true)}, {"s0", floats({2}, {0, 0})}, {"x", floats({2}, {1, 2})}})
                     .value_or_throw();
  expect_floats(y[0].tensor, {2}, {3, 6});
  expect_floats(y[1].tensor, {3, 2}, {0, 0, 1, 2, 3, 6});
  // No limit but the condition: exporters write M = 2^63 - 1.
  const auto w = s.run({{"M", scalar_i64(std::numeric_limits<std::int64_t>::max())}, {"c", scalar_bool(true)}, {"s0", floats({2}, {0, 0})}, {"x", floats({2}, {1, 2})}})
                     .value_or_throw();
  expect_floats(w[1].tensor, {3, 2}, {0, 0, 1, 2, 3, 6});
  // A false condition runs nothing.
  const auto z = s.run({{"M", scalar_i64(10)}, {"c", scalar_bool(false)}, {"s0", floats({2}, {7, 8})}, {"x", floats({2}, {1, 2})}})
                     .value_or_throw();
  expect_floats(z[0].tensor, {2}, {7, 8});
  expect_floats(z[1].tensor, {0, 2}, {});
}

TEST(ControlFlow, LoopOfNoIterationsGivesEmptyScanOutputs) {
  Session s = open(accumulating_loop(false, false));
  const auto y = s.run({{"M", scalar_i64(0)}, {"s0", floats({2}, {1, 2})}, {"x", floats({2}, {1, 1})}}).value_or_throw();
  expect_floats(y[0].tensor, {2}, {1, 2});
  expect_floats(y[1].tensor, {0, 2}, {});
}

TEST(ControlFlow, ScanDirectionsAndAxesMatchLoops) {
  // State s [2]; scan inputs a [3, 2] (axis 0, forward) and b [2, 3] (axis 1, reverse);
  // s' = s + a_t * b_t; scan output s' stacked on axis 1, in reverse.
  B m(16);
  m.input("s0", {"2"});
  m.input("a", {"3", "2"});
  m.input("b", {"2", "3"});
  auto* n = m.node("Scan", {"s0", "a", "b"}, {"s", "ys"});
  B::attr(n, "num_scan_inputs", 2);
  B::attr(n, "scan_input_axes", Dims{0, 1});
  B::attr(n, "scan_input_directions", Dims{0, 1});
  B::attr(n, "scan_output_axes", Dims{-1});
  B::attr(n, "scan_output_directions", Dims{1});
  auto* body = graph_attr(n, "body");
  in(body, "si", kF32, {"2"});
  in(body, "at", kF32, {"2"});
  in(body, "bt", kF32, {"2"});
  B::add_node(body, "Mul", {"at", "bt"}, {"ab"});
  B::add_node(body, "Add", {"si", "ab"}, {"so"});
  B::add_node(body, "Identity", {"so"}, {"y"});
  out(body, "so", kF32, {"2"});
  out(body, "y", kF32, {"2"});
  m.output("s");
  m.output("ys");
  Session s = open(m);
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, 2, 3, 4, 5, 6};
  const auto y = s.run({{"s0", floats({2}, {0, 1})}, {"a", floats({3, 2}, a)}, {"b", floats({2, 3}, b)}}).value_or_throw();
  std::vector<float> st = {0, 1}, ys(6);
  for (int t = 0; t < 3; ++t) {
    const int tb = 2 - t;  // b is read in reverse
    for (int j = 0; j < 2; ++j) {
      st[static_cast<std::size_t>(j)] += a[static_cast<std::size_t>(t * 2 + j)] * b[static_cast<std::size_t>(j * 3 + tb)];
      ys[static_cast<std::size_t>(j * 3 + (2 - t))] = st[static_cast<std::size_t>(j)];  // [2, 3], written in reverse
    }
  }
  expect_floats(y[0].tensor, {2}, st);
  expect_floats(y[1].tensor, {2, 3}, ys);
}

TEST(ControlFlow, NestedSubgraphReadsTheModelsGraph) {
  // A Loop whose body holds an If whose branch reads `r`, computed in the model's graph and
  // read nowhere else: r must live (and keep its slot in the memory plan) until the Loop.
  B m(17);
  m.input("M", {}, kI64);
  m.input("x", {"4"});
  m.node("Relu", {"x"}, {"r"});
  m.node("Neg", {"x"}, {"big"});  // planned values around r
  m.node("Exp", {"big"}, {"e"});
  auto* n = m.node("Loop", {"M", "", "e"}, {"acc"});
  auto* body = graph_attr(n, "body");
  in(body, "i", kI64, {});
  in(body, "ci", kBool, {});
  in(body, "ai", kF32, {"4"});
  auto* two = B::add_node(body, "Constant", {}, {"one"});
  auto* a = two->add_attribute();
  a->set_name("value_int");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  B::add_node(body, "Less", {"i", "one"}, {"first"});
  auto* iff = B::add_node(body, "If", {"first"}, {"d"});
  auto* then_g = graph_attr(iff, "then_branch");
  B::add_node(then_g, "Mul", {"r", "ai"}, {"tr"});
  out(then_g, "tr", kF32, {"4"});
  auto* else_g = graph_attr(iff, "else_branch");
  B::add_node(else_g, "Add", {"r", "ai"}, {"er"});
  out(else_g, "er", kF32, {"4"});
  B::add_node(body, "Identity", {"ci"}, {"co"});
  out(body, "co", kBool, {});
  out(body, "d", kF32, {"4"});
  m.output("acc");
  Session s = open(m);
  const std::vector<float> x = {-1, 0.5f, 2, -3};
  for (int pass = 0; pass < 2; ++pass) {
    const auto y = s.run({{"M", scalar_i64(3)}, {"x", floats({4}, x)}}).value_or_throw();
    std::vector<float> want(4);
    for (std::size_t i = 0; i < 4; ++i) {
      const float r = std::max(x[i], 0.0f);
      want[i] = std::exp(-x[i]) * r + r + r;  // iteration 0 multiplies, 1 and 2 add
    }
    expect_floats(y[0].tensor, {4}, want);
  }
  EXPECT_TRUE(s.memory_plan().made);
}

TEST(ControlFlow, MalformedControlFlowIsAnErrorNamingTheNode) {
  {
    B m = accumulating_loop(true, false);
    // Neither trip count nor condition.
    auto* n = m.g->mutable_node(0);
    n->set_input(0, "");
    n->set_input(1, "");
    Session s = open(m);
    const auto r = s.run({{"M", scalar_i64(1)}, {"c", scalar_bool(true)}, {"s0", floats({2}, {0, 0})}, {"x", floats({2}, {1, 1})}});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("(Loop)"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("never ends"), std::string::npos) << r.status().message();
  }
  {
    // A condition of two elements.
    B m(17);
    m.input("cond", {"2"}, kBool);
    auto* n = m.node("If", {"cond"}, {"y"});
    for (const char* b : {"then_branch", "else_branch"}) {
      auto* g = graph_attr(n, b);
      B::add_node(g, "Identity", {"cond"}, {std::string(b) + "_y"});
      out(g, std::string(b) + "_y", kBool, {"2"});
    }
    m.output("y");
    Session s = open(m);
    const auto r = s.run({{"cond", Tensor::from_vector<bool>(Shape(Dims{2}), {true, false}).value_or_throw()}});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("not one"), std::string::npos) << r.status().message();
  }
  {
    // A scan value whose dims change between iterations.
    B m(17);
    m.input("M", {}, kI64);
    m.input("s0", {"1"});
    auto* n = m.node("Loop", {"M", "", "s0"}, {"s", "scan"});
    auto* body = graph_attr(n, "body");
    in(body, "i", kI64, {});
    in(body, "ci", kBool, {});
    in(body, "si", kF32, {"N"});
    B::add_node(body, "Concat", {"si", "si"}, {"so"});
    B::attr(body->mutable_node(0), "axis", static_cast<std::int64_t>(0));
    B::add_node(body, "Identity", {"ci"}, {"co"});
    B::add_node(body, "Identity", {"so"}, {"sc"});
    out(body, "co", kBool, {});
    out(body, "so", kF32, {"N"});
    out(body, "sc", kF32, {"N"});
    m.output("s");
    m.output("scan");
    Session s = open(m);
    const auto r = s.run({{"M", scalar_i64(3)}, {"s0", floats({1}, {1})}});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("iteration 1 gives"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace tessera::exec
