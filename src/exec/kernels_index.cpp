// The executor's indexing and rearranging kernels: ArgMax/ArgMin, Hardmax, GatherElements,
// GatherND, Scatter/ScatterElements, ScatterND, OneHot, CumSum, TopK, DepthToSpace,
// SpaceToDepth, Resize/Upsample, Trilu, EyeLike, NonZero, Compress, Unique; and the rare elementwise
// ops computed through f64 (Acosh, Asinh, Atanh, Shrink, ThresholdedRelu, Swish, IsInf).
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

// y = f(x) elementwise through f64, y of x's dtype: for ops too rare to have a kernel of their
// own. Integers only where `integers` (f64 holds i8, u8 and i32 exactly).
Status map_f64(KernelCall& c, const std::function<double(double)>& f, bool integers = false) {
  const Tensor& x = *c.input(0);
  if (!is_floating(x.dtype()) && !integers) return unsupported(c.node.op_type + " of " + std::string(dtype_name(x.dtype())));
  TESSERA_ASSIGN_OR_RETURN(Tensor d, as_f64(c.h, x));
  double* p = d.data<double>();
  for (std::int64_t i = 0; i < d.numel(); ++i) p[i] = f(p[i]);
  return from_f64(c.h, d, x.dtype(), c.out[0]);
}

// Unique's keys: the slices along the axis (single elements without one) as values of T (f64
// for floats, i64 for integers, so comparisons are exact); NaN sorts last, equal to NaN.
template <typename T>
struct SliceLess {
  bool operator()(const std::vector<T>& a, const std::vector<T>& b) const {
    for (std::size_t i = 0; i < a.size(); ++i) {
      const bool an = a[i] != a[i], bn = b[i] != b[i];
      if (an || bn) {
        if (an != bn) return bn;
        continue;
      }
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return false;
  }
};

template <typename T>
Status unique_of(KernelCall& c, const Tensor& x, const Tensor& xv, std::int64_t outer, std::int64_t n, std::int64_t inner,
                 const std::optional<int>& axis) {
  const T* p = xv.data<T>();
  std::map<std::vector<T>, std::int64_t, SliceLess<T>> first;  // key -> its unique index in first-occurrence order
  std::vector<std::vector<T>> keys;
  std::vector<std::int64_t> firsts, counts, inverse(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    std::vector<T> key;
    key.reserve(static_cast<std::size_t>(outer * inner));
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) key.push_back(p[(o * n + k) * inner + i]);
    const auto [it, fresh] = first.emplace(key, static_cast<std::int64_t>(keys.size()));
    if (fresh) {
      keys.push_back(std::move(key));
      firsts.push_back(k);
      counts.push_back(0);
    }
    ++counts[static_cast<std::size_t>(it->second)];
    inverse[static_cast<std::size_t>(k)] = it->second;
  }
  // The order of Y: sorted (the map's) or first occurrence.
  const auto u = static_cast<std::int64_t>(keys.size());
  std::vector<std::int64_t> order, rank(static_cast<std::size_t>(u));
  if (c.attr_int("sorted", 1)) {
    for (const auto& [key, id] : first) order.push_back(id);
  } else {
    for (std::int64_t j = 0; j < u; ++j) order.push_back(j);
  }
  for (std::int64_t j = 0; j < u; ++j) rank[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])] = j;
  Dims ydims = {u};
  if (axis) {
    ydims = x.shape().dims();
    ydims[static_cast<std::size_t>(*axis)] = u;
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor packed, like(x, x.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(packed), packed.data()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, ydims, x.dtype()));
  const std::size_t es = x.element_size();
  const auto* src = static_cast<const std::byte*>(packed.data());
  auto* dst = static_cast<std::byte*>(c.out[0].data());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < u; ++j)
      std::memcpy(dst + static_cast<std::size_t>((o * u + j) * inner) * es,
                  src + static_cast<std::size_t>((o * n + firsts[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])]) * inner) * es,
                  static_cast<std::size_t>(inner) * es);
  std::vector<std::int64_t> idx, cnt, inv;
  for (std::int64_t j = 0; j < u; ++j) {
    idx.push_back(firsts[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])]);
    cnt.push_back(counts[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])]);
  }
  for (std::int64_t k = 0; k < n; ++k) inv.push_back(rank[static_cast<std::size_t>(inverse[static_cast<std::size_t>(k)])]);
  const std::vector<std::int64_t>* outs[] = {&idx, &inv, &cnt};
  for (std::size_t k = 1; k < 4 && k < c.out.size(); ++k) {
    TESSERA_ASSIGN_OR_RETURN(c.out[k], Tensor::from_vector<std::int64_t>(Shape{static_cast<std::int64_t>(outs[k - 1]->size())}, *outs[k - 1]));
  }
  return Status::ok();
}

}  // namespace

