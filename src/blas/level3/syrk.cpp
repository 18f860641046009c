// syrk: C = alpha * op(A) * op(A)^T + beta * C on one triangle of C, recursively: the
// off-diagonal block of each split is one gemm straight into C; diagonal blocks of order
// <= kSyrkLeaf are formed by gemm into a temporary, and only their triangle is merged into C,
// so the other triangle is never touched.
#include <vector>

#include "level3.hpp"

namespace tessera::blas::level3 {
namespace {

template <typename T>
struct SyrkProblem {
  bool upper;
  Op ta, tb;  // op(A) * op(A)^T as gemm operands: (n, t) or (t, n)
  std::int64_t k;
  T alpha, beta;
  std::int64_t lda, ldc;
  T* tmp;  // kSyrkLeaf^2 elements
};

// c (n x n, ldc) triangle = tmp (ld n) + beta * c; beta == 0 ignores what c holds.
template <typename T>
void merge_triangle(bool upper, std::int64_t n, const T* tmp, T beta, T* c, std::int64_t ldc) {
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t i0 = upper ? 0 : j, i1 = upper ? j + 1 : n;
    T* cj = c + j * ldc;
    const T* tj = tmp + j * n;
    if (beta == T{}) {
      for (std::int64_t i = i0; i < i1; ++i) cj[i] = tj[i];
    } else if (beta == T(1)) {
      for (std::int64_t i = i0; i < i1; ++i) cj[i] += tj[i];
    } else {
      for (std::int64_t i = i0; i < i1; ++i) cj[i] = tj[i] + mul(beta, cj[i]);
    }
  }
}

// The rows of op(A) from row r on.
template <typename T>
const T* op_rows(const SyrkProblem<T>& p, const T* a, std::int64_t r) {
  return p.ta == Op::kNoTrans ? a + r : a + r * p.lda;
}

template <typename T>
Status syrk_rec(Handle& h, const SyrkProblem<T>& p, std::int64_t n, const T* a, T* c) {
  if (n <= kSyrkLeaf) {
    TESSERA_RETURN_IF_ERROR(
        detail::gemm_unchecked(h, p.ta, p.tb, n, n, p.k, p.alpha, a, p.lda, a, p.lda, T{}, p.tmp, n));
    merge_triangle(p.upper, n, p.tmp, p.beta, c, p.ldc);
    return Status::ok();
  }
  const std::int64_t n1 = split_point(n), n2 = n - n1;
  const T* a2 = op_rows(p, a, n1);
  TESSERA_RETURN_IF_ERROR(syrk_rec(h, p, n1, a, c));
  if (p.upper) {
    TESSERA_RETURN_IF_ERROR(detail::gemm_unchecked(h, p.ta, p.tb, n1, n2, p.k, p.alpha, a, p.lda, a2, p.lda, p.beta,
                                 c + n1 * p.ldc, p.ldc));
  } else {
    TESSERA_RETURN_IF_ERROR(
        detail::gemm_unchecked(h, p.ta, p.tb, n2, n1, p.k, p.alpha, a2, p.lda, a, p.lda, p.beta, c + n1, p.ldc));
  }
  return syrk_rec(h, p, n2, a2, c + n1 + n1 * p.ldc);
}

// The triangle of C = beta * C (alpha == 0 or k == 0).
template <typename T>
void scale_triangle(bool upper, std::int64_t n, T beta, T* c, std::int64_t ldc) {
  if (beta == T(1)) return;
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t i0 = upper ? 0 : j, i1 = upper ? j + 1 : n;
    scale_matrix(i1 - i0, 1, beta, c + i0 + j * ldc, ldc);
  }
}

}  // namespace
}  // namespace tessera::blas::level3

namespace tessera::blas {

template <typename T>
Status syrk(Handle& h, Uplo uplo, Op trans, std::int64_t n, std::int64_t k, T alpha, const T* a,
            std::int64_t lda, T beta, T* c, std::int64_t ldc) {
  const std::string fn = detail::fn_name<T>("syrk");
  TESSERA_RETURN_IF_ERROR(
      level3::check_syrk(fn, is_complex_v<T>, uplo, trans, n, k, alpha == T{}, a, lda, c, ldc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  level3::log_syrk(h, detail::dtype_name<T>(), uplo, trans, n, k, lda, ldc,
                   level3::log_scalar(alpha), level3::log_scalar(beta));
  const bool upper = uplo == Uplo::kUpper;
  if (n == 0) return Status::ok();
  if (alpha == T{} || k == 0) {
    level3::scale_triangle(upper, n, beta, c, ldc);
    return Status::ok();
  }
  const bool notrans = trans == Op::kNoTrans;
  std::vector<T> tmp(
      static_cast<std::size_t>(std::min(n, level3::kSyrkLeaf) * std::min(n, level3::kSyrkLeaf)));
  const level3::SyrkProblem<T> p{upper,
                                 notrans ? Op::kNoTrans : Op::kTrans,
                                 notrans ? Op::kTrans : Op::kNoTrans,
                                 k,
                                 alpha,
                                 beta,
                                 lda,
                                 ldc,
                                 tmp.data()};
  return level3::syrk_rec(h, p, n, a, c);
}

#define TESSERA_INSTANTIATE(T)                                                        \
  template Status syrk<T>(Handle&, Uplo, Op, std::int64_t, std::int64_t, T, const T*, \
                          std::int64_t, T, T*, std::int64_t);
TESSERA_LEVEL3_FOR_EACH_TYPE(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::blas
