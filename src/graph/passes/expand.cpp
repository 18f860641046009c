// expand_fused_ops (passes.hpp): tessera's fused ops back into the ai.onnx nodes they stand
// for, so that an optimised model runs anywhere (`tessera optimize --portable`). FusedConv
// becomes Conv [+ Add] [+ activation]; FusedElementwise one node per step; LayerNormalization
// (tessera's, below opset 17) the ReduceMean, Sub, Mul, Add, Sqrt, Div chain it came from. Clip's bounds
// become constants (attributes before opset 11), Gelu's tanh form the attribute approximate.
// Channels-last nodes (the layout pass's) become their channels-first form between Transposes.

#include "pass.hpp"

namespace tessera::graph {
namespace {

// A scalar f32 initializer; its id.
ValueId scalar_constant(Graph& g, const std::string& name, float v) { return passes::add_constant(g, name, ElemType::kF32, {}, &v, sizeof v); }

// The ai.onnx node of activation `op` with its parameters (as the fused ops store them) from
// x to y.
Node activation_node(Graph& g, std::int64_t opset, const std::string& op, float alpha, float beta, ValueId x, ValueId y, const std::string& name) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = {x};
  n.outputs = {y};
  if (op == "LeakyRelu" || op == "Elu" || op == "Celu") n.attrs["alpha"] = float_attribute(alpha);
  if (op == "Selu") n.attrs["alpha"] = float_attribute(alpha), n.attrs["gamma"] = float_attribute(beta);
  if (op == "HardSigmoid") n.attrs["alpha"] = float_attribute(alpha), n.attrs["beta"] = float_attribute(beta);
  if (op == "Gelu" && alpha != 0) {
    Attribute a;
    a.kind = Attribute::Kind::kString;
    a.s = "tanh";
    n.attrs["approximate"] = a;
  }
  if (op == "Clip") {
    if (opset < 11) {
      n.attrs["min"] = float_attribute(alpha);
      n.attrs["max"] = float_attribute(beta);
    } else {
      n.inputs.push_back(scalar_constant(g, name + "_min", alpha));
      n.inputs.push_back(scalar_constant(g, name + "_max", beta));
    }
  }
  return n;
}

// The nodes standing for fused node f (its output keeps its value).
Result<std::vector<Node>> expand(Graph& g, std::int64_t opset, const Node& f) {
  const ValueId y = f.outputs.at(0);
  const ValueType type = g.values[static_cast<std::size_t>(y)].type;
  std::vector<Node> out;
  ValueId v = kNoValue;
  // The next node's output: y for the last one, else a new value of y's type.
  const auto next_value = [&](bool last, const std::string& tag) { return last ? y : passes::add_value(g, f.name + "_" + tag, type); };
  const auto attr = [&](const char* name) -> const Attribute* {
    const auto it = f.attrs.find(name);
    return it == f.attrs.end() ? nullptr : &it->second;
  };
  if (f.op_type == "FusedConv") {
    const Attribute* act = attr("activation");
    const bool residual = f.inputs.size() > 3 && f.inputs[3] != kNoValue;
    Node conv;
    conv.name = f.name;
    conv.op_type = "Conv";
    conv.inputs.assign(f.inputs.begin(), f.inputs.begin() + std::min<std::ptrdiff_t>(3, static_cast<std::ptrdiff_t>(f.inputs.size())));
    while (!conv.inputs.empty() && conv.inputs.back() == kNoValue) conv.inputs.pop_back();
    for (const auto& [k, a] : f.attrs)
      if (k != "activation" && k != "activation_alpha" && k != "activation_beta") conv.attrs[k] = a;
    v = next_value(!residual && !act, "conv");
    conv.outputs = {v};
    out.push_back(std::move(conv));
    if (residual) {
      Node add;
      add.name = f.name + "_residual";
      add.op_type = "Add";
      const ValueId a = next_value(!act, "residual");
      add.inputs = {v, f.inputs[3]};
      add.outputs = {a};
      out.push_back(std::move(add));
      v = a;
    }
    if (act) {
      const Attribute* al = attr("activation_alpha");
      const Attribute* be = attr("activation_beta");
      out.push_back(activation_node(g, opset, act->s, al ? al->f : 0, be ? be->f : 0, v, y, f.name + "_" + act->s));
    }
    return out;
  }
  if (f.op_type == "LayerNormalization") {
    // Written out as the layernorm-fusion pass found it: M = ReduceMean(X), D = X - M,
    // V = ReduceMean(D * D), Y = D / Sqrt(V + eps) * Scale [+ B], over the trailing axes.
    const ValueId x = f.inputs.at(0);
    const ValueType& xt = g.values[static_cast<std::size_t>(x)].type;
    if (!xt.shape) return invalid_argument("expand: LayerNormalization '" + f.name + "': X's rank is not known");
    const auto rank = static_cast<std::int64_t>(xt.shape->size());
    const Attribute* ax = attr("axis");
    std::int64_t axis = ax ? ax->i : -1;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return invalid_argument("expand: LayerNormalization '" + f.name + "': axis out of range");
    std::vector<std::int64_t> axes;
    for (std::int64_t a = axis; a < rank; ++a) axes.push_back(a);
    std::vector<Dim> kept = *xt.shape;
    for (std::int64_t a = axis; a < rank; ++a) kept[static_cast<std::size_t>(a)] = Dim{1, {}};
    const ValueType stat{ElemType::kF32, kept};
    const auto node = [&](const std::string& op, std::vector<ValueId> in, ValueId o) {
      Node n;
      n.name = f.name + "_" + std::to_string(out.size()) + "_" + op;
      n.op_type = op;
      n.inputs = std::move(in);
      n.outputs = {o};
      out.push_back(std::move(n));
      return o;
    };
    const auto mean = [&](ValueId in, const std::string& tag) {
      const ValueId o = passes::add_value(g, f.name + "_" + tag, stat);
      node("ReduceMean", {in}, o);
      Node& r = out.back();
      if (opset >= 18) {
        r.inputs.push_back(passes::add_constant(g, f.name + "_" + tag + "_axes", ElemType::kI64, {static_cast<std::int64_t>(axes.size())},
                                                axes.data(), axes.size() * sizeof(std::int64_t)));
      } else {
        Attribute at;
        at.kind = Attribute::Kind::kInts;
        at.ints = axes;
        r.attrs["axes"] = at;
      }
      return o;
    };
    const Attribute* ep = attr("epsilon");
    const bool bias = f.inputs.size() > 2 && f.inputs[2] != kNoValue;
    const ValueId m = mean(x, "mean");
    const ValueId d = node("Sub", {x, m}, passes::add_value(g, f.name + "_centred", type));
    const ValueId sq = node("Mul", {d, d}, passes::add_value(g, f.name + "_squares", type));
    const ValueId var = mean(sq, "variance");
    const ValueId ve = node("Add", {var, scalar_constant(g, f.name + "_epsilon", ep ? ep->f : 1e-5f)}, passes::add_value(g, f.name + "_var_eps", stat));
    const ValueId sd = node("Sqrt", {ve}, passes::add_value(g, f.name + "_stddev", stat));
    const ValueId n = node("Div", {d, sd}, passes::add_value(g, f.name + "_normalised", type));
    const ValueId scaled = node("Mul", {n, f.inputs.at(1)}, bias ? passes::add_value(g, f.name + "_scaled", type) : y);
    if (bias) node("Add", {scaled, f.inputs[2]}, y);
    return out;
  }
  const Attribute *ops = attr("ops"), *operands = attr("operands"), *alphas = attr("alphas"), *betas = attr("betas");
  if (!ops || !operands || !alphas || !betas || operands->ints.size() != ops->strings.size() ||
      alphas->floats.size() != ops->strings.size() || betas->floats.size() != ops->strings.size())
    return invalid_argument("expand: FusedElementwise '" + f.name + "' lacks consistent ops, operands, alphas and betas");
  static const std::set<std::string> kActivations = {"Relu", "Sigmoid", "Tanh", "Softplus", "Softsign", "HardSwish", "Mish",
                                                     "LeakyRelu", "Elu", "Celu", "Selu", "HardSigmoid", "Gelu", "Clip"};
  v = f.inputs.at(0);
  const std::size_t n = ops->strings.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& op = ops->strings[i];
    const std::string name = f.name + "_" + std::to_string(i) + "_" + op;
    const ValueId o = next_value(i + 1 == n, std::to_string(i));
    if (kActivations.count(op)) {
      out.push_back(activation_node(g, opset, op, alphas->floats[i], betas->floats[i], v, o, name));
    } else {
      Node s;
      s.name = name;
      s.op_type = op;
      const std::int64_t k = operands->ints[i];
      const auto index = static_cast<std::size_t>(k < 0 ? -k : k);
      if (k != 0 && index >= f.inputs.size()) return invalid_argument("expand: FusedElementwise '" + f.name + "' step " + std::to_string(i) + ": operand " + std::to_string(k));
      if (k == 0) s.inputs = {v};
      else if (k > 0) s.inputs = {v, f.inputs[index]};
      else s.inputs = {f.inputs[index], v};
      s.outputs = {o};
      out.push_back(std::move(s));
    }
    v = o;
  }
  if (n == 0) {  // no steps: Y = X
    Node id;
    id.name = f.name;
    id.op_type = "Identity";
    id.inputs = {v};
    id.outputs = {y};
    out.push_back(std::move(id));
  }
  return out;
}

