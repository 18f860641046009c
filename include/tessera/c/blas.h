/* tessera BLAS, C interface: one function per routine and type, over the C++ API in
 * include/tessera/blas.hpp (the contracts there apply unchanged).
 *
 * - Column-major, like reference BLAS and rocBLAS. Row-major callers use the CBLAS layer
 *   (libtessera_cblas.so, include/tessera/cblas/cblas.h).
 * - Names: tsr_blas_<t><routine> with t = s (float), d (double), c (tsr_float_complex),
 *   z (tsr_double_complex), h (tsr_half), bf (tsr_bfloat16); mixed-type routines follow
 *   BLAS (scasum, dznrm2, csscal, zdrot, ...).
 * - Sizes, leading dimensions and increments are int64_t; index results (i?amax, i?amin)
 *   are 0-based, 0 when n == 0. Scalars are passed by value, results through pointers.
 * - Every function returns a tsr_status. An invalid argument (negative size, lda too small,
 *   zero increment, null pointer where data is needed, an enum value outside its range, a
 *   null handle) returns TSR_STATUS_INVALID_ARGUMENT, writes nothing, and leaves a message
 *   naming the parameter for tsr_last_error_message().
 * - A handle is not thread-safe: use one per calling thread.
 *
 * This header compiles as C (C99 and later) and as C++. */
#ifndef TESSERA_C_BLAS_H_
#define TESSERA_C_BLAS_H_

#include <stddef.h>
#include <stdint.h>

#include "tessera/c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ------------------------------------------------------------------------- */

/* Layout-compatible with std::complex<float> / std::complex<double> and C99 _Complex. */
typedef struct tsr_float_complex {
  float re, im;
} tsr_float_complex;
typedef struct tsr_double_complex {
  double re, im;
} tsr_double_complex;
/* IEEE binary16 and bfloat16, as raw bits. */
typedef struct tsr_half {
  uint16_t bits;
} tsr_half;
typedef struct tsr_bfloat16 {
  uint16_t bits;
} tsr_bfloat16;

/* Each enum (tsr_status too) has a *_INT_RANGE_ enumerator equal to INT_MIN. It is never a
 * valid argument; it makes every int a value of the type in C++ as in C, so a wrong value
 * passed by a caller is reported as TSR_STATUS_INVALID_ARGUMENT, never undefined. */
typedef enum tsr_blas_op {
  TSR_BLAS_OP_N = 0, /* no transpose */
  TSR_BLAS_OP_T = 1, /* transpose */
  TSR_BLAS_OP_C = 2, /* conjugate transpose */
  TSR_BLAS_OP_INT_RANGE_ = -0x7fffffff - 1
} tsr_blas_op;
typedef enum tsr_blas_uplo {
  TSR_BLAS_UPLO_UPPER = 0,
  TSR_BLAS_UPLO_LOWER = 1,
  TSR_BLAS_UPLO_INT_RANGE_ = -0x7fffffff - 1
} tsr_blas_uplo;
typedef enum tsr_blas_diag {
  TSR_BLAS_DIAG_NON_UNIT = 0,
  TSR_BLAS_DIAG_UNIT = 1,
  TSR_BLAS_DIAG_INT_RANGE_ = -0x7fffffff - 1
} tsr_blas_diag;
typedef enum tsr_blas_side {
  TSR_BLAS_SIDE_LEFT = 0,
  TSR_BLAS_SIDE_RIGHT = 1,
  TSR_BLAS_SIDE_INT_RANGE_ = -0x7fffffff - 1
} tsr_blas_side;
/* BITWISE (default): identical results for any thread count. ANY: summation order may
 * depend on the thread count where that is faster. */
typedef enum tsr_blas_determinism {
  TSR_BLAS_DETERMINISM_BITWISE = 0,
  TSR_BLAS_DETERMINISM_ANY = 1,
  TSR_BLAS_DETERMINISM_INT_RANGE_ = -0x7fffffff - 1
} tsr_blas_determinism;

/* ---- Handle ------------------------------------------------------------------------ */

