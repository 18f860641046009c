/* A plain C program that uses only <cblas.h>: sgemm, dgemv, daxpy, ddot and zgemm in row- and
 * column-major order. Built against libtessera_cblas.so with -I include/tessera/cblas; it
 * builds unchanged against any other CBLAS. Prints the results, checks them against values
 * computed by hand, and exits non-zero on a mismatch. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>

static int failures = 0;

static void check(const char* what, double got, double want) {
  const int ok = fabs(got - want) <= 1e-5 * (1 + fabs(want));
  printf("  %-28s %10.4f  (expected %10.4f)%s\n", what, got, want, ok ? "" : "  MISMATCH");
  if (!ok) ++failures;
}

int main(void) {
  /* sgemm: C (2 x 3) = A (2 x 2) * B (2 x 3). */
  const float a[4] = {1, 2, 3, 4};         /* row-major [1 2; 3 4]; column-major [1 3; 2 4] */
  const float b[6] = {1, 0, 2, -1, 3, 1};  /* row-major [1 0 2; -1 3 1] */
  const float bc[6] = {1, -1, 0, 3, 2, 1}; /* the same B in column-major order */
  float c[6];
  const float want_c[6] = {-1, 6, 4, -1, 12, 10}; /* row-major A*B */
  const char* const c_name[6] = {"C(0,0)", "C(0,1)", "C(0,2)", "C(1,0)", "C(1,1)", "C(1,2)"};
  int i;
  printf("sgemm, row-major\n");
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 1.0f, a, 2, b, 3, 0.0f, c, 3);
  for (i = 0; i < 6; ++i) check(c_name[i], c[i], want_c[i]);
  printf("sgemm, column-major (A^T from the same array)\n");
  cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, 2, 3, 2, 1.0f, a, 2, bc, 2, 0.0f, c, 2);
  for (i = 0; i < 6; ++i) check(c_name[(i % 2) * 3 + i / 2], c[i], want_c[(i % 2) * 3 + i / 2]);

  /* dgemv: y = 2 * A * x + y, A 2 x 3. */
  {
    const double am[6] = {1, 2, 3, 4, 5, 6}; /* row-major [1 2 3; 4 5 6] */
    const double x[3] = {1, -1, 2};
    double y[2] = {1, 1};
    printf("dgemv, row-major\n");
    cblas_dgemv(CblasRowMajor, CblasNoTrans, 2, 3, 2.0, am, 3, x, 1, 1.0, y, 1);
    check("y[0]", y[0], 2 * 5 + 1);
    check("y[1]", y[1], 2 * 11 + 1);
    printf("dgemv, column-major, transposed\n");
    y[0] = y[1] = 0;
    cblas_dgemv(CblasColMajor, CblasTrans, 3, 2, 1.0, am, 3, x, 1, 0.0, y, 1);
    check("y[0]", y[0], 5);
    check("y[1]", y[1], 11);
  }

  /* daxpy and ddot. */
  {
    const double x[4] = {1, 2, 3, 4};
    double y[4] = {10, 20, 30, 40};
    printf("daxpy, ddot\n");
    cblas_daxpy(4, 0.5, x, 1, y, 1);
    check("y[3] after y += 0.5 x", y[3], 42);
    check("x . y", cblas_ddot(4, x, 1, y, 1), 0.5 * 30 + 300);
    check("x . x, stride -1 and 1", cblas_ddot(4, x, -1, x, 1), 4 + 6 + 6 + 4);
  }

  /* zgemm: C = A * B with complex A (1 x 2), B (2 x 1): (1+i)(2) + (3-2i)(i) = 4 + 5i. */
  {
    const double za[4] = {1, 1, 3, -2};
    const double zb[4] = {2, 0, 0, 1};
    const double one[2] = {1, 0}, zero[2] = {0, 0};
    double zc[2];
    printf("zgemm, row- and column-major\n");
    cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 2, one, za, 2, zb, 1, zero, zc, 1);
    check("re", zc[0], 4);
    check("im", zc[1], 5);
    /* Column-major A^H * B with A stored as a 2 x 1 column: conj(1+i)*2 + conj(3-2i)*i. */
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, 1, 1, 2, one, za, 2, zb, 2, zero, zc,
                1);
    check("re (A^H B)", zc[0], 2 - 2);
    check("im (A^H B)", zc[1], -2 + 3);
  }

  printf(failures == 0 ? "all results correct\n" : "%d mismatches\n", failures);
  return failures == 0 ? 0 : 1;
}
