// The executor's network kernels: convolution (bias fused as a post-op), pooling, batch
// normalisation (inference), softmax, Gemm and MatMul.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"
#include "tessera/graph/passes.hpp"

namespace tessera::exec::detail {

using Dims = std::vector<std::int64_t>;

// Per spatial dim: the explicit pads, or those auto_pad asks for (SAME_UPPER puts the odd one at
// the end, SAME_LOWER at the beginning; VALID none).
Status spatial_pads(const KernelCall& c, const Dims& x_dims, const Dims& kernel, const Dims& stride, const Dims& dilation,
                    Dims& begin, Dims& end) {
  const std::size_t n = kernel.size();
  const std::string ap = c.attr_string("auto_pad", "NOTSET");
  begin.assign(n, 0);
  end.assign(n, 0);
  if (ap == "NOTSET") {
    if (const auto pads = c.attr_ints("pads")) {
      if (pads->size() != 2 * n) return invalid_argument("pads has " + std::to_string(pads->size()) + " entries for " + std::to_string(n) + " spatial dims");
      for (std::size_t i = 0; i < n; ++i) {
        begin[i] = (*pads)[i];
        end[i] = (*pads)[i + n];
      }
    }
    return Status::ok();
  }
  if (ap == "VALID") return Status::ok();
  if (ap != "SAME_UPPER" && ap != "SAME_LOWER") return invalid_argument("auto_pad '" + ap + "'");
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t in = x_dims[i + 2], s = stride[i];
    if (s < 1) return invalid_argument("strides must be positive, not " + std::to_string(s));
    const std::int64_t out = (in + s - 1) / s;
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + (kernel[i] - 1) * dilation[i] + 1 - in);
    begin[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
    end[i] = total - begin[i];
  }
  return Status::ok();
}

bool is_channels_last(const KernelCall& c) { return c.node.domain == graph::kTesseraDomain && c.attr_int("channels_last", 0) != 0; }

dnn::TensorDesc channels_first(const dnn::TensorDesc& d) {
  dnn::TensorDesc r = d;
  if (d.rank() < 3) return r;
  std::rotate(r.dims.begin() + 1, r.dims.end() - 1, r.dims.end());
  std::rotate(r.strides.begin() + 1, r.strides.end() - 1, r.strides.end());
  return r;
}

dnn::TensorDesc logical_desc(const KernelCall& c, const Tensor& t) { return is_channels_last(c) ? channels_first(desc(t)) : desc(t); }

Dims channels_last_dims(const Dims& dims) {
  Dims r = dims;
  if (r.size() >= 3) std::rotate(r.begin() + 1, r.begin() + 2, r.end());
  return r;
}

namespace {

Dims ints_or(const KernelCall& c, const char* name, std::size_t n, std::int64_t dflt) {
  Dims v = c.attr_ints(name).value_or(Dims{});
  if (v.empty()) v.assign(n, dflt);
  return v;
}

// FusedConv's activation: its ONNX op name and the alpha/beta the graph pass recorded.
Result<dnn::Activation> fused_activation(const KernelCall& c) {
  const std::string op = c.attr_string("activation", "");
  const float a = c.attr_float("activation_alpha", 0.0f), b = c.attr_float("activation_beta", 0.0f);
  if (op.empty()) return dnn::Activation{};
  if (op == "Relu") return dnn::Activation::make(dnn::ActKind::kRelu);
  if (op == "LeakyRelu") return dnn::Activation{dnn::ActKind::kLeakyRelu, a, 0.0f};
  if (op == "Clip") return dnn::Activation{dnn::ActKind::kClip, a, b};
  if (op == "Sigmoid") return dnn::Activation::make(dnn::ActKind::kSigmoid);
  if (op == "Tanh") return dnn::Activation::make(dnn::ActKind::kTanh);
  if (op == "HardSigmoid") return dnn::Activation{dnn::ActKind::kHardSigmoid, a, b};
  if (op == "HardSwish") return dnn::Activation::make(dnn::ActKind::kHardSwish);
  return invalid_argument("FusedConv's activation '" + op + "' is not one the convolution applies");
}

struct ConvPlans : NodeCache {
  std::map<std::tuple<Dims, Dims, int>, dnn::ConvForwardPlan> plans;
};


}  // namespace

