// Level-1 kernels in plain C++: the fallback on CPUs without AVX2, and the readable statement
// of what every ISA file computes.
#include <cmath>
#include <cstring>

#include <tessera/core/half.hpp>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

template <typename T>
T dot(std::int64_t n, const T* x, const T* y) {
  T s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

template <typename T>
void axpy(std::int64_t n, T alpha, const T* x, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <typename T>
void scal(std::int64_t n, T alpha, T* x) {
  for (std::int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

template <typename T>
void rot(std::int64_t n, T* x, T* y, T c, T s) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T xi = x[i], yi = y[i];
    x[i] = c * xi + s * yi;
    y[i] = c * yi - s * xi;
  }
}

template <typename T>
T asum(std::int64_t n, const T* x) {
  T s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += std::fabs(x[i]);
  return s;
}

template <typename T>
double sumsq(std::int64_t n, const T* x, T* max_abs) {
  double s = 0;
  T m = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    s += v * v;
    if (std::fabs(x[i]) > m) m = std::fabs(x[i]);
  }
  *max_abs = m;
  return s;
}

// First index whose |x_i| beats every earlier one under `better`; NaNs never win.
template <typename T, typename Better>
std::int64_t find_extreme(std::int64_t n, const T* x, T* value, Better better) {
  std::int64_t best = -1;
  T best_value = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = std::fabs(x[i]);
    if (std::isnan(v)) continue;
    if (best < 0 || better(v, best_value)) {
      best = i;
      best_value = v;
    }
  }
  *value = best_value;
  return best;
}

template <typename T>
std::int64_t iamax(std::int64_t n, const T* x, T* value) {
  return find_extreme(n, x, value, [](T a, T b) { return a > b; });
}

template <typename T>
std::int64_t iamin(std::int64_t n, const T* x, T* value) {
  return find_extreme(n, x, value, [](T a, T b) { return a < b; });
}

template <typename R>
void complex_dot(std::int64_t n, const R* x, const R* y, bool conj_x, R* result) {
  R re = 0, im = 0;
  const R sign = conj_x ? R(-1) : R(1);
  for (std::int64_t i = 0; i < n; ++i) {
    const R xr = x[2 * i], xi = sign * x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
    re += xr * yr - xi * yi;
    im += xr * yi + xi * yr;
  }
  result[0] = re;
  result[1] = im;
}

template <typename R>
void complex_axpy(std::int64_t n, R ar, R ai, const R* x, R* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    const R xr = x[2 * i], xi = x[2 * i + 1];
    y[2 * i] += ar * xr - ai * xi;
    y[2 * i + 1] += ar * xi + ai * xr;
  }
}

template <typename R>
void complex_scal(std::int64_t n, R ar, R ai, R* x) {
  for (std::int64_t i = 0; i < n; ++i) {
    const R xr = x[2 * i], xi = x[2 * i + 1];
    x[2 * i] = ar * xr - ai * xi;
    x[2 * i + 1] = ar * xi + ai * xr;
  }
}

float widen_f16(std::uint16_t b) {
  return f16_bits_to_f32(b);
}
float widen_bf16(std::uint16_t b) {
  return bf16_bits_to_f32(b);
}

template <float (*Widen)(std::uint16_t)>
float half_dot(std::int64_t n, const std::uint16_t* x, const std::uint16_t* y) {
  float s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += Widen(x[i]) * Widen(y[i]);
  return s;
}

template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
void half_axpy(std::int64_t n, float alpha, const std::uint16_t* x, std::uint16_t* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = Narrow(Widen(y[i]) + alpha * Widen(x[i]));
}

template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
void half_scal(std::int64_t n, float alpha, std::uint16_t* x) {
  for (std::int64_t i = 0; i < n; ++i) x[i] = Narrow(alpha * Widen(x[i]));
}

void copy_stream(std::int64_t bytes, const void* x, void* y) {
  std::memcpy(y, x, static_cast<std::size_t>(bytes));
}

template <typename T>
constexpr RealLevel1<T> real_table() {
  return {dot<T>, axpy<T>, scal<T>, rot<T>, asum<T>, sumsq<T>, iamax<T>, iamin<T>};
}

}  // namespace

extern const Level1Kernels kLevel1Generic = {
    "generic",
    copy_stream,
    real_table<float>(),
    real_table<double>(),
    {complex_dot<float>, complex_axpy<float>, complex_scal<float>},
    {complex_dot<double>, complex_axpy<double>, complex_scal<double>},
    {half_dot<widen_f16>, half_axpy<widen_f16, f32_to_f16_bits>,
     half_scal<widen_f16, f32_to_f16_bits>},
    {half_dot<widen_bf16>, half_axpy<widen_bf16, f32_to_bf16_bits>,
     half_scal<widen_bf16, f32_to_bf16_bits>},
};

}  // namespace tessera::blas::kernels