typedef struct tsr_blas_handle_s* tsr_blas_handle;

TSR_API tsr_status tsr_blas_create_handle(tsr_blas_handle* handle);
/* A null handle is accepted and ignored. */
TSR_API tsr_status tsr_blas_destroy_handle(tsr_blas_handle handle);
/* Upper bound on the threads one call uses; 0 (the default) = the process thread pool. */
TSR_API tsr_status tsr_blas_set_num_threads(tsr_blas_handle handle, int num_threads);
TSR_API tsr_status tsr_blas_get_num_threads(tsr_blas_handle handle, int* num_threads);
TSR_API tsr_status tsr_blas_set_determinism(tsr_blas_handle handle, tsr_blas_determinism mode);
TSR_API tsr_status tsr_blas_get_determinism(tsr_blas_handle handle, tsr_blas_determinism* mode);
/* Scratch memory for packing (64-byte aligned; ptr == NULL, bytes == 0 goes back to memory
 * the handle allocates itself). The caller keeps it alive while the handle uses it. */
TSR_API tsr_status tsr_blas_set_workspace(tsr_blas_handle handle, void* ptr, size_t bytes);
/* The larger of the caller's block and the handle's own. */
TSR_API tsr_status tsr_blas_get_workspace_size(tsr_blas_handle handle, size_t* bytes);

/* ---- Level 1 ----------------------------------------------------------------------- */

/* Index of the first element of largest (smallest) |re| + |im|. */
TSR_API tsr_status tsr_blas_isamax(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                   int64_t* result);
TSR_API tsr_status tsr_blas_idamax(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                   int64_t* result);
TSR_API tsr_status tsr_blas_icamax(tsr_blas_handle h, int64_t n, const tsr_float_complex* x,
                                   int64_t incx, int64_t* result);
TSR_API tsr_status tsr_blas_izamax(tsr_blas_handle h, int64_t n, const tsr_double_complex* x,
                                   int64_t incx, int64_t* result);
TSR_API tsr_status tsr_blas_isamin(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                   int64_t* result);
TSR_API tsr_status tsr_blas_idamin(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                   int64_t* result);
TSR_API tsr_status tsr_blas_icamin(tsr_blas_handle h, int64_t n, const tsr_float_complex* x,
                                   int64_t incx, int64_t* result);
TSR_API tsr_status tsr_blas_izamin(tsr_blas_handle h, int64_t n, const tsr_double_complex* x,
                                   int64_t incx, int64_t* result);

/* Sum of |re| + |im|. */
TSR_API tsr_status tsr_blas_sasum(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                  float* result);
TSR_API tsr_status tsr_blas_dasum(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                  double* result);
TSR_API tsr_status tsr_blas_scasum(tsr_blas_handle h, int64_t n, const tsr_float_complex* x,
                                   int64_t incx, float* result);
TSR_API tsr_status tsr_blas_dzasum(tsr_blas_handle h, int64_t n, const tsr_double_complex* x,
                                   int64_t incx, double* result);

/* y += alpha * x. */
TSR_API tsr_status tsr_blas_saxpy(tsr_blas_handle h, int64_t n, float alpha, const float* x,
                                  int64_t incx, float* y, int64_t incy);
TSR_API tsr_status tsr_blas_daxpy(tsr_blas_handle h, int64_t n, double alpha, const double* x,
                                  int64_t incx, double* y, int64_t incy);
TSR_API tsr_status tsr_blas_caxpy(tsr_blas_handle h, int64_t n, tsr_float_complex alpha,
                                  const tsr_float_complex* x, int64_t incx, tsr_float_complex* y,
                                  int64_t incy);
TSR_API tsr_status tsr_blas_zaxpy(tsr_blas_handle h, int64_t n, tsr_double_complex alpha,
                                  const tsr_double_complex* x, int64_t incx, tsr_double_complex* y,
                                  int64_t incy);
TSR_API tsr_status tsr_blas_haxpy(tsr_blas_handle h, int64_t n, float alpha, const tsr_half* x,
                                  int64_t incx, tsr_half* y, int64_t incy);
