// ONNX QuantizeLinear and DequantizeLinear for ONNX's integer types from 2 to 32 bits and the
// small floats (f8, f4e2m1): per-tensor, per-axis and blocked (block_size) scales and zero points.
//   quantize:   y = saturate(round_half_even(x / scale) + zero_point), y of the zero point's
//               dtype (or output_dtype; u8 by default)
//   dequantize: y = (x - zero_point) * scale, y of the scale's dtype (or output_dtype)
// The quotient and the product are rounded to f32 as ONNX's f32 arithmetic does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels.hpp"
#include "tessera/core/float8.hpp"

namespace tessera::exec::detail {
namespace {

// Where the parameter of element (o, k, i) of x viewed as [outer, n, inner] along `axis` is.
struct ParamIndex {
  std::int64_t outer = 1, n = 1, inner = 1, block = 0, blocks = 1;
  bool scalar = true;
  std::int64_t at(std::int64_t o, std::int64_t k, std::int64_t i) const {
    if (scalar) return 0;
    if (block == 0) return k;
    return (o * blocks + k / block) * inner + i;
  }
};

Result<ParamIndex> param_index(const KernelCall& c, const Tensor& x, const Tensor& scale) {
  ParamIndex p;
  if (scale.numel() == 1 && scale.rank() <= 1 && c.attr_int("block_size", 0) == 0) {
    p.n = x.numel();
    return p;
  }
  p.scalar = false;
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", 1), x.rank(), "axis"));
  for (int d = 0; d < x.rank(); ++d) (d < axis ? p.outer : d == axis ? p.n : p.inner) *= x.shape()[d];
  p.block = c.attr_int("block_size", 0);
  if (p.block < 0) return invalid_argument("block_size " + std::to_string(p.block));
  if (p.block == 0) {
    if (scale.rank() != 1 || scale.numel() != p.n) return invalid_argument("the scale has dims " + scale.shape().to_string() + " for an axis of " + std::to_string(p.n));
    return p;
  }
  p.blocks = (p.n + p.block - 1) / p.block;
  if (scale.numel() != p.outer * p.blocks * p.inner) return invalid_argument("the blocked scale has dims " + scale.shape().to_string());
  return p;
}

// y = f(x, scale, zero point) per element, through f64 (zero point 0 when left out), into
// c.out[0] of dtype `to`.
template <typename F>
Status per_element(KernelCall& c, DType to, F f) {
  const Tensor &x = *c.input(0), &scale_t = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(const ParamIndex pi, param_index(c, x, scale_t));
  TESSERA_ASSIGN_OR_RETURN(Tensor xv, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor sv, as_f64(c.h, scale_t));
  Tensor zv;
  if (const Tensor* zp_t = c.input(2)) {
    TESSERA_ASSIGN_OR_RETURN(zv, as_f64(c.h, *zp_t));
  }
  double* p = xv.data<double>();
  for (std::int64_t o = 0; o < pi.outer; ++o)
    for (std::int64_t k = 0; k < pi.n; ++k)
      for (std::int64_t i = 0; i < pi.inner; ++i) {
        const std::int64_t at = pi.at(o, k, i);
        double& v = p[(o * pi.n + k) * pi.inner + i];
        v = f(v, sv.data<double>()[at], zv.defined() ? zv.data<double>()[at] : 0.0);
      }
  return from_f64(c.h, xv, to, c.out[0]);
}

std::optional<DType> output_dtype(const KernelCall& c) {
  const graph::Attribute* a = c.attr("output_dtype");
  if (!a || a->i == 0) return std::nullopt;
  return graph::to_dtype(static_cast<graph::ElemType>(a->i));
}

}  // namespace

Status quantize_kernel(KernelCall& c) {
  const Tensor* zp_t = c.input(2);
  DType to = zp_t ? zp_t->dtype() : output_dtype(c).value_or(DType::kU8);
  if (c.attr("output_dtype") && !output_dtype(c)) return unsupported("QuantizeLinear to element type " + std::to_string(c.attr_int("output_dtype", 0)));
  if (const std::optional<Float8> f8 = float8_of(to); f8 || to == DType::kF4E2M1) {
    // 8- and 4-bit floats: x / scale + zero point, in f32, converted (not rounded to an
    // integer); `saturate` (default 1) as in Cast (f4e2m1 always saturates).
    const bool saturate = c.attr_int("saturate", 1) != 0;
    TESSERA_RETURN_IF_ERROR(per_element(c, DType::kF32, [](double v, double scale, double zp) {
      return static_cast<double>(static_cast<float>(v / scale) + static_cast<float>(zp));
    }));
    const Tensor f = c.out[0];
    TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, f.shape().dims(), to));
    auto* y = static_cast<std::uint8_t*>(c.out[0].data());
    for (std::int64_t i = 0; i < f.numel(); ++i) {
      const float v = f.data<float>()[i];
      y[i] = f8 ? f32_to_f8_bits(v, *f8, saturate) : f32_to_f4e2m1_bits(v);
    }
    return Status::ok();
  }
  double lo = 0, hi = 0;
  switch (to) {
    case DType::kU8: hi = 255; break;
    case DType::kI8: lo = -128, hi = 127; break;
    case DType::kU16: hi = 65535; break;
    case DType::kI16: lo = -32768, hi = 32767; break;
    case DType::kI32: lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max(); break;
    case DType::kU4: hi = 15; break;
    case DType::kI4: lo = -8, hi = 7; break;
    case DType::kU2: hi = 3; break;
    case DType::kI2: lo = -2, hi = 1; break;
    default: return unsupported("QuantizeLinear to " + std::string(dtype_name(to)));
  }
  return per_element(c, to, [lo, hi](double v, double scale, double zp) {
    return std::clamp(std::nearbyint(static_cast<double>(static_cast<float>(v / scale))) + zp, lo, hi);
  });
}

