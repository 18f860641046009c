// C API, BLAS level 2: one extern "C" function per routine and type over tessera::blas.
#include "capi.hpp"

namespace {

using tessera::capi::cpp;
using tessera::capi::cpp_t;
using tessera::capi::diag;
using tessera::capi::guard;
using tessera::capi::op;
using tessera::capi::uplo;
using tessera::capi::val;
using Handle = tessera::blas::Handle;
namespace blas = tessera::blas;

template <typename C>
tsr_status gemv_c(const char* fn, tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                  C alpha, const C* a, int64_t lda, const C* x, int64_t incx, C beta, C* y,
                  int64_t incy) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::gemv<cpp_t<C>>(hh, op(trans), m, n, val(alpha), cpp(a), lda, cpp(x), incx,
                                val(beta), cpp(y), incy);
  });
}

template <typename C>
tsr_status geru_c(const char* fn, tsr_blas_handle h, int64_t m, int64_t n, C alpha, const C* x,
                  int64_t incx, const C* y, int64_t incy, C* a, int64_t lda) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::geru<cpp_t<C>>(hh, m, n, val(alpha), cpp(x), incx, cpp(y), incy, cpp(a), lda);
  });
}

template <typename C>
tsr_status gerc_c(const char* fn, tsr_blas_handle h, int64_t m, int64_t n, C alpha, const C* x,
                  int64_t incx, const C* y, int64_t incy, C* a, int64_t lda) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::gerc<cpp_t<C>>(hh, m, n, val(alpha), cpp(x), incx, cpp(y), incy, cpp(a), lda);
  });
}

template <typename C>
tsr_status trmv_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                  tsr_blas_diag dg, int64_t n, const C* a, int64_t lda, C* x, int64_t incx) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::trmv<cpp_t<C>>(hh, uplo(ul), op(trans), diag(dg), n, cpp(a), lda, cpp(x), incx);
  });
}

template <typename C>
tsr_status trsv_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                  tsr_blas_diag dg, int64_t n, const C* a, int64_t lda, C* x, int64_t incx) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::trsv<cpp_t<C>>(hh, uplo(ul), op(trans), diag(dg), n, cpp(a), lda, cpp(x), incx);
  });
}

template <typename C>
tsr_status symv_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, C alpha,
                  const C* a, int64_t lda, const C* x, int64_t incx, C beta, C* y, int64_t incy) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::symv<cpp_t<C>>(hh, uplo(ul), n, val(alpha), cpp(a), lda, cpp(x), incx, val(beta),
                                cpp(y), incy);
  });
}

template <typename C>
tsr_status hemv_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, C alpha,
                  const C* a, int64_t lda, const C* x, int64_t incx, C beta, C* y, int64_t incy) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::hemv<cpp_t<C>>(hh, uplo(ul), n, val(alpha), cpp(a), lda, cpp(x), incx, val(beta),
                                cpp(y), incy);
  });
}

using cf = tsr_float_complex;
using cd = tsr_double_complex;

}  // namespace