void name_immediate_conv(KernelCall& c, dnn::ConvDir dir, const dnn::ConvDesc& d, const dnn::TensorDesc& x,
                         const dnn::TensorDesc& w, const dnn::TensorDesc& y) {
  if (!c.profiled) return;
  const Result<dnn::ConvChoice> r = dnn::choose_convolution(c.h, dir, d, x, w, y);
  c.chosen = (r.is_ok() ? r->impl : std::string("?")) + " (immediate mode)";
}

Result<dnn::ConvDesc> conv_desc(const KernelCall& c, const Dims& x_dims, const Dims& w_dims) {
  const std::size_t n = x_dims.size() - 2;
  const Dims kernel = c.attr_ints("kernel_shape").value_or(Dims(w_dims.begin() + 2, w_dims.end()));
  dnn::ConvDesc d;
  d.stride = ints_or(c, "strides", n, 1);
  d.dilation = ints_or(c, "dilations", n, 1);
  d.groups = c.attr_int("group", 1);
  TESSERA_RETURN_IF_ERROR(spatial_pads(c, x_dims, kernel, d.stride, d.dilation, d.pad_begin, d.pad_end));
  return d;
}

Status conv_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &w = *c.input(1);
  if (x.rank() < 3 || w.rank() != x.rank()) return invalid_argument("Conv of a rank-" + std::to_string(x.rank()) + " input with rank-" + std::to_string(w.rank()) + " weights");
  const bool cl = is_channels_last(c);
  const dnn::TensorDesc xd = logical_desc(c, x);
  TESSERA_ASSIGN_OR_RETURN(const dnn::ConvDesc d, conv_desc(c, xd.dims, w.shape().dims()));
  TESSERA_ASSIGN_OR_RETURN(const dnn::TensorDesc yd, dnn::conv_output_desc(d, xd, desc(w)));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, cl ? channels_last_dims(yd.dims) : yd.dims, x.dtype()));
  const dnn::TensorDesc od = logical_desc(c, c.out[0]);
  dnn::PostOps post;
  Tensor bias;
  if (const Tensor* b = c.input(2)) {
    if (b->rank() != 1 || b->numel() != w.shape()[0]) return invalid_argument("the bias has " + std::to_string(b->numel()) + " values for " + std::to_string(w.shape()[0]) + " output channels");
    TESSERA_ASSIGN_OR_RETURN(bias, as_f32(c.h, *b));
    post.bias = bias.data<float>();
  }
  Tensor residual;
  if (c.node.op_type == "FusedConv") {  // tessera's Conv [+ residual] [+ activation]
    TESSERA_ASSIGN_OR_RETURN(post.act, fused_activation(c));
    if (const Tensor* r = c.input(3)) {
      if (r->shape().dims() != c.out[0].shape().dims() || r->dtype() != x.dtype()) return invalid_argument("the residual " + r->shape().to_string() + " does not match the output");
      residual = *r;
      if (!r->is_contiguous()) {
        TESSERA_ASSIGN_OR_RETURN(residual, r->clone());
      }
      post.residual = residual.data();
    }
  }
  if (!c.is_constant(1)) {
    name_immediate_conv(c, dnn::ConvDir::kForward, d, xd, desc(w), od);
    return dnn::conv_forward(c.h, d, xd, x.data(), desc(w), w.data(), od, c.out[0].data(), post);
  }
  // Constant weights: a forward plan per input layout (dims, strides, dtype), made on first
  // use, which chose the algorithm and packed the weights once.
  if (!c.cache) c.cache = std::make_unique<ConvPlans>();
  auto& plans = static_cast<ConvPlans&>(*c.cache).plans;
  const auto key = std::make_tuple(xd.dims, xd.strides, static_cast<int>(xd.dtype));
  auto it = plans.find(key);
  if (it == plans.end()) {
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvForwardPlan plan, dnn::ConvForwardPlan::create(c.h, d, xd, desc(w), w.data(), od));
    it = plans.emplace(key, std::move(plan)).first;
  }
  c.chosen = it->second.impl();
  return it->second.run(c.h, x.data(), c.out[0].data(), post);
}

