// layout: layout assignment. Each 2-D f32 convolution that the executor says runs faster
// channels-last (OptimizeOptions::conv_layout) becomes a channels-last FusedConv over
// [N, H, W, C]; the pools, elementwise ops, fused chains and Concats it feeds follow it into
// that layout, so that a network's whole convolutional body is one channels-last region and
// Transposes sit only at its borders: where a channels-first value enters (the image) and
// where a channels-first reader (Flatten, Gemm, a graph output, a subgraph) needs a value.
//
// Training graphs follow too: BatchNormalization (training mode as well), and the gradient ops
// of a region (ActivationGrad, BatchNormGrad, PoolGrad, ConvGradData, ConvGradWeight) take their
// activations channels-last when one of them is already, the bias gradients' ReduceSum reduces
// the twin over the permuted axes, and Shape of a value in the region reads its twin's dims back
// into NCHW order (a Gather) instead of transposing the value.
//
// One sweep in topological order. A channels-first value may get a channels-last twin; a value
// computed in the region exists only as its twin until a reader outside the region needs it,
// and then one Transpose makes it, once. Constant operands of the region's elementwise ops are
// transposed here (rank-aligned as broadcasting aligns them), so no Transpose runs for them.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "pass.hpp"

namespace tessera::graph::passes {
namespace {

constexpr std::int64_t kToLast[4] = {0, 2, 3, 1};   // NCHW -> NHWC
constexpr std::int64_t kToFirst[4] = {0, 3, 1, 2};  // NHWC -> NCHW

// Ops that compute each output element from the same position of their inputs (broadcast),
// so they run in any layout: their constant operands are transposed along.
const std::set<std::string, std::less<>>& elementwise_ops() {
  static const std::set<std::string, std::less<>> s = {
      "Add",  "Sub",   "Mul",  "Div",    "Pow",        "Max",     "Min",      "Sum",     "Mean",     "PRelu",       "Neg",
      "Abs",  "Sqrt",  "Exp",  "Log",    "Reciprocal", "Sin",     "Cos",      "Tan",     "Asin",     "Acos",        "Atan",
      "Sinh", "Cosh",  "Erf",  "Floor",  "Ceil",       "Round",   "Sign",     "Relu",    "Sigmoid",  "Tanh",        "Softplus",
      "Softsign", "HardSwish", "Mish", "LeakyRelu", "Elu", "Celu", "Selu",    "HardSigmoid", "Gelu", "Clip",   "Cast"};
  return s;
}

bool rank4(const ValueType& t) { return t.shape && t.shape->size() == 4; }

ValueType permuted(const ValueType& t, const std::int64_t* perm) {
  ValueType r = t;
  for (std::size_t i = 0; i < 4; ++i) (*r.shape)[i] = (*t.shape)[static_cast<std::size_t>(perm[i])];
  return r;
}

std::string label(const Node& n) { return n.op_type + (n.name.empty() ? "" : " '" + n.name + "'"); }

class Assigner {
 public:
  Assigner(Model& m, const OptimizeOptions& o, PassReport& r) : g_(m.graph), o_(o), r_(r) {
    twin_.assign(g_.values.size(), kNoValue);
    first_ready_.assign(g_.values.size(), 1);
  }

  void run() {
    std::vector<Node> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    for (Node& n : nodes) {
      if (!(try_conv(n) || try_pool(n) || try_batch_norm(n) || try_gradient(n) || try_reduce(n) || try_shape(n) || try_elementwise(n)))
        keep_channels_first(std::move(n));
    }
    for (ValueId v : g_.outputs) to_first(v);
    compact(g_, std::vector<char>(g_.nodes.size(), 1));  // producers renumbered; values only a twin replaced dropped
  }

 private:
  // The node as it is: every input (and value its subgraphs read) channels-first.
  void keep_channels_first(Node n) {
    for (ValueId v : n.inputs) to_first(v);
    for (ValueId v : subgraph_reads(g_, n)) to_first(v);
    g_.nodes.push_back(std::move(n));
  }

