// C API, BLAS level 3 beyond gemm: trsm, trmm, syrk, trtri (single, batched, strided).
#include "capi.hpp"

namespace {

using tessera::capi::cpp;
using tessera::capi::cpp_t;
using tessera::capi::diag;
using tessera::capi::guard;
using tessera::capi::op;
using tessera::capi::side;
using tessera::capi::uplo;
using tessera::capi::val;
using Handle = tessera::blas::Handle;
namespace blas = tessera::blas;

template <typename C>
tsr_status trsm_c(const char* fn, tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n, C alpha, const C* a,
                  int64_t lda, C* b, int64_t ldb) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::trsm<cpp_t<C>>(hh, side(sd), uplo(ul), op(ta), diag(dg), m, n, val(alpha), cpp(a),
                                lda, cpp(b), ldb);
  });
}

template <typename C>
tsr_status trmm_c(const char* fn, tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n, C alpha, const C* a,
                  int64_t lda, C* b, int64_t ldb) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::trmm<cpp_t<C>>(hh, side(sd), uplo(ul), op(ta), diag(dg), m, n, val(alpha), cpp(a),
                                lda, cpp(b), ldb);
  });
}

template <typename C>
tsr_status syrk_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans, int64_t n,
                  int64_t k, C alpha, const C* a, int64_t lda, C beta, C* c, int64_t ldc) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::syrk<cpp_t<C>>(hh, uplo(ul), op(trans), n, k, val(alpha), cpp(a), lda, val(beta),
                                cpp(c), ldc);
  });
}

template <typename C>
tsr_status trtri_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg, int64_t n,
                   C* a, int64_t lda) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::trtri<cpp_t<C>>(hh, uplo(ul), diag(dg), n, cpp(a), lda);
  });
}

template <typename C>
tsr_status trtri_batched_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg,
                           int64_t n, C* const a[], int64_t lda, int64_t batch_count) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::trtri_batched<cpp_t<C>>(hh, uplo(ul), diag(dg), n, cpp(a), lda, batch_count);
  });
}

template <typename C>
tsr_status trtri_strided_batched_c(const char* fn, tsr_blas_handle h, tsr_blas_uplo ul,
                                   tsr_blas_diag dg, int64_t n, C* a, int64_t lda, int64_t stride_a,
                                   int64_t batch_count) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::trtri_strided_batched<cpp_t<C>>(hh, uplo(ul), diag(dg), n, cpp(a), lda, stride_a,
                                                 batch_count);
  });
}

using cf = tsr_float_complex;
using cd = tsr_double_complex;

}  // namespace

extern "C" {

// ---- trsm ----
TSR_API tsr_status tsr_blas_strsm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n,
                                  float alpha, const float* a, int64_t lda, float* b, int64_t ldb) {
  return trsm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}
TSR_API tsr_status tsr_blas_dtrsm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n,
                                  double alpha, const double* a, int64_t lda, double* b,
                                  int64_t ldb) {
  return trsm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}
TSR_API tsr_status tsr_blas_ctrsm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n, cf alpha,
                                  const cf* a, int64_t lda, cf* b, int64_t ldb) {
  return trsm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}
TSR_API tsr_status tsr_blas_ztrsm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n, cd alpha,
                                  const cd* a, int64_t lda, cd* b, int64_t ldb) {
  return trsm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}

// ---- trmm ----
TSR_API tsr_status tsr_blas_strmm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n,
                                  float alpha, const float* a, int64_t lda, float* b, int64_t ldb) {
  return trmm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}
TSR_API tsr_status tsr_blas_dtrmm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n,
                                  double alpha, const double* a, int64_t lda, double* b,
                                  int64_t ldb) {
  return trmm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}
TSR_API tsr_status tsr_blas_ctrmm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n, cf alpha,
                                  const cf* a, int64_t lda, cf* b, int64_t ldb) {
  return trmm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}
TSR_API tsr_status tsr_blas_ztrmm(tsr_blas_handle h, tsr_blas_side sd, tsr_blas_uplo ul,
                                  tsr_blas_op ta, tsr_blas_diag dg, int64_t m, int64_t n, cd alpha,
                                  const cd* a, int64_t lda, cd* b, int64_t ldb) {
  return trmm_c(__func__, h, sd, ul, ta, dg, m, n, alpha, a, lda, b, ldb);
}

