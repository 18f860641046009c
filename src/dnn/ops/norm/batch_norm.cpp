// Batch norm entry points (training and inference forward, backward), their argument checks and
// the fast drivers over the kernels of kernels.hpp.
//
// Statistics: moments around a shift (the feature's first element) summed in f32 over fixed
// blocks (a segment of one image for spatial-inner data, kRowBlock rows for channels-inner
// data), the block sums combined in f64 in block order. The blocks depend on the problem only,
// so results are the same bits for any thread count; threads own whole channels (spatial-inner)
// or whole blocks and combine afterwards in order.
#include <algorithm>

#include "../activation/dense.hpp"
#include "norm.hpp"

namespace tessera::dnn {
namespace norm {
namespace {

std::string mode_name(BatchNormMode m) {
  return m == BatchNormMode::kSpatial ? "spatial" : "per-activation";
}

// Rows of one f32 partial sum for a matrix with `cols` columns: enough rows to amortise a call,
// few enough that f32 sums stay accurate and a block of rows stays in cache.
i64 row_block(i64 cols) {
  return std::clamp<i64>(16384 / std::max<i64>(cols, 1), 16, 256);
}
// Columns per work item of the per-activation drivers.
constexpr i64 kChunkCols = 256;

// The features of a channels-inner matrix in memory order, as logical parameter indices (per
// activation with NHWC data: memory column s*C + c is feature c*S + s); empty when identical.
std::vector<i64> feature_order(const BnProblem& p, Arrangement a) {
  const i64 c_ = p.x_desc.dims[1], sp = spatial_size(p.x_desc);
  std::vector<i64> f;
  if (p.mode != BatchNormMode::kPerActivation || a != Arrangement::kChannelsInner || sp == 1 ||
      c_ == 1)
    return f;
  f.resize(static_cast<std::size_t>(c_ * sp));
  for (i64 s = 0; s < sp; ++s)
    for (i64 c = 0; c < c_; ++c) f[static_cast<std::size_t>(s * c_ + c)] = c * sp + s;
  return f;
}

// Parameters gathered into memory order (a copy only when the order differs).
struct Params {
  std::vector<i64> order;
  std::vector<float> scale, bias, mean, var, invstd;
  const float* get(const float* p, std::vector<float>& buf) const {
    if (order.empty() || p == nullptr) return p;
    buf.resize(order.size());
    for (std::size_t m = 0; m < order.size(); ++m) buf[m] = p[order[m]];
    return buf.data();
  }
  void put(float* out, std::size_t m, float v) const {
    if (out != nullptr) out[order.empty() ? m : static_cast<std::size_t>(order[m])] = v;
  }
};

// Per-feature results of the statistics (training) or the gradient sums (backward).
struct FeatureOut {
  const BnProblem& p;
  const Params& prm;
  i64 count;  // elements per feature
  // Training: stores saved statistics and updates running ones; returns the (a, b) of
  // y = (x - shift) * a + b.
  void train(std::size_t m, double shift, double s1, double s2, float scale, float bias, float* a,
             float* b) const {
    double mean, var;
    moments_to_stats(shift, s1, s2, static_cast<double>(count), &mean, &var);
    const double invstd = inv_std(var, p.epsilon);
    prm.put(p.saved_mean, m, static_cast<float>(mean));
    prm.put(p.saved_invstd, m, static_cast<float>(invstd));
    if (p.running_mean != nullptr) {
      const std::size_t f = prm.order.empty() ? m : static_cast<std::size_t>(prm.order[m]);
      const double n = static_cast<double>(count);
      p.running_mean[f] =
          static_cast<float>((1.0 - p.momentum) * p.running_mean[f] + p.momentum * mean);
      p.running_var[f] = static_cast<float>((1.0 - p.momentum) * p.running_var[f] +
                                            p.momentum * var * n / (n - 1.0));
    }
    *a = static_cast<float>(scale * invstd);
    *b = static_cast<float>(bias - (mean - shift) * scale * invstd);
  }
  // Backward: stores dscale/dbias; returns dx = a*dy + b*(x - m) + c's coefficients.
  void grad(std::size_t m, double sum_dy, double sum_dyx, float scale, float mean, float invstd,
            float* a, float* b, float* mm, float* c) const {
    const double n = static_cast<double>(count);
    const double dscale = sum_dyx * invstd;
    prm.put(p.dscale, m, static_cast<float>(dscale));
    prm.put(p.dbias, m, static_cast<float>(sum_dy));
    const double k = static_cast<double>(scale) * invstd;
    *a = static_cast<float>(k);
    *b = static_cast<float>(-k * invstd * dscale / n);
    *mm = mean;
    *c = static_cast<float>(-k * sum_dy / n);
  }
};

// Spatial-inner (packed NCHW with spatial extent): one work item per channel, its N segments
// reduced and then normalised while still in cache.
void run_spatial_inner(Handle& h, const BnProblem& p, const NormKernels& K, const float* x,
                       const float* dy, float* out) {
  const i64 n_ = p.x_desc.dims[0], c_ = p.x_desc.dims[1], sp = spatial_size(p.x_desc);
  const i64 cs = c_ * sp;
  const Params prm;
  const FeatureOut fo{p, prm, n_ * sp};
  const bool stream = detail::stream_output(p.x_desc.numel() * static_cast<i64>(sizeof(float)));
  if (p.dir == Dir::kForwardInference) {
    std::vector<float> a(static_cast<std::size_t>(c_));
    for (i64 c = 0; c < c_; ++c)
      a[static_cast<std::size_t>(c)] =
          static_cast<float>(p.scale[c] * inv_std(p.var[c], p.epsilon));
    detail::parallel_for(h, 0, n_ * c_, std::max<i64>(1, 16384 / sp), [&](i64 b0, i64 b1) {
      for (i64 i = b0; i < b1; ++i) {
        const i64 c = i % c_;
        K.row_affine(x + i * sp, sp, p.mean[c], a[static_cast<std::size_t>(c)], p.bias[c],
                     out + i * sp, stream);
      }
      if (stream) K.fence();
    });
    return;
  }
  detail::parallel_for(h, 0, c_, 1, [&](i64 c0, i64 c1) {
    for (i64 c = c0; c < c1; ++c) {
      const auto m = static_cast<std::size_t>(c);
      double t[2] = {0.0, 0.0};
      if (p.dir == Dir::kForwardTraining) {
        const float shift = x[c * sp];
        for (i64 n = 0; n < n_; ++n) {
          double seg[2] = {0.0, 0.0};
          K.row_moments(x + n * cs + c * sp, sp, shift, seg);
          t[0] += seg[0];
          t[1] += seg[1];
        }
        float a, b;
        fo.train(m, shift, t[0], t[1], p.scale[c], p.bias[c], &a, &b);
        for (i64 n = 0; n < n_; ++n)
          K.row_affine(x + n * cs + c * sp, sp, shift, a, b, out + n * cs + c * sp, stream);
      } else {
        for (i64 n = 0; n < n_; ++n) {
          double seg[2] = {0.0, 0.0};
          K.row_dot(x + n * cs + c * sp, dy + n * cs + c * sp, sp, p.mean[c], seg);
          t[0] += seg[0];
          t[1] += seg[1];
        }
        float a, b, mm, cc;
        fo.grad(m, t[0], t[1], p.scale[c], p.mean[c], p.invstd[c], &a, &b, &mm, &cc);
        for (i64 n = 0; n < n_; ++n) {
          const i64 o = n * cs + c * sp;
          K.row_affine2(dy + o, x + o, sp, a, b, mm, cc, out + o, stream);
        }
      }
    }
    if (stream) K.fence();
  });
}

// Sums of the block partials of columns [j0, j0 + cols) of an R x F matrix, in block order:
// moments around shift (training) or sum(dy), sum(dy * (x - mean)) (backward).
void column_sums(const NormKernels& K, bool dot, const float* x, const float* dy, i64 rows, i64 f,
                 i64 j0, i64 cols, const float* center, double* s1, double* s2) {
  const i64 rb = row_block(f);
  std::vector<float> p1(static_cast<std::size_t>(cols)), p2(static_cast<std::size_t>(cols));
  std::fill(s1, s1 + cols, 0.0);
  std::fill(s2, s2 + cols, 0.0);
  for (i64 r0 = 0; r0 < rows; r0 += rb) {
    const i64 nr = std::min(rb, rows - r0);
    if (dot)
      K.col_dot(x + r0 * f + j0, dy + r0 * f + j0, nr, cols, f, center, p1.data(), p2.data());
    else
      K.col_moments(x + r0 * f + j0, nr, cols, f, center, p1.data(), p2.data());
    for (i64 j = 0; j < cols; ++j) {
      s1[j] += p1[static_cast<std::size_t>(j)];
      s2[j] += p2[static_cast<std::size_t>(j)];
    }
  }
}

// Channels-inner data or per-activation statistics: an R x F matrix (R = N*S rows of C
// features, or N rows of C*S features). Spatial mode reduces row blocks in parallel and then
// normalises rows in parallel; per-activation mode gives each work item a chunk of columns
// over all rows (reduced, then normalised while in cache). Both sum the same blocks in the
// same order.
void run_columns(Handle& h, const BnProblem& p, const NormKernels& K, Arrangement arr,
                 const float* x, const float* dy, float* out) {
  const i64 n_ = p.x_desc.dims[0], c_ = p.x_desc.dims[1], sp = spatial_size(p.x_desc);
  const bool spatial = p.mode == BatchNormMode::kSpatial;
  const i64 rows = spatial ? n_ * sp : n_, f = spatial ? c_ : c_ * sp;
  Params prm;
  prm.order = feature_order(p, arr);
  const float* scale = prm.get(p.scale, prm.scale);
  const float* bias = prm.get(p.bias, prm.bias);
  const float* mean = prm.get(p.mean, prm.mean);
  const float* var = prm.get(p.var, prm.var);
  const float* invstd = prm.get(p.invstd, prm.invstd);
  const FeatureOut fo{p, prm, rows};
  const auto fs = static_cast<std::size_t>(f);
  const bool stream = detail::stream_output(p.x_desc.numel() * static_cast<i64>(sizeof(float)));
  std::vector<float> a(fs), b(fs), m(fs), c(fs);
  // y = (x - center) * a + b: training centres on the first row (the moments' shift),
  // inference on the running mean.
  const float* center = p.dir == Dir::kForwardInference ? mean : x;
  // Coefficients of columns [j0, j0 + cols) from their sums.
  auto coefficients = [&](i64 j0, i64 cols, const double* s1, const double* s2) {
    for (i64 j = j0; j < j0 + cols; ++j) {
      const auto u = static_cast<std::size_t>(j);
      if (p.dir == Dir::kForwardTraining)
        fo.train(u, x[j], s1[j - j0], s2[j - j0], scale[j], bias[j], &a[u], &b[u]);
      else
        fo.grad(u, s1[j - j0], s2[j - j0], scale[j], mean[j], invstd[j], &a[u], &b[u], &m[u],
                &c[u]);
    }
  };
  auto apply = [&](i64 r0, i64 nr, i64 j0, i64 cols) {
    const i64 o = r0 * f + j0;
    if (p.dir == Dir::kBackward)
      K.col_affine2(dy + o, x + o, nr, cols, f, a.data() + j0, b.data() + j0, m.data() + j0,
                    c.data() + j0, out + o, stream);
    else
      K.col_affine(x + o, nr, cols, f, center + j0, a.data() + j0, b.data() + j0, out + o,
                   stream);
  };
  const bool dot = p.dir == Dir::kBackward;
  if (p.dir == Dir::kForwardInference) {
    for (i64 j = 0; j < f; ++j) {
      const auto u = static_cast<std::size_t>(j);
      const double is = inv_std(var[j], p.epsilon);
      a[u] = static_cast<float>(scale[j] * is);
      b[u] = bias[j];
    }
  } else if (spatial) {
    const i64 rb = row_block(f), blocks = (rows + rb - 1) / rb;
    std::vector<float> part(static_cast<std::size_t>(blocks * 2 * f));
    detail::parallel_for(h, 0, blocks, 1, [&](i64 b0, i64 b1) {
      for (i64 blk = b0; blk < b1; ++blk) {
        const i64 r0 = blk * rb, nr = std::min(rb, rows - r0);
        float* p1 = part.data() + blk * 2 * f;
        if (dot)  // backward centres on the saved mean, training shifts by the first row
          K.col_dot(x + r0 * f, dy + r0 * f, nr, f, f, mean, p1, p1 + f);
        else
          K.col_moments(x + r0 * f, nr, f, f, x, p1, p1 + f);
      }
    });
    std::vector<double> s1(fs, 0.0), s2(fs, 0.0);
    for (i64 blk = 0; blk < blocks; ++blk)
      for (std::size_t j = 0; j < fs; ++j) {
        s1[j] += part[static_cast<std::size_t>(blk * 2 * f) + j];
        s2[j] += part[static_cast<std::size_t>(blk * 2 * f + f) + j];
      }
    coefficients(0, f, s1.data(), s2.data());
  } else {
    const i64 chunks = (f + kChunkCols - 1) / kChunkCols;
    detail::parallel_for(h, 0, chunks, 1, [&](i64 k0, i64 k1) {
      std::vector<double> s1(kChunkCols), s2(kChunkCols);
      for (i64 k = k0; k < k1; ++k) {
        const i64 j0 = k * kChunkCols, cols = std::min(kChunkCols, f - j0);
        column_sums(K, dot, x, dy, rows, f, j0, cols, (dot ? mean : x) + j0, s1.data(), s2.data());
        coefficients(j0, cols, s1.data(), s2.data());
        apply(0, rows, j0, cols);
      }
      if (stream) K.fence();
    });
    return;
  }
  if (spatial) {
    const i64 grain = std::max<i64>(1, 16384 / f);
    detail::parallel_for(h, 0, rows, grain, [&](i64 r0, i64 r1) {
      apply(r0, r1 - r0, 0, f);
      if (stream) K.fence();
    });
  } else {
    const i64 chunks = (f + kChunkCols - 1) / kChunkCols;
    detail::parallel_for(h, 0, chunks, 1, [&](i64 k0, i64 k1) {
      for (i64 k = k0; k < k1; ++k)
        apply(0, rows, k * kChunkCols, std::min(kChunkCols, f - k * kChunkCols));
      if (stream) K.fence();
    });
  }
}

template <Isa kIsa>
Status accepts(const BnProblem& p) {
  TESSERA_RETURN_IF_ERROR(isa_ok(kIsa));
  const bool bwd = p.dir == Dir::kBackward;
  if (!common_arrangement({&p.x_desc, &p.y_desc, bwd ? &p.dx_desc : nullptr}))
    return detail::refuse("needs x, " + std::string(bwd ? "dy and dx" : "y") +
                          " packed alike (NCHW or NHWC); x is " + p.x_desc.to_string());
  return Status::ok();
}

template <Isa kIsa>
Status run(Handle& h, const BnProblem& p) {
  const NormKernels& K = kernels_for(kIsa);
  const bool bwd = p.dir == Dir::kBackward;
  const Arrangement arr = *common_arrangement({&p.x_desc, &p.y_desc, bwd ? &p.dx_desc : nullptr});
  detail::Staged xs = detail::stage_in(p.x_desc, p.x);
  detail::Staged dys;
  if (bwd) dys = detail::stage_in(p.y_desc, p.dy);
  detail::StagedOut out =
      bwd ? detail::stage_out(p.dx_desc, p.dx, false) : detail::stage_out(p.y_desc, p.y, false);
  if (p.mode == BatchNormMode::kSpatial && arr == Arrangement::kSpatialInner)
    run_spatial_inner(h, p, K, xs.data, dys.data, out.data);
  else
    run_columns(h, p, K, arr, xs.data, dys.data, out.data);
  out.commit();
  return Status::ok();
}

constexpr detail::Impl<BnProblem> kImpls[] = {
    {"batch_norm_f32_avx512", accepts<Isa::kAvx512>, run<Isa::kAvx512>},
    {"batch_norm_f32_avx2", accepts<Isa::kAvx2>, run<Isa::kAvx2>},
    {"batch_norm_f32_generic", accepts<Isa::kGeneric>, run<Isa::kGeneric>},
    {"batch_norm_ref", detail::accepts_all<BnProblem>, batch_norm_ref},
};

const char* dir_arg(Dir d) {
  switch (d) {
    case Dir::kForwardTraining:
      return "fwd-training";
    case Dir::kForwardInference:
      return "fwd-inference";
    default:
      return "bwd";
  }
}

// Checks shared by the three entry points; on success logs the replay line.
Status check_common(const std::string& fn, const BnProblem& p) {
  const bool bwd = p.dir == Dir::kBackward;
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "x", p.x_desc, 2, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_float_dtype(fn, "x", p.x_desc));
  const char* yn = bwd ? "dy" : "y";
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, yn, p.y_desc, 2, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, yn, p.y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, yn, p.y_desc));
  if (bwd) {
    TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "dx", p.dx_desc, 2, 8));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, "dx", p.dx_desc));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, "dx", p.dx_desc));
  }
  if (p.mode != BatchNormMode::kSpatial && p.mode != BatchNormMode::kPerActivation)
    return invalid_argument(fn + ": unknown batch norm mode " +
                            std::to_string(static_cast<int>(p.mode)));
  const bool work = p.x_desc.numel() > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", p.x, work));
  if (bwd) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", p.dy, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dx", p.dx, work));
  } else {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", p.y, work));
  }
  const i64 features =
      p.x_desc.dims[1] * (p.mode == BatchNormMode::kSpatial ? 1 : spatial_size(p.x_desc));
  const bool params = features > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "scale", p.scale, params));
  if (!bwd) TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "bias", p.bias, params));
  if (bwd) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "saved_mean", p.mean, params));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "saved_invstd", p.invstd, params));
  }
  if (p.dir == Dir::kForwardInference) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "mean", p.mean, params));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "var", p.var, params));
  }
  if (!bwd) TESSERA_RETURN_IF_ERROR(check_epsilon(fn, p.epsilon));
  if (p.dir == Dir::kForwardTraining) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "saved_mean", p.saved_mean, params));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "saved_invstd", p.saved_invstd, params));
    if ((p.running_mean == nullptr) != (p.running_var == nullptr))
      return invalid_argument(fn + ": running_mean and running_var must be given both or neither");
    if (!(p.momentum >= 0.0 && p.momentum <= 1.0))
      return invalid_argument(fn + ": momentum = " + std::to_string(p.momentum) +
                              " must lie in [0, 1]");
    const i64 count =
        p.x_desc.dims[0] * (p.mode == BatchNormMode::kSpatial ? spatial_size(p.x_desc) : 1);
    if (params && count < 1)
      return invalid_argument(fn + ": x " + p.x_desc.to_string() +
                              " has no values per feature to take statistics over");
    if (params && count < 2 && p.running_mean != nullptr)
      return invalid_argument(fn + ": x " + p.x_desc.to_string() +
                              " has one value per feature: the unbiased running variance needs "
                              "at least two");
  }
  TESSERA_VLOG(kBench) << "tessera bench dnn norm --kind batch --mode " << mode_name(p.mode)
                       << " --dims " << detail::dims_string(p.x_desc.dims, 'x') << " --layout "
                       << layout_of(p.x_desc) << " --dtype " << dtype_name(p.x_desc.dtype)
                       << " --dir " << dir_arg(p.dir)
                       << (bwd ? std::string() : " --eps " + std::to_string(p.epsilon))
                       << (p.dir == Dir::kForwardTraining
                               ? " --momentum " + std::to_string(p.momentum) +
                                     (p.running_mean != nullptr ? " --running" : "")
                               : std::string());
  return Status::ok();
}