TSR_API tsr_status tsr_blas_bfaxpy(tsr_blas_handle h, int64_t n, float alpha, const tsr_bfloat16* x,
                                   int64_t incx, tsr_bfloat16* y, int64_t incy);

/* y = x. */
TSR_API tsr_status tsr_blas_scopy(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                  float* y, int64_t incy);
TSR_API tsr_status tsr_blas_dcopy(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                  double* y, int64_t incy);
TSR_API tsr_status tsr_blas_ccopy(tsr_blas_handle h, int64_t n, const tsr_float_complex* x,
                                  int64_t incx, tsr_float_complex* y, int64_t incy);
TSR_API tsr_status tsr_blas_zcopy(tsr_blas_handle h, int64_t n, const tsr_double_complex* x,
                                  int64_t incx, tsr_double_complex* y, int64_t incy);

/* sum x*y (dotu: unconjugated), sum conj(x)*y (dotc). h/bf accumulate in float. */
TSR_API tsr_status tsr_blas_sdot(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                 const float* y, int64_t incy, float* result);
TSR_API tsr_status tsr_blas_ddot(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                 const double* y, int64_t incy, double* result);
TSR_API tsr_status tsr_blas_hdot(tsr_blas_handle h, int64_t n, const tsr_half* x, int64_t incx,
                                 const tsr_half* y, int64_t incy, float* result);
TSR_API tsr_status tsr_blas_bfdot(tsr_blas_handle h, int64_t n, const tsr_bfloat16* x, int64_t incx,
                                  const tsr_bfloat16* y, int64_t incy, float* result);
TSR_API tsr_status tsr_blas_cdotu(tsr_blas_handle h, int64_t n, const tsr_float_complex* x,
                                  int64_t incx, const tsr_float_complex* y, int64_t incy,
                                  tsr_float_complex* result);
TSR_API tsr_status tsr_blas_zdotu(tsr_blas_handle h, int64_t n, const tsr_double_complex* x,
                                  int64_t incx, const tsr_double_complex* y, int64_t incy,
                                  tsr_double_complex* result);
TSR_API tsr_status tsr_blas_cdotc(tsr_blas_handle h, int64_t n, const tsr_float_complex* x,
                                  int64_t incx, const tsr_float_complex* y, int64_t incy,
                                  tsr_float_complex* result);
TSR_API tsr_status tsr_blas_zdotc(tsr_blas_handle h, int64_t n, const tsr_double_complex* x,
                                  int64_t incx, const tsr_double_complex* y, int64_t incy,
                                  tsr_double_complex* result);

/* Euclidean norm, without overflow or underflow on huge or tiny values. */
TSR_API tsr_status tsr_blas_snrm2(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                  float* result);
TSR_API tsr_status tsr_blas_dnrm2(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                  double* result);
TSR_API tsr_status tsr_blas_scnrm2(tsr_blas_handle h, int64_t n, const tsr_float_complex* x,
                                   int64_t incx, float* result);
TSR_API tsr_status tsr_blas_dznrm2(tsr_blas_handle h, int64_t n, const tsr_double_complex* x,
                                   int64_t incx, double* result);

/* x = alpha * x (csscal/zdscal: complex x, real alpha). */
TSR_API tsr_status tsr_blas_sscal(tsr_blas_handle h, int64_t n, float alpha, float* x,
                                  int64_t incx);
TSR_API tsr_status tsr_blas_dscal(tsr_blas_handle h, int64_t n, double alpha, double* x,
                                  int64_t incx);
TSR_API tsr_status tsr_blas_cscal(tsr_blas_handle h, int64_t n, tsr_float_complex alpha,
                                  tsr_float_complex* x, int64_t incx);
TSR_API tsr_status tsr_blas_zscal(tsr_blas_handle h, int64_t n, tsr_double_complex alpha,
                                  tsr_double_complex* x, int64_t incx);
