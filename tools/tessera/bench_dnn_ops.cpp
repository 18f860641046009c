// `tessera bench dnn pool|act|softmax ...` and the commands of all four memory-bound
// primitives (norm's cases are in bench_dnn_norm.cpp). GB/s counts the tensors each call must
// read and write once (parameters and statistics left out). The options are those of the
// lines the library prints with TESSERA_LOG=bench; oneDNN gets the same layout as tessera (as
// benchdnn's --tag), and shows n/a where it has no such primitive (crelu, prelu, selu, ...).
#include "bench_dnn_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "commands.hpp"

namespace tessera::cli::dnn_bench {
namespace ops {

using nlohmann::json;

Shape parse_shape(const OpArgs& a, std::size_t min_rank) {
  if (!a.given("--dims")) bad("give --dims, e.g. --dims 8x64x56x56 (N, C, spatial...)");
  Shape s;
  s.dtype = parse_dnn_dtype(a.dtype);
  s.dims = parse_dims("--dims", a.dims, 1);
  if (s.dims.size() < min_rank || s.dims.size() > 8)
    bad("--dims " + a.dims + ": needs " + std::to_string(min_rank) + " to 8 dims");
  if (a.strided || a.layout == "strided") {
    std::fprintf(stderr,
                 "tessera: note: the line does not record the strides of a strided tensor; "
                 "timing packed nchw instead\n");
  } else if (!a.layout.empty()) {
    s.layout = parse_layout(a.layout);
    if (s.layout == dnn::Layout::kNHWC && s.dims.size() < 3)
      bad("--layout nhwc needs N, C and at least one spatial dim in --dims");
  }
  return s;
}

// " --layout nhwc --dtype f32" as the replay line carries them.
std::string shape_flags(const Shape& s) {
  return " --dims " + join_dims(s.dims) + " --layout " + std::string(dnn::layout_name(s.layout)) +
         " --dtype " + std::string(dtype_name(s.dtype));
}

std::string shape_text(const Shape& s) {
  std::string t = join_dims(s.dims);
  if (s.dims.size() >= 3) t += " " + std::string(dnn::layout_name(s.layout));
  return t;
}

double tolerance(DType d) {
  return d == DType::kF32 ? 1e-3 : 3e-2;
}

onednn::Tensor f32_vector(float* data, std::int64_t n) {
  return {DType::kF32, {n}, {1}, data};
}

void set_anchor(Plan& p, Result<onednn::PrimitivePtr> made) {
  if (made.is_ok())
    p.anchor = std::move(made).value();
  else
    p.anchor_missing = made.status().message();
}

void check_status(const Status& s) {
  if (!s.is_ok()) throw CommandError{s.message(), 1};
}

Case make_case(const std::string& primitive, const Shape& s, std::string command, std::string shape,
               json args) {
  Case c;
  c.primitive = primitive;
  c.dtype = s.dtype;
  c.shape = std::move(shape);
  c.command = std::move(command);
  c.args = std::move(args);
  return c;
}

bool parse_fwd_bwd(const std::string& dir) {
  if (dir == "fwd") return false;
  if (dir == "bwd") return true;
  bad("--dir: '" + dir + "' is not fwd or bwd");
}

// ---- Pooling -----------------------------------------------------------------------------

dnn::PoolKind parse_pool_kind(const std::string& k) {
  if (k == "max") return dnn::PoolKind::kMax;
  if (k == "avg-include-pad" || k == "avg_include_pad") return dnn::PoolKind::kAvgIncludePad;
  if (k == "avg-exclude-pad" || k == "avg_exclude_pad") return dnn::PoolKind::kAvgExcludePad;
  bad("--kind: '" + k + "' is not max, avg-include-pad or avg-exclude-pad");
}

const char* pool_kind_name(dnn::PoolKind k) {
  return k == dnn::PoolKind::kMax             ? "max"
         : k == dnn::PoolKind::kAvgIncludePad ? "avg-include-pad"
                                              : "avg-exclude-pad";
}

Case pool_case(const OpArgs& a) {
  a.only("pool",
         {"--kind", "--dims", "--layout", "--dtype", "--dir", "--kernel", "--stride", "--pad",
          "--pad-begin", "--pad-end", "--dilation", "--ceil", "--indices", "--strided"});
  const Shape s = parse_shape(a, 3);
  const bool backward = parse_fwd_bwd(a.dir);
  const std::size_t sp = s.dims.size() - 2;
  dnn::PoolDesc pd;
  pd.kind = parse_pool_kind(a.kind.empty() ? "max" : a.kind);
  auto per_dim = [&](const char* flag, const std::string& text, std::int64_t dflt,
                     std::int64_t min) {
    if (!a.given(flag)) return std::vector<std::int64_t>(sp, dflt);
    std::vector<std::int64_t> v = parse_dims(flag, text, min);
    if (v.size() == 1) v.assign(sp, v[0]);
    if (v.size() != sp)
      bad(std::string(flag) + " " + text + ": " + std::to_string(sp) + " values for --dims " +
          a.dims);
    return v;
  };
  if (!a.given("--kernel")) bad("pool needs --kernel, e.g. --kernel 3x3");
  pd.kernel = per_dim("--kernel", a.kernel, 1, 1);
  pd.stride = per_dim("--stride", a.stride, 1, 1);
  if (a.given("--pad") && (a.given("--pad-begin") || a.given("--pad-end")))
    bad("give --pad or --pad-begin/--pad-end, not both");
  if (a.given("--pad")) {
    std::vector<std::int64_t> v = parse_dims("--pad", a.pad, 0);
    if (v.size() == 1) v.assign(sp, v[0]);
    if (v.size() == sp) v.insert(v.end(), v.begin(), v.end());
    if (v.size() != 2 * sp)
      bad("--pad " + a.pad + ": " + std::to_string(sp) + " values (both sides) or " +
          std::to_string(2 * sp) + " (begin then end)");
    pd.pad_begin.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(sp));
    pd.pad_end.assign(v.begin() + static_cast<std::ptrdiff_t>(sp), v.end());
  } else {
    pd.pad_begin = per_dim("--pad-begin", a.pad_begin, 0, 0);
    pd.pad_end = per_dim("--pad-end", a.pad_end, 0, 0);
  }
  if (a.given("--dilation")) pd.dilation = per_dim("--dilation", a.dilation, 1, 1);
  pd.ceil_mode = a.ceil;
  const bool indices = a.indices;
  if (indices && pd.kind != dnn::PoolKind::kMax) bad("--indices: max pooling only");
  const dnn::TensorDesc xd = s.desc();
  auto yr = dnn::pooling_output_desc(pd, xd);
  if (!yr.is_ok()) bad(yr.status().message());
  const dnn::TensorDesc yd = *yr;
  if (yd.numel() == 0) bad("pool: the output " + yd.to_string() + " is empty");

