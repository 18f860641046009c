/* tessera DNN primitives, C interface (MIOpen-style): convolution with several algorithms and
 * Find mode, pooling, activations, softmax, normalisations; forward and backward. One function
 * per C++ routine of include/tessera/dnn.hpp, whose contracts apply unchanged.
 *
 * - Tensors are a tsr_tensor_desc (dtype, rank, logical dims channels-first N, C, spatial...,
 *   element strides) plus a raw host pointer. tsr_dnn_tensor_desc_packed fills one for a packed
 *   NCHW ("channels first") or NHWC ("channels last") tensor; any other strides are allowed and
 *   run on the reference implementations. Convolution weights are logical [K, C/groups,
 *   spatial...]; their packed channels-last layout is [K, spatial..., C/groups] (OHWI).
 * - Data is f32, or bf16/f16 storage with f32 compute; biases, slopes, norm parameters and
 *   statistics are always float.
 * - Descriptors and options are plain structs passed by pointer; the *_init helpers fill them
 *   with the C++ defaults. Spatial parameters (stride, padding, ...) hold up to 3 values, of
 *   which the first spatial_rank are used (spatial_rank = tensor rank - 2).
 * - Every function returns a tsr_status. A null handle, a null descriptor pointer, a rank
 *   outside 0..TSR_TENSOR_MAX_RANK, an enum value outside its range, or any argument the C++
 *   routine rejects (negative sizes, mismatched dims, unsupported dtype, ...) returns
 *   TSR_STATUS_INVALID_ARGUMENT (or TSR_STATUS_UNSUPPORTED for a valid but unimplemented
 *   combination), writes nothing, and leaves a message for tsr_last_error_message(), e.g.
 *   "tsr_dnn_conv_forward: y spatial dim 1 = 9 but the convolution gives 8".
 * - Results are bitwise identical for any thread count, and identical to the C++ calls.
 * - A handle is not thread-safe: use one per calling thread.
 *
 * This header compiles as C (C99 and later) and as C++. */
#ifndef TESSERA_C_DNN_H_
#define TESSERA_C_DNN_H_

#include <stddef.h>
#include <stdint.h>

#include "tessera/c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Tensors -------------------------------------------------------------------------- */

/* Element types, with the values of tessera::DType. The DNN primitives take F32, BF16, F16. */
typedef enum tsr_dtype {
  TSR_DTYPE_BOOL = 0,
  TSR_DTYPE_I8 = 1,
  TSR_DTYPE_U8 = 2,
  TSR_DTYPE_I32 = 3,
  TSR_DTYPE_I64 = 4,
  TSR_DTYPE_F16 = 5,  /* IEEE binary16 */
  TSR_DTYPE_BF16 = 6, /* bfloat16 */
  TSR_DTYPE_F32 = 7,
  TSR_DTYPE_F64 = 8,
  TSR_DTYPE_C64 = 9,   /* complex float */
  TSR_DTYPE_C128 = 10, /* complex double */
  TSR_DTYPE_INT_RANGE_ = -0x7fffffff - 1
} tsr_dtype;

#define TSR_TENSOR_MAX_RANK 8

/* dims[i] and strides[i] (in elements, >= 0) for i < rank; later entries are ignored. */
typedef struct tsr_tensor_desc {
  tsr_dtype dtype;
  int32_t rank;
  int64_t dims[TSR_TENSOR_MAX_RANK];
  int64_t strides[TSR_TENSOR_MAX_RANK];
} tsr_tensor_desc;

/* Each enum has a *_INT_RANGE_ enumerator equal to INT_MIN that is never a valid argument (see
 * tessera/c/blas.h): a wrong value from a caller is reported, never undefined. */