// Unique: the distinct elements (or slices along `axis`), sorted (the default) or in order of
// first occurrence, with each one's first index, every input's index into Y, and the counts.
Status unique_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  std::optional<int> axis;
  if (c.attr("axis")) {
    TESSERA_ASSIGN_OR_RETURN(axis, norm_axis(c.attr_int("axis", 0), x.rank(), "axis"));
  }
  const AxisSplit s = axis ? split_at(x, *axis) : AxisSplit{1, x.numel(), 1};
  const std::int64_t outer = s.outer, n = s.n, inner = s.inner;
  const bool floating = is_floating(x.dtype()) || is_small_float(x.dtype());
  TESSERA_ASSIGN_OR_RETURN(Tensor xv, like(x, floating ? DType::kF64 : DType::kI64));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(xv), xv.data()));
  return floating ? unique_of<double>(c, x, xv, outer, n, inner, axis) : unique_of<std::int64_t>(c, x, xv, outer, n, inner, axis);
}

Status rare_unary_kernel(KernelCall& c) {
  const std::string& op = c.node.op_type;
  if (op == "Acosh") return map_f64(c, [](double v) { return std::acosh(v); });
  if (op == "Asinh") return map_f64(c, [](double v) { return std::asinh(v); });
  if (op == "Atanh") return map_f64(c, [](double v) { return std::atanh(v); });
  if (op == "ThresholdedRelu") {
    const double alpha = c.attr_float("alpha", 1.0f);
    return map_f64(c, [alpha](double v) { return v > alpha ? v : 0.0; });
  }
  if (op == "Shrink") {
    const double lambd = c.attr_float("lambd", 0.5f), bias = c.attr_float("bias", 0.0f);
    return map_f64(c, [=](double v) { return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0; }, true);
  }
  if (op == "Swish") {
    const double alpha = c.attr_float("alpha", 1.0f);
    return map_f64(c, [alpha](double v) { return v / (1.0 + std::exp(-alpha * v)); });
  }
  return unsupported("no kernel for " + op);
}

Status is_inf_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const bool pos = c.attr_int("detect_positive", 1) != 0, neg = c.attr_int("detect_negative", 1) != 0;
  if (!is_floating(x.dtype())) return unsupported("IsInf of " + std::string(dtype_name(x.dtype())));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), DType::kBool));
  TESSERA_ASSIGN_OR_RETURN(Tensor d, as_f64(c.h, x));
  auto* y = c.out[0].data<bool>();
  const double* p = d.data<double>();
  for (std::int64_t i = 0; i < d.numel(); ++i) y[i] = std::isinf(p[i]) && (p[i] > 0 ? pos : neg);
  return Status::ok();
}

Status arg_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", 0), x.rank(), "axis"));
  const bool keep = c.attr_int("keepdims", 1) != 0;
  Dims dims = x.shape().dims();
  if (keep) dims[static_cast<std::size_t>(axis)] = 1;
  else dims.erase(dims.begin() + axis);
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, DType::kI64));
  return dnn::arg_reduce(c.h, c.node.op_type == "ArgMax", axis, keep, c.attr_int("select_last_index", 0) != 0, desc(x), x.data(),
                         desc(c.out[0]), c.out[0].data());
}