TSR_API tsr_status tsr_blas_hscal(tsr_blas_handle h, int64_t n, float alpha, tsr_half* x,
                                  int64_t incx);
TSR_API tsr_status tsr_blas_bfscal(tsr_blas_handle h, int64_t n, float alpha, tsr_bfloat16* x,
                                   int64_t incx);
TSR_API tsr_status tsr_blas_csscal(tsr_blas_handle h, int64_t n, float alpha, tsr_float_complex* x,
                                   int64_t incx);
TSR_API tsr_status tsr_blas_zdscal(tsr_blas_handle h, int64_t n, double alpha,
                                   tsr_double_complex* x, int64_t incx);

/* x <-> y. */
TSR_API tsr_status tsr_blas_sswap(tsr_blas_handle h, int64_t n, float* x, int64_t incx, float* y,
                                  int64_t incy);
TSR_API tsr_status tsr_blas_dswap(tsr_blas_handle h, int64_t n, double* x, int64_t incx, double* y,
                                  int64_t incy);
TSR_API tsr_status tsr_blas_cswap(tsr_blas_handle h, int64_t n, tsr_float_complex* x, int64_t incx,
                                  tsr_float_complex* y, int64_t incy);
TSR_API tsr_status tsr_blas_zswap(tsr_blas_handle h, int64_t n, tsr_double_complex* x, int64_t incx,
                                  tsr_double_complex* y, int64_t incy);

/* Plane rotation with real c and s: (x, y) = (c*x + s*y, c*y - s*x). */
TSR_API tsr_status tsr_blas_srot(tsr_blas_handle h, int64_t n, float* x, int64_t incx, float* y,
                                 int64_t incy, float c, float s);
TSR_API tsr_status tsr_blas_drot(tsr_blas_handle h, int64_t n, double* x, int64_t incx, double* y,
                                 int64_t incy, double c, double s);
TSR_API tsr_status tsr_blas_csrot(tsr_blas_handle h, int64_t n, tsr_float_complex* x, int64_t incx,
                                  tsr_float_complex* y, int64_t incy, float c, float s);
TSR_API tsr_status tsr_blas_zdrot(tsr_blas_handle h, int64_t n, tsr_double_complex* x, int64_t incx,
                                  tsr_double_complex* y, int64_t incy, double c, double s);

/* Givens rotation: on return a = r, b = z (real) or unchanged (complex), and c, s are set.
 * No handle: the routine does no vector work. */
TSR_API tsr_status tsr_blas_srotg(float* a, float* b, float* c, float* s);
TSR_API tsr_status tsr_blas_drotg(double* a, double* b, double* c, double* s);
TSR_API tsr_status tsr_blas_crotg(tsr_float_complex* a, tsr_float_complex* b, float* c,
                                  tsr_float_complex* s);
TSR_API tsr_status tsr_blas_zrotg(tsr_double_complex* a, tsr_double_complex* b, double* c,
                                  tsr_double_complex* s);

/* ---- Level 2 ----------------------------------------------------------------------- */

/* y = alpha*op(A)*x + beta*y, A is m x n. */
TSR_API tsr_status tsr_blas_sgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  float alpha, const float* a, int64_t lda, const float* x,
                                  int64_t incx, float beta, float* y, int64_t incy);
TSR_API tsr_status tsr_blas_dgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  double alpha, const double* a, int64_t lda, const double* x,
                                  int64_t incx, double beta, double* y, int64_t incy);
TSR_API tsr_status tsr_blas_cgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  tsr_float_complex alpha, const tsr_float_complex* a, int64_t lda,
                                  const tsr_float_complex* x, int64_t incx, tsr_float_complex beta,
                                  tsr_float_complex* y, int64_t incy);
TSR_API tsr_status tsr_blas_zgemv(tsr_blas_handle h, tsr_blas_op trans, int64_t m, int64_t n,
                                  tsr_double_complex alpha, const tsr_double_complex* a,
                                  int64_t lda, const tsr_double_complex* x, int64_t incx,
                                  tsr_double_complex beta, tsr_double_complex* y, int64_t incy);