typedef enum tsr_dnn_layout {
  TSR_DNN_LAYOUT_NCHW = 0, /* channels first, any rank */
  TSR_DNN_LAYOUT_NHWC = 1, /* channels last (for rank < 3 the same as NCHW) */
  TSR_DNN_LAYOUT_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_layout;

/* A packed tensor of `rank` dims (dims may be NULL when rank is 0) in `layout`. Entries from
 * rank on are set to 0. Negative dims are invalid. */
TSR_API tsr_status tsr_dnn_tensor_desc_packed(tsr_dtype dtype, int32_t rank, const int64_t* dims,
                                              tsr_dnn_layout layout, tsr_tensor_desc* desc);

/* ---- Handle --------------------------------------------------------------------------- */

typedef struct tsr_dnn_handle_s* tsr_dnn_handle;

TSR_API tsr_status tsr_dnn_create_handle(tsr_dnn_handle* handle);
/* A null handle is accepted and ignored. */
TSR_API tsr_status tsr_dnn_destroy_handle(tsr_dnn_handle handle);
/* Upper bound on the threads one call uses; 0 (the default) = the process thread pool. */
TSR_API tsr_status tsr_dnn_set_num_threads(tsr_dnn_handle handle, int num_threads);
TSR_API tsr_status tsr_dnn_get_num_threads(tsr_dnn_handle handle, int* num_threads);
/* The tuning database of Find mode and immediate mode; NULL or "" = the default path
 * (TESSERA_TUNE_DB, else $XDG_CACHE_HOME/tessera/tune.sqlite). */
TSR_API tsr_status tsr_dnn_set_tune_db(tsr_dnn_handle handle, const char* path);
/* *path stays valid until the next tsr_dnn_set_tune_db or tsr_dnn_destroy_handle. */
TSR_API tsr_status tsr_dnn_get_tune_db(tsr_dnn_handle handle, const char** path);
/* Whether immediate mode (TSR_DNN_CONV_ALGO_AUTO) consults the database: nonzero = yes (the
 * default). Immediate mode never writes the database. */
TSR_API tsr_status tsr_dnn_set_use_tune_db(tsr_dnn_handle handle, int use);
TSR_API tsr_status tsr_dnn_get_use_tune_db(tsr_dnn_handle handle, int* use);

/* ---- Activations ---------------------------------------------------------------------- */

/* alpha/beta per kind as in dnn.hpp (defaults from tsr_dnn_activation_init in parentheses):
 * LEAKY_RELU alpha (0.01); ELU, CELU alpha (1); SELU alpha (1.6732632), beta = gamma
 * (1.0507010); HARD_SIGMOID max(0, min(1, alpha*x + beta)) (0.2, 0.5); CLIP
 * min(max(x, alpha), beta) (0, 6: relu6); the others take none. */
typedef enum tsr_dnn_act_kind {
  TSR_DNN_ACT_IDENTITY = 0,
  TSR_DNN_ACT_RELU = 1,
  TSR_DNN_ACT_LEAKY_RELU = 2,
  TSR_DNN_ACT_ELU = 3,
  TSR_DNN_ACT_SELU = 4,
  TSR_DNN_ACT_CELU = 5,
  TSR_DNN_ACT_SIGMOID = 6,
  TSR_DNN_ACT_HARD_SIGMOID = 7,
  TSR_DNN_ACT_TANH = 8,
  TSR_DNN_ACT_GELU_ERF = 9,
  TSR_DNN_ACT_GELU_TANH = 10,
  TSR_DNN_ACT_SILU = 11,
  TSR_DNN_ACT_MISH = 12,
  TSR_DNN_ACT_SOFTPLUS = 13,
  TSR_DNN_ACT_SOFTSIGN = 14,
  TSR_DNN_ACT_CLIP = 15,
  TSR_DNN_ACT_HARD_SWISH = 16,
  TSR_DNN_ACT_ABS = 17,
  TSR_DNN_ACT_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_act_kind;

typedef struct tsr_dnn_activation {
  tsr_dnn_act_kind kind;
  float alpha;
  float beta;
} tsr_dnn_activation;

/* `kind` with its default parameters. */
TSR_API tsr_status tsr_dnn_activation_init(tsr_dnn_act_kind kind, tsr_dnn_activation* act);
/* "relu", "gelu_erf", ...; "unknown activation" for a value outside the enum. Static. */
TSR_API const char* tsr_dnn_act_name(tsr_dnn_act_kind kind);

/* y = f(x) elementwise; x and y have the same dims (in place when the strides are equal). */
TSR_API tsr_status tsr_dnn_activation_forward(tsr_dnn_handle h, const tsr_dnn_activation* act,
                                              const tsr_tensor_desc* x_desc, const void* x,
                                              const tsr_tensor_desc* y_desc, void* y);
/* dx = f'(x) * dy, from the forward input x. */
TSR_API tsr_status tsr_dnn_activation_backward(tsr_dnn_handle h, const tsr_dnn_activation* act,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const tsr_tensor_desc* dx_desc, void* dx);
/* PReLU: y = x > 0 ? x : slope[c] * x; slope_count is C (one per channel, dim 1) or 1. */
TSR_API tsr_status tsr_dnn_prelu_forward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                         const void* x, const float* slope, int64_t slope_count,
                                         const tsr_tensor_desc* y_desc, void* y);
/* dx, and dslope (overwritten; may be NULL). */
TSR_API tsr_status tsr_dnn_prelu_backward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                          const void* x, const float* slope, int64_t slope_count,
                                          const tsr_tensor_desc* dy_desc, const void* dy,
                                          const tsr_tensor_desc* dx_desc, void* dx, float* dslope);
