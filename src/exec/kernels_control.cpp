// Control flow: If, Loop and Scan. Each compiles its subgraphs once (kept in the node's cache)
// and runs them with run_subgraph, handing them the values they capture from the graphs
// around the node (KernelCall::captured). Scan outputs are stacked along their axis; a loop
// that runs no iteration gives scan outputs of length 0 with the dims the body declares.
#include <climits>
#include <map>
#include <string>

#include "program.hpp"

namespace tessera::exec::detail {
namespace {

struct SubgraphCache final : NodeCache {
  std::map<std::string, std::unique_ptr<Program>, std::less<>> programs;  // per graph attribute
};

// The program of the node's graph attribute `name`, compiled on first use.
Result<Program*> subgraph(KernelCall& c, const char* name) {
  if (!c.cache) c.cache = std::make_unique<SubgraphCache>();
  auto* sc = dynamic_cast<SubgraphCache*>(c.cache.get());
  if (!sc) return internal_error("the node's cache is not a subgraph cache");
  std::unique_ptr<Program>& p = sc->programs[name];
  if (!p) {
    const graph::Attribute* a = c.attr(name);
    if (!a || a->kind != graph::Attribute::Kind::kGraph || !a->g) return invalid_argument(std::string("the graph attribute '") + name + "' is missing");
    TESSERA_ASSIGN_OR_RETURN(p, compile(*a->g, c.opset, name));
  }
  return p.get();
}

Result<bool> condition(KernelCall& c, const Tensor& t, const std::string& what) {
  if (t.numel() != 1) return invalid_argument(what + " has " + std::to_string(t.numel()) + " elements, not one");
  TESSERA_ASSIGN_OR_RETURN(const double v, scalar_value(c.h, t, what));
  return v != 0;
}

// `parts` (of equal dims and dtype) stacked along a new axis `axis` of the result, part i at
// position i, or at n-1-i when `reverse`. With no parts: the dims `empty_dims` declares, with
// 0 inserted at the axis.
Result<Tensor> stack(const std::vector<Tensor>& parts, std::int64_t axis, bool reverse, const graph::ValueType& declared, const std::string& what) {
  if (parts.empty()) {
    std::vector<std::int64_t> dims;
    if (declared.shape)
      for (const graph::Dim& d : *declared.shape) dims.push_back(d.has_size() ? d.size : 0);
    TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(axis, static_cast<int>(dims.size()) + 1, what + " axis"));
    dims.insert(dims.begin() + a, 0);
    const auto dtype = graph::to_dtype(declared.elem);
    return new_tensor(dims, dtype.value_or(DType::kF32));
  }
  const Tensor& first = parts.front();
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(axis, first.rank() + 1, what + " axis"));
  std::vector<std::int64_t> dims = first.shape().dims();
  dims.insert(dims.begin() + a, static_cast<std::int64_t>(parts.size()));
  TESSERA_ASSIGN_OR_RETURN(Tensor y, new_tensor(dims, first.dtype()));
  const auto n = static_cast<std::int64_t>(parts.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const Tensor& p = parts[static_cast<std::size_t>(i)];
    if (p.dtype() != first.dtype() || p.shape() != first.shape())
      return invalid_argument(what + ": iteration " + std::to_string(i) + " gives " + std::string(dtype_name(p.dtype())) + p.shape().to_string() +
                              ", iteration 0 gave " + std::string(dtype_name(first.dtype())) + first.shape().to_string());
    TESSERA_ASSIGN_OR_RETURN(const Tensor at, y.select(a, reverse ? n - 1 - i : i));
    TESSERA_RETURN_IF_ERROR(at.copy_from(p));
  }
  return y;
}

Status if_kernel(KernelCall& c) {
  if (!c.input(0)) return invalid_argument("the condition is missing");
  TESSERA_ASSIGN_OR_RETURN(const bool cond, condition(c, *c.input(0), "the condition"));
  const char* branch = cond ? "then_branch" : "else_branch";
  TESSERA_ASSIGN_OR_RETURN(Program * p, subgraph(c, branch));
  TESSERA_ASSIGN_OR_RETURN(std::vector<Tensor> out, run_subgraph(*p, c.h, {}, c.captured));
  if (out.size() != c.out.size())
    return invalid_argument(std::string(branch) + " has " + std::to_string(out.size()) + " outputs, the node " + std::to_string(c.out.size()));
  for (std::size_t k = 0; k < out.size(); ++k) c.out[k] = std::move(out[k]);
  return Status::ok();
}

