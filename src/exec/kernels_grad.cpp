// The gradient ops autodiff (tessera/train.hpp) writes into backward graphs, in the domain
// "tessera", on the dnn backward primitives:
//   ConvGradData(dY, W, XShape) -> dX    Conv's attributes; XShape: X's dims (i64, as Shape gives)
//   ConvGradWeight(X, dY, WShape) -> dW  Conv's attributes; WShape: W's dims
//   PoolGrad(X, dY) -> dX            pool (MaxPool, AveragePool, GlobalAveragePool,
//                                    GlobalMaxPool) + that op's attributes
//   ActivationGrad(X, dY) -> dX      activation (an ONNX activation op), activation_alpha / _beta
//   SoftmaxCrossEntropyLossGrad(dLoss, Scores, Labels) -> dScores   reduction, ignore_index
//   BatchNormGrad(X, dY, Scale) -> dX, dScale, dBias   epsilon (BatchNormalization in training mode)
//   LayerNormGrad(X, dY, Scale, Mean, InvStdDev) -> dX, dScale, dBias   axis (non-negative)
//   InstanceNormGrad(X, dY, Scale) -> dX, dScale, dBias   epsilon
//   GatherGrad(dY, Indices, XShape) -> dX   axis
//   NLLLossGrad(dLoss, X, Target) -> dX   reduction, ignore_index (NegativeLogLikelihoodLoss)
// All f32.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "kernels.hpp"
#include "tessera/dnn/training.hpp"

namespace tessera::exec::detail {
namespace {

Status f32_only(const KernelCall& c) {
  for (const Tensor* t : c.in)
    if (t && t->dtype() != DType::kF32 && t->dtype() != DType::kI64) return unsupported(c.node.op_type + " of " + std::string(dtype_name(t->dtype())));
  return Status::ok();
}

// Input k: a 1-D i64 tensor of `rank` dims, none negative.
Result<std::vector<std::int64_t>> dims_input(const KernelCall& c, std::size_t k, int rank) {
  const Tensor* t = c.input(k);
  if (!t || t->dtype() != DType::kI64 || t->rank() != 1 || t->numel() != rank)
    return invalid_argument(c.node.op_type + ": input " + std::to_string(k) + " must hold " + std::to_string(rank) + " dims (i64)");
  std::vector<std::int64_t> d(t->data<std::int64_t>(), t->data<std::int64_t>() + rank);
  for (std::int64_t v : d)
    if (v < 0) return invalid_argument(c.node.op_type + ": input " + std::to_string(k) + " has a negative dim");
  return d;
}

// A normalisation's dScale and dBias: made in scratch of the scale's dims, then copied to the
// node's outputs 1 and 2 where they are asked for.
struct NormParamGrads {
  Tensor ds, db;
  static Result<NormParamGrads> make(const Shape& scale) {
    NormParamGrads g;
    TESSERA_ASSIGN_OR_RETURN(g.ds, Tensor::empty(scale, DType::kF32));
    TESSERA_ASSIGN_OR_RETURN(g.db, Tensor::empty(scale, DType::kF32));
    return g;
  }
  Status put(KernelCall& c) const {
    for (std::size_t k = 1; k < 3 && k < c.out.size(); ++k) {
      if (c.node.outputs[k] == graph::kNoValue) continue;
      const Tensor& from = k == 1 ? ds : db;
      TESSERA_ASSIGN_OR_RETURN(c.out[k], c.output(k, from.shape().dims(), DType::kF32));
      std::memcpy(c.out[k].data(), from.data(), from.nbytes());
    }
    return Status::ok();
  }
};

}  // namespace

// The layout pass's channels-last gradients (channels_last = 1): activations [N, spatial..., C];
// the dims inputs stay [N, C, spatial...], as the weights do.
Status conv_grad_data_kernel(KernelCall& c) {
  TESSERA_RETURN_IF_ERROR(f32_only(c));
  const bool cl = is_channels_last(c);
  const Tensor &dy = *c.input(0), &w = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> xdims, dims_input(c, 2, dy.rank()));
  TESSERA_ASSIGN_OR_RETURN(const dnn::ConvDesc d, conv_desc(c, xdims, w.shape().dims()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, cl ? channels_last_dims(xdims) : xdims, DType::kF32));
  const dnn::TensorDesc dyd = logical_desc(c, dy), dxd = logical_desc(c, c.out[0]);
  name_immediate_conv(c, dnn::ConvDir::kBackwardData, d, dxd, desc(w), dyd);
  return dnn::conv_backward_data(c.h, d, desc(w), w.data(), dyd, dy.data(), dxd, c.out[0].data());
}

