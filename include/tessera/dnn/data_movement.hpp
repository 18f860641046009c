// tessera DNN data movement: cast, expand, reshape (a view), transpose, slice, concat, split,
// pad, tile, depth-to-space and space-to-depth; the indexing operations gather (and its
// elements / nd forms), scatter (elements / nd, with reductions), one-hot; cumulative sum and
// top-k. Included by tessera/dnn.hpp.
//
// Conventions as the other tensor operations (tensor_ops.hpp): TensorDesc + raw host pointer
// per tensor, any non-negative strides, rank <= 16, arguments checked before anything is
// read or written, outputs with distinct elements that share no memory with an input (y may
// be x itself only for cast, expand, cumsum and scatter), results bitwise identical for any
// thread count. Every operation takes every dtype (bool, i8, u8, i32, i64, f16, bf16, f32,
// f64) unless it says otherwise; apart from cast the output has the input's dtype.
//
// Cast rules (docs/dnn_data_movement.md, "Cast rules"):
// - to bool: x != 0 (NaN is true); from bool: 0 or 1.
// - integer to integer: wraps around (the value modulo 2^bits, as two's complement).
// - float to integer: truncated toward zero, saturated to the type's range; NaN gives 0.
// - to a float type: rounded to nearest, ties to even, once (f64 -> f16 does not round
//   through f32); beyond the largest finite value gives +-inf; NaN stays NaN.
#pragma once

#include <cstdint>
#include <span>
#include <optional>
#include <string_view>
#include <vector>

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

// ---- resize -----------------------------------------------------------------------------------
enum class ResizeMode : int { kNearest, kLinear, kCubic };
// ONNX coordinate_transformation_mode: where output index o (of O) samples input (of I) along a
// dim with scale s: half_pixel (o + 0.5) / s - 0.5; half_pixel_symmetric (the same, centred);
// pytorch_half_pixel (half_pixel, 0 when O == 1); align_corners o * (I - 1) / (O - 1);
// asymmetric o / s.
enum class ResizeCoord : int { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric };
// ONNX nearest_mode: how a sampling position becomes an index (then clamped into the dim).
enum class ResizeNearest : int { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  double cubic_a = -0.75;        // the cubic kernel's coefficient
  bool exclude_outside = false;  // weights of taps outside the input set to 0, the rest renormalised
  std::vector<double> scales;    // per dim; empty: y.dims / x.dims
};
std::string_view resize_mode_name(ResizeMode m);     // "nearest", "linear", "cubic"
std::string_view resize_coord_name(ResizeCoord c);  // "half_pixel", "align_corners", ...
std::string_view resize_nearest_name(ResizeNearest n);  // "round_prefer_floor", ...
std::optional<ResizeMode> parse_resize_mode(std::string_view name);
std::optional<ResizeCoord> parse_resize_coord(std::string_view name);
std::optional<ResizeNearest> parse_resize_nearest(std::string_view name);

// ONNX Resize (without roi / tf_crop_and_resize and antialias) to y's dims, separable over
// the dims: nearest takes every dtype (elements copied); linear and cubic take floats, taps
// beyond the edges repeat the edge element, computed in f32 (f64 for f64), y rounded once.
Status resize(Handle& h, const ResizeParams& p, const TensorDesc& x_desc, const void* x,
              const TensorDesc& y_desc, void* y);

// ---- indexing ---------------------------------------------------------------------------------
// Indices are i32 or i64 tensors; a negative index counts from the end of its axis. Every
// index is checked before anything is written: one out of range fails the call, naming it.

// ONNX Gather: y = x indexed along `axis` by every index:
// y.dims = x.dims[:axis] + indices.dims + x.dims[axis + 1:].
Status gather(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
              const TensorDesc& indices_desc, const void* indices, const TensorDesc& y_desc,
              void* y);
// ONNX GatherElements: y[i] = x[i with its `axis` entry replaced by indices[i]];
// y.dims = indices.dims, at most x's off the axis (the same rank).
Status gather_elements(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                       const TensorDesc& indices_desc, const void* indices,
                       const TensorDesc& y_desc, void* y);
// ONNX GatherND: the last dim of indices (k) indexes x's dims batch_dims .. batch_dims + k - 1;
// y.dims = indices.dims[:-1] + x.dims[batch_dims + k:]; the first batch_dims dims of x and
// indices are equal and walked together.
Status gather_nd(Handle& h, int batch_dims, const TensorDesc& x_desc, const void* x,
                 const TensorDesc& indices_desc, const void* indices, const TensorDesc& y_desc,
                 void* y);

enum class ScatterReduce : int { kNone, kAdd, kMul, kMax, kMin };
std::string_view scatter_reduce_name(ScatterReduce r);  // "none", "add", "mul", "max", "min"
std::optional<ScatterReduce> parse_scatter_reduce(std::string_view name);

// ONNX ScatterElements: y = x, then y[i with its `axis` entry replaced by indices[i]] =
// updates[i] (or combined with it by the reduction), in row-major order of the updates, so
// with kNone a later duplicate wins. updates.dims = indices.dims; y like x (may be x).
Status scatter_elements(Handle& h, int axis, ScatterReduce reduction, const TensorDesc& x_desc,
                        const void* x, const TensorDesc& indices_desc, const void* indices,
                        const TensorDesc& updates_desc, const void* updates,
                        const TensorDesc& y_desc, void* y);
// ONNX ScatterND: y = x, then for each index tuple (indices' last dim, k <= x's rank) the slab
// y[tuple] = updates[...] (or combined); updates.dims = indices.dims[:-1] + x.dims[k:].
Status scatter_nd(Handle& h, ScatterReduce reduction, const TensorDesc& x_desc, const void* x,
                  const TensorDesc& indices_desc, const void* indices,
                  const TensorDesc& updates_desc, const void* updates, const TensorDesc& y_desc,
                  void* y);

// ONNX OneHot: y has indices' dims with `depth` inserted at `axis` (negative counts from the
// back of y's rank); y = on where the index (negative: + depth) equals the position, else
// off. Indices outside [-depth, depth) give a row of off. on/off are converted to y's dtype.
Status one_hot(Handle& h, int axis, std::int64_t depth, double off, double on,
               const TensorDesc& indices_desc, const void* indices, const TensorDesc& y_desc,
               void* y);

// ONNX CumSum along `axis`: y[..., j, ...] = sum of x over [0, j] (exclusive: [0, j); reverse:
// from the end). Floats accumulate in f64 and round each output once; integers wrap.
Status cumsum(Handle& h, int axis, bool exclusive, bool reverse, const TensorDesc& x_desc,
              const void* x, const TensorDesc& y_desc, void* y);

// ONNX TopK along `axis`: the k largest (or smallest) elements in order with their i64
// indices; equal elements keep the lower index first, NaN counts as larger than any number.
// values and indices have x's dims with k along the axis. Bool and complex are not taken.
Status top_k(Handle& h, int axis, std::int64_t k, bool largest, const TensorDesc& x_desc,
             const void* x, const TensorDesc& values_desc, void* values,
             const TensorDesc& indices_desc, void* indices);

}  // namespace tessera::dnn
