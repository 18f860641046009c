// The unblocked kernels at the leaves of the recursive trsm, trmm and trtri: plain C++ whose
// inner loops run down contiguous columns, so the compiler vectorises them. The triangle is
// first copied into a small dense block, so every op (n, t, c) and diag case runs the same
// loops. A right-side leaf works on row blocks of B; a left-side leaf transposes column
// panels of B into a buffer and runs the right-side loops on them (X = T^-1 B is
// X^T = B^T T^-T), which keeps the vectors long however few rows the triangle has. Parallel
// only over independent rows (right) or columns (left) of B, so any thread count gives the
// same bits.
#include "level3.hpp"

namespace tessera::blas::level3 {
namespace {

// Rows of B (or transposed columns) a leaf sweeps at once: with nt <= kTriLeaf columns they
// stay in L1/L2 while the triangle is applied.
constexpr std::int64_t kRowBlock = 64;

// The triangle of op(A) (order nt <= kTriLeaf), or its transpose, into p (ld nt) with zeros in
// the other half; the diagonal holds 1 for a unit matrix, else A's diagonal or its reciprocal.
template <typename T>
void pack_triangle(const Tri<T>& t, std::int64_t nt, bool invert_diag, bool transpose, T* p) {
  for (std::int64_t j = 0; j < nt; ++j)
    for (std::int64_t i = 0; i < nt; ++i) {
      T v{};
      if (i == j)
        v = t.unit ? T(1) : invert_diag ? T(1) / t.at(i, i) : t.at(i, i);
      else if (t.lower == (i > j))
        v = t.at(i, j);
      p[transpose ? j + i * nt : i + j * nt] = v;
    }
}

// Rows of B per parallel chunk: at least a quarter million multiply-adds, so a leaf only
// wakes the pool when the work dwarfs the cost of a parallel region.
std::int64_t row_grain(std::int64_t nt) {
  return std::max<std::int64_t>(64, (std::int64_t{1} << 19) / std::max<std::int64_t>(1, nt * nt));
}

// y[0, rows) -= (or +=) the sum over k in [k0, k1) of c[k] * x_k, x_k = b + k * ldb. Four
// columns at a time: one load and store of y per four multiply-adds.
template <typename T, bool kSubtract>
void accumulate_columns(std::int64_t rows, const T* c, std::int64_t k0, std::int64_t k1, const T* b,
                        std::int64_t ldb, T* y) {
  std::int64_t k = k0;
  for (; k + 4 <= k1; k += 4) {
    const T c0 = c[k], c1 = c[k + 1], c2 = c[k + 2], c3 = c[k + 3];
    const T* x0 = b + k * ldb;
    const T* x1 = x0 + ldb;
    const T* x2 = x1 + ldb;
    const T* x3 = x2 + ldb;
    for (std::int64_t i = 0; i < rows; ++i) {
      const T sum = (mul(c0, x0[i]) + mul(c1, x1[i])) + (mul(c2, x2[i]) + mul(c3, x3[i]));
      if constexpr (kSubtract)
        y[i] -= sum;
      else
        y[i] += sum;
    }
  }
  for (; k < k1; ++k) {
    const T ck = c[k];
    const T* xk = b + k * ldb;
    for (std::int64_t i = 0; i < rows; ++i) {
      if constexpr (kSubtract)
        y[i] -= mul(ck, xk[i]);
      else
        y[i] += mul(ck, xk[i]);
    }
  }
}

template <typename T>
void scale_rows(std::int64_t rows, T c, T* y) {
  for (std::int64_t i = 0; i < rows; ++i) y[i] = mul(y[i], c);
}

// Rows [0, rows) of B (nt columns) = B * p^-1, p holding the reciprocal of its diagonal.
// Column j of X is (B_j - sum of X_k p(k, j) over the columns k solved before it) / p(j, j).
template <typename T>
void solve_rows(bool lower, bool unit, std::int64_t nt, const T* p, std::int64_t rows, T* b,
                std::int64_t ldb) {
  for (std::int64_t step = 0; step < nt; ++step) {
    const std::int64_t j = lower ? nt - 1 - step : step;
    T* y = b + j * ldb;
    const T* pj = p + j * nt;
    if (lower)
      accumulate_columns<T, true>(rows, pj, j + 1, nt, b, ldb, y);
    else
      accumulate_columns<T, true>(rows, pj, 0, j, b, ldb, y);
    if (!unit) scale_rows(rows, pj[j], y);
  }
}

// Rows [0, rows) of B (nt columns) = B * p, in place: column j of the product reads only
// columns of B on p's side of j, which are overwritten after it.
template <typename T>
void multiply_rows(bool lower, bool unit, std::int64_t nt, const T* p, std::int64_t rows, T* b,
                   std::int64_t ldb) {
  for (std::int64_t step = 0; step < nt; ++step) {
    const std::int64_t j = lower ? step : nt - 1 - step;
    T* y = b + j * ldb;
    const T* pj = p + j * nt;
    if (!unit) scale_rows(rows, pj[j], y);
    if (lower)
      accumulate_columns<T, false>(rows, pj, j + 1, nt, b, ldb, y);
    else
      accumulate_columns<T, false>(rows, pj, 0, j, b, ldb, y);
  }
}

template <typename T, typename RowsFn>
void run_leaf(const Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n,
              bool invert_diag, T* b, std::int64_t ldb, RowsFn rows_fn) {
  const bool left = side == Side::kLeft;
  const std::int64_t nt = left ? m : n;
  const std::int64_t count = left ? n : m;  // independent rows of B, or columns for left
  T p[kTriLeaf * kTriLeaf];
  // Left: B^T op(A)^T, with op(A)^T lower where op(A) is upper.
  pack_triangle(t, nt, invert_diag, left, p);
  const bool lower = t.lower != left;
  detail::parallel_for(h, 0, count, row_grain(nt), [&](std::int64_t r0, std::int64_t r1) {
    T panel[kRowBlock * kTriLeaf];
    for (std::int64_t r = r0; r < r1; r += kRowBlock) {
      const std::int64_t rows = std::min(kRowBlock, r1 - r);
      if (!left) {
        rows_fn(lower, t.unit, nt, p, rows, b + r, ldb);
        continue;
      }
      T* bj = b + r * ldb;  // columns [r, r + rows) of B, transposed into panel (ld rows)
      for (std::int64_t j = 0; j < rows; ++j)
        for (std::int64_t i = 0; i < nt; ++i) panel[j + i * rows] = bj[i + j * ldb];
      rows_fn(lower, t.unit, nt, p, rows, panel, rows);
      for (std::int64_t j = 0; j < rows; ++j)
        for (std::int64_t i = 0; i < nt; ++i) bj[i + j * ldb] = panel[j + i * rows];
    }
  });
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
  run_leaf(h, side, t, m, n, true, b, ldb, solve_rows<T>);
}

template <typename T>
void trmm_leaf(const Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
               std::int64_t ldb) {
  run_leaf(h, side, t, m, n, false, b, ldb, multiply_rows<T>);
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

#define TESSERA_INSTANTIATE(T)                                                                   \
  template void scale_matrix<T>(std::int64_t, std::int64_t, T, T*, std::int64_t);                \
  template void trsm_leaf<T>(const Handle&, Side, const Tri<T>&, std::int64_t, std::int64_t, T*, \
                             std::int64_t);                                                      \
  template void trmm_leaf<T>(const Handle&, Side, const Tri<T>&, std::int64_t, std::int64_t, T*, \
                             std::int64_t);                                                      \
  template void trtri_leaf<T>(Uplo, Diag, std::int64_t, T*, std::int64_t);                       \
  template std::int64_t first_zero_pivot<T>(std::int64_t, const T*, std::int64_t);
TESSERA_LEVEL3_FOR_EACH_TYPE(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::blas::level3
