// CBLAS level 2 over tessera::blas.
//
// Row-major: an M x N row-major array with leading dimension lda is the N x M column-major
// array A^T with the same lda, so each call becomes the column-major call on A^T (dimensions
// swapped, triangles flipped, NoTrans and Trans exchanged). A conjugate without a transpose
// (row-major ConjTrans gemv/trmv/trsv, row-major hemv and gerc) has no column-major
// counterpart; it is computed on conjugated vectors: conj(y) = conj(alpha)*A^T*conj(x) + ...
#include <vector>

#include "common.hpp"

namespace {

using tessera::Status;
using tessera::blas::Handle;
using tessera::blas::Op;
using tessera::cblas::Args;
using tessera::cblas::as;
using tessera::cblas::conj_vector;
using tessera::cblas::load;
using tessera::cblas::row_major;
using tessera::cblas::value;
namespace blas = tessera::blas;
namespace cb = tessera::cblas;
using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

// A contiguous copy of conj(x) (n elements, BLAS increment semantics).
template <typename T>
std::vector<T> conj_copy(int n, const T* x, int incx) {
  std::vector<T> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = std::conj(x[incx >= 0 ? i * incx : (static_cast<std::int64_t>(n) - 1 - i) * -incx]);
  return out;
}

template <typename T>
void gemv_impl(const char* rout, CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans, int m, int n,
               const void* alpha_p, const T* A, int lda, const T* x, int incx, const void* beta_p,
               T* y, int incy) {
  Args a(rout);
  if (!a.layout(1, layout) || !a.trans(2, "TransA", trans) || !a.size(3, "M", m) ||
      !a.size(4, "N", n) || !a.ld(7, "lda", lda, layout, "M", m, "N", n) ||
      !a.inc(9, "incX", incx) || !a.inc(12, "incY", incy))
    return;
  const int t = value(trans);
  const int lenx = t == CblasNoTrans ? n : m, leny = t == CblasNoTrans ? m : n;
  if (!a.ptr(5, "alpha", alpha_p, true) || !a.ptr(6, "A", A, m > 0 && n > 0) ||
      !a.ptr(8, "X", x, lenx > 0 && leny > 0) || !a.ptr(10, "beta", beta_p, true) ||
      !a.ptr(11, "Y", y, leny > 0))
    return;
  const T alpha = load<T>(alpha_p), beta = load<T>(beta_p);
  a.run([&](Handle& h) -> Status {
    if (!row_major(layout))
      return blas::gemv<T>(h, cb::op(trans), m, n, alpha, A, lda, x, incx, beta, y, incy);
    if (t == CblasNoTrans)
      return blas::gemv<T>(h, Op::kTrans, n, m, alpha, A, lda, x, incx, beta, y, incy);
    if (t == CblasTrans || !blas::is_complex_v<T>)
      return blas::gemv<T>(h, Op::kNoTrans, n, m, alpha, A, lda, x, incx, beta, y, incy);
    if constexpr (blas::is_complex_v<T>) {
      // y = alpha*conj(A^T)*x + beta*y  <=>  conj(y) = conj(alpha)*A^T*conj(x) + conj(beta)*conj(y)
      const std::vector<T> xc = conj_copy(m, x, incx);
      conj_vector(n, y, incy);
      const Status status = blas::gemv<T>(h, Op::kNoTrans, n, m, std::conj(alpha), A, lda,
                                          xc.data(), 1, std::conj(beta), y, incy);
      conj_vector(n, y, incy);
      return status;
    }
    return Status::ok();
  });
}

template <typename T, bool kConj>
void ger_impl(const char* rout, CBLAS_LAYOUT layout, int m, int n, const void* alpha_p, const T* x,
              int incx, const T* y, int incy, T* A, int lda) {
  Args a(rout);
  if (!a.layout(1, layout) || !a.size(2, "M", m) || !a.size(3, "N", n) || !a.inc(6, "incX", incx) ||
      !a.inc(8, "incY", incy) || !a.ld(10, "lda", lda, layout, "M", m, "N", n))
    return;
  const bool any = m > 0 && n > 0;
  if (!a.ptr(4, "alpha", alpha_p, true) || !a.ptr(5, "X", x, any) || !a.ptr(7, "Y", y, any) ||
      !a.ptr(9, "A", A, any))
    return;
  const T alpha = load<T>(alpha_p);
  a.run([&](Handle& h) -> Status {
    if (!row_major(layout)) {
      return kConj ? blas::gerc<T>(h, m, n, alpha, x, incx, y, incy, A, lda)
                   : blas::geru<T>(h, m, n, alpha, x, incx, y, incy, A, lda);
    }
    // A^T += alpha * y * x^T (geru), alpha * conj(y) * x^T (gerc).
    if constexpr (kConj && blas::is_complex_v<T>) {
      const std::vector<T> yc = conj_copy(n, y, incy);
      return blas::geru<T>(h, n, m, alpha, yc.data(), 1, x, incx, A, lda);
    }
    return blas::geru<T>(h, n, m, alpha, y, incy, x, incx, A, lda);
  });
}

// trmv and trsv share their arguments and their row-major mapping.
template <typename T, bool kSolve>
void trxv_impl(const char* rout, CBLAS_LAYOUT layout, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans,
               CBLAS_DIAG diag, int n, const T* A, int lda, T* x, int incx) {
  Args a(rout);
  if (!a.layout(1, layout) || !a.uplo(2, uplo) || !a.trans(3, "TransA", trans) ||
      !a.diag(4, diag) || !a.size(5, "N", n) || !a.ld(7, "lda", lda, layout, "N", n, "N", n) ||
      !a.inc(9, "incX", incx))
    return;
  if (!a.ptr(6, "A", A, n > 0) || !a.ptr(8, "X", x, n > 0)) return;
  auto call = [&](Handle& h, blas::Uplo u, Op o) {
    return kSolve ? blas::trsv<T>(h, u, o, cb::diag(diag), n, A, lda, x, incx)
                  : blas::trmv<T>(h, u, o, cb::diag(diag), n, A, lda, x, incx);
  };
  a.run([&](Handle& h) -> Status {
    if (!row_major(layout)) return call(h, cb::uplo(uplo, false), cb::op(trans));
    const blas::Uplo flipped = cb::uplo(uplo, true);
    const int t = value(trans);
    if (t == CblasNoTrans) return call(h, flipped, Op::kTrans);
    if (t == CblasTrans || !blas::is_complex_v<T>) return call(h, flipped, Op::kNoTrans);
    // op(A) = conj(A^T): conj(x) = op'(A^T) conj(x).
    if constexpr (blas::is_complex_v<T>) {
      conj_vector(n, x, incx);
      const Status status = call(h, flipped, Op::kNoTrans);
      conj_vector(n, x, incx);
      return status;
    }
    return Status::ok();
  });
}

// symv (real) and hemv (complex): A is the uplo triangle of a symmetric/Hermitian matrix.
template <typename T>
void symv_impl(const char* rout, CBLAS_LAYOUT layout, CBLAS_UPLO uplo, int n, const void* alpha_p,
               const T* A, int lda, const T* x, int incx, const void* beta_p, T* y, int incy) {
  Args a(rout);
  if (!a.layout(1, layout) || !a.uplo(2, uplo) || !a.size(3, "N", n) ||
      !a.ld(6, "lda", lda, layout, "N", n, "N", n) || !a.inc(8, "incX", incx) ||
      !a.inc(11, "incY", incy))
    return;
  if (!a.ptr(4, "alpha", alpha_p, true) || !a.ptr(5, "A", A, n > 0) || !a.ptr(7, "X", x, n > 0) ||
      !a.ptr(9, "beta", beta_p, true) || !a.ptr(10, "Y", y, n > 0))
    return;
  const T alpha = load<T>(alpha_p), beta = load<T>(beta_p);
  a.run([&](Handle& h) -> Status {
    const bool row = row_major(layout);
    const blas::Uplo u = cb::uplo(uplo, row);
    if constexpr (!blas::is_complex_v<T>) {
      return blas::symv<T>(h, u, n, alpha, A, lda, x, incx, beta, y, incy);
    } else {
      if (!row) return blas::hemv<T>(h, u, n, alpha, A, lda, x, incx, beta, y, incy);
      // The row-major array is conj(A) as a column-major Hermitian matrix.
      const std::vector<T> xc = conj_copy(n, x, incx);
      conj_vector(n, y, incy);
      const Status status =
          blas::hemv<T>(h, u, n, std::conj(alpha), A, lda, xc.data(), 1, std::conj(beta), y, incy);
      conj_vector(n, y, incy);
      return status;
    }
  });
}

}  // namespace

