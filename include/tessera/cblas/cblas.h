/* CBLAS interface of tessera (libtessera_cblas.so).
 *
 * The standard cblas_* declarations, source-compatible with the reference cblas.h: a program
 * written against CBLAS builds unchanged with `-I <tessera>/include/tessera/cblas` and links
 * with `-ltessera_cblas`. LP64: integer arguments are 32-bit `int`; index results are
 * CBLAS_INDEX (size_t), 0-based; complex scalars and arrays are passed as `void*` to
 * interleaved (re, im) pairs.
 *
 * Both layouts are supported: CblasRowMajor is mapped onto tessera's column-major routines.
 * An invalid argument calls cblas_xerbla(p, "cblas_<name>", form, ...) with p the 1-based
 * position of the offending parameter, and the routine returns without writing anything.
 * The default cblas_xerbla is a weak symbol that prints the problem to stderr and returns;
 * a program may define its own. Level-1 routines follow the reference BLAS quick returns
 * (n <= 0; incx <= 0 for i?amax, ?asum, ?nrm2, ?scal) without calling cblas_xerbla.
 *
 * See docs/capi.md. */
#ifndef TESSERA_CBLAS_H_
#define TESSERA_CBLAS_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef CBLAS_INDEX
#define CBLAS_INDEX size_t
#endif
#ifndef CBLAS_INT
#define CBLAS_INT int
#endif
/* libtessera_cblas.so is built for 32-bit integers (LP64). */
typedef char tessera_cblas_int_must_be_32_bit[sizeof(CBLAS_INT) == 4 ? 1 : -1];

/* The standard values. The extra *IntRange_ enumerator (INT_MIN, never valid) makes every
 * int a value of the type in C++ as in C, so a wrong value is reported, never undefined. */
typedef enum CBLAS_LAYOUT {
  CblasRowMajor = 101,
  CblasColMajor = 102,
  CblasLayoutIntRange_ = -0x7fffffff - 1
} CBLAS_LAYOUT;
typedef enum CBLAS_TRANSPOSE {
  CblasNoTrans = 111,
  CblasTrans = 112,
  CblasConjTrans = 113,
  CblasTransposeIntRange_ = -0x7fffffff - 1
} CBLAS_TRANSPOSE;
typedef enum CBLAS_UPLO {
  CblasUpper = 121,
  CblasLower = 122,
  CblasUploIntRange_ = -0x7fffffff - 1
} CBLAS_UPLO;
typedef enum CBLAS_DIAG {
  CblasNonUnit = 131,
  CblasUnit = 132,
  CblasDiagIntRange_ = -0x7fffffff - 1
} CBLAS_DIAG;
typedef enum CBLAS_SIDE {
  CblasLeft = 141,
  CblasRight = 142,
  CblasSideIntRange_ = -0x7fffffff - 1
} CBLAS_SIDE;
typedef CBLAS_LAYOUT CBLAS_ORDER; /* the older name */

/* ---- Level 1 --------------------------------------------------------------------- */

float cblas_sdsdot(const CBLAS_INT N, const float alpha, const float* X, const CBLAS_INT incX,
                   const float* Y, const CBLAS_INT incY);
double cblas_dsdot(const CBLAS_INT N, const float* X, const CBLAS_INT incX, const float* Y,
                   const CBLAS_INT incY);
float cblas_sdot(const CBLAS_INT N, const float* X, const CBLAS_INT incX, const float* Y,
                 const CBLAS_INT incY);
double cblas_ddot(const CBLAS_INT N, const double* X, const CBLAS_INT incX, const double* Y,
                  const CBLAS_INT incY);
void cblas_cdotu_sub(const CBLAS_INT N, const void* X, const CBLAS_INT incX, const void* Y,
                     const CBLAS_INT incY, void* dotu);
void cblas_cdotc_sub(const CBLAS_INT N, const void* X, const CBLAS_INT incX, const void* Y,
                     const CBLAS_INT incY, void* dotc);
void cblas_zdotu_sub(const CBLAS_INT N, const void* X, const CBLAS_INT incX, const void* Y,
                     const CBLAS_INT incY, void* dotu);
void cblas_zdotc_sub(const CBLAS_INT N, const void* X, const CBLAS_INT incX, const void* Y,
                     const CBLAS_INT incY, void* dotc);