Status hardmax_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  if (c.opset < 13) return unsupported("Hardmax before opset 13 (the 2-D coercion)");
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", -1), x.rank(), "axis"));
  Dims idims = x.shape().dims();
  idims.erase(idims.begin() + axis);
  TESSERA_ASSIGN_OR_RETURN(Tensor idx, new_tensor(idims, DType::kI64));
  TESSERA_RETURN_IF_ERROR(dnn::arg_reduce(c.h, true, axis, false, false, desc(x), x.data(), desc(idx), idx.data()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  return dnn::one_hot(c.h, axis, x.shape()[axis], 0.0, 1.0, desc(idx), idx.data(), desc(c.out[0]), c.out[0].data());
}

Status gather_elements_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &idx = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", 0), x.rank(), "axis"));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, idx.shape().dims(), x.dtype()));
  return dnn::gather_elements(c.h, axis, desc(x), x.data(), desc(idx), idx.data(), desc(c.out[0]), c.out[0].data());
}

Status gather_nd_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &idx = *c.input(1);
  const std::int64_t b = c.attr_int("batch_dims", 0);
  if (idx.rank() < 1) return invalid_argument("GatherND's indices must have rank 1 or more");
  const std::int64_t k = idx.shape()[idx.rank() - 1];
  if (b < 0 || b + k > x.rank()) return invalid_argument("batch_dims " + std::to_string(b) + " and index length " + std::to_string(k) + " for rank " + std::to_string(x.rank()));
  Dims dims(idx.shape().dims().begin(), idx.shape().dims().end() - 1);
  for (int i = static_cast<int>(b + k); i < x.rank(); ++i) dims.push_back(x.shape()[i]);
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::gather_nd(c.h, static_cast<int>(b), desc(x), x.data(), desc(idx), idx.data(), desc(c.out[0]), c.out[0].data());
}

Status scatter_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &idx = *c.input(1), &upd = *c.input(2);
  const auto red = dnn::parse_scatter_reduce(c.attr_string("reduction", "none"));
  if (!red) return invalid_argument("reduction '" + c.attr_string("reduction", "") + "'");
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  if (c.node.op_type == "ScatterND")
    return dnn::scatter_nd(c.h, *red, desc(x), x.data(), desc(idx), idx.data(), desc(upd), upd.data(), desc(c.out[0]), c.out[0].data());
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", 0), x.rank(), "axis"));
  return dnn::scatter_elements(c.h, axis, *red, desc(x), x.data(), desc(idx), idx.data(), desc(upd), upd.data(), desc(c.out[0]),
                               c.out[0].data());
}

Status one_hot_kernel(KernelCall& c) {
  const Tensor &idx = *c.input(0), &depth_t = *c.input(1), &values = *c.input(2);
  TESSERA_ASSIGN_OR_RETURN(const double depth_d, scalar_value(c.h, depth_t, "depth"));
  const auto depth = static_cast<std::int64_t>(depth_d);
  if (depth < 1) return invalid_argument("depth " + std::to_string(depth) + " (must be positive)");
  if (values.numel() != 2) return invalid_argument("OneHot's values must hold [off, on]");
  TESSERA_ASSIGN_OR_RETURN(Tensor v, as_f64(c.h, values));
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", -1), idx.rank() + 1, "axis"));
  Dims dims = idx.shape().dims();
  dims.insert(dims.begin() + axis, depth);
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, values.dtype()));
  Tensor index = idx;
  if (!(idx.dtype() == DType::kI32 || idx.dtype() == DType::kI64)) {  // float indices: truncated
    TESSERA_ASSIGN_OR_RETURN(index, like(idx, DType::kI64));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(idx), idx.data(), desc(index), index.data()));
  }
  return dnn::one_hot(c.h, axis, depth, v.data<double>()[0], v.data<double>()[1], desc(index), index.data(), desc(c.out[0]),
                      c.out[0].data());
}