extern "C" {

// ---- gemv ----
void cblas_sgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const float alpha, const float* A, const int lda, const float* X, const int incX,
                 const float beta, float* Y, const int incY) {
  gemv_impl("cblas_sgemv", layout, TransA, M, N, &alpha, A, lda, X, incX, &beta, Y, incY);
}
void cblas_dgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const double alpha, const double* A, const int lda, const double* X,
                 const int incX, const double beta, double* Y, const int incY) {
  gemv_impl("cblas_dgemv", layout, TransA, M, N, &alpha, A, lda, X, incX, &beta, Y, incY);
}
void cblas_cgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const void* alpha, const void* A, const int lda, const void* X, const int incX,
                 const void* beta, void* Y, const int incY) {
  gemv_impl("cblas_cgemv", layout, TransA, M, N, alpha, as<cfloat>(A), lda, as<cfloat>(X), incX,
            beta, as<cfloat>(Y), incY);
}
void cblas_zgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const void* alpha, const void* A, const int lda, const void* X, const int incX,
                 const void* beta, void* Y, const int incY) {
  gemv_impl("cblas_zgemv", layout, TransA, M, N, alpha, as<cdouble>(A), lda, as<cdouble>(X), incX,
            beta, as<cdouble>(Y), incY);
}

// ---- ger / geru / gerc ----
void cblas_sger(const CBLAS_LAYOUT layout, const int M, const int N, const float alpha,
                const float* X, const int incX, const float* Y, const int incY, float* A,
                const int lda) {
  ger_impl<float, false>("cblas_sger", layout, M, N, &alpha, X, incX, Y, incY, A, lda);
}
void cblas_dger(const CBLAS_LAYOUT layout, const int M, const int N, const double alpha,
                const double* X, const int incX, const double* Y, const int incY, double* A,
                const int lda) {
  ger_impl<double, false>("cblas_dger", layout, M, N, &alpha, X, incX, Y, incY, A, lda);
}
void cblas_cgeru(const CBLAS_LAYOUT layout, const int M, const int N, const void* alpha,
                 const void* X, const int incX, const void* Y, const int incY, void* A,
                 const int lda) {
  ger_impl<cfloat, false>("cblas_cgeru", layout, M, N, alpha, as<cfloat>(X), incX, as<cfloat>(Y),
                          incY, as<cfloat>(A), lda);
}
void cblas_cgerc(const CBLAS_LAYOUT layout, const int M, const int N, const void* alpha,
                 const void* X, const int incX, const void* Y, const int incY, void* A,
                 const int lda) {
  ger_impl<cfloat, true>("cblas_cgerc", layout, M, N, alpha, as<cfloat>(X), incX, as<cfloat>(Y),
                         incY, as<cfloat>(A), lda);
}
void cblas_zgeru(const CBLAS_LAYOUT layout, const int M, const int N, const void* alpha,
                 const void* X, const int incX, const void* Y, const int incY, void* A,
                 const int lda) {
  ger_impl<cdouble, false>("cblas_zgeru", layout, M, N, alpha, as<cdouble>(X), incX, as<cdouble>(Y),
                           incY, as<cdouble>(A), lda);
}
void cblas_zgerc(const CBLAS_LAYOUT layout, const int M, const int N, const void* alpha,
                 const void* X, const int incX, const void* Y, const int incY, void* A,
                 const int lda) {
  ger_impl<cdouble, true>("cblas_zgerc", layout, M, N, alpha, as<cdouble>(X), incX, as<cdouble>(Y),
                          incY, as<cdouble>(A), lda);
}