float cblas_snrm2(const CBLAS_INT N, const float* X, const CBLAS_INT incX);
float cblas_sasum(const CBLAS_INT N, const float* X, const CBLAS_INT incX);
double cblas_dnrm2(const CBLAS_INT N, const double* X, const CBLAS_INT incX);
double cblas_dasum(const CBLAS_INT N, const double* X, const CBLAS_INT incX);
float cblas_scnrm2(const CBLAS_INT N, const void* X, const CBLAS_INT incX);
float cblas_scasum(const CBLAS_INT N, const void* X, const CBLAS_INT incX);
double cblas_dznrm2(const CBLAS_INT N, const void* X, const CBLAS_INT incX);
double cblas_dzasum(const CBLAS_INT N, const void* X, const CBLAS_INT incX);

CBLAS_INDEX cblas_isamax(const CBLAS_INT N, const float* X, const CBLAS_INT incX);
CBLAS_INDEX cblas_idamax(const CBLAS_INT N, const double* X, const CBLAS_INT incX);
CBLAS_INDEX cblas_icamax(const CBLAS_INT N, const void* X, const CBLAS_INT incX);
CBLAS_INDEX cblas_izamax(const CBLAS_INT N, const void* X, const CBLAS_INT incX);
/* Extensions (as in OpenBLAS): index of the smallest |re| + |im|. */
CBLAS_INDEX cblas_isamin(const CBLAS_INT N, const float* X, const CBLAS_INT incX);
CBLAS_INDEX cblas_idamin(const CBLAS_INT N, const double* X, const CBLAS_INT incX);
CBLAS_INDEX cblas_icamin(const CBLAS_INT N, const void* X, const CBLAS_INT incX);
CBLAS_INDEX cblas_izamin(const CBLAS_INT N, const void* X, const CBLAS_INT incX);

void cblas_sswap(const CBLAS_INT N, float* X, const CBLAS_INT incX, float* Y, const CBLAS_INT incY);
void cblas_scopy(const CBLAS_INT N, const float* X, const CBLAS_INT incX, float* Y,
                 const CBLAS_INT incY);
void cblas_saxpy(const CBLAS_INT N, const float alpha, const float* X, const CBLAS_INT incX,
                 float* Y, const CBLAS_INT incY);
void cblas_dswap(const CBLAS_INT N, double* X, const CBLAS_INT incX, double* Y,
                 const CBLAS_INT incY);
void cblas_dcopy(const CBLAS_INT N, const double* X, const CBLAS_INT incX, double* Y,
                 const CBLAS_INT incY);
void cblas_daxpy(const CBLAS_INT N, const double alpha, const double* X, const CBLAS_INT incX,
                 double* Y, const CBLAS_INT incY);
void cblas_cswap(const CBLAS_INT N, void* X, const CBLAS_INT incX, void* Y, const CBLAS_INT incY);
void cblas_ccopy(const CBLAS_INT N, const void* X, const CBLAS_INT incX, void* Y,
                 const CBLAS_INT incY);
void cblas_caxpy(const CBLAS_INT N, const void* alpha, const void* X, const CBLAS_INT incX, void* Y,
                 const CBLAS_INT incY);
void cblas_zswap(const CBLAS_INT N, void* X, const CBLAS_INT incX, void* Y, const CBLAS_INT incY);
void cblas_zcopy(const CBLAS_INT N, const void* X, const CBLAS_INT incX, void* Y,
                 const CBLAS_INT incY);
void cblas_zaxpy(const CBLAS_INT N, const void* alpha, const void* X, const CBLAS_INT incX, void* Y,
                 const CBLAS_INT incY);

void cblas_srotg(float* a, float* b, float* c, float* s);
void cblas_drotg(double* a, double* b, double* c, double* s);
void cblas_crotg(void* a, void* b, float* c, void* s);
void cblas_zrotg(void* a, void* b, double* c, void* s);
void cblas_srotmg(float* d1, float* d2, float* b1, const float b2, float* P);
void cblas_drotmg(double* d1, double* d2, double* b1, const double b2, double* P);
void cblas_srot(const CBLAS_INT N, float* X, const CBLAS_INT incX, float* Y, const CBLAS_INT incY,
                const float c, const float s);
void cblas_drot(const CBLAS_INT N, double* X, const CBLAS_INT incX, double* Y, const CBLAS_INT incY,
                const double c, const double s);
void cblas_csrot(const CBLAS_INT N, void* X, const CBLAS_INT incX, void* Y, const CBLAS_INT incY,
                 const float c, const float s);
void cblas_zdrot(const CBLAS_INT N, void* X, const CBLAS_INT incX, void* Y, const CBLAS_INT incY,
                 const double c, const double s);