// ---- syrk ----
TSR_API tsr_status tsr_blas_ssyrk(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans, int64_t n,
                                  int64_t k, float alpha, const float* a, int64_t lda, float beta,
                                  float* c, int64_t ldc) {
  return syrk_c(__func__, h, ul, trans, n, k, alpha, a, lda, beta, c, ldc);
}
TSR_API tsr_status tsr_blas_dsyrk(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans, int64_t n,
                                  int64_t k, double alpha, const double* a, int64_t lda,
                                  double beta, double* c, int64_t ldc) {
  return syrk_c(__func__, h, ul, trans, n, k, alpha, a, lda, beta, c, ldc);
}
TSR_API tsr_status tsr_blas_csyrk(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans, int64_t n,
                                  int64_t k, cf alpha, const cf* a, int64_t lda, cf beta, cf* c,
                                  int64_t ldc) {
  return syrk_c(__func__, h, ul, trans, n, k, alpha, a, lda, beta, c, ldc);
}
TSR_API tsr_status tsr_blas_zsyrk(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_op trans, int64_t n,
                                  int64_t k, cd alpha, const cd* a, int64_t lda, cd beta, cd* c,
                                  int64_t ldc) {
  return syrk_c(__func__, h, ul, trans, n, k, alpha, a, lda, beta, c, ldc);
}

// ---- trtri ----
TSR_API tsr_status tsr_blas_strtri(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg, int64_t n,
                                   float* a, int64_t lda) {
  return trtri_c(__func__, h, ul, dg, n, a, lda);
}
TSR_API tsr_status tsr_blas_dtrtri(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg, int64_t n,
                                   double* a, int64_t lda) {
  return trtri_c(__func__, h, ul, dg, n, a, lda);
}
TSR_API tsr_status tsr_blas_ctrtri(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg, int64_t n,
                                   cf* a, int64_t lda) {
  return trtri_c(__func__, h, ul, dg, n, a, lda);
}
TSR_API tsr_status tsr_blas_ztrtri(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg, int64_t n,
                                   cd* a, int64_t lda) {
  return trtri_c(__func__, h, ul, dg, n, a, lda);
}
TSR_API tsr_status tsr_blas_strtri_batched(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg,
                                           int64_t n, float* const a[], int64_t lda,
                                           int64_t batch_count) {
  return trtri_batched_c(__func__, h, ul, dg, n, a, lda, batch_count);
}
TSR_API tsr_status tsr_blas_dtrtri_batched(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg,
                                           int64_t n, double* const a[], int64_t lda,
                                           int64_t batch_count) {
  return trtri_batched_c(__func__, h, ul, dg, n, a, lda, batch_count);
}
TSR_API tsr_status tsr_blas_ctrtri_batched(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg,
                                           int64_t n, cf* const a[], int64_t lda,
                                           int64_t batch_count) {
  return trtri_batched_c(__func__, h, ul, dg, n, a, lda, batch_count);
}
TSR_API tsr_status tsr_blas_ztrtri_batched(tsr_blas_handle h, tsr_blas_uplo ul, tsr_blas_diag dg,
                                           int64_t n, cd* const a[], int64_t lda,
                                           int64_t batch_count) {
  return trtri_batched_c(__func__, h, ul, dg, n, a, lda, batch_count);
}
TSR_API tsr_status tsr_blas_strtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo ul,
                                                   tsr_blas_diag dg, int64_t n, float* a,
                                                   int64_t lda, int64_t stride_a,
                                                   int64_t batch_count) {
  return trtri_strided_batched_c(__func__, h, ul, dg, n, a, lda, stride_a, batch_count);
}
TSR_API tsr_status tsr_blas_dtrtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo ul,
                                                   tsr_blas_diag dg, int64_t n, double* a,
                                                   int64_t lda, int64_t stride_a,
                                                   int64_t batch_count) {
  return trtri_strided_batched_c(__func__, h, ul, dg, n, a, lda, stride_a, batch_count);
}
TSR_API tsr_status tsr_blas_ctrtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo ul,
                                                   tsr_blas_diag dg, int64_t n, cf* a, int64_t lda,
                                                   int64_t stride_a, int64_t batch_count) {
  return trtri_strided_batched_c(__func__, h, ul, dg, n, a, lda, stride_a, batch_count);
}
TSR_API tsr_status tsr_blas_ztrtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo ul,
                                                   tsr_blas_diag dg, int64_t n, cd* a, int64_t lda,
                                                   int64_t stride_a, int64_t batch_count) {
  return trtri_strided_batched_c(__func__, h, ul, dg, n, a, lda, stride_a, batch_count);
}

}  // extern "C"