Status dequantize_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &scale_t = *c.input(1);
  const Tensor* zp_t = c.input(2);
  if (!is_integer(x.dtype()) && !is_small_float(x.dtype()))
    return unsupported("DequantizeLinear of " + std::string(dtype_name(x.dtype())));
  if (zp_t && zp_t->dtype() != x.dtype()) return invalid_argument("the zero point's dtype differs from x's");
  if (c.attr("output_dtype") && !output_dtype(c)) return unsupported("DequantizeLinear to element type " + std::to_string(c.attr_int("output_dtype", 0)));
  const DType to = output_dtype(c).value_or(scale_t.dtype());
  return per_element(c, to, [](double v, double scale, double zp) {
    return static_cast<double>(static_cast<float>(v - zp) * static_cast<float>(scale));
  });
}

// DynamicQuantizeLinear: u8 with scale (max(0, max x) - min(0, min x)) / 255 and zero point
// round(-min(0, min x) / scale) clamped to [0, 255]; x = 0 quantises exactly.
Status dynamic_quantize_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  if (x.dtype() != DType::kF32) return invalid_argument("DynamicQuantizeLinear takes f32, not " + std::string(dtype_name(x.dtype())));
  TESSERA_ASSIGN_OR_RETURN(Tensor xv, as_f64(c.h, x));
  double* p = xv.data<double>();
  float lo = 0, hi = 0;
  for (std::int64_t i = 0; i < xv.numel(); ++i) {
    lo = std::min(lo, static_cast<float>(p[i]));
    hi = std::max(hi, static_cast<float>(p[i]));
  }
  const float scale = (hi - lo) / 255.0f;
  const float zp = scale == 0 ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
  for (std::int64_t i = 0; i < xv.numel(); ++i)
    p[i] = std::clamp(static_cast<double>(std::nearbyint(static_cast<float>(p[i]) / scale)) + zp, 0.0, 255.0);
  if (scale == 0)
    for (std::int64_t i = 0; i < xv.numel(); ++i) p[i] = 0;
  TESSERA_RETURN_IF_ERROR(from_f64(c.h, xv, DType::kU8, c.out[0]));
  TESSERA_ASSIGN_OR_RETURN(c.out[1], Tensor::from_vector<float>(Shape{}, {scale}));
  TESSERA_ASSIGN_OR_RETURN(c.out[2], Tensor::from_vector<std::uint8_t>(Shape{}, {static_cast<std::uint8_t>(zp)}));
  return Status::ok();
}

}  // namespace tessera::exec::detail
