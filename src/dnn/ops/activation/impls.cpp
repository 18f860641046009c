// Public entry points of the activations, PReLU and CReLU: argument checks, the replay line,
// then the first implementation of each ordered list that accepts the problem. The fast
// paths need x and the outputs dense and laid out alike (any packed dim order: NCHW, NHWC,
// ...) and treat them as flat arrays split into fixed units (dense.hpp), so results never
// depend on the thread count; anything else runs on the reference.
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include <tessera/core/cpu.hpp>

#include "../../common.hpp"
#include "dense.hpp"
#include "kernels.hpp"
#include "ref.hpp"

namespace tessera::dnn {

int act_kernels::bf16_column(const Kernels& t) {
  return &t == &kAvx512 && cpu_info().usable(CpuFeature::kAvx512bf16) ? kBF16Native : kBF16;
}

namespace {

namespace ak = act_kernels;
using detail::at_element;
using detail::refuse;
using i64 = std::int64_t;

static_assert(static_cast<int>(ActKind::kIdentity) == ak::kIdentity &&
                  static_cast<int>(ActKind::kRelu) == ak::kRelu &&
                  static_cast<int>(ActKind::kLeakyRelu) == ak::kLeakyRelu &&
                  static_cast<int>(ActKind::kElu) == ak::kElu &&
                  static_cast<int>(ActKind::kSelu) == ak::kSelu &&
                  static_cast<int>(ActKind::kCelu) == ak::kCelu &&
                  static_cast<int>(ActKind::kSigmoid) == ak::kSigmoid &&
                  static_cast<int>(ActKind::kHardSigmoid) == ak::kHardSigmoid &&
                  static_cast<int>(ActKind::kTanh) == ak::kTanh &&
                  static_cast<int>(ActKind::kGeluErf) == ak::kGeluErf &&
                  static_cast<int>(ActKind::kGeluTanh) == ak::kGeluTanh &&
                  static_cast<int>(ActKind::kSilu) == ak::kSilu &&
                  static_cast<int>(ActKind::kMish) == ak::kMish &&
                  static_cast<int>(ActKind::kSoftplus) == ak::kSoftplus &&
                  static_cast<int>(ActKind::kSoftsign) == ak::kSoftsign &&
                  static_cast<int>(ActKind::kClip) == ak::kClip &&
                  static_cast<int>(ActKind::kHardSwish) == ak::kHardSwish &&
                  static_cast<int>(ActKind::kAbs) == ak::kAbs && ak::kNumKinds == 18,
              "act_kernels::Kind mirrors ActKind");

// ---- argument checks ------------------------------------------------------------------------
Status check_activation(const std::string& fn, const Activation& act) {
  const int k = static_cast<int>(act.kind);
  if (k < 0 || k >= ak::kNumKinds)
    return invalid_argument(fn + ": unknown activation kind " + std::to_string(k));
  if (std::isnan(act.alpha) || std::isnan(act.beta))
    return invalid_argument(fn + ": " + std::string(act_name(act.kind)) +
                            " parameters must not be NaN (alpha " + std::to_string(act.alpha) +
                            ", beta " + std::to_string(act.beta) + ")");
  if (act.kind == ActKind::kCelu && act.alpha == 0.0f)
    return invalid_argument(fn + ": celu alpha must be non-zero (y = alpha*expm1(x/alpha))");
  return Status::ok();
}

// ---- replay lines ---------------------------------------------------------------------------
std::string shortest(float v) {  // the shortest text that reads back as v
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
std::string act_params_flags(const Activation& act) {
  const Activation def = Activation::make(act.kind);
  std::string s;
  if (act.alpha != def.alpha) s += " --alpha " + shortest(act.alpha);
  if (act.beta != def.beta) s += " --beta " + shortest(act.beta);
  return s;
}
void log_bench(const Handle& h, std::string_view kind, const TensorDesc& x, const char* dir,
               const std::string& extra) {
  TESSERA_VLOG(kBench) << "tessera bench dnn act --kind " << kind << " --dims " << detail::dims_x(x)
                       << " --dtype " << dtype_name(x.dtype) << detail::layout_flag(x) << extra
                       << " --dir " << dir << " --threads " << detail::max_threads(h);
}

// ---- elementwise activation -------------------------------------------------------------------
struct ActCall {
  const Activation& act;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc* dy;  // backward only
  const void* dyp;
  const TensorDesc& out;  // y or dx
  void* outp;
};

template <Isa kNeeds>
Status act_flat_accepts(const ActCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  if (!detail::same_dense_layout(c.x, c.out) ||
      (c.dy != nullptr && !detail::same_dense_layout(c.x, *c.dy)))
    return refuse(c.dy ? "x, dy and dx are not all packed alike"
                       : "x and y are not both packed alike");
  return Status::ok();
}

template <const ak::Kernels* kK>
Status act_flat_run(Handle& h, const ActCall& c) {
  const int s = detail::storage_index(c.x.dtype);
  const i64 eb = detail::storage_bytes(c.x.dtype);
  const int kind = static_cast<int>(c.act.kind);
  const ak::Params p{c.act.alpha, c.act.beta, detail::stream_output(c.x.numel() * eb)};
  const ak::FwdFn fwd = kK->fwd[kind][s == ak::kBF16 ? ak::bf16_column(*kK) : s];
  const ak::BwdFn bwd = kK->bwd[kind][s];
  detail::for_each_unit(h, 1, c.x.numel(), [&](i64, i64, i64 b, i64 e) {
    if (c.dy != nullptr)
      bwd(p, e - b, at_element(c.xp, b, eb), at_element(c.dyp, b, eb), at_element(c.outp, b, eb));
    else
      fwd(p, e - b, at_element(c.xp, b, eb), at_element(c.outp, b, eb));
  });
  return Status::ok();
}

Status act_ref_run(Handle&, const ActCall& c) {
  if (c.dy != nullptr)
    ref::activation_backward(c.act, c.x, c.xp, *c.dy, c.dyp, c.out, c.outp);
  else
    ref::activation_forward(c.act, c.x, c.xp, c.out, c.outp);
  return Status::ok();
}

constexpr detail::Impl<ActCall> kActImpls[] = {
    {"act_flat_avx512", &act_flat_accepts<Isa::kAvx512>, &act_flat_run<&ak::kAvx512>},
    {"act_flat_avx2", &act_flat_accepts<Isa::kAvx2>, &act_flat_run<&ak::kAvx2>},
    {"act_flat_generic", &act_flat_accepts<Isa::kGeneric>, &act_flat_run<&ak::kGeneric>},
    {"act_ref", detail::accepts_all<ActCall>, &act_ref_run},
};

// ---- PReLU ----------------------------------------------------------------------------------
struct PreluCall {
  const TensorDesc& x;
  const void* xp;
  const float* slope;
  i64 slope_count;
  const TensorDesc* dy;  // backward only
  const void* dyp;
  const TensorDesc& out;  // y or dx
  void* outp;
  float* dslope;  // backward, optional
};

template <Isa kNeeds>
Status prelu_dense_accepts(const PreluCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  if (!detail::same_dense_layout(c.x, c.out) ||
      (c.dy != nullptr && !detail::same_dense_layout(c.x, *c.dy)))
    return refuse(c.dy ? "x, dy and dx are not all packed alike"
                       : "x and y are not both packed alike");
  return Status::ok();
}

// The work as segments sharing one slope (channel dim outside the innermost: planes of
// `inner` elements, or the whole tensor for a shared slope) or as rows of channels (channel
// dim innermost). Slope-gradient partial sums are kept per unit (or per row block and
// channel) in f64 and added in a fixed order afterwards.
template <const ak::Kernels* kK>
Status prelu_dense_run(Handle& h, const PreluCall& c) {
  const int s = detail::storage_index(c.x.dtype);
  const i64 eb = detail::storage_bytes(c.x.dtype);
  const detail::AxisSplit sp = detail::split_at_axis(c.x, 1);
  const bool shared = c.slope_count == 1 || sp.len == 1;
  const bool rows = !shared && sp.inner == 1;
  const i64 channels = sp.len;
  // One slope per segment: segments of `seg_len` elements, slope index seg % channels.
  const i64 segments = shared ? 1 : sp.outer * channels;
  const i64 seg_len = shared ? c.x.numel() : sp.inner;
  const bool backward = c.dy != nullptr;

  if (rows) {
    // Rows of `channels` elements; row blocks fixed by sizes for the slope-gradient sums.
    const i64 rows_per_block = std::max<i64>(1, detail::kUnitElements / channels);
    const i64 blocks = (sp.outer + rows_per_block - 1) / rows_per_block;
    double* partial = nullptr;
    if (backward) {
      TESSERA_ASSIGN_OR_RETURN(
          void* ws,
          detail::workspace(h, static_cast<std::size_t>(blocks * channels) * sizeof(double)));
      partial = static_cast<double*>(ws);
    }
    detail::parallel_for(h, 0, blocks, 1, [&](i64 b0, i64 b1) {
      for (i64 b = b0; b < b1; ++b) {
        const i64 r0 = b * rows_per_block, r1 = std::min(sp.outer, r0 + rows_per_block);
        if (!backward) {
          for (i64 r = r0; r < r1; ++r)
            kK->prelu_fwd_row[s](channels, c.slope, at_element(c.xp, r * channels, eb),
                                 at_element(c.outp, r * channels, eb));
          continue;
        }
        double* acc = partial + b * channels;
        std::fill(acc, acc + channels, 0.0);
        for (i64 r = r0; r < r1; ++r)
          kK->prelu_bwd_row[s](channels, c.slope, at_element(c.xp, r * channels, eb),
                               at_element(c.dyp, r * channels, eb),
                               at_element(c.outp, r * channels, eb), acc);
      }
    });
    if (backward && c.dslope != nullptr)
      for (i64 ch = 0; ch < channels; ++ch) {
        double sum = 0.0;
        for (i64 b = 0; b < blocks; ++b) sum += partial[b * channels + ch];
        c.dslope[ch] = static_cast<float>(sum);
      }
    return Status::ok();
  }

  const i64 per = detail::units_per_segment(seg_len);
  double* partial = nullptr;
  if (backward) {
    TESSERA_ASSIGN_OR_RETURN(
        void* ws, detail::workspace(h, static_cast<std::size_t>(segments * per) * sizeof(double)));
    partial = static_cast<double*>(ws);
  }
  detail::for_each_unit(h, segments, seg_len, [&](i64 u, i64 seg, i64 b, i64 e) {
    const float slope = c.slope[shared ? 0 : seg % channels];
    const i64 at = seg * seg_len + b;
    if (backward)
      partial[u] = kK->prelu_bwd_one[s](e - b, slope, at_element(c.xp, at, eb),
                                        at_element(c.dyp, at, eb), at_element(c.outp, at, eb));
    else
      kK->prelu_fwd_one[s](e - b, slope, at_element(c.xp, at, eb), at_element(c.outp, at, eb));
  });
  if (backward && c.dslope != nullptr) {
    std::vector<double> sum(static_cast<std::size_t>(c.slope_count), 0.0);
    for (i64 seg = 0; seg < segments; ++seg)
      for (i64 j = 0; j < per; ++j)
        sum[static_cast<std::size_t>(shared ? 0 : seg % channels)] += partial[seg * per + j];
    for (i64 ch = 0; ch < c.slope_count; ++ch)
      c.dslope[ch] = static_cast<float>(sum[static_cast<std::size_t>(ch)]);
  }
  return Status::ok();
}

Status prelu_ref_run(Handle&, const PreluCall& c) {
  if (c.dy != nullptr)
    ref::prelu_backward(c.x, c.xp, c.slope, c.slope_count, *c.dy, c.dyp, c.out, c.outp, c.dslope);
  else
    ref::prelu_forward(c.x, c.xp, c.slope, c.slope_count, c.out, c.outp);
  return Status::ok();
}

constexpr detail::Impl<PreluCall> kPreluImpls[] = {
    {"prelu_dense_avx512", &prelu_dense_accepts<Isa::kAvx512>, &prelu_dense_run<&ak::kAvx512>},
    {"prelu_dense_avx2", &prelu_dense_accepts<Isa::kAvx2>, &prelu_dense_run<&ak::kAvx2>},
    {"prelu_dense_generic", &prelu_dense_accepts<Isa::kGeneric>, &prelu_dense_run<&ak::kGeneric>},
    {"prelu_ref", detail::accepts_all<PreluCall>, &prelu_ref_run},
};

Status check_slope(const std::string& fn, const TensorDesc& x, const float* slope,
                   i64 slope_count) {
  if (slope_count != 1 && slope_count != x.dims[1])
    return invalid_argument(fn + ": slope_count = " + std::to_string(slope_count) +
                            " must be 1 or x's channel count " + std::to_string(x.dims[1]));
  return detail::check_ptr(fn, "slope", slope, x.numel() > 0);
}

// ---- CReLU ----------------------------------------------------------------------------------
struct CreluCall {
  const TensorDesc& x;
  const void* xp;
  const TensorDesc* dy;  // backward only
  const void* dyp;
  const TensorDesc& out;  // y (forward) or dx (backward)
  void* outp;
};

template <Isa kNeeds>
Status crelu_dense_accepts(const CreluCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  if (c.dy == nullptr) {
    if (!detail::same_order_channel_doubled(c.x, c.out))
      return refuse("x and y are not both packed in the same dim order");
  } else if (!detail::same_dense_layout(c.x, c.out) ||
             !detail::same_order_channel_doubled(c.x, *c.dy)) {
    return refuse("x, dy and dx are not all packed in the same dim order");
  }
  return Status::ok();
}

// Per outer index, the C*inner elements of x map to the first and second C*inner elements of
// the 2C*inner block of y (dy).
template <const ak::Kernels* kK>
Status crelu_dense_run(Handle& h, const CreluCall& c) {
  const int s = detail::storage_index(c.x.dtype);
  const i64 eb = detail::storage_bytes(c.x.dtype);
  const TensorDesc& wide = c.dy != nullptr ? *c.dy : c.out;
  const i64 block = c.x.dims[1] * wide.strides[1];
  const i64 outer = c.x.numel() / block;
  detail::for_each_unit(h, outer, block, [&](i64, i64 o, i64 b, i64 e) {
    const i64 at = o * block + b, wide_at = 2 * o * block + b;
    if (c.dy != nullptr)
      kK->crelu_bwd[s](e - b, at_element(c.xp, at, eb), at_element(c.dyp, wide_at, eb),
                       at_element(c.dyp, wide_at + block, eb), at_element(c.outp, at, eb));
    else
      kK->crelu_fwd[s](e - b, at_element(c.xp, at, eb), at_element(c.outp, wide_at, eb),
                       at_element(c.outp, wide_at + block, eb));
  });
  return Status::ok();
}

Status crelu_ref_run(Handle&, const CreluCall& c) {
  if (c.dy != nullptr)
    ref::crelu_backward(c.x, c.xp, *c.dy, c.dyp, c.out, c.outp);
  else
    ref::crelu_forward(c.x, c.xp, c.out, c.outp);
  return Status::ok();
}

constexpr detail::Impl<CreluCall> kCreluImpls[] = {
    {"crelu_dense_avx512", &crelu_dense_accepts<Isa::kAvx512>, &crelu_dense_run<&ak::kAvx512>},
    {"crelu_dense_avx2", &crelu_dense_accepts<Isa::kAvx2>, &crelu_dense_run<&ak::kAvx2>},
    {"crelu_dense_generic", &crelu_dense_accepts<Isa::kGeneric>, &crelu_dense_run<&ak::kGeneric>},
    {"crelu_ref", detail::accepts_all<CreluCall>, &crelu_ref_run},
};

Status check_doubled(const std::string& fn, const TensorDesc& x, const char* name,
                     const TensorDesc& wide) {
  std::vector<i64> expect = x.dims;
  expect[1] *= 2;
  if (wide.dims == expect) return Status::ok();
  return invalid_argument(fn + ": " + name + " dims [" + detail::dims_string(wide.dims) +
                          "] must be x's with dim 1 doubled: [" + detail::dims_string(expect) +
                          "]");
}

}  // namespace

Status activation_forward(Handle& h, const Activation& act, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& y_desc, void* y) {
  const std::string fn = "activation_forward";
  TESSERA_RETURN_IF_ERROR(check_activation(fn, act));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor_args(fn, 1, {{"x", x_desc, x}, {"y", y_desc, y}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "activation_forward"));
  log_bench(h, act_name(act.kind), x_desc, "fwd", act_params_flags(act));
  if (x_desc.numel() == 0) return Status::ok();
  const ActCall c{act, x_desc, x, nullptr, nullptr, y_desc, y};
  return detail::run_first_accepting(h, "activation_forward", kActImpls, c);
}

Status activation_backward(Handle& h, const Activation& act, const TensorDesc& x_desc,
                           const void* x, const TensorDesc& dy_desc, const void* dy,
                           const TensorDesc& dx_desc, void* dx) {
  const std::string fn = "activation_backward";
  TESSERA_RETURN_IF_ERROR(check_activation(fn, act));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor_args(
      fn, 1, {{"x", x_desc, x}, {"dy", dy_desc, dy}, {"dx", dx_desc, dx}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "activation_backward"));
  log_bench(h, act_name(act.kind), x_desc, "bwd", act_params_flags(act));
  if (x_desc.numel() == 0) return Status::ok();
  const ActCall c{act, x_desc, x, &dy_desc, dy, dx_desc, dx};
  return detail::run_first_accepting(h, "activation_backward", kActImpls, c);
}

Status prelu_forward(Handle& h, const TensorDesc& x_desc, const void* x, const float* slope,
                     std::int64_t slope_count, const TensorDesc& y_desc, void* y) {
  const std::string fn = "prelu_forward";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor_args(fn, 2, {{"x", x_desc, x}, {"y", y_desc, y}}));
  TESSERA_RETURN_IF_ERROR(check_slope(fn, x_desc, slope, slope_count));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "prelu_forward"));
  log_bench(h, "prelu", x_desc, "fwd", " --slopes " + std::to_string(slope_count));
  if (x_desc.numel() == 0) return Status::ok();
  const PreluCall c{x_desc, x, slope, slope_count, nullptr, nullptr, y_desc, y, nullptr};
  return detail::run_first_accepting(h, "prelu_forward", kPreluImpls, c);
}