Status cumsum_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const double a, scalar_value(c.h, *c.input(1), "axis"));
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(static_cast<std::int64_t>(a), x.rank(), "axis"));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  return dnn::cumsum(c.h, axis, c.attr_int("exclusive", 0) != 0, c.attr_int("reverse", 0) != 0, desc(x), x.data(), desc(c.out[0]),
                     c.out[0].data());
}

Status top_k_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  std::int64_t k = c.attr_int("k", -1);
  if (c.opset >= 10) {
    TESSERA_ASSIGN_OR_RETURN(Dims kv, int_values(*c.input(1), "K"));
    if (kv.size() != 1) return invalid_argument("K must hold one value");
    k = kv[0];
  }
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", -1), x.rank(), "axis"));
  if (k < 0 || k > x.shape()[axis]) return invalid_argument("K = " + std::to_string(k) + " for an axis of " + std::to_string(x.shape()[axis]));
  Dims dims = x.shape().dims();
  dims[static_cast<std::size_t>(axis)] = k;
  TESSERA_ASSIGN_OR_RETURN(c.out[1], c.output(1, dims, DType::kI64));
  if (widened(x.dtype()) != x.dtype()) {
    TESSERA_ASSIGN_OR_RETURN(Tensor xw, widen(c.h, x, true, "X"));
    TESSERA_ASSIGN_OR_RETURN(Tensor yw, new_tensor(dims, xw.dtype()));
    TESSERA_RETURN_IF_ERROR(dnn::top_k(c.h, axis, k, c.attr_int("largest", 1) != 0, desc(xw), xw.data(), desc(yw), yw.data(),
                                       desc(c.out[1]), c.out[1].data()));
    TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
    return dnn::cast(c.h, desc(yw), yw.data(), desc(c.out[0]), c.out[0].data());
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::top_k(c.h, axis, k, c.attr_int("largest", 1) != 0, desc(x), x.data(), desc(c.out[0]), c.out[0].data(), desc(c.out[1]),
                    c.out[1].data());
}