Status dispatch(Handle& h, const std::string& fn, const BnProblem& p) {
  TESSERA_RETURN_IF_ERROR(check_common(fn, p));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  if (p.x_desc.numel() == 0) {
    // Sums over no elements: the parameter gradients are zero.
    const i64 features =
        p.x_desc.dims[1] * (p.mode == BatchNormMode::kSpatial ? 1 : spatial_size(p.x_desc));
    if (p.dir == Dir::kBackward)
      for (i64 f = 0; f < features; ++f) {
        if (p.dscale != nullptr) p.dscale[f] = 0.0f;
        if (p.dbias != nullptr) p.dbias[f] = 0.0f;
      }
    return Status::ok();
  }
  return detail::select_impl<BnProblem>(fn.c_str(), kImpls, p).run(h, p);
}

}  // namespace
}  // namespace norm

Status batch_norm_forward_training(Handle& h, BatchNormMode mode, const TensorDesc& x_desc,
                                   const void* x, const float* scale, const float* bias,
                                   double epsilon, double momentum, float* running_mean,
                                   float* running_var, float* saved_mean, float* saved_invstd,
                                   const TensorDesc& y_desc, void* y) {
  norm::BnProblem p;
  p.dir = norm::Dir::kForwardTraining;
  p.mode = mode;
  p.x_desc = x_desc;
  p.y_desc = y_desc;
  p.x = x;
  p.y = y;
  p.scale = scale;
  p.bias = bias;
  p.epsilon = epsilon;
  p.momentum = momentum;
  p.running_mean = running_mean;
  p.running_var = running_var;
  p.saved_mean = saved_mean;
  p.saved_invstd = saved_invstd;
  return norm::dispatch(h, "batch_norm_forward_training", p);
}