Result<Tensor> scalar_i64(std::int64_t v) { return Tensor::from_vector<std::int64_t>(Shape(std::vector<std::int64_t>{}), {v}); }
Result<Tensor> scalar_bool(bool v) { return Tensor::from_vector<bool>(Shape(std::vector<std::int64_t>{}), {v}); }

// Loop: inputs M (trip count), cond, N carried values; the body takes (i, cond, carried...)
// and gives (cond, carried..., K scan values).
Status loop_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(Program * body, subgraph(c, "body"));
  const graph::Graph& bg = *body->graph;
  const std::size_t n = c.in.size() < 2 ? 0 : c.in.size() - 2;
  if (bg.inputs.size() != n + 2) return invalid_argument("the body takes " + std::to_string(bg.inputs.size()) + " inputs; the node carries " + std::to_string(n) + " values, so 2 + " + std::to_string(n) + " are needed");
  if (bg.outputs.size() < n + 1) return invalid_argument("the body gives " + std::to_string(bg.outputs.size()) + " outputs, fewer than the condition and " + std::to_string(n) + " carried values");
  const std::size_t k_scan = bg.outputs.size() - 1 - n;
  if (c.out.size() > n + k_scan) return invalid_argument("the node has " + std::to_string(c.out.size()) + " outputs, the body gives " + std::to_string(n + k_scan));
  std::int64_t trips = LLONG_MAX;
  if (c.input(0)) {  // read as integers: exporters write 2^63 - 1 for "no limit", which a double would not hold
    TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> m, int_values(*c.input(0), "the trip count M"));
    if (m.size() != 1) return invalid_argument("the trip count M has " + std::to_string(m.size()) + " elements, not one");
    trips = m[0];
  }
  bool cond = true;
  if (c.input(1)) {
    TESSERA_ASSIGN_OR_RETURN(cond, condition(c, *c.input(1), "the condition"));
  }
  if (!c.input(0) && !c.input(1)) return invalid_argument("a Loop with neither a trip count nor a condition never ends");
  std::vector<Tensor> carried;
  for (std::size_t j = 0; j < n; ++j) {
    if (!c.input(2 + j)) return invalid_argument("carried value " + std::to_string(j) + " is missing");
    carried.push_back(*c.input(2 + j));
  }
  std::vector<std::vector<Tensor>> scans(k_scan);
  for (std::int64_t i = 0; i < trips && cond; ++i) {
    std::vector<Tensor> in;
    TESSERA_ASSIGN_OR_RETURN(Tensor it, scalar_i64(i));
    TESSERA_ASSIGN_OR_RETURN(Tensor ct, scalar_bool(cond));
    in.push_back(std::move(it));
    in.push_back(std::move(ct));
    for (Tensor& t : carried) in.push_back(std::move(t));
    TESSERA_ASSIGN_OR_RETURN(std::vector<Tensor> out, run_subgraph(*body, c.h, std::move(in), c.captured));
    if (c.input(1)) {
      TESSERA_ASSIGN_OR_RETURN(cond, condition(c, out[0], "iteration " + std::to_string(i) + ": the body's condition"));
    }
    for (std::size_t j = 0; j < n; ++j) carried[j] = std::move(out[1 + j]);
    for (std::size_t k = 0; k < k_scan; ++k) scans[k].push_back(std::move(out[1 + n + k]));
  }
  for (std::size_t j = 0; j < n && j < c.out.size(); ++j) c.out[j] = std::move(carried[j]);
  for (std::size_t k = 0; n + k < c.out.size(); ++k) {
    const graph::ValueType& declared = bg.values[static_cast<std::size_t>(bg.outputs[1 + n + k])].type;
    TESSERA_ASSIGN_OR_RETURN(c.out[n + k], stack(scans[k], 0, false, declared, "scan output " + std::to_string(k)));
  }
  return Status::ok();
}

