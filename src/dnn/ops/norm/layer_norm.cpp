// Layer norm entry points and fast driver. Rows are the leading indices (dims [0, axis)), each
// normalised over its contiguous block of K elements: packed NCHW (row-major) data for any
// axis, or packed NHWC data with axis <= 1, whose blocks hold the normalised elements in another
// order (the parameters are then gathered into memory order and the gradients scattered back).
//
// Row statistics: moments around the row's first element in f32, flushed to f64 every
// kRowFlush elements. Backward: rows in fixed blocks, each with its own f32 dscale/dbias
// partials, combined in f64 in block order: the same bits for any thread count.
#include <algorithm>

#include "../activation/dense.hpp"
#include "norm.hpp"

namespace tessera::dnn {
namespace norm {
namespace {

// The memory order of the normalised block: order[m] = the logical (parameter) index stored at
// block position m; empty when they agree (row-major data).
std::vector<i64> block_order(const LnProblem& p) {
  if (p.x_desc.is_packed(Layout::kNCHW)) return {};
  // Packed NHWC, axis 0 or 1: block position (n, s, c) holds logical element (n, c, s).
  const i64 c_ = p.x_desc.dims[1], s_ = spatial_size(p.x_desc);
  const i64 lead = p.axis == 0 ? p.x_desc.dims[0] : 1;
  std::vector<i64> order(static_cast<std::size_t>(lead * s_ * c_));
  for (i64 n = 0; n < lead; ++n)
    for (i64 s = 0; s < s_; ++s)
      for (i64 c = 0; c < c_; ++c)
        order[static_cast<std::size_t>((n * s_ + s) * c_ + c)] = (n * c_ + c) * s_ + s;
  return order;
}

std::optional<Layout> block_layout(const LnProblem& p) {
  std::optional<Layout> l;
  if (p.x_desc.is_packed(Layout::kNCHW))
    l = Layout::kNCHW;
  else if (p.x_desc.rank() >= 3 && p.axis <= 1 && p.x_desc.is_packed(Layout::kNHWC))
    l = Layout::kNHWC;
  return l;
}

template <Isa kIsa>
Status accepts(const LnProblem& p) {
  TESSERA_RETURN_IF_ERROR(isa_ok(kIsa));
  const auto l = block_layout(p);
  if (!l)
    return detail::refuse(
        "needs the normalised dims contiguous (packed NCHW, or NHWC with axis "
        "<= 1); x is " +
        p.x_desc.to_string() + ", axis " + std::to_string(p.axis));
  if (!p.y_desc.is_packed(*l) || (p.backward && !p.dx_desc.is_packed(*l)))
    return detail::refuse("needs every tensor packed like x (" + std::string(layout_name(*l)) +
                          ")");
  return Status::ok();
}

template <Isa kIsa>
Status run(Handle& h, const LnProblem& p) {
  const NormKernels& K = kernels_for(kIsa);
  const TensorDesc& xd = p.x_desc;
  i64 rows = 1, k = 1;
  for (int i = 0; i < xd.rank(); ++i)
    (i < p.axis ? rows : k) *= xd.dims[static_cast<std::size_t>(i)];
  const std::vector<i64> order = block_order(p);
  std::vector<float> scale_buf, bias_buf;
  auto gather = [&](const float* v, std::vector<float>& buf) -> const float* {
    if (order.empty() || v == nullptr) return v;
    buf.resize(order.size());
    for (std::size_t m = 0; m < order.size(); ++m) buf[m] = v[order[m]];
    return buf.data();
  };
  const float* scale = gather(p.scale, scale_buf);
  const float* bias = gather(p.bias, bias_buf);
  detail::Staged xs = detail::stage_in(xd, p.x);
  const bool stream = detail::stream_output(xd.numel() * static_cast<i64>(sizeof(float)));
  if (!p.backward) {
    detail::StagedOut ys = detail::stage_out(p.y_desc, p.y, false);
    const float* x = xs.data;
    float* y = ys.data;
    detail::parallel_for(h, 0, rows, std::max<i64>(1, 16384 / k), [&](i64 r0, i64 r1) {
      // Row r is normalised in the same pass that reduces row r + 1.
      double s[2] = {0.0, 0.0};
      K.row_moments(x + r0 * k, k, x[r0 * k], s);
      for (i64 r = r0; r < r1; ++r) {
        const float* xr = x + r * k;
        double mean, var;
        moments_to_stats(xr[0], s[0], s[1], static_cast<double>(k), &mean, &var);
        const double invstd = inv_std(var, p.epsilon);
        double next[2] = {0.0, 0.0};
        K.ln_forward(xr, k, xr[0], static_cast<float>(-(mean - xr[0]) * invstd),
                     static_cast<float>(invstd), scale, bias, y + r * k,
                     r + 1 < r1 ? xr + k : nullptr, next, stream);
        s[0] = next[0];
        s[1] = next[1];
        if (p.mean_out != nullptr) p.mean_out[r] = static_cast<float>(mean);
        if (p.invstd_out != nullptr) p.invstd_out[r] = static_cast<float>(invstd);
      }
      if (stream) K.fence();
    });
    ys.commit();
    return Status::ok();
  }
  detail::Staged dys = detail::stage_in(p.y_desc, p.dy);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const float* x = xs.data;
  const float* dy = dys.data;
  float* dx = dxs.data;
  const bool grads = p.dscale != nullptr || p.dbias != nullptr;
  // Rows per block: at least 8 (the partials stay within a quarter of the tensor), at most 64
  // (f32 partial sums stay accurate), about 16 blocks for small row counts.
  const i64 rpb = std::clamp<i64>((rows + 15) / 16, 8, 64);
  const i64 blocks = (rows + rpb - 1) / rpb;
  std::vector<float> part(grads ? static_cast<std::size_t>(blocks * 2 * k) : 0, 0.0f);
  detail::parallel_for(h, 0, blocks, 1, [&](i64 b0, i64 b1) {
    for (i64 b = b0; b < b1; ++b) {
      float* ds = grads ? part.data() + b * 2 * k : nullptr;
      for (i64 r = b * rpb; r < std::min(rows, (b + 1) * rpb); ++r)
        K.ln_backward(x + r * k, dy + r * k, k, p.mean[r], p.invstd[r], scale, ds,
                      ds != nullptr ? ds + k : nullptr, dx + r * k, stream);
    }
    if (stream) K.fence();
  });
  if (grads) {
    for (i64 m = 0; m < k; ++m) {
      double s1 = 0.0, s2 = 0.0;
      for (i64 b = 0; b < blocks; ++b) {
        s1 += part[static_cast<std::size_t>(b * 2 * k + m)];
        s2 += part[static_cast<std::size_t>(b * 2 * k + k + m)];
      }
      const std::size_t j = order.empty()
                                ? static_cast<std::size_t>(m)
                                : static_cast<std::size_t>(order[static_cast<std::size_t>(m)]);
      if (p.dscale != nullptr) p.dscale[j] = static_cast<float>(s1);
      if (p.dbias != nullptr) p.dbias[j] = static_cast<float>(s2);
    }
  }
  dxs.commit();
  return Status::ok();
}

constexpr detail::Impl<LnProblem> kImpls[] = {
    {"layer_norm_f32_avx512", accepts<Isa::kAvx512>, run<Isa::kAvx512>},
    {"layer_norm_f32_avx2", accepts<Isa::kAvx2>, run<Isa::kAvx2>},
    {"layer_norm_f32_generic", accepts<Isa::kGeneric>, run<Isa::kGeneric>},
    {"layer_norm_ref", detail::accepts_all<LnProblem>, layer_norm_ref},
};

Status check(const std::string& fn, LnProblem& p) {
  const char* yn = p.backward ? "dy" : "y";
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "x", p.x_desc, 1, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_float_dtype(fn, "x", p.x_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, yn, p.y_desc, 1, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, yn, p.y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, yn, p.y_desc));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "dx", p.dx_desc, 1, 8));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, "dx", p.dx_desc));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, "dx", p.dx_desc));
  }
  const int r = p.x_desc.rank();
  if (p.axis < -r || p.axis >= r)
    return invalid_argument(fn + ": axis " + std::to_string(p.axis) + " is outside [" +
                            std::to_string(-r) + ", " + std::to_string(r) + ") for x " +
                            p.x_desc.to_string());
  if (p.axis < 0) p.axis += r;
  const bool work = p.x_desc.numel() > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", p.x, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "scale", p.scale, work));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", p.dy, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dx", p.dx, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "mean", p.mean, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "invstd", p.invstd, work));
  } else {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", p.y, work));
    TESSERA_RETURN_IF_ERROR(check_epsilon(fn, p.epsilon));
  }
  TESSERA_VLOG(kBench) << "tessera bench dnn norm --kind layer --axis " << p.axis << " --dims "
                       << detail::dims_string(p.x_desc.dims, 'x') << " --layout "
                       << layout_of(p.x_desc) << " --dtype " << dtype_name(p.x_desc.dtype)
                       << " --dir " << (p.backward ? "bwd" : "fwd")
                       << (p.backward ? std::string() : " --eps " + std::to_string(p.epsilon));
  return Status::ok();
}

