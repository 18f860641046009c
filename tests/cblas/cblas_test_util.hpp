// Shared pieces of the CBLAS tests: types, random data, the CBLAS scalar convention, dense
// "logical" matrices read from and written to either layout, and the case runner that checks
// tessera against a plain reference (or against OpenBLAS).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "cblas_api.hpp"

namespace cblas_test {

using cd = std::complex<double>;
using cfloat = std::complex<float>;
using cdouble = std::complex<double>;
using AllTypes = ::testing::Types<float, double, cfloat, cdouble>;
using RealTypes = ::testing::Types<float, double>;
using ComplexTypes = ::testing::Types<cfloat, cdouble>;

template <typename T>
inline constexpr bool kComplex = std::is_same_v<T, cfloat> || std::is_same_v<T, cdouble>;
template <typename T>
inline constexpr bool kSingle = std::is_same_v<T, float> || std::is_same_v<T, cfloat>;
template <typename T>
using real_of = std::conditional_t<kSingle<T>, float, double>;

template <typename T>
cd wide(T v) {
  return cd(v);
}
template <typename T>
T narrow(cd v) {
  if constexpr (kComplex<T>)
    return T(v);
  else
    return static_cast<T>(v.real());
}

template <typename T>
double tol() {
  return kSingle<T> ? 3e-6 : 1e-14;
}

// Uniform in [-1, 1] (both parts for complex), deterministic per seed.
template <typename T>
std::vector<T> random_vec(std::int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (auto& x : v) {
    const double re = dist(gen);
    x = narrow<T>({re, kComplex<T> ? dist(gen) : 0.0});
  }
  return v;
}

template <typename T>
std::vector<cd> widen(const std::vector<T>& v) {
  std::vector<cd> out;
  out.reserve(v.size());
  for (const T& x : v) out.push_back(wide(x));
  return out;
}

// CBLAS passes real scalars by value and complex ones by pointer.
template <typename T>
auto sc(const T& v) {
  if constexpr (kComplex<T>)
    return static_cast<const void*>(&v);
  else
    return v;
}

// The routine of type T among its s/d/c/z variants.
template <typename T, typename S, typename D, typename C, typename Z>
auto pick(S s, D d, C c, Z z) {
  if constexpr (std::is_same_v<T, float>)
    return s;
  else if constexpr (std::is_same_v<T, double>)
    return d;
  else if constexpr (std::is_same_v<T, cfloat>)
    return c;
  else
    return z;
}

// BLAS vector indexing: a negative increment walks the storage from its far end.
inline std::int64_t vi(std::int64_t i, std::int64_t n, std::int64_t inc) {
  return inc >= 0 ? i * inc : (n - 1 - i) * -inc;
}
inline std::int64_t vec_len(std::int64_t n, std::int64_t inc) {
  return n <= 0 ? 1 : 1 + (n - 1) * (inc < 0 ? -inc : inc);
}

// Element (i, j) of a matrix stored with leading dimension ld.
inline std::int64_t mi(bool row_major, std::int64_t ld, std::int64_t i, std::int64_t j) {
  return row_major ? i * ld + j : i + j * ld;
}
// Storage for a rows x cols matrix with leading dimension ld.
inline std::int64_t mat_len(bool row_major, std::int64_t ld, std::int64_t rows, std::int64_t cols) {
  return std::max<std::int64_t>(1, ld * (row_major ? rows : cols));
}

// A dense logical matrix (row-major, rows x cols) in double precision.
struct Dense {
  std::int64_t rows = 0, cols = 0;
  std::vector<cd> v;
  Dense(std::int64_t r, std::int64_t c) : rows(r), cols(c), v(r * c) {}
  cd& operator()(std::int64_t i, std::int64_t j) { return v[i * cols + j]; }
  cd operator()(std::int64_t i, std::int64_t j) const { return v[i * cols + j]; }
};

template <typename T>
Dense load(const std::vector<T>& buf, bool row_major, std::int64_t ld, std::int64_t rows,
           std::int64_t cols) {
  Dense d(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) d(i, j) = wide(buf[mi(row_major, ld, i, j)]);
  return d;
}

// op(M): 111 = M, 112 = M^T, 113 = M^H.
inline Dense apply_op(const Dense& m, CBLAS_TRANSPOSE op) {
  if (op == CblasNoTrans) return m;
  Dense t(m.cols, m.rows);
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (std::int64_t j = 0; j < m.cols; ++j)
      t(j, i) = op == CblasConjTrans ? std::conj(m(i, j)) : m(i, j);
  return t;
}

inline Dense multiply(const Dense& a, const Dense& b) {
  Dense c(a.rows, b.cols);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = 0; p < a.cols; ++p)
      for (std::int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, p) * b(p, j);
  return c;
}