// One scan over `length` steps: the body takes (states..., a slice of each scan input) and gives
// (states..., a slice of each scan output). Outputs: the final states, then the scan outputs.
struct ScanSpec {
  std::vector<std::int64_t> in_axes, in_dirs, out_axes, out_dirs;
};
Result<std::vector<Tensor>> scan_once(KernelCall& c, Program& body, std::vector<Tensor> states, const std::vector<Tensor>& xs, const ScanSpec& s) {
  const graph::Graph& bg = *body.graph;
  const std::size_t n = states.size(), m = xs.size();
  if (bg.inputs.size() != n + m) return invalid_argument("the body takes " + std::to_string(bg.inputs.size()) + " inputs, not " + std::to_string(n) + " states + " + std::to_string(m) + " scan inputs");
  if (bg.outputs.size() < n) return invalid_argument("the body gives " + std::to_string(bg.outputs.size()) + " outputs, fewer than the " + std::to_string(n) + " states");
  const std::size_t k_scan = bg.outputs.size() - n;
  std::vector<int> axes(m);
  std::int64_t steps = -1;
  for (std::size_t j = 0; j < m; ++j) {
    const std::string what = "scan input " + std::to_string(j);
    TESSERA_ASSIGN_OR_RETURN(axes[j], norm_axis(j < s.in_axes.size() ? s.in_axes[j] : 0, xs[j].rank(), what + " axis"));
    const std::int64_t len = xs[j].shape()[axes[j]];
    if (steps >= 0 && len != steps) return invalid_argument(what + " has " + std::to_string(len) + " steps, scan input 0 " + std::to_string(steps));
    steps = len;
  }
  if (steps < 0) return invalid_argument("there are no scan inputs");
  std::vector<std::vector<Tensor>> scans(k_scan);
  for (std::int64_t t = 0; t < steps; ++t) {
    std::vector<Tensor> in = std::move(states);
    for (std::size_t j = 0; j < m; ++j) {
      const bool rev = j < s.in_dirs.size() && s.in_dirs[j] != 0;
      TESSERA_ASSIGN_OR_RETURN(Tensor slice, xs[j].select(axes[j], rev ? steps - 1 - t : t));
      TESSERA_ASSIGN_OR_RETURN(slice, slice.contiguous());
      in.push_back(std::move(slice));
    }
    TESSERA_ASSIGN_OR_RETURN(std::vector<Tensor> out, run_subgraph(body, c.h, std::move(in), c.captured));
    states.assign(std::make_move_iterator(out.begin()), std::make_move_iterator(out.begin() + static_cast<std::ptrdiff_t>(n)));
    for (std::size_t k = 0; k < k_scan; ++k) scans[k].push_back(std::move(out[n + k]));
  }
  std::vector<Tensor> result = std::move(states);
  for (std::size_t k = 0; k < k_scan; ++k) {
    const graph::ValueType& declared = bg.values[static_cast<std::size_t>(bg.outputs[n + k])].type;
    const bool rev = k < s.out_dirs.size() && s.out_dirs[k] != 0;
    TESSERA_ASSIGN_OR_RETURN(Tensor y, stack(scans[k], k < s.out_axes.size() ? s.out_axes[k] : 0, rev, declared, "scan output " + std::to_string(k)));
    result.push_back(std::move(y));
  }
  return result;
}

