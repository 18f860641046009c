// Type and shape inference per op: each node's output types from its inputs' types, its
// attributes and the inputs that are constants (initializers, Constant nodes). Dims stay
// symbolic where the rules only pass them along (broadcasting, batch dims) and become unknown
// where arithmetic would need their values. Declared types (value_info, graph outputs) are
// checked against what is inferred and merged with it.
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "tessera/graph.hpp"

namespace tessera::graph {
namespace {

using Shape = std::vector<Dim>;
using Ints = std::vector<std::int64_t>;

Dim known(std::int64_t v) { return Dim{v, {}}; }

// Broadcast of two dims (NumPy): equal; 1 and anything; a size > 1 wins over an unknown.
Result<Dim> broadcast_dim(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.has_size() && a.size == 1) return b;
  if (b.has_size() && b.size == 1) return a;
  if (a.has_size() && b.has_size()) return invalid_argument("dims " + std::to_string(a.size) + " and " + std::to_string(b.size) + " do not broadcast");
  if (a.has_size()) return a;
  if (b.has_size()) return b;
  return Dim{};
}
Result<std::optional<Shape>> broadcast(const std::vector<const ValueType*>& ts) {
  Shape out;
  for (const ValueType* t : ts) {
    if (!t->shape) return std::optional<Shape>();
    const Shape& s = *t->shape;
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), known(1));
    for (std::size_t i = 0; i < s.size(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(Dim d, broadcast_dim(out[out.size() - s.size() + i], s[i]));
      out[out.size() - s.size() + i] = std::move(d);
    }
  }
  return std::optional<Shape>(std::move(out));
}

std::optional<std::int64_t> product(const Shape& s, std::size_t b, std::size_t e) {
  std::int64_t p = 1;
  for (std::size_t i = b; i < e; ++i) {
    if (!s[i].has_size()) return std::nullopt;
    p *= s[i].size;
  }
  return p;
}

class Inferer {
 public:
  Inferer(Graph& g, std::int64_t opset) : g_(g), opset_(opset) {}

