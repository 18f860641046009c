// The unblocked kernels at the leaves of the recursive trsm, trmm and trtri: plain C++ with
// contiguous inner loops (columns of B or A) that the compiler vectorises. The triangle is
// first copied into a small dense column-major block, so every op (n, t, c) and diag case
// runs the same loops. Parallel only over independent columns (left) or rows (right) of B.
#include "level3.hpp"

namespace tessera::blas::level3 {
namespace {

// Rows of B a right-side leaf sweeps at once (keeps the rows' nt columns in L1/L2).
constexpr std::int64_t kRowBlock = 128;

// The triangle of op(A) (order nt <= kTriLeaf) into p (ld nt), zeros in the other half; the
// diagonal holds 1 for a unit matrix, else A's diagonal or its reciprocal.
template <typename T>
void pack_triangle(const Tri<T>& t, std::int64_t nt, bool invert_diag, T* p) {
  for (std::int64_t j = 0; j < nt; ++j)
    for (std::int64_t i = 0; i < nt; ++i) {
      T v{};
      if (i == j) v = t.unit ? T(1) : invert_diag ? T(1) / t.at(i, i) : t.at(i, i);
      else if (t.lower == (i > j)) v = t.at(i, j);
      p[i + j * nt] = v;
    }
}

// Columns per parallel chunk of a left-side leaf: enough work to pay for a task.
std::int64_t column_grain(std::int64_t nt) { return std::max<std::int64_t>(1, 16384 / (nt * nt)); }
std::int64_t row_grain(std::int64_t nt) {
  return std::max<std::int64_t>(32, 16384 / std::max<std::int64_t>(1, nt * nt / 4));
}

// x (nt) = p^-1 * x, p holding the reciprocal of its diagonal.
template <typename T>
void solve_column(bool lower, bool unit, std::int64_t nt, const T* p, T* x) {
  if (lower) {
    for (std::int64_t k = 0; k < nt; ++k) {
      if (x[k] == T{}) continue;
      const T xk = unit ? x[k] : mul(x[k], p[k + k * nt]);
      x[k] = xk;
      const T* pk = p + k * nt;
      for (std::int64_t i = k + 1; i < nt; ++i) x[i] -= mul(xk, pk[i]);
    }
  } else {
    for (std::int64_t k = nt - 1; k >= 0; --k) {
      if (x[k] == T{}) continue;
      const T xk = unit ? x[k] : mul(x[k], p[k + k * nt]);
      x[k] = xk;
      const T* pk = p + k * nt;
      for (std::int64_t i = 0; i < k; ++i) x[i] -= mul(xk, pk[i]);
    }
  }
}

// x (nt) = p * x.
template <typename T>
void multiply_column(bool lower, bool unit, std::int64_t nt, const T* p, T* x) {
  if (lower) {
    for (std::int64_t k = nt - 1; k >= 0; --k) {
      const T xk = x[k];
      if (xk == T{}) continue;
      if (!unit) x[k] = mul(xk, p[k + k * nt]);
      const T* pk = p + k * nt;
      for (std::int64_t i = k + 1; i < nt; ++i) x[i] += mul(xk, pk[i]);
    }
  } else {
    for (std::int64_t k = 0; k < nt; ++k) {
      const T xk = x[k];
      if (xk == T{}) continue;
      const T* pk = p + k * nt;
      for (std::int64_t i = 0; i < k; ++i) x[i] += mul(xk, pk[i]);
      if (!unit) x[k] = mul(xk, p[k + k * nt]);
    }
  }
}

// y (rows) += c * x
template <typename T>
void axpy_rows(std::int64_t rows, T c, const T* x, T* y) {
  for (std::int64_t i = 0; i < rows; ++i) y[i] += mul(c, x[i]);
}
template <typename T>
void scale_rows(std::int64_t rows, T c, T* y) {
  for (std::int64_t i = 0; i < rows; ++i) y[i] = mul(y[i], c);
}

// Rows [0, rows) of B (nt columns) = B * p^-1, p holding the reciprocal of its diagonal.
template <typename T>
void solve_rows(bool lower, bool unit, std::int64_t nt, const T* p, std::int64_t rows, T* b,
                std::int64_t ldb) {
  // Column j of X: (B_j - sum over the other solved columns k of X_k * p(k, j)) / p(j, j).
  auto column = [&](std::int64_t j, std::int64_t k0, std::int64_t k1) {
    T* y = b + j * ldb;
    for (std::int64_t k = k0; k < k1; ++k) {
      const T c = p[k + j * nt];
      if (c != T{}) axpy_rows(rows, -c, b + k * ldb, y);
    }
    if (!unit) scale_rows(rows, p[j + j * nt], y);
  };
  if (lower) {
    for (std::int64_t j = nt - 1; j >= 0; --j) column(j, j + 1, nt);
  } else {
    for (std::int64_t j = 0; j < nt; ++j) column(j, 0, j);
  }
}

// Rows [0, rows) of B (nt columns) = B * p, in place.
template <typename T>
void multiply_rows(bool lower, bool unit, std::int64_t nt, const T* p, std::int64_t rows, T* b,
                   std::int64_t ldb) {
  // Column j of B*p reads the columns k of B on p's side of j, not yet overwritten.
  auto column = [&](std::int64_t j, std::int64_t k0, std::int64_t k1) {
    T* y = b + j * ldb;
    if (!unit) scale_rows(rows, p[j + j * nt], y);
    for (std::int64_t k = k0; k < k1; ++k) {
      const T c = p[k + j * nt];
      if (c != T{}) axpy_rows(rows, c, b + k * ldb, y);
    }
  };
  if (lower) {
    for (std::int64_t j = 0; j < nt; ++j) column(j, j + 1, nt);
  } else {
    for (std::int64_t j = nt - 1; j >= 0; --j) column(j, 0, j);
  }
}

template <typename T, typename ColumnFn, typename RowsFn>
void run_leaf(const Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n,
              bool invert_diag, T* b, std::int64_t ldb, ColumnFn column_fn, RowsFn rows_fn) {
  const std::int64_t nt = side == Side::kLeft ? m : n;
  T p[kTriLeaf * kTriLeaf];
  pack_triangle(t, nt, invert_diag, p);
  if (side == Side::kLeft) {
    detail::parallel_for(h, 0, n, column_grain(nt), [&](std::int64_t j0, std::int64_t j1) {
      for (std::int64_t j = j0; j < j1; ++j) column_fn(t.lower, t.unit, nt, p, b + j * ldb);
    });
  } else {
    detail::parallel_for(h, 0, m, row_grain(nt), [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; i += kRowBlock)
        rows_fn(t.lower, t.unit, nt, p, std::min(kRowBlock, i1 - i), b + i, ldb);
    });
  }
}

}  // namespace

