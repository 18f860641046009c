// Group norm (and instance norm: groups == C) entry points and fast drivers.
//
// Statistics per (n, group) come from per-(n, channel) moments around the channel's first
// element (f32 sums flushed to f64: per segment of kRowFlush elements for spatial-inner data,
// per block of rows for channels-inner data), combined over the group's channels with the
// parallel-variance formula in f64, so channels with different means do not cancel. Work is
// split over (n, group) or (n, row block); partial sums combine in a fixed order, so results
// are the same bits for any thread count.
#include <algorithm>

#include "../activation/dense.hpp"
#include "norm.hpp"

namespace tessera::dnn {
namespace norm {
namespace {

i64 row_block(i64 cols) {
  return std::clamp<i64>(16384 / std::max<i64>(cols, 1), 16, 256);
}

struct GroupStats {
  double mean, invstd;
};

// Combines per-channel (mean, M2) of `cg` channels with `per` elements each.
GroupStats combine(const double* mean_c, const double* m2_c, i64 cg, i64 per, double eps) {
  double mean = 0.0;
  for (i64 c = 0; c < cg; ++c) mean += mean_c[c];
  mean /= static_cast<double>(cg);
  double m2 = 0.0;
  for (i64 c = 0; c < cg; ++c) {
    const double d = mean_c[c] - mean;
    m2 += m2_c[c] + static_cast<double>(per) * d * d;
  }
  return {mean, inv_std(m2 / static_cast<double>(cg * per), eps)};
}

// Channel moments around `shift` -> (mean, M2).
void channel_moments(double shift, double s1, double s2, i64 per, double* mean, double* m2) {
  const double n = static_cast<double>(per);
  *mean = shift + s1 / n;
  const double v = s2 - s1 * s1 / n;
  *m2 = v > 0.0 ? v : 0.0;
}

struct Grad {  // dx = a*dy + b*(x - m) + c of one channel, from its sums and its group's.
  float a, b, m, c;
};
Grad grad_coefficients(float scale, double mean, double invstd, double s1, double s2, i64 count) {
  const double n = static_cast<double>(count);
  return {static_cast<float>(invstd * scale), static_cast<float>(-invstd * invstd * s2 / n),
          static_cast<float>(mean), static_cast<float>(-invstd * s1 / n)};
}

template <Isa kIsa>
Status accepts(const GnProblem& p) {
  TESSERA_RETURN_IF_ERROR(isa_ok(kIsa));
  if (!common_arrangement({&p.x_desc, &p.y_desc, p.backward ? &p.dx_desc : nullptr}))
    return detail::refuse("needs every tensor packed alike (NCHW or NHWC); x is " +
                          p.x_desc.to_string());
  return Status::ok();
}

// Spatial-inner: one work item per (n, group), its segments reduced and normalised in cache.
void run_spatial_inner(Handle& h, const GnProblem& p, const NormKernels& K, const float* x,
                       const float* dy, float* out) {
  const i64 n_ = p.x_desc.dims[0], c_ = p.x_desc.dims[1], sp = spatial_size(p.x_desc);
  const i64 g_ = p.groups, cg = c_ / g_;
  const bool stream = detail::stream_output(p.x_desc.numel() * static_cast<i64>(sizeof(float)));
  std::vector<double> dsc(p.backward ? static_cast<std::size_t>(n_ * c_) : 0);
  std::vector<double> dbi(dsc.size());
  detail::parallel_for(h, 0, n_ * g_, 1, [&](i64 i0, i64 i1) {
    std::vector<double> mean_c(static_cast<std::size_t>(cg)), m2_c(mean_c.size());
    for (i64 i = i0; i < i1; ++i) {
      const i64 n = i / g_, c0 = (i % g_) * cg;
      const i64 base = (n * c_ + c0) * sp;
      if (!p.backward) {
        for (i64 c = 0; c < cg; ++c) {
          const float* xc = x + base + c * sp;
          double s[2] = {0.0, 0.0};
          K.row_moments(xc, sp, xc[0], s);
          channel_moments(xc[0], s[0], s[1], sp, &mean_c[static_cast<std::size_t>(c)],
                          &m2_c[static_cast<std::size_t>(c)]);
        }
        const GroupStats st = combine(mean_c.data(), m2_c.data(), cg, sp, p.epsilon);
        if (p.mean_out != nullptr) p.mean_out[i] = static_cast<float>(st.mean);
        if (p.invstd_out != nullptr) p.invstd_out[i] = static_cast<float>(st.invstd);
        for (i64 c = 0; c < cg; ++c) {
          const float* xc = x + base + c * sp;
          const double a = p.scale[c0 + c] * st.invstd;
          K.row_affine(xc, sp, xc[0], static_cast<float>(a),
                       static_cast<float>(p.bias[c0 + c] - (st.mean - xc[0]) * a),
                       out + base + c * sp, stream);
        }
        continue;
      }
      const double mean = p.mean[i], invstd = p.invstd[i];
      double s1 = 0.0, s2 = 0.0;
      for (i64 c = 0; c < cg; ++c) {
        double s[2] = {0.0, 0.0};
        K.row_dot(x + base + c * sp, dy + base + c * sp, sp, p.mean[i], s);
        const auto nc = static_cast<std::size_t>(n * c_ + c0 + c);
        dbi[nc] = s[0];
        dsc[nc] = s[1] * invstd;
        s1 += p.scale[c0 + c] * s[0];
        s2 += p.scale[c0 + c] * s[1] * invstd;
      }
      for (i64 c = 0; c < cg; ++c) {
        const Grad g = grad_coefficients(p.scale[c0 + c], mean, invstd, s1, s2, cg * sp);
        const i64 o = base + c * sp;
        K.row_affine2(dy + o, x + o, sp, g.a, g.b, g.m, g.c, out + o, stream);
      }
    }
    if (stream) K.fence();
  });
  if (!p.backward) return;
  for (i64 c = 0; c < c_; ++c) {
    double s = 0.0, b = 0.0;
    for (i64 n = 0; n < n_; ++n) {
      s += dsc[static_cast<std::size_t>(n * c_ + c)];
      b += dbi[static_cast<std::size_t>(n * c_ + c)];
    }
    if (p.dscale != nullptr) p.dscale[c] = static_cast<float>(s);
    if (p.dbias != nullptr) p.dbias[c] = static_cast<float>(b);
  }
}

constexpr i64 kWaveBytes = i64{4} << 20;

// Channels-inner: each image is an S x C matrix. Row blocks of every image are reduced in
// parallel, combined per (n, channel) in block order, then rows are normalised in parallel.
void run_channels_inner(Handle& h, const GnProblem& p, const NormKernels& K, const float* x,
                        const float* dy, float* out) {
  const i64 n_ = p.x_desc.dims[0], c_ = p.x_desc.dims[1], sp = spatial_size(p.x_desc);
  const i64 g_ = p.groups, cg = c_ / g_;
  const i64 rb = row_block(c_), blocks = (sp + rb - 1) / rb;
  const i64 img = sp * c_;
  const auto nc = static_cast<std::size_t>(n_ * c_);
  // Backward centres each channel on its group's mean.
  std::vector<float> center(p.backward ? nc : 0);
  for (i64 i = 0; p.backward && i < n_ * c_; ++i)
    center[static_cast<std::size_t>(i)] = p.mean[(i / c_) * g_ + (i % c_) / cg];
  // Images go in waves of about kWaveBytes, so the normalising pass reads them (and dy) from
  // the cache rather than from memory a second time. Blocks, sums and their order are those
  // of one wave for all images, so the bits do not depend on the waves.
  const i64 img_bytes = img * static_cast<i64>(sizeof(float)) * (p.backward ? 2 : 1);
  const i64 wave = std::clamp<i64>(kWaveBytes / std::max<i64>(img_bytes, 1), 1, n_);
  std::vector<float> part(static_cast<std::size_t>(wave * blocks * 2 * c_));
  std::vector<double> s1(nc, 0.0), s2(nc, 0.0);
  std::vector<float> a(nc), b(nc), m(nc), cc(nc);
  std::vector<double> mean_c(static_cast<std::size_t>(cg)), m2_c(mean_c.size());
  std::vector<double> dsc(static_cast<std::size_t>(c_), 0.0), dbi(dsc.size(), 0.0);
  const i64 grain = std::max<i64>(1, 16384 / c_);
  const i64 chunks = (sp + grain - 1) / grain;
  const bool stream = detail::stream_output(p.x_desc.numel() * static_cast<i64>(sizeof(float)));
  for (i64 n0 = 0; n0 < n_; n0 += wave) {
    const i64 n1 = std::min(n_, n0 + wave);
    detail::parallel_for(h, 0, (n1 - n0) * blocks, 1, [&](i64 i0, i64 i1) {
      for (i64 i = i0; i < i1; ++i) {
        const i64 n = n0 + i / blocks, r0 = (i % blocks) * rb, nr = std::min(rb, sp - r0);
        float* p1 = part.data() + i * 2 * c_;
        const float* xb = x + n * img + r0 * c_;
        if (p.backward)
          K.col_dot(xb, dy + n * img + r0 * c_, nr, c_, c_, center.data() + n * c_, p1, p1 + c_);
        else
          K.col_moments(xb, nr, c_, c_, x + n * img, p1, p1 + c_);
      }
    });
    for (i64 n = n0; n < n1; ++n)
      for (i64 bl = 0; bl < blocks; ++bl)
        for (i64 c = 0; c < c_; ++c) {
          const auto o = static_cast<std::size_t>((((n - n0) * blocks + bl) * 2) * c_ + c);
          s1[static_cast<std::size_t>(n * c_ + c)] += part[o];
          s2[static_cast<std::size_t>(n * c_ + c)] += part[o + static_cast<std::size_t>(c_)];
        }
    for (i64 n = n0; n < n1; ++n)
      for (i64 g = 0; g < g_; ++g) {
        const i64 c0 = g * cg, ng = n * g_ + g;
        const auto at = [&](i64 c) { return static_cast<std::size_t>(n * c_ + c0 + c); };
        if (!p.backward) {
          for (i64 c = 0; c < cg; ++c)
            channel_moments(x[n * img + c0 + c], s1[at(c)], s2[at(c)], sp,
                            &mean_c[static_cast<std::size_t>(c)],
                            &m2_c[static_cast<std::size_t>(c)]);
          const GroupStats st = combine(mean_c.data(), m2_c.data(), cg, sp, p.epsilon);
          if (p.mean_out != nullptr) p.mean_out[ng] = static_cast<float>(st.mean);
          if (p.invstd_out != nullptr) p.invstd_out[ng] = static_cast<float>(st.invstd);
          for (i64 c = 0; c < cg; ++c) {
            const double sa = p.scale[c0 + c] * st.invstd;
            a[at(c)] = static_cast<float>(sa);
            b[at(c)] = static_cast<float>(p.bias[c0 + c] - (st.mean - x[n * img + c0 + c]) * sa);
          }
          continue;
        }
        const double invstd = p.invstd[ng];
        double t1 = 0.0, t2 = 0.0;
        for (i64 c = 0; c < cg; ++c) {
          dbi[static_cast<std::size_t>(c0 + c)] += s1[at(c)];
          dsc[static_cast<std::size_t>(c0 + c)] += s2[at(c)] * invstd;
          t1 += p.scale[c0 + c] * s1[at(c)];
          t2 += p.scale[c0 + c] * s2[at(c)] * invstd;
        }
        for (i64 c = 0; c < cg; ++c) {
          const Grad gr = grad_coefficients(p.scale[c0 + c], p.mean[ng], invstd, t1, t2, cg * sp);
          a[at(c)] = gr.a;
          b[at(c)] = gr.b;
          m[at(c)] = gr.m;
          cc[at(c)] = gr.c;
        }
      }
    detail::parallel_for(h, 0, (n1 - n0) * chunks, 1, [&](i64 i0, i64 i1) {
      for (i64 i = i0; i < i1; ++i) {
        const i64 n = n0 + i / chunks, r0 = (i % chunks) * grain, nr = std::min(grain, sp - r0);
        const i64 o = n * img + r0 * c_;
        const std::size_t po = static_cast<std::size_t>(n * c_);
        if (p.backward)
          K.col_affine2(dy + o, x + o, nr, c_, c_, a.data() + po, b.data() + po, m.data() + po,
                        cc.data() + po, out + o, stream);
        else
          K.col_affine(x + o, nr, c_, c_, x + n * img, a.data() + po, b.data() + po, out + o,
                       stream);
      }
      if (stream) K.fence();
    });
  }
  if (p.backward)
    for (i64 c = 0; c < c_; ++c) {
      if (p.dscale != nullptr) p.dscale[c] = static_cast<float>(dsc[static_cast<std::size_t>(c)]);
      if (p.dbias != nullptr) p.dbias[c] = static_cast<float>(dbi[static_cast<std::size_t>(c)]);
    }
}

template <Isa kIsa>
Status run(Handle& h, const GnProblem& p) {
  const NormKernels& K = kernels_for(kIsa);
  const Arrangement arr =
      *common_arrangement({&p.x_desc, &p.y_desc, p.backward ? &p.dx_desc : nullptr});
  detail::Staged xs = detail::stage_in(p.x_desc, p.x);
  detail::Staged dys;
  if (p.backward) dys = detail::stage_in(p.y_desc, p.dy);
  detail::StagedOut out = p.backward ? detail::stage_out(p.dx_desc, p.dx, false)
                                     : detail::stage_out(p.y_desc, p.y, false);
  if (arr == Arrangement::kSpatialInner)
    run_spatial_inner(h, p, K, xs.data, dys.data, out.data);
  else
    run_channels_inner(h, p, K, xs.data, dys.data, out.data);
  out.commit();
  return Status::ok();
}

constexpr detail::Impl<GnProblem> kImpls[] = {
    {"group_norm_f32_avx512", accepts<Isa::kAvx512>, run<Isa::kAvx512>},
    {"group_norm_f32_avx2", accepts<Isa::kAvx2>, run<Isa::kAvx2>},
    {"group_norm_f32_generic", accepts<Isa::kGeneric>, run<Isa::kGeneric>},
    {"group_norm_ref", detail::accepts_all<GnProblem>, group_norm_ref},
};

Status dispatch(Handle& h, const std::string& fn, const GnProblem& p, bool instance) {
  const char* yn = p.backward ? "dy" : "y";
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "x", p.x_desc, 2, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_float_dtype(fn, "x", p.x_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, yn, p.y_desc, 2, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, yn, p.y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, yn, p.y_desc));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "dx", p.dx_desc, 2, 8));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, "dx", p.dx_desc));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, "dx", p.dx_desc));
  }
  const i64 c_ = p.x_desc.dims[1];
  if (p.groups < 1 || c_ % p.groups != 0)
    return invalid_argument(fn + ": groups = " + std::to_string(p.groups) +
                            " must be >= 1 and divide the " + std::to_string(c_) +
                            " channels of x " + p.x_desc.to_string());
  const bool work = p.x_desc.numel() > 0;
  const bool stats = p.x_desc.dims[0] * p.groups > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", p.x, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "scale", p.scale, c_ > 0));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", p.dy, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dx", p.dx, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "mean", p.mean, stats));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "invstd", p.invstd, stats));
  } else {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", p.y, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "bias", p.bias, c_ > 0));
    TESSERA_RETURN_IF_ERROR(check_epsilon(fn, p.epsilon));
    if (stats && spatial_size(p.x_desc) == 0)
      return invalid_argument(fn + ": x " + p.x_desc.to_string() +
                              " has no values per group to take statistics over");
  }
  TESSERA_VLOG(kBench) << "tessera bench dnn norm --kind " << (instance ? "instance" : "group")
                       << (instance ? std::string() : " --groups " + std::to_string(p.groups))
                       << " --dims " << detail::dims_string(p.x_desc.dims, 'x') << " --layout "
                       << layout_of(p.x_desc) << " --dtype " << dtype_name(p.x_desc.dtype)
                       << " --dir " << (p.backward ? "bwd" : "fwd")
                       << (p.backward ? std::string() : " --eps " + std::to_string(p.epsilon));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  if (!work) {
    if (p.backward)  // sums over no elements
      for (i64 c = 0; c < c_; ++c) {
        if (p.dscale != nullptr) p.dscale[c] = 0.0f;
        if (p.dbias != nullptr) p.dbias[c] = 0.0f;
      }
    return Status::ok();
  }
  return detail::select_impl<GnProblem>(fn.c_str(), kImpls, p).run(h, p);
}