  std::string cmd = "tessera bench dnn pool --kind " + std::string(pool_kind_name(pd.kind)) +
                    " --dims " + join_dims(s.dims) + " --layout " +
                    std::string(dnn::layout_name(s.layout)) + " --kernel " + join_dims(pd.kernel) +
                    " --stride " + join_dims(pd.stride) + " --pad " + join_dims(pd.pad_begin) +
                    "x" + join_dims(pd.pad_end);
  if (!pd.dilation.empty()) cmd += " --dilation " + join_dims(pd.dilation);
  if (pd.ceil_mode) cmd += " --ceil";
  if (indices) cmd += " --indices";
  cmd += " --dtype " + std::string(dtype_name(s.dtype)) + " --dir " + a.dir;
  std::string shape = std::string(pool_kind_name(pd.kind)) + " " + shape_text(s) + " k" +
                      join_dims(pd.kernel) + " s" + join_dims(pd.stride);
  Case c = make_case("pool", s, cmd, shape,
                     {{"kind", pool_kind_name(pd.kind)},
                      {"dims", s.dims},
                      {"layout", dnn::layout_name(s.layout)},
                      {"kernel", pd.kernel},
                      {"stride", pd.stride},
                      {"pad_begin", pd.pad_begin},
                      {"pad_end", pd.pad_end},
                      {"dilation", pd.dilation},
                      {"ceil", pd.ceil_mode},
                      {"indices", indices},
                      {"dir", a.dir}});
  c.plan = [pd, xd, yd, backward, indices](dnn::Handle& h, bool anchor, Plan& p) {
    const DType dt = xd.dtype;
    const bool max = pd.kind == dnn::PoolKind::kMax;
    p.bandwidth = true;
    p.tolerance = tolerance(dt);
    std::int64_t* idx =
        indices ? static_cast<std::int64_t*>(p.alloc(DType::kI64, yd.span(), "indices")) : nullptr;
    const void* x = p.random(dt, xd.span(), "x");
    onednn::PoolSpec spec;
    spec.backward = backward;
    spec.kind = pd.kind;
    spec.kernel = pd.kernel, spec.stride = pd.stride, spec.pad_begin = pd.pad_begin;
    spec.dilation =
        pd.dilation.empty() ? std::vector<std::int64_t>(pd.kernel.size(), 1) : pd.dilation;
    // oneDNN has no ceil mode: the trailing padding that gives the same output size.
    spec.pad_end = pd.pad_end;
    bool anchor_ok = true;
    for (std::size_t i = 0; i < pd.kernel.size(); ++i) {
      const std::size_t d = i + 2;
      const std::int64_t ext = spec.dilation[i] * (pd.kernel[i] - 1) + 1;
      spec.pad_end[i] = (yd.dims[d] - 1) * pd.stride[i] + ext - xd.dims[d] - pd.pad_begin[i];
      if (spec.pad_end[i] != pd.pad_end[i] && pd.kind == dnn::PoolKind::kAvgIncludePad)
        anchor_ok = false;
    }
    if (!backward) {
      void* y = p.alloc(dt, yd.span(), "y");
      p.work = bytes(dt, xd.numel()) + bytes(dt, yd.numel()) + (idx ? 8.0 * yd.numel() : 0);
      p.tessera = [&h, pd, xd, yd, x, y, idx] {
        return dnn::pooling_forward(h, pd, xd, x, yd, y, idx);
      };
      if (!anchor) return;
      void* ya = p.alloc(dt, yd.span(), "oneDNN's y");
      spec.x = onednn::tensor(xd, x), spec.y = onednn::tensor(yd, ya);
      p.check("y", y, ya, dt, yd.span());
    } else {
      const void* dy = p.random(dt, yd.span(), "dy");
      void* dx = p.alloc(dt, xd.span(), "dx");
      if (idx != nullptr) {  // the indices of a forward pass (untimed)
        void* y = p.alloc(dt, yd.span(), "y");
        check_status(dnn::pooling_forward(h, pd, xd, x, yd, y, idx));
      }
      p.work = bytes(dt, yd.numel()) + bytes(dt, xd.numel()) +
               (max ? (idx ? 8.0 * yd.numel() : bytes(dt, xd.numel())) : 0);
      const void* xin = idx ? nullptr : x;
      p.tessera = [&h, pd, xd, yd, xin, idx, dy, dx] {
        return dnn::pooling_backward(h, pd, xd, xin, idx, yd, dy, xd, dx);
      };
      if (!anchor) return;
      void* dxa = p.alloc(dt, xd.span(), "oneDNN's dx");
      spec.x = onednn::tensor(xd, x), spec.dy = onednn::tensor(yd, dy);
      spec.dx = onednn::tensor(xd, dxa);
      // Half-precision inputs tie often, and the libraries may route a tie differently.
      if (!max || dt == DType::kF32) p.check("dx", dx, dxa, dt, xd.span());
    }
    if (!anchor_ok) {
      p.anchor_missing = "oneDNN has no ceil mode; its padding would count in the average";
      return;
    }
    set_anchor(p, onednn::make_pool(spec));
  };
  return c;
}

// ---- Activations -------------------------------------------------------------------------

Case act_case(const OpArgs& a) {
  if (a.kind.empty()) bad("act needs --kind (relu, gelu_erf, ..., prelu, crelu)");
  const bool prelu = a.kind == "prelu", crelu = a.kind == "crelu";
  std::optional<dnn::ActKind> kind = dnn::parse_act(a.kind);
  if (!prelu && !crelu && !kind) bad("--kind: unknown activation '" + a.kind + "'");
  if (prelu)
    a.only("act --kind prelu",
           {"--kind", "--dims", "--layout", "--dtype", "--dir", "--slopes", "--strided"});
  else if (crelu)
    a.only("act --kind crelu", {"--kind", "--dims", "--layout", "--dtype", "--dir", "--strided"});
  else
    a.only("act",
           {"--kind", "--dims", "--layout", "--dtype", "--dir", "--alpha", "--beta", "--strided"});
  const Shape s = parse_shape(a, 1);
  const bool backward = parse_fwd_bwd(a.dir);
  const dnn::TensorDesc xd = s.desc();
  dnn::Activation act;
  std::string cmd = "tessera bench dnn act --kind " + a.kind + shape_flags(s);
  json args = {
      {"kind", a.kind}, {"dims", s.dims}, {"layout", dnn::layout_name(s.layout)}, {"dir", a.dir}};
  std::int64_t slopes = 1;
  if (kind) {
    act = dnn::Activation::make(*kind);
    if (a.kind == "relu6") act = dnn::Activation::relu6();
    if (a.given("--alpha")) act.alpha = static_cast<float>(a.alpha);
    if (a.given("--beta")) act.beta = static_cast<float>(a.beta);
    cmd += " --alpha " + format_number(act.alpha) + " --beta " + format_number(act.beta);
    args["alpha"] = act.alpha;
    args["beta"] = act.beta;
  } else if (prelu) {
    if (a.given("--slopes")) slopes = a.slopes;
    const std::int64_t channels = s.dims.size() >= 2 ? s.dims[1] : 1;
    if (slopes != 1 && slopes != channels)
      bad("--slopes " + std::to_string(slopes) + ": 1 (shared) or " + std::to_string(channels) +
          " (one per channel)");
    cmd += " --slopes " + std::to_string(slopes);
    args["slopes"] = slopes;
  } else if (s.dims.size() < 2) {
    bad("act --kind crelu needs N and C in --dims");
  }
  cmd += " --dir " + a.dir;
  Case c = make_case("act", s, cmd, a.kind + " " + shape_text(s), args);
  dnn::TensorDesc yd = xd;
  if (crelu) {
    std::vector<std::int64_t> d = s.dims;
    d[1] *= 2;
    yd = s.desc(d);
  }
  c.plan = [act, xd, yd, backward, prelu, crelu, slopes](dnn::Handle& h, bool anchor, Plan& p) {
    const DType dt = xd.dtype;
    p.bandwidth = true;
    p.tolerance = tolerance(dt);
    const void* x = p.random(dt, xd.span(), "x");
    const float* slope =
        prelu ? static_cast<const float*>(p.random(DType::kF32, slopes, "slopes", 0.0f, 0.5f))
              : nullptr;
    if (!backward) {
      void* y = p.alloc(dt, yd.span(), "y");
      p.work = bytes(dt, xd.numel()) + bytes(dt, yd.numel());
      if (prelu)
        p.tessera = [&h, xd, x, slope, slopes, y] {
          return dnn::prelu_forward(h, xd, x, slope, slopes, xd, y);
        };
      else if (crelu)
        p.tessera = [&h, xd, yd, x, y] { return dnn::crelu_forward(h, xd, x, yd, y); };
      else
        p.tessera = [&h, act, xd, x, y] { return dnn::activation_forward(h, act, xd, x, xd, y); };
      if (!anchor) return;
      if (prelu || crelu) {
        p.anchor_missing = std::string("the oneDNN anchor has no ") + (prelu ? "prelu" : "crelu");
        return;
      }
      void* ya = p.alloc(dt, yd.span(), "oneDNN's y");
      p.check("y", y, ya, dt, yd.span());
      onednn::EltwiseSpec spec;
      spec.act = act;
      spec.x = onednn::tensor(xd, x), spec.y = onednn::tensor(xd, ya);
      set_anchor(p, onednn::make_eltwise(spec));
      return;
    }
    const void* dy = p.random(dt, yd.span(), "dy");
    void* dx = p.alloc(dt, xd.span(), "dx");
    p.work = 2 * bytes(dt, xd.numel()) + bytes(dt, yd.numel());
    if (prelu) {
      float* dslope = static_cast<float*>(p.alloc(DType::kF32, slopes, "dslope"));
      p.tessera = [&h, xd, x, slope, slopes, dy, dx, dslope] {
        return dnn::prelu_backward(h, xd, x, slope, slopes, xd, dy, xd, dx, dslope);
      };
    } else if (crelu) {
      p.tessera = [&h, xd, yd, x, dy, dx] { return dnn::crelu_backward(h, xd, x, yd, dy, xd, dx); };
    } else {
      p.tessera = [&h, act, xd, x, dy, dx] {
        return dnn::activation_backward(h, act, xd, x, xd, dy, xd, dx);
      };
    }
    if (!anchor) return;
    if (prelu || crelu) {
      p.anchor_missing = std::string("the oneDNN anchor has no ") + (prelu ? "prelu" : "crelu");
      return;
    }
    void* dxa = p.alloc(dt, xd.span(), "oneDNN's dx");
    p.check("dx", dx, dxa, dt, xd.span());
    onednn::EltwiseSpec spec;
    spec.backward = true;
    spec.act = act;
    spec.x = onednn::tensor(xd, x), spec.dy = onednn::tensor(xd, dy);
    spec.dx = onednn::tensor(xd, dxa);
    set_anchor(p, onednn::make_eltwise(spec));
  };
  return c;
}

// ---- Softmax -----------------------------------------------------------------------------

Case softmax_case(const OpArgs& a) {
  a.only("softmax", {"--dims", "--layout", "--dtype", "--dir", "--axis", "--mode", "--strided"});
  const Shape s = parse_shape(a, 1);
  const bool backward = parse_fwd_bwd(a.dir);
  const std::string mode_text = a.mode.empty() ? "softmax" : a.mode;
  if (mode_text != "softmax" && mode_text != "log" && mode_text != "logsoftmax")
    bad("--mode: '" + mode_text + "' is not softmax or log");
  const bool log = mode_text != "softmax";
  const auto rank = static_cast<std::int64_t>(s.dims.size());
  if (a.axis < -rank || a.axis >= rank)
    bad("--axis " + std::to_string(a.axis) + " is outside --dims " + a.dims);
  const int axis = static_cast<int>(a.axis < 0 ? a.axis + rank : a.axis);
  const std::string cmd = "tessera bench dnn softmax --axis " + std::to_string(a.axis) +
                          " --mode " + (log ? "log" : "softmax") + shape_flags(s) + " --dir " +
                          a.dir;
  Case c =
      make_case("softmax", s, cmd,
                std::string(log ? "log " : "") + shape_text(s) + " axis " + std::to_string(axis),
                {{"axis", axis},
                 {"mode", log ? "log" : "softmax"},
                 {"dims", s.dims},
                 {"layout", dnn::layout_name(s.layout)},
                 {"dir", a.dir}});
  const dnn::TensorDesc xd = s.desc();
  const dnn::SoftmaxMode mode = log ? dnn::SoftmaxMode::kLogSoftmax : dnn::SoftmaxMode::kSoftmax;
  c.plan = [xd, mode, axis, backward, log](dnn::Handle& h, bool anchor, Plan& p) {
    const DType dt = xd.dtype;
    p.bandwidth = true;
    p.tolerance = tolerance(dt);
    onednn::SoftmaxSpec spec;
    spec.backward = backward;
    spec.log = log;
    spec.axis = axis;
    const void* x = p.random(dt, xd.span(), "x");
    if (!backward) {
      void* y = p.alloc(dt, xd.span(), "y");
      p.work = 2 * bytes(dt, xd.numel());
      p.tessera = [&h, mode, axis, xd, x, y] {
        return dnn::softmax_forward(h, mode, axis, xd, x, xd, y);
      };
      if (!anchor) return;
      void* ya = p.alloc(dt, xd.span(), "oneDNN's y");
      p.check("y", y, ya, dt, xd.span());
      spec.x = onednn::tensor(xd, x), spec.y = onednn::tensor(xd, ya);
    } else {
      // Backward reads the forward output: made from x by tessera, untimed.
      void* y = p.alloc(dt, xd.span(), "y");
      check_status(dnn::softmax_forward(h, mode, axis, xd, x, xd, y));
      const void* dy = p.random(dt, xd.span(), "dy");
      void* dx = p.alloc(dt, xd.span(), "dx");
      p.work = 3 * bytes(dt, xd.numel());
      p.tessera = [&h, mode, axis, xd, y, dy, dx] {
        return dnn::softmax_backward(h, mode, axis, xd, y, xd, dy, xd, dx);
      };
      if (!anchor) return;
      void* dxa = p.alloc(dt, xd.span(), "oneDNN's dx");
      p.check("dx", dx, dxa, dt, xd.span());
      spec.x = onednn::tensor(xd, x), spec.y = onednn::tensor(xd, y);
      spec.dy = onednn::tensor(xd, dy), spec.dx = onednn::tensor(xd, dxa);
    }
    set_anchor(p, onednn::make_softmax(spec));
  };
  return c;
}

}  // namespace ops