/* A += alpha*x*y^T (ger, geru) or alpha*x*y^H (gerc). */
TSR_API tsr_status tsr_blas_sger(tsr_blas_handle h, int64_t m, int64_t n, float alpha,
                                 const float* x, int64_t incx, const float* y, int64_t incy,
                                 float* a, int64_t lda);
TSR_API tsr_status tsr_blas_dger(tsr_blas_handle h, int64_t m, int64_t n, double alpha,
                                 const double* x, int64_t incx, const double* y, int64_t incy,
                                 double* a, int64_t lda);
TSR_API tsr_status tsr_blas_cgeru(tsr_blas_handle h, int64_t m, int64_t n, tsr_float_complex alpha,
                                  const tsr_float_complex* x, int64_t incx,
                                  const tsr_float_complex* y, int64_t incy, tsr_float_complex* a,
                                  int64_t lda);
TSR_API tsr_status tsr_blas_zgeru(tsr_blas_handle h, int64_t m, int64_t n, tsr_double_complex alpha,
                                  const tsr_double_complex* x, int64_t incx,
                                  const tsr_double_complex* y, int64_t incy, tsr_double_complex* a,
                                  int64_t lda);
TSR_API tsr_status tsr_blas_cgerc(tsr_blas_handle h, int64_t m, int64_t n, tsr_float_complex alpha,
                                  const tsr_float_complex* x, int64_t incx,
                                  const tsr_float_complex* y, int64_t incy, tsr_float_complex* a,
                                  int64_t lda);
TSR_API tsr_status tsr_blas_zgerc(tsr_blas_handle h, int64_t m, int64_t n, tsr_double_complex alpha,
                                  const tsr_double_complex* x, int64_t incx,
                                  const tsr_double_complex* y, int64_t incy, tsr_double_complex* a,
                                  int64_t lda);

/* x = op(A)*x, A triangular n x n. */
TSR_API tsr_status tsr_blas_strmv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const float* a, int64_t lda,
                                  float* x, int64_t incx);
TSR_API tsr_status tsr_blas_dtrmv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const double* a, int64_t lda,
                                  double* x, int64_t incx);
TSR_API tsr_status tsr_blas_ctrmv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const tsr_float_complex* a,
                                  int64_t lda, tsr_float_complex* x, int64_t incx);
TSR_API tsr_status tsr_blas_ztrmv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const tsr_double_complex* a,
                                  int64_t lda, tsr_double_complex* x, int64_t incx);

/* x = op(A)^-1 * x, A triangular n x n. */
TSR_API tsr_status tsr_blas_strsv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const float* a, int64_t lda,
                                  float* x, int64_t incx);
TSR_API tsr_status tsr_blas_dtrsv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const double* a, int64_t lda,
                                  double* x, int64_t incx);
TSR_API tsr_status tsr_blas_ctrsv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const tsr_float_complex* a,
                                  int64_t lda, tsr_float_complex* x, int64_t incx);
TSR_API tsr_status tsr_blas_ztrsv(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  tsr_blas_diag diag, int64_t n, const tsr_double_complex* a,
                                  int64_t lda, tsr_double_complex* x, int64_t incx);

/* y = alpha*A*x + beta*y, A symmetric (symv, also complex) or Hermitian (hemv) n x n. */
TSR_API tsr_status tsr_blas_ssymv(tsr_blas_handle h, tsr_blas_uplo uplo, int64_t n, float alpha,
                                  const float* a, int64_t lda, const float* x, int64_t incx,
                                  float beta, float* y, int64_t incy);
TSR_API tsr_status tsr_blas_dsymv(tsr_blas_handle h, tsr_blas_uplo uplo, int64_t n, double alpha,
                                  const double* a, int64_t lda, const double* x, int64_t incx,
                                  double beta, double* y, int64_t incy);
TSR_API tsr_status tsr_blas_csymv(tsr_blas_handle h, tsr_blas_uplo uplo, int64_t n,
                                  tsr_float_complex alpha, const tsr_float_complex* a, int64_t lda,
                                  const tsr_float_complex* x, int64_t incx, tsr_float_complex beta,
                                  tsr_float_complex* y, int64_t incy);
