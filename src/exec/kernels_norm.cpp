// The executor's normalisation kernels beyond batch and layer norm: InstanceNormalization,
// GroupNormalization and LRN on the dnn primitives; RMSNormalization, LpNormalization and
// MeanVarianceNormalization as f64 reference kernels; PRelu on elementwise primitives.
#include <cmath>
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

// A per-channel parameter as f32 with `count` values: the tensor's own, or each of its values
// repeated `repeat` times (GroupNormalization-18's per-group scale and bias).
Result<Tensor> channel_param(KernelCall& c, const Tensor& t, std::int64_t count, std::int64_t repeat, const char* what) {
  if (t.numel() * repeat != count) return invalid_argument(std::string(what) + " has " + std::to_string(t.numel()) + " values, expected " + std::to_string(count / repeat));
  TESSERA_ASSIGN_OR_RETURN(Tensor f, as_f32(c.h, t));
  if (repeat == 1) return f;
  TESSERA_ASSIGN_OR_RETURN(Tensor r, new_tensor({count}, DType::kF32));
  for (std::int64_t i = 0; i < count; ++i) r.data<float>()[i] = f.data<float>()[i / repeat];
  return r;
}

}  // namespace

Status instance_group_norm_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  if (x.rank() < 3) return invalid_argument(c.node.op_type + " takes [N, C, ...], not rank " + std::to_string(x.rank()));
  const std::int64_t C = x.shape()[1];
  const bool instance = c.node.op_type == "InstanceNormalization";
  const std::int64_t groups = instance ? C : c.attr_int("num_groups", 0);
  if (groups <= 0 || C % groups != 0) return invalid_argument(std::to_string(C) + " channels do not split into " + std::to_string(groups) + " groups");
  const std::int64_t repeat = !instance && c.opset < 21 ? C / groups : 1;  // opset 18: per-group parameters
  TESSERA_ASSIGN_OR_RETURN(Tensor scale, channel_param(c, *c.input(1), C, repeat, "scale"));
  TESSERA_ASSIGN_OR_RETURN(Tensor bias, channel_param(c, *c.input(2), C, repeat, "bias"));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  const double eps = c.attr_float("epsilon", 1e-5f);
  return dnn::group_norm_forward(c.h, groups, desc(x), x.data(), scale.data<float>(), bias.data<float>(), eps, desc(c.out[0]),
                                 c.out[0].data(), nullptr, nullptr);
}

