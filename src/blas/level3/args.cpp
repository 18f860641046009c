// Argument checks and replay lines of trsm, trmm, syrk and trtri.
#include "../gemm/gemm_common.hpp"
#include "level3.hpp"

namespace tessera::blas::level3 {

Status check_trxm(const std::string& fn, Side side, Uplo uplo, Op transa, Diag diag, std::int64_t m,
                  std::int64_t n, bool alpha_zero, const void* a, std::int64_t lda, const void* b,
                  std::int64_t ldb) {
  TESSERA_RETURN_IF_ERROR(detail::check_side(fn, side));
  TESSERA_RETURN_IF_ERROR(detail::check_uplo(fn, uplo));
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "transa", transa));
  TESSERA_RETURN_IF_ERROR(detail::check_diag(fn, diag));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "m", m));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  const bool left = side == Side::kLeft;
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "lda", lda, left ? "m" : "n", left ? m : n));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "ldb", ldb, "m", m));
  // A is not read when alpha == 0 (B is only zeroed), as in reference BLAS.
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, m > 0 && n > 0 && !alpha_zero));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "b", b, m > 0 && n > 0));
  return Status::ok();
}

Status check_syrk(const std::string& fn, bool is_complex, Uplo uplo, Op trans, std::int64_t n,
                  std::int64_t k, bool alpha_zero, const void* a, std::int64_t lda, const void* c,
                  std::int64_t ldc) {
  TESSERA_RETURN_IF_ERROR(detail::check_uplo(fn, uplo));
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "trans", trans));
  if (is_complex && trans == Op::kConjTrans)
    return invalid_argument(fn + ": trans = c is not allowed for complex syrk (n or t; " +
                            "A*A^H is herk)");
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "k", k));
  const bool notrans = trans == Op::kNoTrans;
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "lda", lda, notrans ? "n" : "k", notrans ? n : k));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "ldc", ldc, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, n > 0 && k > 0 && !alpha_zero));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "c", c, n > 0));
  return Status::ok();
}

Status check_trtri(const std::string& fn, Uplo uplo, Diag diag, std::int64_t n, std::int64_t lda) {
  TESSERA_RETURN_IF_ERROR(detail::check_uplo(fn, uplo));
  TESSERA_RETURN_IF_ERROR(detail::check_diag(fn, diag));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  return detail::check_ld(fn, "lda", lda, "n", n);
}

namespace {

char side_letter(Side s) {
  return s == Side::kLeft ? 'l' : 'r';
}
char uplo_letter(Uplo u) {
  return u == Uplo::kUpper ? 'u' : 'l';
}
char diag_letter(Diag d) {
  return d == Diag::kUnit ? 'u' : 'n';
}

std::string scalar_text(LogScalar s) {
  std::string text = detail::fmt_scalar(s.re);
  if (s.complex) {
    text += ',';
    text += detail::fmt_scalar(s.im);
  }
  return text;
}

}  // namespace

void log_trxm(const Handle& h, const char* op, const char* dtype, Side side, Uplo uplo, Op transa,
              Diag diag, std::int64_t m, std::int64_t n, std::int64_t lda, std::int64_t ldb,
              LogScalar alpha) {
  TESSERA_VLOG(kBench) << "tessera bench blas " << op << " --dtype " << dtype << " --m " << m
                       << " --n " << n << " --side " << side_letter(side) << " --uplo "
                       << uplo_letter(uplo) << " --trans " << op_name(transa) << " --diag "
                       << diag_letter(diag) << " --lda " << lda << " --ldb " << ldb << " --alpha "
                       << scalar_text(alpha) << " --threads " << detail::max_threads(h);
}

void log_syrk(const Handle& h, const char* dtype, Uplo uplo, Op trans, std::int64_t n,
              std::int64_t k, std::int64_t lda, std::int64_t ldc, LogScalar alpha, LogScalar beta) {
  TESSERA_VLOG(kBench) << "tessera bench blas syrk --dtype " << dtype << " --m " << n << " --n "
                       << n << " --k " << k << " --uplo " << uplo_letter(uplo) << " --trans "
                       << op_name(trans) << " --lda " << lda << " --ldc " << ldc << " --alpha "
                       << scalar_text(alpha) << " --beta " << scalar_text(beta) << " --threads "
                       << detail::max_threads(h);
}

void log_trtri(const Handle& h, const char* op, const char* dtype, Uplo uplo, Diag diag,
               std::int64_t n, std::int64_t lda, std::int64_t batch) {
  if (!log::enabled(log::Category::kBench)) return;
  log::Line line(log::Category::kBench);
  line << "tessera bench blas " << op << " --dtype " << dtype << " --m " << n << " --n " << n
       << " --uplo " << uplo_letter(uplo) << " --diag " << diag_letter(diag) << " --lda " << lda;
  if (batch >= 0) line << " --batch " << batch;
  line << " --threads " << detail::max_threads(h);
}

}  // namespace tessera::blas::level3
