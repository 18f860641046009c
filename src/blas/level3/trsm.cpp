// trsm: B = alpha * op(A)^-1 * B or alpha * B * op(A)^-1, recursively. With op(A) lower and
// side left, [T11 0; T21 T22] [X1; X2] = [B1; B2] is solved as X1 = T11^-1 B1,
// B2 -= T21 X1 (gemm), X2 = T22^-1 B2; the other cases mirror it.
#include "level3.hpp"

namespace tessera::blas::level3 {

template <typename T>
Status trsm_rec(Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
                std::int64_t ldb) {
  const bool left = side == Side::kLeft;
  const std::int64_t nt = left ? m : n;
  if (nt <= kTriLeaf) {
    trsm_leaf(h, side, t, m, n, b, ldb);
    return Status::ok();
  }
  const std::int64_t n1 = split_point(nt), n2 = nt - n1;
  const Tri<T> t11 = t.diag_block(0), t22 = t.diag_block(n1);
  const T one(1), minus_one(-1);
  if (left) {
    T* b1 = b;
    T* b2 = b + n1;
    if (t.lower) {
      TESSERA_RETURN_IF_ERROR(trsm_rec(h, side, t11, n1, n, b1, ldb));
      const Operand<T> t21 = t.block(n1, 0);
      TESSERA_RETURN_IF_ERROR(
          detail::gemm_unchecked(h, t21.op, Op::kNoTrans, n2, n, n1, minus_one, t21.p, t.lda, b1, ldb, one, b2, ldb));
      return trsm_rec(h, side, t22, n2, n, b2, ldb);
    }
    TESSERA_RETURN_IF_ERROR(trsm_rec(h, side, t22, n2, n, b2, ldb));
    const Operand<T> t12 = t.block(0, n1);
    TESSERA_RETURN_IF_ERROR(
        detail::gemm_unchecked(h, t12.op, Op::kNoTrans, n1, n, n2, minus_one, t12.p, t.lda, b2, ldb, one, b1, ldb));
    return trsm_rec(h, side, t11, n1, n, b1, ldb);
  }
  // Right: X * op(A) = B, column blocks X1, X2.
  T* b1 = b;
  T* b2 = b + n1 * ldb;
  if (!t.lower) {
    TESSERA_RETURN_IF_ERROR(trsm_rec(h, side, t11, m, n1, b1, ldb));
    const Operand<T> t12 = t.block(0, n1);
    TESSERA_RETURN_IF_ERROR(
        detail::gemm_unchecked(h, Op::kNoTrans, t12.op, m, n2, n1, minus_one, b1, ldb, t12.p, t.lda, one, b2, ldb));
    return trsm_rec(h, side, t22, m, n2, b2, ldb);
  }
  TESSERA_RETURN_IF_ERROR(trsm_rec(h, side, t22, m, n2, b2, ldb));
  const Operand<T> t21 = t.block(n1, 0);
  TESSERA_RETURN_IF_ERROR(
      detail::gemm_unchecked(h, Op::kNoTrans, t21.op, m, n1, n2, minus_one, b2, ldb, t21.p, t.lda, one, b1, ldb));
  return trsm_rec(h, side, t11, m, n1, b1, ldb);
}

}  // namespace tessera::blas::level3

namespace tessera::blas {

template <typename T>
Status trsm(Handle& h, Side side, Uplo uplo, Op transa, Diag diag, std::int64_t m, std::int64_t n,
            T alpha, const T* a, std::int64_t lda, T* b, std::int64_t ldb) {
  const std::string fn = detail::fn_name<T>("trsm");
  TESSERA_RETURN_IF_ERROR(
      level3::check_trxm(fn, side, uplo, transa, diag, m, n, alpha == T{}, a, lda, b, ldb));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  level3::log_trxm(h, "trsm", detail::dtype_name<T>(), side, uplo, transa, diag, m, n, lda, ldb,
                   level3::log_scalar(alpha));
  if (m == 0 || n == 0) return Status::ok();
  if (alpha != T(1)) level3::scale_matrix(m, n, alpha, b, ldb);
  if (alpha == T{}) return Status::ok();
  return level3::trsm_rec(h, side, level3::make_tri(a, lda, uplo, transa, diag), m, n, b, ldb);
}

#define TESSERA_INSTANTIATE(T)                                                                    \
  template Status level3::trsm_rec<T>(Handle&, Side, const level3::Tri<T>&, std::int64_t,         \
                                      std::int64_t, T*, std::int64_t);                            \
  template Status trsm<T>(Handle&, Side, Uplo, Op, Diag, std::int64_t, std::int64_t, T, const T*, \
                          std::int64_t, T*, std::int64_t);
TESSERA_LEVEL3_FOR_EACH_TYPE(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::blas