extern "C" {

// ---- gemv ----
TSR_API tsr_status tsr_blas_sgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  float alpha, const float* a, int64_t lda, const float* x,
                                  int64_t incx, float beta, float* y, int64_t incy) {
  return gemv_c(__func__, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_dgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  double alpha, const double* a, int64_t lda, const double* x,
                                  int64_t incx, double beta, double* y, int64_t incy) {
  return gemv_c(__func__, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_cgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  cf alpha, const cf* a, int64_t lda, const cf* x, int64_t incx,
                                  cf beta, cf* y, int64_t incy) {
  return gemv_c(__func__, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_zgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  cd alpha, const cd* a, int64_t lda, const cd* x, int64_t incx,
                                  cd beta, cd* y, int64_t incy) {
  return gemv_c(__func__, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

// ---- ger / geru / gerc ----
TSR_API tsr_status tsr_blas_sger(tsr_blas_handle h, int64_t m, int64_t n, float alpha,
                                 const float* x, int64_t incx, const float* y, int64_t incy,
                                 float* a, int64_t lda) {
  return geru_c(__func__, h, m, n, alpha, x, incx, y, incy, a, lda);
}
TSR_API tsr_status tsr_blas_dger(tsr_blas_handle h, int64_t m, int64_t n, double alpha,
                                 const double* x, int64_t incx, const double* y, int64_t incy,
                                 double* a, int64_t lda) {
  return geru_c(__func__, h, m, n, alpha, x, incx, y, incy, a, lda);
}
TSR_API tsr_status tsr_blas_cgeru(tsr_blas_handle h, int64_t m, int64_t n, cf alpha, const cf* x,
                                  int64_t incx, const cf* y, int64_t incy, cf* a, int64_t lda) {
  return geru_c(__func__, h, m, n, alpha, x, incx, y, incy, a, lda);
}
TSR_API tsr_status tsr_blas_zgeru(tsr_blas_handle h, int64_t m, int64_t n, cd alpha, const cd* x,
                                  int64_t incx, const cd* y, int64_t incy, cd* a, int64_t lda) {
  return geru_c(__func__, h, m, n, alpha, x, incx, y, incy, a, lda);
}
TSR_API tsr_status tsr_blas_cgerc(tsr_blas_handle h, int64_t m, int64_t n, cf alpha, const cf* x,
                                  int64_t incx, const cf* y, int64_t incy, cf* a, int64_t lda) {
  return gerc_c(__func__, h, m, n, alpha, x, incx, y, incy, a, lda);
}
TSR_API tsr_status tsr_blas_zgerc(tsr_blas_handle h, int64_t m, int64_t n, cd alpha, const cd* x,
                                  int64_t incx, const cd* y, int64_t incy, cd* a, int64_t lda) {
  return gerc_c(__func__, h, m, n, alpha, x, incx, y, incy, a, lda);
}

// ---- trmv ----
TSR_API tsr_status tsr_blas_strmv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const float* a, int64_t lda,
                                  float* x, int64_t incx) {
  return trmv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}
TSR_API tsr_status tsr_blas_dtrmv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const double* a, int64_t lda,
                                  double* x, int64_t incx) {
  return trmv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}
TSR_API tsr_status tsr_blas_ctrmv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const cf* a, int64_t lda, cf* x,
                                  int64_t incx) {
  return trmv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}
TSR_API tsr_status tsr_blas_ztrmv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const cd* a, int64_t lda, cd* x,
                                  int64_t incx) {
  return trmv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}

// ---- trsv ----
TSR_API tsr_status tsr_blas_strsv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const float* a, int64_t lda,
                                  float* x, int64_t incx) {
  return trsv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}
TSR_API tsr_status tsr_blas_dtrsv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const double* a, int64_t lda,
                                  double* x, int64_t incx) {
  return trsv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}
TSR_API tsr_status tsr_blas_ctrsv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const cf* a, int64_t lda, cf* x,
                                  int64_t incx) {
  return trsv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}
TSR_API tsr_status tsr_blas_ztrsv(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans,
                                  tsr_blas_diag dg, int64_t n, const cd* a, int64_t lda, cd* x,
                                  int64_t incx) {
  return trsv_c(__func__, h, ul, trans, dg, n, a, lda, x, incx);
}

// ---- symv / hemv ----
TSR_API tsr_status tsr_blas_ssymv(tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, float alpha,
                                  const float* a, int64_t lda, const float* x, int64_t incx,
                                  float beta, float* y, int64_t incy) {
  return symv_c(__func__, h, ul, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_dsymv(tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, double alpha,
                                  const double* a, int64_t lda, const double* x, int64_t incx,
                                  double beta, double* y, int64_t incy) {
  return symv_c(__func__, h, ul, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_csymv(tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, cf alpha,
                                  const cf* a, int64_t lda, const cf* x, int64_t incx, cf beta,
                                  cf* y, int64_t incy) {
  return symv_c(__func__, h, ul, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_zsymv(tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, cd alpha,
                                  const cd* a, int64_t lda, const cd* x, int64_t incx, cd beta,
                                  cd* y, int64_t incy) {
  return symv_c(__func__, h, ul, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_chemv(tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, cf alpha,
                                  const cf* a, int64_t lda, const cf* x, int64_t incx, cf beta,
                                  cf* y, int64_t incy) {
  return hemv_c(__func__, h, ul, n, alpha, a, lda, x, incx, beta, y, incy);
}
TSR_API tsr_status tsr_blas_zhemv(tsr_blas_handle h, tsr_blas_uplo ul, int64_t n, cd alpha,
                                  const cd* a, int64_t lda, const cd* x, int64_t incx, cd beta,
                                  cd* y, int64_t incy) {
  return hemv_c(__func__, h, ul, n, alpha, a, lda, x, incx, beta, y, incy);
}

}  // extern "C"