// ConvTranspose as the data gradient of the convolution it transposes: X [N, C, ...] is that
// convolution's output, W [C, M / group, ...] its weights, Y [N, M, ...] its input. Output
// dims and pads follow ONNX: explicit pads, or output_shape / auto_pad (total padding split
// like the reference: SAME_UPPER puts the larger half at the end). Positions beyond the
// reach of every input element (an output_shape past it) are 0.
Status conv_transpose_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &w = *c.input(1);
  if (x.rank() < 3 || w.rank() != x.rank()) return invalid_argument("ConvTranspose of a rank-" + std::to_string(x.rank()) + " input with rank-" + std::to_string(w.rank()) + " weights");
  const std::size_t n = static_cast<std::size_t>(x.rank() - 2);
  dnn::ConvDesc d;
  d.stride = ints_or(c, "strides", n, 1);
  d.dilation = ints_or(c, "dilations", n, 1);
  d.groups = c.attr_int("group", 1);
  const Dims kernel(w.shape().dims().begin() + 2, w.shape().dims().end());
  const Dims out_pad = ints_or(c, "output_padding", n, 0);
  const std::optional<Dims> out_shape = c.attr_ints("output_shape");
  const std::string ap = c.attr_string("auto_pad", "NOTSET");
  if (d.stride.size() != n || d.dilation.size() != n || out_pad.size() != n || (out_shape && out_shape->size() != n))
    return invalid_argument("strides, dilations, output_padding or output_shape do not have one entry per spatial dim");
  Dims out(n), natural(n);  // the output size, and the size the input reaches with no padding
  d.pad_begin.assign(n, 0);
  d.pad_end.assign(n, 0);
  const std::optional<Dims> pads = c.attr_ints("pads");
  if (pads && pads->size() != 2 * n) return invalid_argument("pads has " + std::to_string(pads->size()) + " entries");
  for (std::size_t i = 0; i < n; ++i) {
    natural[i] = d.stride[i] * (x.shape()[static_cast<int>(i) + 2] - 1) + out_pad[i] + (kernel[i] - 1) * d.dilation[i] + 1;
    if ((ap == "SAME_UPPER" || ap == "SAME_LOWER") && !pads) {
      out[i] = out_shape ? (*out_shape)[i] : x.shape()[static_cast<int>(i) + 2] * d.stride[i];
      const std::int64_t total = natural[i] - out[i];
      d.pad_begin[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      if (pads) d.pad_begin[i] = (*pads)[i];
      const std::int64_t end = pads ? (*pads)[i + n] : 0;
      out[i] = out_shape ? (*out_shape)[i] : natural[i] - d.pad_begin[i] - end;
    }
    d.pad_end[i] = natural[i] - out_pad[i] - d.pad_begin[i] - out[i];  // output_padding extends the end
    if (out[i] < 0) return invalid_argument("the output size " + std::to_string(out[i]) + " is negative");
  }
  // A negative end pad (output beyond the input's reach): compute up to the reach, zero the rest.
  Dims reach = out, extra(2 * n + 4, 0);
  bool beyond = false;
  for (std::size_t i = 0; i < n; ++i)
    if (d.pad_end[i] + out_pad[i] < 0) {
      reach[i] = out[i] + d.pad_end[i] + out_pad[i];
      extra[n + 2 + i + 2] = out[i] - reach[i];
      d.pad_end[i] = -out_pad[i];
      beyond = true;
    }
  for (std::size_t i = 0; i < n; ++i) d.pad_end[i] += out_pad[i];
  const std::int64_t m = w.shape()[1] * d.groups;
  Dims ydims = {x.shape()[0], m};
  ydims.insert(ydims.end(), reach.begin(), reach.end());
  TESSERA_ASSIGN_OR_RETURN(Tensor y, new_tensor(ydims, x.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::conv_backward_data(c.h, d, desc(w), w.data(), desc(x), x.data(), desc(y), y.data()));
  if (beyond) {
    Dims full = {x.shape()[0], m};
    full.insert(full.end(), out.begin(), out.end());
    TESSERA_ASSIGN_OR_RETURN(Tensor padded, new_tensor(full, x.dtype()));
    TESSERA_RETURN_IF_ERROR(dnn::pad(c.h, dnn::PadMode::kConstant, extra, 0.0, desc(y), y.data(), desc(padded), padded.data()));
    y = std::move(padded);
  }
  if (const Tensor* b = c.input(2)) {
    if (b->numel() != m) return invalid_argument("the bias has " + std::to_string(b->numel()) + " values for " + std::to_string(m) + " output channels");
    Dims bd(static_cast<std::size_t>(x.rank()), 1);
    bd[1] = m;
    TESSERA_ASSIGN_OR_RETURN(Tensor bias, reshaped(c.h, *b, bd));
    TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, y.shape().dims(), y.dtype()));
    return dnn::binary(c.h, dnn::BinaryOp::kAdd, desc(y), y.data(), desc(bias), bias.data(), desc(c.out[0]), c.out[0].data());
  }
  c.out[0] = std::move(y);
  return Status::ok();
}

