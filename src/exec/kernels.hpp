// The executor's kernels: one function per ai.onnx op, over host tensors, calling the dnn and
// blas primitives. Each reads its node's inputs (null where an optional one is left out) and
// attributes and fills its outputs with new tensors (or views of its inputs).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/dnn.hpp"
#include "tessera/graph.hpp"

namespace tessera::exec::detail {

// What a kernel keeps between runs of its node (plans, packed weights), owned by the session.
struct NodeCache {
  virtual ~NodeCache() = default;
};

// The values a node's subgraphs read from the graphs around it, by name.
using Captured = std::vector<std::pair<std::string, const Tensor*>>;

struct KernelCall {
  const graph::Node& node;
  std::int64_t opset;
  std::vector<const Tensor*> in;
  std::vector<Tensor>& out;
  dnn::Handle& h;
  // Per input: whether it is a constant of the model (the same data on every run).
  std::vector<char> constant;
  std::unique_ptr<NodeCache>& cache;
  // The memory plan's slots for the outputs (undefined where none); with `record`, output()
  // keeps what it allocated here, so the session can see which outputs were written in place.
  std::vector<Tensor> given = {};
  bool record = false;
  // The implementation the kernel chose, where it is worth naming (profiles show it);
  // `profiled`: this run is profiled (naming may cost a lookup).
  std::string chosen = {};
  bool profiled = false;
  // If, Loop, Scan: the values their subgraphs read from the graphs around them.
  Captured captured = {};

  // Output k's tensor: the planned slot when it has these dims and dtype, else a new one.
  // Kernels allocate their outputs through this so the memory plan can place them.
  Result<Tensor> output(std::size_t k, const std::vector<std::int64_t>& dims, DType dtype);
  // The same for the tensor `y` when it is one of `out`, else a new tensor.
  Result<Tensor> output_for(const Tensor& y, const std::vector<std::int64_t>& dims, DType dtype);

  bool is_constant(std::size_t k) const { return k < constant.size() && constant[k]; }