// ---- trmv ----
void cblas_strmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const float* A, const int lda, float* X,
                 const int incX) {
  trxv_impl<float, false>("cblas_strmv", layout, Uplo, TransA, Diag, N, A, lda, X, incX);
}
void cblas_dtrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const double* A, const int lda, double* X,
                 const int incX) {
  trxv_impl<double, false>("cblas_dtrmv", layout, Uplo, TransA, Diag, N, A, lda, X, incX);
}
void cblas_ctrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void* A, const int lda, void* X,
                 const int incX) {
  trxv_impl<cfloat, false>("cblas_ctrmv", layout, Uplo, TransA, Diag, N, as<cfloat>(A), lda,
                           as<cfloat>(X), incX);
}
void cblas_ztrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void* A, const int lda, void* X,
                 const int incX) {
  trxv_impl<cdouble, false>("cblas_ztrmv", layout, Uplo, TransA, Diag, N, as<cdouble>(A), lda,
                            as<cdouble>(X), incX);
}

// ---- trsv ----
void cblas_strsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const float* A, const int lda, float* X,
                 const int incX) {
  trxv_impl<float, true>("cblas_strsv", layout, Uplo, TransA, Diag, N, A, lda, X, incX);
}
void cblas_dtrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const double* A, const int lda, double* X,
                 const int incX) {
  trxv_impl<double, true>("cblas_dtrsv", layout, Uplo, TransA, Diag, N, A, lda, X, incX);
}
void cblas_ctrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void* A, const int lda, void* X,
                 const int incX) {
  trxv_impl<cfloat, true>("cblas_ctrsv", layout, Uplo, TransA, Diag, N, as<cfloat>(A), lda,
                          as<cfloat>(X), incX);
}
void cblas_ztrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void* A, const int lda, void* X,
                 const int incX) {
  trxv_impl<cdouble, true>("cblas_ztrsv", layout, Uplo, TransA, Diag, N, as<cdouble>(A), lda,
                           as<cdouble>(X), incX);
}

// ---- symv / hemv ----
void cblas_ssymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                 const float* A, const int lda, const float* X, const int incX, const float beta,
                 float* Y, const int incY) {
  symv_impl("cblas_ssymv", layout, Uplo, N, &alpha, A, lda, X, incX, &beta, Y, incY);
}
void cblas_dsymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                 const double* A, const int lda, const double* X, const int incX, const double beta,
                 double* Y, const int incY) {
  symv_impl("cblas_dsymv", layout, Uplo, N, &alpha, A, lda, X, incX, &beta, Y, incY);
}
void cblas_chemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void* alpha,
                 const void* A, const int lda, const void* X, const int incX, const void* beta,
                 void* Y, const int incY) {
  symv_impl("cblas_chemv", layout, Uplo, N, alpha, as<cfloat>(A), lda, as<cfloat>(X), incX, beta,
            as<cfloat>(Y), incY);
}
void cblas_zhemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void* alpha,
                 const void* A, const int lda, const void* X, const int incX, const void* beta,
                 void* Y, const int incY) {
  symv_impl("cblas_zhemv", layout, Uplo, N, alpha, as<cdouble>(A), lda, as<cdouble>(X), incX, beta,
            as<cdouble>(Y), incY);
}

}  // extern "C"
