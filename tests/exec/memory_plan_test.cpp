// The memory planner on random graphs, against its contract checked by brute force: two
// values whose lifetimes (views included) overlap never share bytes, except an output written
// in place over an input that dies at its node, where the op allows it; graph outputs and
// views get no slot; every slot lies inside the arena.
#include <algorithm>
#include <numeric>
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

// Per node its wave, as Program computes them: one past the latest wave making an input.
std::vector<int> waves_of(const graph::Graph& g) {
  std::vector<int> made(g.values.size(), -1), wave;
  for (const graph::Node& n : g.nodes) {
    int w = 0;
    for (ValueId v : n.inputs) w = std::max(w, made[static_cast<std::size_t>(v)] + 1);
    for (ValueId v : n.outputs) made[static_cast<std::size_t>(v)] = w;
    wave.push_back(w);
  }
  return wave;
}

// Checks plan p of case c against the contract, nodes running at step(i) (their index, or
// their wave: nodes of one wave at once). Counts in-place and shared slots.
void check_plan(const Case& c, const MemoryPlan& p, const std::vector<int>& step, int trial, int& shared) {
  const std::size_t nv = c.g.values.size();
  const int nn = static_cast<int>(c.g.nodes.size());
  std::vector<int> producer(nv, -1), last(nv, -1);
  for (int i = 0; i < nn; ++i) {
    for (ValueId v : c.g.nodes[static_cast<std::size_t>(i)].outputs) producer[static_cast<std::size_t>(v)] = i;
    for (ValueId v : c.g.nodes[static_cast<std::size_t>(i)].inputs) last[static_cast<std::size_t>(v)] = std::max(last[static_cast<std::size_t>(v)], step[static_cast<std::size_t>(i)]);
  }
  std::vector<char> is_output(nv, 0);
  for (ValueId v : c.g.outputs) {
    is_output[static_cast<std::size_t>(v)] = 1;
    last[static_cast<std::size_t>(v)] = nn;
  }
  // The end of each value's memory: its last read or that of any view of it.
  const auto root = [&](std::size_t v) {
    while (c.use[v].view_of != graph::kNoValue) v = static_cast<std::size_t>(c.use[v].view_of);
    return v;
  };
  std::vector<int> end = last;
  for (std::size_t v = 0; v < nv; ++v) end[root(v)] = std::max(end[root(v)], last[v]);
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
      const int a0 = step[static_cast<std::size_t>(producer[a])], a1 = std::max(end[a], a0);
      const int b0 = step[static_cast<std::size_t>(producer[b])], b1 = std::max(end[b], b0);
      if (a1 < b0 || b1 < a0) continue;  // never live together
      const std::size_t ao = static_cast<std::size_t>(p.offset[a]), bo = static_cast<std::size_t>(p.offset[b]);
      if (ao + c.use[a].bytes <= bo || bo + c.use[b].bytes <= ao) continue;  // apart
      ++shared;
      // Sharing: only b written in place over a, at the step where a dies, by the one node
      // that reads a (or a view of it) at that step.
      ASSERT_EQ(ao, bo) << "trial " << trial << ": values " << a << " and " << b << " overlap";
      ASSERT_EQ(a1, b0) << "trial " << trial << ": values " << a << " and " << b << " share a slot while both live";
      const graph::Node& n = c.g.nodes[static_cast<std::size_t>(producer[b])];
      bool read = false;
      for (std::size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == static_cast<ValueId>(a)) {
          read = true;
          ASSERT_TRUE(may_overwrite(n, k)) << "trial " << trial << ": " << n.op_type << " input " << k << " overwritten";
        }
      ASSERT_TRUE(read) << "trial " << trial;
      ASSERT_EQ(c.use[a].bytes, c.use[b].bytes);
      for (int j = 0; j < nn; ++j) {
        if (j == producer[b] || step[static_cast<std::size_t>(j)] != a1) continue;
        for (ValueId v : c.g.nodes[static_cast<std::size_t>(j)].inputs)
          ASSERT_NE(root(static_cast<std::size_t>(v)), a) << "trial " << trial << ": node " << j << " reads " << a << " while it is overwritten";
      }
    }
}

TEST(MemoryPlan, RandomGraphsKeepLiveValuesApart) {
  std::mt19937 rng(7);
  int in_place = 0, shared = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const Case c = random_case(rng);
    std::vector<int> index(c.g.nodes.size());
    std::iota(index.begin(), index.end(), 0);
    check_plan(c, plan_memory(c.g, c.use), index, trial, shared);
    in_place += plan_memory(c.g, c.use).in_place;
  }
  EXPECT_GT(in_place, 100);  // the random graphs do exercise in-place reuse
  EXPECT_GT(shared, 100);
}

// Planned for waves (the nodes of a wave run at once): values of one wave never share memory,
// and in place only where no other node of the wave reads the input.
TEST(MemoryPlan, RandomGraphsInWavesKeepConcurrentValuesApart) {
  std::mt19937 rng(8);
  int in_place = 0, shared = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const Case c = random_case(rng);
    const std::vector<int> wave = waves_of(c.g);
    const MemoryPlan p = plan_memory(c.g, c.use, wave);
    check_plan(c, p, wave, trial, shared);
    in_place += p.in_place;
  }
  EXPECT_GT(in_place, 50);
  EXPECT_GT(shared, 50);
}

// Two branches from x: in index order b's chain may reuse a's memory; in waves a and b are
// made at once and must not.
TEST(MemoryPlan, WavesKeepParallelBranchesApart) {
  Case c;
  for (int i = 0; i < 6; ++i) {
    graph::Value v;
    v.name = "v" + std::to_string(i);
    c.g.values.push_back(v);
    c.use.push_back({1024, graph::kNoValue, i > 0});
  }
  c.g.inputs = {0};
  const auto node = [&](const char* op, std::vector<ValueId> in, ValueId out) {
    graph::Node n;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    c.g.nodes.push_back(n);
  };
  node("Conv", {0}, 1);     // a            wave 0
  node("Conv", {1}, 2);     // a' (a dies)  wave 1
  node("Conv", {0}, 3);     // b            wave 0
  node("Conv", {3}, 4);     // b' (b dies)  wave 1
  node("Add", {2, 4}, 5);   //              wave 2
  c.g.outputs = {5};
  const MemoryPlan seq = plan_memory(c.g, c.use);
  EXPECT_EQ(seq.arena_bytes, 3u * 1024);
  EXPECT_EQ(seq.offset[1], seq.offset[3]);  // one after the other, a and b share
  const std::vector<int> wave = waves_of(c.g);
  EXPECT_EQ(wave, (std::vector<int>{0, 1, 0, 1, 2}));
  const MemoryPlan par = plan_memory(c.g, c.use, wave);
  EXPECT_EQ(par.arena_bytes, 4u * 1024);
  std::vector<std::int64_t> offsets(par.offset.begin() + 1, par.offset.begin() + 5);
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::unique(offsets.begin(), offsets.end()), offsets.end());  // four distinct slots
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
