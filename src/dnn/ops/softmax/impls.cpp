// Public entry points of softmax / log-softmax: argument checks, the replay line, then the
// first implementation of the ordered list that accepts the problem. The fast paths need the
// tensors dense and laid out alike (any packed dim order) and see them as [outer, len, inner]
// around the axis: "rows" when the axis is innermost in memory (inner == 1), "cols" otherwise
// (vectorised across the inner dimension). Work is split over outer rows or column blocks;
// each softmax row is reduced by one kernel call in a fixed order, so results never depend
// on the thread count.
#include <string>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "kernels.hpp"
#include "ref.hpp"

namespace tessera::dnn {
namespace {

namespace sk = softmax_kernels;
using detail::at_element;
using detail::refuse;
using i64 = std::int64_t;

struct SoftmaxCall {
  SoftmaxMode mode;
  int axis;              // in [0, rank)
  const TensorDesc& in;  // x (forward) or y (backward)
  const void* inp;
  const TensorDesc* dy;  // backward only
  const void* dyp;
  const TensorDesc& out;  // y or dx
  void* outp;
};

Status dense_alike(const SoftmaxCall& c) {
  if (!detail::same_dense_layout(c.in, c.out) ||
      (c.dy != nullptr && !detail::same_dense_layout(c.in, *c.dy)))
    return refuse(c.dy ? "y, dy and dx are not all packed alike"
                       : "x and y are not both packed alike");
  return Status::ok();
}

template <Isa kNeeds>
Status rows_accepts(const SoftmaxCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  TESSERA_RETURN_IF_ERROR(dense_alike(c));
  if (detail::split_at_axis(c.in, c.axis).inner != 1)
    return refuse("axis " + std::to_string(c.axis) + " is not innermost in memory");
  return Status::ok();
}

template <Isa kNeeds>
Status cols_accepts(const SoftmaxCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  TESSERA_RETURN_IF_ERROR(dense_alike(c));
  if (detail::split_at_axis(c.in, c.axis).inner == 1)
    return refuse("axis " + std::to_string(c.axis) + " is innermost in memory (rows apply)");
  return Status::ok();
}

template <const sk::Kernels* kK>
Status rows_run(Handle& h, const SoftmaxCall& c) {
  const int s = detail::storage_index(c.in.dtype);
  const int m = static_cast<int>(c.mode);
  const i64 eb = detail::storage_bytes(c.in.dtype);
  const detail::AxisSplit sp = detail::split_at_axis(c.in, c.axis);
  const i64 len = sp.len;
  const i64 grain = std::max<i64>(1, detail::kGrainElements / len);
  const bool stream = detail::stream_output(c.out.numel() * eb);
  detail::parallel_for(h, 0, sp.outer, grain, [&](i64 r0, i64 r1) {
    const i64 at = r0 * len;
    if (c.dy != nullptr)
      kK->rows_bwd[m][s](r1 - r0, len, at_element(c.inp, at, eb), at_element(c.dyp, at, eb),
                         at_element(c.outp, at, eb), stream);
    else
      kK->rows_fwd[m][s](r1 - r0, len, at_element(c.inp, at, eb), at_element(c.outp, at, eb),
                         stream);
  });
  return Status::ok();
}

// Column blocks: whole rows of the slice where there are enough slices to share out (each
// slice is then read as one sequential stream), else the slice's columns cut into about two
// blocks per thread (multiples of 64 columns). Blocks only share out work: every column's
// arithmetic is the same whatever the block.
i64 column_block(const Handle& h, const detail::AxisSplit& sp) {
  const i64 want = 2 * std::max(1, detail::max_threads(h));
  if (sp.outer >= want) return sp.inner;
  const i64 pieces = (want + sp.outer - 1) / sp.outer;
  return std::min(sp.inner, std::max<i64>(64, (sp.inner / pieces + 63) / 64 * 64));
}

// Units (outer index, column block) are split into one contiguous range per thread, each
// with its own kernel scratch from the handle's workspace.
template <const sk::Kernels* kK>
Status cols_run(Handle& h, const SoftmaxCall& c) {
  const int s = detail::storage_index(c.in.dtype);
  const int m = static_cast<int>(c.mode);
  const i64 eb = detail::storage_bytes(c.in.dtype);
  const detail::AxisSplit sp = detail::split_at_axis(c.in, c.axis);
  const i64 block = column_block(h, sp);
  const i64 per = (sp.inner + block - 1) / block;
  const i64 units = sp.outer * per;
  const bool small = c.in.numel() < detail::kGrainElements;
  const i64 ranges = small ? 1 : std::min<i64>(units, std::max(1, detail::max_threads(h)));
  const bool stream = detail::stream_output(c.out.numel() * eb);
  float* scratch = nullptr;
  if (c.dy == nullptr) {
    TESSERA_ASSIGN_OR_RETURN(void* ws, detail::workspace(h, static_cast<std::size_t>(ranges) *
                                                                sk::kColsScratch * sizeof(float)));
    scratch = static_cast<float*>(ws);
  }
  detail::parallel_for(h, 0, ranges, 1, [&](i64 t0, i64 t1) {
    for (i64 t = t0; t < t1; ++t) {
      const i64 u0 = units * t / ranges, u1 = units * (t + 1) / ranges;
      // Whole slices go to the forward kernel together (it overlaps one slice's output with
      // the next one's first pass).
      if (c.dy == nullptr && per == 1 && u1 > u0) {
        const i64 at = u0 * sp.len * sp.inner;
        kK->cols_fwd[m][s](sp.len, sp.inner, 0, sp.inner, u1 - u0, at_element(c.inp, at, eb),
                           at_element(c.outp, at, eb), stream, scratch + t * sk::kColsScratch);
        continue;
      }
      for (i64 u = u0; u < u1; ++u) {
        const i64 o = u / per, c0 = (u % per) * block, c1 = std::min(sp.inner, c0 + block);
        const i64 at = o * sp.len * sp.inner;
        if (c.dy != nullptr)
          kK->cols_bwd[m][s](sp.len, sp.inner, c0, c1, at_element(c.inp, at, eb),
                             at_element(c.dyp, at, eb), at_element(c.outp, at, eb), stream);
        else
          kK->cols_fwd[m][s](sp.len, sp.inner, c0, c1, 1, at_element(c.inp, at, eb),
                             at_element(c.outp, at, eb), stream, scratch + t * sk::kColsScratch);
      }
    }
  });
  return Status::ok();
}

Status ref_run(Handle&, const SoftmaxCall& c) {
  if (c.dy != nullptr)
    ref::softmax_backward(c.mode, c.axis, c.in, c.inp, *c.dy, c.dyp, c.out, c.outp);
  else
    ref::softmax_forward(c.mode, c.axis, c.in, c.inp, c.out, c.outp);
  return Status::ok();
}

constexpr detail::Impl<SoftmaxCall> kSoftmaxImpls[] = {
    {"softmax_rows_avx512", &rows_accepts<Isa::kAvx512>, &rows_run<&sk::kAvx512>},
    {"softmax_cols_avx512", &cols_accepts<Isa::kAvx512>, &cols_run<&sk::kAvx512>},
    {"softmax_rows_avx2", &rows_accepts<Isa::kAvx2>, &rows_run<&sk::kAvx2>},
    {"softmax_cols_avx2", &cols_accepts<Isa::kAvx2>, &cols_run<&sk::kAvx2>},
    {"softmax_rows_generic", &rows_accepts<Isa::kGeneric>, &rows_run<&sk::kGeneric>},
    {"softmax_cols_generic", &cols_accepts<Isa::kGeneric>, &cols_run<&sk::kGeneric>},
    {"softmax_ref", detail::accepts_all<SoftmaxCall>, &ref_run},
};

Status check_mode_axis(const std::string& fn, SoftmaxMode mode, int axis, const TensorDesc& d,
                       int* normalised) {
  if (mode != SoftmaxMode::kSoftmax && mode != SoftmaxMode::kLogSoftmax)
    return invalid_argument(fn + ": unknown softmax mode " +
                            std::to_string(static_cast<int>(mode)));
  const int r = d.rank();
  if (axis < -r || axis >= r)
    return invalid_argument(fn + ": axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(r) + " (expected -" + std::to_string(r) + " to " +
                            std::to_string(r - 1) + ")");
  *normalised = axis < 0 ? axis + r : axis;
  return Status::ok();
}

void log_bench(const Handle& h, SoftmaxMode mode, int axis, const TensorDesc& d, const char* dir) {
  TESSERA_VLOG(kBench) << "tessera bench dnn softmax --axis " << axis << " --dims "
                       << detail::dims_x(d) << " --dtype " << dtype_name(d.dtype)
                       << detail::layout_flag(d) << " --mode "
                       << (mode == SoftmaxMode::kLogSoftmax ? "log" : "softmax") << " --dir " << dir
                       << " --threads " << detail::max_threads(h);
}

}  // namespace

Status softmax_forward(Handle& h, SoftmaxMode mode, int axis, const TensorDesc& x_desc,
                       const void* x, const TensorDesc& y_desc, void* y) {
  const std::string fn = "softmax_forward";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor_args(fn, 1, {{"x", x_desc, x}, {"y", y_desc, y}}));
  int ax = 0;
  TESSERA_RETURN_IF_ERROR(check_mode_axis(fn, mode, axis, x_desc, &ax));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "softmax_forward"));
  log_bench(h, mode, ax, x_desc, "fwd");
  if (x_desc.numel() == 0) return Status::ok();
  const SoftmaxCall c{mode, ax, x_desc, x, nullptr, nullptr, y_desc, y};
  return detail::run_first_accepting(h, "softmax_forward", kSoftmaxImpls, c);
}

Status softmax_backward(Handle& h, SoftmaxMode mode, int axis, const TensorDesc& y_desc,
                        const void* y, const TensorDesc& dy_desc, const void* dy,
                        const TensorDesc& dx_desc, void* dx) {
  const std::string fn = "softmax_backward";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor_args(
      fn, 1, {{"y", y_desc, y}, {"dy", dy_desc, dy}, {"dx", dx_desc, dx}}));
  int ax = 0;
  TESSERA_RETURN_IF_ERROR(check_mode_axis(fn, mode, axis, y_desc, &ax));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "softmax_backward"));
  log_bench(h, mode, ax, y_desc, "bwd");
  if (y_desc.numel() == 0) return Status::ok();
  const SoftmaxCall c{mode, ax, y_desc, y, &dy_desc, dy, dx_desc, dx};
  return detail::run_first_accepting(h, "softmax_backward", kSoftmaxImpls, c);
}

}  // namespace tessera::dnn
