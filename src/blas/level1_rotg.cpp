// rotg: constructs a Givens rotation with the safe scaling of reference BLAS 3.10+
// (Anderson, "Algorithm 978: Safe Scaling in the Level 1 BLAS", TOMS 2017). No handle, no
// threads, nothing to replay: the bench log has no line for it.
//
// Real:    [ c  s ] [ a ]   [ r ]    on exit a = r and b = z, the reconstruction value
//          [-s  c ] [ b ] = [ 0 ]    (s if |a| > |b|, else 1/c, or 1 when c == 0).
// Complex: [ c        s ] [ a ]   [ r ]   with c real; on exit a = r, b is unchanged.
//          [-conj(s)  c ] [ b ] = [ 0 ]
#include <cmath>
#include <limits>

#include "common.hpp"

namespace tessera::blas {
namespace {

template <typename R>
struct Safe {
  static constexpr int kMinExp = std::numeric_limits<R>::min_exponent;  // -125 / -1021
  static constexpr int kMaxExp = std::numeric_limits<R>::max_exponent;  // 128 / 1024
  // 2^max(minexp - 1, 1 - maxexp) and its reciprocal: the smallest normal number and 2^(maxexp-1).
  static R min() { return std::ldexp(R(1), std::max(kMinExp - 1, 1 - kMaxExp)); }
  static R max() { return std::ldexp(R(1), std::max(1 - kMinExp, kMaxExp - 1)); }
  static R root_min() { return std::sqrt(min() / std::numeric_limits<R>::epsilon()); }
  static R root_max() { return std::sqrt(max() * std::numeric_limits<R>::epsilon()); }
};

template <typename R>
void rotg_real(R* a, R* b, R* c, R* s) {
  const R anorm = std::fabs(*a), bnorm = std::fabs(*b);
  if (bnorm == 0) {
    *c = 1;
    *s = 0;
    *b = 0;
    return;
  }
  if (anorm == 0) {
    *c = 0;
    *s = 1;
    *a = *b;
    *b = 1;
    return;
  }
  const R scale = std::min(Safe<R>::max(), std::max({Safe<R>::min(), anorm, bnorm}));
  const R sigma = std::copysign(R(1), anorm > bnorm ? *a : *b);
  const R as = *a / scale, bs = *b / scale;
  const R r = sigma * (scale * std::sqrt(as * as + bs * bs));
  *c = *a / r;
  *s = *b / r;
  const R z = anorm > bnorm ? *s : (*c != 0 ? 1 / *c : R(1));
  *a = r;
  *b = z;
}

template <typename R>
R abs_sq(std::complex<R> v) {
  return v.real() * v.real() + v.imag() * v.imag();
}
template <typename R>
R max_part(std::complex<R> v) {
  return std::max(std::fabs(v.real()), std::fabs(v.imag()));
}
template <typename R>
std::complex<R> scaled(std::complex<R> v, R k) {
  return {v.real() * k, v.imag() * k};
}
template <typename R>
std::complex<R> mul(std::complex<R> x, std::complex<R> y) {
  return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

template <typename R>
void rotg_complex(std::complex<R>* a, const std::complex<R>* b, R* c, std::complex<R>* s) {
  using C = std::complex<R>;
  const C f = *a, g = *b;
  const R safmin = Safe<R>::min(), safmax = Safe<R>::max();
  const R rtmin = Safe<R>::root_min(), rtmax = Safe<R>::root_max();
  C r;
  if (g == C(0)) {
    *c = 1;
    *s = 0;
    r = f;
  } else if (f == C(0)) {
    *c = 0;
    const R g1 = max_part(g);
    if (g1 > rtmin && g1 < rtmax) {
      const R d = std::sqrt(abs_sq(g));
      *s = scaled(std::conj(g), 1 / d);
      r = d;
    } else {
      const R u = std::min(safmax, std::max(safmin, g1));
      const C gs = scaled(g, 1 / u);
      const R d = std::sqrt(abs_sq(gs));
      *s = scaled(std::conj(gs), 1 / d);
      r = d * u;
    }
  } else {
    const R f1 = max_part(f), g1 = max_part(g);
    // d = sqrt(f2 * h2) when the product is safe, else as two roots.
    auto root = [&](R f2, R h2) {
      return f2 > rtmin && h2 < rtmax ? std::sqrt(f2 * h2) : std::sqrt(f2) * std::sqrt(h2);
    };
    if (f1 > rtmin && f1 < rtmax && g1 > rtmin && g1 < rtmax) {
      const R f2 = abs_sq(f), h2 = f2 + abs_sq(g);
      const R p = 1 / root(f2, h2);
      *c = f2 * p;
      *s = mul(std::conj(g), scaled(f, p));
      r = scaled(f, h2 * p);
    } else {
      const R u = std::min(safmax, std::max({safmin, f1, g1}));
      const C gs = scaled(g, 1 / u);
      const R g2 = abs_sq(gs);
      R w = 1, f2, h2;
      C fs;
      if (f1 / u < rtmin) {  // f would lose accuracy scaled by u: give it its own scale
        const R v = std::min(safmax, std::max(safmin, f1));
        w = v / u;
        fs = scaled(f, 1 / v);
        f2 = abs_sq(fs);
        h2 = f2 * w * w + g2;
      } else {
        fs = scaled(f, 1 / u);
        f2 = abs_sq(fs);
        h2 = f2 + g2;
      }
      const R p = 1 / root(f2, h2);
      *c = (f2 * p) * w;
      *s = mul(std::conj(gs), scaled(fs, p));
      r = scaled(scaled(fs, h2 * p), u);
    }
  }
  *a = r;
}

}  // namespace

template <typename T>
Status rotg(T* a, T* b, real_t<T>* c, T* s) {
  const std::string fn = detail::fn_name<T>("rotg");
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, true));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "b", b, true));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "c", c, true));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "s", s, true));
  if constexpr (is_complex_v<T>)
    rotg_complex(a, b, c, s);
  else
    rotg_real(a, b, c, s);
  return Status::ok();
}

template Status rotg<float>(float*, float*, float*, float*);
template Status rotg<double>(double*, double*, double*, double*);
template Status rotg<cfloat>(cfloat*, cfloat*, float*, cfloat*);
template Status rotg<cdouble>(cdouble*, cdouble*, double*, cdouble*);

}  // namespace tessera::blas