namespace {

using ops::OpArgs;

void add_common(CLI::App* cmd, OpArgs& a) {
  auto& o = a.options;
  o["--dims"] = cmd->add_option("--dims", a.dims, "Logical dims N x C x spatial: 8x64x56x56");
  o["--layout"] = cmd->add_option("--layout", a.layout, "nchw (default) or nhwc");
  o["--strided"] = cmd->add_flag("--strided", a.strided,
                                 "The logged tensor had other strides (timed as packed nchw)");
  o["--dtype"] = cmd->add_option("--dtype", a.dtype, "f32 (default), bf16 or f16");
}

template <typename MakeCase>
void add_op(CLI::App& dnn, const char* name, const char* help,
            const std::function<void(CLI::App*, OpArgs&)>& options, MakeCase make) {
  auto args = std::make_shared<OpArgs>();
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = dnn.add_subcommand(name, help);
  add_common(cmd, *args);
  options(cmd, *args);
  add_dnn_bench_options(cmd, *opts);
  cmd->callback([args, opts, make] { run_cases({make(*args)}, *opts, false); });
}

}  // namespace

void add_ops_commands(CLI::App& dnn) {
  add_op(
      dnn, "pool", "Pooling (max, average) forward or backward",
      [](CLI::App* cmd, OpArgs& a) {
        auto& o = a.options;
        o["--kind"] = cmd->add_option("--kind", a.kind,
                                      "max (default), avg-include-pad, "
                                      "avg-exclude-pad");
        o["--dir"] = cmd->add_option("--dir", a.dir, "fwd (default) or bwd");
        o["--kernel"] = cmd->add_option("--kernel", a.kernel, "Window: 3x3");
        o["--stride"] = cmd->add_option("--stride", a.stride, "Stride (default 1)");
        o["--pad"] = cmd->add_option("--pad", a.pad,
                                     "Padding both sides (1x1) or begin then end "
                                     "(1x1x1x1)");
        o["--pad-begin"] = cmd->add_option("--pad-begin", a.pad_begin, "Leading padding");
        o["--pad-end"] = cmd->add_option("--pad-end", a.pad_end, "Trailing padding");
        o["--dilation"] = cmd->add_option("--dilation", a.dilation, "Dilation (every kind)");
        o["--ceil"] = cmd->add_flag("--ceil", a.ceil, "Ceil mode (output size rounded up)");
        o["--indices"] = cmd->add_flag("--indices", a.indices, "Max pooling returns indices");
      },
      ops::pool_case);
  add_op(
      dnn, "act", "Activations (relu, gelu_erf, ..., prelu, crelu) forward or backward",
      [](CLI::App* cmd, OpArgs& a) {
        auto& o = a.options;
        o["--kind"] = cmd->add_option("--kind", a.kind,
                                      "relu, leaky_relu, elu, selu, celu, "
                                      "sigmoid, hard_sigmoid, tanh, gelu_erf, "
                                      "gelu_tanh, silu, mish, softplus, "
                                      "softsign, clip, relu6, hard_swish, abs, "
                                      "identity, prelu, crelu");
        o["--dir"] = cmd->add_option("--dir", a.dir, "fwd (default) or bwd");
        o["--alpha"] = cmd->add_option("--alpha", a.alpha, "alpha (default: the kind's)");
        o["--beta"] = cmd->add_option("--beta", a.beta, "beta (default: the kind's)");
        o["--slopes"] = cmd->add_option("--slopes", a.slopes, "prelu: 1 (shared) or C slopes");
      },
      ops::act_case);
  add_op(
      dnn, "softmax", "Softmax or log-softmax over one axis, forward or backward",
      [](CLI::App* cmd, OpArgs& a) {
        auto& o = a.options;
        o["--axis"] = cmd->add_option("--axis", a.axis, "Axis (default 1; negative from the end)");
        o["--mode"] = cmd->add_option("--mode", a.mode, "softmax (default) or log");
        o["--dir"] = cmd->add_option("--dir", a.dir, "fwd (default) or bwd");
      },
      ops::softmax_case);
  add_op(
      dnn, "norm", "Batch, layer, group, instance normalisation and LRN",
      [](CLI::App* cmd, OpArgs& a) {
        auto& o = a.options;
        o["--kind"] = cmd->add_option("--kind", a.kind,
                                      "batch (default), layer, group, "
                                      "instance, lrn");
        o["--dir"] = cmd->add_option("--dir", a.dir,
                                     "batch: fwd-training (default), "
                                     "fwd-inference, bwd; others: fwd, bwd");
        o["--mode"] = cmd->add_option("--mode", a.mode,
                                      "batch: spatial (default) or "
                                      "per-activation");
        o["--lrn-mode"] = cmd->add_option("--lrn-mode", a.lrn_mode,
                                          "lrn: across (default) or "
                                          "within (also as --mode)");
        o["--eps"] = cmd->add_option("--eps", a.eps, "epsilon (default 1e-5)");
        o["--momentum"] = cmd->add_option("--momentum", a.momentum, "batch: momentum (0.1)");
        o["--running"] = cmd->add_flag("--running", a.running, "batch: update running statistics");
        o["--axis"] = cmd->add_option("--axis", a.axis, "layer: first normalised dim (default 1)");
        o["--groups"] = cmd->add_option("--groups", a.groups, "group: number of groups");
        o["--size"] = cmd->add_option("--size", a.size, "lrn: window size (default 5)");
        o["--alpha"] = cmd->add_option("--alpha", a.alpha, "lrn: alpha (default 1e-4)");
        o["--beta"] = cmd->add_option("--beta", a.beta, "lrn: beta (default 0.75)");
        o["--k"] = cmd->add_option("--k", a.k, "lrn: k (default 1)");
      },
      ops::norm_case);
}

}  // namespace tessera::cli::dnn_bench
