// tessera DNN primitives (the MIOpen-like layer): convolution with several algorithms and
// Find-mode tuning, pooling, activations, softmax, normalisations; forward and backward.
//
// Conventions
// - Every call takes a Handle (stream, thread limit, tuning database) and returns a Status.
//   Arguments are validated before anything is read or written; a bad descriptor returns
//   kInvalidArgument (or kUnsupported for a valid but unimplemented combination) naming the
//   problem, and no output is touched.
// - Tensors are described by a TensorDesc (dtype, logical dims, element strides) plus a raw
//   host pointer. Logical dims are always channels-first: N, C, spatial... Layout is the
//   strides' business: NCHW ("channels first") and NHWC ("channels last") are the packed
//   layouts every fast path knows; any other strides run on the reference implementation.
// - Convolution weights are logical [K, C/groups, spatial...]; the packed "channels last"
//   weight layout is [K, spatial..., C/groups] (OHWI).
// - Dtypes: f32 everywhere; bf16 and f16 storage with f32 compute for convolution, pooling,
//   activations and norms (and softmax). Norm parameters and statistics (scale, bias,
//   mean, variance) and biases are always f32.
// - Results are bitwise identical for any thread count: work is split over outputs, and
//   every reduction runs in a fixed order.
// - Dispatch: each primitive has a reference implementation and an ordered list of
//   optimised ones; the first that accepts the problem runs. TESSERA_VERBOSE=dispatch prints
//   each choice and every refusal with its reason; TESSERA_VERBOSE=bench prints a replayable
//   `tessera bench dnn ...` line for every call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/status.hpp"

namespace tessera::hal {
class Stream;
}
namespace tessera::blas {
class Handle;
}

namespace tessera::dnn {

class Handle {
 public:
  Handle();
  explicit Handle(hal::Stream* stream);
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&&) noexcept;
  Handle& operator=(Handle&&) noexcept;

  // CPU primitives run after the stream's earlier work has finished (nullptr: at once).
  hal::Stream* stream() const;
  void set_stream(hal::Stream* stream);

  // Upper bound on threads a call uses; 0 (default) means the process thread pool.
  int num_threads() const;
  Status set_num_threads(int n);

  // Tuning database used by find_convolution and by immediate mode ("" = the default path,
  // TESSERA_TUNE_DB or $XDG_CACHE_HOME/tessera/tune.sqlite). Immediate mode never writes.
  void set_tune_db(std::string path);
  const std::string& tune_db() const;
  // Immediate mode consults the database only when enabled (default: enabled).
  void set_use_tune_db(bool use);
  bool use_tune_db() const;

  // The BLAS handle GEMM-based algorithms call through (same stream and thread limit).
  blas::Handle& blas();

  struct State;
  State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

enum class Layout : int { kNCHW = 0, kNHWC = 1 };  // channels first / channels last, any rank
std::string_view layout_name(Layout l);              // "nchw", "nhwc"

struct TensorDesc {
  DType dtype = DType::kF32;
  std::vector<std::int64_t> dims;     // logical: N, C, spatial...
  std::vector<std::int64_t> strides;  // in elements, one per dim