/* CReLU: y = concat(relu(x), relu(-x)) along dim 1 (y has 2*C channels). */
TSR_API tsr_status tsr_dnn_crelu_forward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                         const void* x, const tsr_tensor_desc* y_desc, void* y);
TSR_API tsr_status tsr_dnn_crelu_backward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                          const void* x, const tsr_tensor_desc* dy_desc,
                                          const void* dy, const tsr_tensor_desc* dx_desc, void* dx);

/* ---- Softmax -------------------------------------------------------------------------- */

typedef enum tsr_dnn_softmax_mode {
  TSR_DNN_SOFTMAX = 0,
  TSR_DNN_LOG_SOFTMAX = 1,
  TSR_DNN_SOFTMAX_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_softmax_mode;

/* Over one axis (negative counts from the end); numerically stable. */
TSR_API tsr_status tsr_dnn_softmax_forward(tsr_dnn_handle h, tsr_dnn_softmax_mode mode, int axis,
                                           const tsr_tensor_desc* x_desc, const void* x,
                                           const tsr_tensor_desc* y_desc, void* y);
/* From the forward output y. */
TSR_API tsr_status tsr_dnn_softmax_backward(tsr_dnn_handle h, tsr_dnn_softmax_mode mode, int axis,
                                            const tsr_tensor_desc* y_desc, const void* y,
                                            const tsr_tensor_desc* dy_desc, const void* dy,
                                            const tsr_tensor_desc* dx_desc, void* dx);

/* ---- Pooling -------------------------------------------------------------------------- */

typedef enum tsr_dnn_pool_kind {
  TSR_DNN_POOL_MAX = 0,
  TSR_DNN_POOL_AVG_INCLUDE_PAD = 1,
  TSR_DNN_POOL_AVG_EXCLUDE_PAD = 2,
  TSR_DNN_POOL_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_pool_kind;

typedef struct tsr_dnn_pool_desc {
  tsr_dnn_pool_kind kind;
  int32_t spatial_rank; /* 1, 2 or 3 */
  int64_t kernel[3];
  int64_t stride[3];
  int64_t pad_begin[3];
  int64_t pad_end[3];
  int64_t dilation[3]; /* >= 1, every kind */
  int32_t ceil_mode;   /* nonzero: output size rounded up */
} tsr_dnn_pool_desc;

/* kernel[0 .. spatial_rank) from `kernel`, stride 1, no padding, dilation 1, floor mode. */
TSR_API tsr_status tsr_dnn_pool_desc_init(tsr_dnn_pool_kind kind, int32_t spatial_rank,
                                          const int64_t* kernel, tsr_dnn_pool_desc* pool);
/* Global pooling: the kernel covers the whole spatial extent of x (rank 3 to 5). */
TSR_API tsr_status tsr_dnn_pool_desc_global(tsr_dnn_pool_kind kind, const tsr_tensor_desc* x_desc,
                                            tsr_dnn_pool_desc* pool);
/* y's dims for x (same dtype and layout). */
TSR_API tsr_status tsr_dnn_pooling_output_desc(const tsr_dnn_pool_desc* pool,
                                               const tsr_tensor_desc* x_desc,
                                               tsr_tensor_desc* y_desc);
/* indices (optional, max only): per output element, laid out like y, the flat index of the
 * chosen element within its (n, c) spatial plane. */
TSR_API tsr_status tsr_dnn_pooling_forward(tsr_dnn_handle h, const tsr_dnn_pool_desc* pool,
                                           const tsr_tensor_desc* x_desc, const void* x,
                                           const tsr_tensor_desc* y_desc, void* y,
                                           int64_t* indices);
/* Max pooling needs x or the forward indices; average pooling neither (both may be NULL). */
TSR_API tsr_status tsr_dnn_pooling_backward(tsr_dnn_handle h, const tsr_dnn_pool_desc* pool,
                                            const tsr_tensor_desc* x_desc, const void* x,
                                            const int64_t* indices, const tsr_tensor_desc* dy_desc,
                                            const void* dy, const tsr_tensor_desc* dx_desc,
                                            void* dx);

/* ---- Normalisation -------------------------------------------------------------------- */

typedef enum tsr_dnn_batch_norm_mode {
  TSR_DNN_BATCH_NORM_SPATIAL = 0,        /* statistics per channel; C parameters */
  TSR_DNN_BATCH_NORM_PER_ACTIVATION = 1, /* per (C, spatial) element; C*spatial parameters */
  TSR_DNN_BATCH_NORM_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_batch_norm_mode;

/* Batch statistics into saved_mean/saved_invstd (required); running_mean/running_var (both or
 * neither) updated as r = (1 - momentum)*r + momentum*batch (variance unbiased). */
TSR_API tsr_status tsr_dnn_batch_norm_forward_training(
    tsr_dnn_handle h, tsr_dnn_batch_norm_mode mode, const tsr_tensor_desc* x_desc, const void* x,
    const float* scale, const float* bias, double epsilon, double momentum, float* running_mean,
    float* running_var, float* saved_mean, float* saved_invstd, const tsr_tensor_desc* y_desc,
    void* y);
TSR_API tsr_status tsr_dnn_batch_norm_forward_inference(
    tsr_dnn_handle h, tsr_dnn_batch_norm_mode mode, const tsr_tensor_desc* x_desc, const void* x,
    const float* scale, const float* bias, const float* mean, const float* var, double epsilon,
    const tsr_tensor_desc* y_desc, void* y);
/* dscale/dbias overwritten (may be NULL). */
TSR_API tsr_status tsr_dnn_batch_norm_backward(tsr_dnn_handle h, tsr_dnn_batch_norm_mode mode,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const float* scale, const float* saved_mean,
                                               const float* saved_invstd,
                                               const tsr_tensor_desc* dx_desc, void* dx,
                                               float* dscale, float* dbias);

/* Layer norm over dims [axis, rank); scale/bias (bias optional) have the normalised shape;
 * mean/invstd (optional in forward) one value per leading index. */
TSR_API tsr_status tsr_dnn_layer_norm_forward(tsr_dnn_handle h, int axis,
                                              const tsr_tensor_desc* x_desc, const void* x,
                                              const float* scale, const float* bias, double epsilon,
                                              const tsr_tensor_desc* y_desc, void* y, float* mean,
                                              float* invstd);
TSR_API tsr_status tsr_dnn_layer_norm_backward(tsr_dnn_handle h, int axis,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const float* scale, const float* mean,
                                               const float* invstd, const tsr_tensor_desc* dx_desc,
                                               void* dx, float* dscale, float* dbias);
/* Group norm: statistics per (n, group); scale/bias per channel; mean/invstd N*groups values
 * (optional in forward, required in backward). Instance norm is groups == C. */
TSR_API tsr_status tsr_dnn_group_norm_forward(tsr_dnn_handle h, int64_t groups,
                                              const tsr_tensor_desc* x_desc, const void* x,
                                              const float* scale, const float* bias, double epsilon,
                                              const tsr_tensor_desc* y_desc, void* y, float* mean,
                                              float* invstd);
TSR_API tsr_status tsr_dnn_group_norm_backward(tsr_dnn_handle h, int64_t groups,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const float* scale, const float* mean,
                                               const float* invstd, const tsr_tensor_desc* dx_desc,
                                               void* dx, float* dscale, float* dbias);
TSR_API tsr_status tsr_dnn_instance_norm_forward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                                 const void* x, const float* scale,
                                                 const float* bias, double epsilon,
                                                 const tsr_tensor_desc* y_desc, void* y,
                                                 float* mean, float* invstd);
TSR_API tsr_status tsr_dnn_instance_norm_backward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                                  const void* x, const tsr_tensor_desc* dy_desc,
                                                  const void* dy, const float* scale,
                                                  const float* mean, const float* invstd,
                                                  const tsr_tensor_desc* dx_desc, void* dx,
                                                  float* dscale, float* dbias);

/* Local response normalisation: y = x / (k + alpha/n * sum_window x^2)^beta over `size`
 * channels (across) or size^d spatial positions (within one channel). */
typedef enum tsr_dnn_lrn_mode {
  TSR_DNN_LRN_ACROSS_CHANNELS = 0,
  TSR_DNN_LRN_WITHIN_CHANNEL = 1,
  TSR_DNN_LRN_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_lrn_mode;

typedef struct tsr_dnn_lrn_desc {
  tsr_dnn_lrn_mode mode;
  int64_t size;
  double alpha, beta, k;
} tsr_dnn_lrn_desc;

/* size 5, alpha 1e-4, beta 0.75, k 1. */
TSR_API tsr_status tsr_dnn_lrn_desc_init(tsr_dnn_lrn_mode mode, tsr_dnn_lrn_desc* lrn);
TSR_API tsr_status tsr_dnn_lrn_forward(tsr_dnn_handle h, const tsr_dnn_lrn_desc* lrn,
                                       const tsr_tensor_desc* x_desc, const void* x,
                                       const tsr_tensor_desc* y_desc, void* y);
TSR_API tsr_status tsr_dnn_lrn_backward(tsr_dnn_handle h, const tsr_dnn_lrn_desc* lrn,
                                        const tsr_tensor_desc* x_desc, const void* x,
                                        const tsr_tensor_desc* dy_desc, const void* dy,
                                        const tsr_tensor_desc* dx_desc, void* dx);

/* ---- Convolution ---------------------------------------------------------------------- */

typedef struct tsr_dnn_conv_desc {
  int32_t spatial_rank; /* 1, 2 or 3 */
  int64_t stride[3];    /* >= 1 */
  int64_t dilation[3];  /* >= 1 */
  int64_t pad_begin[3]; /* >= 0 */
  int64_t pad_end[3];   /* >= 0 */
  int64_t groups;       /* >= 1; C and K divisible by it */
} tsr_dnn_conv_desc;

/* Stride 1, dilation 1, no padding, one group. */
TSR_API tsr_status tsr_dnn_conv_desc_init(int32_t spatial_rank, tsr_dnn_conv_desc* conv);

typedef enum tsr_dnn_conv_algo {
  TSR_DNN_CONV_ALGO_AUTO = 0,          /* the tuning database's choice, else the heuristic */
  TSR_DNN_CONV_ALGO_DIRECT = 1,        /* vectorised register-blocked direct convolution */
  TSR_DNN_CONV_ALGO_IM2COL = 2,        /* im2col + GEMM */
  TSR_DNN_CONV_ALGO_GEMM1X1 = 3,       /* 1x1 (stride 1, no padding) as one GEMM */
  TSR_DNN_CONV_ALGO_WINOGRAD_F2X3 = 4, /* Winograd F(2x2, 3x3) */
  TSR_DNN_CONV_ALGO_WINOGRAD_F4X3 = 5, /* Winograd F(4x4, 3x3) */
  TSR_DNN_CONV_ALGO_DEPTHWISE = 6,     /* groups == C == K */
  TSR_DNN_CONV_ALGO_FFT = 7,           /* stride 1, no dilation; large kernels */
  TSR_DNN_CONV_ALGO_REFERENCE = 8,     /* the plain reference (always accepts) */
  TSR_DNN_CONV_ALGO_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_conv_algo;

/* "direct", "winograd_f4x3", ...; "unknown algorithm" outside the enum. Static. */
TSR_API const char* tsr_dnn_conv_algo_name(tsr_dnn_conv_algo algo);

typedef enum tsr_dnn_conv_dir {
  TSR_DNN_CONV_FORWARD = 0,
  TSR_DNN_CONV_BACKWARD_DATA = 1,
  TSR_DNN_CONV_BACKWARD_WEIGHTS = 2,
  TSR_DNN_CONV_DIR_INT_RANGE_ = -0x7fffffff - 1
} tsr_dnn_conv_dir;

/* Fused epilogue of the forward convolution: y = act(conv(x, w) + bias[k] + residual).
 * bias: K floats (optional); residual: laid out like y (optional, may alias y). */
typedef struct tsr_dnn_post_ops {
  const float* bias;
  const void* residual;
  tsr_dnn_activation act;
} tsr_dnn_post_ops;

/* y's dims for x and w (dtype and layout of x). */
TSR_API tsr_status tsr_dnn_conv_output_desc(const tsr_dnn_conv_desc* conv,
                                            const tsr_tensor_desc* x_desc,
                                            const tsr_tensor_desc* w_desc, tsr_tensor_desc* y_desc);
/* post may be NULL (no epilogue). An algorithm other than AUTO that refuses the problem returns
 * TSR_STATUS_UNSUPPORTED with its reason. */
TSR_API tsr_status tsr_dnn_conv_forward(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                        const tsr_tensor_desc* x_desc, const void* x,
                                        const tsr_tensor_desc* w_desc, const void* w,
                                        const tsr_tensor_desc* y_desc, void* y,
                                        const tsr_dnn_post_ops* post, tsr_dnn_conv_algo algo);
/* A forward convolution planned once (tessera::dnn::ConvForwardPlan): the algorithm chosen
 * and a copy of w packed at creation; each run reads x (and the post-ops' data) only, and
 * gives tsr_dnn_conv_forward's bits with the same algorithm. The plan owns its weights; runs
 * from several threads (each with its own handle) are safe. */
typedef struct tsr_dnn_conv_plan_s* tsr_dnn_conv_plan;
TSR_API tsr_status tsr_dnn_conv_plan_create(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                            const tsr_tensor_desc* x_desc,
                                            const tsr_tensor_desc* w_desc, const void* w,
                                            const tsr_tensor_desc* y_desc, tsr_dnn_conv_algo algo,
                                            tsr_dnn_conv_plan* plan);
/* post may be NULL. */
TSR_API tsr_status tsr_dnn_conv_plan_run(tsr_dnn_handle h, tsr_dnn_conv_plan plan, const void* x,
                                         void* y, const tsr_dnn_post_ops* post);
/* The algorithm the plan runs. */
TSR_API tsr_status tsr_dnn_conv_plan_algo(tsr_dnn_conv_plan plan, tsr_dnn_conv_algo* algo);
/* A null plan is accepted and ignored. */
TSR_API tsr_status tsr_dnn_conv_plan_destroy(tsr_dnn_conv_plan plan);
/* dx (overwritten) = the adjoint of the forward convolution applied to dy. */
TSR_API tsr_status tsr_dnn_conv_backward_data(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                              const tsr_tensor_desc* w_desc, const void* w,
                                              const tsr_tensor_desc* dy_desc, const void* dy,
                                              const tsr_tensor_desc* dx_desc, void* dx,
                                              tsr_dnn_conv_algo algo);
/* dw (overwritten) and, if dbias is not NULL, dbias[k] = sum of dy over N and spatial dims. */
TSR_API tsr_status tsr_dnn_conv_backward_weights(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                                 const tsr_tensor_desc* x_desc, const void* x,
                                                 const tsr_tensor_desc* dy_desc, const void* dy,
                                                 const tsr_tensor_desc* dw_desc, void* dw,
                                                 float* dbias, tsr_dnn_conv_algo algo);

/* Strings longer than their arrays are cut to fit (always NUL-terminated). */
typedef struct tsr_dnn_conv_choice {
  tsr_dnn_conv_algo algo;
  char impl[64];   /* implementation, e.g. "conv_fwd_f32_winograd_f4x3_avx512" */
  char source[16]; /* "tune-db" or "heuristic" */
} tsr_dnn_conv_choice;

/* The algorithm immediate mode (AUTO) would run for this problem, and why. For the backward
 * directions x_desc describes dx (backward data), w_desc dw (backward weights), y_desc dy. */
TSR_API tsr_status tsr_dnn_choose_convolution(tsr_dnn_handle h, tsr_dnn_conv_dir dir,
                                              const tsr_dnn_conv_desc* conv,
                                              const tsr_tensor_desc* x_desc,
                                              const tsr_tensor_desc* w_desc,
                                              const tsr_tensor_desc* y_desc,
                                              tsr_dnn_conv_choice* choice);

typedef struct tsr_dnn_find_options {
  double min_seconds_per_algo; /* keep timing an algorithm at least this long (0.05) */
  int32_t min_samples;         /* >= 1 (3) */
  int32_t record;              /* nonzero: write the result into the tuning database (1) */
  int32_t include_reference;   /* nonzero: time the reference too (0) */
} tsr_dnn_find_options;

TSR_API tsr_status tsr_dnn_find_options_init(tsr_dnn_find_options* options);

/* One algorithm's outcome in Find mode. Strings are cut to fit (always NUL-terminated). */
typedef struct tsr_dnn_conv_candidate {
  tsr_dnn_conv_algo algo;
  int32_t accepted; /* 1: accepted and timed; 0: refused (see reason) */
  char impl[64];    /* implementation name */
  char reason[160]; /* why it refused ("" when accepted) */
  double median_us; /* timings, accepted only */
  double spread_us; /* max - min over the samples */
  int64_t samples;
} tsr_dnn_conv_candidate;

/* Enough for every direction (one candidate per implementation in the list). */
#define TSR_DNN_MAX_CONV_CANDIDATES 16

/* Times every accepting algorithm on this problem (internal buffers, random data), records all
 * candidates in the tuning database (unless options->record is 0) and writes the first
 * min(capacity, found) of them, accepted ones fastest first then the refusals, to candidates;
 * *count receives how many were written. options NULL = the defaults; candidates may be NULL
 * when capacity is 0. Descriptors as in tsr_dnn_choose_convolution. */
TSR_API tsr_status
tsr_dnn_find_convolution(tsr_dnn_handle h, tsr_dnn_conv_dir dir, const tsr_dnn_conv_desc* conv,
                         const tsr_tensor_desc* x_desc, const tsr_tensor_desc* w_desc,
                         const tsr_tensor_desc* y_desc, const tsr_dnn_find_options* options,
                         tsr_dnn_conv_candidate* candidates, int32_t capacity, int32_t* count);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_DNN_H_ */