  const Tensor* input(std::size_t k) const { return k < in.size() ? in[k] : nullptr; }
  const graph::Attribute* attr(const char* name) const;
  std::int64_t attr_int(const char* name, std::int64_t dflt) const;
  float attr_float(const char* name, float dflt) const;
  std::string attr_string(const char* name, const std::string& dflt) const;
  std::optional<std::vector<std::int64_t>> attr_ints(const char* name) const;
};
using Kernel = Status (*)(KernelCall& c);

// The kernel of an ai.onnx op, or null.
Kernel find_kernel(std::string_view op);
std::vector<std::string> kernel_names();

// The descriptor the primitives take for t (its dims and strides).
dnn::TensorDesc desc(const Tensor& t);
// A new packed tensor of those dims and dtype.
Result<Tensor> new_tensor(const std::vector<std::int64_t>& dims, DType dtype);
// t seen with new dims (a view where t's strides allow, else a packed copy).
Result<Tensor> reshaped(dnn::Handle& h, const Tensor& t, const std::vector<std::int64_t>& dims);
// Per spatial dim of x ([N, C, spatial...], one kernel entry per spatial dim): the explicit
// `pads` attribute, or those `auto_pad` asks for (SAME_UPPER puts the odd one at the end,
// SAME_LOWER at the beginning; VALID none).
Status spatial_pads(const KernelCall& c, const std::vector<std::int64_t>& x_dims, const std::vector<std::int64_t>& kernel,
                    const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& dilation,
                    std::vector<std::int64_t>& begin, std::vector<std::int64_t>& end);
inline Status spatial_pads(const KernelCall& c, const Tensor& x, const std::vector<std::int64_t>& kernel,
                           const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& dilation,
                           std::vector<std::int64_t>& begin, std::vector<std::int64_t>& end) {
  return spatial_pads(c, x.shape().dims(), kernel, stride, dilation, begin, end);
}
// Conv's descriptor from its node's attributes (strides, dilations, group, pads or auto_pad)
// for an input of x_dims [N, C, spatial...] and weights of w_dims.
Result<dnn::ConvDesc> conv_desc(const KernelCall& c, const std::vector<std::int64_t>& x_dims, const std::vector<std::int64_t>& w_dims);
// In a profiled run, names in c.chosen the implementation immediate mode takes for a
// convolution (x, w, y: dx, dw, dy for the backward directions).
void name_immediate_conv(KernelCall& c, dnn::ConvDir dir, const dnn::ConvDesc& d, const dnn::TensorDesc& x,
                         const dnn::TensorDesc& w, const dnn::TensorDesc& y);
// The activation of an ONNX op with its parameters (alpha, beta: LeakyRelu's, Elu's and Celu's
// alpha, Selu's alpha and gamma, HardSigmoid's alpha and beta, Clip's bounds; for Gelu a
// nonzero alpha means approximate=tanh), or nullopt for an op that is not one.
std::optional<dnn::Activation> onnx_activation(std::string_view op, float alpha, float beta);
// A pooling op's descriptor (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool) from its
// node's attributes for an input described by xd (channels-first dims).
Result<dnn::PoolDesc> pool_desc(const KernelCall& c, std::string_view op, const dnn::TensorDesc& xd);
// tessera's channels-last ops (attribute channels_last = 1, from the layout pass) take and give
// [N, spatial..., C]; the primitives see that memory as [N, C, spatial...] with channels-last
// strides. channels_first(d) moves d's last axis to position 1 (dims and strides);
// channels_last_dims(dims) moves axis 1 to the end.
bool is_channels_last(const KernelCall& c);
dnn::TensorDesc channels_first(const dnn::TensorDesc& d);
// t's descriptor as the primitives see it: channels_first(desc(t)) in a channels-last node.
dnn::TensorDesc logical_desc(const KernelCall& c, const Tensor& t);
std::vector<std::int64_t> channels_last_dims(const std::vector<std::int64_t>& dims);
// A new packed tensor of x's dims and `dtype`.
Result<Tensor> like(const Tensor& x, DType dtype);
// x's dims around `axis`: the product of those before, the axis's own, the product of those after.
struct AxisSplit {
  std::int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Tensor& x, int axis);
// The row-major multi-index of `flat` over `dims`, into idx (resized to dims' size).
void unravel(std::int64_t flat, std::span<const std::int64_t> dims, std::vector<std::int64_t>& idx);
// An axis in [-rank, rank), made non-negative; the error names `what`.
Result<int> norm_axis(std::int64_t a, int rank, const std::string& what);
// t as a packed f32 tensor (t itself when it is one): the parameters the primitives take as float*.
Result<Tensor> as_f32(dnn::Handle& h, const Tensor& t);
// BatchNormalization in training mode (spatial: per channel, dim 1) through the dnn primitive:
// y = scale * (x - mean) * invstd + bias with the batch's mean and invstd = 1/sqrt(var + eps)
// (var biased), which it returns. The primitive sums in a fixed order, so BatchNormGrad, calling
// it again on the same x (y then scratch), gets the forward's statistics bit for bit.
// xd, yd: the tensors' logical [N, C, ...] descriptors (channels_first() of a channels-last one).
Status batch_norm_training(dnn::Handle& h, const dnn::TensorDesc& xd, const void* x, const float* scale, const float* bias, double eps,
                           const dnn::TensorDesc& yd, void* y, std::vector<float>& mean, std::vector<float>& invstd);
// A packed f64 copy of x (any numeric dtype), and `out` = d cast to `dtype`: the path of the
// reference-grade kernels of rare ops, which compute in f64.
Result<Tensor> as_f64(dnn::Handle& h, const Tensor& x);
Status from_f64(dnn::Handle& h, const Tensor& d, DType dtype, Tensor& out);

// ONNX's i16, u16, u32, u64 and sub-byte integers, on which the primitives do not compute,
// widen: to i32 (i16, u16, i4, u4, i2, u2) or i64 (u32, u64); other dtypes stay. Results
// narrow back modulo 2^bits (dnn::cast).
DType widened(DType t);
// x cast to widened(x.dtype()) (x itself when that is its dtype). u64 goes to i64 bit for bit,
// so with `ordered` (the op compares, divides or orders) a value from 2^63 on is an error
// naming `what`.
Result<Tensor> widen(dnn::Handle& h, const Tensor& x, bool ordered, const std::string& what);
// (Log-)softmax in place over the middle dim of a packed f64 [outer, n, inner] array.
void softmax_f64(double* p, std::int64_t outer, std::int64_t n, std::int64_t inner, bool log);
// A packed i64 copy of an integer (or bool) tensor.
Result<Tensor> as_i64(dnn::Handle& h, const Tensor& t);
// "[2, 3, 4]": dims in errors.
std::string dims_string(const std::vector<std::int64_t>& d);
// The one value of a tensor (any numeric dtype) as a double.
Result<double> scalar_value(dnn::Handle& h, const Tensor& t, const std::string& what);
// The integer values of a 1-D (or scalar) i32/i64 tensor.
Result<std::vector<std::int64_t>> int_values(const Tensor& t, const std::string& what);
// A constant holding a tensor's data (packed, little-endian).
Result<graph::Constant> tensor_constant(dnn::Handle& h, const Tensor& t);
// A tensor holding a constant's data (types tessera computes on).
Result<Tensor> constant_tensor(const graph::Constant& c, const std::string& what);

}  // namespace tessera::exec::detail