Status conv_grad_weight_kernel(KernelCall& c) {
  TESSERA_RETURN_IF_ERROR(f32_only(c));
  const Tensor &x = *c.input(0), &dy = *c.input(1);
  const dnn::TensorDesc xd = logical_desc(c, x), dyd = logical_desc(c, dy);
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> wdims, dims_input(c, 2, x.rank()));
  TESSERA_ASSIGN_OR_RETURN(const dnn::ConvDesc d, conv_desc(c, xd.dims, wdims));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, wdims, DType::kF32));
  name_immediate_conv(c, dnn::ConvDir::kBackwardWeights, d, xd, desc(c.out[0]), dyd);
  return dnn::conv_backward_weights(c.h, d, xd, x.data(), dyd, dy.data(), desc(c.out[0]), c.out[0].data());
}

Status pool_grad_kernel(KernelCall& c) {
  TESSERA_RETURN_IF_ERROR(f32_only(c));
  const Tensor &x = *c.input(0), &dy = *c.input(1);
  const dnn::TensorDesc xd = logical_desc(c, x), dyd = logical_desc(c, dy);
  TESSERA_ASSIGN_OR_RETURN(const dnn::PoolDesc p, pool_desc(c, c.attr_string("pool", ""), xd));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kF32));
  return dnn::pooling_backward(c.h, p, xd, x.data(), nullptr, dyd, dy.data(), logical_desc(c, c.out[0]), c.out[0].data());
}

Status activation_grad_kernel(KernelCall& c) {
  TESSERA_RETURN_IF_ERROR(f32_only(c));
  const Tensor &x = *c.input(0), &dy = *c.input(1);
  const std::string op = c.attr_string("activation", "");
  const std::optional<dnn::Activation> a = onnx_activation(op, c.attr_float("activation_alpha", 0), c.attr_float("activation_beta", 0));
  if (!a) return invalid_argument("ActivationGrad: '" + op + "' is not an activation");
  if (dy.shape().dims() != x.shape().dims()) return invalid_argument("ActivationGrad: dY " + dy.shape().to_string() + " is not X's " + x.shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kF32));
  if (x.rank() == 0) {
    const dnn::TensorDesc one{DType::kF32, {1}, {1}};
    return dnn::activation_backward(c.h, *a, one, x.data(), one, dy.data(), one, c.out[0].data());
  }
  return dnn::activation_backward(c.h, *a, desc(x), x.data(), desc(dy), dy.data(), desc(c.out[0]), c.out[0].data());
}

