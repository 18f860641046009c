// Plain references for the level-3 tests (trsm, trmm, syrk, trtri): dense products in a wider
// type (double for f32/c64, long double for f64/c128) and element-wise error bounds built from
// the same products on absolute values, so a check is |x - ref| <= c * k * eps * bound.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include <tessera/blas.hpp>

namespace tessera::blas::ref {

template <typename T>
using wide_real_t = std::conditional_t<std::is_same_v<real_t<T>, float>, double, long double>;
template <typename T>
using wide_t = std::conditional_t<is_complex_v<T>, std::complex<wide_real_t<T>>, wide_real_t<T>>;

// |re| + |im|: within a factor sqrt(2) of the modulus, and much cheaper than hypot.
template <typename W>
long double abs1(W v) {
  if constexpr (std::is_floating_point_v<W>)
    return std::fabs(v);
  else
    return std::fabs(v.real()) + std::fabs(v.imag());
}

template <typename T>
wide_t<T> widen(T v) {
  if constexpr (is_complex_v<T>)
    return {v.real(), v.imag()};
  else
    return v;
}

template <typename T>
T narrow(wide_t<T> v) {
  if constexpr (is_complex_v<T>)
    return T(static_cast<real_t<T>>(v.real()), static_cast<real_t<T>>(v.imag()));
  else
    return static_cast<T>(v);
}

template <typename T>
constexpr long double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

// A dense column-major matrix (ld = rows) in wide precision.
template <typename W>
struct Dense {
  std::int64_t rows = 0, cols = 0;
  std::vector<W> v;
  Dense(std::int64_t r, std::int64_t c) : rows(r), cols(c), v(static_cast<std::size_t>(r * c)) {}
  W& operator()(std::int64_t i, std::int64_t j) {
    return v[static_cast<std::size_t>(i + j * rows)];
  }
  W operator()(std::int64_t i, std::int64_t j) const {
    return v[static_cast<std::size_t>(i + j * rows)];
  }
};

// Reads an m x n block of a column-major T array.
template <typename T>
Dense<wide_t<T>> load(const T* a, std::int64_t lda, std::int64_t m, std::int64_t n) {
  Dense<wide_t<T>> d(m, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) d(i, j) = widen(a[i + j * lda]);
  return d;
}

// op(A) of a triangular A of order k, as a dense matrix: zeros outside the triangle, ones on
// a unit diagonal; nothing outside the triangle (or the diagonal of a unit A) is read.
template <typename T>
Dense<wide_t<T>> tri_op(const T* a, std::int64_t lda, Uplo uplo, Op op, Diag diag, std::int64_t k) {
  Dense<wide_t<T>> d(k, k);
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t r = op == Op::kNoTrans ? i : j, c = op == Op::kNoTrans ? j : i;
      const bool inside = uplo == Uplo::kUpper ? r <= c : r >= c;
      if (!inside) continue;
      if (r == c && diag == Diag::kUnit) {
        d(i, j) = 1;
        continue;
      }
      T v = a[r + c * lda];
      if constexpr (is_complex_v<T>)
        if (op == Op::kConjTrans) v = std::conj(v);
      d(i, j) = widen(v);
    }
  return d;
}

// z = x * y. Raw loops over the real and imaginary parts: this runs in the sanitizer build at
// -O0 too, where std::complex and accessor calls per element would dominate the test time.
template <typename W>
Dense<W> matmul(const Dense<W>& x, const Dense<W>& y) {
  Dense<W> z(x.rows, y.cols);
  const std::int64_t m = x.rows, k = x.cols, n = y.cols;
  if constexpr (std::is_floating_point_v<W>) {
    const W* xs = x.v.data();
    const W* ys = y.v.data();
    W* zs = z.v.data();
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) {
        const W b = ys[p + j * k];
        if (b == 0) continue;  // triangular operands are half zeros
        const W* xp = xs + p * m;
        W* zj = zs + j * m;
        for (std::int64_t i = 0; i < m; ++i) zj[i] += xp[i] * b;
      }
  } else {
    using R = typename W::value_type;
    const R* xs = reinterpret_cast<const R*>(x.v.data());
    const R* ys = reinterpret_cast<const R*>(y.v.data());
    R* zs = reinterpret_cast<R*>(z.v.data());
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) {
        const R br = ys[2 * (p + j * k)], bi = ys[2 * (p + j * k) + 1];
        if (br == 0 && bi == 0) continue;
        const R* xp = xs + 2 * p * m;
        R* zj = zs + 2 * j * m;
        for (std::int64_t i = 0; i < 2 * m; i += 2) {
          const R ar = xp[i], ai = xp[i + 1];
          zj[i] += ar * br - ai * bi;
          zj[i + 1] += ar * bi + ai * br;
        }
      }
  }
  return z;
}

