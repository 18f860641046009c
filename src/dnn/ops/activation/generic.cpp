// Activation kernels in plain C++ (no wide-vector flags): the scalar definitions of
// act_scalar.hpp with the kind fixed at compile time, so results equal the reference's.
#include <cmath>
#include <cstdint>
#include <utility>

#include "act_scalar.hpp"
#include "generic_storage.hpp"
#include "kernels.hpp"

namespace tessera::dnn::act_kernels {
namespace {

using i64 = std::int64_t;


template <int K, int S>
void act_forward(const Params& p, i64 n, const void* x, void* y) {
  const Activation a{static_cast<ActKind>(K), p.alpha, p.beta};
  for (i64 i = 0; i < n; ++i) st<S>(y, i, act::forward(a, ld<S>(x, i)));
}

template <int K, int S>
void act_backward(const Params& p, i64 n, const void* x, const void* dy, void* dx) {
  const Activation a{static_cast<ActKind>(K), p.alpha, p.beta};
  for (i64 i = 0; i < n; ++i) st<S>(dx, i, act::derivative(a, ld<S>(x, i)) * ld<S>(dy, i));
}

template <int S>
void prelu_fwd_one(i64 n, float slope, const void* x, void* y) {
  for (i64 i = 0; i < n; ++i) {
    const float v = ld<S>(x, i);
    st<S>(y, i, v > 0.0f ? v : slope * v);
  }
}

template <int S>
void prelu_fwd_row(i64 n, const float* slope, const void* x, void* y) {
  for (i64 i = 0; i < n; ++i) {
    const float v = ld<S>(x, i);
    st<S>(y, i, v > 0.0f ? v : slope[i] * v);
  }
}

template <int S>
double prelu_bwd_one(i64 n, float slope, const void* x, const void* dy, void* dx) {
  double sum = 0.0;
  for (i64 i = 0; i < n; ++i) {
    const float v = ld<S>(x, i), g = ld<S>(dy, i);
    if (!(v > 0.0f)) sum += static_cast<double>(v) * g;
    st<S>(dx, i, v > 0.0f ? g : slope * g);
  }
  return sum;
}

template <int S>
void prelu_bwd_row(i64 n, const float* slope, const void* x, const void* dy, void* dx,
                   double* acc) {
  for (i64 i = 0; i < n; ++i) {
    const float v = ld<S>(x, i), g = ld<S>(dy, i);
    if (!(v > 0.0f)) acc[i] += static_cast<double>(v) * g;
    st<S>(dx, i, v > 0.0f ? g : slope[i] * g);
  }
}

template <int S>
void crelu_fwd(i64 n, const void* x, void* y_pos, void* y_neg) {
  const Activation relu{ActKind::kRelu, 0.0f, 0.0f};
  for (i64 i = 0; i < n; ++i) {
    const float v = ld<S>(x, i);
    st<S>(y_pos, i, act::forward(relu, v));
    st<S>(y_neg, i, act::forward(relu, -v));
  }
}

template <int S>
void crelu_bwd(i64 n, const void* x, const void* dy_pos, const void* dy_neg, void* dx) {
  const Activation relu{ActKind::kRelu, 0.0f, 0.0f};
  for (i64 i = 0; i < n; ++i) {
    const float v = ld<S>(x, i);
    st<S>(
        dx, i,
        act::derivative(relu, v) * ld<S>(dy_pos, i) - act::derivative(relu, -v) * ld<S>(dy_neg, i));
  }
}

template <float (*Fn)(float)>
void math_array(i64 n, const float* x, float* y) {
  for (i64 i = 0; i < n; ++i) y[i] = Fn(x[i]);
}
float math_exp(float x) {
  return std::exp(x);
}
float math_expm1(float x) {
  return std::expm1(x);
}
float math_tanh(float x) {
  return std::tanh(x);
}
float math_erf(float x) {
  return std::erf(x);
}
float math_log1p(float x) {
  return std::log1p(x);
}
float math_log(float x) {
  return std::log(x);
}
// The trigonometric and hyperbolic functions through f64, as the tensor ops' scalar
// definitions (correctly rounded but for rare double roundings).
template <double (*Fn)(double)>
float via_f64(float x) {
  return static_cast<float>(Fn(static_cast<double>(x)));
}
double f64_sin(double x) {
  return std::sin(x);
}
double f64_cos(double x) {
  return std::cos(x);
}
double f64_tan(double x) {
  return std::tan(x);
}
double f64_asin(double x) {
  return std::asin(x);
}
double f64_acos(double x) {
  return std::acos(x);
}
double f64_atan(double x) {
  return std::atan(x);
}
double f64_sinh(double x) {
  return std::sinh(x);
}
double f64_cosh(double x) {
  return std::cosh(x);
}
float math_rsqrt(float x) {
  return 1.0f / std::sqrt(x);
}
float math_sqrt(float x) {
  return std::sqrt(x);
}

template <int K>
constexpr void fill_kind(Kernels& t) {
  t.fwd[K][kF32] = &act_forward<K, kF32>;
  t.fwd[K][kBF16] = &act_forward<K, kBF16>;
  t.fwd[K][kF16] = &act_forward<K, kF16>;
  t.fwd[K][kBF16Native] = &act_forward<K, kBF16>;
  t.bwd[K][kF32] = &act_backward<K, kF32>;
  t.bwd[K][kBF16] = &act_backward<K, kBF16>;
  t.bwd[K][kF16] = &act_backward<K, kF16>;
}

template <int S>
constexpr void fill_storage(Kernels& t) {
  t.prelu_fwd_one[S] = &prelu_fwd_one<S>;
  t.prelu_fwd_row[S] = &prelu_fwd_row<S>;
  t.prelu_bwd_one[S] = &prelu_bwd_one<S>;
  t.prelu_bwd_row[S] = &prelu_bwd_row<S>;
  t.crelu_fwd[S] = &crelu_fwd<S>;
  t.crelu_bwd[S] = &crelu_bwd<S>;
}

void exp_rows(i64 n, i64 rows, i64 ldx, const float* x, const double* shift, float* y) {
  for (i64 r = 0; r < rows; ++r, x += ldx, y += n) {
    const auto s = static_cast<float>(shift[r]);
    for (i64 i = 0; i < n; ++i) y[i] = x[i] - s;
    math_array<math_exp>(n, y, y);
  }
}
void exp_sub(i64 n, const float* x, const float* m, float* y) {
  for (i64 i = 0; i < n; ++i) y[i] = x[i] - m[i];
  math_array<math_exp>(n, y, y);
}
template <float (*Fn)(float), int S>
void math_storage(i64 n, const void* x, void* y, bool) {
  for (i64 i = 0; i < n; ++i) st<S>(y, i, Fn(ld<S>(x, i)));
}
template <float (*Fn)(float)>
constexpr void set_math(Kernels& t, int k) {
  t.math[k] = &math_array<Fn>;
  t.math_storage[k][kF32] = &math_storage<Fn, kF32>;
  t.math_storage[k][kBF16] = &math_storage<Fn, kBF16>;
  t.math_storage[k][kF16] = &math_storage<Fn, kF16>;
  t.math_storage[k][kBF16Native] = &math_storage<Fn, kBF16>;
}

template <int... K>
constexpr Kernels make_kernels(std::integer_sequence<int, K...>) {
  Kernels t{};
  t.isa = "generic";
  (fill_kind<K>(t), ...);
  fill_storage<kF32>(t);
  fill_storage<kBF16>(t);
  fill_storage<kF16>(t);
  set_math<math_exp>(t, kMathExp);
  set_math<math_expm1>(t, kMathExpm1);
  set_math<math_tanh>(t, kMathTanh);
  set_math<math_erf>(t, kMathErf);
  set_math<act::sigmoid>(t, kMathSigmoid);
  set_math<math_log1p>(t, kMathLog1p01);
  set_math<math_log>(t, kMathLogGe1);
  set_math<math_log>(t, kMathLog);
  set_math<via_f64<f64_sin>>(t, kMathSin);
  set_math<via_f64<f64_cos>>(t, kMathCos);
  set_math<via_f64<f64_tan>>(t, kMathTan);
  set_math<via_f64<f64_asin>>(t, kMathAsin);
  set_math<via_f64<f64_acos>>(t, kMathAcos);
  set_math<via_f64<f64_atan>>(t, kMathAtan);
  set_math<via_f64<f64_sinh>>(t, kMathSinh);
  set_math<via_f64<f64_cosh>>(t, kMathCosh);
  set_math<math_rsqrt>(t, kMathRsqrt);
  set_math<math_sqrt>(t, kMathSqrt);
  set_math<math_exp>(t, kMathExpLe0);
  t.exp_rows = &exp_rows;
  t.exp_sub = &exp_sub;
  return t;
}

}  // namespace

extern const Kernels kGeneric = make_kernels(std::make_integer_sequence<int, kNumKinds>{});

}  // namespace tessera::dnn::act_kernels