// The triangle (uplo, diag) of an n x n matrix as a dense matrix.
inline Dense triangle(const Dense& a, CBLAS_UPLO uplo, CBLAS_DIAG diag) {
  Dense t(a.rows, a.cols);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j) {
      if (i == j)
        t(i, j) = diag == CblasUnit ? cd(1) : a(i, j);
      else if (uplo == CblasUpper ? i < j : i > j)
        t(i, j) = a(i, j);
    }
  return t;
}

// Solves M x = b for a triangular M (upper or lower, found from its zeros).
inline std::vector<cd> solve_triangular(const Dense& m, std::vector<cd> b) {
  const std::int64_t n = m.rows;
  bool upper = true;
  for (std::int64_t i = 0; i < n && upper; ++i)
    for (std::int64_t j = 0; j < i; ++j)
      if (m(i, j) != cd(0)) upper = false;
  if (upper) {
    for (std::int64_t i = n - 1; i >= 0; --i) {
      for (std::int64_t j = i + 1; j < n; ++j) b[i] -= m(i, j) * b[j];
      b[i] /= m(i, i);
    }
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < i; ++j) b[i] -= m(i, j) * b[j];
      b[i] /= m(i, i);
    }
  }
  return b;
}

// A buffer holding an n x n triangular test matrix in `layout` with a dominant diagonal, so
// solves are well conditioned; entries outside the triangle are random too (never read).
template <typename T>
std::vector<T> triangular_buffer(bool row_major, std::int64_t ld, std::int64_t n, unsigned seed) {
  std::vector<T> a = random_vec<T>(mat_len(row_major, ld, n, n), seed);
  for (auto& x : a) x = narrow<T>(wide(x) * 0.25);
  for (std::int64_t i = 0; i < n; ++i) {
    T& d = a[mi(row_major, ld, i, i)];
    d = narrow<T>(wide(d) * 4.0 + (wide(d).real() >= 0 ? 2.0 : -2.0));
  }
  return a;
}

// One call checked against the reference: `run` calls the routine through an API table on
// fresh copies of its inputs and returns everything the routine wrote (and any result), as
// double-precision values; `want` is the reference for the same. `oracle`: also compared
// with OpenBLAS (false where OpenBLAS is known to differ from the reference semantics).
struct Case {
  std::string name;
  std::function<std::vector<cd>(const CblasApi&)> run;
  std::vector<cd> want;
  double scale = 1;  // error allowance in units of tol() * (1 + |want|)
  bool oracle = true;
};

// Checks tessera against each case's reference, or, with `oracle`, against the oracle.
template <typename T>
void check_cases(const std::vector<Case>& cases, const CblasApi* oracle = nullptr) {
  int checked = 0;
  for (const Case& c : cases) {
    if (oracle != nullptr && !c.oracle) continue;
    SCOPED_TRACE(c.name);
    const std::vector<cd> got = c.run(tessera_api());
    const std::vector<cd> want = oracle != nullptr ? c.run(*oracle) : c.want;
    ASSERT_EQ(got.size(), want.size());
    int failures = 0;
    for (std::size_t i = 0; i < got.size() && failures < 3; ++i) {
      auto nan = [](cd v) { return std::isnan(v.real()) || std::isnan(v.imag()); };
      const double err = std::abs(got[i] - want[i]);
      // NaN only where the routine must not write (a NaN left in place).
      const bool ok = nan(got[i]) || nan(want[i])
                          ? nan(got[i]) && nan(want[i])
                          : err <= tol<T>() * c.scale * (1 + std::abs(want[i]));
      EXPECT_TRUE(ok) << "element " << i << ": got " << got[i] << ", "
                      << (oracle ? oracle->name : "reference") << " " << want[i];
      failures += !ok;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

inline const char* layout_name(bool row_major) {
  return row_major ? "row-major" : "col-major";
}

}  // namespace cblas_test
