// Dropout and loss kernels in plain C++ over contiguous arrays: f32 arithmetic (softmax
// cross-entropy's exponentials in f64), sums in f64 in element order.
#include <cmath>
#include <cstdint>

#include "../activation/generic_storage.hpp"
#include "kernels.hpp"
#include "tessera/dnn/training.hpp"

namespace tessera::dnn::training_kernels {
namespace {

using act_kernels::ld;
using act_kernels::st;

template <int S>
void dropout_fwd(i64 first, i64 n, const void* x, void* y, unsigned char* mask, const DropoutArgs& a, bool) {
  for (i64 g = first / 4; 4 * g < first + n; ++g) {
    const auto ug = static_cast<std::uint64_t>(g);
    const std::uint32_t ctr[4] = {static_cast<std::uint32_t>(ug), static_cast<std::uint32_t>(ug >> 32),
                                  a.offset[0], a.offset[1]};
    std::uint32_t r[4];
    philox4x32(ctr, a.key, r);
    for (i64 k = 0; k < 4 && 4 * g + k < first + n; ++k) {
      const i64 i = 4 * g + k - first;
      const bool keep = (r[k] >> 8) >= a.threshold;
      st<S>(y, i, keep ? ld<S>(x, i) * a.scale : 0.0f);
      if (mask != nullptr) mask[i] = keep ? 1 : 0;
    }
  }
}

template <int S>
void dropout_bwd(i64 n, const unsigned char* mask, const void* dy, void* dx, float scale, bool) {
  for (i64 i = 0; i < n; ++i) st<S>(dx, i, mask[i] != 0 ? ld<S>(dy, i) * scale : 0.0f);
}

float sign_of(float d) { return d > 0 ? 1.0f : d < 0 ? -1.0f : 0.0f; }

template <int K>
float point_value(float x, float t, const PointArgs& a) {
  const float d = x - t;
  if constexpr (K == kMse) return d * d;
  if constexpr (K == kL1) return std::fabs(d);
  if constexpr (K == kSmoothL1) return std::fabs(d) < a.beta ? 0.5f * d * d / a.beta : std::fabs(d) - 0.5f * a.beta;
  const float l = std::log1p(std::exp(-std::fabs(x)));
  return a.pos_weight * t * (std::fmax(-x, 0.0f) + l) + (1 - t) * (std::fmax(x, 0.0f) + l);
}
template <int K>
float point_grad(float x, float t, const PointArgs& a) {
  const float d = x - t;
  if constexpr (K == kMse) return 2 * d;
  if constexpr (K == kL1) return sign_of(d);
  if constexpr (K == kSmoothL1) return std::fabs(d) < a.beta ? d / a.beta : sign_of(d);
  const float s = 1 / (1 + std::exp(-x));
  return -a.pos_weight * t * (1 - s) + (1 - t) * s;
}

template <int K, int S>
double point_fwd(i64 n, const void* x, const void* t, void* out, const PointArgs& a, bool) {
  double sum = 0;
  for (i64 i = 0; i < n; ++i) {
    const float v = point_value<K>(ld<S>(x, i), ld<S>(t, i), a);
    if (out != nullptr) st<S>(out, i, v);
    else sum += v;
  }
  return sum;
}
template <int K, int S>
void point_bwd(i64 n, const void* x, const void* t, const void* g, float gs, void* dx, const PointArgs& a, bool) {
  for (i64 i = 0; i < n; ++i)
    st<S>(dx, i, (g != nullptr ? ld<S>(g, i) : gs) * point_grad<K>(ld<S>(x, i), ld<S>(t, i), a));
}

// One sample's scores at x + base + c * step, c in [0, len).
template <int S>
double line_lse(i64 len, const void* x, i64 base, i64 step) {
  float m = -INFINITY;
  for (i64 c = 0; c < len; ++c) m = std::fmax(m, ld<S>(x, base + c * step));
  if (std::isinf(m)) return m;
  double s = 0;
  for (i64 c = 0; c < len; ++c) s += std::exp(static_cast<double>(ld<S>(x, base + c * step)) - m);
  return m + std::log(s);
}
template <int S>
double line_wx(i64 len, const void* x, const float* w, i64 base, i64 step) {
  double s = 0;
  for (i64 c = 0; c < len; ++c) s += static_cast<double>(w != nullptr ? w[c] : 1.0f) * ld<S>(x, base + c * step);
  return s;
}
// Sample j of the coefficients; its scores at x + base + c * step.
template <int S>
void line_bwd(i64 len, const void* x, const float* w, const CeCoef& k, i64 j, void* dx, i64 base, i64 step) {
  const double lse = k.label[j] < 0 ? 0.0 : line_lse<S>(len, x, base, step);
  for (i64 c = 0; c < len; ++c) {
    if (k.label[j] < 0) {
      st<S>(dx, base + c * step, 0.0f);
      continue;
    }
    const float p = static_cast<float>(std::exp(static_cast<double>(ld<S>(x, base + c * step)) - lse));
    float v = k.ka[j] * p - k.kb[j] * (w != nullptr ? w[c] : 1.0f);
    if (c == static_cast<i64>(k.label[j])) v -= k.kt[j];
    st<S>(dx, base + c * step, v);
  }
}
template <int S>
void ce_rows_fwd(i64 rows, i64 len, const void* x, const float* w, double* lse, double* wx) {
  for (i64 r = 0; r < rows; ++r) {
    lse[r] = line_lse<S>(len, x, r * len, 1);
    if (wx != nullptr) wx[r] = line_wx<S>(len, x, w, r * len, 1);
  }
}
template <int S>
void ce_rows_bwd(i64 rows, i64 len, const void* x, const float* w, const CeCoef& k, void* dx, bool) {
  for (i64 r = 0; r < rows; ++r) line_bwd<S>(len, x, w, k, r, dx, r * len, 1);
}
template <int S>
void ce_cols_fwd(i64 len, i64 inner, i64 c0, i64 c1, const void* x, const float* w, double* lse, double* wx) {
  for (i64 j = c0; j < c1; ++j) {
    lse[j] = line_lse<S>(len, x, j, inner);
    if (wx != nullptr) wx[j] = line_wx<S>(len, x, w, j, inner);
  }
}
template <int S>
void ce_cols_bwd(i64 len, i64 inner, i64 c0, i64 c1, const void* x, const float* w, const CeCoef& k, void* dx) {
  for (i64 j = c0; j < c1; ++j) line_bwd<S>(len, x, w, k, j - c0, dx, j, inner);
}

template <int K, int S>
constexpr void fill_point(Kernels& k) {
  k.point_fwd[K][S] = &point_fwd<K, S>;
  k.point_bwd[K][S] = &point_bwd<K, S>;
}
template <int S>
constexpr void fill_storage(Kernels& k) {
  k.dropout_fwd[S] = &dropout_fwd<S>;
  k.dropout_bwd[S] = &dropout_bwd<S>;
  k.ce_rows_fwd[S] = &ce_rows_fwd<S>;
  k.ce_rows_bwd[S] = &ce_rows_bwd<S>;
  k.ce_cols_fwd[S] = &ce_cols_fwd<S>;
  k.ce_cols_bwd[S] = &ce_cols_bwd<S>;
  fill_point<kMse, S>(k);
  fill_point<kL1, S>(k);
  fill_point<kSmoothL1, S>(k);
  fill_point<kBce, S>(k);
}
constexpr Kernels make_kernels() {
  Kernels k{};
  k.isa = "generic";
  fill_storage<act_kernels::kF32>(k);
  fill_storage<act_kernels::kBF16>(k);
  fill_storage<act_kernels::kF16>(k);
  return k;
}

}  // namespace

extern const Kernels kGeneric = make_kernels();

}  // namespace tessera::dnn::training_kernels