  // A packed tensor in `layout` (for rank < 3 both layouts are the same row-major order).
  static TensorDesc make(DType dtype, std::vector<std::int64_t> dims,
                         Layout layout = Layout::kNCHW);
  int rank() const { return static_cast<int>(dims.size()); }
  std::int64_t numel() const;
  // The packed layout these strides describe, if any (rank <= 2 reports kNCHW).
  std::optional<Layout> packed_layout() const;
  bool is_packed(Layout l) const;
  // Smallest number of elements the storage must span (max offset + 1; 0 if empty).
  std::int64_t span() const;
  std::string to_string() const;  // "f32[8,64,56,56]nhwc" or "f32[2,3]{strides 1,2}"
};

// ---- Activations ------------------------------------------------------------------------
// alpha/beta meaning per kind (defaults in parentheses are what Activation::make fills in):
//   relu; leaky_relu y = x>0 ? x : alpha*x (0.01); elu alpha (1); selu alpha (1.6732632),
//   beta = gamma (1.0507010); celu alpha (1); sigmoid; hard_sigmoid max(0,min(1,alpha*x+beta))
//   (0.2, 0.5); tanh; gelu_erf; gelu_tanh; silu; mish; softplus log(1+e^x); softsign;
//   clip min(max(x,alpha),beta) (relu6 = clip 0..6); hard_swish x*relu6(x+3)/6; abs;
//   identity.
enum class ActKind : int {
  kIdentity,
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kCelu,
  kSigmoid,
  kHardSigmoid,
  kTanh,
  kGeluErf,
  kGeluTanh,
  kSilu,
  kMish,
  kSoftplus,
  kSoftsign,
  kClip,
  kHardSwish,
  kAbs,
};
struct Activation {
  ActKind kind = ActKind::kIdentity;
  float alpha = 0.0f;
  float beta = 0.0f;
  static Activation make(ActKind kind);  // with the default parameters above
  static Activation relu6() { return {ActKind::kClip, 0.0f, 6.0f}; }
};
std::string_view act_name(ActKind k);  // "relu", "gelu_erf", ...
std::optional<ActKind> parse_act(std::string_view name);

// y = f(x), elementwise; x and y have the same dims (strides may differ; in-place allowed
// when they are equal).
Status activation_forward(Handle& h, const Activation& act, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& y_desc, void* y);
// dx = f'(x) * dy (computed from the forward input x).
Status activation_backward(Handle& h, const Activation& act, const TensorDesc& x_desc,
                           const void* x, const TensorDesc& dy_desc, const void* dy,
                           const TensorDesc& dx_desc, void* dx);
// PReLU: y = x > 0 ? x : slope[c] * x, slope f32 with one value per channel (dim 1) or a
// single shared value (slope_count 1).
Status prelu_forward(Handle& h, const TensorDesc& x_desc, const void* x, const float* slope,
                     std::int64_t slope_count, const TensorDesc& y_desc, void* y);
// dx, and dslope (accumulated in a fixed order, overwritten; may be null).
Status prelu_backward(Handle& h, const TensorDesc& x_desc, const void* x, const float* slope,
                      std::int64_t slope_count, const TensorDesc& dy_desc, const void* dy,
                      const TensorDesc& dx_desc, void* dx, float* dslope);
// CReLU: y = concat(relu(x), relu(-x)) along dim 1, so y has 2*C channels.
Status crelu_forward(Handle& h, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                     void* y);
Status crelu_backward(Handle& h, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                      void* dx);

// ---- Softmax ----------------------------------------------------------------------------
enum class SoftmaxMode : int { kSoftmax = 0, kLogSoftmax = 1 };
// Over one axis (negative counts from the end); numerically stable (max subtracted).
Status softmax_forward(Handle& h, SoftmaxMode mode, int axis, const TensorDesc& x_desc,
                       const void* x, const TensorDesc& y_desc, void* y);
// From the forward output y: softmax dx = y*(dy - sum(dy*y)); log-softmax
// dx = dy - exp(y)*sum(dy).
Status softmax_backward(Handle& h, SoftmaxMode mode, int axis, const TensorDesc& y_desc,
                        const void* y, const TensorDesc& dy_desc, const void* dy,
                        const TensorDesc& dx_desc, void* dx);

// ---- Pooling ----------------------------------------------------------------------------
enum class PoolKind : int { kMax = 0, kAvgIncludePad = 1, kAvgExcludePad = 2 };
struct PoolDesc {
  PoolKind kind = PoolKind::kMax;
  std::vector<std::int64_t> kernel;     // one per spatial dim
  std::vector<std::int64_t> stride;     // empty: 1
  std::vector<std::int64_t> pad_begin;  // empty: 0
  std::vector<std::int64_t> pad_end;    // empty: 0
  std::vector<std::int64_t> dilation;   // empty: 1 (average: the divisor counts taps only)
  bool ceil_mode = false;  // output size rounded up (a window must start inside input+pad_begin)
  // Global pooling: the kernel covers the whole spatial extent of x.
  static PoolDesc global(PoolKind kind, const TensorDesc& x);
};
// y's dims for x under `p` (same dtype; layout as x).
Result<TensorDesc> pooling_output_desc(const PoolDesc& p, const TensorDesc& x);
// indices (optional, max only): per output element, the flat index of the chosen input
// element within its (n, c) spatial plane (row-major over the spatial dims), as PyTorch
// returns. Laid out like y (same dims and strides).
Status pooling_forward(Handle& h, const PoolDesc& p, const TensorDesc& x_desc, const void* x,
                       const TensorDesc& y_desc, void* y, std::int64_t* indices = nullptr);
// Max pooling needs either x (the maximum is recomputed, first maximum wins) or the indices
// of the forward pass; average pooling needs neither (x may be null). dx is overwritten.
Status pooling_backward(Handle& h, const PoolDesc& p, const TensorDesc& x_desc, const void* x,
                        const std::int64_t* indices, const TensorDesc& dy_desc, const void* dy,
                        const TensorDesc& dx_desc, void* dx);

// ---- Normalisation ----------------------------------------------------------------------
enum class BatchNormMode : int {
  kSpatial = 0,        // statistics per channel over N and spatial dims
  kPerActivation = 1,  // statistics per (C, spatial) element over N
};
// Parameter count: C (spatial) or C*spatial (per activation), all f32.
// Training: y = scale*(x-mean)*invstd + bias with batch statistics; saved_mean/saved_invstd
// (required) receive them for backward. running_mean/running_var (optional, both or neither)
// are updated as r = (1-momentum)*r + momentum*batch (variance unbiased, n/(n-1)).
Status batch_norm_forward_training(Handle& h, BatchNormMode mode, const TensorDesc& x_desc,
                                   const void* x, const float* scale, const float* bias,
                                   double epsilon, double momentum, float* running_mean,
                                   float* running_var, float* saved_mean, float* saved_invstd,
                                   const TensorDesc& y_desc, void* y);
Status batch_norm_forward_inference(Handle& h, BatchNormMode mode, const TensorDesc& x_desc,
                                    const void* x, const float* scale, const float* bias,
                                    const float* mean, const float* var, double epsilon,
                                    const TensorDesc& y_desc, void* y);
// dscale/dbias overwritten (may be null).
Status batch_norm_backward(Handle& h, BatchNormMode mode, const TensorDesc& x_desc,
                           const void* x, const TensorDesc& dy_desc, const void* dy,
                           const float* scale, const float* saved_mean, const float* saved_invstd,
                           const TensorDesc& dx_desc, void* dx, float* dscale, float* dbias);

// Layer norm over dims [axis, rank): statistics per leading index; scale/bias (bias
// optional) have the normalised shape. mean/invstd outputs (optional) have one value per
// leading index.
Status layer_norm_forward(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                          const float* scale, const float* bias, double epsilon,
                          const TensorDesc& y_desc, void* y, float* mean, float* invstd);
Status layer_norm_backward(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                           const TensorDesc& dy_desc, const void* dy, const float* scale,
                           const float* mean, const float* invstd, const TensorDesc& dx_desc,
                           void* dx, float* dscale, float* dbias);
// Group norm: channels split in `groups`; statistics per (n, group) over its channels and
// spatial dims; scale/bias per channel. Instance norm is groups == C. mean/invstd:
// N*groups values (optional in forward, required in backward).
Status group_norm_forward(Handle& h, std::int64_t groups, const TensorDesc& x_desc, const void* x,
                          const float* scale, const float* bias, double epsilon,
                          const TensorDesc& y_desc, void* y, float* mean, float* invstd);
Status group_norm_backward(Handle& h, std::int64_t groups, const TensorDesc& x_desc,
                           const void* x, const TensorDesc& dy_desc, const void* dy,
                           const float* scale, const float* mean, const float* invstd,
                           const TensorDesc& dx_desc, void* dx, float* dscale, float* dbias);
Status instance_norm_forward(Handle& h, const TensorDesc& x_desc, const void* x,
                             const float* scale, const float* bias, double epsilon,
                             const TensorDesc& y_desc, void* y, float* mean, float* invstd);
Status instance_norm_backward(Handle& h, const TensorDesc& x_desc, const void* x,
                              const TensorDesc& dy_desc, const void* dy, const float* scale,
                              const float* mean, const float* invstd, const TensorDesc& dx_desc,
                              void* dx, float* dscale, float* dbias);

// Local response normalisation: y = x / (k + alpha/n * sum_{window} x^2)^beta, the window
// `size` channels wide (across) or size^d spatial positions (within, per channel), centred
// (extra element on the high side for even sizes, as ONNX). n = size (across) or size^d.
enum class LrnMode : int { kAcrossChannels = 0, kWithinChannel = 1 };
struct LrnDesc {
  LrnMode mode = LrnMode::kAcrossChannels;
  std::int64_t size = 5;
  double alpha = 1e-4, beta = 0.75, k = 1.0;
};
Status lrn_forward(Handle& h, const LrnDesc& d, const TensorDesc& x_desc, const void* x,
                   const TensorDesc& y_desc, void* y);
Status lrn_backward(Handle& h, const LrnDesc& d, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                    void* dx);

// ---- Convolution ------------------------------------------------------------------------
struct ConvDesc {
  std::vector<std::int64_t> stride;     // one per spatial dim; empty: 1
  std::vector<std::int64_t> dilation;   // empty: 1
  std::vector<std::int64_t> pad_begin;  // empty: 0
  std::vector<std::int64_t> pad_end;    // empty: 0
  std::int64_t groups = 1;
};

enum class ConvAlgo : int {
  kAuto = 0,       // the tuning database's choice, else the heuristic order
  kDirect,         // vectorised register-blocked direct convolution
  kIm2col,         // im2col + GEMM
  kGemm1x1,        // 1x1 (stride 1, no padding) as one GEMM, no im2col
  kWinogradF2x3,   // Winograd F(2x2, 3x3)
  kWinogradF4x3,   // Winograd F(4x4, 3x3)
  kDepthwise,      // groups == C == K, specialised
  kFft,            // FFT: spectra products (stride 1, no dilation; large kernels)
  kReference,      // the plain reference (always accepts)
};
std::string_view algo_name(ConvAlgo a);  // "direct", "im2col", "gemm1x1", "winograd_f2x3", ...
std::optional<ConvAlgo> parse_algo(std::string_view name);

enum class ConvDir : int { kForward = 0, kBackwardData = 1, kBackwardWeights = 2 };
std::string_view dir_name(ConvDir d);  // "fwd", "bwd-data", "bwd-weights"

// Fused epilogue of the forward convolution, applied in the same pass over the output:
//   y = act(conv(x, w) + bias[k] + residual)
// bias: f32, K values (optional). residual: same desc as y (optional, may alias y).
struct PostOps {
  const float* bias = nullptr;
  const void* residual = nullptr;
  Activation act;
};

// y's dims for x and w (dtype and layout of x).
Result<TensorDesc> conv_output_desc(const ConvDesc& c, const TensorDesc& x, const TensorDesc& w);

Status conv_forward(Handle& h, const ConvDesc& c, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& w_desc, const void* w, const TensorDesc& y_desc, void* y,
                    const PostOps& post = {}, ConvAlgo algo = ConvAlgo::kAuto);
// dx = conv_forward's adjoint applied to dy (also transposed convolution of dy). dx is
// overwritten.
Status conv_backward_data(Handle& h, const ConvDesc& c, const TensorDesc& w_desc, const void* w,
                          const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                          void* dx, ConvAlgo algo = ConvAlgo::kAuto);
// dw (overwritten) and, if dbias is not null, dbias[k] = sum of dy over N and spatial dims.
Status conv_backward_weights(Handle& h, const ConvDesc& c, const TensorDesc& x_desc,
                             const void* x, const TensorDesc& dy_desc, const void* dy,
                             const TensorDesc& dw_desc, void* dw, float* dbias = nullptr,
                             ConvAlgo algo = ConvAlgo::kAuto);

// A forward convolution planned once for fixed descriptors and weights, as a graph runtime
// or a training loop's inference pass uses it: create() validates the descriptors, chooses
// the algorithm as conv_forward would (`algo`, else the tuning database, else the heuristic)
// and packs a copy of the weights into that algorithm's layout, so run() reads only x and
// the post-ops' data. The plan owns its weights: later changes to w do not reach it. Runs on
// one plan from several threads at once (each with its own handle) are safe. run() gives the
// same bits as conv_forward with the same algorithm.
class ConvForwardPlan {
 public:
  static Result<ConvForwardPlan> create(Handle& h, const ConvDesc& c, const TensorDesc& x_desc,
                                        const TensorDesc& w_desc, const void* w,
                                        const TensorDesc& y_desc,
                                        ConvAlgo algo = ConvAlgo::kAuto);
  Status run(Handle& h, const void* x, void* y, const PostOps& post = {}) const;
  ConvAlgo algo() const;
  const std::string& impl() const;  // implementation name
  std::size_t packed_bytes() const;  // weights packed at creation (0: the algorithm reads w as given)

