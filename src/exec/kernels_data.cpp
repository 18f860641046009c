// The executor's data-movement and generator kernels: Slice, Split, Expand, Pad, Tile,
// ConstantOfShape, Range, and LayerNormalization.
#include <cmath>
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

// The values of an optional integer input, or `dflt` when it is left out.
Result<Dims> ints_or(const KernelCall& c, std::size_t k, const Dims& dflt, const char* what) {
  if (!c.input(k)) return dflt;
  return int_values(*c.input(k), what);
}


}  // namespace

Status slice_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  Dims starts, ends, steps;
  std::vector<int> axes;
  Dims axes64;
  if (c.opset < 10) {
    starts = c.attr_ints("starts").value_or(Dims{});
    ends = c.attr_ints("ends").value_or(Dims{});
    axes64 = c.attr_ints("axes").value_or(Dims{});
  } else {
    TESSERA_ASSIGN_OR_RETURN(starts, int_values(*c.input(1), "starts"));
    TESSERA_ASSIGN_OR_RETURN(ends, int_values(*c.input(2), "ends"));
    TESSERA_ASSIGN_OR_RETURN(axes64, ints_or(c, 3, {}, "axes"));
    TESSERA_ASSIGN_OR_RETURN(steps, ints_or(c, 4, {}, "steps"));
  }
  for (std::int64_t a : axes64) axes.push_back(static_cast<int>(a));
  TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, dnn::slice_output_desc(desc(x), starts, ends, axes, steps));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, yd.dims, x.dtype()));
  return dnn::slice(c.h, starts, ends, axes, steps, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

Status split_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::int64_t axis = c.attr_int("axis", 0);
  if (axis < -rank || axis >= rank) return invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  const std::int64_t len = x.shape()[static_cast<int>(axis)];
  Dims sizes;
  if (c.opset >= 13 && c.input(1)) {
    TESSERA_ASSIGN_OR_RETURN(sizes, int_values(*c.input(1), "split"));
  } else if (c.opset < 13) {
    sizes = c.attr_ints("split").value_or(Dims{});
  }
  const auto n = static_cast<std::int64_t>(c.out.size());
  if (sizes.empty()) {  // equal parts, the last smaller when the length does not divide
    const std::int64_t parts = c.attr_int("num_outputs", n);
    const std::int64_t each = (len + parts - 1) / parts;
    for (std::int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<std::int64_t>(0, std::min(each, len - i * each)));
  }
  if (static_cast<std::int64_t>(sizes.size()) != n) return invalid_argument(std::to_string(sizes.size()) + " parts for " + std::to_string(n) + " outputs");
  std::int64_t total = 0;
  for (std::int64_t s : sizes) total += s;
  if (total != len) return invalid_argument("the parts add up to " + std::to_string(total) + ", the axis has " + std::to_string(len));
  std::vector<dnn::TensorDesc> descs;
  std::vector<void*> ptrs;
  for (std::int64_t i = 0; i < n; ++i) {
    Dims dims = x.shape().dims();
    dims[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(i)];
    TESSERA_ASSIGN_OR_RETURN(c.out[static_cast<std::size_t>(i)], new_tensor(dims, x.dtype()));
    descs.push_back(desc(c.out[static_cast<std::size_t>(i)]));
    ptrs.push_back(c.out[static_cast<std::size_t>(i)].data());
  }
  return dnn::split(c.h, static_cast<int>(axis), desc(x), x.data(), descs, ptrs);
}

