/* Compiled as C99: tessera/c/dnn.h must be valid C, and a C caller gets the documented
 * behaviour. Returns 0 when every check passes, else the number of the failed check. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tessera/c/dnn.h"
#include "tessera/c/status.h"

int capi_dnn_c_smoke(void);

int capi_dnn_c_smoke(void) {
  tsr_dnn_handle h = NULL;
  if (tsr_dnn_create_handle(&h) != TSR_STATUS_OK) return 1;
  if (tsr_dnn_set_use_tune_db(h, 0) != TSR_STATUS_OK) return 2;

  /* y = relu(conv(x, w) + bias): x 1x1x3x3 = 1..9, w 1x1x2x2 = [1 0; 0 1], bias -7. */
  const int64_t x_dims[4] = {1, 1, 3, 3}, w_dims[4] = {1, 1, 2, 2};
  tsr_tensor_desc x_desc, w_desc, y_desc;
  if (tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 4, x_dims, TSR_DNN_LAYOUT_NCHW, &x_desc) !=
          TSR_STATUS_OK ||
      tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 4, w_dims, TSR_DNN_LAYOUT_NCHW, &w_desc) !=
          TSR_STATUS_OK)
    return 3;
  tsr_dnn_conv_desc conv;
  if (tsr_dnn_conv_desc_init(2, &conv) != TSR_STATUS_OK) return 4;
  if (tsr_dnn_conv_output_desc(&conv, &x_desc, &w_desc, &y_desc) != TSR_STATUS_OK) return 5;
  if (y_desc.rank != 4 || y_desc.dims[2] != 2 || y_desc.dims[3] != 2 || y_desc.strides[2] != 2)
    return 6;

  const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float w[4] = {1, 0, 0, 1};
  const float bias[1] = {-7};
  float y[4] = {0, 0, 0, 0};
  tsr_dnn_post_ops post;
  post.bias = bias;
  post.residual = NULL;
  if (tsr_dnn_activation_init(TSR_DNN_ACT_RELU, &post.act) != TSR_STATUS_OK) return 7;
  if (tsr_dnn_conv_forward(h, &conv, &x_desc, x, &w_desc, w, &y_desc, y, &post,
                           TSR_DNN_CONV_ALGO_AUTO) != TSR_STATUS_OK)
    return 8;
  if (y[0] != 0 || y[1] != 1 || y[2] != 5 || y[3] != 7) return 9; /* 6 8 12 14, minus 7 */

  /* An invalid argument: a status, a message naming the function, and y untouched. */
  y_desc.dims[3] = 3;
  y[0] = -1;
  if (tsr_dnn_conv_forward(h, &conv, &x_desc, x, &w_desc, w, &y_desc, y, NULL,
                           TSR_DNN_CONV_ALGO_AUTO) != TSR_STATUS_INVALID_ARGUMENT)
    return 10;
  if (strncmp(tsr_last_error_message(), "tsr_dnn_conv_forward: ", 22) != 0 || y[0] != -1) return 11;
  if (tsr_dnn_conv_forward(h, &conv, &x_desc, x, &w_desc, w, &w_desc, y, NULL,
                           (tsr_dnn_conv_algo)42) != TSR_STATUS_INVALID_ARGUMENT)
    return 12;

  if (tsr_dnn_destroy_handle(h) != TSR_STATUS_OK) return 13;
  return 0;
}
