// layernorm-fusion: layer normalisation written out in elementwise ops and reductions (as
// exporters write it before opset 17) becomes one LayerNormalization node:
//   M = ReduceMean(X, axes)        D = Sub(X, M)            P = Mul(D, D) or Pow(D, 2)
//   V = ReduceMean(P, axes)        E = Add(V, eps)          S = Sqrt(E)
//   N = Div(D, S)                  [Mul(N, gamma)]          [Add(., beta)]
// with axes the trailing dims of X (keepdims), eps, gamma and beta constants, every
// intermediate read only by the next step (D by P and N). The node is ai.onnx's from opset 17
// and tessera's LayerNormalization (the same op) below it, which expand_fused_ops writes back
// out. It computes the statistics in one pass per row instead of seven passes over the tensor.
#include <algorithm>
#include <cstring>

#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

// The values of a constant's integer elements.
std::optional<std::vector<std::int64_t>> int_constant(const Graph& g, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& val = g.values[static_cast<std::size_t>(v)];
  if (!val.constant || (val.constant->elem != ElemType::kI64 && val.constant->elem != ElemType::kI32)) return std::nullopt;
  const std::size_t w = val.constant->elem == ElemType::kI64 ? 8 : 4;
  std::vector<std::int64_t> r(val.constant->bytes.size() / w);
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (w == 8) {
      std::memcpy(&r[i], val.constant->bytes.data() + i * 8, 8);
    } else {
      std::int32_t x = 0;
      std::memcpy(&x, val.constant->bytes.data() + i * 4, 4);
      r[i] = x;
    }
  }
  return r;
}

bool is(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op && n.outputs.size() >= 1; }

// The first normalised axis when ReduceMean node n averages exactly the trailing dims of its
// input (rank known) and keeps them; else nullopt.
std::optional<std::int64_t> trailing_mean(const Graph& g, const Node& n, std::int64_t opset) {
  if (!is(n, "ReduceMean") || n.inputs.empty() || n.inputs[0] == kNoValue) return std::nullopt;
  if (const auto it = n.attrs.find("keepdims"); it != n.attrs.end() && it->second.i == 0) return std::nullopt;
  const ValueType& x = g.values[static_cast<std::size_t>(n.inputs[0])].type;
  if (x.elem != ElemType::kF32 || !x.shape || x.shape->empty()) return std::nullopt;
  std::optional<std::vector<std::int64_t>> axes;
  if (opset >= 18) {
    axes = n.inputs.size() > 1 ? int_constant(g, n.inputs[1]) : std::nullopt;
  } else if (const auto it = n.attrs.find("axes"); it != n.attrs.end()) {
    axes = it->second.ints;
  }
  if (!axes || axes->empty()) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(x.shape->size());
  for (std::int64_t& a : *axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  std::sort(axes->begin(), axes->end());
  for (std::size_t i = 0; i < axes->size(); ++i)
    if ((*axes)[i] != rank - static_cast<std::int64_t>(axes->size() - i)) return std::nullopt;
  return axes->front();
}

// The other input of binary node n when one of its inputs is v.
ValueId other(const Node& n, ValueId v) {
  if (n.inputs.size() != 2) return kNoValue;
  return n.inputs[0] == v ? n.inputs[1] : n.inputs[1] == v ? n.inputs[0] : kNoValue;
}

// Whether constant c (f32) broadcasts into the normalised dims `norm` (its rank no larger,
// each dim 1 or equal).
bool fits_norm(const Graph& g, ValueId c, const std::vector<Dim>& norm) {
  if (c == kNoValue) return false;
  const Value& v = g.values[static_cast<std::size_t>(c)];
  if (!v.constant || v.constant->elem != ElemType::kF32 || v.constant->dims.size() > norm.size()) return false;
  const std::size_t off = norm.size() - v.constant->dims.size();
  for (std::size_t i = 0; i < v.constant->dims.size(); ++i) {
    const std::int64_t d = v.constant->dims[i];
    if (d != 1 && !(norm[off + i].has_size() && norm[off + i].size == d)) return false;
  }
  return true;
}

}  // namespace