// BatchNormGrad(X, dY, scale) -> dX, dScale, dBias of BatchNormalization in training mode: the
// batch's statistics recomputed from X (as the forward kernel computes them), then the dnn
// primitive's backward pass.
Status batch_norm_grad_kernel(KernelCall& c) {
  TESSERA_RETURN_IF_ERROR(f32_only(c));
  const bool cl = is_channels_last(c);
  const Tensor &x = *c.input(0), &dy = *c.input(1), &scale = *c.input(2);
  if (x.rank() < 2 || dy.shape().dims() != x.shape().dims())
    return invalid_argument("BatchNormGrad: X " + x.shape().to_string() + " and dY " + dy.shape().to_string() + " must be equal and of rank 2 or more");
  const std::int64_t channels = x.shape()[cl ? x.rank() - 1 : 1];
  if (scale.numel() != channels) return invalid_argument("BatchNormGrad: " + std::to_string(scale.numel()) + " scales for " + std::to_string(channels) + " channels");
  TESSERA_ASSIGN_OR_RETURN(const Tensor xc, x.contiguous());
  TESSERA_ASSIGN_OR_RETURN(const Tensor sc, scale.contiguous());
  // The forward's statistics again (its output into dX's memory, overwritten below).
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kF32));
  const dnn::TensorDesc xd = logical_desc(c, xc), dxd = logical_desc(c, c.out[0]);
  std::vector<float> mean, invstd, zero(static_cast<std::size_t>(channels), 0.0f);
  TESSERA_RETURN_IF_ERROR(batch_norm_training(c.h, xd, xc.data(), sc.data<float>(), zero.data(), c.attr_float("epsilon", 1e-5f), dxd, c.out[0].data(), mean, invstd));
  TESSERA_ASSIGN_OR_RETURN(const NormParamGrads g, NormParamGrads::make(scale.shape()));
  TESSERA_RETURN_IF_ERROR(dnn::batch_norm_backward(c.h, dnn::BatchNormMode::kSpatial, xd, xc.data(), logical_desc(c, dy), dy.data(), sc.data<float>(), mean.data(),
                                                   invstd.data(), dxd, c.out[0].data(), g.ds.data<float>(), g.db.data<float>()));
  return g.put(c);
}

// LayerNormGrad(X, dY, scale, mean, invstd) -> dX, dScale, dBias over the dims from `axis` on:
// the statistics the forward node gave, then the dnn primitive's backward pass.
Status layer_norm_grad_kernel(KernelCall& c) {
  TESSERA_RETURN_IF_ERROR(f32_only(c));
  const Tensor &x = *c.input(0), &dy = *c.input(1), &scale = *c.input(2), &mean = *c.input(3), &invstd = *c.input(4);
  const std::int64_t axis = c.attr_int("axis", -1);
  if (axis < 0 || axis >= x.rank() || dy.shape().dims() != x.shape().dims())
    return invalid_argument("LayerNormGrad: X " + x.shape().to_string() + ", dY " + dy.shape().to_string() + " and axis " + std::to_string(axis));
  const std::int64_t rows = x.numel() / std::max<std::int64_t>(scale.numel(), 1);
  if (mean.numel() != rows || invstd.numel() != rows || scale.numel() * rows != x.numel())
    return invalid_argument("LayerNormGrad: the scale and statistics do not fit X " + x.shape().to_string());
  Tensor in[5];
  for (std::size_t k = 0; k < 5; ++k) {
    TESSERA_ASSIGN_OR_RETURN(in[k], c.input(k)->contiguous());
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kF32));
  TESSERA_ASSIGN_OR_RETURN(const NormParamGrads g, NormParamGrads::make(scale.shape()));
  TESSERA_RETURN_IF_ERROR(dnn::layer_norm_backward(c.h, static_cast<int>(axis), desc(in[0]), in[0].data(), desc(in[1]), in[1].data(), in[2].data<float>(),
                                                   in[3].data<float>(), in[4].data<float>(), desc(c.out[0]), c.out[0].data(), g.ds.data<float>(), g.db.data<float>()));
  return g.put(c);
}

