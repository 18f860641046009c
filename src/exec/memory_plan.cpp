// Memory planning (memory_plan.hpp): lifetimes, in-place reuse, greedy-by-size placement.
#include "memory_plan.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <string_view>

#include "tessera/graph/passes.hpp"

namespace tessera::exec::detail {

bool may_overwrite(const graph::Node& n, std::size_t k) {
  // The primitives behind these kernels allow y == x exactly (dnn.hpp, tensor_ops.hpp): each
  // element is read before the same element is written.
  static const std::set<std::string_view> binary = {"Add", "Sub", "Mul", "Div", "Pow"};
  static const std::set<std::string_view> unary = {
      "Abs",  "Neg",  "Exp",  "Log",  "Sqrt",     "Reciprocal", "Floor",     "Ceil",      "Round", "Sign",  "Sin",
      "Cos",  "Tan",  "Asin", "Acos", "Atan",     "Sinh",       "Cosh",      "Erf",       "Not",   "Relu",  "Sigmoid",
      "Tanh", "Softplus", "Softsign", "HardSwish", "Mish",     "LeakyRelu", "Elu",       "Celu",  "Selu",  "HardSigmoid",
      "Gelu", "Clip"};
  if (n.domain == graph::kTesseraDomain)  // FusedConv's residual, FusedElementwise's X
    return (n.op_type == "FusedConv" && k == 3) || (n.op_type == "FusedElementwise" && k == 0);
  if (!n.domain.empty()) return false;
  if (binary.count(n.op_type)) return k < 2;
  return unary.count(n.op_type) && k == 0;
}

namespace {

constexpr std::size_t kAlign = 64;
std::size_t align_up(std::size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }

struct Slot {
  std::size_t bytes;
  int first, last;  // the steps (nodes or waves) between which it holds a live value (inclusive)
  std::size_t offset = 0;
};

}  // namespace

MemoryPlan plan_memory(const graph::Graph& g, const std::vector<ValueUse>& use, std::span<const int> wave_of) {
  const std::size_t nv = g.values.size();
  const int nn = static_cast<int>(g.nodes.size());
  MemoryPlan p;
  p.offset.assign(nv, MemoryPlan::kNone);
  p.slot.assign(nv, -1);
  if (use.size() != nv || (!wave_of.empty() && wave_of.size() != g.nodes.size())) return p;
  const auto at = [](graph::ValueId v) { return static_cast<std::size_t>(v); };
  // When node i runs: its index, or its wave (a step nodes share).
  const auto step = [&](int i) { return wave_of.empty() ? i : wave_of[static_cast<std::size_t>(i)]; };

  std::vector<int> producer(nv, -1), last(nv, -1);
  std::vector<char> is_output(nv, 0);
  std::vector<std::vector<graph::ValueId>> reads(g.nodes.size());  // per node: inputs and captures
  for (int i = 0; i < nn; ++i) {
    const graph::Node& n = g.nodes[static_cast<std::size_t>(i)];
    for (graph::ValueId v : n.outputs)
      if (v != graph::kNoValue) producer[at(v)] = i;
    std::vector<graph::ValueId>& r = reads[static_cast<std::size_t>(i)];
    for (graph::ValueId v : n.inputs)
      if (v != graph::kNoValue) r.push_back(v);
    for (graph::ValueId v : graph::subgraph_reads(g, n)) r.push_back(v);
    for (graph::ValueId v : r) last[at(v)] = std::max(last[at(v)], step(i));
  }
  for (graph::ValueId v : g.outputs) {
    is_output[at(v)] = 1;
    last[at(v)] = nn;  // read by the caller after the last node
  }
  // A value's memory lives until the last read of it or of any view of it.
  const auto root = [&](graph::ValueId v) {
    for (std::size_t hops = 0; use[at(v)].view_of != graph::kNoValue && hops < nv; ++hops) v = use[at(v)].view_of;
    return v;
  };
  std::vector<int> end = last;
  for (std::size_t v = 0; v < nv; ++v) {
    const graph::ValueId r = root(static_cast<graph::ValueId>(v));
    end[at(r)] = std::max(end[at(r)], last[v]);
  }
  // Per value: how many nodes read it (or a view of it) at the step its memory dies. Writing
  // over it in place needs that to be the writer alone.
  std::vector<int> final_readers(nv, 0);
  for (int i = 0; i < nn; ++i) {
    std::set<graph::ValueId> roots;
    for (graph::ValueId v : reads[static_cast<std::size_t>(i)]) roots.insert(root(v));
    for (graph::ValueId r : roots)
      if (end[at(r)] == step(i)) ++final_readers[at(r)];
  }

  for (std::size_t v = 0; v < nv; ++v) {
    if (producer[v] < 0 || is_output[v]) continue;
    if (use[v].view_of != graph::kNoValue) {
      ++p.views;
      continue;
    }
    p.naive_bytes += use[v].bytes;
    if (!use[v].plannable) p.unplanned_bytes += use[v].bytes;
  }

  std::vector<Slot> slots;
  for (int i = 0; i < nn; ++i) {
    const graph::Node& n = g.nodes[static_cast<std::size_t>(i)];
    std::set<int> taken;  // slots given to this node's outputs
    for (graph::ValueId v : n.outputs) {
      if (v == graph::kNoValue) continue;
      const ValueUse& u = use[at(v)];
      if (!u.plannable || is_output[at(v)] || u.view_of != graph::kNoValue || u.bytes == 0) continue;
      const int v_end = std::max(end[at(v)], step(i));
      int s = -1;
      for (std::size_t k = 0; k < n.inputs.size() && s < 0; ++k) {
        const graph::ValueId x = n.inputs[k];
        if (x == graph::kNoValue || !may_overwrite(n, k) || p.slot[at(x)] < 0) continue;
        const int xs = p.slot[at(x)];
        if (taken.count(xs) || slots[static_cast<std::size_t>(xs)].last != step(i) || final_readers[at(x)] != 1 || use[at(x)].bytes != u.bytes) continue;
        // x must not also be read through an input the kernel reads while it writes.
        bool only_overwritable = true;
        for (std::size_t j = 0; j < n.inputs.size(); ++j)
          if (n.inputs[j] == x && !may_overwrite(n, j)) only_overwritable = false;
        if (only_overwritable) s = xs;
      }
      if (s >= 0) {
        slots[static_cast<std::size_t>(s)].last = v_end;
        ++p.in_place;
      } else {
        s = static_cast<int>(slots.size());
        slots.push_back({u.bytes, step(i), v_end});
      }
      taken.insert(s);
      p.slot[at(v)] = s;
      ++p.planned;
    }
  }

  // Greedy by size: the largest slots first, each at the lowest offset free for its lifetime.
  std::vector<std::size_t> order(slots.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<std::size_t> placed;
  for (std::size_t s : order) {
    Slot& x = slots[s];
    std::vector<const Slot*> live;
    for (std::size_t q : placed)
      if (slots[q].first <= x.last && x.first <= slots[q].last) live.push_back(&slots[q]);
    std::sort(live.begin(), live.end(), [](const Slot* a, const Slot* b) { return a->offset < b->offset; });
    std::size_t off = 0;
    for (const Slot* l : live) {
      if (off + x.bytes <= l->offset) break;
      off = std::max(off, align_up(l->offset + l->bytes));
    }
    x.offset = off;
    p.arena_bytes = std::max(p.arena_bytes, align_up(off + x.bytes));
    placed.push_back(s);
  }
  for (const Slot& s : slots) p.slot_bytes.push_back(s.bytes);
  for (std::size_t v = 0; v < nv; ++v)
    if (p.slot[v] >= 0) p.offset[v] = static_cast<std::int64_t>(slots[static_cast<std::size_t>(p.slot[v])].offset);
  return p;
}

}  // namespace tessera::exec::detail
