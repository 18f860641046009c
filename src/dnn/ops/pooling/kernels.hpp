// Pooling kernels: one output row at a time (every position along the innermost spatial dim,
// for one image and one set of outer output coordinates). The drivers (impls.cpp) find the
// input rows a window touches, split work over threads and handle staging; the kernels see
// f32 data and plain structs.
//
// ISA files include only this header: plain data and function pointers, no inline code, so
// nothing compiled with wide-vector flags can leak into generic objects.
#pragma once

#include <cstdint>

namespace tessera::dnn::pool {

enum class RowOp : int { kMax = 0, kAvg = 1 };

constexpr std::int64_t kMaxPlaneW = 1024;  // planes_nchw: output rows at most this wide
constexpr std::int64_t kMaxPlaneK = 8;     // planes_nchw: windows at most this tall and wide
constexpr std::int64_t kMaxAvgPlaneK = 3;  // the same for average

// Geometry of the innermost spatial dim, and the pixel layout of a row.
struct RowGeom {
  std::int64_t in_w, out_w, k_w, s_w, d_w, pb_w;
  // Elements per pixel the kernel processes: C (or a block of C) for NHWC, 1 for NCHW.
  std::int64_t channels;
  // Elements between neighbouring pixels of a row (x, y, dy, dx and indices alike).
  std::int64_t pixel_stride;
  // Per output position, the taps [tap_lo, tap_hi) inside the row; and the positions
  // [interior_begin, interior_end) whose every tap is inside (computed once by the driver).
  const std::int64_t* tap_lo;
  const std::int64_t* tap_hi;
  std::int64_t interior_begin, interior_end;
};

// Forward: y (and for max optionally the int32-range spatial indices, widened to int64) for
// one output row. rows[r] is the r-th input row the window covers, in window order (outer dims
// first), and row_index[r] the spatial flat index of its first element within the plane.
// Windows are scanned in row-major order: for max the first maximum wins, NaN counts as the
// largest value (the first NaN wins); a window that covers no input element gives -inf and
// index -1. Average divides the f32 sum (taken in window order) by row_count * count_w[ow];
// a zero divisor (exclude-pad with an empty window) gives 0.
struct PoolFwdRow {
  RowOp op;
  RowGeom g;
  const float* const* rows;
  const float* x_end;  // the end of x: the kernels may read past a row's taps up to it
  const std::int64_t* row_index;
  std::int64_t nrows;
  float row_count;
  const float* count_w;
  float* y;
  std::int64_t* indices;  // max only; null when not wanted
  bool stream_indices = false;  // non-temporal stores where whole vectors are aligned
  // NHWC stride-1 blocks (forward_nhwc_s1): y's lines with non-temporal stores (y packed,
  // 64-byte aligned, channels a multiple of 16, so every block stores whole lines).
  bool stream_y = false;
  // NHWC max only, instead of y and indices: the indices as int32, codes_ps apart per pixel
  // (whole vectors written: codes_ps is a multiple of the vector width).
  std::int32_t* codes = nullptr;
  std::int64_t codes_ps = 0;
  // NHWC: rows to prefetch (into L1) along the row, a 1 / out_w share of each per position.
  const float* const* ahead = nullptr;
  const std::int64_t* ahead_len = nullptr;  // floats
  std::int64_t n_ahead = 0;
};

// Backward of one output row into the dx rows its windows cover, in the reference's order:
// every dx element receives its outputs' gradients in increasing output order (the dx rows
// start at +0, so adding +0 to an element never changes it).
//  - Average adds dy[ow] / (row_count * count_w[ow]) to every input element of each window.
//  - Max (no indices) adds dy[ow] to the first maximum of each window (x_rows, in window order
//    as PoolFwdRow.rows; NaN counts as the largest value, the first NaN wins).
// dx rows have dx_pixel_stride elements between pixels (g.pixel_stride is x's and dy's); NCHW
// rows may be read and written up to 2 * kW elements past their end (the values there are
// not used).
// NCHW `scratch` holds the per-tap gradients: tap t's out_w values at scratch + tap_lead +
// t * tap_stride, with zeros (written once by the caller) in the tap_lead elements before each
// array and from out_w up to tap_stride - tap_lead after it. tap_lead >= (k_w - 1) * d_w + 2,
// tap_stride >= tap_lead + max(out_w, in_w + pb_w + 2 * kW + 1). NHWC: unused.
struct PoolBwdRow {
  RowGeom g;
  std::int64_t dx_pixel_stride;
  float* const* rows;
  const float* const* x_rows;  // max only
  const float* x_end;          // max only: the end of x, which may be read up to it
  std::int64_t nrows;
  float row_count;
  const float* count_w;
  const float* dy;
  float* scratch;
  std::int64_t tap_lead, tap_stride;
};

// Backward of one NHWC dx row gathered from the windows covering it: each pixel iw of a block
// of `channels` channels sums, from +0 and in increasing output order (the output rows
// dy_rows, increasing, then the columns [col_lo[iw], col_hi[iw])), the gradients of
//  - max (code_rows set): the windows whose winner (PoolFwdRow.codes) is it, code ==
//    first_code + iw;
//  - average (code_rows null): every window, dy_rows holding the gradients already divided
//    (avg_scale_nhwc; with dilation 1 every pixel a window covers is one of its taps).
// Written with non-temporal stores where a vector is aligned when `stream`.
struct PoolGatherRow {
  std::int64_t in_w, channels;
  std::int64_t dy_ps, dx_ps, codes_ps;  // pixel strides
  std::int64_t first_code;
  std::int64_t nrows;
  const float* const* dy_rows;
  const std::int32_t* const* code_rows;
  const std::int64_t* col_lo;
  const std::int64_t* col_hi;
  float* dx;
  bool stream;
};

// The forward's indices of one NHWC output row as PoolFwdRow.codes, each checked to lie in its
// window's box: -1, or a flat index row_index[r] + col with r < nrows and col in
// [col_min[ow], col_max[ow]] (the window's rows and its span of columns inside the input).
// False when one does not (the gather would miss it; the caller scatters instead).
struct PoolCodesRow {
  const std::int64_t* indices;
  std::int64_t indices_ps, out_w, channels;
  std::int32_t* codes;
  std::int64_t codes_ps;
  const std::int64_t* row_index;
  std::int64_t nrows;
  const std::int64_t* col_min;
  const std::int64_t* col_max;
  const float* ahead;  // prefetched into L1 along the way, ahead_len floats
  std::int64_t ahead_len;
};

// Average backward of one packed NCHW plane (2-D, dilation 1), dx row by dx row: the
// gradients over their divisors into `grad` (out_h rows grad_stride apart, each read from
// grad_lead elements before its first output to the end of its stride: the caller zeroes it
// once and only [0, out_w) is written), then each dx row sums, from +0 and in output order, the
// gradients of the windows covering each of its elements, and is written once (with
// non-temporal stores where a vector is aligned when `stream`). g is the W dim's geometry.
struct PoolAvgPlane {
  RowGeom g;
  std::int64_t in_h, out_h, k_h, s_h, pb_h;
  const float* dy;
  const float* row_count;  // per output row: the divisor factor of the H dim
  const float* count_w;
  float* grad;
  std::int64_t grad_stride;
  float* dx;
  bool stream;
};
// grad_lead >= k_w + 1; grad_stride >= grad_lead + max(out_w, in_w + pb_w + 2 * kW + 1) + k_w.
constexpr std::int64_t kAvgPlaneVector = 16;  // the widest kW

// Max or average pooling of `planes` packed NCHW planes (h x w from x, oh x ow to y and, max
// only, when not null, indices; consecutive) with a 2-D window k_h x k_w, strides s_h and s_w
// (1 or 2), dilation 1, begin padding pt < k_h and pl < k_w, every window holding at least one
// input element, k_h, k_w <= kMaxPlaneK (average: kMaxAvgPlaneK, k_w >= 2, stride 1; or 3x3
// stride 2 with pt, pl <= 1) and
// ow <= kMaxPlaneW. Average (count_w set) divides by count_h[oh] * count_w[ow]. The same
// results as forward_nchw. x_begin and x_end bound the memory that may be read. `stream`: y
// goes out with non-temporal stores (then call fence before it is read elsewhere).
struct PoolPlanes {
  const float* x;
  std::int64_t planes, h, w, k_h, k_w, s_h, s_w, pt, pl, oh, ow;
  float* y;
  std::int64_t* indices;
  const float* x_begin;
  const float* x_end;
  bool stream;
  const float* count_h;  // average only; null for max
  const float* count_w;
  // Max only, instead of y and indices: the winners' flat indices as int32, plane q's row i at
  // codes + (q * oh + i) * codes_stride, whole vectors (-1 in the lanes past ow).
  std::int32_t* codes = nullptr;
  std::int64_t codes_stride = 0;
};

// Max backward of one packed NCHW plane whose windows take two columns in turn: k_w = 2 with
// no W padding, or k_w = 3 with W padding 0 or 1 (stride 2, dilation 1). Every dx element sums,
// from +0 in output order, the gradients of the windows covering it whose winner it is. The
// winners are PoolPlanes.codes of the plane (rows codes_stride apart, -1 past ow, readable from
// column -1 up to (w + 1) / 2 + W + 1). Rows go to dx through `stage` (w + 2W floats, vector-aligned) unless
// made of whole aligned vectors; non-temporal stores when `stream`.
struct PoolColsPlane {
  std::int64_t h, w, oh, ow, k_h, k_w, s_h, pt, pl;
  const std::int32_t* codes;
  std::int64_t codes_stride;
  const float* dy;
  const char* ahead[2];  // prefetched along the way: the next plane's dy and indices, say
  std::int64_t ahead_bytes[2];
  float* dx;
  float* stage;
  bool stream;
};

struct PoolKernels {
  const char* isa;                          // "avx512", "avx2", "generic"
  void (*forward_nhwc)(const PoolFwdRow&);  // vectorised over channels
  void (*forward_nchw)(const PoolFwdRow&);  // channels == 1; vectorised over output positions
  void (*avg_backward_nhwc)(const PoolBwdRow&);
  void (*avg_backward_nchw)(const PoolBwdRow&);
  void (*max_backward_nhwc)(const PoolBwdRow&);
  void (*max_backward_nchw)(const PoolBwdRow&);
  void (*gather_nhwc)(const PoolGatherRow&);
  void (*avg_planes_nchw)(const PoolAvgPlane&);
  // Average backward: one NHWC output row's gradients over its divisors, dy[ow * dy_ps + c] /
  // (row_count * count_w[ow]) to out[ow * out_ps + c] (whole vectors: out_ps a multiple of the
  // vector width), with `ahead` (ahead_len floats) prefetched along the way.
  void (*avg_scale_nhwc)(const float* dy, std::int64_t dy_ps, std::int64_t out_w,
                         std::int64_t channels, float row_count, const float* count_w, float* out,
                         std::int64_t out_ps, const float* ahead, std::int64_t ahead_len);
  bool (*codes_from_indices)(const PoolCodesRow&);
  // The same for one NCHW output row (indices_ps, codes_ps and channels 1), vectorised over
  // the row; windows of up to four rows.
  bool (*codes_from_indices_nchw)(const PoolCodesRow&);
  // Whether every one of n indices is -1 or in [0, plane).
  bool (*indices_in_range)(const std::int64_t* indices, std::int64_t n, std::int64_t plane);
  void (*planes_nchw)(const PoolPlanes&);
  void (*max_cols_nchw)(const PoolColsPlane&);
  // dx rows out of the ring: `pixels` pixels of `channels` floats from src (pixel stride
  // src_ps; null: zeros) to dst (pixel stride dst_ps); with non-temporal stores when `stream`
  // (then call fence before the data is read elsewhere).
  void (*put_row)(float* dst, std::int64_t dst_ps, const float* src, std::int64_t src_ps,
                  std::int64_t pixels, std::int64_t channels, bool stream);
  void (*fence)();
  // Global average pooling over packed NCHW planes (the window is the whole input, no
  // padding): y[q] = (x[q n] + ... + x[q n + n - 1], from +0 in order) / div for q in
  // [0, planes), as the reference computes it.
  void (*global_avg_nchw)(const float* x, std::int64_t planes, std::int64_t n, float div, float* y);
  // The same for max: y[q] (when y is not null) the first maximum of x[q n .. q n + n) by the
  // reference's rule (NaN counts as the largest, the first NaN wins), idx[q] (when not null)
  // its offset in the plane.
  void (*global_max_nchw)(const float* x, std::int64_t planes, std::int64_t n, float* y, std::int64_t* idx);
};

extern const PoolKernels kPoolGeneric;  // generic.cpp
extern const PoolKernels kPoolAvx2;     // avx2.cpp
extern const PoolKernels kPoolAvx512;   // avx512.cpp

}  // namespace tessera::dnn::pool
