// C API, gemm family: gemm, mixed precision, batched and strided batched.
#include "capi.hpp"

namespace {

using tessera::capi::cpp;
using tessera::capi::cpp_t;
using tessera::capi::guard;
using tessera::capi::op;
using tessera::capi::val;
using Handle = tessera::blas::Handle;
namespace blas = tessera::blas;

template <typename C>
tsr_status gemm_c(const char* fn, tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb, int64_t m,
                  int64_t n, int64_t k, C alpha, const C* a, int64_t lda, const C* b, int64_t ldb,
                  C beta, C* c, int64_t ldc) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::gemm<cpp_t<C>>(hh, op(ta), op(tb), m, n, k, val(alpha), cpp(a), lda, cpp(b), ldb,
                                val(beta), cpp(c), ldc);
  });
}

template <typename C>
tsr_status gemm_batched_c(const char* fn, tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                          int64_t m, int64_t n, int64_t k, C alpha, const C* const a[], int64_t lda,
                          const C* const b[], int64_t ldb, C beta, C* const c[], int64_t ldc,
                          int64_t batch_count) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::gemm_batched<cpp_t<C>>(hh, op(ta), op(tb), m, n, k, val(alpha), cpp(a), lda,
                                        cpp(b), ldb, val(beta), cpp(c), ldc, batch_count);
  });
}

template <typename C>
tsr_status gemm_strided_batched_c(const char* fn, tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                  int64_t m, int64_t n, int64_t k, C alpha, const C* a, int64_t lda,
                                  int64_t stride_a, const C* b, int64_t ldb, int64_t stride_b,
                                  C beta, C* c, int64_t ldc, int64_t stride_c,
                                  int64_t batch_count) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::gemm_strided_batched<cpp_t<C>>(hh, op(ta), op(tb), m, n, k, val(alpha), cpp(a),
                                                lda, stride_a, cpp(b), ldb, stride_b, val(beta),
                                                cpp(c), ldc, stride_c, batch_count);
  });
}

using cf = tsr_float_complex;
using cd = tsr_double_complex;

}  // namespace

