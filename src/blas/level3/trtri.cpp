// trtri: in-place inverse of a triangular matrix, recursively. For upper A = [A11 A12; 0 A22]
// the inverse is [inv11, -inv11 A12 inv22; 0, inv22]: invert A11, A12 = inv11 * A12 (trmm),
// A12 = -A12 * A22^-1 (trsm with A22 not yet inverted), invert A22. Lower mirrors it.
//
// The batched forms check every diagonal before writing anything, then run the matrices like
// batched gemm does (detail::run_batch: small ones one per thread on a private handle, large
// ones one after another on every thread), so results do not depend on the thread count.
#include "../gemm/gemm_common.hpp"
#include "level3.hpp"

namespace tessera::blas::level3 {

template <typename T>
Status trtri_rec(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda) {
  if (n <= kTriLeaf) {
    trtri_leaf(uplo, diag, n, a, lda);
    return Status::ok();
  }
  const std::int64_t n1 = split_point(n), n2 = n - n1;
  T* a11 = a;
  T* a22 = a + n1 + n1 * lda;
  const Tri<T> t11 = make_tri<T>(a11, lda, uplo, Op::kNoTrans, diag);
  const Tri<T> t22 = make_tri<T>(a22, lda, uplo, Op::kNoTrans, diag);
  if (uplo == Uplo::kUpper) {
    T* a12 = a + n1 * lda;
    TESSERA_RETURN_IF_ERROR(trtri_rec(h, uplo, diag, n1, a11, lda));
    TESSERA_RETURN_IF_ERROR(trmm_rec(h, Side::kLeft, t11, n1, n2, a12, lda));
    scale_matrix(n1, n2, T(-1), a12, lda);
    TESSERA_RETURN_IF_ERROR(trsm_rec(h, Side::kRight, t22, n1, n2, a12, lda));
    return trtri_rec(h, uplo, diag, n2, a22, lda);
  }
  T* a21 = a + n1;
  TESSERA_RETURN_IF_ERROR(trtri_rec(h, uplo, diag, n2, a22, lda));
  TESSERA_RETURN_IF_ERROR(trmm_rec(h, Side::kLeft, t22, n2, n1, a21, lda));
  scale_matrix(n2, n1, T(-1), a21, lda);
  TESSERA_RETURN_IF_ERROR(trsm_rec(h, Side::kRight, t11, n2, n1, a21, lda));
  return trtri_rec(h, uplo, diag, n1, a11, lda);
}

namespace {

std::string singular_message(const std::string& fn, std::int64_t matrix, std::int64_t pivot) {
  std::string where = matrix < 0 ? "A" : "matrix " + std::to_string(matrix);
  return fn + ": " + where + " is singular: diagonal element " + std::to_string(pivot) +
         " (0-based) is zero";
}

// The first singular matrix of the batch (non-unit only), checked before anything is written.
template <typename T, typename MatrixAt>
Status check_batch_pivots(const std::string& fn, Diag diag, std::int64_t n, std::int64_t lda,
                          std::int64_t batch, MatrixAt matrix_at) {
  if (diag == Diag::kUnit) return Status::ok();
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t pivot = first_zero_pivot<T>(n, matrix_at(b), lda);
    if (pivot >= 0) return invalid_argument(singular_message(fn, b, pivot));
  }
  return Status::ok();
}

}  // namespace
}  // namespace tessera::blas::level3

namespace tessera::blas {

template <typename T>
Status trtri(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda) {
  const std::string fn = detail::fn_name<T>("trtri");
  TESSERA_RETURN_IF_ERROR(level3::check_trtri(fn, uplo, diag, n, lda));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, n > 0));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  level3::log_trtri(h, "trtri", detail::dtype_name<T>(), uplo, diag, n, lda, -1);
  if (diag == Diag::kNonUnit) {
    const std::int64_t pivot = level3::first_zero_pivot(n, a, lda);
    if (pivot >= 0) return invalid_argument(level3::singular_message(fn, -1, pivot));
  }
  return level3::trtri_rec(h, uplo, diag, n, a, lda);
}

template <typename T>
Status trtri_batched(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* const a[],
                     std::int64_t lda, std::int64_t batch_count) {
  const std::string fn = detail::fn_name<T>("trtri_batched");
  TESSERA_RETURN_IF_ERROR(level3::check_trtri(fn, uplo, diag, n, lda));
  TESSERA_RETURN_IF_ERROR(detail::check_batch(fn, batch_count));
  const bool used = n > 0 && batch_count > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, used));
  for (std::int64_t b = 0; used && b < batch_count; ++b)
    if (a[b] == nullptr) return invalid_argument(fn + ": a[" + std::to_string(b) + "] is null");
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  level3::log_trtri(h, "trtri_batched", detail::dtype_name<T>(), uplo, diag, n, lda, batch_count);
  if (!used) return Status::ok();
  auto matrix_at = [a](std::int64_t b) { return a[b]; };
  TESSERA_RETURN_IF_ERROR(level3::check_batch_pivots<T>(fn, diag, n, lda, batch_count, matrix_at));
  return detail::run_batch(h, batch_count, n, n, n, [&](Handle& hh, std::int64_t b) {
    return level3::trtri_rec(hh, uplo, diag, n, matrix_at(b), lda);
  });
}

template <typename T>
Status trtri_strided_batched(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* a,
                             std::int64_t lda, std::int64_t stride_a, std::int64_t batch_count) {
  const std::string fn = detail::fn_name<T>("trtri_strided_batched");
  TESSERA_RETURN_IF_ERROR(level3::check_trtri(fn, uplo, diag, n, lda));
  TESSERA_RETURN_IF_ERROR(detail::check_batch(fn, batch_count));
  // Matrices must not overlap: each is inverted independently (and concurrently).
  if (batch_count > 1 && n > 0 && stride_a < lda * n)
    return invalid_argument(fn + ": stride_a = " + std::to_string(stride_a) +
                            " must be >= lda * n = " + std::to_string(lda * n));
  const bool used = n > 0 && batch_count > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, used));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  level3::log_trtri(h, "trtri_strided_batched", detail::dtype_name<T>(), uplo, diag, n, lda,
                    batch_count);
  if (!used) return Status::ok();
  auto matrix_at = [a, stride_a](std::int64_t b) { return a + b * stride_a; };
  TESSERA_RETURN_IF_ERROR(level3::check_batch_pivots<T>(fn, diag, n, lda, batch_count, matrix_at));
  return detail::run_batch(h, batch_count, n, n, n, [&](Handle& hh, std::int64_t b) {
    return level3::trtri_rec(hh, uplo, diag, n, matrix_at(b), lda);
  });
}

#define TESSERA_INSTANTIATE(T)                                                                  \
  template Status level3::trtri_rec<T>(Handle&, Uplo, Diag, std::int64_t, T*, std::int64_t);    \
  template Status trtri<T>(Handle&, Uplo, Diag, std::int64_t, T*, std::int64_t);                \
  template Status trtri_batched<T>(Handle&, Uplo, Diag, std::int64_t, T* const[], std::int64_t, \
                                   std::int64_t);                                               \
  template Status trtri_strided_batched<T>(Handle&, Uplo, Diag, std::int64_t, T*, std::int64_t, \
                                           std::int64_t, std::int64_t);
TESSERA_LEVEL3_FOR_EACH_TYPE(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::blas
