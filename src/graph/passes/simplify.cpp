// simplify: reshape and transpose chains.
//   Transpose(Transpose(x, p), q)   -> Transpose(x, p[q[j]]) (dropped when that is the identity)
//   Transpose(x, identity)          -> x
//   Reshape(Reshape(x, s), t)       -> Reshape(x, t) when t is a constant without 0 entries
//                                      (0 copies a dim of the inner result) or allowzero is set
//   Reshape, Flatten, Squeeze, Unsqueeze whose input and output have the same known dims -> x
//   Pow(x, 2) with a constant exponent                              -> Mul(x, x)
//   Gemm(a, B, transB = 1) with B an f32 initializer (not a graph input) -> Gemm(a, B^T const)
//     (BLAS reads a B stored [K, N] in place in its small-matrix path; transposed, it packed B
//     on every call: a transformer's 256 x 256 out-projection at batch 1 ran at 131 against
//     213 GFLOPS)
// A node whose output is a graph output or read by a subgraph is kept (its name must stay),
// though it may read further up a chain; an inner node left unread goes with the dead-code pass.
#include <cstring>
#include <numeric>

#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

std::optional<std::vector<std::int64_t>> static_dims(const Value& v) {
  if (!v.type.shape) return std::nullopt;
  std::vector<std::int64_t> d;
  for (const Dim& x : *v.type.shape) {
    if (!x.has_size()) return std::nullopt;
    d.push_back(x.size);
  }
  return d;
}

// Pow(x, 2) with x a float and the exponent a constant 2 of one element and rank no larger
// than x's (so Mul(x, x) has Pow's output type).
bool squaring(const Graph& g, const Node& n) {
  const Value& x = g.values[static_cast<std::size_t>(n.inputs[0])];
  if (n.inputs[1] == kNoValue) return false;
  const Value& e = g.values[static_cast<std::size_t>(n.inputs[1])];
  if (x.type.elem != ElemType::kF32 && x.type.elem != ElemType::kF64 && x.type.elem != ElemType::kF16 && x.type.elem != ElemType::kBF16) return false;
  if (!x.type.shape || !e.type.shape || e.type.shape->size() > x.type.shape->size()) return false;
  return scalar_constant(g, n.inputs[1]) == 2.0;
}

// A Transpose's permutation (its attribute, or the reversal of a known rank), if valid.
std::optional<std::vector<std::int64_t>> permutation(const Graph& g, const Node& n) {
  std::vector<std::int64_t> p;
  if (const auto it = n.attrs.find("perm"); it != n.attrs.end()) {
    p = it->second.ints;
  } else {
    const Value& x = g.values[static_cast<std::size_t>(n.inputs[0])];
    if (!x.type.shape) return std::nullopt;
    p.resize(x.type.shape->size());
    std::iota(p.rbegin(), p.rend(), std::int64_t{0});
  }
  std::vector<char> seen(p.size(), 0);
  for (std::int64_t a : p) {
    if (a < 0 || a >= static_cast<std::int64_t>(p.size()) || seen[static_cast<std::size_t>(a)]) return std::nullopt;
    seen[static_cast<std::size_t>(a)] = 1;
  }
  return p;
}

bool is_identity(const std::vector<std::int64_t>& p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

bool one_input(const Node& n) { return !n.inputs.empty() && n.inputs[0] != kNoValue && n.outputs.size() == 1 && n.domain.empty(); }

}  // namespace