Status prelu_backward(Handle& h, const TensorDesc& x_desc, const void* x, const float* slope,
                      std::int64_t slope_count, const TensorDesc& dy_desc, const void* dy,
                      const TensorDesc& dx_desc, void* dx, float* dslope) {
  const std::string fn = "prelu_backward";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor_args(
      fn, 2, {{"x", x_desc, x}, {"dy", dy_desc, dy}, {"dx", dx_desc, dx}}));
  TESSERA_RETURN_IF_ERROR(check_slope(fn, x_desc, slope, slope_count));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "prelu_backward"));
  log_bench(h, "prelu", x_desc, "bwd", " --slopes " + std::to_string(slope_count));
  if (x_desc.numel() == 0) {
    if (dslope != nullptr) std::fill(dslope, dslope + slope_count, 0.0f);
    return Status::ok();
  }
  const PreluCall c{x_desc, x, slope, slope_count, &dy_desc, dy, dx_desc, dx, dslope};
  return detail::run_first_accepting(h, "prelu_backward", kPreluImpls, c);
}

Status crelu_forward(Handle& h, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                     void* y) {
  const std::string fn = "crelu_forward";
  TESSERA_RETURN_IF_ERROR(
      detail::check_tensor_args(fn, 2, {{"x", x_desc, x}, {"y", y_desc, y, false}}));
  TESSERA_RETURN_IF_ERROR(check_doubled(fn, x_desc, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "crelu_forward"));
  log_bench(h, "crelu", x_desc, "fwd", "");
  if (x_desc.numel() == 0) return Status::ok();
  const CreluCall c{x_desc, x, nullptr, nullptr, y_desc, y};
  return detail::run_first_accepting(h, "crelu_forward", kCreluImpls, c);
}

Status crelu_backward(Handle& h, const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                      const void* dy, const TensorDesc& dx_desc, void* dx) {
  const std::string fn = "crelu_backward";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor_args(
      fn, 2, {{"x", x_desc, x}, {"dy", dy_desc, dy, false}, {"dx", dx_desc, dx}}));
  TESSERA_RETURN_IF_ERROR(check_doubled(fn, x_desc, "dy", dy_desc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "crelu_backward"));
  log_bench(h, "crelu", x_desc, "bwd", "");
  if (x_desc.numel() == 0) return Status::ok();
  const CreluCall c{x_desc, x, &dy_desc, dy, dx_desc, dx};
  return detail::run_first_accepting(h, "crelu_backward", kCreluImpls, c);
}

}  // namespace tessera::dnn