TSR_API tsr_status tsr_blas_zsymv(tsr_blas_handle h, tsr_blas_uplo uplo, int64_t n,
                                  tsr_double_complex alpha, const tsr_double_complex* a,
                                  int64_t lda, const tsr_double_complex* x, int64_t incx,
                                  tsr_double_complex beta, tsr_double_complex* y, int64_t incy);
TSR_API tsr_status tsr_blas_chemv(tsr_blas_handle h, tsr_blas_uplo uplo, int64_t n,
                                  tsr_float_complex alpha, const tsr_float_complex* a, int64_t lda,
                                  const tsr_float_complex* x, int64_t incx, tsr_float_complex beta,
                                  tsr_float_complex* y, int64_t incy);
TSR_API tsr_status tsr_blas_zhemv(tsr_blas_handle h, tsr_blas_uplo uplo, int64_t n,
                                  tsr_double_complex alpha, const tsr_double_complex* a,
                                  int64_t lda, const tsr_double_complex* x, int64_t incx,
                                  tsr_double_complex beta, tsr_double_complex* y, int64_t incy);

/* ---- Level 3 ----------------------------------------------------------------------- */

/* C = alpha*op(A)*op(B) + beta*C; C is m x n, op(A) m x k. beta == 0: C is not read. */
TSR_API tsr_status tsr_blas_sgemm(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                  int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                                  int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                                  int64_t ldc);
TSR_API tsr_status tsr_blas_dgemm(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                  int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                                  int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                                  int64_t ldc);
TSR_API tsr_status tsr_blas_cgemm(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                  int64_t m, int64_t n, int64_t k, tsr_float_complex alpha,
                                  const tsr_float_complex* a, int64_t lda,
                                  const tsr_float_complex* b, int64_t ldb, tsr_float_complex beta,
                                  tsr_float_complex* c, int64_t ldc);
TSR_API tsr_status tsr_blas_zgemm(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                  int64_t m, int64_t n, int64_t k, tsr_double_complex alpha,
                                  const tsr_double_complex* a, int64_t lda,
                                  const tsr_double_complex* b, int64_t ldb, tsr_double_complex beta,
                                  tsr_double_complex* c, int64_t ldc);

/* Mixed precision: A and B in bf16 or f16; C and the accumulation in float. */
TSR_API tsr_status tsr_blas_gemm_bf16(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                      int64_t m, int64_t n, int64_t k, float alpha,
                                      const tsr_bfloat16* a, int64_t lda, const tsr_bfloat16* b,
                                      int64_t ldb, float beta, float* c, int64_t ldc);
TSR_API tsr_status tsr_blas_gemm_f16(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                     int64_t m, int64_t n, int64_t k, float alpha,
                                     const tsr_half* a, int64_t lda, const tsr_half* b, int64_t ldb,
                                     float beta, float* c, int64_t ldc);
/* Integer: A uint8, B int8, C int32 with wrap-around arithmetic; OP_C means OP_T. */
TSR_API tsr_status tsr_blas_gemm_u8s8s32(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                         int64_t m, int64_t n, int64_t k, int32_t alpha,
                                         const uint8_t* a, int64_t lda, const int8_t* b,
                                         int64_t ldb, int32_t beta, int32_t* c, int64_t ldc);

/* One gemm per pointer triple a[i], b[i], c[i]. */
TSR_API tsr_status tsr_blas_sgemm_batched(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                          int64_t m, int64_t n, int64_t k, float alpha,
                                          const float* const a[], int64_t lda,
                                          const float* const b[], int64_t ldb, float beta,
                                          float* const c[], int64_t ldc, int64_t batch_count);
TSR_API tsr_status tsr_blas_dgemm_batched(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                          int64_t m, int64_t n, int64_t k, double alpha,
                                          const double* const a[], int64_t lda,
                                          const double* const b[], int64_t ldb, double beta,
                                          double* const c[], int64_t ldc, int64_t batch_count);