template <typename T>
void scale_matrix(std::int64_t m, std::int64_t n, T alpha, T* b, std::int64_t ldb) {
  for (std::int64_t j = 0; j < n; ++j) {
    T* col = b + j * ldb;
    if (alpha == T{}) {
      for (std::int64_t i = 0; i < m; ++i) col[i] = T{};
    } else {
      scale_rows(m, alpha, col);
    }
  }
}

template <typename T>
void trsm_leaf(const Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
               std::int64_t ldb) {
  run_leaf(h, side, t, m, n, true, b, ldb, solve_column<T>, solve_rows<T>);
}

template <typename T>
void trmm_leaf(const Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
               std::int64_t ldb) {
  run_leaf(h, side, t, m, n, false, b, ldb, multiply_column<T>, multiply_rows<T>);
}

// Column by column (LAPACK's trti2 scheme): column j of the inverse is -inv(A(j,j)) times the
// already inverted leading (upper) or trailing (lower) block applied to column j of A.
template <typename T>
void trtri_leaf(Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda) {
  const bool unit = diag == Diag::kUnit;
  auto invert_pivot = [&](std::int64_t j) {
    if (unit) return T(-1);
    T& ajj = a[j + j * lda];
    ajj = T(1) / ajj;
    return -ajj;
  };
  if (uplo == Uplo::kUpper) {
    for (std::int64_t j = 0; j < n; ++j) {
      const T neg_inv = invert_pivot(j);
      T* x = a + j * lda;  // rows [0, j) of column j
      for (std::int64_t k = 0; k < j; ++k) {
        const T xk = x[k];
        const T* ak = a + k * lda;
        for (std::int64_t i = 0; i < k; ++i) x[i] += mul(xk, ak[i]);
        if (!unit) x[k] = mul(xk, ak[k]);
      }
      scale_rows(j, neg_inv, x);
    }
  } else {
    for (std::int64_t j = n - 1; j >= 0; --j) {
      const T neg_inv = invert_pivot(j);
      T* x = a + j * lda;  // rows (j, n) of column j
      for (std::int64_t k = n - 1; k > j; --k) {
        const T xk = x[k];
        const T* ak = a + k * lda;
        if (!unit) x[k] = mul(xk, ak[k]);
        for (std::int64_t i = k + 1; i < n; ++i) x[i] += mul(xk, ak[i]);
      }
      scale_rows(n - 1 - j, neg_inv, x + j + 1);
    }
  }
}

template <typename T>
std::int64_t first_zero_pivot(std::int64_t n, const T* a, std::int64_t lda) {
  for (std::int64_t i = 0; i < n; ++i)
    if (a[i + i * lda] == T{}) return i;
  return -1;
}

#define TESSERA_INSTANTIATE(T)                                                                  \
  template void scale_matrix<T>(std::int64_t, std::int64_t, T, T*, std::int64_t);               \
  template void trsm_leaf<T>(const Handle&, Side, const Tri<T>&, std::int64_t, std::int64_t, T*, \
                             std::int64_t);                                                     \
  template void trmm_leaf<T>(const Handle&, Side, const Tri<T>&, std::int64_t, std::int64_t, T*, \
                             std::int64_t);                                                     \
  template void trtri_leaf<T>(Uplo, Diag, std::int64_t, T*, std::int64_t);                      \
  template std::int64_t first_zero_pivot<T>(std::int64_t, const T*, std::int64_t);
TESSERA_LEVEL3_FOR_EACH_TYPE(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::blas::level3