Status lrn_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  dnn::LrnDesc d;
  d.size = c.attr_int("size", 0);
  d.alpha = c.attr_float("alpha", 1e-4f);
  d.beta = c.attr_float("beta", 0.75f);
  d.k = c.attr_float("bias", 1.0f);
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  return dnn::lrn_forward(c.h, d, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

// y = x * slope where x < 0, else x; slope broadcasts to x.
Status prelu_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &slope = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(Tensor scaled, like(x, x.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::binary(c.h, dnn::BinaryOp::kMul, desc(x), x.data(), desc(slope), slope.data(), desc(scaled), scaled.data()));
  TESSERA_ASSIGN_OR_RETURN(Tensor zero, new_tensor({}, x.dtype()));
  std::memset(zero.data(), 0, zero.nbytes());
  TESSERA_ASSIGN_OR_RETURN(Tensor neg, like(x, DType::kBool));
  TESSERA_RETURN_IF_ERROR(dnn::binary(c.h, dnn::BinaryOp::kLess, desc(x), x.data(), desc(zero), zero.data(), desc(neg), neg.data()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  return dnn::where(c.h, desc(neg), neg.data(), desc(scaled), scaled.data(), desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

// RMSNormalization: y = x / sqrt(mean(x^2 over the dims from `axis` on) + epsilon) * scale.
Status rms_norm_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &scale = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", -1), x.rank(), "axis"));
  const double eps = c.attr_float("epsilon", 1e-5f);
  const Dims norm(x.shape().dims().begin() + axis, x.shape().dims().end());
  TESSERA_ASSIGN_OR_RETURN(Dims b, dnn::broadcast_dims(scale.shape().dims(), norm));
  if (b != norm) return invalid_argument("scale " + scale.shape().to_string() + " does not broadcast to the normalised dims");
  TESSERA_ASSIGN_OR_RETURN(Tensor s64, as_f64(c.h, scale));
  TESSERA_ASSIGN_OR_RETURN(Tensor s, new_tensor(norm, DType::kF64));
  TESSERA_RETURN_IF_ERROR(dnn::expand(c.h, desc(s64), s64.data(), desc(s), s.data()));
  TESSERA_ASSIGN_OR_RETURN(Tensor y, as_f64(c.h, x));
  const std::int64_t n = s.numel(), rows = n == 0 ? 0 : y.numel() / n;
  for (std::int64_t r = 0; r < rows; ++r) {
    double* p = y.data<double>() + r * n;
    double ss = 0;
    for (std::int64_t i = 0; i < n; ++i) ss += p[i] * p[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (std::int64_t i = 0; i < n; ++i) p[i] = p[i] * inv * s.data<double>()[i];
  }
  return from_f64(c.h, y, x.dtype(), c.out[0]);
}

// LpNormalization: y = x / (p-norm of x along `axis`), p 1 or 2; 0 where the norm is 0.
Status lp_norm_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", -1), x.rank(), "axis"));
  const std::int64_t p = c.attr_int("p", 2);
  if (p != 1 && p != 2) return invalid_argument("p = " + std::to_string(p) + " (1 or 2)");
  TESSERA_ASSIGN_OR_RETURN(Tensor y, as_f64(c.h, x));
  const auto [outer, n, inner] = split_at(x, axis);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double* q = y.data<double>() + o * n * inner + i;
      double norm = 0;
      for (std::int64_t k = 0; k < n; ++k) norm += p == 1 ? std::abs(q[k * inner]) : q[k * inner] * q[k * inner];
      if (p == 2) norm = std::sqrt(norm);
      for (std::int64_t k = 0; k < n; ++k) q[k * inner] = norm == 0 ? 0.0 : q[k * inner] / norm;
    }
  return from_f64(c.h, y, x.dtype(), c.out[0]);
}

// MeanVarianceNormalization: y = (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over `axes`.
Status mvn_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const Dims axes = c.attr_ints("axes").value_or(Dims{0, 2, 3});
  std::vector<int> ax;
  for (std::int64_t a : axes) {
    TESSERA_ASSIGN_OR_RETURN(const int v, norm_axis(a, x.rank(), "axis"));
    ax.push_back(v);
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor y, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc sd, dnn::reduce_output_desc(desc(y), ax, true));
  TESSERA_ASSIGN_OR_RETURN(Tensor mean, new_tensor(sd.dims, DType::kF64));
  TESSERA_ASSIGN_OR_RETURN(Tensor sq, new_tensor(sd.dims, DType::kF64));
  TESSERA_ASSIGN_OR_RETURN(Tensor x2, like(y, DType::kF64));
  TESSERA_RETURN_IF_ERROR(dnn::binary(c.h, dnn::BinaryOp::kMul, desc(y), y.data(), desc(y), y.data(), desc(x2), x2.data()));
  TESSERA_RETURN_IF_ERROR(dnn::reduce(c.h, dnn::ReduceOp::kMean, ax, true, desc(y), y.data(), desc(mean), mean.data()));
  TESSERA_RETURN_IF_ERROR(dnn::reduce(c.h, dnn::ReduceOp::kMean, ax, true, desc(x2), x2.data(), desc(sq), sq.data()));
  for (std::int64_t i = 0; i < sq.numel(); ++i) {  // sq becomes the divisor
    const double m = mean.data<double>()[i];
    sq.data<double>()[i] = std::sqrt(sq.data<double>()[i] - m * m) + 1e-9;
  }
  TESSERA_RETURN_IF_ERROR(dnn::binary(c.h, dnn::BinaryOp::kSub, desc(y), y.data(), desc(mean), mean.data(), desc(x2), x2.data()));
  TESSERA_RETURN_IF_ERROR(dnn::binary(c.h, dnn::BinaryOp::kDiv, desc(x2), x2.data(), desc(sq), sq.data(), desc(y), y.data()));
  return from_f64(c.h, y, x.dtype(), c.out[0]);
}

}  // namespace tessera::exec::detail
