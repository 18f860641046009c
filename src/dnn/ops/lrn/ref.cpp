// Reference LRN: the tensor copied into dense f64 arrays, every window summed directly, then
//   y = x * D^-beta,  D = k + alpha/n * sum_window x^2
//   dx_i = dy_i * D_i^-beta - 2 beta alpha/n * x_i * sum_{j : i in window(j)} dy_j x_j
//   D_j^(-beta-1)
// written back through the caller's strides (any strides, f32/bf16/f16).
#include <cmath>
#include <vector>

#include "lrn.hpp"

namespace tessera::dnn::lrn {
namespace {

using i64 = std::int64_t;

// Offsets of the spatial elements of d in row-major order.
std::vector<i64> spatial_offsets(const TensorDesc& d) {
  std::vector<i64> off = {0};
  for (int i = 2; i < d.rank(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    std::vector<i64> next;
    for (i64 o : off)
      for (i64 j = 0; j < d.dims[k]; ++j) next.push_back(o + j * d.strides[k]);
    off.swap(next);
  }
  return off;
}

std::vector<double> dense(const TensorDesc& d, const void* p) {
  const std::vector<i64> sp = spatial_offsets(d);
  std::vector<double> v;
  for (i64 n = 0; n < d.dims[0]; ++n)
    for (i64 c = 0; c < d.dims[1]; ++c)
      for (i64 o : sp)
        v.push_back(detail::load_f32(p, d.dtype, n * d.strides[0] + c * d.strides[1] + o));
  return v;
}

void store(const TensorDesc& d, void* p, const std::vector<double>& v) {
  const std::vector<i64> sp = spatial_offsets(d);
  std::size_t e = 0;
  for (i64 n = 0; n < d.dims[0]; ++n)
    for (i64 c = 0; c < d.dims[1]; ++c)
      for (i64 o : sp)
        detail::store_f32(p, d.dtype, n * d.strides[0] + c * d.strides[1] + o,
                          static_cast<float>(v[e++]));
}

// The dense problem: N x C x (D, H, W) (missing spatial dims of size 1).
struct Shape {
  i64 n = 1, c = 1, sp[3] = {1, 1, 1};
  i64 plane() const { return sp[0] * sp[1] * sp[2]; }
};

// Calls f(j) for the flat index j of every element whose window (mirrored: a window of
// [-hi, +lo] when `mirror`) contains element i = (n, c, pos).
template <typename F>
void for_window(const Shape& s, const LrnDesc& d, int spatial, i64 n, i64 c, const i64* pos,
                bool mirror, F&& f) {
  const i64 lo = mirror ? window_hi(d.size) : window_lo(d.size);
  const i64 hi = mirror ? window_lo(d.size) : window_hi(d.size);
  const i64 plane = s.plane();
  if (d.mode == LrnMode::kAcrossChannels) {
    const i64 at = (pos[0] * s.sp[1] + pos[1]) * s.sp[2] + pos[2];
    for (i64 j = c - lo; j <= c + hi; ++j)
      if (j >= 0 && j < s.c) f((n * s.c + j) * plane + at);
    return;
  }
  i64 lo3[3], hi3[3];
  for (int i = 0; i < 3; ++i) {
    const bool used = i >= 3 - spatial;
    lo3[i] = used ? pos[i] - lo : pos[i];
    hi3[i] = used ? pos[i] + hi : pos[i];
  }
  for (i64 a = lo3[0]; a <= hi3[0]; ++a)
    for (i64 b = lo3[1]; b <= hi3[1]; ++b)
      for (i64 e = lo3[2]; e <= hi3[2]; ++e)
        if (a >= 0 && a < s.sp[0] && b >= 0 && b < s.sp[1] && e >= 0 && e < s.sp[2])
          f((n * s.c + c) * plane + (a * s.sp[1] + b) * s.sp[2] + e);
}

}  // namespace

Status lrn_ref(Handle&, const LrnProblem& p) {
  const TensorDesc& xd = p.x_desc;
  Shape s;
  s.n = xd.dims[0];
  s.c = xd.dims[1];
  const int spatial = xd.rank() - 2;
  if (p.d.mode == LrnMode::kAcrossChannels) {
    s.sp[2] = 1;
    for (int i = 2; i < xd.rank(); ++i) s.sp[2] *= xd.dims[static_cast<std::size_t>(i)];
  } else {
    for (int i = 0; i < spatial; ++i)
      s.sp[3 - spatial + i] = xd.dims[static_cast<std::size_t>(2 + i)];
  }
  const double n_win = p.d.mode == LrnMode::kAcrossChannels
                           ? static_cast<double>(p.d.size)
                           : std::pow(static_cast<double>(p.d.size), spatial);
  const double an = p.d.alpha / n_win;
  const std::vector<double> x = dense(xd, p.x);
  std::vector<double> den(x.size());
  auto each = [&](auto&& f) {
    for (i64 n = 0; n < s.n; ++n)
      for (i64 c = 0; c < s.c; ++c)
        for (i64 a = 0; a < s.sp[0]; ++a)
          for (i64 b = 0; b < s.sp[1]; ++b)
            for (i64 e = 0; e < s.sp[2]; ++e) {
              const i64 pos[3] = {a, b, e};
              f(n, c, pos,
                static_cast<std::size_t>((n * s.c + c) * s.plane() + (a * s.sp[1] + b) * s.sp[2] +
                                         e));
            }
  };
  each([&](i64 n, i64 c, const i64* pos, std::size_t i) {
    double sum = 0.0;
    for_window(s, p.d, spatial, n, c, pos, false, [&](i64 j) {
      sum += x[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(j)];
    });
    den[i] = p.d.k + an * sum;
  });
  std::vector<double> out(x.size());
  if (!p.backward) {
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] * std::pow(den[i], -p.d.beta);
    store(p.y_desc, p.y, out);
    return Status::ok();
  }
  const std::vector<double> dy = dense(p.y_desc, p.dy);
  std::vector<double> t(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    t[i] = dy[i] * x[i] * std::pow(den[i], -p.d.beta - 1.0);
  each([&](i64 n, i64 c, const i64* pos, std::size_t i) {
    double sum = 0.0;
    for_window(s, p.d, spatial, n, c, pos, true,
               [&](i64 j) { sum += t[static_cast<std::size_t>(j)]; });
    out[i] = dy[i] * std::pow(den[i], -p.d.beta) - 2.0 * p.d.beta * an * x[i] * sum;
  });
  store(p.dx_desc, p.dx, out);
  return Status::ok();
}

}  // namespace tessera::dnn::lrn
