// The reductions' entry points (reduce, arg_reduce, reduce_output_desc): argument checks, then
// the fast walks of impls.cpp (reduce_impl::run) or, for arg max / min, the reference walk.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../eltwise/nest.hpp"
#include "../eltwise/ref.hpp"
#include "reduce.hpp"

namespace tessera::dnn {
namespace {

using i64 = std::int64_t;

Result<std::vector<int>> normalise_axes(const std::string& fn, std::span<const int> axes, int rank) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes) {
    if (a < -rank || a >= rank)
      return invalid_argument(fn + ": axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    const int n = a < 0 ? a + rank : a;
    if (std::find(out.begin(), out.end(), n) != out.end())
      return invalid_argument(fn + ": axis " + std::to_string(a) + " is given twice");
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<i64> out_dims(const TensorDesc& x, const std::vector<int>& axes, bool keepdims) {
  std::vector<i64> d;
  for (int i = 0; i < x.rank(); ++i) {
    const bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!r) d.push_back(x.dims[static_cast<std::size_t>(i)]);
    else if (keepdims) d.push_back(1);
  }
  return d;
}

Status check_out(const std::string& fn, const TensorDesc& y, const void* yp, const std::vector<i64>& dims,
                 DType t, const TensorDesc& x, const void* xp) {
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y, yp));
  if (y.dtype != t)
    return invalid_argument(fn + ": y dtype " + std::string(dtype_name(y.dtype)) + " must be " + std::string(dtype_name(t)));
  if (y.dims != dims)
    return invalid_argument(fn + ": y dims [" + detail::dims_string(y.dims) + "] must be [" + detail::dims_string(dims) + "]");
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y));
  // The output is written while x is still read: no overlap at all.
  if (y.numel() > 0 && x.numel() > 0) {
    const auto y0 = reinterpret_cast<std::uintptr_t>(yp), x0 = reinterpret_cast<std::uintptr_t>(xp);
    const auto y1 = y0 + static_cast<std::uintptr_t>(y.span()) * dtype_size(y.dtype);
    const auto x1 = x0 + static_cast<std::uintptr_t>(x.span()) * dtype_size(x.dtype);
    if (!(y1 <= x0 || x1 <= y0)) return invalid_argument(fn + ": y overlaps x");
  }
  return Status::ok();
}

}  // namespace

Result<TensorDesc> reduce_output_desc(const TensorDesc& x, std::span<const int> axes, bool keepdims) {
  TESSERA_RETURN_IF_ERROR(detail::check_desc("reduce_output_desc", "x", x, 0, detail::kMaxTensorRank));
  TESSERA_ASSIGN_OR_RETURN(auto ax, normalise_axes("reduce_output_desc", axes, x.rank()));
  return TensorDesc::make(x.dtype, out_dims(x, ax, keepdims));
}

Status reduce(Handle& h, ReduceOp op, std::span<const int> axes, bool keepdims,
              const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y) {
  const int k = static_cast<int>(op);
  if (k < 0 || k >= kNumReduceOps) return invalid_argument("reduce: unknown op " + std::to_string(k));
  const std::string fn = "reduce " + std::string(reduce_name(op));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  TESSERA_ASSIGN_OR_RETURN(auto ax, normalise_axes(fn, axes, x_desc.rank()));
  const bool int_ok = op != ReduceOp::kL2 && op != ReduceOp::kLogSum && op != ReduceOp::kLogSumExp;
  if (!reduce_impl::takes_dtype(op, x_desc.dtype))
    return unsupported(fn + ": dtype " + std::string(dtype_name(x_desc.dtype)) + " is not supported; supported: " +
                       (int_ok ? "i8, u8, i32, i64, f16, bf16, f32, f64" : "f16, bf16, f32, f64"));
  TESSERA_RETURN_IF_ERROR(check_out(fn, y_desc, y, out_dims(x_desc, ax, keepdims), x_desc.dtype, x_desc, x));
  TESSERA_VLOG(kBench) << "tessera bench dnn reduce --op " << reduce_name(op) << " --dims "
                       << detail::dims_x(x_desc) << " --axes " << detail::dims_string({ax.begin(), ax.end()})
                       << " --dtype " << dtype_name(x_desc.dtype) << " --threads " << detail::max_threads(h);
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "reduce"));
  return reduce_impl::run(h, op, ax, x_desc, x, y_desc, y);
}

Status arg_reduce(Handle& h, bool arg_max, int axis, bool keepdims, bool last_index,
                  const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y) {
  const std::string fn = arg_max ? "arg_max" : "arg_min";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  if (x_desc.rank() == 0) return invalid_argument(fn + ": x must have rank >= 1");
  const int one[1] = {axis};
  TESSERA_ASSIGN_OR_RETURN(auto ax, normalise_axes(fn, one, x_desc.rank()));
  if (!reduce_impl::takes_dtype(ReduceOp::kMax, x_desc.dtype))
    return unsupported(fn + ": dtype " + std::string(dtype_name(x_desc.dtype)) + " is not supported; supported: i8, u8, i32, i64, f16, bf16, f32, f64");
  const std::vector<i64> od = out_dims(x_desc, ax, keepdims);
  i64 n_out = 1;
  for (i64 d : od) n_out *= d;
  if (x_desc.dims[static_cast<std::size_t>(ax[0])] == 0 && n_out > 0)
    return invalid_argument(fn + ": axis " + std::to_string(axis) + " is empty (no index to return)");
  TESSERA_RETURN_IF_ERROR(check_out(fn, y_desc, y, od, DType::kI64, x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  // One pass per output along the axis (memory-bound; the reference walk is the fast path).
  ref::arg_reduce(arg_max, ax[0], last_index, x_desc, x, y_desc, y);
  return Status::ok();
}

}  // namespace tessera::dnn