// GatherGrad(dY, Indices, XShape) {axis} -> dX: zeros of X's dims with each slice of dY added
// at its index (negative indices count from the end; repeated ones accumulate, in order).
Status gather_grad_kernel(KernelCall& c) {
  const Tensor &dy = *c.input(0), &idx = *c.input(1);
  if (dy.dtype() != DType::kF32) return unsupported("GatherGrad of " + std::string(dtype_name(dy.dtype())));
  const Tensor* shape = c.input(2);
  if (!shape || shape->dtype() != DType::kI64 || shape->rank() != 1) return invalid_argument("GatherGrad: input 2 must hold X's dims (i64)");
  const std::vector<std::int64_t> xd(shape->data<std::int64_t>(), shape->data<std::int64_t>() + shape->numel());
  const auto rank = static_cast<std::int64_t>(xd.size());
  std::int64_t axis = c.attr_int("axis", 0);
  if (axis < -rank || axis >= rank) return invalid_argument("GatherGrad: axis " + std::to_string(axis) + " for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < rank; ++k) (k < axis ? outer : inner) *= k == axis ? 1 : xd[static_cast<std::size_t>(k)];
  const std::int64_t n = xd[static_cast<std::size_t>(axis)], count = idx.numel();
  if (dy.numel() != outer * count * inner) return invalid_argument("GatherGrad: dY " + dy.shape().to_string() + " does not fit X's dims and the indices");
  TESSERA_ASSIGN_OR_RETURN(const Tensor dyc, dy.contiguous());
  TESSERA_ASSIGN_OR_RETURN(const Tensor ic, as_i64(c.h, idx));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, xd, DType::kF32));
  float* dx = c.out[0].data<float>();
  std::fill(dx, dx + c.out[0].numel(), 0.0f);
  const float* g = dyc.data<float>();
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < count; ++j) {
      std::int64_t at = ic.data<std::int64_t>()[j];
      if (at < -n || at >= n) return invalid_argument("GatherGrad: index " + std::to_string(at) + " is out of range for " + std::to_string(n));
      if (at < 0) at += n;
      float* to = dx + (o * n + at) * inner;
      const float* from = g + (o * count + j) * inner;
      for (std::int64_t k = 0; k < inner; ++k) to[k] += from[k];
    }
  return Status::ok();
}

// The class losses' backward parameters as their forward (kernels_loss.cpp) reads the node:
// without ignore_index no label is ignored (the one i64 no valid label holds), and ONNX's
// mean over every sample (ignore_index -1, no weights: the gradient nodes take none) is the
// sum's gradient with dLoss divided by N * d1 * ...
struct ClassLossGrad {
  dnn::ClassLossParams p;
  Tensor dloss;
  static Result<ClassLossGrad> make(KernelCall& c, dnn::LossReduction r, const Tensor& x, const Tensor& dloss) {
    ClassLossGrad g;
    g.p.reduction = r;
    g.p.ignore_index = c.attr_int("ignore_index", std::numeric_limits<std::int64_t>::min());
    g.dloss = dloss;
    const std::int64_t samples = x.rank() < 2 || x.shape()[1] == 0 ? 0 : x.numel() / x.shape()[1];
    if (r == dnn::LossReduction::kMean && g.p.ignore_index == -1 && samples > 0 && dloss.numel() == 1) {
      g.p.reduction = dnn::LossReduction::kSum;
      TESSERA_ASSIGN_OR_RETURN(const Tensor d, dloss.contiguous());
      TESSERA_ASSIGN_OR_RETURN(g.dloss, Tensor::from_vector<float>(dloss.shape(), {d.data<float>()[0] / static_cast<float>(samples)}));
    }
    return g;
  }
};