void cblas_srotm(const CBLAS_INT N, float* X, const CBLAS_INT incX, float* Y, const CBLAS_INT incY,
                 const float* P);
void cblas_drotm(const CBLAS_INT N, double* X, const CBLAS_INT incX, double* Y,
                 const CBLAS_INT incY, const double* P);

void cblas_sscal(const CBLAS_INT N, const float alpha, float* X, const CBLAS_INT incX);
void cblas_dscal(const CBLAS_INT N, const double alpha, double* X, const CBLAS_INT incX);
void cblas_cscal(const CBLAS_INT N, const void* alpha, void* X, const CBLAS_INT incX);
void cblas_zscal(const CBLAS_INT N, const void* alpha, void* X, const CBLAS_INT incX);
void cblas_csscal(const CBLAS_INT N, const float alpha, void* X, const CBLAS_INT incX);
void cblas_zdscal(const CBLAS_INT N, const double alpha, void* X, const CBLAS_INT incX);

/* ---- Level 2 --------------------------------------------------------------------- */

void cblas_sgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_INT M,
                 const CBLAS_INT N, const float alpha, const float* A, const CBLAS_INT lda,
                 const float* X, const CBLAS_INT incX, const float beta, float* Y,
                 const CBLAS_INT incY);
void cblas_dgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_INT M,
                 const CBLAS_INT N, const double alpha, const double* A, const CBLAS_INT lda,
                 const double* X, const CBLAS_INT incX, const double beta, double* Y,
                 const CBLAS_INT incY);
void cblas_cgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_INT M,
                 const CBLAS_INT N, const void* alpha, const void* A, const CBLAS_INT lda,
                 const void* X, const CBLAS_INT incX, const void* beta, void* Y,
                 const CBLAS_INT incY);
void cblas_zgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_INT M,
                 const CBLAS_INT N, const void* alpha, const void* A, const CBLAS_INT lda,
                 const void* X, const CBLAS_INT incX, const void* beta, void* Y,
                 const CBLAS_INT incY);

void cblas_sger(const CBLAS_LAYOUT layout, const CBLAS_INT M, const CBLAS_INT N, const float alpha,
                const float* X, const CBLAS_INT incX, const float* Y, const CBLAS_INT incY,
                float* A, const CBLAS_INT lda);
void cblas_dger(const CBLAS_LAYOUT layout, const CBLAS_INT M, const CBLAS_INT N, const double alpha,
                const double* X, const CBLAS_INT incX, const double* Y, const CBLAS_INT incY,
                double* A, const CBLAS_INT lda);
void cblas_cgeru(const CBLAS_LAYOUT layout, const CBLAS_INT M, const CBLAS_INT N, const void* alpha,
                 const void* X, const CBLAS_INT incX, const void* Y, const CBLAS_INT incY, void* A,
                 const CBLAS_INT lda);
void cblas_cgerc(const CBLAS_LAYOUT layout, const CBLAS_INT M, const CBLAS_INT N, const void* alpha,
                 const void* X, const CBLAS_INT incX, const void* Y, const CBLAS_INT incY, void* A,
                 const CBLAS_INT lda);
void cblas_zgeru(const CBLAS_LAYOUT layout, const CBLAS_INT M, const CBLAS_INT N, const void* alpha,
                 const void* X, const CBLAS_INT incX, const void* Y, const CBLAS_INT incY, void* A,
                 const CBLAS_INT lda);
void cblas_zgerc(const CBLAS_LAYOUT layout, const CBLAS_INT M, const CBLAS_INT N, const void* alpha,
                 const void* X, const CBLAS_INT incX, const void* Y, const CBLAS_INT incY, void* A,
                 const CBLAS_INT lda);

void cblas_strmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const float* A, const CBLAS_INT lda,
                 float* X, const CBLAS_INT incX);
void cblas_dtrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const double* A, const CBLAS_INT lda,
                 double* X, const CBLAS_INT incX);
void cblas_ctrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const void* A, const CBLAS_INT lda,
                 void* X, const CBLAS_INT incX);
void cblas_ztrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const void* A, const CBLAS_INT lda,
                 void* X, const CBLAS_INT incX);

void cblas_strsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const float* A, const CBLAS_INT lda,
                 float* X, const CBLAS_INT incX);
void cblas_dtrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const double* A, const CBLAS_INT lda,
                 double* X, const CBLAS_INT incX);
void cblas_ctrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const void* A, const CBLAS_INT lda,
                 void* X, const CBLAS_INT incX);