Status dispatch(Handle& h, const std::string& fn, LnProblem& p) {
  TESSERA_RETURN_IF_ERROR(check(fn, p));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  if (p.x_desc.numel() == 0) {
    // Gradients of parameters no element uses are zero.
    if (p.backward) {
      i64 k = 1;
      for (int i = p.axis; i < p.x_desc.rank(); ++i)
        k *= p.x_desc.dims[static_cast<std::size_t>(i)];
      for (i64 j = 0; j < k; ++j) {
        if (p.dscale != nullptr) p.dscale[j] = 0.0f;
        if (p.dbias != nullptr) p.dbias[j] = 0.0f;
      }
    }
    return Status::ok();
  }
  return detail::select_impl<LnProblem>(fn.c_str(), kImpls, p).run(h, p);
}

}  // namespace
}  // namespace norm

Status layer_norm_forward(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                          const float* scale, const float* bias, double epsilon,
                          const TensorDesc& y_desc, void* y, float* mean, float* invstd) {
  norm::LnProblem p;
  p.axis = axis;
  p.x_desc = x_desc;
  p.y_desc = y_desc;
  p.x = x;
  p.y = y;
  p.scale = scale;
  p.bias = bias;
  p.epsilon = epsilon;
  p.mean_out = mean;
  p.invstd_out = invstd;
  return norm::dispatch(h, "layer_norm_forward", p);
}

Status layer_norm_backward(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                           const TensorDesc& dy_desc, const void* dy, const float* scale,
                           const float* mean, const float* invstd, const TensorDesc& dx_desc,
                           void* dx, float* dscale, float* dbias) {
  norm::LnProblem p;
  p.backward = true;
  p.axis = axis;
  p.x_desc = x_desc;
  p.y_desc = dy_desc;
  p.dx_desc = dx_desc;
  p.x = x;
  p.dy = dy;
  p.dx = dx;
  p.scale = scale;
  p.mean = mean;
  p.invstd = invstd;
  p.dscale = dscale;
  p.dbias = dbias;
  return norm::dispatch(h, "layer_norm_backward", p);
}

}  // namespace tessera::dnn