TSR_API tsr_status tsr_blas_cgemm_batched(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                          int64_t m, int64_t n, int64_t k, tsr_float_complex alpha,
                                          const tsr_float_complex* const a[], int64_t lda,
                                          const tsr_float_complex* const b[], int64_t ldb,
                                          tsr_float_complex beta, tsr_float_complex* const c[],
                                          int64_t ldc, int64_t batch_count);
TSR_API tsr_status tsr_blas_zgemm_batched(tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb,
                                          int64_t m, int64_t n, int64_t k, tsr_double_complex alpha,
                                          const tsr_double_complex* const a[], int64_t lda,
                                          const tsr_double_complex* const b[], int64_t ldb,
                                          tsr_double_complex beta, tsr_double_complex* const c[],
                                          int64_t ldc, int64_t batch_count);

/* Matrix i at a + i*stride_a, b + i*stride_b, c + i*stride_c (A and B strides may be 0). */
TSR_API tsr_status tsr_blas_sgemm_strided_batched(
    tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb, int64_t m, int64_t n, int64_t k,
    float alpha, const float* a, int64_t lda, int64_t stride_a, const float* b, int64_t ldb,
    int64_t stride_b, float beta, float* c, int64_t ldc, int64_t stride_c, int64_t batch_count);
TSR_API tsr_status tsr_blas_dgemm_strided_batched(
    tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb, int64_t m, int64_t n, int64_t k,
    double alpha, const double* a, int64_t lda, int64_t stride_a, const double* b, int64_t ldb,
    int64_t stride_b, double beta, double* c, int64_t ldc, int64_t stride_c, int64_t batch_count);
TSR_API tsr_status tsr_blas_cgemm_strided_batched(
    tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb, int64_t m, int64_t n, int64_t k,
    tsr_float_complex alpha, const tsr_float_complex* a, int64_t lda, int64_t stride_a,
    const tsr_float_complex* b, int64_t ldb, int64_t stride_b, tsr_float_complex beta,
    tsr_float_complex* c, int64_t ldc, int64_t stride_c, int64_t batch_count);
TSR_API tsr_status tsr_blas_zgemm_strided_batched(
    tsr_blas_handle h, tsr_blas_op transa, tsr_blas_op transb, int64_t m, int64_t n, int64_t k,
    tsr_double_complex alpha, const tsr_double_complex* a, int64_t lda, int64_t stride_a,
    const tsr_double_complex* b, int64_t ldb, int64_t stride_b, tsr_double_complex beta,
    tsr_double_complex* c, int64_t ldc, int64_t stride_c, int64_t batch_count);

/* B = alpha*op(A)^-1*B (side left) or alpha*B*op(A)^-1 (side right); B is m x n. */
TSR_API tsr_status tsr_blas_strsm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  float alpha, const float* a, int64_t lda, float* b, int64_t ldb);
TSR_API tsr_status tsr_blas_dtrsm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  double alpha, const double* a, int64_t lda, double* b,
                                  int64_t ldb);
TSR_API tsr_status tsr_blas_ctrsm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  tsr_float_complex alpha, const tsr_float_complex* a, int64_t lda,
                                  tsr_float_complex* b, int64_t ldb);
TSR_API tsr_status tsr_blas_ztrsm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  tsr_double_complex alpha, const tsr_double_complex* a,
                                  int64_t lda, tsr_double_complex* b, int64_t ldb);

/* B = alpha*op(A)*B (side left) or alpha*B*op(A) (side right); B is m x n. */
TSR_API tsr_status tsr_blas_strmm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  float alpha, const float* a, int64_t lda, float* b, int64_t ldb);
TSR_API tsr_status tsr_blas_dtrmm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  double alpha, const double* a, int64_t lda, double* b,
                                  int64_t ldb);
TSR_API tsr_status tsr_blas_ctrmm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  tsr_float_complex alpha, const tsr_float_complex* a, int64_t lda,
                                  tsr_float_complex* b, int64_t ldb);