// A channels-last node (the layout pass's) as Transposes around its channels-first form: X
// (and FusedConv's Residual) to [N, C, H, W], the node without channels_last (a pool back in
// ai.onnx), its output back to [N, H, W, C]. Returns the Transposes before, the node, the
// Transpose after.
std::vector<Node> channels_first_form(Graph& g, Node n) {
  static constexpr std::int64_t kToFirst[4] = {0, 3, 1, 2}, kToLast[4] = {0, 2, 3, 1};
  const auto permuted = [&](ValueId v, const std::int64_t* perm) {
    ValueType t = g.values[static_cast<std::size_t>(v)].type;
    for (std::size_t i = 0; t.shape && t.shape->size() == 4 && i < 4; ++i)
      (*t.shape)[i] = (*g.values[static_cast<std::size_t>(v)].type.shape)[static_cast<std::size_t>(perm[i])];
    return t;
  };
  const auto transpose = [&](ValueId from, ValueId to, const std::int64_t* perm, const std::string& name) {
    Node t;
    t.name = name;
    t.op_type = "Transpose";
    t.inputs = {from};
    t.outputs = {to};
    t.attrs["perm"] = ints_attribute(std::vector<std::int64_t>(perm, perm + 4));
    return t;
  };
  std::vector<Node> out;
  const auto to_first = [&](ValueId& v, const std::string& tag) {
    const ValueId f = passes::add_value(g, n.name + "_" + tag, permuted(v, kToFirst));
    out.push_back(transpose(v, f, kToFirst, n.name + "_" + tag));
    v = f;
  };
  n.attrs.erase("channels_last");
  if (n.op_type != "FusedConv") n.domain.clear();
  to_first(n.inputs[0], "x_nchw");
  if (n.op_type == "FusedConv" && n.inputs.size() > 3 && n.inputs[3] != kNoValue) to_first(n.inputs[3], "residual_nchw");
  const ValueId y = n.outputs[0];
  n.outputs[0] = passes::add_value(g, n.name + "_y_nchw", permuted(y, kToFirst));
  Node back = transpose(n.outputs[0], y, kToLast, n.name + "_y_nhwc");
  out.push_back(std::move(n));
  out.push_back(std::move(back));
  return out;
}

}  // namespace

