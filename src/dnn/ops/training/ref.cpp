// The references of dropout and the losses (see ref.hpp). Per-element and per-sample values
// are computed in parallel into their own slots; the sums of the reductions then run in sample
// order in f64, so any thread count gives the same bits.
#include "ref.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../eltwise/nest.hpp"

namespace tessera::dnn {

// Philox4x32-10 (Salmon et al., SC'11).
void philox4x32(const std::uint32_t counter[4], const std::uint32_t key[2], std::uint32_t out[4]) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  std::uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3], k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kM0) * c0, p1 = static_cast<std::uint64_t>(kM1) * c2;
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

namespace training_ref {
namespace {

std::size_t z(i64 i) { return static_cast<std::size_t>(i); }

double softplus(double v) { return std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))); }
double point_value(const PointLossParams& p, double x, double t) {
  const double d = x - t, beta = p.beta;
  switch (p.kind) {
    case PointLoss::kMse: return d * d;
    case PointLoss::kL1: return std::fabs(d);
    case PointLoss::kSmoothL1: return std::fabs(d) < beta ? 0.5 * d * d / beta : std::fabs(d) - 0.5 * beta;
    case PointLoss::kBceWithLogits: return p.pos_weight * t * softplus(-x) + (1 - t) * softplus(x);
  }
  return 0;
}
double point_grad(const PointLossParams& p, double x, double t) {
  const double d = x - t, beta = p.beta;
  const double sgn = d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0;
  switch (p.kind) {
    case PointLoss::kMse: return 2 * d;
    case PointLoss::kL1: return sgn;
    case PointLoss::kSmoothL1: return std::fabs(d) < beta ? d / beta : sgn;
    case PointLoss::kBceWithLogits: {
      const double sig = 1 / (1 + std::exp(-x));
      return -p.pos_weight * t * (1 - sig) + (1 - t) * sig;
    }
  }
  return 0;
}

// log-sum-exp of one sample's scores (f64).
double lse(const void* x, DType t, i64 x0, i64 xc, i64 C) {
  double m = -std::numeric_limits<double>::infinity();
  for (i64 c = 0; c < C; ++c) m = std::max<double>(m, detail::load_f32(x, t, x0 + c * xc));
  if (std::isinf(m)) return m;
  double s = 0;
  for (i64 c = 0; c < C; ++c) s += std::exp(detail::load_f32(x, t, x0 + c * xc) - m);
  return m + std::log(s);
}

}  // namespace

std::vector<i64> class0_offsets(const TensorDesc& d) {
  std::vector<i64> st = d.strides, sd = d.dims;
  st.erase(st.begin() + 1);
  sd.erase(sd.begin() + 1);
  return offsets_of(sd, st);
}

std::vector<i64> offsets_of(const std::vector<i64>& dims, const std::vector<i64>& strides) {
  return detail::box_offsets(dims, strides);
}
std::vector<i64> offsets_of(const TensorDesc& d) { return offsets_of(d.dims, d.strides); }

double total_class_weight(const ClassLossParams& p, i64 C) {
  double w = 0;
  for (i64 c = 0; c < C; ++c) w += class_weight(p, c);
  return w;
}

double weight_sum(const ClassLossParams& p, const Samples& s) {
  double w = 0;
  for (i64 t : s.label)
    if (t != p.ignore_index) w += class_weight(p, t);
  return w;
}

void write_loss(const double* per, i64 n, double weight_sum, LossReduction r, const TensorDesc& d, void* out) {
  if (r == LossReduction::kNone) {
    const auto o = offsets_of(d);
    for (i64 i = 0; i < n; ++i) detail::store_f32(out, d.dtype, o[z(i)], static_cast<float>(per[i]));
    return;
  }
  double sum = 0;
  for (i64 i = 0; i < n; ++i) sum += per[i];
  if (r == LossReduction::kMean) sum = weight_sum == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / weight_sum;
  detail::store_f32(out, d.dtype, 0, static_cast<float>(sum));
}

double scalar_grad(LossReduction r, double g, double n) {
  if (r != LossReduction::kMean) return g;
  return n == 0 ? std::numeric_limits<double>::quiet_NaN() : g / n;
}