Status layernorm_fusion(Model& m, const OptimizeOptions&, PassReport& report) {
  Graph& g = m.graph;
  const std::int64_t opset = m.opsets.count("") ? m.opsets.at("") : 0;
  const std::vector<int> reader = sole_readers(g);
  // The nodes reading each value, each once (D has two: Mul(D, D) and the Div).
  std::vector<std::vector<int>> readers(g.values.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].inputs) {
      if (v == kNoValue) continue;
      auto& r = readers[static_cast<std::size_t>(v)];
      if (r.empty() || r.back() != static_cast<int>(i)) r.push_back(static_cast<int>(i));
    }
  const std::set<std::string> captured = captured_names(g);
  std::vector<char> is_output(g.values.size(), 0);
  for (ValueId v : g.outputs) is_output[static_cast<std::size_t>(v)] = 1;
  std::vector<char> keep(g.nodes.size(), 1);
  const auto next = [&](ValueId v) -> const Node* {
    const int r = reader[static_cast<std::size_t>(v)];
    return r < 0 || !keep[static_cast<std::size_t>(r)] ? nullptr : &g.nodes[static_cast<std::size_t>(r)];
  };
  const auto index = [&](const Node* n) { return static_cast<std::size_t>(n - g.nodes.data()); };

  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (!keep[i]) continue;
    const Node& mean = g.nodes[i];
    const std::optional<std::int64_t> axis = trailing_mean(g, mean, opset);
    if (!axis) continue;
    const ValueId x = mean.inputs[0];
    const Node* sub = next(mean.outputs[0]);
    if (!sub || !is(*sub, "Sub") || sub->inputs.size() != 2 || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0]) continue;
    const ValueId d = sub->outputs[0];
    const auto& dr = readers[static_cast<std::size_t>(d)];
    if (dr.size() != 2 || is_output[static_cast<std::size_t>(d)] || captured.count(g.values[static_cast<std::size_t>(d)].name)) continue;
    const Node* sq = nullptr;
    const Node* div = nullptr;
    for (int r : dr) {
      const Node& n = g.nodes[static_cast<std::size_t>(r)];
      if (is(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d) div = &n;
      else if ((is(n, "Mul") && other(n, d) == d) || is(n, "Pow")) sq = &n;
    }
    if (!sq || !div || !keep[index(sq)] || !keep[index(div)]) continue;
    if (is(*sq, "Pow")) {
      const auto e = scalar_constant(g, sq->inputs.size() == 2 ? sq->inputs[1] : kNoValue);
      if (sq->inputs[0] != d || !e || *e != 2.0) continue;
    }
    const Node* var = next(sq->outputs[0]);
    if (!var || trailing_mean(g, *var, opset) != axis || var->inputs[0] != sq->outputs[0]) continue;
    const Node* add = next(var->outputs[0]);
    if (!add || !is(*add, "Add")) continue;
    const auto eps = scalar_constant(g, other(*add, var->outputs[0]));
    if (!eps) continue;
    const Node* sqrt = next(add->outputs[0]);
    if (!sqrt || !is(*sqrt, "Sqrt") || next(sqrt->outputs[0]) != div || div->inputs[1] != sqrt->outputs[0]) continue;
    // Optional scale and bias.
    const std::vector<Dim> norm(g.values[static_cast<std::size_t>(x)].type.shape->begin() + *axis, g.values[static_cast<std::size_t>(x)].type.shape->end());
    std::vector<const Node*> chain = {&mean, sub, sq, var, add, sqrt, div};
    ValueId y = div->outputs[0], gamma = kNoValue, beta = kNoValue;
    if (const Node* mul = next(y); mul && is(*mul, "Mul") && fits_norm(g, other(*mul, y), norm)) {
      gamma = other(*mul, y);
      chain.push_back(mul);
      y = mul->outputs[0];
      if (const Node* bias = next(y); bias && is(*bias, "Add") && fits_norm(g, other(*bias, y), norm)) {
        beta = other(*bias, y);
        chain.push_back(bias);
        y = bias->outputs[0];
      }
    }
    if (gamma == kNoValue) {  // LayerNormalization needs a scale: ones of the normalised dims
      if (!std::all_of(norm.begin(), norm.end(), [](const Dim& dim) { return dim.has_size(); })) {
        report.refused.push_back("ReduceMean '" + mean.name + "': layer norm without a scale over dims not all known");
        continue;
      }
      std::vector<std::int64_t> dims;
      std::int64_t n = 1;
      for (const Dim& dim : norm) dims.push_back(dim.size), n *= dim.size;
      const std::vector<float> ones(static_cast<std::size_t>(n), 1.0f);
      gamma = add_constant(g, mean.name + "_scale", ElemType::kF32, dims, ones.data(), ones.size() * sizeof(float));
    }
    Node ln;
    ln.name = g.nodes[index(chain.back())].name;
    ln.op_type = "LayerNormalization";
    ln.domain = opset >= 17 ? "" : kTesseraDomain;
    ln.inputs = {x, gamma};
    if (beta != kNoValue) ln.inputs.push_back(beta);
    ln.outputs = {y};
    Attribute a;
    a.kind = Attribute::Kind::kInt;
    a.i = *axis;
    ln.attrs["axis"] = a;
    Attribute e;
    e.kind = Attribute::Kind::kFloat;
    e.f = static_cast<float>(*eps);
    ln.attrs["epsilon"] = e;
    const std::size_t last = index(chain.back());
    for (const Node* n : chain) keep[index(n)] = 0;
    keep[last] = 1;
    g.nodes[last] = std::move(ln);
    report.applied.push_back(std::to_string(chain.size()) + " nodes -> LayerNormalization '" + g.values[static_cast<std::size_t>(y)].name + "'");
    report.changes += static_cast<int>(chain.size());
  }
  compact(g, keep);
  if (report.changes > 0 && opset < 17 && !m.opsets.count(kTesseraDomain)) m.opsets[kTesseraDomain] = 1;
  return Status::ok();
}

}  // namespace tessera::graph::passes