// LpPool: (sum of |x|^p over the window)^(1/p), in f64; padding counts as 0. Output dims as
// the other pools: floor (or ceil_mode's ceil, a window starting in the end padding dropped)
// of (in + pads - dilated kernel) / stride + 1.
Status lp_pool_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const Dims kernel = c.attr_ints("kernel_shape").value_or(Dims{});
  if (kernel.empty() || x.rank() != static_cast<int>(kernel.size()) + 2) return invalid_argument("kernel_shape does not match the input's rank " + std::to_string(x.rank()));
  const std::size_t n = kernel.size();
  const Dims stride = ints_or(c, "strides", n, 1), dilation = ints_or(c, "dilations", n, 1);
  if (stride.size() != n || dilation.size() != n) return invalid_argument("strides or dilations do not have one entry per spatial dim");
  Dims pb, pe;
  TESSERA_RETURN_IF_ERROR(spatial_pads(c, x, kernel, stride, dilation, pb, pe));
  const double p = static_cast<double>(c.attr_int("p", 2));
  if (p <= 0) return invalid_argument("p must be positive");
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  Dims ydims = {x.shape()[0], x.shape()[1]};
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t in = x.shape()[static_cast<int>(i) + 2], span = (kernel[i] - 1) * dilation[i] + 1;
    if (stride[i] < 1 || dilation[i] < 1 || kernel[i] < 1) return invalid_argument("kernel_shape, strides and dilations must be positive");
    const std::int64_t room = in + pb[i] + pe[i] - span;
    if (room < 0) return invalid_argument("the window is larger than the padded input");
    std::int64_t out = (ceil_mode ? (room + stride[i] - 1) / stride[i] : room / stride[i]) + 1;
    if (ceil_mode && (out - 1) * stride[i] >= in + pb[i]) --out;
    ydims.push_back(out);
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(ydims, DType::kF64));
  const double* xp = xd.data<double>();
  double* yp = yd.data<double>();
  std::int64_t kvol = 1, yvol = 1, xvol = 1;
  for (std::size_t i = 0; i < n; ++i) {
    kvol *= kernel[i];
    yvol *= ydims[i + 2];
    xvol *= x.shape()[static_cast<int>(i) + 2];
  }
  Dims o(n), k(n);
  for (std::int64_t plane = 0; plane < x.shape()[0] * x.shape()[1]; ++plane)
    for (std::int64_t yi = 0; yi < yvol; ++yi) {
      unravel(yi, std::span(ydims).subspan(2), o);
      double sum = 0;
      for (std::int64_t ki = 0; ki < kvol; ++ki) {
        unravel(ki, kernel, k);
        std::int64_t off = 0;
        bool inside = true;
        for (std::size_t i = 0; i < n && inside; ++i) {
          const std::int64_t at = o[i] * stride[i] - pb[i] + k[i] * dilation[i];
          inside = at >= 0 && at < x.shape()[static_cast<int>(i) + 2];
          off = off * x.shape()[static_cast<int>(i) + 2] + at;
        }
        if (inside) sum += std::pow(std::fabs(xp[plane * xvol + off]), p);
      }
      yp[plane * yvol + yi] = std::pow(sum, 1.0 / p);
    }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

