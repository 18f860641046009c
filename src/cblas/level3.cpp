// CBLAS level 3 over tessera::blas.
//
// Row-major: a row-major array is the column-major transpose, so C = op(A)*op(B) becomes
// C^T = op(B)^T*op(A)^T = op(B^T)*op(A^T) (operands and m/n swapped, the same ops, also for
// ConjTrans); trsm/trmm flip side and uplo and swap m/n; syrk flips uplo and exchanges
// NoTrans and Trans.
#include "common.hpp"

namespace {

using tessera::blas::Handle;
using tessera::blas::Op;
using tessera::cblas::Args;
using tessera::cblas::as;
using tessera::cblas::load;
using tessera::cblas::row_major;
using tessera::cblas::value;
namespace blas = tessera::blas;
namespace cb = tessera::cblas;
using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

template <typename T>
void gemm_impl(const char* rout, CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m,
               int n, int k, const void* alpha_p, const T* A, int lda, const T* B, int ldb,
               const void* beta_p, T* C, int ldc) {
  Args a(rout);
  if (!a.layout(1, layout) || !a.trans(2, "TransA", ta) || !a.trans(3, "TransB", tb) ||
      !a.size(4, "M", m) || !a.size(5, "N", n) || !a.size(6, "K", k))
    return;
  const bool na = value(ta) == CblasNoTrans, nb = value(tb) == CblasNoTrans;
  if (!a.ld(9, "lda", lda, layout, na ? "M" : "K", na ? m : k, na ? "K" : "M", na ? k : m) ||
      !a.ld(11, "ldb", ldb, layout, nb ? "K" : "N", nb ? k : n, nb ? "N" : "K", nb ? n : k) ||
      !a.ld(14, "ldc", ldc, layout, "M", m, "N", n))
    return;
  const bool uses_ab = m > 0 && n > 0 && k > 0;
  if (!a.ptr(7, "alpha", alpha_p, true) || !a.ptr(8, "A", A, uses_ab) ||
      !a.ptr(10, "B", B, uses_ab) || !a.ptr(12, "beta", beta_p, true) ||
      !a.ptr(13, "C", C, m > 0 && n > 0))
    return;
  const T alpha = load<T>(alpha_p), beta = load<T>(beta_p);
  a.run([&](Handle& h) {
    if (row_major(layout))
      return blas::gemm<T>(h, cb::op(tb), cb::op(ta), n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
    return blas::gemm<T>(h, cb::op(ta), cb::op(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

// trsm and trmm share their arguments and their row-major mapping.
template <typename T, bool kSolve>
void trxm_impl(const char* rout, CBLAS_LAYOUT layout, CBLAS_SIDE side, CBLAS_UPLO uplo,
               CBLAS_TRANSPOSE ta, CBLAS_DIAG diag, int m, int n, const void* alpha_p, const T* A,
               int lda, T* B, int ldb) {
  Args a(rout);
  if (!a.layout(1, layout) || !a.side(2, side) || !a.uplo(3, uplo) || !a.trans(4, "TransA", ta) ||
      !a.diag(5, diag) || !a.size(6, "M", m) || !a.size(7, "N", n))
    return;
  const bool left = static_cast<int>(side) == CblasLeft;
  const char* ka_name = left ? "M" : "N";
  const int ka = left ? m : n;
  if (!a.ld(10, "lda", lda, layout, ka_name, ka, ka_name, ka) ||
      !a.ld(12, "ldb", ldb, layout, "M", m, "N", n))
    return;
  const bool any = m > 0 && n > 0;
  if (!a.ptr(8, "alpha", alpha_p, true) || !a.ptr(9, "A", A, any) || !a.ptr(11, "B", B, any))
    return;
  const T alpha = load<T>(alpha_p);
  a.run([&](Handle& h) {
    const bool row = row_major(layout);
    const blas::Side s = cb::side(side, row);
    const blas::Uplo u = cb::uplo(uplo, row);
    const int mm = row ? n : m, nn = row ? m : n;
    return kSolve
               ? blas::trsm<T>(h, s, u, cb::op(ta), cb::diag(diag), mm, nn, alpha, A, lda, B, ldb)
               : blas::trmm<T>(h, s, u, cb::op(ta), cb::diag(diag), mm, nn, alpha, A, lda, B, ldb);
  });
}

template <typename T>
void syrk_impl(const char* rout, CBLAS_LAYOUT layout, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, int n,
               int k, const void* alpha_p, const T* A, int lda, const void* beta_p, T* C, int ldc) {
  Args a(rout);
  if (!a.layout(1, layout) || !a.uplo(2, uplo)) return;
  // Complex syrk is symmetric, not Hermitian: ConjTrans is not defined for it.
  const bool trans_ok =
      blas::is_complex_v<T> ? a.trans_no_conj(3, "Trans", trans) : a.trans(3, "Trans", trans);
  if (!trans_ok || !a.size(4, "N", n) || !a.size(5, "K", k)) return;
  const bool nt = value(trans) == CblasNoTrans;
  if (!a.ld(8, "lda", lda, layout, nt ? "N" : "K", nt ? n : k, nt ? "K" : "N", nt ? k : n) ||
      !a.ld(11, "ldc", ldc, layout, "N", n, "N", n))
    return;
  if (!a.ptr(6, "alpha", alpha_p, true) || !a.ptr(7, "A", A, n > 0 && k > 0) ||
      !a.ptr(9, "beta", beta_p, true) || !a.ptr(10, "C", C, n > 0))
    return;
  const T alpha = load<T>(alpha_p), beta = load<T>(beta_p);
  a.run([&](Handle& h) {
    const bool row = row_major(layout);
    // Row-major: C^T = C is computed from A^T, so A*A^T becomes (A^T)^T*(A^T).
    const Op op = nt != row ? Op::kNoTrans : Op::kTrans;
    return blas::syrk<T>(h, cb::uplo(uplo, row), op, n, k, alpha, A, lda, beta, C, ldc);
  });
}

}  // namespace

extern "C" {

// ---- gemm ----
void cblas_sgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                 const float alpha, const float* A, const int lda, const float* B, const int ldb,
                 const float beta, float* C, const int ldc) {
  gemm_impl("cblas_sgemm", layout, TransA, TransB, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
void cblas_dgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                 const double alpha, const double* A, const int lda, const double* B, const int ldb,
                 const double beta, double* C, const int ldc) {
  gemm_impl("cblas_dgemm", layout, TransA, TransB, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
void cblas_cgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                 const void* alpha, const void* A, const int lda, const void* B, const int ldb,
                 const void* beta, void* C, const int ldc) {
  gemm_impl("cblas_cgemm", layout, TransA, TransB, M, N, K, alpha, as<cfloat>(A), lda,
            as<cfloat>(B), ldb, beta, as<cfloat>(C), ldc);
}
void cblas_zgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                 const void* alpha, const void* A, const int lda, const void* B, const int ldb,
                 const void* beta, void* C, const int ldc) {
  gemm_impl("cblas_zgemm", layout, TransA, TransB, M, N, K, alpha, as<cdouble>(A), lda,
            as<cdouble>(B), ldb, beta, as<cdouble>(C), ldc);
}

// ---- syrk ----
void cblas_ssyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const int N, const int K, const float alpha, const float* A, const int lda,
                 const float beta, float* C, const int ldc) {
  syrk_impl("cblas_ssyrk", layout, Uplo, Trans, N, K, &alpha, A, lda, &beta, C, ldc);
}
void cblas_dsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const int N, const int K, const double alpha, const double* A, const int lda,
                 const double beta, double* C, const int ldc) {
  syrk_impl("cblas_dsyrk", layout, Uplo, Trans, N, K, &alpha, A, lda, &beta, C, ldc);
}
void cblas_csyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const int N, const int K, const void* alpha, const void* A, const int lda,
                 const void* beta, void* C, const int ldc) {
  syrk_impl("cblas_csyrk", layout, Uplo, Trans, N, K, alpha, as<cfloat>(A), lda, beta,
            as<cfloat>(C), ldc);
}
void cblas_zsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const int N, const int K, const void* alpha, const void* A, const int lda,
                 const void* beta, void* C, const int ldc) {
  syrk_impl("cblas_zsyrk", layout, Uplo, Trans, N, K, alpha, as<cdouble>(A), lda, beta,
            as<cdouble>(C), ldc);
}

// ---- trmm ----
void cblas_strmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const float alpha, const float* A, const int lda, float* B, const int ldb) {
  trxm_impl<float, false>("cblas_strmm", layout, Side, Uplo, TransA, Diag, M, N, &alpha, A, lda, B,
                          ldb);
}
void cblas_dtrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const double alpha, const double* A, const int lda, double* B, const int ldb) {
  trxm_impl<double, false>("cblas_dtrmm", layout, Side, Uplo, TransA, Diag, M, N, &alpha, A, lda, B,
                           ldb);
}
void cblas_ctrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void* alpha, const void* A, const int lda, void* B, const int ldb) {
  trxm_impl<cfloat, false>("cblas_ctrmm", layout, Side, Uplo, TransA, Diag, M, N, alpha,
                           as<cfloat>(A), lda, as<cfloat>(B), ldb);
}
void cblas_ztrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void* alpha, const void* A, const int lda, void* B, const int ldb) {
  trxm_impl<cdouble, false>("cblas_ztrmm", layout, Side, Uplo, TransA, Diag, M, N, alpha,
                            as<cdouble>(A), lda, as<cdouble>(B), ldb);
}

// ---- trsm ----
void cblas_strsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const float alpha, const float* A, const int lda, float* B, const int ldb) {
  trxm_impl<float, true>("cblas_strsm", layout, Side, Uplo, TransA, Diag, M, N, &alpha, A, lda, B,
                         ldb);
}
void cblas_dtrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const double alpha, const double* A, const int lda, double* B, const int ldb) {
  trxm_impl<double, true>("cblas_dtrsm", layout, Side, Uplo, TransA, Diag, M, N, &alpha, A, lda, B,
                          ldb);
}
void cblas_ctrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void* alpha, const void* A, const int lda, void* B, const int ldb) {
  trxm_impl<cfloat, true>("cblas_ctrsm", layout, Side, Uplo, TransA, Diag, M, N, alpha,
                          as<cfloat>(A), lda, as<cfloat>(B), ldb);
}
void cblas_ztrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void* alpha, const void* A, const int lda, void* B, const int ldb) {
  trxm_impl<cdouble, true>("cblas_ztrsm", layout, Side, Uplo, TransA, Diag, M, N, alpha,
                           as<cdouble>(A), lda, as<cdouble>(B), ldb);
}

}  // extern "C"