Status depth_space_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const std::int64_t b = c.attr_int("blocksize", 0);
  if (x.rank() != 4) return invalid_argument(c.node.op_type + " takes a 4-D input, not rank " + std::to_string(x.rank()));
  if (b < 1) return invalid_argument("blocksize " + std::to_string(b));
  Dims d = x.shape().dims();
  const bool to_space = c.node.op_type == "DepthToSpace";
  if (to_space) {
    if (d[1] % (b * b) != 0) return invalid_argument(std::to_string(d[1]) + " channels do not divide by blocksize^2");
    d = {d[0], d[1] / (b * b), d[2] * b, d[3] * b};
  } else {
    if (d[2] % b != 0 || d[3] % b != 0) return invalid_argument("the spatial dims do not divide by blocksize");
    d = {d[0], d[1] * b * b, d[2] / b, d[3] / b};
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, d, x.dtype()));
  if (!to_space && c.attr_string("mode", "DCR") == "CRD") {  // channel c * b * b + i * b + j
    const Dims& xd = x.shape().dims();
    TESSERA_ASSIGN_OR_RETURN(Tensor split, reshaped(c.h, x, {xd[0], xd[1], xd[2] / b, b, xd[3] / b, b}));
    TESSERA_ASSIGN_OR_RETURN(Tensor moved, split.permute({0, 1, 3, 5, 2, 4}));
    TESSERA_ASSIGN_OR_RETURN(Tensor y, reshaped(c.h, c.out[0], {xd[0], xd[1], b, b, xd[2] / b, xd[3] / b}));
    return dnn::cast(c.h, desc(moved), moved.data(), desc(y), y.data());
  }
  if (to_space)
    return dnn::depth_to_space(c.h, b, c.attr_string("mode", "DCR") == "CRD", desc(x), x.data(), desc(c.out[0]), c.out[0].data());
  return dnn::space_to_depth(c.h, b, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

Status resize_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const int rank = x.rank();
  dnn::ResizeParams p;
  const std::string mode = c.attr_string("mode", "nearest");
  const auto m = dnn::parse_resize_mode(mode == "bilinear" ? "linear" : mode);
  if (!m) return invalid_argument("mode '" + mode + "'");
  p.mode = *m;
  std::vector<double> scales;
  Dims sizes;
  const bool upsample = c.node.op_type == "Upsample";
  if (upsample || c.opset < 11) {  // Upsample and Resize-10: scales only, asymmetric sampling
    p.coord = dnn::ResizeCoord::kAsymmetric;
    p.nearest = dnn::ResizeNearest::kFloor;
    if (const auto a = c.attr("scales")) {
      scales.assign(a->floats.begin(), a->floats.end());
    } else {
      TESSERA_ASSIGN_OR_RETURN(Tensor s, as_f64(c.h, *c.input(1)));
      scales.assign(s.data<double>(), s.data<double>() + s.numel());
    }
  } else {
    const std::string coord = c.attr_string("coordinate_transformation_mode", "half_pixel");
    if (coord == "tf_crop_and_resize") return unsupported("coordinate_transformation_mode tf_crop_and_resize");
    const auto ct = dnn::parse_resize_coord(coord);
    if (!ct) return invalid_argument("coordinate_transformation_mode '" + coord + "'");
    p.coord = *ct;
    const std::string nearest = c.attr_string("nearest_mode", "round_prefer_floor");
    const auto nm = dnn::parse_resize_nearest(nearest);
    if (!nm) return invalid_argument("nearest_mode '" + nearest + "'");
    p.nearest = *nm;
    p.cubic_a = c.attr_float("cubic_coeff_a", -0.75f);
    p.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
    if (c.attr_int("antialias", 0) != 0) return unsupported("Resize with antialias");
    const Tensor* st = c.input(2);
    const Tensor* zt = c.input(3);
    if (st && st->numel() > 0) {
      TESSERA_ASSIGN_OR_RETURN(Tensor s, as_f64(c.h, *st));
      scales.assign(s.data<double>(), s.data<double>() + s.numel());
    } else if (zt && zt->numel() > 0) {
      TESSERA_ASSIGN_OR_RETURN(sizes, int_values(*zt, "sizes"));
    } else {
      return invalid_argument("Resize needs scales or sizes");
    }
  }
  // The axes the scales or sizes give (all by default), expanded to every dim.
  Dims axes;
  if (const auto a = c.attr_ints("axes")) {
    for (std::int64_t v : *a) {
      TESSERA_ASSIGN_OR_RETURN(const int ax, norm_axis(v, rank, "axis"));
      axes.push_back(ax);
    }
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  const std::size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size()) return invalid_argument(std::to_string(given) + " scales or sizes for " + std::to_string(axes.size()) + " axes");
  Dims dims = x.shape().dims();
  p.scales.assign(static_cast<std::size_t>(rank), 1.0);
  if (!scales.empty()) {
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (!(scales[i] > 0)) return invalid_argument("scale " + std::to_string(scales[i]) + " (must be positive)");
      const auto ax = static_cast<std::size_t>(axes[i]);
      p.scales[ax] = scales[i];
      dims[ax] = static_cast<std::int64_t>(std::floor(static_cast<double>(dims[ax]) * scales[i]));
    }
  } else {
    const std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const auto ax = static_cast<std::size_t>(axes[i]);
        p.scales[ax] = static_cast<double>(sizes[i]) / static_cast<double>(dims[ax]);
        dims[ax] = sizes[i];
      }
    } else if (policy == "not_larger" || policy == "not_smaller") {
      double s = policy == "not_larger" ? INFINITY : 0.0;
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const double r = static_cast<double>(sizes[i]) / static_cast<double>(dims[static_cast<std::size_t>(axes[i])]);
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (std::int64_t ax : axes) {
        p.scales[static_cast<std::size_t>(ax)] = s;
        dims[static_cast<std::size_t>(ax)] = static_cast<std::int64_t>(std::floor(static_cast<double>(dims[static_cast<std::size_t>(ax)]) * s + 0.5));
      }
    } else {
      return invalid_argument("keep_aspect_ratio_policy '" + policy + "'");
    }
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::resize(c.h, p, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

Status trilu_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  if (x.rank() < 2) return invalid_argument("Trilu takes rank 2 or more");
  std::int64_t k = 0;
  if (c.input(1)) {
    TESSERA_ASSIGN_OR_RETURN(const double kv, scalar_value(c.h, *c.input(1), "k"));
    k = static_cast<std::int64_t>(kv);
  }
  const bool upper = c.attr_int("upper", 1) != 0;
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(c.out[0]), c.out[0].data()));
  const std::int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  const std::size_t es = dtype_size(x.dtype());
  auto* base = static_cast<std::byte*>(c.out[0].data());
  const std::int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  for (std::int64_t m = 0; m < mats; ++m)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        if (upper ? j - i < k : j - i > k) std::memset(base + static_cast<std::size_t>((m * rows + i) * cols + j) * es, 0, es);
  return Status::ok();
}