  bool try_conv(const Node& n) {
    const bool conv = (n.op_type == "Conv" && n.domain.empty()) || (n.op_type == "FusedConv" && n.domain == kTesseraDomain && !n.attrs.count("channels_last"));
    if (!conv || n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue || n.outputs[0] == kNoValue) return false;
    const ValueType &x = type(n.inputs[0]), &y = type(n.outputs[0]);
    if (!rank4(x) || !rank4(y) || x.elem != ElemType::kF32) return false;
    if (!o_.conv_layout) return false;
    const LayoutAdvice advice = o_.conv_layout(g_, n);
    if (!advice.channels_last) {
      r_.refused.push_back(label(n) + " stays channels-first: " + advice.reason);
      return false;
    }
    Node c = n;
    c.op_type = "FusedConv";
    c.domain = kTesseraDomain;
    c.attrs["channels_last"] = int_attribute(1);
    c.inputs[0] = to_last(n.inputs[0]);
    for (std::size_t k = 1; k < c.inputs.size() && k < 3; ++k) to_first(c.inputs[k]);
    if (c.inputs.size() > 3 && c.inputs[3] != kNoValue) c.inputs[3] = to_last(n.inputs[3]);
    c.outputs[0] = make_twin(n.outputs[0]);
    r_.applied.push_back(label(n) + " channels-last (" + advice.reason + ")");
    g_.nodes.push_back(std::move(c));
    ++r_.changes;
    return true;
  }

  // Pools follow their input into the region; they never start one.
  bool try_pool(const Node& n) {
    static const std::set<std::string, std::less<>> pools = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
    if (!n.domain.empty() || !pools.count(n.op_type) || n.inputs.empty() || n.inputs[0] == kNoValue || twin_[at(n.inputs[0])] == kNoValue ||
        n.outputs.empty() || n.outputs[0] == kNoValue)
      return false;
    for (std::size_t k = 1; k < n.outputs.size(); ++k)
      if (n.outputs[k] != kNoValue) return false;  // MaxPool's Indices count in NCHW order
    if (!rank4(type(n.outputs[0])) || type(n.inputs[0]).elem != ElemType::kF32) return false;
    Node p = n;
    p.domain = kTesseraDomain;
    p.attrs["channels_last"] = int_attribute(1);
    p.inputs = {twin_[at(n.inputs[0])]};
    p.outputs = {make_twin(n.outputs[0])};
    g_.nodes.push_back(std::move(p));
    ++r_.changes;
    return true;
  }

  // BatchNormalization follows its input (as tessera's, channels_last; the statistics outputs
  // are per channel and stay as they are).
  bool try_batch_norm(const Node& n) {
    if (!n.domain.empty() || n.op_type != "BatchNormalization" || n.inputs.size() != 5 || n.inputs[0] == kNoValue ||
        twin_[at(n.inputs[0])] == kNoValue || n.outputs.empty() || n.outputs[0] == kNoValue)
      return false;
    if (!rank4(type(n.outputs[0])) || type(n.inputs[0]).elem != ElemType::kF32) return false;
    Node b = n;
    b.domain = kTesseraDomain;
    b.attrs["channels_last"] = int_attribute(1);
    for (std::size_t k = 1; k < b.inputs.size(); ++k) to_first(b.inputs[k]);
    b.inputs[0] = twin_[at(n.inputs[0])];
    b.outputs[0] = make_twin(n.outputs[0]);
    g_.nodes.push_back(std::move(b));
    ++r_.changes;
    return true;
  }

