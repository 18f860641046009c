// The memory planner on random graphs, against its contract checked by brute force: two
// values whose lifetimes (views included) overlap never share bytes, except an output written
// in place over an input that dies at its node, where the op allows it; graph outputs and
// views get no slot; every slot lies inside the arena.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "../../src/exec/memory_plan.hpp"

namespace tessera::exec::detail {
namespace {

using graph::ValueId;

struct Case {
  graph::Graph g;
  std::vector<ValueUse> use;
};

Case random_case(std::mt19937& rng) {
  Case c;
  const auto add_value = [&](std::size_t bytes) {
    graph::Value v;
    v.name = "v" + std::to_string(c.g.values.size());
    c.g.values.push_back(v);
    c.use.push_back({bytes, graph::kNoValue, true});
    return static_cast<ValueId>(c.g.values.size() - 1);
  };
  const std::size_t sizes[] = {0, 64, 100, 256, 256, 1000, 4096};
  const auto size = [&] { return sizes[rng() % std::size(sizes)]; };
  const int inputs = 1 + static_cast<int>(rng() % 2);
  for (int i = 0; i < inputs; ++i) {
    const ValueId v = add_value(size());
    c.use[static_cast<std::size_t>(v)].plannable = false;
    c.g.inputs.push_back(v);
  }
  const char* ops[] = {"Relu", "Add", "Conv", "Reshape", "Split", "tessera:FusedConv"};
  const int nodes = 1 + static_cast<int>(rng() % 24);
  for (int i = 0; i < nodes; ++i) {
    graph::Node n;
    std::string op = ops[rng() % std::size(ops)];
    if (op.rfind("tessera:", 0) == 0) {
      n.domain = "tessera";
      op = op.substr(8);
    }
    n.op_type = op;
    const auto pick = [&] { return static_cast<ValueId>(rng() % c.g.values.size()); };
    const std::size_t arity = op == "Add" ? 2 : op == "FusedConv" ? 4 : 1;
    for (std::size_t k = 0; k < arity; ++k) n.inputs.push_back(pick());
    const ValueId x = n.inputs[0];
    if (op == "Reshape") {  // a view of its input
      const ValueId y = add_value(c.use[static_cast<std::size_t>(x)].bytes);
      c.use[static_cast<std::size_t>(y)].view_of = x;
      c.use[static_cast<std::size_t>(y)].plannable = false;
      n.outputs.push_back(y);
    } else {
      // Same bytes as the first input often, so that in-place chances come up.
      const int outs = op == "Split" ? 2 : 1;
      for (int k = 0; k < outs; ++k) {
        const ValueId y = add_value(rng() % 2 ? c.use[static_cast<std::size_t>(x)].bytes : size());
        c.use[static_cast<std::size_t>(y)].plannable = rng() % 8 != 0;
        n.outputs.push_back(y);
      }
    }
    c.g.nodes.push_back(std::move(n));
  }
  c.g.outputs.push_back(static_cast<ValueId>(c.g.values.size() - 1));
  if (rng() % 2) c.g.outputs.push_back(static_cast<ValueId>(rng() % c.g.values.size()));
  std::sort(c.g.outputs.begin(), c.g.outputs.end());
  c.g.outputs.erase(std::unique(c.g.outputs.begin(), c.g.outputs.end()), c.g.outputs.end());
  return c;
}

TEST(MemoryPlan, RandomGraphsKeepLiveValuesApart) {
  std::mt19937 rng(7);
  int in_place = 0, shared = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const Case c = random_case(rng);
    const MemoryPlan p = plan_memory(c.g, c.use);
    const std::size_t nv = c.g.values.size();
    const int nn = static_cast<int>(c.g.nodes.size());
    std::vector<int> producer(nv, -1), last(nv, -1);
    for (int i = 0; i < nn; ++i) {
      for (ValueId v : c.g.nodes[static_cast<std::size_t>(i)].outputs) producer[static_cast<std::size_t>(v)] = i;
      for (ValueId v : c.g.nodes[static_cast<std::size_t>(i)].inputs) last[static_cast<std::size_t>(v)] = i;
    }
    std::vector<char> is_output(nv, 0);
    for (ValueId v : c.g.outputs) {
      is_output[static_cast<std::size_t>(v)] = 1;
      last[static_cast<std::size_t>(v)] = nn;
    }
    // The end of each value's memory: its last read or that of any view of it.
    std::vector<int> end = last;
    for (std::size_t v = 0; v < nv; ++v) {
      std::size_t r = v;
      while (c.use[r].view_of != graph::kNoValue) r = static_cast<std::size_t>(c.use[r].view_of);
      end[r] = std::max(end[r], last[v]);
    }
    for (std::size_t v = 0; v < nv; ++v) {
      const bool own = producer[v] >= 0 && !is_output[v] && c.use[v].view_of == graph::kNoValue && c.use[v].plannable && c.use[v].bytes > 0;
      ASSERT_EQ(p.offset[v] != MemoryPlan::kNone, own) << "trial " << trial << " value " << v;
      if (own) {
        ASSERT_LE(static_cast<std::size_t>(p.offset[v]) + c.use[v].bytes, p.arena_bytes);
      }
    }
    for (std::size_t a = 0; a < nv; ++a)
      for (std::size_t b = a + 1; b < nv; ++b) {
        if (p.offset[a] == MemoryPlan::kNone || p.offset[b] == MemoryPlan::kNone) continue;
        const int a0 = producer[a], a1 = std::max(end[a], a0), b0 = producer[b], b1 = std::max(end[b], b0);
        if (a1 < b0 || b1 < a0) continue;  // never live together
        const std::size_t ao = static_cast<std::size_t>(p.offset[a]), bo = static_cast<std::size_t>(p.offset[b]);
        if (ao + c.use[a].bytes <= bo || bo + c.use[b].bytes <= ao) continue;  // apart
        ++shared;
        // Sharing: only b written in place over a, at the node where a dies.
        ASSERT_EQ(ao, bo) << "trial " << trial << ": values " << a << " and " << b << " overlap";
        ASSERT_EQ(a1, b0) << "trial " << trial << ": values " << a << " and " << b << " share a slot while both live";
        const graph::Node& n = c.g.nodes[static_cast<std::size_t>(b0)];
        bool read = false;
        for (std::size_t k = 0; k < n.inputs.size(); ++k)
          if (n.inputs[k] == static_cast<ValueId>(a)) {
            read = true;
            ASSERT_TRUE(may_overwrite(n, k)) << "trial " << trial << ": " << n.op_type << " input " << k << " overwritten";
          }
        ASSERT_TRUE(read) << "trial " << trial;
        ASSERT_EQ(c.use[a].bytes, c.use[b].bytes);
      }
    in_place += p.in_place;
  }
  EXPECT_GT(in_place, 100);  // the random graphs do exercise in-place reuse
  EXPECT_GT(shared, 100);
}

TEST(MemoryPlan, ChainReusesTwoSlots) {
  // x -> Conv -> Conv -> ... : each output dies at the next node, so two slots alternate.
  Case c;
  for (int i = 0; i <= 6; ++i) {
    graph::Value v;
    v.name = "v" + std::to_string(i);
    c.g.values.push_back(v);
    c.use.push_back({1024, graph::kNoValue, i > 0});
  }
  c.g.inputs = {0};
  for (int i = 0; i < 6; ++i) {
    graph::Node n;
    n.op_type = "Conv";
    n.inputs = {static_cast<ValueId>(i)};
    n.outputs = {static_cast<ValueId>(i + 1)};
    c.g.nodes.push_back(n);
  }
  c.g.outputs = {6};
  const MemoryPlan p = plan_memory(c.g, c.use);
  EXPECT_EQ(p.planned, 5);
  EXPECT_EQ(p.in_place, 0);
  EXPECT_EQ(p.naive_bytes, 5u * 1024);
  EXPECT_EQ(p.arena_bytes, 2u * 1024);
  for (int i = 1; i < 5; ++i) EXPECT_NE(p.offset[static_cast<std::size_t>(i)], p.offset[static_cast<std::size_t>(i + 1)]);
  // The same chain of Relus runs in place: one slot.
  for (graph::Node& n : c.g.nodes) n.op_type = "Relu";
  const MemoryPlan q = plan_memory(c.g, c.use);
  EXPECT_EQ(q.in_place, 4);
  EXPECT_EQ(q.arena_bytes, 1024u);
}

}  // namespace
}  // namespace tessera::exec::detail