// Scan (opset 9 on): N states then M scan inputs, num_scan_inputs = M. Opset 8: a batch axis 0
// on every input, an optional first input sequence_lens, the scan axis 1; each batch entry is
// scanned on its own over its length, scan outputs padded with zeros to the longest.
Status scan_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(Program * body, subgraph(c, "body"));
  const std::int64_t m = c.attr_int("num_scan_inputs", -1);
  const std::size_t first = c.opset < 9 ? 1 : 0;  // opset 8: sequence_lens
  if (m < 1 || static_cast<std::size_t>(m) + first > c.in.size())
    return invalid_argument("num_scan_inputs " + std::to_string(m) + " with " + std::to_string(c.in.size()) + " inputs");
  const std::size_t n = c.in.size() - first - static_cast<std::size_t>(m);
  for (std::size_t j = first; j < c.in.size(); ++j)
    if (!c.input(j)) return invalid_argument("input " + std::to_string(j) + " is missing");
  ScanSpec s;
  s.in_axes = c.attr_ints("scan_input_axes").value_or(std::vector<std::int64_t>{});
  s.in_dirs = c.attr_ints(c.opset < 9 ? "directions" : "scan_input_directions").value_or(std::vector<std::int64_t>{});
  s.out_axes = c.attr_ints("scan_output_axes").value_or(std::vector<std::int64_t>{});
  s.out_dirs = c.attr_ints("scan_output_directions").value_or(std::vector<std::int64_t>{});
  std::vector<Tensor> states, xs;
  for (std::size_t j = 0; j < n; ++j) states.push_back(*c.input(first + j));
  for (std::size_t j = 0; j < static_cast<std::size_t>(m); ++j) xs.push_back(*c.input(first + n + j));
  if (c.opset >= 9) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<Tensor> out, scan_once(c, *body, std::move(states), xs, s));
    if (c.out.size() > out.size()) return invalid_argument("the node has " + std::to_string(c.out.size()) + " outputs, the body gives " + std::to_string(out.size()));
    for (std::size_t k = 0; k < c.out.size(); ++k) c.out[k] = std::move(out[k]);
    return Status::ok();
  }
  // Opset 8: per batch entry, over its own length.
  for (const Tensor& t : states)
    if (t.rank() < 1) return invalid_argument("a state without the batch axis");
  for (const Tensor& t : xs)
    if (t.rank() < 2) return invalid_argument("a scan input without the batch and sequence axes");
  const std::int64_t batch = xs[0].shape()[0], steps = xs[0].shape()[1];
  std::vector<std::int64_t> lens(static_cast<std::size_t>(batch), steps);
  if (c.input(0)) {
    TESSERA_ASSIGN_OR_RETURN(lens, int_values(*c.input(0), "sequence_lens"));
    if (static_cast<std::int64_t>(lens.size()) != batch) return invalid_argument("sequence_lens has " + std::to_string(lens.size()) + " entries for a batch of " + std::to_string(batch));
  }
  s.in_axes.assign(xs.size(), 0);
  std::vector<std::vector<Tensor>> per_output;
  for (std::int64_t b = 0; b < batch; ++b) {
    if (lens[static_cast<std::size_t>(b)] < 0 || lens[static_cast<std::size_t>(b)] > steps)
      return invalid_argument("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[static_cast<std::size_t>(b)]) + " is outside [0, " + std::to_string(steps) + "]");
    std::vector<Tensor> sb, xb;
    for (const Tensor& t : states) {
      TESSERA_ASSIGN_OR_RETURN(Tensor v, t.select(0, b));
      sb.push_back(std::move(v));
    }
    for (const Tensor& t : xs) {
      if (t.shape()[0] != batch || t.shape()[1] != steps) return invalid_argument("scan inputs of different batch or sequence sizes");
      TESSERA_ASSIGN_OR_RETURN(Tensor v, t.select(0, b));
      TESSERA_ASSIGN_OR_RETURN(v, v.slice(0, 0, lens[static_cast<std::size_t>(b)]));
      xb.push_back(std::move(v));
    }
    TESSERA_ASSIGN_OR_RETURN(std::vector<Tensor> out, scan_once(c, *body, std::move(sb), xb, s));
    per_output.resize(out.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (k >= n && out[k].shape()[0] < steps) {  // pad to the longest
        std::vector<std::int64_t> dims = out[k].shape().dims();
        dims[0] = steps;
        TESSERA_ASSIGN_OR_RETURN(Tensor padded, Tensor::zeros(Shape(dims), out[k].dtype()));
        TESSERA_ASSIGN_OR_RETURN(const Tensor head, padded.slice(0, 0, out[k].shape()[0]));
        TESSERA_RETURN_IF_ERROR(head.copy_from(out[k]));
        out[k] = std::move(padded);
      }
      per_output[k].push_back(std::move(out[k]));
    }
  }
  if (c.out.size() > per_output.size()) return invalid_argument("the node has " + std::to_string(c.out.size()) + " outputs, the body gives " + std::to_string(per_output.size()));
  for (std::size_t k = 0; k < c.out.size(); ++k) {
    TESSERA_ASSIGN_OR_RETURN(c.out[k], stack(per_output[k], 0, false, graph::ValueType{}, "output " + std::to_string(k)));
  }
  return Status::ok();
}

}  // namespace

Status control_flow_kernel(KernelCall& c) {
  const std::string& op = c.node.op_type;
  if (op == "If") return if_kernel(c);
  if (op == "Loop") return loop_kernel(c);
  return scan_kernel(c);
}

}  // namespace tessera::exec::detail