  // The training layer's gradient ops over the region's activations: `acts` are the inputs that
  // are [N, C, H, W] activations, `outs` the outputs that are; they go channels-last (with
  // channels_last = 1 where the kernel must know) when one of `acts` already is, the others
  // transposed in.
  bool try_gradient(const Node& n) {
    if (n.domain != kTesseraDomain) return false;
    std::vector<std::size_t> acts, outs;
    bool mark = true;
    if (n.op_type == "ActivationGrad") acts = {0, 1}, outs = {0}, mark = false;
    else if (n.op_type == "BatchNormGrad" || n.op_type == "PoolGrad") acts = {0, 1}, outs = {0};
    else if (n.op_type == "ConvGradData") acts = {0}, outs = {0};
    else if (n.op_type == "ConvGradWeight") acts = {0, 1};
    else return false;
    bool any = false;
    for (std::size_t k : acts) {
      if (k >= n.inputs.size() || n.inputs[k] == kNoValue) return false;
      const ValueType& t = type(n.inputs[k]);
      if (!rank4(t) || t.elem != ElemType::kF32) return false;
      any = any || twin_[at(n.inputs[k])] != kNoValue;
    }
    for (std::size_t k : outs)
      if (k >= n.outputs.size() || n.outputs[k] == kNoValue || !rank4(type(n.outputs[k]))) return false;
    if (!any) return false;
    Node e = n;
    if (mark) e.attrs["channels_last"] = int_attribute(1);
    for (std::size_t k = 0; k < e.inputs.size(); ++k) {
      if (e.inputs[k] == kNoValue) continue;
      if (std::find(acts.begin(), acts.end(), k) != acts.end()) e.inputs[k] = to_last(n.inputs[k]);
      else to_first(e.inputs[k]);
    }
    for (std::size_t k : outs) e.outputs[k] = make_twin(n.outputs[k]);
    g_.nodes.push_back(std::move(e));
    ++r_.changes;
    return true;
  }

  // ReduceSum / ReduceMean of a channels-last value over constant axes: the twin reduced over
  // the permuted axes, when the kept axes stay in the same order (the bias gradients: [0, 2, 3]
  // -> [0, 1, 2], keeping C). With keepdims the output is a twin.
  bool try_reduce(const Node& n) {
    if (!n.domain.empty() || (n.op_type != "ReduceSum" && n.op_type != "ReduceMean") || n.inputs.empty() || n.inputs[0] == kNoValue ||
        twin_[at(n.inputs[0])] == kNoValue || n.outputs.size() != 1 || n.outputs[0] == kNoValue)
      return false;
    std::vector<std::int64_t> axes;
    const bool from_input = n.inputs.size() > 1 && n.inputs[1] != kNoValue;
    if (from_input) {
      const auto& c = g_.values[at(n.inputs[1])].constant;
      if (!c || c->elem != ElemType::kI64 || c->dims.size() != 1 || c->bytes.size() != static_cast<std::size_t>(c->numel()) * sizeof(std::int64_t))
        return false;
      axes.resize(static_cast<std::size_t>(c->numel()));
      std::memcpy(axes.data(), c->bytes.data(), axes.size() * sizeof(std::int64_t));
    } else if (n.attrs.count("axes")) {
      axes = n.attrs.at("axes").ints;
    }
    if (axes.empty()) return false;  // all axes (or none, with noop_with_empty_axes): left as it is
    constexpr std::int64_t kPos[4] = {0, 3, 1, 2};  // NCHW axis -> its NHWC position
    bool reduced[4] = {};
    for (std::int64_t& a : axes) {
      if (a < 0) a += 4;
      if (a < 0 || a > 3) return false;
      reduced[a] = true;
      a = kPos[a];
    }
    const bool keepdims = !n.attrs.count("keepdims") || n.attrs.at("keepdims").i != 0;
    if (keepdims && !rank4(type(n.outputs[0]))) return false;
    if (!keepdims) {  // the kept axes in NCHW order must be in NHWC order too
      std::int64_t last = -1;
      for (std::int64_t a = 0; a < 4; ++a) {
        if (reduced[a]) continue;
        if (kPos[a] < last) return false;
        last = kPos[a];
      }
    }
    Node r = n;
    r.inputs[0] = twin_[at(n.inputs[0])];
    if (from_input) {
      r.inputs[1] = add_constant(g_, g_.values[at(n.inputs[1])].name + "_nhwc", ElemType::kI64, {static_cast<std::int64_t>(axes.size())}, axes.data(),
                                 axes.size() * sizeof(std::int64_t));
      grow();
    } else {
      r.attrs["axes"] = ints_attribute(axes);
    }
    if (keepdims) r.outputs[0] = make_twin(n.outputs[0]);
    g_.nodes.push_back(std::move(r));
    ++r_.changes;
    return true;
  }

