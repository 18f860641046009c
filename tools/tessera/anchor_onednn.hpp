// oneDNN as the anchor of `tessera bench dnn`: libdnnl.so.2 is opened with dlopen at run time
// (never linked) and driven through its C API. Each primitive is created the way benchdnn
// measures it: memory formats left to oneDNN (format_tag::any), inputs reordered into them
// once, untimed, so only the primitive itself is timed; outputs can be reordered back into
// the caller's layout for a cross-check against tessera.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tessera/core/status.hpp>
#include <tessera/dnn.hpp>

namespace tessera::cli::onednn {

// A tensor in the caller's memory: dtype (f32, bf16, f16), logical dims and element strides.
struct Tensor {
  DType dtype = DType::kF32;
  std::vector<std::int64_t> dims, strides;
  void* data = nullptr;
};
// The same dims and strides over different data.
Tensor tensor(const dnn::TensorDesc& d, const void* data);

struct Info {
  std::string path;     // the file that was opened
  std::string version;  // "oneDNN 2.6.3 (OpenMP, avx512_core_bf16)"
};
// Opens oneDNN once per process. nullptr when it is not installed or lacks a needed symbol;
// `why` (may be null) then says which.
const Info* open(std::string* why);
// oneDNN's thread count (its OpenMP runtime's, for the calling thread). After open().
void set_threads(int n);

// One primitive, ready to run on inputs already in oneDNN's chosen layouts.
class Primitive {
 public:
  virtual ~Primitive() = default;
  virtual Status run() = 0;              // executes and waits: the timed call
  virtual Status fetch() = 0;            // reorders the outputs into the caller's output tensors
  virtual std::string impl() const = 0;  // oneDNN's implementation, e.g. "brg:avx512_core"
};
using PrimitivePtr = std::unique_ptr<Primitive>;

// Convolution. Forward reads x, w and writes y; bwd-data reads w, y (dy) and writes x (dx);
// bwd-weights reads x, y (dy) and writes w (dw). Weights are [K, C/groups, spatial...] as in
// tessera; stride/dilation/padding as in dnn::ConvDesc (dilation 1 = none), never empty.
struct ConvSpec {
  dnn::ConvDir dir = dnn::ConvDir::kForward;
  Tensor x, w, y;
  std::int64_t groups = 1;
  std::vector<std::int64_t> stride, dilation, pad_begin, pad_end;
};
Result<PrimitivePtr> make_conv(const ConvSpec& s);

// Pooling. Forward reads x, writes y; backward reads x (for max pooling's workspace, made by
// an untimed forward run) and dy, writes dx.
struct PoolSpec {
  bool backward = false;
  dnn::PoolKind kind = dnn::PoolKind::kMax;
  Tensor x, y, dy, dx;
  std::vector<std::int64_t> kernel, stride, pad_begin, pad_end, dilation;  // dilation 1 = none
};
Result<PrimitivePtr> make_pool(const PoolSpec& s);

// Elementwise activation. Forward reads x, writes y; backward reads x and dy, writes dx.
struct EltwiseSpec {
  bool backward = false;
  dnn::Activation act;
  Tensor x, y, dy, dx;
};
Result<PrimitivePtr> make_eltwise(const EltwiseSpec& s);

// Softmax / log-softmax. Forward reads x, writes y; backward reads y and dy, writes dx.
struct SoftmaxSpec {
  bool backward = false;
  bool log = false;
  int axis = 1;  // non-negative
  Tensor x, y, dy, dx;
};
Result<PrimitivePtr> make_softmax(const SoftmaxSpec& s);

// Batch normalisation (spatial) and layer normalisation (over the last dim; callers reshape).
// scale, shift: f32 per channel (batch norm) or per normalised element (layer norm). mean,
// variance: f32 statistics, outputs of forward training, inputs otherwise. Backward reads x,
// dy, scale, shift, mean, variance and writes dx, dscale, dshift.
enum class NormProp { kForwardTraining, kForwardInference, kBackward };
struct NormSpec {
  bool layer = false;  // layer norm (else batch norm)
  NormProp prop = NormProp::kForwardTraining;
  double epsilon = 1e-5;
  Tensor x, y, dy, dx, scale, shift, mean, variance, dscale, dshift;
};
Result<PrimitivePtr> make_norm(const NormSpec& s);

// Local response normalisation. Forward reads x, writes y; backward reads x and dy, writes dx.
struct LrnSpec {
  bool backward = false;
  dnn::LrnDesc desc;
  Tensor x, y, dy, dx;
};
Result<PrimitivePtr> make_lrn(const LrnSpec& s);

}  // namespace tessera::cli::onednn