Status expand_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(Dims shape, int_values(*c.input(1), "shape"));
  TESSERA_ASSIGN_OR_RETURN(Dims dims, dnn::broadcast_dims(x.shape().dims(), shape));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::expand(c.h, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

Status pad_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const std::string mode_name = c.attr_string("mode", "constant");
  const std::optional<dnn::PadMode> mode = dnn::parse_pad_mode(mode_name);
  if (!mode) return invalid_argument("mode '" + mode_name + "'");
  Dims pads;
  double value = 0;
  if (c.opset < 11) {
    pads = c.attr_ints("pads").value_or(Dims{});
    value = c.attr_float("value", 0.0f);
  } else {
    TESSERA_ASSIGN_OR_RETURN(pads, int_values(*c.input(1), "pads"));
    if (const Tensor* v = c.input(2)) {
      TESSERA_ASSIGN_OR_RETURN(value, scalar_value(c.h, *v, "constant_value"));
    }
  }
  const int r = x.rank();
  if (const Tensor* a = c.input(3)) {  // opset 18: pads for these axes only
    TESSERA_ASSIGN_OR_RETURN(Dims axes, int_values(*a, "axes"));
    if (pads.size() != 2 * axes.size()) return invalid_argument("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    Dims full(2 * static_cast<std::size_t>(r), 0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::int64_t ax = axes[i] < 0 ? axes[i] + r : axes[i];
      if (ax < 0 || ax >= r) return invalid_argument("axis " + std::to_string(axes[i]) + " is out of range for rank " + std::to_string(r));
      full[static_cast<std::size_t>(ax)] = pads[i];
      full[static_cast<std::size_t>(ax + r)] = pads[i + axes.size()];
    }
    pads = std::move(full);
  }
  if (pads.size() != 2 * static_cast<std::size_t>(r)) return invalid_argument("pads has " + std::to_string(pads.size()) + " entries for rank " + std::to_string(r));
  Dims dims = x.shape().dims();
  for (int i = 0; i < r; ++i) dims[static_cast<std::size_t>(i)] += pads[static_cast<std::size_t>(i)] + pads[static_cast<std::size_t>(i + r)];
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::pad(c.h, *mode, pads, value, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

Status tile_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(Dims repeats, int_values(*c.input(1), "repeats"));
  if (static_cast<int>(repeats.size()) != x.rank()) return invalid_argument(std::to_string(repeats.size()) + " repeats for rank " + std::to_string(x.rank()));
  Dims dims = x.shape().dims();
  for (std::size_t i = 0; i < dims.size(); ++i) dims[i] *= repeats[i];
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::tile(c.h, repeats, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

Status constant_of_shape_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(Dims dims, int_values(*c.input(0), "shape"));
  Tensor value;
  if (const graph::Attribute* a = c.attr("value"); a && a->t) {
    TESSERA_ASSIGN_OR_RETURN(value, constant_tensor(*a->t, "value"));
    if (value.numel() != 1) return invalid_argument("value must hold one element");
  } else {
    TESSERA_ASSIGN_OR_RETURN(value, Tensor::zeros(Shape{}, DType::kF32));
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, value.dtype()));
  dnn::TensorDesc scalar{value.dtype(), Dims(dims.size(), 1), Dims(dims.size(), 0)};
  return dnn::expand(c.h, scalar, value.data(), desc(c.out[0]), c.out[0].data());
}

// Range(start, limit, delta): ceil((limit - start) / delta) elements, start + i * delta.
Status range_kernel(KernelCall& c) {
  const Tensor &t0 = *c.input(0), &t1 = *c.input(1), &t2 = *c.input(2);
  TESSERA_ASSIGN_OR_RETURN(const double start, scalar_value(c.h, t0, "start"));
  TESSERA_ASSIGN_OR_RETURN(const double limit, scalar_value(c.h, t1, "limit"));
  TESSERA_ASSIGN_OR_RETURN(const double delta, scalar_value(c.h, t2, "delta"));
  if (delta == 0) return invalid_argument("delta is 0");
  const double count = std::ceil((limit - start) / delta);
  if (!(count < 1e12)) return invalid_argument("Range of " + std::to_string(count) + " elements");
  const auto n = static_cast<std::int64_t>(std::max(0.0, count));
  TESSERA_ASSIGN_OR_RETURN(Tensor d, new_tensor({n}, DType::kF64));
  for (std::int64_t i = 0; i < n; ++i) d.data<double>()[i] = start + static_cast<double>(i) * delta;
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, {n}, t0.dtype()));
  return dnn::cast(c.h, desc(d), d.data(), desc(c.out[0]), c.out[0].data());
}

Status layer_norm_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  std::int64_t axis = c.attr_int("axis", -1);
  if (axis < -x.rank() || axis >= x.rank()) return invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(x.rank()));
  if (axis < 0) axis += x.rank();
  Tensor p[2];
  for (std::size_t k = 0; k < 2; ++k) {
    const Tensor* t = c.input(k + 1);
    if (!t) {
      if (k == 0) return invalid_argument("LayerNormalization needs a scale");
      continue;
    }
    // Scale and bias broadcast to the normalised dims: expanded and made f32.
    Dims norm(x.shape().dims().begin() + axis, x.shape().dims().end());
    TESSERA_ASSIGN_OR_RETURN(Dims b, dnn::broadcast_dims(t->shape().dims(), norm));
    if (b != norm) return invalid_argument("parameter " + std::to_string(k + 1) + " does not broadcast to the normalised dims");
    TESSERA_ASSIGN_OR_RETURN(p[k], new_tensor(norm, DType::kF32));
    TESSERA_ASSIGN_OR_RETURN(Tensor same, new_tensor(t->shape().dims(), DType::kF32));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(*t), t->data(), desc(same), same.data()));
    TESSERA_RETURN_IF_ERROR(dnn::expand(c.h, desc(same), same.data(), desc(p[k]), p[k].data()));
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  // Mean and InvStdDev (when asked for): f32, x's dims with the normalised ones 1.
  float* stats[2] = {nullptr, nullptr};
  Dims sdims = x.shape().dims();
  for (std::size_t i = static_cast<std::size_t>(axis); i < sdims.size(); ++i) sdims[i] = 1;
  for (std::size_t k = 1; k < 3 && k < c.out.size(); ++k) {
    if (c.node.outputs[k] == graph::kNoValue) continue;
    TESSERA_ASSIGN_OR_RETURN(c.out[k], c.output(k, sdims, DType::kF32));
    stats[k - 1] = c.out[k].data<float>();
  }
  return dnn::layer_norm_forward(c.h, static_cast<int>(axis), desc(x), x.data(), p[0].data<float>(),
                                 p[1].defined() ? p[1].data<float>() : nullptr, c.attr_float("epsilon", 1e-5f), desc(c.out[0]),
                                 c.out[0].data(), stats[0], stats[1]);
}

}  // namespace tessera::exec::detail