Status batch_norm_forward_inference(Handle& h, BatchNormMode mode, const TensorDesc& x_desc,
                                    const void* x, const float* scale, const float* bias,
                                    const float* mean, const float* var, double epsilon,
                                    const TensorDesc& y_desc, void* y) {
  norm::BnProblem p;
  p.dir = norm::Dir::kForwardInference;
  p.mode = mode;
  p.x_desc = x_desc;
  p.y_desc = y_desc;
  p.x = x;
  p.y = y;
  p.scale = scale;
  p.bias = bias;
  p.mean = mean;
  p.var = var;
  p.epsilon = epsilon;
  return norm::dispatch(h, "batch_norm_forward_inference", p);
}

Status batch_norm_backward(Handle& h, BatchNormMode mode, const TensorDesc& x_desc, const void* x,
                           const TensorDesc& dy_desc, const void* dy, const float* scale,
                           const float* saved_mean, const float* saved_invstd,
                           const TensorDesc& dx_desc, void* dx, float* dscale, float* dbias) {
  norm::BnProblem p;
  p.dir = norm::Dir::kBackward;
  p.mode = mode;
  p.x_desc = x_desc;
  p.y_desc = dy_desc;
  p.dx_desc = dx_desc;
  p.x = x;
  p.dy = dy;
  p.dx = dx;
  p.scale = scale;
  p.mean = saved_mean;
  p.invstd = saved_invstd;
  p.dscale = dscale;
  p.dbias = dbias;
  return norm::dispatch(h, "batch_norm_backward", p);
}

}  // namespace tessera::dnn