Status simplify(Model& m, const OptimizeOptions&, PassReport& report) {
  Graph& g = m.graph;
  const std::set<std::string> captured = captured_names(g);
  std::vector<char> is_output(g.values.size(), 0);
  for (ValueId v : g.outputs) is_output[static_cast<std::size_t>(v)] = 1;
  const auto pinned = [&](ValueId v) {
    return is_output[static_cast<std::size_t>(v)] || captured.count(g.values[static_cast<std::size_t>(v)].name);
  };
  const auto producer = [&](ValueId v) -> Node* {
    const int p = g.values[static_cast<std::size_t>(v)].producer;
    return p < 0 ? nullptr : &g.nodes[static_cast<std::size_t>(p)];
  };
  std::vector<char> keep(g.nodes.size(), 1);
  const auto drop = [&](std::size_t i, const std::string& what) {
    const Node& n = g.nodes[i];
    replace_uses(g, n.outputs[0], n.inputs[0]);
    keep[i] = 0;
    ++report.changes;
    report.applied.push_back(what + " '" + n.name + "' removed");
  };

  std::set<ValueId> graph_inputs(g.inputs.begin(), g.inputs.end());
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.op_type == "Gemm" && n.domain.empty() && n.inputs.size() >= 2 && n.inputs[1] != kNoValue) {
      const auto tb = n.attrs.find("transB");
      const ValueId b = n.inputs[1];
      const std::shared_ptr<const Constant> c = g.values[static_cast<std::size_t>(b)].constant;
      if (tb != n.attrs.end() && tb->second.i != 0 && c && c->elem == ElemType::kF32 && c->dims.size() == 2 &&
          !graph_inputs.count(b) && c->bytes.size() == static_cast<std::size_t>(c->numel()) * sizeof(float)) {
        const std::int64_t rows = c->dims[0], cols = c->dims[1];
        std::vector<float> t(static_cast<std::size_t>(rows * cols));
        const auto* src = reinterpret_cast<const float*>(c->bytes.data());
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t k = 0; k < cols; ++k) t[static_cast<std::size_t>(k * rows + r)] = src[r * cols + k];
        const std::string name = g.values[static_cast<std::size_t>(b)].name + "_transposed";
        const ValueId bt = add_constant(g, name, ElemType::kF32, {cols, rows}, t.data(), t.size() * sizeof(float));
        n.inputs[1] = bt;  // add_constant grows g.values only: n stays valid
        n.attrs.erase("transB");
        ++report.changes;
        report.applied.push_back("Gemm '" + n.name + "': constant B stored transposed (transB = 0)");
      }
      continue;
    }
    if (n.op_type == "Pow" && n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] != kNoValue && squaring(g, n)) {
      // x * x is the correctly rounded square; Pow's general kernel is many times slower.
      n.op_type = "Mul";
      n.inputs[1] = n.inputs[0];
      ++report.changes;
      report.applied.push_back("Pow '" + n.name + "' by 2 -> Mul");
      continue;
    }
    if (!one_input(n) || n.outputs[0] == kNoValue) continue;
    const bool pin = pinned(n.outputs[0]);  // may read another input, may not go
    if (n.op_type == "Transpose") {
      std::optional<std::vector<std::int64_t>> q = permutation(g, n);
      if (!q) continue;
      Node* inner = producer(n.inputs[0]);
      if (inner && keep[static_cast<std::size_t>(inner - g.nodes.data())] && one_input(*inner) && inner->op_type == "Transpose") {
        const std::optional<std::vector<std::int64_t>> p = permutation(g, *inner);
        if (p && p->size() == q->size()) {
          std::vector<std::int64_t> r(q->size());
          for (std::size_t j = 0; j < r.size(); ++j) r[j] = (*p)[static_cast<std::size_t>((*q)[j])];
          n.inputs[0] = inner->inputs[0];
          Attribute a;
          a.kind = Attribute::Kind::kInts;
          a.ints = r;
          n.attrs["perm"] = a;
          *q = r;
          ++report.changes;
          report.applied.push_back("Transpose '" + inner->name + "' + Transpose '" + n.name + "' -> one Transpose");
        }
      }
      if (!pin && is_identity(*q)) drop(i, "identity Transpose");
      continue;
    }
    if (n.op_type == "Reshape" && n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
      const Value& shape = g.values[static_cast<std::size_t>(n.inputs[1])];
      const auto az = n.attrs.find("allowzero");
      const bool allowzero = az != n.attrs.end() && az->second.i != 0;
      bool no_zero = allowzero;
      if (!no_zero && shape.constant && shape.constant->elem == ElemType::kI64) {
        no_zero = true;
        const auto* d = reinterpret_cast<const std::int64_t*>(shape.constant->bytes.data());
        for (std::int64_t k = 0; k < shape.constant->numel(); ++k) no_zero = no_zero && d[k] != 0;
      }
      Node* inner = producer(n.inputs[0]);
      if (no_zero && inner && keep[static_cast<std::size_t>(inner - g.nodes.data())] && one_input(*inner) && inner->op_type == "Reshape") {
        n.inputs[0] = inner->inputs[0];
        ++report.changes;
        report.applied.push_back("Reshape '" + inner->name + "' + Reshape '" + n.name + "' -> one Reshape");
      }
    }
    if (n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze") {
      const auto in = static_dims(g.values[static_cast<std::size_t>(n.inputs[0])]);
      const auto out = static_dims(g.values[static_cast<std::size_t>(n.outputs[0])]);
      if (!pin && in && out && *in == *out) drop(i, "no-op " + n.op_type);
    }
  }
  compact(g, keep);
  return Status::ok();
}

}  // namespace tessera::graph::passes