GnProblem forward_problem(std::int64_t groups, const TensorDesc& x_desc, const void* x,
                          const float* scale, const float* bias, double epsilon,
                          const TensorDesc& y_desc, void* y, float* mean, float* invstd) {
  GnProblem p;
  p.groups = groups;
  p.x_desc = x_desc;
  p.y_desc = y_desc;
  p.x = x;
  p.y = y;
  p.scale = scale;
  p.bias = bias;
  p.epsilon = epsilon;
  p.mean_out = mean;
  p.invstd_out = invstd;
  return p;
}

GnProblem backward_problem(std::int64_t groups, const TensorDesc& x_desc, const void* x,
                           const TensorDesc& dy_desc, const void* dy, const float* scale,
                           const float* mean, const float* invstd, const TensorDesc& dx_desc,
                           void* dx, float* dscale, float* dbias) {
  GnProblem p;
  p.backward = true;
  p.groups = groups;
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
  return p;
}

// Instance norm: one group per channel (x must at least have a channel dim).
std::int64_t instance_groups(const TensorDesc& x) {
  return x.rank() >= 2 ? x.dims[1] : 1;
}

}  // namespace
}  // namespace norm

Status group_norm_forward(Handle& h, std::int64_t groups, const TensorDesc& x_desc, const void* x,
                          const float* scale, const float* bias, double epsilon,
                          const TensorDesc& y_desc, void* y, float* mean, float* invstd) {
  return norm::dispatch(
      h, "group_norm_forward",
      norm::forward_problem(groups, x_desc, x, scale, bias, epsilon, y_desc, y, mean, invstd),
      false);
}

