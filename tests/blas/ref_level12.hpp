// Plain reference implementations of BLAS levels 1 and 2, written as reference BLAS's loops
// (column-major, negative increments walk from the far end), plus the test data helpers the
// level-1 and level-2 suites share. Computed in T itself: with small-integer data every path
// must match them exactly; with random data within a rounding bound.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

#include <tessera/blas.hpp>

namespace tessera::blas::ref {

using std::int64_t;

inline int64_t at(int64_t i, int64_t n, int64_t inc) {
  return inc >= 0 ? i * inc : (n - 1 - i) * (-inc);
}
// Storage a strided vector of n elements needs.
inline int64_t span(int64_t n, int64_t inc) {
  return n <= 0 ? 1 : 1 + (n - 1) * (inc < 0 ? -inc : inc);
}

template <typename T>
T conj_if(T v, bool conj) {
  if constexpr (is_complex_v<T>)
    return conj ? std::conj(v) : v;
  else
    return v;
}
template <typename T>
real_t<T> abs1(T v) {
  if constexpr (is_complex_v<T>)
    return std::fabs(v.real()) + std::fabs(v.imag());
  else
    return std::fabs(v);
}

// re + i*im, or just re for a real T.
template <typename T>
T make(double re, double im) {
  if constexpr (is_complex_v<T>)
    return T(real_t<T>(re), real_t<T>(im));
  else
    return T(re);
}

// ---- data -----------------------------------------------------------------------------------

// Small integers (exact in every type and every summation order for the sizes tested) or
// uniform values in [-1, 1].
template <typename T>
T small_int(std::mt19937_64& g) {
  std::uniform_int_distribution<int> d(-4, 4);
  if constexpr (is_complex_v<T>)
    return T(real_t<T>(d(g)), real_t<T>(d(g)));
  else
    return T(real_t<T>(d(g)));
}
template <typename T>
T uniform(std::mt19937_64& g) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  if constexpr (is_complex_v<T>)
    return T(real_t<T>(d(g)), real_t<T>(d(g)));
  else
    return T(real_t<T>(d(g)));
}
template <typename T>
std::vector<T> vec(int64_t len, std::mt19937_64& g, bool integers) {
  std::vector<T> v(static_cast<std::size_t>(len));
  for (T& e : v) e = integers ? small_int<T>(g) : uniform<T>(g);
  return v;
}

// ---- level 1 --------------------------------------------------------------------------------

// Reference BLAS's iamax/iamin (0-based): the running extreme starts at element 0.
template <typename T, bool Largest>
int64_t iext(int64_t n, const T* x, int64_t incx) {
  if (n <= 0 || incx <= 0) return 0;
  int64_t best = 0;
  real_t<T> v = abs1(x[0]);
  for (int64_t i = 1; i < n; ++i) {
    const real_t<T> a = abs1(x[i * incx]);
    if (Largest ? a > v : a < v) {
      best = i;
      v = a;
    }
  }
  return best;
}

template <typename T>
real_t<T> asum(int64_t n, const T* x, int64_t incx) {
  real_t<T> s = 0;
  if (incx <= 0) return 0;
  for (int64_t i = 0; i < n; ++i) s += abs1(x[i * incx]);
  return s;
}

template <typename T>
void axpy(int64_t n, T alpha, const T* x, int64_t incx, T* y, int64_t incy) {
  for (int64_t i = 0; i < n; ++i) y[at(i, n, incy)] += alpha * x[at(i, n, incx)];
}

template <typename T>
T dot(int64_t n, const T* x, int64_t incx, const T* y, int64_t incy, bool conj) {
  T s{};
  for (int64_t i = 0; i < n; ++i) s += conj_if(x[at(i, n, incx)], conj) * y[at(i, n, incy)];
  return s;
}

// sqrt(sum |x_i|^2) in long double: wide enough that huge and tiny values need no scaling.
template <typename T>
long double nrm2(int64_t n, const T* x, int64_t incx) {
  long double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[at(i, n, incx)];
    if constexpr (is_complex_v<T>)
      s += (long double)v.real() * v.real() + (long double)v.imag() * v.imag();
    else
      s += (long double)v * v;
  }
  return std::sqrt(s);
}

template <typename T>
void rot(int64_t n, T* x, int64_t incx, T* y, int64_t incy, real_t<T> c, real_t<T> s) {
  for (int64_t i = 0; i < n; ++i) {
    T& xi = x[at(i, n, incx)];
    T& yi = y[at(i, n, incy)];
    const T xv = xi, yv = yi;
    xi = c * xv + s * yv;
    yi = c * yv - s * xv;
  }
}