std::vector<double> sample_grads(LossReduction r, const TensorDesc& d, const void* g, i64 n, double weight_sum) {
  std::vector<double> out(z(n));
  if (r == LossReduction::kNone) {
    const auto o = offsets_of(d);
    for (i64 i = 0; i < n; ++i) out[z(i)] = detail::load_f32(g, d.dtype, o[z(i)]);
    return out;
  }
  const double v = scalar_grad(r, detail::load_f32(g, d.dtype, 0), weight_sum);
  for (double& e : out) e = v;
  return out;
}

// ---- dropout ------------------------------------------------------------------------------------
void dropout_forward(Handle& h, float ratio, std::uint64_t seed, std::uint64_t offset, const TensorDesc& x_desc,
                     const void* x, const TensorDesc& y_desc, void* y, const TensorDesc& mask_desc, void* mask) {
  const auto xo = offsets_of(x_desc), yo = offsets_of(y_desc);
  const auto mo = mask != nullptr ? offsets_of(mask_desc) : std::vector<i64>{};
  const i64 n = static_cast<i64>(xo.size());
  const float scale = ratio < 1 ? 1.0f / (1.0f - ratio) : 0.0f;
  const std::uint32_t key[2] = {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  detail::parallel_for(h, 0, (n + 3) / 4, 4096, [&](i64 g0, i64 g1) {
    for (i64 g = g0; g < g1; ++g) {
      const auto ug = static_cast<std::uint64_t>(g);
      const std::uint32_t ctr[4] = {static_cast<std::uint32_t>(ug), static_cast<std::uint32_t>(ug >> 32),
                                    static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(offset >> 32)};
      std::uint32_t r[4];
      philox4x32(ctr, key, r);
      for (i64 k = 0; k < 4 && 4 * g + k < n; ++k) {
        const i64 i = 4 * g + k;
        const float u = static_cast<float>(r[k] >> 8) * 0x1p-24f;
        const bool keep = u >= ratio;
        detail::store_f32(y, y_desc.dtype, yo[z(i)], keep ? detail::load_f32(x, x_desc.dtype, xo[z(i)]) * scale : 0.0f);
        if (mask != nullptr) static_cast<unsigned char*>(mask)[mo[z(i)]] = keep ? 1 : 0;
      }
    }
  });
}

void dropout_backward(Handle& h, float ratio, const TensorDesc& mask_desc, const void* mask, const TensorDesc& dy_desc,
                      const void* dy, const TensorDesc& dx_desc, void* dx) {
  const auto mo = offsets_of(mask_desc), go = offsets_of(dy_desc), xo = offsets_of(dx_desc);
  const float scale = ratio < 1 ? 1.0f / (1.0f - ratio) : 0.0f;
  detail::parallel_for(h, 0, static_cast<i64>(mo.size()), 16384, [&](i64 i0, i64 i1) {
    for (i64 i = i0; i < i1; ++i) {
      const bool keep = static_cast<const unsigned char*>(mask)[mo[z(i)]] != 0;
      detail::store_f32(dx, dx_desc.dtype, xo[z(i)], keep ? detail::load_f32(dy, dy_desc.dtype, go[z(i)]) * scale : 0.0f);
    }
  });
}

// ---- softmax cross-entropy and NLL ---------------------------------------------------------------
void softmax_cross_entropy_forward(Handle& h, const ClassLossParams& p, const Samples& s, const TensorDesc& x_desc,
                                   const void* x, const TensorDesc& loss_desc, void* loss) {
  const i64 n = static_cast<i64>(s.label.size()), C = s.C, xc = x_desc.strides[1];
  const double eps = p.label_smoothing;
  const auto x0 = class0_offsets(x_desc);
  std::vector<double> per(z(n), 0.0);
  detail::parallel_for(h, 0, n, std::max<i64>(1, 4096 / std::max<i64>(1, C)), [&](i64 i0, i64 i1) {
    for (i64 i = i0; i < i1; ++i) {
      const i64 t = s.label[z(i)];
      if (t == p.ignore_index) continue;
      const double l = lse(x, x_desc.dtype, x0[z(i)], xc, C);
      double smooth = 0;
      if (eps != 0)
        for (i64 c = 0; c < C; ++c) smooth += class_weight(p, c) * (detail::load_f32(x, x_desc.dtype, x0[z(i)] + c * xc) - l);
      const double lpt = detail::load_f32(x, x_desc.dtype, x0[z(i)] + t * xc) - l;
      per[z(i)] = -(1 - eps) * class_weight(p, t) * lpt - eps / static_cast<double>(C) * smooth;
    }
  });
  write_loss(per.data(), n, weight_sum(p, s), p.reduction, loss_desc, loss);
}

void softmax_cross_entropy_backward(Handle& h, const ClassLossParams& p, const Samples& s, const TensorDesc& x_desc,
                                    const void* x, const TensorDesc& dloss_desc, const void* dloss,
                                    const TensorDesc& dx_desc, void* dx) {
  const i64 n = static_cast<i64>(s.label.size()), C = s.C;
  const double eps = p.label_smoothing;
  const double W = total_class_weight(p, C);
  const auto g = sample_grads(p.reduction, dloss_desc, dloss, n, weight_sum(p, s));
  const auto d0 = class0_offsets(dx_desc), x0 = class0_offsets(x_desc);
  const i64 dc = dx_desc.strides[1], xc = x_desc.strides[1];
  detail::parallel_for(h, 0, n, std::max<i64>(1, 4096 / std::max<i64>(1, C)), [&](i64 i0, i64 i1) {
    for (i64 i = i0; i < i1; ++i) {
      const i64 t = s.label[z(i)];
      if (t == p.ignore_index) {
        for (i64 c = 0; c < C; ++c) detail::store_f32(dx, dx_desc.dtype, d0[z(i)] + c * dc, 0.0f);
        continue;
      }
      const double l = lse(x, x_desc.dtype, x0[z(i)], xc, C);
      const double wt = class_weight(p, t), a = (1 - eps) * wt + eps / static_cast<double>(C) * W;
      for (i64 c = 0; c < C; ++c) {
        const double pc = std::exp(detail::load_f32(x, x_desc.dtype, x0[z(i)] + c * xc) - l);
        const double v = pc * a - (c == t ? (1 - eps) * wt : 0.0) - eps / static_cast<double>(C) * class_weight(p, c);
        detail::store_f32(dx, dx_desc.dtype, d0[z(i)] + c * dc, static_cast<float>(g[z(i)] * v));
      }
    }
  });
}

void nll_loss_scatter(const ClassLossParams& p, const Samples& s, const TensorDesc& dloss_desc, const void* dloss,
                      const TensorDesc& dx_desc, void* dx) {
  const i64 n = static_cast<i64>(s.label.size());
  const auto g = sample_grads(p.reduction, dloss_desc, dloss, n, weight_sum(p, s));
  const auto d0 = class0_offsets(dx_desc);
  for (i64 i = 0; i < n; ++i) {
    const i64 t = s.label[z(i)];
    if (t != p.ignore_index && s.C > 0)
      detail::store_f32(dx, dx_desc.dtype, d0[z(i)] + t * dx_desc.strides[1], static_cast<float>(-class_weight(p, t) * g[z(i)]));
  }
}

// ---- pointwise losses -----------------------------------------------------------------------------
void point_loss_forward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc, const void* x,
                        const TensorDesc& target_desc, const void* target, const TensorDesc& loss_desc, void* loss) {
  const auto xo = offsets_of(x_desc), to = offsets_of(target_desc);
  std::vector<double> per(xo.size());
  detail::parallel_for(h, 0, static_cast<i64>(per.size()), 16384, [&](i64 i0, i64 i1) {
    for (i64 i = i0; i < i1; ++i)
      per[z(i)] = point_value(p, detail::load_f32(x, x_desc.dtype, xo[z(i)]), detail::load_f32(target, target_desc.dtype, to[z(i)]));
  });
  write_loss(per.data(), static_cast<i64>(per.size()), static_cast<double>(per.size()), p.reduction, loss_desc, loss);
}

void point_loss_backward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc, const void* x,
                         const TensorDesc& target_desc, const void* target, const TensorDesc& dloss_desc,
                         const void* dloss, const TensorDesc& dx_desc, void* dx) {
  const auto xo = offsets_of(x_desc), to = offsets_of(target_desc), go = offsets_of(dx_desc);
  const i64 n = static_cast<i64>(xo.size());
  const auto g = sample_grads(p.reduction, dloss_desc, dloss, n, static_cast<double>(n));
  detail::parallel_for(h, 0, n, 16384, [&](i64 i0, i64 i1) {
    for (i64 i = i0; i < i1; ++i) {
      const double v = point_grad(p, detail::load_f32(x, x_desc.dtype, xo[z(i)]), detail::load_f32(target, target_desc.dtype, to[z(i)]));
      detail::store_f32(dx, dx_desc.dtype, go[z(i)], static_cast<float>(g[z(i)] * v));
    }
  });
}

}  // namespace training_ref
}  // namespace tessera::dnn