Status group_norm_backward(Handle& h, std::int64_t groups, const TensorDesc& x_desc, const void* x,
                           const TensorDesc& dy_desc, const void* dy, const float* scale,
                           const float* mean, const float* invstd, const TensorDesc& dx_desc,
                           void* dx, float* dscale, float* dbias) {
  return norm::dispatch(h, "group_norm_backward",
                        norm::backward_problem(groups, x_desc, x, dy_desc, dy, scale, mean, invstd,
                                               dx_desc, dx, dscale, dbias),
                        false);
}

Status instance_norm_forward(Handle& h, const TensorDesc& x_desc, const void* x, const float* scale,
                             const float* bias, double epsilon, const TensorDesc& y_desc, void* y,
                             float* mean, float* invstd) {
  const std::int64_t g = norm::instance_groups(x_desc);
  return norm::dispatch(h, "instance_norm_forward",
                        norm::forward_problem(g == 0 ? 1 : g, x_desc, x, scale, bias, epsilon,
                                              y_desc, y, mean, invstd),
                        true);
}

Status instance_norm_backward(Handle& h, const TensorDesc& x_desc, const void* x,
                              const TensorDesc& dy_desc, const void* dy, const float* scale,
                              const float* mean, const float* invstd, const TensorDesc& dx_desc,
                              void* dx, float* dscale, float* dbias) {
  const std::int64_t g = norm::instance_groups(x_desc);
  return norm::dispatch(h, "instance_norm_backward",
                        norm::backward_problem(g == 0 ? 1 : g, x_desc, x, dy_desc, dy, scale, mean,
                                               invstd, dx_desc, dx, dscale, dbias),
                        true);
}

}  // namespace tessera::dnn