// NLLLossGrad(dLoss, X, Target) {reduction, ignore_index} -> dX of NegativeLogLikelihoodLoss
// (no class weights): X [N, C, d...], Target [N, d...]; -dLoss at each target class (over the
// count of targets not ignored for "mean"), zero elsewhere: dnn::nll_loss_backward.
Status nll_loss_grad_kernel(KernelCall& c) {
  const Tensor &dl = *c.input(0), &x = *c.input(1), &t = *c.input(2);
  if (dl.dtype() != DType::kF32 || x.dtype() != DType::kF32) return unsupported("NLLLossGrad of non-f32 input");
  if (x.rank() < 2 || t.rank() != x.rank() - 1) return invalid_argument("NLLLossGrad: X " + x.shape().to_string() + " and target " + t.shape().to_string());
  const std::optional<dnn::LossReduction> r = dnn::parse_loss_reduction(c.attr_string("reduction", "mean"));
  if (!r) return invalid_argument("NLLLossGrad: reduction '" + c.attr_string("reduction", "mean") + "'");
  TESSERA_ASSIGN_OR_RETURN(const ClassLossGrad g, ClassLossGrad::make(c, *r, x, dl));
  TESSERA_ASSIGN_OR_RETURN(const Tensor tc, as_i64(c.h, t));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kF32));
  return dnn::nll_loss_backward(c.h, g.p, desc(x), desc(tc), tc.data(), desc(g.dloss), g.dloss.data(), desc(c.out[0]), c.out[0].data());
}

// InstanceNormGrad(X, dY, Scale) {epsilon} -> dX, dScale, dBias: the statistics recomputed by
// the forward primitive, then its backward pass.
Status instance_norm_grad_kernel(KernelCall& c) {
  TESSERA_RETURN_IF_ERROR(f32_only(c));
  const Tensor &x = *c.input(0), &dy = *c.input(1), &scale = *c.input(2);
  if (x.rank() < 3 || dy.shape().dims() != x.shape().dims() || scale.numel() != x.shape()[1])
    return invalid_argument("InstanceNormGrad: X " + x.shape().to_string() + ", dY " + dy.shape().to_string() + " and scale " + scale.shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(const Tensor xc, x.contiguous());
  TESSERA_ASSIGN_OR_RETURN(const Tensor sc, scale.contiguous());
  const std::int64_t channels = x.shape()[1], stats = x.shape()[0] * channels;
  std::vector<float> mean(static_cast<std::size_t>(stats)), invstd(mean.size()), zero(static_cast<std::size_t>(channels), 0.0f);
  TESSERA_ASSIGN_OR_RETURN(Tensor y, Tensor::empty(x.shape(), DType::kF32));
  TESSERA_RETURN_IF_ERROR(dnn::instance_norm_forward(c.h, desc(xc), xc.data(), sc.data<float>(), zero.data(), c.attr_float("epsilon", 1e-5f), desc(y), y.data(),
                                                     mean.data(), invstd.data()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kF32));
  TESSERA_ASSIGN_OR_RETURN(const NormParamGrads g, NormParamGrads::make(scale.shape()));
  TESSERA_RETURN_IF_ERROR(dnn::instance_norm_backward(c.h, desc(xc), xc.data(), desc(dy), dy.data(), sc.data<float>(), mean.data(), invstd.data(), desc(c.out[0]),
                                                      c.out[0].data(), g.ds.data<float>(), g.db.data<float>()));
  return g.put(c);
}

Status softmax_cross_entropy_grad_kernel(KernelCall& c) {
  const Tensor &dloss = *c.input(0), &x = *c.input(1), &labels = *c.input(2);
  if (dloss.dtype() != DType::kF32 || x.dtype() != DType::kF32) return unsupported("SoftmaxCrossEntropyLossGrad of non-f32 scores");
  const std::optional<dnn::LossReduction> r = dnn::parse_loss_reduction(c.attr_string("reduction", "mean"));
  if (!r) return invalid_argument("SoftmaxCrossEntropyLossGrad: reduction '" + c.attr_string("reduction", "mean") + "'");
  TESSERA_ASSIGN_OR_RETURN(const ClassLossGrad g, ClassLossGrad::make(c, *r, x, dloss));
  TESSERA_ASSIGN_OR_RETURN(Tensor l, as_i64(c.h, labels));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kF32));
  return dnn::softmax_cross_entropy_backward(c.h, g.p, desc(x), x.data(), desc(l), l.data(), desc(g.dloss), g.dloss.data(), desc(c.out[0]), c.out[0].data());
}

}  // namespace tessera::exec::detail