extern "C" {

// ---- gemm ----
TSR_API tsr_status tsr_blas_sgemm(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb, int64_t m,
                                  int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  return gemm_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
TSR_API tsr_status tsr_blas_dgemm(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb, int64_t m,
                                  int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                                  const double* b, int64_t ldb, double beta, double* c,
                                  int64_t ldc) {
  return gemm_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
TSR_API tsr_status tsr_blas_cgemm(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb, int64_t m,
                                  int64_t n, int64_t k, cf alpha, const cf* a, int64_t lda,
                                  const cf* b, int64_t ldb, cf beta, cf* c, int64_t ldc) {
  return gemm_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
TSR_API tsr_status tsr_blas_zgemm(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb, int64_t m,
                                  int64_t n, int64_t k, cd alpha, const cd* a, int64_t lda,
                                  const cd* b, int64_t ldb, cd beta, cd* c, int64_t ldc) {
  return gemm_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// ---- mixed precision ----
TSR_API tsr_status tsr_blas_gemm_bf16(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb, int64_t m,
                                      int64_t n, int64_t k, float alpha, const tsr_bfloat16* a,
                                      int64_t lda, const tsr_bfloat16* b, int64_t ldb, float beta,
                                      float* c, int64_t ldc) {
  return guard(__func__, h, [&](Handle& hh) {
    return blas::gemm_bf16(hh, op(ta), op(tb), m, n, k, alpha, cpp(a), lda, cpp(b), ldb, beta, c,
                           ldc);
  });
}
TSR_API tsr_status tsr_blas_gemm_f16(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb, int64_t m,
                                     int64_t n, int64_t k, float alpha, const tsr_half* a,
                                     int64_t lda, const tsr_half* b, int64_t ldb, float beta,
                                     float* c, int64_t ldc) {
  return guard(__func__, h, [&](Handle& hh) {
    return blas::gemm_f16(hh, op(ta), op(tb), m, n, k, alpha, cpp(a), lda, cpp(b), ldb, beta, c,
                          ldc);
  });
}
TSR_API tsr_status tsr_blas_gemm_u8s8s32(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                         int64_t m, int64_t n, int64_t k, int32_t alpha,
                                         const uint8_t* a, int64_t lda, const int8_t* b,
                                         int64_t ldb, int32_t beta, int32_t* c, int64_t ldc) {
  return guard(__func__, h, [&](Handle& hh) {
    return blas::gemm_u8s8s32(hh, op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

// ---- batched ----
TSR_API tsr_status tsr_blas_sgemm_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                          int64_t m, int64_t n, int64_t k, float alpha,
                                          const float* const a[], int64_t lda,
                                          const float* const b[], int64_t ldb, float beta,
                                          float* const c[], int64_t ldc, int64_t batch_count) {
  return gemm_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                        batch_count);
}
TSR_API tsr_status tsr_blas_dgemm_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                          int64_t m, int64_t n, int64_t k, double alpha,
                                          const double* const a[], int64_t lda,
                                          const double* const b[], int64_t ldb, double beta,
                                          double* const c[], int64_t ldc, int64_t batch_count) {
  return gemm_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                        batch_count);
}
TSR_API tsr_status tsr_blas_cgemm_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                          int64_t m, int64_t n, int64_t k, cf alpha,
                                          const cf* const a[], int64_t lda, const cf* const b[],
                                          int64_t ldb, cf beta, cf* const c[], int64_t ldc,
                                          int64_t batch_count) {
  return gemm_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                        batch_count);
}
TSR_API tsr_status tsr_blas_zgemm_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                          int64_t m, int64_t n, int64_t k, cd alpha,
                                          const cd* const a[], int64_t lda, const cd* const b[],
                                          int64_t ldb, cd beta, cd* const c[], int64_t ldc,
                                          int64_t batch_count) {
  return gemm_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                        batch_count);
}

// ---- strided batched ----
TSR_API tsr_status tsr_blas_sgemm_strided_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                                  int64_t m, int64_t n, int64_t k, float alpha,
                                                  const float* a, int64_t lda, int64_t stride_a,
                                                  const float* b, int64_t ldb, int64_t stride_b,
                                                  float beta, float* c, int64_t ldc,
                                                  int64_t stride_c, int64_t batch_count) {
  return gemm_strided_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                stride_b, beta, c, ldc, stride_c, batch_count);
}
TSR_API tsr_status tsr_blas_dgemm_strided_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                                  int64_t m, int64_t n, int64_t k, double alpha,
                                                  const double* a, int64_t lda, int64_t stride_a,
                                                  const double* b, int64_t ldb, int64_t stride_b,
                                                  double beta, double* c, int64_t ldc,
                                                  int64_t stride_c, int64_t batch_count) {
  return gemm_strided_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                stride_b, beta, c, ldc, stride_c, batch_count);
}
TSR_API tsr_status tsr_blas_cgemm_strided_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                                  int64_t m, int64_t n, int64_t k, cf alpha,
                                                  const cf* a, int64_t lda, int64_t stride_a,
                                                  const cf* b, int64_t ldb, int64_t stride_b,
                                                  cf beta, cf* c, int64_t ldc, int64_t stride_c,
                                                  int64_t batch_count) {
  return gemm_strided_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                stride_b, beta, c, ldc, stride_c, batch_count);
}
TSR_API tsr_status tsr_blas_zgemm_strided_batched(tsr_blas_handle h, tsr_blas_op ta, tsr_blas_op tb,
                                                  int64_t m, int64_t n, int64_t k, cd alpha,
                                                  const cd* a, int64_t lda, int64_t stride_a,
                                                  const cd* b, int64_t ldb, int64_t stride_b,
                                                  cd beta, cd* c, int64_t ldc, int64_t stride_c,
                                                  int64_t batch_count) {
  return gemm_strided_batched_c(__func__, h, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                stride_b, beta, c, ldc, stride_c, batch_count);
}

}  // extern "C"