Result<dnn::PoolDesc> pool_desc(const KernelCall& c, std::string_view op, const dnn::TensorDesc& xd) {
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    if (xd.rank() < 3) return invalid_argument("global pooling of a rank-" + std::to_string(xd.rank()) + " input");
    return dnn::PoolDesc::global(op == "GlobalMaxPool" ? dnn::PoolKind::kMax : dnn::PoolKind::kAvgIncludePad, xd);
  }
  dnn::PoolDesc p;
  p.kind = op == "MaxPool" ? dnn::PoolKind::kMax : c.attr_int("count_include_pad", 0) ? dnn::PoolKind::kAvgIncludePad : dnn::PoolKind::kAvgExcludePad;
  p.kernel = c.attr_ints("kernel_shape").value_or(Dims{});
  if (p.kernel.empty() || xd.rank() != static_cast<int>(p.kernel.size()) + 2) return invalid_argument("kernel_shape does not match the input's rank " + std::to_string(xd.rank()));
  const std::size_t n = p.kernel.size();
  p.stride = ints_or(c, "strides", n, 1);
  p.dilation = ints_or(c, "dilations", n, 1);
  p.ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  TESSERA_RETURN_IF_ERROR(spatial_pads(c, xd.dims, p.kernel, p.stride, p.dilation, p.pad_begin, p.pad_end));
  return p;
}

Status pool_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const bool cl = is_channels_last(c);
  const dnn::TensorDesc xd = logical_desc(c, x);
  const bool max = c.node.op_type == "MaxPool";
  TESSERA_ASSIGN_OR_RETURN(const dnn::PoolDesc p, pool_desc(c, c.node.op_type, xd));
  TESSERA_ASSIGN_OR_RETURN(const dnn::TensorDesc yd, dnn::pooling_output_desc(p, xd));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, cl ? channels_last_dims(yd.dims) : yd.dims, x.dtype()));
  const bool want_indices = max && c.out.size() > 1 && c.node.outputs[1] != graph::kNoValue;
  if (!want_indices) return dnn::pooling_forward(c.h, p, xd, x.data(), logical_desc(c, c.out[0]), c.out[0].data());
  if (cl) return unsupported("channels-last MaxPool with indices");
  if (c.attr_int("storage_order", 0) != 0) return unsupported("MaxPool indices in column-major storage order");
  TESSERA_ASSIGN_OR_RETURN(c.out[1], c.output(1, yd.dims, DType::kI64));
  auto* idx = c.out[1].data<std::int64_t>();
  TESSERA_RETURN_IF_ERROR(dnn::pooling_forward(c.h, p, desc(x), x.data(), desc(c.out[0]), c.out[0].data(), idx));
  // The primitive counts within each (n, c) plane; ONNX counts over the whole tensor.
  std::int64_t plane_in = 1, plane_out = 1;
  for (int i = 2; i < x.rank(); ++i) {
    plane_in *= x.shape()[i];
    plane_out *= yd.dims[static_cast<std::size_t>(i)];
  }
  for (std::int64_t i = 0, total = c.out[1].numel(); i < total; ++i) idx[i] += (i / std::max<std::int64_t>(plane_out, 1)) * plane_in;
  return Status::ok();
}

Status global_pool_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const bool cl = is_channels_last(c);
  const dnn::TensorDesc xd = logical_desc(c, x);
  TESSERA_ASSIGN_OR_RETURN(const dnn::PoolDesc p, pool_desc(c, c.node.op_type, xd));
  TESSERA_ASSIGN_OR_RETURN(const dnn::TensorDesc yd, dnn::pooling_output_desc(p, xd));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, cl ? channels_last_dims(yd.dims) : yd.dims, x.dtype()));
  return dnn::pooling_forward(c.h, p, xd, x.data(), logical_desc(c, c.out[0]), c.out[0].data());
}

