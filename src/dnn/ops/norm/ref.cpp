// Reference batch, layer and group norm: plain loops over logical indices, any strides,
// f32/bf16/f16 through load_f32/store_f32, statistics in f64 with two passes (mean, then the
// centred sum of squares), every formula written as in the header.
#include <vector>

#include "norm.hpp"

namespace tessera::dnn::norm {

using detail::load_f32;
using detail::store_f32;

namespace {

// One normalisation set: `count` elements at x offsets xo[e] (and y/dy, dx offsets), each
// with a per-element parameter index pi[e] (scale, bias, dscale, dbias).
struct Set {
  std::vector<i64> xo, yo, dxo, pi;
};

struct Stats {
  double mean = 0.0, var = 0.0;
};

Stats stats_of(const void* x, DType t, const Set& s) {
  Stats st;
  const double n = static_cast<double>(s.xo.size());
  for (i64 o : s.xo) st.mean += load_f32(x, t, o);
  st.mean /= n;
  for (i64 o : s.xo) {
    const double d = load_f32(x, t, o) - st.mean;
    st.var += d * d;
  }
  st.var /= n;
  return st;
}

void normalize(const void* x, DType xt, void* y, DType yt, const Set& s, double mean, double invstd,
               const float* scale, const float* bias) {
  for (std::size_t e = 0; e < s.xo.size(); ++e) {
    const auto k = static_cast<std::size_t>(s.pi[e]);
    const double xhat = (load_f32(x, xt, s.xo[e]) - mean) * invstd;
    const double b = bias != nullptr ? bias[k] : 0.0;
    store_f32(y, yt, s.yo[e], static_cast<float>(xhat * scale[k] + b));
  }
}

// dx = invstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * scale; dscale += dy * xhat
// and dbias += dy per parameter.
void backward_set(const void* x, DType xt, const void* dy, DType dyt, void* dx, DType dxt,
                  const Set& s, double mean, double invstd, const float* scale,
                  std::vector<double>& dscale, std::vector<double>& dbias) {
  const double n = static_cast<double>(s.xo.size());
  double sg = 0.0, sgx = 0.0;
  for (std::size_t e = 0; e < s.xo.size(); ++e) {
    const auto k = static_cast<std::size_t>(s.pi[e]);
    const double g = load_f32(dy, dyt, s.yo[e]);
    const double xhat = (load_f32(x, xt, s.xo[e]) - mean) * invstd;
    sg += g * scale[k];
    sgx += g * scale[k] * xhat;
    dscale[k] += g * xhat;
    dbias[k] += g;
  }
  for (std::size_t e = 0; e < s.xo.size(); ++e) {
    const auto k = static_cast<std::size_t>(s.pi[e]);
    const double g = load_f32(dy, dyt, s.yo[e]) * static_cast<double>(scale[k]);
    const double xhat = (load_f32(x, xt, s.xo[e]) - mean) * invstd;
    store_f32(dx, dxt, s.dxo[e], static_cast<float>(invstd * (g - sg / n - xhat * sgx / n)));
  }
}

void store_grads(const std::vector<double>& dscale, const std::vector<double>& dbias, float* ds,
                 float* db) {
  for (std::size_t k = 0; k < dscale.size(); ++k) {
    if (ds != nullptr) ds[k] = static_cast<float>(dscale[k]);
    if (db != nullptr) db[k] = static_cast<float>(dbias[k]);
  }
}

}  // namespace

Status batch_norm_ref(Handle&, const BnProblem& p) {
  const TensorDesc& xd = p.x_desc;
  const i64 n_ = xd.dims[0], c_ = xd.dims[1], sp = spatial_size(xd);
  const bool spatial = p.mode == BatchNormMode::kSpatial;
  const bool bwd = p.dir == Dir::kBackward;
  const std::vector<i64> xs = offsets_of(xd, 2, xd.rank()), ys = offsets_of(p.y_desc, 2, xd.rank());
  const std::vector<i64> dxs = bwd ? offsets_of(p.dx_desc, 2, xd.rank()) : std::vector<i64>{};
  const i64 features = spatial ? c_ : c_ * sp;
  std::vector<double> dscale(static_cast<std::size_t>(features)),
      dbias(static_cast<std::size_t>(features));
  for (i64 f = 0; f < features; ++f) {
    // The elements of feature f (channel c, or channel c at spatial position s).
    Set set;
    const i64 c = spatial ? f : f / sp;
    for (i64 n = 0; n < n_; ++n)
      for (i64 s = spatial ? 0 : f % sp; s < (spatial ? sp : f % sp + 1); ++s) {
        const auto si = static_cast<std::size_t>(s);
        set.xo.push_back(n * xd.strides[0] + c * xd.strides[1] + xs[si]);
        set.yo.push_back(n * p.y_desc.strides[0] + c * p.y_desc.strides[1] + ys[si]);
        if (bwd) set.dxo.push_back(n * p.dx_desc.strides[0] + c * p.dx_desc.strides[1] + dxs[si]);
        set.pi.push_back(0);
      }
    const auto fi = static_cast<std::size_t>(f);
    if (p.dir == Dir::kForwardTraining) {
      const Stats st = stats_of(p.x, xd.dtype, set);
      const double invstd = inv_std(st.var, p.epsilon);
      normalize(p.x, xd.dtype, p.y, p.y_desc.dtype, set, st.mean, invstd, p.scale + f, p.bias + f);
      p.saved_mean[fi] = static_cast<float>(st.mean);
      p.saved_invstd[fi] = static_cast<float>(invstd);
      if (p.running_mean != nullptr) {
        const double m = static_cast<double>(set.xo.size());
        const double unbiased = st.var * m / (m - 1.0);
        p.running_mean[fi] =
            static_cast<float>((1.0 - p.momentum) * p.running_mean[fi] + p.momentum * st.mean);
        p.running_var[fi] =
            static_cast<float>((1.0 - p.momentum) * p.running_var[fi] + p.momentum * unbiased);
      }
    } else if (p.dir == Dir::kForwardInference) {
      normalize(p.x, xd.dtype, p.y, p.y_desc.dtype, set, p.mean[fi], inv_std(p.var[fi], p.epsilon),
                p.scale + f, p.bias + f);
    } else {
      std::vector<double> ds(1), db(1);
      backward_set(p.x, xd.dtype, p.dy, p.y_desc.dtype, p.dx, p.dx_desc.dtype, set, p.mean[fi],
                   p.invstd[fi], p.scale + f, ds, db);
      dscale[fi] = ds[0];
      dbias[fi] = db[0];
    }
  }
  if (bwd) store_grads(dscale, dbias, p.dscale, p.dbias);
  return Status::ok();
}

Status layer_norm_ref(Handle&, const LnProblem& p) {
  const TensorDesc& xd = p.x_desc;
  const int r = xd.rank();
  const std::vector<i64> xl = offsets_of(xd, 0, p.axis), xk = offsets_of(xd, p.axis, r);
  const std::vector<i64> yl = offsets_of(p.y_desc, 0, p.axis), yk = offsets_of(p.y_desc, p.axis, r);
  std::vector<i64> dxl, dxk;
  if (p.backward) {
    dxl = offsets_of(p.dx_desc, 0, p.axis);
    dxk = offsets_of(p.dx_desc, p.axis, r);
  }
  std::vector<double> dscale(xk.size()), dbias(xk.size());
  for (std::size_t l = 0; l < xl.size(); ++l) {
    Set set;
    for (std::size_t k = 0; k < xk.size(); ++k) {
      set.xo.push_back(xl[l] + xk[k]);
      set.yo.push_back(yl[l] + yk[k]);
      if (p.backward) set.dxo.push_back(dxl[l] + dxk[k]);
      set.pi.push_back(static_cast<i64>(k));
    }
    if (!p.backward) {
      const Stats st = stats_of(p.x, xd.dtype, set);
      const double invstd = inv_std(st.var, p.epsilon);
      normalize(p.x, xd.dtype, p.y, p.y_desc.dtype, set, st.mean, invstd, p.scale, p.bias);
      if (p.mean_out != nullptr) p.mean_out[l] = static_cast<float>(st.mean);
      if (p.invstd_out != nullptr) p.invstd_out[l] = static_cast<float>(invstd);
    } else {
      backward_set(p.x, xd.dtype, p.dy, p.y_desc.dtype, p.dx, p.dx_desc.dtype, set, p.mean[l],
                   p.invstd[l], p.scale, dscale, dbias);
    }
  }
  if (p.backward) store_grads(dscale, dbias, p.dscale, p.dbias);
  return Status::ok();
}

Status group_norm_ref(Handle&, const GnProblem& p) {
  const TensorDesc& xd = p.x_desc;
  const i64 n_ = xd.dims[0], c_ = xd.dims[1], cg = c_ / p.groups;
  const std::vector<i64> xs = offsets_of(xd, 2, xd.rank()), ys = offsets_of(p.y_desc, 2, xd.rank());
  const std::vector<i64> dxs =
      p.backward ? offsets_of(p.dx_desc, 2, xd.rank()) : std::vector<i64>{};
  std::vector<double> dscale(static_cast<std::size_t>(c_)), dbias(static_cast<std::size_t>(c_));
  for (i64 n = 0; n < n_; ++n)
    for (i64 g = 0; g < p.groups; ++g) {
      Set set;
      for (i64 c = g * cg; c < (g + 1) * cg; ++c)
        for (std::size_t s = 0; s < xs.size(); ++s) {
          set.xo.push_back(n * xd.strides[0] + c * xd.strides[1] + xs[s]);
          set.yo.push_back(n * p.y_desc.strides[0] + c * p.y_desc.strides[1] + ys[s]);
          if (p.backward)
            set.dxo.push_back(n * p.dx_desc.strides[0] + c * p.dx_desc.strides[1] + dxs[s]);
          set.pi.push_back(c);
        }
      const auto ng = static_cast<std::size_t>(n * p.groups + g);
      if (!p.backward) {
        const Stats st = stats_of(p.x, xd.dtype, set);
        const double invstd = inv_std(st.var, p.epsilon);
        normalize(p.x, xd.dtype, p.y, p.y_desc.dtype, set, st.mean, invstd, p.scale, p.bias);
        if (p.mean_out != nullptr) p.mean_out[ng] = static_cast<float>(st.mean);
        if (p.invstd_out != nullptr) p.invstd_out[ng] = static_cast<float>(invstd);
      } else {
        backward_set(p.x, xd.dtype, p.dy, p.y_desc.dtype, p.dx, p.dx_desc.dtype, set, p.mean[ng],
                     p.invstd[ng], p.scale, dscale, dbias);
      }
    }
  if (p.backward) store_grads(dscale, dbias, p.dscale, p.dbias);
  return Status::ok();
}

}  // namespace tessera::dnn::norm