template <typename W>
struct real_part {
  using type = W;
};
template <typename R>
struct real_part<std::complex<R>> {
  using type = R;
};

template <typename W>
Dense<typename real_part<W>::type> abs_of(const Dense<W>& x) {
  Dense<typename real_part<W>::type> a(x.rows, x.cols);
  for (std::size_t i = 0; i < x.v.size(); ++i) a.v[i] = abs1(x.v[i]);
  return a;
}

template <typename W>
Dense<W> transpose(const Dense<W>& x) {
  Dense<W> t(x.cols, x.rows);
  for (std::int64_t j = 0; j < x.cols; ++j)
    for (std::int64_t i = 0; i < x.rows; ++i) t(j, i) = x(i, j);
  return t;
}

// Largest column sum of |x| (the 1-norm).
template <typename W>
long double norm1(const Dense<W>& x) {
  long double best = 0;
  for (std::int64_t j = 0; j < x.cols; ++j) {
    long double s = 0;
    for (std::int64_t i = 0; i < x.rows; ++i) s += abs1(x(i, j));
    best = std::max(best, s);
  }
  return best;
}

// The triangle of a square dense matrix (uplo part, diagonal as stored or one).
template <typename W>
Dense<W> triangle(const Dense<W>& x, Uplo uplo, Diag diag) {
  Dense<W> t(x.rows, x.cols);
  for (std::int64_t j = 0; j < x.cols; ++j)
    for (std::int64_t i = 0; i < x.rows; ++i) {
      if (i == j)
        t(i, j) = diag == Diag::kUnit ? W(1) : x(i, j);
      else if ((uplo == Uplo::kUpper) == (i < j))
        t(i, j) = x(i, j);
    }
  return t;
}

// A small deterministic generator (splitmix64): cheap enough for the -O0 sanitizer build,
// where std::mt19937 with a distribution dominated the test time.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // Uniform in [-1, 1).
  double uniform() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
  }

 private:
  std::uint64_t state_;
};

// Random values: real and imaginary parts uniform in [-1, 1).
template <typename T>
T random_value(Rng& g) {
  if constexpr (is_complex_v<T>) {
    const double re = g.uniform();
    return T(real_t<T>(re), real_t<T>(g.uniform()));
  } else {
    return T(g.uniform());
  }
}

// A well-conditioned triangular matrix of order k in an lda x k array: diagonal of modulus
// in [1, 2] with a random sign (phase), off-diagonal entries bounded by 1/k so that A, unit or
// not, is diagonally dominant. Everything outside the triangle (padding rows, the other
// half, the diagonal of a unit matrix) holds `fill`.
template <typename T>
std::vector<T> random_triangular(std::int64_t k, std::int64_t lda, Uplo uplo, Diag diag, T fill,
                                 Rng& g) {
  std::vector<T> a(static_cast<std::size_t>(std::max<std::int64_t>(1, lda * k)), fill);
  const real_t<T> off_scale = real_t<T>(0.9) / real_t<T>(std::max<std::int64_t>(k, 1));
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < k; ++i) {
      T& v = a[static_cast<std::size_t>(i + j * lda)];
      if (i == j) {
        if (diag == Diag::kUnit) continue;
        const double r = 1.5 + 0.5 * g.uniform(), t = 3.141592653589793 * g.uniform();
        if constexpr (is_complex_v<T>)
          v = T(real_t<T>(r * std::cos(t)), real_t<T>(r * std::sin(t)));
        else
          v = T(std::cos(t) < 0 ? -r : r);
      } else if ((uplo == Uplo::kUpper) == (i < j)) {
        v = random_value<T>(g) * off_scale;
      }
    }
  return a;
}

// An ld x cols array with random values in rows [0, rows) and `fill` in the padding rows.
template <typename T>
std::vector<T> random_matrix(std::int64_t rows, std::int64_t cols, std::int64_t ld, T fill,
                             Rng& g) {
  std::vector<T> a(static_cast<std::size_t>(std::max<std::int64_t>(1, ld * cols)), fill);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i)
      a[static_cast<std::size_t>(i + j * ld)] = random_value<T>(g);
  return a;
}

}  // namespace tessera::blas::ref