  // Shape of a value the region holds as its twin only: the twin's dims, gathered back into
  // NCHW order (no Transpose of the data for its dims).
  bool try_shape(const Node& n) {
    if (!n.domain.empty() || n.op_type != "Shape" || n.inputs.size() != 1 || n.inputs[0] == kNoValue || n.outputs.size() != 1 ||
        n.outputs[0] == kNoValue || first_ready_[at(n.inputs[0])] || n.attrs.count("start") || n.attrs.count("end"))
      return false;
    const ValueId dims = add_value(g_, g_.values[at(n.outputs[0])].name + "_nhwc", type(n.outputs[0]));
    grow();
    Node s = n;
    s.inputs[0] = twin_[at(n.inputs[0])];
    s.outputs[0] = dims;
    const std::int64_t perm[4] = {kToFirst[0], kToFirst[1], kToFirst[2], kToFirst[3]};
    const ValueId idx = add_constant(g_, g_.values[at(n.outputs[0])].name + "_perm", ElemType::kI64, {4}, perm, sizeof(perm));
    grow();
    Node gather;
    gather.name = n.name + "_nchw";
    gather.op_type = "Gather";
    gather.inputs = {dims, idx};
    gather.outputs = {n.outputs[0]};
    gather.attrs["axis"] = int_attribute(0);
    g_.nodes.push_back(std::move(s));
    g_.nodes.push_back(std::move(gather));
    r_.changes += 2;
    return true;
  }

  // Elementwise ops, fused chains and Concat follow a channels-last input when every other
  // input is channels-last too or a constant that can be transposed here.
  bool try_elementwise(const Node& n) {
    const bool elementwise = n.domain.empty() && elementwise_ops().count(n.op_type);
    const bool chain = n.domain == kTesseraDomain && n.op_type == "FusedElementwise";
    const bool concat = n.domain.empty() && n.op_type == "Concat";
    if (!(elementwise || chain || concat)) return false;
    bool any = false;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      if (twin_[at(v)] != kNoValue) any = true;
      else if (!g_.values[at(v)].constant || !transposable(*g_.values[at(v)].constant)) return false;
    }
    for (ValueId v : n.outputs)
      if (v == kNoValue || !rank4(type(v))) return false;
    if (!any) return false;
    Node e = n;
    if (concat) {
      std::int64_t axis = n.attrs.count("axis") ? n.attrs.at("axis").i : 0;
      if (axis < 0) axis += 4;
      if (axis < 0 || axis > 3) return false;
      for (std::int64_t i = 0; i < 4; ++i)
        if (kToLast[i] == axis) e.attrs["axis"] = int_attribute(i);
    }
    for (ValueId& v : e.inputs)
      if (v != kNoValue) v = twin_[at(v)] != kNoValue ? twin_[at(v)] : transposed_constant(v);
    for (ValueId& v : e.outputs) v = make_twin(v);
    g_.nodes.push_back(std::move(e));
    ++r_.changes;
    return true;
  }

  static bool transposable(const Constant& c) {
    const int bits = elem_bits(c.elem);
    return c.strings.empty() && c.dims.size() <= 4 && bits >= 8 && bits % 8 == 0;
  }