// BatchNormalization. Inference: the given mean and variance. Training (training_mode, opset
// 14+): the batch's per-channel mean and (biased) variance from the dnn primitive (summed in a
// fixed order: the same bits for any thread count); outputs 1 and 2, when asked for, are the
// running statistics input * momentum + batch * (1 - momentum) (ONNX's convention). The layout
// pass's tessera:BatchNormalization (channels_last = 1) takes and gives [N, spatial..., C].
Status batch_norm_kernel(KernelCall& c) {
  const bool cl = is_channels_last(c);
  const bool training = c.attr_int("training_mode", 0) != 0;
  if (!training)
    for (std::size_t k = 1; k < c.out.size(); ++k)
      if (c.node.outputs[k] != graph::kNoValue) return unsupported("BatchNormalization's statistics outputs outside training mode");
  const Tensor& x = *c.input(0);
  if (x.rank() < 2) return invalid_argument("BatchNormalization of a rank-" + std::to_string(x.rank()) + " input");
  const std::int64_t channels = x.shape()[cl ? x.rank() - 1 : 1];
  Tensor p[4];
  for (std::size_t k = 0; k < 4; ++k) {
    const Tensor& t = *c.input(k + 1);
    if (t.numel() != channels) return invalid_argument("parameter " + std::to_string(k + 1) + " has " + std::to_string(t.numel()) + " values for " + std::to_string(channels) + " channels");
    TESSERA_ASSIGN_OR_RETURN(p[k], as_f32(c.h, t));
  }
  const float eps = c.attr_float("epsilon", 1e-5f);
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  const dnn::TensorDesc yd = logical_desc(c, c.out[0]);
  if (!training)
    return dnn::batch_norm_forward_inference(c.h, dnn::BatchNormMode::kSpatial, logical_desc(c, x), x.data(), p[0].data<float>(),
                                             p[1].data<float>(), p[2].data<float>(), p[3].data<float>(), eps, yd, c.out[0].data());
  if (x.dtype() != DType::kF32) return unsupported("BatchNormalization in training mode of " + std::string(dtype_name(x.dtype())) + " (f32 only)");
  TESSERA_ASSIGN_OR_RETURN(const Tensor xc, x.contiguous());  // as BatchNormGrad reads it: the same sums
  std::vector<float> mean, invstd;
  TESSERA_RETURN_IF_ERROR(batch_norm_training(c.h, logical_desc(c, xc), xc.data(), p[0].data<float>(), p[1].data<float>(), eps, yd,
                                              c.out[0].data(), mean, invstd));
  std::vector<float> var(mean.size());  // biased: 1/invstd^2 - eps
  for (std::size_t i = 0; i < var.size(); ++i) {
    const double s = 1.0 / static_cast<double>(invstd[i]);
    var[i] = static_cast<float>(std::max(0.0, s * s - static_cast<double>(eps)));
  }
  const float momentum = c.attr_float("momentum", 0.9f);
  for (std::size_t k = 1; k < 3 && k < c.out.size(); ++k) {
    if (c.node.outputs[k] == graph::kNoValue) continue;
    TESSERA_ASSIGN_OR_RETURN(c.out[k], c.output(k, {channels}, DType::kF32));
    const float* running = p[k + 1].data<float>();
    const std::vector<float>& batch = k == 1 ? mean : var;
    for (std::int64_t i = 0; i < channels; ++i)
      c.out[k].data<float>()[i] = running[i] * momentum + batch[static_cast<std::size_t>(i)] * (1 - momentum);
  }
  return Status::ok();
}

void softmax_f64(double* p, std::int64_t outer, std::int64_t n, std::int64_t inner, bool log) {
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double* row = p + o * n * inner + i;
      double mx = -INFINITY, sum = 0;
      for (std::int64_t k = 0; k < n; ++k) mx = std::max(mx, row[k * inner]);
      for (std::int64_t k = 0; k < n; ++k) sum += std::exp(row[k * inner] - mx);
      const double lse = mx + std::log(sum);
      for (std::int64_t k = 0; k < n; ++k) row[k * inner] = log ? row[k * inner] - lse : std::exp(row[k * inner] - lse);
    }
}

