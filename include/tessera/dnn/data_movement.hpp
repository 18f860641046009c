// tessera DNN data movement: cast, expand, reshape (a view), transpose, slice, concat, split,
// pad, tile, depth-to-space and space-to-depth. Included by tessera/dnn.hpp.
//
// Conventions as the other tensor operations (tensor_ops.hpp): TensorDesc + raw host pointer
// per tensor, any non-negative strides, rank <= 16, arguments checked before anything is
// read or written, outputs with distinct elements that do not overlap an input, results
// bitwise identical for any thread count. Every operation takes every dtype (bool, i8, u8,
// i32, i64, f16, bf16, f32, f64); apart from cast the output has the input's dtype.
//
// Cast rules (docs/dnn_tensor_ops.md, "Cast"):
// - to bool: x != 0 (NaN is true); from bool: 0 or 1.
// - integer to integer: wraps around (the value modulo 2^bits, as two's complement).
// - float to integer: truncated toward zero, saturated to the type's range; NaN gives 0.
// - to a float type: rounded to nearest, ties to even, once (f64 -> f16 does not round
//   through f32); beyond the largest finite value gives +-inf; NaN stays NaN.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <optional>

#include "tessera/dnn.hpp"

namespace tessera::dnn {

// y = x converted to y's dtype element by element (a strided copy when the dtypes are
// equal); x and y have equal dims.
Status cast(Handle& h, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
            void* y);

// y = x broadcast to y's dims (NumPy rules: right-aligned, x's dims equal or 1).
Status expand(Handle& h, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
              void* y);

// x seen with new dims, sharing its memory (ONNX Reshape): an entry -1 is inferred from the
// element count (at most one), an entry 0 keeps x's dim at that position unless
// `allow_zero`. Fails, saying so, where x's strides cannot describe the new dims (a
// transposed tensor split across its dims); cast into a packed tensor first.
Result<TensorDesc> reshape_view(const TensorDesc& x, std::span<const std::int64_t> shape,
                                bool allow_zero = false);

// y = x with its dims permuted: y.dims[i] = x.dims[perm[i]]. An empty perm reverses the dims.
Status transpose(Handle& h, std::span<const int> perm, const TensorDesc& x_desc,
                 const void* x, const TensorDesc& y_desc, void* y);

// ONNX Slice: along axes[i] (negative counts from the back; empty = 0, 1, ...) the elements
// starts[i], starts[i] + steps[i], ... up to but excluding ends[i]; steps may be negative
// (empty = all 1), never 0. Negative starts/ends count from the end; out-of-range values
// are clamped as ONNX says. slice_output_desc gives y's dims (packed row-major).
Result<TensorDesc> slice_output_desc(const TensorDesc& x, std::span<const std::int64_t> starts,
                                     std::span<const std::int64_t> ends,
                                     std::span<const int> axes,
                                     std::span<const std::int64_t> steps);
Status slice(Handle& h, std::span<const std::int64_t> starts, std::span<const std::int64_t> ends,
             std::span<const int> axes, std::span<const std::int64_t> steps,
             const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);

// y = the inputs joined along `axis` (negative counts from the back): every other dim equal.
Status concat(Handle& h, int axis, std::span<const TensorDesc> x_descs,
              std::span<const void* const> xs, const TensorDesc& y_desc, void* y);
// The inverse: x cut along `axis` into the outputs, in order; their dims along the axis add
// up to x's.
Status split(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
             std::span<const TensorDesc> y_descs, std::span<void* const> ys);

enum class PadMode : int {
  kConstant,  // `value` (converted to the dtype as cast does)
  kReflect,   // mirrored without repeating the edge: pads <= dim - 1
  kEdge,      // the edge element repeated: dims with a pad must not be empty
  kWrap,      // the other end continued (periodic): pads <= dim
};
std::string_view pad_mode_name(PadMode m);  // "constant", "reflect", "edge", "wrap"
std::optional<PadMode> parse_pad_mode(std::string_view name);

// ONNX Pad: pads = [begin_0, ..., begin_{r-1}, end_0, ..., end_{r-1}]; a negative pad removes
// elements. y.dims[i] = x.dims[i] + begin_i + end_i.
Status pad(Handle& h, PadMode mode, std::span<const std::int64_t> pads, double value,
           const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);

// ONNX Tile: y.dims[i] = x.dims[i] * repeats[i], x repeated along each dim.
Status tile(Handle& h, std::span<const std::int64_t> repeats, const TensorDesc& x_desc,
            const void* x, const TensorDesc& y_desc, void* y);

// ONNX DepthToSpace / SpaceToDepth on [N, C, H, W] with block size b:
// DCR: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j)*C/b^2 + c, h, w]
// CRD: y[n, c, h*b + i, w*b + j] = x[n, c*b^2 + i*b + j, h, w]
// space_to_depth is DCR's inverse: y[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j].
Status depth_to_space(Handle& h, std::int64_t block, bool crd, const TensorDesc& x_desc,
                      const void* x, const TensorDesc& y_desc, void* y);
Status space_to_depth(Handle& h, std::int64_t block, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& y_desc, void* y);

}  // namespace tessera::dnn