 private:
  struct State;
  explicit ConvForwardPlan(std::shared_ptr<const State> s) : s_(std::move(s)) {}
  std::shared_ptr<const State> s_;
};

// The algorithm immediate mode (kAuto) would run, and why: "tune-db" or "heuristic".
struct ConvChoice {
  ConvAlgo algo = ConvAlgo::kReference;
  std::string impl;    // implementation name, e.g. "conv_fwd_f32_winograd_f4x3_avx512"
  std::string source;  // "tune-db" or "heuristic"
};
Result<ConvChoice> choose_convolution(Handle& h, ConvDir dir, const ConvDesc& c,
                                      const TensorDesc& x_desc, const TensorDesc& w_desc,
                                      const TensorDesc& y_desc);

// The activation layout a forward convolution runs fastest in here, for a graph compiler's
// layout assignment: x_dims [N, C, spatial...] and w_dims [K, C/groups, spatial...] (weights
// packed to match the layout). Where Find mode recorded both layouts' problems in the tuning
// database, the one whose winner measured faster; else channels-last (kNHWC), where this
// machine's fastest kernels are (the direct, batch-reduce, 1x1 and depthwise kernels work on
// it), unless the NHWC heuristic has only the reference while NCHW has an algorithm. `reason`
// says which rule decided and what each layout would run.
struct LayoutChoice {
  Layout layout = Layout::kNCHW;
  std::string reason;
};
Result<LayoutChoice> preferred_conv_layout(Handle& h, const ConvDesc& c, DType dtype,
                                           const std::vector<std::int64_t>& x_dims,
                                           const std::vector<std::int64_t>& w_dims);

struct ConvCandidate {
  ConvAlgo algo = ConvAlgo::kReference;
  std::string impl;        // implementation name ("" when refused before one was chosen)
  bool accepted = false;   // the algorithm accepted the problem and was timed
  std::string reason;      // why it refused (empty when accepted)
  double median_us = 0.0;  // timings (accepted only)
  double spread_us = 0.0;  // max - min over the samples
  std::int64_t samples = 0;
};
struct FindOptions {
  double min_seconds_per_algo = 0.05;  // keep timing an algorithm at least this long
  int min_samples = 3;
  bool record = true;                  // write the result into the tuning database
  bool include_reference = false;      // time the reference too (slow; for studies)
};
// Times every accepting algorithm on this problem (on internal buffers filled with random
// data), records all candidates with timings and refusal reasons in the tuning database, and
// returns them: accepted ones fastest first, then the refusals.
Result<std::vector<ConvCandidate>> find_convolution(Handle& h, ConvDir dir, const ConvDesc& c,
                                                    const TensorDesc& x_desc,
                                                    const TensorDesc& w_desc,
                                                    const TensorDesc& y_desc,
                                                    const FindOptions& options = {});

// The tuning-database signature of a convolution problem (also printed by tune explain):
// e.g. "fwd f32 x[1,64,56,56]nhwc w[64,64,3,3]ohwi y nhwc s1x1 d1x1 p1x1x1x1 g1".
std::string conv_signature(ConvDir dir, const ConvDesc& c, const TensorDesc& x_desc,
                           const TensorDesc& w_desc, const TensorDesc& y_desc);

}  // namespace tessera::dnn

#include "tessera/dnn/tensor_ops.hpp"     // elementwise operations and reductions
#include "tessera/dnn/data_movement.hpp"  // cast, transpose, slice, concat, pad, ...
#include "tessera/dnn/training.hpp"       // dropout, losses
#include "tessera/dnn/rnn.hpp"            // RNN, LSTM, GRU
