/* Compiled as C99: the C headers must be valid C, and a C caller gets the documented
 * behaviour. Returns 0 when every check passes, else the number of the failed check. */
#include <math.h>
#include <stddef.h>

#include "tessera/c/blas.h"
#include "tessera/c/status.h"

int capi_c_smoke(void);

int capi_c_smoke(void) {
  tsr_blas_handle h = NULL;
  if (tsr_blas_create_handle(&h) != TSR_STATUS_OK) return 1;

  /* C = A * B, 2 x 2, column-major. */
  const float a[4] = {1, 2, 3, 4}; /* [1 3; 2 4] */
  const float b[4] = {5, 6, 7, 8}; /* [5 7; 6 8] */
  float c[4] = {0, 0, 0, 0};
  if (tsr_blas_sgemm(h, TSR_BLAS_OP_N, TSR_BLAS_OP_N, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2) !=
      TSR_STATUS_OK)
    return 2;
  if (c[0] != 23 || c[1] != 34 || c[2] != 31 || c[3] != 46) return 3;

  /* Complex: (1 + 2i) * (3 - i) = 5 + 5i. */
  const tsr_double_complex za = {1, 2}, zb = {3, -1};
  const tsr_double_complex one = {1, 0}, zero = {0, 0};
  tsr_double_complex zc = {0, 0};
  if (tsr_blas_zgemm(h, TSR_BLAS_OP_N, TSR_BLAS_OP_N, 1, 1, 1, one, &za, 1, &zb, 1, zero, &zc, 1) !=
      TSR_STATUS_OK)
    return 4;
  if (fabs(zc.re - 5) > 1e-12 || fabs(zc.im - 5) > 1e-12) return 5;

  /* An invalid argument: a status, a message, and C untouched. */
  c[0] = -1;
  if (tsr_blas_sgemm(h, TSR_BLAS_OP_N, TSR_BLAS_OP_N, 2, 2, 2, 1.0f, a, 1, b, 2, 0.0f, c, 2) !=
      TSR_STATUS_INVALID_ARGUMENT)
    return 6;
  if (tsr_last_error_message()[0] == '\0' || c[0] != -1) return 7;

  if (tsr_blas_destroy_handle(h) != TSR_STATUS_OK) return 8;
  return 0;
}