  // The constant as its channels-last twin: dims padded with leading 1s to rank 4 (as
  // broadcasting aligns them), then transposed. A single element stays as it is.
  ValueId transposed_constant(ValueId v) {
    const auto found = constants_.find(v);
    if (found != constants_.end()) return found->second;
    const Constant& c = *g_.values[at(v)].constant;
    if (c.numel() <= 1) return constants_[v] = v;
    std::vector<std::int64_t> d(4 - c.dims.size(), 1);
    d.insert(d.end(), c.dims.begin(), c.dims.end());
    const std::size_t es = static_cast<std::size_t>(elem_bits(c.elem) / 8);
    std::vector<std::byte> out(c.bytes.size());
    std::size_t o = 0;
    for (std::int64_t n = 0; n < d[0]; ++n)
      for (std::int64_t h = 0; h < d[2]; ++h)
        for (std::int64_t w = 0; w < d[3]; ++w)
          for (std::int64_t ch = 0; ch < d[1]; ++ch, o += es)
            std::memcpy(out.data() + o, c.bytes.data() + static_cast<std::size_t>(((n * d[1] + ch) * d[2] + h) * d[3] + w) * es, es);
    const ValueId t = add_constant(g_, g_.values[at(v)].name + "_nhwc", c.elem, {d[0], d[2], d[3], d[1]}, out.data(), out.size());
    grow();
    return constants_[v] = t;
  }

  // v's channels-last twin, made by a Transpose from v where it has none yet.
  ValueId to_last(ValueId v) {
    if (twin_[at(v)] != kNoValue) return twin_[at(v)];
    const ValueId t = make_twin(v);
    first_ready_[at(v)] = 1;
    g_.nodes.push_back(transpose(v, t, kToLast));
    ++r_.changes;
    return t;
  }

  // v itself, made by a Transpose from its twin where only the twin is computed.
  void to_first(ValueId v) {
    if (v == kNoValue || first_ready_[at(v)]) return;
    first_ready_[at(v)] = 1;
    g_.nodes.push_back(transpose(twin_[at(v)], v, kToFirst));
    ++r_.changes;
  }

  // A new value, v's type permuted, as v's twin; v itself is not computed (yet).
  ValueId make_twin(ValueId v) {
    const ValueId t = add_value(g_, g_.values[at(v)].name + "_nhwc", permuted(type(v), kToLast));
    grow();
    twin_[at(v)] = t;
    first_ready_[at(v)] = 0;
    return t;
  }

  Node transpose(ValueId from, ValueId to, const std::int64_t* perm) {
    Node t;
    t.name = g_.values[at(to)].name + "_transpose";
    t.op_type = "Transpose";
    t.inputs = {from};
    t.outputs = {to};
    t.attrs["perm"] = ints_attribute({perm[0], perm[1], perm[2], perm[3]});
    return t;
  }

  void grow() {
    twin_.resize(g_.values.size(), kNoValue);
    first_ready_.resize(g_.values.size(), 1);
  }
  const ValueType& type(ValueId v) const { return g_.values[at(v)].type; }
  static std::size_t at(ValueId v) { return static_cast<std::size_t>(v); }

  Graph& g_;
  const OptimizeOptions& o_;
  PassReport& r_;
  std::vector<ValueId> twin_;       // per value: its channels-last twin, or kNoValue
  std::vector<char> first_ready_;   // per value: whether the channels-first value is computed
  std::map<ValueId, ValueId> constants_;  // constant -> its transposed twin
};

}  // namespace

Status layout(Model& m, const OptimizeOptions& o, PassReport& report) {
  if (!o.conv_layout) return Status::ok();
  Assigner(m, o, report).run();
  if (report.changes > 0 && !m.opsets.count(kTesseraDomain)) m.opsets[kTesseraDomain] = 1;
  return Status::ok();
}

}  // namespace tessera::graph::passes