// ---- level 2 --------------------------------------------------------------------------------

template <typename T>
void gemv(Op trans, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x,
          int64_t incx, T beta, T* y, int64_t incy) {
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return;
  const bool nt = trans == Op::kNoTrans;
  const int64_t leny = nt ? m : n, lenx = nt ? n : m;
  for (int64_t i = 0; i < leny; ++i) {
    T& v = y[at(i, leny, incy)];
    v = beta == T(0) ? T(0) : beta * v;
  }
  if (alpha == T(0)) return;
  for (int64_t j = 0; j < n; ++j) {
    if (nt) {
      const T t = alpha * x[at(j, lenx, incx)];
      for (int64_t i = 0; i < m; ++i) y[at(i, leny, incy)] += t * a[i + j * lda];
    } else {
      T t{};
      for (int64_t i = 0; i < m; ++i)
        t += conj_if(a[i + j * lda], trans == Op::kConjTrans) * x[at(i, lenx, incx)];
      y[at(j, leny, incy)] += alpha * t;
    }
  }
}

template <typename T>
void ger(int64_t m, int64_t n, T alpha, const T* x, int64_t incx, const T* y, int64_t incy, T* a,
         int64_t lda, bool conj) {
  for (int64_t j = 0; j < n; ++j) {
    const T t = alpha * conj_if(y[at(j, n, incy)], conj);
    for (int64_t i = 0; i < m; ++i) a[i + j * lda] += x[at(i, m, incx)] * t;
  }
}

// Element (i, j) of op(A) for a triangular A (zero outside the triangle, 1 on a unit diagonal).
template <typename T>
T tri_elem(Uplo uplo, Op trans, Diag diag, const T* a, int64_t lda, int64_t i, int64_t j) {
  if (trans != Op::kNoTrans) std::swap(i, j);
  if (i == j && diag == Diag::kUnit) return T(1);
  const bool inside = uplo == Uplo::kUpper ? i <= j : i >= j;
  return inside ? conj_if(a[i + j * lda], trans == Op::kConjTrans) : T(0);
}

template <typename T>
void trmv(Uplo uplo, Op trans, Diag diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx) {
  std::vector<T> r(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    T s{};
    for (int64_t j = 0; j < n; ++j)
      s += tri_elem(uplo, trans, diag, a, lda, i, j) * x[at(j, n, incx)];
    r[static_cast<std::size_t>(i)] = s;
  }
  for (int64_t i = 0; i < n; ++i) x[at(i, n, incx)] = r[static_cast<std::size_t>(i)];
}

// Forward or back substitution on op(A).
template <typename T>
void trsv(Uplo uplo, Op trans, Diag diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx) {
  const bool lower_op = (uplo == Uplo::kLower) == (trans == Op::kNoTrans);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = x[at(i, n, incx)];
  for (int64_t s = 0; s < n; ++s) {
    const int64_t i = lower_op ? s : n - 1 - s;
    T t = v[static_cast<std::size_t>(i)];
    for (int64_t j = 0; j < n; ++j)
      if (j != i && (lower_op ? j < i : j > i))
        t -= tri_elem(uplo, trans, diag, a, lda, i, j) * v[static_cast<std::size_t>(j)];
    v[static_cast<std::size_t>(i)] = t / tri_elem(uplo, trans, diag, a, lda, i, i);
  }
  for (int64_t i = 0; i < n; ++i) x[at(i, n, incx)] = v[static_cast<std::size_t>(i)];
}

// y = alpha * A x + beta * y with A symmetric (herm: Hermitian, diagonal taken as real) and
// only the `uplo` triangle read.
template <typename T>
void symv(Uplo uplo, int64_t n, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta,
          T* y, int64_t incy, bool herm) {
  if (n == 0 || (alpha == T(0) && beta == T(1))) return;
  auto elem = [&](int64_t i, int64_t j) {
    if (i == j) return herm ? T(std::real(a[i + i * lda])) : a[i + i * lda];
    const bool stored = uplo == Uplo::kUpper ? i < j : i > j;
    return stored ? a[i + j * lda] : conj_if(a[j + i * lda], herm);
  };
  std::vector<T> r(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    T s{};
    for (int64_t j = 0; j < n; ++j) s += elem(i, j) * x[at(j, n, incx)];
    r[static_cast<std::size_t>(i)] = s;
  }
  for (int64_t i = 0; i < n; ++i) {
    T& v = y[at(i, n, incy)];
    v = (beta == T(0) ? T(0) : beta * v) + alpha * r[static_cast<std::size_t>(i)];
  }
}

}  // namespace tessera::blas::ref
