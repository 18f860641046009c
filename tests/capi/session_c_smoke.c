/* Compiled as C99: tessera/c/session.h must be valid C. Opens the model at `path` (an image
 * classifier with input "image" [N, 3, 32, 32] and one output [N, 10]), runs it on a batch of
 * two constant images and checks the output's shape and that each row sums to 1. Returns 0
 * when every check passes, else the number of the failed check. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tessera/c/session.h"

int capi_session_c_smoke(const char* path);

int capi_session_c_smoke(const char* path) {
  tsr_session s = NULL;
  if (tsr_session_open(path, 0, &s) != TSR_STATUS_OK) return 1;
  int32_t n_in = 0, n_out = 0;
  const char* name = NULL;
  if (tsr_session_input_count(s, &n_in) != TSR_STATUS_OK || n_in != 1) return 2;
  if (tsr_session_output_count(s, &n_out) != TSR_STATUS_OK || n_out != 1) return 3;
  if (tsr_session_input_name(s, 0, &name) != TSR_STATUS_OK) return 4;
  const int64_t dims[4] = {2, 3, 32, 32};
  tsr_tensor_desc desc;
  if (tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 4, dims, TSR_DNN_LAYOUT_NCHW, &desc) != TSR_STATUS_OK) return 5;
  float* image = (float*)malloc(sizeof(float) * 2 * 3 * 32 * 32);
  if (image == NULL) return 6;
  for (int i = 0; i < 2 * 3 * 32 * 32; ++i) image[i] = (float)(i % 7) * 0.25f - 0.5f;
  const void* data = image;
  const tsr_status run = tsr_session_run(s, 1, &name, &desc, &data);
  free(image);
  if (run != TSR_STATUS_OK) return 7;
  tsr_tensor_desc out;
  const void* out_data = NULL;
  if (tsr_session_output(s, 0, &out, &out_data) != TSR_STATUS_OK) return 8;
  if (out.rank != 2 || out.dims[0] != 2 || out.dims[1] != 10 || out.dtype != TSR_DTYPE_F32) return 9;
  const float* p = (const float*)out_data;
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int k = 0; k < 10; ++k) sum += p[r * out.strides[0] + k * out.strides[1]];
    if (fabs(sum - 1.0) > 1e-5) return 10;
  }
  if (tsr_session_destroy(s) != TSR_STATUS_OK) return 11;
  return 0;
}