Status expand_fused_ops(Model& model) {
  Model m = model;  // the caller's model is unchanged on an error
  Graph& g = m.graph;
  const std::int64_t opset = m.opsets.count("") ? m.opsets.at("") : kMaxOpset;
  std::vector<Node> nodes;
  for (Node& n : g.nodes) {
    if (n.domain != kTesseraDomain) {
      nodes.push_back(std::move(n));
      continue;
    }
    if (n.attrs.count("channels_last")) {
      std::vector<Node> e = channels_first_form(g, std::move(n));
      n = std::move(e[e.size() - 2]);  // the node itself, expanded below if fused
      for (std::size_t k = 0; k + 2 < e.size(); ++k) nodes.push_back(std::move(e[k]));
      Node back = std::move(e.back());
      if (n.domain != kTesseraDomain) {
        nodes.push_back(std::move(n));
      } else {
        TESSERA_ASSIGN_OR_RETURN(std::vector<Node> f, expand(g, opset, n));
        for (Node& x : f) nodes.push_back(std::move(x));
      }
      nodes.push_back(std::move(back));
      continue;
    }
    if (n.op_type != "FusedConv" && n.op_type != "FusedElementwise" && n.op_type != "LayerNormalization")
      return unsupported("expand: the tessera op " + n.op_type + " has no ai.onnx form");
    TESSERA_ASSIGN_OR_RETURN(std::vector<Node> e, expand(g, opset, n));
    for (Node& x : e) nodes.push_back(std::move(x));
  }
  g.nodes = std::move(nodes);
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].outputs)
      if (v != kNoValue) g.values[static_cast<std::size_t>(v)].producer = static_cast<int>(i);
  m.opsets.erase(kTesseraDomain);
  TESSERA_RETURN_IF_ERROR(verify(m).with_context("expand"));
  model = std::move(m);
  return Status::ok();
}

}  // namespace tessera::graph
