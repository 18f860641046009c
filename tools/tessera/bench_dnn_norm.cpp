// `tessera bench dnn norm --kind batch|layer|group|instance|lrn ...`: normalisations forward
// (training and inference) and backward, GB/s over the tensors each call reads and writes once.
// oneDNN runs batch norm (spatial), layer norm (row-major tensors, as [leading, normalised])
// and LRN (odd sizes); it has no group or instance norm.
#include <algorithm>
#include <cmath>
#include <set>

#include "bench_dnn_ops.hpp"
#include "commands.hpp"

namespace tessera::cli::dnn_bench::ops {
namespace {

using nlohmann::json;

enum class NormKind { kBatch, kLayer, kGroup, kInstance, kLrn };

struct NormCase {
  NormKind kind = NormKind::kBatch;
  onednn::NormProp prop = onednn::NormProp::kForwardTraining;
  dnn::BatchNormMode bn_mode = dnn::BatchNormMode::kSpatial;
  int axis = 1;
  std::int64_t groups = 1;
  double eps = 1e-5, momentum = 0.1;
  bool running = false;
  dnn::LrnDesc lrn;
  dnn::TensorDesc xd;
  std::int64_t params = 0;  // scale/bias values
  std::int64_t stats = 0;   // mean/invstd values
};

// tessera's forward (statistics into mean/invstd when given).
Status norm_forward(dnn::Handle& h, const NormCase& n, const void* x, const float* scale,
                    const float* bias, float* rmean, float* rvar, float* mean, float* invstd,
                    void* y) {
  switch (n.kind) {
    case NormKind::kBatch:
      if (n.prop == onednn::NormProp::kForwardInference)
        return dnn::batch_norm_forward_inference(h, n.bn_mode, n.xd, x, scale, bias, rmean, rvar,
                                                 n.eps, n.xd, y);
      return dnn::batch_norm_forward_training(h, n.bn_mode, n.xd, x, scale, bias, n.eps, n.momentum,
                                              rmean, rvar, mean, invstd, n.xd, y);
    case NormKind::kLayer:
      return dnn::layer_norm_forward(h, n.axis, n.xd, x, scale, bias, n.eps, n.xd, y, mean, invstd);
    case NormKind::kGroup:
      return dnn::group_norm_forward(h, n.groups, n.xd, x, scale, bias, n.eps, n.xd, y, mean,
                                     invstd);
    case NormKind::kInstance:
      return dnn::instance_norm_forward(h, n.xd, x, scale, bias, n.eps, n.xd, y, mean, invstd);
    case NormKind::kLrn:
      return dnn::lrn_forward(h, n.lrn, n.xd, x, n.xd, y);
  }
  return unsupported("norm kind");
}

Status norm_backward(dnn::Handle& h, const NormCase& n, const void* x, const void* dy,
                     const float* scale, const float* mean, const float* invstd, void* dx,
                     float* dscale, float* dbias) {
  switch (n.kind) {
    case NormKind::kBatch:
      return dnn::batch_norm_backward(h, n.bn_mode, n.xd, x, n.xd, dy, scale, mean, invstd, n.xd,
                                      dx, dscale, dbias);
    case NormKind::kLayer:
      return dnn::layer_norm_backward(h, n.axis, n.xd, x, n.xd, dy, scale, mean, invstd, n.xd, dx,
                                      dscale, dbias);
    case NormKind::kGroup:
      return dnn::group_norm_backward(h, n.groups, n.xd, x, n.xd, dy, scale, mean, invstd, n.xd, dx,
                                      dscale, dbias);
    case NormKind::kInstance:
      return dnn::instance_norm_backward(h, n.xd, x, n.xd, dy, scale, mean, invstd, n.xd, dx,
                                         dscale, dbias);
    case NormKind::kLrn:
      return dnn::lrn_backward(h, n.lrn, n.xd, x, n.xd, dy, n.xd, dx);
  }
  return unsupported("norm kind");
}

// Why oneDNN cannot run the case, or "" when it can.
std::string norm_anchor_gap(const NormCase& n) {
  switch (n.kind) {
    case NormKind::kBatch:
      return n.bn_mode == dnn::BatchNormMode::kSpatial
                 ? ""
                 : "oneDNN has no per-activation batch normalization";
    case NormKind::kLayer:
      return n.xd.rank() >= 3 && !n.xd.is_packed(dnn::Layout::kNCHW)
                 ? "oneDNN's layer normalization needs the normalised dims innermost (nchw)"
                 : "";
    case NormKind::kGroup:
      return "oneDNN 2.6 has no group normalization";
    case NormKind::kInstance:
      return "oneDNN 2.6 has no instance normalization";
    case NormKind::kLrn:
      return n.lrn.size % 2 == 0 ? "oneDNN centres even LRN windows differently" : "";
  }
  return "";
}

void plan_norm(const NormCase& n, dnn::Handle& h, bool anchor, Plan& p) {
  const DType dt = n.xd.dtype;
  const dnn::TensorDesc& xd = n.xd;
  const bool backward = n.prop == onednn::NormProp::kBackward;
  const bool lrn = n.kind == NormKind::kLrn;
  p.bandwidth = true;
  p.tolerance = tolerance(dt);
  p.work = (backward ? 3 : 2) * bytes(dt, xd.numel());
  const void* x = p.random(dt, xd.span(), "x");
  auto f32 = [&](std::int64_t count, const char* what, float lo, float hi) {
    return static_cast<float*>(p.random(DType::kF32, count, what, lo, hi));
  };
  auto zeros = [&](std::int64_t count, const char* what) {
    auto* v = static_cast<float*>(p.alloc(DType::kF32, count, what));
    std::fill(v, v + count, 0.0f);
    return v;
  };
  float* scale = lrn ? nullptr : f32(n.params, "scale", 0.5f, 1.5f);
  float* bias = lrn ? nullptr : f32(n.params, "bias", -0.5f, 0.5f);
  // Inference statistics, or the running statistics training updates.
  float* rmean = nullptr;
  float* rvar = nullptr;
  if (n.kind == NormKind::kBatch && (n.running || n.prop == onednn::NormProp::kForwardInference)) {
    rmean = f32(n.params, "mean", -0.5f, 0.5f);
    rvar = f32(n.params, "variance", 0.5f, 1.5f);
  }
  float* mean = lrn ? nullptr : zeros(n.stats, "saved mean");
  float* invstd = lrn ? nullptr : zeros(n.stats, "saved invstd");
  const std::string gap = norm_anchor_gap(n);
  const bool use_anchor = anchor && gap.empty();
  if (anchor && !gap.empty()) p.anchor_missing = gap;

  // oneDNN sees a layer norm as [leading, normalised] (the tensor is row-major here).
  auto anchor_tensor = [&](const void* data) {
    onednn::Tensor t = onednn::tensor(xd, data);
    if (n.kind == NormKind::kLayer) {
      const std::int64_t inner = n.params, outer = xd.numel() / std::max<std::int64_t>(inner, 1);
      t.dims = {outer, inner};
      t.strides = {inner, 1};
    }
    return t;
  };
  if (!backward) {
    void* y = p.alloc(dt, xd.span(), "y");
    p.tessera = [&h, n, x, scale, bias, rmean, rvar, mean, invstd, y] {
      return norm_forward(h, n, x, scale, bias, rmean, rvar, mean, invstd, y);
    };
    if (!use_anchor) return;
    void* ya = p.alloc(dt, xd.span(), "oneDNN's y");
    p.check("y", y, ya, dt, xd.span());
    if (lrn) {
      onednn::LrnSpec spec;
      spec.desc = n.lrn;
      spec.x = onednn::tensor(xd, x), spec.y = onednn::tensor(xd, ya);
      return set_anchor(p, onednn::make_lrn(spec));
    }
    onednn::NormSpec spec;
    spec.layer = n.kind == NormKind::kLayer;
    spec.prop = n.prop;
    spec.epsilon = n.eps;
    spec.x = anchor_tensor(x), spec.y = anchor_tensor(ya);
    spec.scale = f32_vector(scale, n.params), spec.shift = f32_vector(bias, n.params);
    if (n.prop == onednn::NormProp::kForwardInference) {
      spec.mean = f32_vector(rmean, n.params), spec.variance = f32_vector(rvar, n.params);
    } else {
      spec.mean = f32_vector(nullptr, n.stats), spec.variance = f32_vector(nullptr, n.stats);
    }
    return set_anchor(p, onednn::make_norm(spec));
  }
  // Backward reads the statistics of a forward pass over x (untimed).
  void* y = p.alloc(dt, xd.span(), "y");
  if (!lrn) {
    NormCase fwd = n;
    fwd.prop = onednn::NormProp::kForwardTraining;
    check_status(norm_forward(h, fwd, x, scale, bias, nullptr, nullptr, mean, invstd, y));
  }
  const void* dy = p.random(dt, xd.span(), "dy");
  void* dx = p.alloc(dt, xd.span(), "dx");
  float* dscale = lrn ? nullptr : zeros(n.params, "dscale");
  float* dbias = lrn ? nullptr : zeros(n.params, "dbias");
  p.tessera = [&h, n, x, dy, scale, mean, invstd, dx, dscale, dbias] {
    return norm_backward(h, n, x, dy, scale, mean, invstd, dx, dscale, dbias);
  };
  if (!use_anchor) return;
  void* dxa = p.alloc(dt, xd.span(), "oneDNN's dx");
  p.check("dx", dx, dxa, dt, xd.span());
  if (lrn) {
    onednn::LrnSpec spec;
    spec.backward = true;
    spec.desc = n.lrn;
    spec.x = onednn::tensor(xd, x), spec.dy = onednn::tensor(xd, dy);
    spec.dx = onednn::tensor(xd, dxa);
    return set_anchor(p, onednn::make_lrn(spec));
  }
  // oneDNN takes the variance: invstd = 1 / sqrt(var + eps).
  float* var = zeros(n.stats, "variance");
  for (std::int64_t i = 0; i < n.stats; ++i)
    var[i] = static_cast<float>(1.0 / (double{invstd[i]} * invstd[i]) - n.eps);
  float* dscale_a = zeros(n.params, "oneDNN's dscale");
  float* dbias_a = zeros(n.params, "oneDNN's dbias");
  p.check("dscale", dscale, dscale_a, DType::kF32, n.params);
  p.check("dbias", dbias, dbias_a, DType::kF32, n.params);
  onednn::NormSpec spec;
  spec.layer = n.kind == NormKind::kLayer;
  spec.prop = n.prop;
  spec.epsilon = n.eps;
  spec.x = anchor_tensor(x), spec.dy = anchor_tensor(dy), spec.dx = anchor_tensor(dxa);
  spec.scale = f32_vector(scale, n.params), spec.shift = f32_vector(bias, n.params);
  spec.mean = f32_vector(mean, n.stats);
  spec.variance = f32_vector(var, n.stats);
  spec.dscale = f32_vector(dscale_a, n.params), spec.dshift = f32_vector(dbias_a, n.params);
  set_anchor(p, onednn::make_norm(spec));
}

}  // namespace

Case norm_case(const OpArgs& a) {
  const std::string kind = a.kind.empty() ? "batch" : a.kind;
  NormCase n;
  std::set<std::string> takes = {"--kind", "--dims", "--layout", "--dtype", "--dir", "--strided"};
  if (kind == "batch") {
    n.kind = NormKind::kBatch;
    takes.insert({"--mode", "--eps", "--momentum", "--running"});
  } else if (kind == "layer") {
    n.kind = NormKind::kLayer;
    takes.insert({"--axis", "--eps"});
  } else if (kind == "group") {
    n.kind = NormKind::kGroup;
    takes.insert({"--groups", "--eps"});
  } else if (kind == "instance") {
    n.kind = NormKind::kInstance;
    takes.insert("--eps");
  } else if (kind == "lrn") {
    n.kind = NormKind::kLrn;
    takes.insert({"--lrn-mode", "--mode", "--size", "--alpha", "--beta", "--k"});
  } else {
    bad("--kind: '" + kind + "' is not batch, layer, group, instance or lrn");
  }
  a.only("norm --kind " + kind, takes);
  const Shape s = parse_shape(a, n.kind == NormKind::kLayer ? 1 : 2);
  n.xd = s.desc();
  n.eps = a.eps;
  if (!(n.eps >= 0) || !std::isfinite(n.eps)) bad("--eps must be a finite number >= 0");
  const std::int64_t channels = s.dims[1 % s.dims.size()];
  std::int64_t spatial = 1;
  for (std::size_t i = 2; i < s.dims.size(); ++i) spatial *= s.dims[i];
  std::string cmd = "tessera bench dnn norm --kind " + kind;
  std::string extra;
  json args = {{"kind", kind}, {"dims", s.dims}, {"layout", dnn::layout_name(s.layout)}};
  if (n.kind == NormKind::kBatch) {
    if (a.dir == "fwd-training" || a.dir == "fwd")
      n.prop = onednn::NormProp::kForwardTraining;
    else if (a.dir == "fwd-inference")
      n.prop = onednn::NormProp::kForwardInference;
    else if (a.dir == "bwd")
      n.prop = onednn::NormProp::kBackward;
    else
      bad("--dir: '" + a.dir + "' is not fwd-training, fwd-inference or bwd");
  } else {
    n.prop =
        parse_fwd_bwd(a.dir) ? onednn::NormProp::kBackward : onednn::NormProp::kForwardTraining;
  }
  const bool training = n.prop == onednn::NormProp::kForwardTraining;
  const std::string dir = n.kind == NormKind::kBatch
                              ? (training                                        ? "fwd-training"
                                 : n.prop == onednn::NormProp::kForwardInference ? "fwd-inference"
                                                                                 : "bwd")
                              : (training ? "fwd" : "bwd");
  switch (n.kind) {
    case NormKind::kBatch: {
      const std::string mode = a.mode.empty() ? "spatial" : a.mode;
      if (mode == "spatial")
        n.bn_mode = dnn::BatchNormMode::kSpatial;
      else if (mode == "per-activation" || mode == "per_activation")
        n.bn_mode = dnn::BatchNormMode::kPerActivation;
      else
        bad("--mode: '" + mode + "' is not spatial or per-activation");
      n.params = n.bn_mode == dnn::BatchNormMode::kSpatial ? channels : channels * spatial;
      n.stats = n.params;
      n.momentum = a.momentum;
      n.running = a.running;
      cmd += " --mode " +
             std::string(n.bn_mode == dnn::BatchNormMode::kSpatial ? "spatial" : "per-activation");
      if (training)
        extra = " --momentum " + format_number(n.momentum) + (n.running ? " --running" : "");
      args["mode"] = mode;
      break;
    }
    case NormKind::kLayer: {
      const auto rank = static_cast<std::int64_t>(s.dims.size());
      if (a.axis < -rank || a.axis >= rank)
        bad("--axis " + std::to_string(a.axis) + " is outside --dims " + a.dims);
      n.axis = static_cast<int>(a.axis < 0 ? a.axis + rank : a.axis);
      n.params = n.stats = 1;
      for (std::int64_t i = 0; i < rank; ++i)
        (i < n.axis ? n.stats : n.params) *= s.dims[static_cast<std::size_t>(i)];
      cmd += " --axis " + std::to_string(n.axis);
      args["axis"] = n.axis;
      break;
    }
    case NormKind::kGroup:
    case NormKind::kInstance:
      n.groups = n.kind == NormKind::kInstance ? channels : a.groups;
      if (n.groups < 1 || channels % n.groups != 0)
        bad("--groups " + std::to_string(n.groups) + " must divide the " +
            std::to_string(channels) + " channels");
      n.params = channels;
      n.stats = s.dims[0] * n.groups;
      if (n.kind == NormKind::kGroup) cmd += " --groups " + std::to_string(n.groups);
      args["groups"] = n.groups;
      break;
    case NormKind::kLrn: {
      if (!a.mode.empty() && !a.lrn_mode.empty()) bad("give --lrn-mode or --mode, not both");
      const std::string mode = !a.lrn_mode.empty() ? a.lrn_mode
                               : !a.mode.empty()   ? a.mode
                                                   : "across";
      if (mode != "across" && mode != "within")
        bad("--lrn-mode: '" + mode + "' is not across or within");
      n.lrn.mode = mode == "across" ? dnn::LrnMode::kAcrossChannels : dnn::LrnMode::kWithinChannel;
      if (a.size < 1) bad("--size must be >= 1");
      n.lrn.size = a.size;
      if (a.given("--alpha")) n.lrn.alpha = a.alpha;
      if (a.given("--beta")) n.lrn.beta = a.beta;
      if (a.given("--k")) n.lrn.k = a.k;
      cmd += " --lrn-mode " + mode + " --size " + std::to_string(n.lrn.size) + " --alpha " +
             format_number(n.lrn.alpha) + " --beta " + format_number(n.lrn.beta) + " --k " +
             format_number(n.lrn.k);
      args["mode"] = mode;
      args["size"] = n.lrn.size;
      break;
    }
  }
  cmd += shape_flags(s) + " --dir " + dir;
  if (n.kind != NormKind::kLrn && n.prop != onednn::NormProp::kBackward)
    cmd += " --eps " + format_number(n.eps);
  cmd += extra;
  args["dir"] = dir;
  Case c = make_case("norm", s, cmd, kind + " " + shape_text(s), args);
  c.plan = [n](dnn::Handle& h, bool anchor, Plan& p) { plan_norm(n, h, anchor, p); };
  return c;
}

}  // namespace tessera::cli::dnn_bench::ops