Status softmax_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const dnn::SoftmaxMode mode = c.node.op_type == "LogSoftmax" ? dnn::SoftmaxMode::kLogSoftmax : dnn::SoftmaxMode::kSoftmax;
  std::int64_t axis = c.attr_int("axis", c.opset >= 13 ? -1 : 1);
  if (axis < -x.rank() || axis >= std::max(x.rank(), 1)) return invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(x.rank()));
  if (axis < 0) axis += x.rank();
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  if (x.dtype() == DType::kF64) {  // the primitives take f32, f16 and bf16
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(c.out[0]), c.out[0].data()));
    std::int64_t outer = 1, n = 1, inner = 1;
    for (int i = 0; i < x.rank(); ++i) (i < axis ? outer : i == axis || c.opset < 13 ? n : inner) *= x.shape()[i];
    softmax_f64(c.out[0].data<double>(), outer, n, inner, mode == dnn::SoftmaxMode::kLogSoftmax);
    return Status::ok();
  }
  if (c.opset >= 13) return dnn::softmax_forward(c.h, mode, static_cast<int>(axis), desc(x), x.data(), desc(c.out[0]), c.out[0].data());
  // Before opset 13: over the 2-D view [prod(dims < axis), prod(dims >= axis)].
  std::int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= x.shape()[i];
  const std::int64_t inner = outer == 0 ? 0 : x.numel() / outer;
  TESSERA_ASSIGN_OR_RETURN(Tensor x2, reshaped(c.h, x, {outer, inner}));
  TESSERA_ASSIGN_OR_RETURN(Tensor y2, reshaped(c.h, c.out[0], {outer, inner}));
  return dnn::softmax_forward(c.h, mode, 1, desc(x2), x2.data(), desc(y2), y2.data());
}

Status matmul_kernel(KernelCall& c) {
  const Tensor &a = *c.input(0), &b = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(Dims dims, dnn::matmul_output_dims(a.shape().dims(), b.shape().dims()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, a.dtype()));
  return dnn::matmul(c.h, desc(a), a.data(), desc(b), b.data(), desc(c.out[0]), c.out[0].data());
}

// y = alpha op(A) op(B) + beta C, C broadcast to [M, N]: the product into the planned output,
// then the scaling and C added in place (the primitives allow y == x).
Status gemm_kernel(KernelCall& c) {
  const Tensor *a = c.input(0), *b = c.input(1);
  if (a->rank() != 2 || b->rank() != 2) return invalid_argument("Gemm needs 2-D A and B");
  Tensor at = *a, bt = *b;
  if (c.attr_int("transA", 0)) {
    TESSERA_ASSIGN_OR_RETURN(at, a->transpose(0, 1));
  }
  if (c.attr_int("transB", 0)) {
    TESSERA_ASSIGN_OR_RETURN(bt, b->transpose(0, 1));
  }
  TESSERA_ASSIGN_OR_RETURN(Dims dims, dnn::matmul_output_dims(at.shape().dims(), bt.shape().dims()));
  const Tensor* cin = c.input(2);
  const float beta = c.attr_float("beta", 1.0f);
  if (cin && beta != 0.0f) {
    TESSERA_ASSIGN_OR_RETURN(Dims bd, dnn::broadcast_dims(dims, cin->shape().dims()));
    if (bd != dims) return invalid_argument("C does not broadcast to the product's dims");
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, a->dtype()));
  Tensor& y = c.out[0];
  TESSERA_RETURN_IF_ERROR(dnn::matmul(c.h, desc(at), at.data(), desc(bt), bt.data(), desc(y), y.data()));
  // r = t * s (r may be t).
  auto scale = [&](const Tensor& t, float s, Tensor& r) -> Status {
    TESSERA_ASSIGN_OR_RETURN(Tensor f, Tensor::from_vector<float>(Shape{}, {s}));
    TESSERA_ASSIGN_OR_RETURN(Tensor k, new_tensor({}, t.dtype()));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(f), f.data(), desc(k), k.data()));
    return dnn::binary(c.h, dnn::BinaryOp::kMul, desc(t), t.data(), desc(k), k.data(), desc(r), r.data());
  };
  if (const float alpha = c.attr_float("alpha", 1.0f); alpha != 1.0f) TESSERA_RETURN_IF_ERROR(scale(y, alpha, y));
  if (cin && beta != 0.0f) {
    Tensor cs = *cin;
    if (beta != 1.0f) {
      TESSERA_ASSIGN_OR_RETURN(cs, new_tensor(cin->shape().dims(), cin->dtype()));
      TESSERA_RETURN_IF_ERROR(scale(*cin, beta, cs));
    }
    TESSERA_RETURN_IF_ERROR(dnn::binary(c.h, dnn::BinaryOp::kAdd, desc(y), y.data(), desc(cs), cs.data(), desc(y), y.data()));
  }
  return Status::ok();
}

}  // namespace tessera::exec::detail