void cblas_ztrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const CBLAS_INT N, const void* A, const CBLAS_INT lda,
                 void* X, const CBLAS_INT incX);

void cblas_ssymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_INT N,
                 const float alpha, const float* A, const CBLAS_INT lda, const float* X,
                 const CBLAS_INT incX, const float beta, float* Y, const CBLAS_INT incY);
void cblas_dsymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_INT N,
                 const double alpha, const double* A, const CBLAS_INT lda, const double* X,
                 const CBLAS_INT incX, const double beta, double* Y, const CBLAS_INT incY);
void cblas_chemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_INT N,
                 const void* alpha, const void* A, const CBLAS_INT lda, const void* X,
                 const CBLAS_INT incX, const void* beta, void* Y, const CBLAS_INT incY);
void cblas_zhemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_INT N,
                 const void* alpha, const void* A, const CBLAS_INT lda, const void* X,
                 const CBLAS_INT incX, const void* beta, void* Y, const CBLAS_INT incY);

/* ---- Level 3 --------------------------------------------------------------------- */

void cblas_sgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const CBLAS_INT M, const CBLAS_INT N,
                 const CBLAS_INT K, const float alpha, const float* A, const CBLAS_INT lda,
                 const float* B, const CBLAS_INT ldb, const float beta, float* C,
                 const CBLAS_INT ldc);
void cblas_dgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const CBLAS_INT M, const CBLAS_INT N,
                 const CBLAS_INT K, const double alpha, const double* A, const CBLAS_INT lda,
                 const double* B, const CBLAS_INT ldb, const double beta, double* C,
                 const CBLAS_INT ldc);
void cblas_cgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const CBLAS_INT M, const CBLAS_INT N,
                 const CBLAS_INT K, const void* alpha, const void* A, const CBLAS_INT lda,
                 const void* B, const CBLAS_INT ldb, const void* beta, void* C,
                 const CBLAS_INT ldc);
void cblas_zgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const CBLAS_INT M, const CBLAS_INT N,
                 const CBLAS_INT K, const void* alpha, const void* A, const CBLAS_INT lda,
                 const void* B, const CBLAS_INT ldb, const void* beta, void* C,
                 const CBLAS_INT ldc);

void cblas_ssyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const CBLAS_INT N, const CBLAS_INT K, const float alpha, const float* A,
                 const CBLAS_INT lda, const float beta, float* C, const CBLAS_INT ldc);
void cblas_dsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const CBLAS_INT N, const CBLAS_INT K, const double alpha, const double* A,
                 const CBLAS_INT lda, const double beta, double* C, const CBLAS_INT ldc);
void cblas_csyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const CBLAS_INT N, const CBLAS_INT K, const void* alpha, const void* A,
                 const CBLAS_INT lda, const void* beta, void* C, const CBLAS_INT ldc);
void cblas_zsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,
                 const CBLAS_INT N, const CBLAS_INT K, const void* alpha, const void* A,
                 const CBLAS_INT lda, const void* beta, void* C, const CBLAS_INT ldc);

void cblas_strmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const float alpha, const float* A, const CBLAS_INT lda,
                 float* B, const CBLAS_INT ldb);
void cblas_dtrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const double alpha, const double* A, const CBLAS_INT lda,
                 double* B, const CBLAS_INT ldb);
void cblas_ctrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const void* alpha, const void* A, const CBLAS_INT lda, void* B,
                 const CBLAS_INT ldb);
void cblas_ztrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const void* alpha, const void* A, const CBLAS_INT lda, void* B,
                 const CBLAS_INT ldb);

void cblas_strsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const float alpha, const float* A, const CBLAS_INT lda,
                 float* B, const CBLAS_INT ldb);
void cblas_dtrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const double alpha, const double* A, const CBLAS_INT lda,
                 double* B, const CBLAS_INT ldb);
void cblas_ctrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const void* alpha, const void* A, const CBLAS_INT lda, void* B,
                 const CBLAS_INT ldb);
void cblas_ztrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const CBLAS_INT M,
                 const CBLAS_INT N, const void* alpha, const void* A, const CBLAS_INT lda, void* B,
                 const CBLAS_INT ldb);

/* ---- Errors ---------------------------------------------------------------------- */

/* Called on an invalid argument with the parameter's 1-based position p (0 when the failure
 * is not tied to one parameter, such as running out of memory), the routine name and a
 * printf format with its arguments. Weak in libtessera_cblas.so: define your own to
 * replace it. */
void cblas_xerbla(CBLAS_INT p, const char* rout, const char* form, ...);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CBLAS_H_ */