TSR_API tsr_status tsr_blas_ztrmm(tsr_blas_handle h, tsr_blas_side side, tsr_blas_uplo uplo,
                                  tsr_blas_op transa, tsr_blas_diag diag, int64_t m, int64_t n,
                                  tsr_double_complex alpha, const tsr_double_complex* a,
                                  int64_t lda, tsr_double_complex* b, int64_t ldb);

/* C = alpha*A*A^T + beta*C (trans N, A n x k) or alpha*A^T*A + beta*C (trans T); only the
 * uplo triangle of C is referenced. */
TSR_API tsr_status tsr_blas_ssyrk(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                                  float beta, float* c, int64_t ldc);
TSR_API tsr_status tsr_blas_dsyrk(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                                  double beta, double* c, int64_t ldc);
TSR_API tsr_status tsr_blas_csyrk(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  int64_t n, int64_t k, tsr_float_complex alpha,
                                  const tsr_float_complex* a, int64_t lda, tsr_float_complex beta,
                                  tsr_float_complex* c, int64_t ldc);
TSR_API tsr_status tsr_blas_zsyrk(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_op trans,
                                  int64_t n, int64_t k, tsr_double_complex alpha,
                                  const tsr_double_complex* a, int64_t lda, tsr_double_complex beta,
                                  tsr_double_complex* c, int64_t ldc);

/* In-place inverse of a triangular matrix. A singular matrix (a zero on the diagonal of a
 * non-unit matrix) returns TSR_STATUS_INVALID_ARGUMENT naming the first zero pivot and
 * leaves A untouched. */
TSR_API tsr_status tsr_blas_strtri(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_diag diag,
                                   int64_t n, float* a, int64_t lda);
TSR_API tsr_status tsr_blas_dtrtri(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_diag diag,
                                   int64_t n, double* a, int64_t lda);
TSR_API tsr_status tsr_blas_ctrtri(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_diag diag,
                                   int64_t n, tsr_float_complex* a, int64_t lda);
TSR_API tsr_status tsr_blas_ztrtri(tsr_blas_handle h, tsr_blas_uplo uplo, tsr_blas_diag diag,
                                   int64_t n, tsr_double_complex* a, int64_t lda);
TSR_API tsr_status tsr_blas_strtri_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                           tsr_blas_diag diag, int64_t n, float* const a[],
                                           int64_t lda, int64_t batch_count);
TSR_API tsr_status tsr_blas_dtrtri_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                           tsr_blas_diag diag, int64_t n, double* const a[],
                                           int64_t lda, int64_t batch_count);
TSR_API tsr_status tsr_blas_ctrtri_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                           tsr_blas_diag diag, int64_t n,
                                           tsr_float_complex* const a[], int64_t lda,
                                           int64_t batch_count);
TSR_API tsr_status tsr_blas_ztrtri_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                           tsr_blas_diag diag, int64_t n,
                                           tsr_double_complex* const a[], int64_t lda,
                                           int64_t batch_count);
TSR_API tsr_status tsr_blas_strtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                                   tsr_blas_diag diag, int64_t n, float* a,
                                                   int64_t lda, int64_t stride_a,
                                                   int64_t batch_count);
TSR_API tsr_status tsr_blas_dtrtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                                   tsr_blas_diag diag, int64_t n, double* a,
                                                   int64_t lda, int64_t stride_a,
                                                   int64_t batch_count);
TSR_API tsr_status tsr_blas_ctrtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                                   tsr_blas_diag diag, int64_t n,
                                                   tsr_float_complex* a, int64_t lda,
                                                   int64_t stride_a, int64_t batch_count);
TSR_API tsr_status tsr_blas_ztrtri_strided_batched(tsr_blas_handle h, tsr_blas_uplo uplo,
                                                   tsr_blas_diag diag, int64_t n,
                                                   tsr_double_complex* a, int64_t lda,
                                                   int64_t stride_a, int64_t batch_count);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_BLAS_H_ */