  Status run() {
    // Constant nodes' values, for the inputs that are read as data (shapes, axes, ...).
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      node_ = &n;
      what_ = "node " + std::to_string(i) + " '" + n.name + "' (" + n.op_type + ")";
      if (!n.domain.empty()) continue;  // other domains: types as declared
      std::vector<ValueType> out(n.outputs.size());
      const Status s = infer(n, out);
      if (!s.is_ok()) return invalid_argument("infer: " + what_ + ": " + s.message());
      for (std::size_t k = 0; k < n.outputs.size() && k < out.size(); ++k)
        if (n.outputs[k] != kNoValue) TESSERA_RETURN_IF_ERROR(merge(n.outputs[k], out[k]));
    }
    return Status::ok();
  }

 private:
  const ValueType& in(std::size_t k) const {
    static const ValueType kUnknown;
    return k < node_->inputs.size() && node_->inputs[k] != kNoValue ? g_.values[static_cast<std::size_t>(node_->inputs[k])].type : kUnknown;
  }
  bool has_input(std::size_t k) const { return k < node_->inputs.size() && node_->inputs[k] != kNoValue; }
  const Attribute* attr(const char* name) const {
    const auto it = node_->attrs.find(name);
    return it == node_->attrs.end() ? nullptr : &it->second;
  }
  std::int64_t attr_int(const char* name, std::int64_t dflt) const {
    const Attribute* a = attr(name);
    return a && a->kind == Attribute::Kind::kInt ? a->i : dflt;
  }
  std::optional<Ints> attr_ints(const char* name) const {
    const Attribute* a = attr(name);
    if (!a || a->kind != Attribute::Kind::kInts) return std::nullopt;
    return a->ints;
  }
  // The integer elements of a constant input (an initializer or a Constant node's output).
  std::optional<Ints> const_ints(std::size_t k) const {
    if (!has_input(k)) return std::nullopt;
    const Value& v = g_.values[static_cast<std::size_t>(node_->inputs[k])];
    const Constant* c = v.constant.get();
    if (!c && v.producer >= 0) {
      const Node& p = g_.nodes[static_cast<std::size_t>(v.producer)];
      if (p.op_type == "Constant" && p.domain.empty()) {
        if (const auto it = p.attrs.find("value"); it != p.attrs.end() && it->second.kind == Attribute::Kind::kTensor) c = it->second.t.get();
        if (const auto it = p.attrs.find("value_ints"); it != p.attrs.end()) return it->second.ints;
        if (const auto it = p.attrs.find("value_int"); it != p.attrs.end()) return Ints{it->second.i};
      }
    }
    if (!c || (c->elem != ElemType::kI64 && c->elem != ElemType::kI32)) return std::nullopt;
    const std::size_t w = c->elem == ElemType::kI64 ? 8 : 4;
    Ints r(c->bytes.size() / w);
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (w == 8) {
        std::memcpy(&r[i], c->bytes.data() + i * 8, 8);
      } else {
        std::int32_t v32;
        std::memcpy(&v32, c->bytes.data() + i * 4, 4);
        r[i] = v32;
      }
    }
    return r;
  }
  // An axis in [-rank, rank) made non-negative.
  Result<std::size_t> axis(std::int64_t a, std::size_t rank) const {
    const auto r = static_cast<std::int64_t>(rank);
    if (a < -r || a >= r) return invalid_argument("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    return static_cast<std::size_t>(a < 0 ? a + r : a);
  }

  Status merge(ValueId id, const ValueType& inferred) {
    ValueType& t = g_.values[static_cast<std::size_t>(id)].type;
    const std::string name = g_.values[static_cast<std::size_t>(id)].name;
    if (inferred.elem != ElemType::kUndefined) {
      if (t.elem != ElemType::kUndefined && t.elem != inferred.elem)
        return invalid_argument("infer: " + what_ + ": output '" + name + "' is inferred " + to_text(inferred) + " but declared " + to_text(t));
      t.elem = inferred.elem;
    }
    if (!inferred.shape) return Status::ok();
    if (!t.shape) {
      t.shape = inferred.shape;
      return Status::ok();
    }
    if (t.shape->size() != inferred.shape->size())
      return invalid_argument("infer: " + what_ + ": output '" + name + "' is inferred " + to_text(inferred) + " but declared " + to_text(t));
    for (std::size_t i = 0; i < t.shape->size(); ++i) {
      Dim& d = (*t.shape)[i];
      const Dim& e = (*inferred.shape)[i];
      if (d.has_size() && e.has_size() && d.size != e.size)
        return invalid_argument("infer: " + what_ + ": output '" + name + "' is inferred " + to_text(inferred) + " but declared " + to_text(t));
      if (!d.has_size() && e.has_size()) d = e;
      else if (!d.has_size() && d.symbol.empty()) d = e;
    }
    return Status::ok();
  }

  // Spatial output sizes of Conv and the pools.
  Status spatial(const Shape& x, const Ints& kernel, Shape& out, bool ceil_mode) const {
    const std::size_t n = kernel.size();
    if (x.size() != n + 2) return invalid_argument("input of rank " + std::to_string(x.size()) + " for a kernel of " + std::to_string(n) + " dims");
    const Ints strides = attr_ints("strides").value_or(Ints(n, 1));
    const Ints dilations = attr_ints("dilations").value_or(Ints(n, 1));
    const Ints pads = attr_ints("pads").value_or(Ints(2 * n, 0));
    const Attribute* ap = attr("auto_pad");
    const std::string auto_pad = ap ? ap->s : "NOTSET";
    if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n) return invalid_argument("strides, dilations or pads do not match the kernel's rank");
    for (std::size_t i = 0; i < n; ++i) {
      const Dim& d = x[i + 2];
      if (!d.has_size() || strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0) {
        out.push_back(Dim{});
        continue;
      }
      const std::int64_t ext = (kernel[i] - 1) * dilations[i] + 1;
      std::int64_t o = 0;
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        o = (d.size + strides[i] - 1) / strides[i];
      } else if (auto_pad == "VALID") {
        o = (d.size - ext) / strides[i] + 1;
      } else {
        const std::int64_t span = d.size + pads[i] + pads[i + n] - ext;
        if (span < 0) return invalid_argument("kernel extent " + std::to_string(ext) + " exceeds the padded input " + std::to_string(d.size + pads[i] + pads[i + n]));
        o = (ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
        // A window starting in the end padding does not count (ceil mode).
        if (ceil_mode && (o - 1) * strides[i] >= d.size + pads[i]) --o;
      }
      out.push_back(known(std::max<std::int64_t>(o, 0)));
    }
    return Status::ok();
  }

  // If, Loop, Scan: element types from what the subgraphs declare (If: the then branch;
  // Loop and Scan: carried values keep their inputs' types, scan outputs take the body's).
  // Shapes are left unknown: a branch or an iteration count decides them at run time.
  void infer_control_flow(const Node& n, std::vector<ValueType>& out) const {
    const auto graph_attr = [&](const char* name) -> const Graph* {
      const Attribute* a = attr(name);
      return a && a->kind == Attribute::Kind::kGraph ? a->g.get() : nullptr;
    };
    const auto declared = [](const Graph& g, std::size_t k) {
      return k < g.outputs.size() ? g.values[static_cast<std::size_t>(g.outputs[k])].type.elem : ElemType::kUndefined;
    };
    const Graph* body = graph_attr(n.op_type == "If" ? "then_branch" : "body");
    if (!body) return;
    if (n.op_type == "If") {
      for (std::size_t k = 0; k < out.size(); ++k) out[k].elem = declared(*body, k);
      return;
    }
    // Loop: inputs (M, cond, carried...), body outputs (cond, carried..., scans...).
    // Scan: inputs (states..., scan inputs...) after opset 8's sequence_lens, body outputs (states..., scans...).
    const std::size_t first = n.op_type == "Loop" ? 2 : opset_ < 9 ? 1 : 0;
    const std::size_t scan_inputs = n.op_type == "Loop" ? 0 : static_cast<std::size_t>(std::max<std::int64_t>(attr_int("num_scan_inputs", 0), 0));
    const std::size_t carried = n.inputs.size() >= first + scan_inputs ? n.inputs.size() - first - scan_inputs : 0;
    const std::size_t skip = n.op_type == "Loop" ? 1 : 0;  // the body's condition
    for (std::size_t k = 0; k < out.size(); ++k)
      out[k].elem = k < carried ? in(first + k).elem : declared(*body, skip + k);
  }

  Status infer(const Node& n, std::vector<ValueType>& out) {
    if (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan") {
      infer_control_flow(n, out);
      return Status::ok();
    }
    static const std::set<std::string> kSame = {
        "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "Tanh", "Elu", "Selu", "Celu", "Gelu", "Softplus",
        "Softsign", "HardSwish", "Mish", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Floor", "Ceil",
        "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
        "Identity", "Softmax", "LogSoftmax", "Hardmax", "Clip", "Dropout", "BatchNormalization",
        "InstanceNormalization", "LayerNormalization", "LRN", "Not", "CumSum", "ThresholdedRelu", "Shrink",
        "MeanVarianceNormalization", "GroupNormalization"};
    static const std::set<std::string> kBroadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum",
                                                     "Mean", "BitShift", "And", "Or", "Xor", "Equal", "Less",
                                                     "Greater", "LessOrEqual", "GreaterOrEqual", "Where"};
    static const std::set<std::string> kBool = {"And", "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual",
                                                "GreaterOrEqual", "Not", "IsNaN", "IsInf"};
    const std::string& op = n.op_type;
    if (out.empty()) return Status::ok();
    ValueType& y = out[0];
    if (kSame.count(op) || op == "IsNaN" || op == "IsInf") {
      y = in(0);
      if (kBool.count(op)) y.elem = ElemType::kBool;
      if (op == "Dropout" && out.size() > 1) out[1] = ValueType{ElemType::kBool, in(0).shape};
      return Status::ok();
    }
    if (kBroadcast.count(op)) {
      std::vector<const ValueType*> ts;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) ts.push_back(&in(k));
      TESSERA_ASSIGN_OR_RETURN(y.shape, broadcast(ts));
      y.elem = kBool.count(op) ? ElemType::kBool : op == "Where" ? in(1).elem : in(0).elem;
      return Status::ok();
    }
    if (op == "RNN" || op == "LSTM" || op == "GRU") {  // Y, Y_h, Y_c from X and hidden_size
      const ValueType& x = in(0);
      const std::int64_t hidden = attr_int("hidden_size", -1);
      const Attribute* dir = attr("direction");
      const Dim dirs = known(dir && dir->kind == Attribute::Kind::kString && dir->s == "bidirectional" ? 2 : 1);
      const bool batch_major = attr_int("layout", 0) != 0;
      for (ValueType& o : out) o.elem = x.elem;
      if (!x.shape || x.shape->size() != 3 || hidden < 0) return Status::ok();
      const Dim seq = (*x.shape)[batch_major ? 1 : 0], batch = (*x.shape)[batch_major ? 0 : 1], h = known(hidden);
      y.shape = batch_major ? Shape{batch, seq, dirs, h} : Shape{seq, dirs, batch, h};
      for (std::size_t k = 1; k < out.size() && k < 3; ++k) out[k].shape = batch_major ? Shape{batch, dirs, h} : Shape{dirs, batch, h};
      return Status::ok();
    }
    if (op == "Cast") {
      y = in(0);
      y.elem = static_cast<ElemType>(attr_int("to", 0));
      return Status::ok();
    }
    if (op == "Shape") {
      y.elem = ElemType::kI64;
      if (in(0).shape) {
        const auto r = static_cast<std::int64_t>(in(0).shape->size());
        std::int64_t s = attr_int("start", 0), e = attr_int("end", r);
        s = std::clamp<std::int64_t>(s < 0 ? s + r : s, 0, r);
        e = std::clamp<std::int64_t>(e < 0 ? e + r : e, 0, r);
        y.shape = Shape{known(std::max<std::int64_t>(e - s, 0))};
      } else {
        y.shape = Shape{Dim{}};
      }
      return Status::ok();
    }
    if (op == "Constant") {
      auto sized = [](ElemType e, std::size_t count, bool scalar) {
        return ValueType{e, scalar ? Shape{} : Shape{known(static_cast<std::int64_t>(count))}};
      };
      if (const Attribute* a = attr("value"); a && a->kind == Attribute::Kind::kTensor && a->t) {
        y.elem = a->t->elem;
        y.shape.emplace();
        for (std::int64_t d : a->t->dims) y.shape->push_back(known(d));
      } else if (attr("value_float")) {
        y = sized(ElemType::kF32, 1, true);
      } else if (const Attribute* fs = attr("value_floats")) {
        y = sized(ElemType::kF32, fs->floats.size(), false);
      } else if (attr("value_int")) {
        y = sized(ElemType::kI64, 1, true);
      } else if (const Attribute* is = attr("value_ints")) {
        y = sized(ElemType::kI64, is->ints.size(), false);
      } else if (attr("value_string")) {
        y = sized(ElemType::kString, 1, true);
      } else if (const Attribute* ss = attr("value_strings")) {
        y = sized(ElemType::kString, ss->strings.size(), false);
      }
      return Status::ok();
    }
    if (op == "Size") {
      y = ValueType{ElemType::kI64, Shape{}};
      return Status::ok();
    }
    if (op == "SoftmaxCrossEntropyLoss" || op == "NegativeLogLikelihoodLoss") {
      // The loss: a scalar, or the labels' dims with reduction none; log_prob: the scores'.
      y.elem = in(0).elem;
      const Attribute* r = attr("reduction");
      if (!r || r->s != "none") y.shape = Shape{};
      else if (has_input(1)) y.shape = in(1).shape;
      if (out.size() > 1) out[1] = in(0);
      return Status::ok();
    }
    static const std::set<std::string> kShaped = {
        "Conv", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
        "Gemm", "MatMul", "Flatten", "Reshape", "Transpose", "Concat", "Unsqueeze", "Squeeze", "Gather",
        "ArgMax", "ArgMin", "Slice", "Split", "Expand", "Tile", "Pad"};
    if (!kShaped.count(op) && op.rfind("Reduce", 0) != 0) return Status::ok();  // not known here
    y.elem = in(0).elem;
    if (!in(0).shape) return Status::ok();  // the rest need x's rank
    const Shape& x = *in(0).shape;
    // Convolution and pooling index x's N and C dims before anything else checks the rank.
    if ((op == "Conv" || op.find("Pool") != std::string::npos) && x.size() < 2)
      return invalid_argument(op + " needs an input with N and C dims; it has rank " +
                              std::to_string(x.size()));
    if (op == "Conv") {
      if (!in(1).shape || in(1).shape->size() != x.size()) return Status::ok();
      const Shape& w = *in(1).shape;
      Ints kernel = attr_ints("kernel_shape").value_or(Ints{});
      if (kernel.empty()) {
        for (std::size_t i = 2; i < w.size(); ++i) kernel.push_back(w[i].has_size() ? w[i].size : -1);
      }
      Shape s{x[0], w[0]};
      TESSERA_RETURN_IF_ERROR(spatial(x, kernel, s, false));
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
      const Ints kernel = attr_ints("kernel_shape").value_or(Ints{});
      if (kernel.empty()) return invalid_argument("kernel_shape is missing");
      Shape s{x[0], x[1]};
      TESSERA_RETURN_IF_ERROR(spatial(x, kernel, s, attr_int("ceil_mode", 0) != 0));
      y.shape = s;
      if (out.size() > 1) out[1] = ValueType{ElemType::kI64, s};
      return Status::ok();
    }
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool") {
      Shape s(x.size(), known(1));
      s[0] = x[0];
      if (x.size() > 1) s[1] = x[1];
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Gemm") {
      if (!in(1).shape || x.size() != 2 || in(1).shape->size() != 2) return invalid_argument("Gemm needs 2-D A and B");
      const Shape& b = *in(1).shape;
      y.shape = Shape{attr_int("transA", 0) ? x[1] : x[0], attr_int("transB", 0) ? b[0] : b[1]};
      return Status::ok();
    }
    if (op == "MatMul") {
      if (!in(1).shape) return Status::ok();
      Shape a = x, b = *in(1).shape;
      if (a.empty() || b.empty()) return invalid_argument("MatMul of a scalar");
      const bool a1 = a.size() == 1, b1 = b.size() == 1;
      if (a1) a.insert(a.begin(), known(1));
      if (b1) b.push_back(known(1));
      ValueType ba{ElemType::kUndefined, Shape(a.begin(), a.end() - 2)}, bb{ElemType::kUndefined, Shape(b.begin(), b.end() - 2)};
      TESSERA_ASSIGN_OR_RETURN(auto batch, broadcast({&ba, &bb}));
      const Dim& ka = a[a.size() - 1];
      const Dim& kb = b[b.size() - 2];
      if (ka.has_size() && kb.has_size() && ka.size != kb.size)
        return invalid_argument("inner dims " + std::to_string(ka.size) + " and " + std::to_string(kb.size) + " differ");
      Shape s = *batch;
      if (!a1) s.push_back(a[a.size() - 2]);
      if (!b1) s.push_back(b[b.size() - 1]);
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Flatten") {
      const std::int64_t a = attr_int("axis", 1);  // in [-rank, rank]
      TESSERA_ASSIGN_OR_RETURN(const std::size_t ax, axis(a, a < 0 ? x.size() : x.size() + 1));
      const auto outer = product(x, 0, ax), inner = product(x, ax, x.size());
      // A product of one dim is that dim, a symbolic one too (a batch [N, C, H, W] -> [N, C*H*W]).
      const auto side = [&](const std::optional<std::int64_t>& p, std::size_t b, std::size_t e) {
        return p ? known(*p) : e - b == 1 ? x[b] : Dim{};
      };
      y.shape = Shape{side(outer, 0, ax), side(inner, ax, x.size())};
      return Status::ok();
    }
    if (op == "Reshape") {
      const auto target = const_ints(1);
      if (!target) {
        if (in(1).shape && in(1).shape->size() == 1 && (*in(1).shape)[0].has_size())
          y.shape = Shape(static_cast<std::size_t>((*in(1).shape)[0].size), Dim{});
        return Status::ok();
      }
      const bool allowzero = attr_int("allowzero", 0) != 0;
      Shape s;
      int infer_at = -1;
      for (std::size_t i = 0; i < target->size(); ++i) {
        const std::int64_t v = (*target)[i];
        if (v == -1) {
          if (infer_at >= 0) return invalid_argument("two -1 dims in the target shape");
          infer_at = static_cast<int>(i);
          s.push_back(Dim{});
        } else if (v == 0 && !allowzero) {
          if (i >= x.size()) return invalid_argument("target dim " + std::to_string(i) + " copies a dim the input does not have");
          s.push_back(x[i]);
        } else if (v < 0) {
          return invalid_argument("target dim " + std::to_string(v));
        } else {
          s.push_back(known(v));
        }
      }
      if (infer_at >= 0) {
        const auto total = product(x, 0, x.size());
        Shape rest = s;
        rest.erase(rest.begin() + infer_at);
        const auto part = product(rest, 0, rest.size());
        if (total && part && *part > 0) {
          if (*total % *part != 0) return invalid_argument(std::to_string(*total) + " elements do not reshape to the target");
          s[static_cast<std::size_t>(infer_at)] = known(*total / *part);
        }
      } else if (const auto total = product(x, 0, x.size()), got = product(s, 0, s.size()); total && got && *total != *got) {
        return invalid_argument(std::to_string(*total) + " elements do not reshape to " + std::to_string(*got));
      }
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Transpose") {
      Ints perm = attr_ints("perm").value_or(Ints{});
      if (perm.empty())
        for (std::size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
      if (perm.size() != x.size()) return invalid_argument("perm of " + std::to_string(perm.size()) + " for rank " + std::to_string(x.size()));
      Shape s;
      for (std::int64_t p : perm) {
        TESSERA_ASSIGN_OR_RETURN(const std::size_t a, axis(p, x.size()));
        s.push_back(x[a]);
      }
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Concat") {
      TESSERA_ASSIGN_OR_RETURN(const std::size_t ax, axis(attr_int("axis", 0), x.size()));
      Shape s = x;
      for (std::size_t k = 1; k < n.inputs.size(); ++k) {
        if (!in(k).shape) return Status::ok();
        const Shape& o = *in(k).shape;
        if (o.size() != x.size()) return invalid_argument("inputs of ranks " + std::to_string(x.size()) + " and " + std::to_string(o.size()));
        s[ax] = s[ax].has_size() && o[ax].has_size() ? known(s[ax].size + o[ax].size) : Dim{};
      }
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      const auto axes = opset_ >= 13 ? const_ints(1) : attr_ints("axes");
      const bool unsq = op == "Unsqueeze";
      if (!axes) {
        if (unsq || has_input(1)) return Status::ok();
        Shape s;  // Squeeze without axes: every dim of size 1
        for (const Dim& d : x) {
          if (!d.has_size()) return Status::ok();
          if (d.size != 1) s.push_back(d);
        }
        y.shape = std::move(s);
        return Status::ok();
      }
      const std::size_t rank = unsq ? x.size() + axes->size() : x.size();
      std::set<std::size_t> at;
      for (std::int64_t a : *axes) {
        TESSERA_ASSIGN_OR_RETURN(const std::size_t v, axis(a, rank));
        if (!at.insert(v).second) return invalid_argument("axis " + std::to_string(a) + " appears twice");
      }
      Shape s;
      if (unsq) {
        for (std::size_t i = 0, j = 0; i < rank; ++i) s.push_back(at.count(i) ? known(1) : x[j++]);
      } else {
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (!at.count(i)) s.push_back(x[i]);
          else if (x[i].has_size() && x[i].size != 1) return invalid_argument("dim " + std::to_string(i) + " of size " + std::to_string(x[i].size) + " cannot be squeezed");
        }
      }
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Slice") {
      Shape s = x;  // the rank stays; a sliced dim is known where its bounds are constants
      const auto starts = opset_ >= 10 ? const_ints(1) : attr_ints("starts");
      const auto ends = opset_ >= 10 ? const_ints(2) : attr_ints("ends");
      std::optional<Ints> axes = opset_ >= 10 ? const_ints(3) : attr_ints("axes");
      std::optional<Ints> steps = opset_ >= 10 ? const_ints(4) : std::optional<Ints>();
      if ((opset_ >= 10 && has_input(3) && !axes) || (opset_ >= 10 && has_input(4) && !steps) || !starts || !ends ||
          starts->size() != ends->size()) {
        // Unknown bounds: every dim that might be sliced is unknown.
        const std::optional<Ints> ax = axes;
        for (std::size_t i = 0; i < s.size(); ++i) s[i] = Dim{};
        if (ax && starts) {
          s = x;
          for (std::int64_t a : *ax) {
            TESSERA_ASSIGN_OR_RETURN(const std::size_t v, axis(a, x.size()));
            s[v] = Dim{};
          }
        }
        y.shape = std::move(s);
        return Status::ok();
      }
      if (!axes) {
        axes.emplace();
        for (std::size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<std::int64_t>(i));
      }
      if (!steps) steps = Ints(starts->size(), 1);
      if (axes->size() != starts->size() || steps->size() != starts->size()) return invalid_argument("starts, ends, axes and steps differ in length");
      for (std::size_t k = 0; k < starts->size(); ++k) {
        TESSERA_ASSIGN_OR_RETURN(const std::size_t a, axis((*axes)[k], x.size()));
        const std::int64_t step = (*steps)[k];
        if (step == 0) return invalid_argument("a step of 0");
        if (!x[a].has_size()) {
          s[a] = Dim{};
          continue;
        }
        // ONNX's clamping: negative bounds count from the end, then into [0, n] ([-1, n-1] backwards).
        const std::int64_t len = x[a].size;
        auto clamp = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
          if (v < 0) v += len;
          return std::clamp(v, lo, hi);
        };
        const std::int64_t b = step > 0 ? clamp((*starts)[k], 0, len) : clamp((*starts)[k], -1, len - 1);
        const std::int64_t e = step > 0 ? clamp((*ends)[k], 0, len) : clamp((*ends)[k], -1, len - 1);
        const std::int64_t count = step > 0 ? (e > b ? (e - b + step - 1) / step : 0) : (b > e ? (b - e - step - 1) / -step : 0);
        s[a] = known(count);
      }
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Split") {
      TESSERA_ASSIGN_OR_RETURN(const std::size_t ax, axis(attr_int("axis", 0), x.size()));
      const auto sizes = opset_ >= 13 ? const_ints(1) : attr_ints("split");
      for (std::size_t k = 0; k < out.size(); ++k) {
        Shape s = x;
        if (sizes && sizes->size() == out.size()) s[ax] = known((*sizes)[k]);
        else if (!(sizes || has_input(1)) && x[ax].has_size() && x[ax].size % static_cast<std::int64_t>(out.size()) == 0)
          s[ax] = known(x[ax].size / static_cast<std::int64_t>(out.size()));
        else s[ax] = Dim{};
        out[k] = ValueType{x.empty() ? ElemType::kUndefined : in(0).elem, std::move(s)};
      }
      return Status::ok();
    }
    if (op == "Expand") {
      const auto shape = const_ints(1);
      if (!shape) return Status::ok();
      ValueType target{ElemType::kUndefined, Shape{}};
      for (std::int64_t d : *shape) target.shape->push_back(known(d));
      TESSERA_ASSIGN_OR_RETURN(y.shape, broadcast({&in(0), &target}));
      return Status::ok();
    }
    if (op == "Tile" || op == "Pad") {
      Shape s(x.size(), Dim{});
      const auto v = op == "Tile" ? const_ints(1) : opset_ >= 11 ? (has_input(3) ? std::optional<Ints>() : const_ints(1)) : attr_ints("pads");
      if (v && v->size() == (op == "Tile" ? x.size() : 2 * x.size()))
        for (std::size_t i = 0; i < x.size(); ++i)
          if (x[i].has_size()) s[i] = known(op == "Tile" ? x[i].size * (*v)[i] : x[i].size + (*v)[i] + (*v)[i + x.size()]);
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op == "Gather") {
      if (!in(1).shape) return Status::ok();
      TESSERA_ASSIGN_OR_RETURN(const std::size_t ax, axis(attr_int("axis", 0), x.size()));
      Shape s(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(ax));
      s.insert(s.end(), in(1).shape->begin(), in(1).shape->end());
      s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.end());
      y.shape = std::move(s);
      return Status::ok();
    }
    if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
      const bool arg = op == "ArgMax" || op == "ArgMin";
      if (arg) y.elem = ElemType::kI64;
      std::optional<Ints> axes = arg ? Ints{attr_int("axis", 0)} : attr_ints("axes");
      const bool axes_input = !arg && (opset_ >= 18 || (op == "ReduceSum" && opset_ >= 13));
      if (axes_input) axes = const_ints(1);
      if (axes_input && has_input(1) && !axes) return Status::ok();
      const bool keep = attr_int("keepdims", 1) != 0;
      std::set<std::size_t> at;
      if (!axes || axes->empty()) {
        if (attr_int("noop_with_empty_axes", 0) != 0) {
          y.shape = x;
          return Status::ok();
        }
        for (std::size_t i = 0; i < x.size(); ++i) at.insert(i);
      } else {
        for (std::int64_t a : *axes) {
          TESSERA_ASSIGN_OR_RETURN(const std::size_t v, axis(a, x.size()));
          at.insert(v);
        }
      }
      Shape s;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!at.count(i)) s.push_back(x[i]);
        else if (keep) s.push_back(known(1));
      }
      y.shape = std::move(s);
      return Status::ok();
    }
    return Status::ok();
  }

  Graph& g_;
  std::int64_t opset_;
  const Node* node_ = nullptr;
  std::string what_;
};

}  // namespace

Status infer_types(Model& m) {
  const auto it = m.opsets.find("");
  return Inferer(m.graph, it == m.opsets.end() ? kMaxOpset : it->second).run();
}

}  // namespace tessera::graph