Status eye_like_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  if (x.rank() != 2) return invalid_argument("EyeLike takes a 2-D input");
  DType dt = x.dtype();
  if (const auto a = c.attr("dtype")) {
    const auto d = graph::to_dtype(static_cast<graph::ElemType>(a->i));
    if (!d) return unsupported("EyeLike of element type " + std::to_string(a->i));
    dt = *d;
  }
  const std::int64_t k = c.attr_int("k", 0), rows = x.shape()[0], cols = x.shape()[1];
  TESSERA_ASSIGN_OR_RETURN(Tensor d, like(x, DType::kF64));
  double* p = d.data<double>();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) p[i * cols + j] = j - i == k ? 1.0 : 0.0;
  return from_f64(c.h, d, dt, c.out[0]);
}

Status non_zero_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(Tensor b, like(x, DType::kBool));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(b), b.data()));
  const bool* nz = b.data<bool>();
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < b.numel(); ++i) count += nz[i];
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, {x.rank(), count}, DType::kI64));
  auto* y = c.out[0].data<std::int64_t>();
  std::int64_t j = 0;
  for (std::int64_t i = 0; i < b.numel(); ++i) {
    if (!nz[i]) continue;
    std::int64_t rest = i;
    for (int d = x.rank() - 1; d >= 0; --d) {
      y[d * count + j] = rest % x.shape()[d];
      rest /= x.shape()[d];
    }
    ++j;
  }
  return Status::ok();
}

Status compress_kernel(KernelCall& c) {
  Tensor x = *c.input(0);
  const Tensor& cond = *c.input(1);
  if (cond.rank() != 1) return invalid_argument("Compress's condition must be 1-D");
  int axis = 0;
  if (const auto a = c.attr("axis")) {
    TESSERA_ASSIGN_OR_RETURN(axis, norm_axis(a->i, x.rank(), "axis"));
  } else {
    TESSERA_ASSIGN_OR_RETURN(x, reshaped(c.h, x, {x.numel()}));
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor b, like(cond, DType::kBool));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(cond), cond.data(), desc(b), b.data()));
  const std::int64_t n = std::min(cond.numel(), x.shape()[axis]);
  Dims picked;
  for (std::int64_t i = 0; i < n; ++i)
    if (b.data<bool>()[i]) picked.push_back(i);
  TESSERA_ASSIGN_OR_RETURN(Tensor idx, Tensor::from_vector<std::int64_t>(Shape{static_cast<std::int64_t>(picked.size())}, picked));
  Dims dims = x.shape().dims();
  dims[static_cast<std::size_t>(axis)] = static_cast<std::int64_t>(picked.size());
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::gather(c.h, axis, desc(x), x.data(), desc(idx), idx.data(), desc(c.out[0]), c.out[0].data());
}

}  // namespace tessera::exec::detail
