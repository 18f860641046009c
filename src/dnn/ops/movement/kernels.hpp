// Data-movement kernels (cast, transpose and everything built on them), one table per
// instruction set: avx512.cpp, avx2.cpp and generic.cpp compile body.inc (over convert.inc's
// rules) with their own flags; the ISA files add hand-written register transposes of tiles and
// of whole 64-byte line blocks. impls.cpp walks the views and calls these on contiguous rows
// and 2-D tiles.
//
// ISA files include only this header: declarations, no inline code.
#pragma once

#include <cstdint>

namespace tessera::dnn::move_kernels {

// Compute types, the indexes of the conversion table; f16/bf16 are staged through f32.
enum Type : int { kBool, kI8, kU8, kI32, kI64, kF32, kF64, kNumTypes };

// dst[i] = convert(src[i]) for i in [0, n), by cast's rules; dst may be src (same size).
using ConvertFn = void (*)(std::int64_t n, const void* src, void* dst);
// dst[c * ldd + r] = src[r * lds + c] for r in [0, rows), c in [0, cols): a tile transposed.
using TransposeFn = void (*)(std::int64_t rows, std::int64_t cols, const void* src,
                             std::int64_t lds, void* dst, std::int64_t ldd);
// The same, by blocks whose rows and columns are whole 64-byte vectors; with `stream`, y's
// columns that are whole aligned lines go out with non-temporal stores (the caller fences).
using TransposeLinesFn = void (*)(std::int64_t rows, std::int64_t cols, const void* src,
                                  std::int64_t lds, void* dst, std::int64_t ldd, bool stream);

// Narrow transposes, pixels of C elements (C in [2, kMaxNarrow]) to C planes and back (NHWC <->
// NCHW of images), for p in [0, n), c in [0, C):
//   deinterleave: y[c * ld + p] = x[p * C + c];   interleave: y[p * C + c] = x[c * ld + p].
constexpr int kMaxNarrow = 8;
using NarrowFn = void (*)(std::int64_t n, const void* x, void* y, std::int64_t ld);

// Cumulative sums of lines (cumsum's dense entries) for f32, f64, i32 and i64: each line summed
// in its order, floats in f64 rounded once to the dtype, integers wrapping (the reference's
// arithmetic, so the same bits). x may be y.
enum CumType : int { kCumF32, kCumF64, kCumI32, kCumI64, kNumCumTypes };
// Rows [0, rows) of len elements, row r at r * len.
using CumsumRowsFn = void (*)(std::int64_t rows, std::int64_t len, const void* x, void* y,
                              bool exclusive, bool reverse);
// Columns [0, width) of a [len, inner] slice, element (a, j) at a * inner + j.
using CumsumColsFn = void (*)(std::int64_t len, std::int64_t inner, std::int64_t width,
                              const void* x, void* y, bool exclusive, bool reverse);

// Gathers (the dense entries of gather and gather_elements) of elements of 1, 2, 4 or 8 bytes
// (index 0-3) with i32 or i64 indices (index 0 or 1). The caller has checked every index to lie
// in [-lim, lim); a negative one counts from lim. With w(v) = v < 0 ? v + lim : v:
//   gather_row:  y[j] = x[w(idx[j])]          for j in [0, n)  (s unused)
//   gather_cols: y[j] = x[w(idx[j]) * s + j]  for j in [0, n)  (element j of the row picked)
using GatherFn = void (*)(std::int64_t n, const void* x, std::int64_t s, const void* idx,
                          std::int64_t lim, void* y);

// top_k's scans (f32, f64, i32, i64 by CumType's order; [largest]): the first j in [0, n)
// whose element may beat its bar, or n. "May beat" is the cheap test every element that beats
// the bar passes: v > bar for the largest, v < bar for the smallest, or either one NaN.
//   top_scan_row:  x[j] against *bar;
//   top_scan_cols: row j = x[j * ld + q] for q in [0, w), each against bars[q]: the first row
//                  with any such element. w is at most 4 KiB of elements, 64 groups of 64
//                  bytes; bit g of *hits is set for each group of that row holding one.
using TopScanRowFn = std::int64_t (*)(std::int64_t n, const void* x, const void* bar);
using TopScanColsFn = std::int64_t (*)(std::int64_t n, const void* x, std::int64_t ld,
                                       std::int64_t w, const void* bars, std::uint64_t* hits);

// The first j in [0, n) whose index idx[j] (i32 or i64, index 0 or 1) lies outside [-lim, lim),
// or -1: a vector pass over blocks, the block with a bad one searched again element by element.
using IndexCheckFn = std::int64_t (*)(std::int64_t n, const void* idx, std::int64_t lim);

struct Kernels {
  const char* isa;
  ConvertFn convert[kNumTypes][kNumTypes];  // [from][to]
  // dst (f32) = src rounded to odd at f32's precision (to_half_source: the f16/bf16 casts of
  // values f32 does not hold exactly round once from it); f64, i32 and i64 sources, null else.
  ConvertFn odd_f32[kNumTypes];
  TransposeFn transpose[4];                 // elements of 1, 2, 4, 8 bytes
  TransposeLinesFn transpose_lines[4];      // the same where an ISA has them, else null
  NarrowFn deinterleave[4][kMaxNarrow + 1];  // [log2 element bytes][C]
  NarrowFn interleave[4][kMaxNarrow + 1];
  CumsumRowsFn cumsum_rows[kNumCumTypes];
  CumsumColsFn cumsum_cols[kNumCumTypes];
  GatherFn gather_row[2][4];   // [i64 indices][log2 element bytes]
  GatherFn gather_cols[2][4];
  TopScanRowFn top_scan_row[kNumCumTypes][2];  // [type][largest]
  TopScanColsFn top_scan_cols[kNumCumTypes][2];
  IndexCheckFn first_bad_index[2];  // [i64 indices]
};
extern const Kernels kGeneric;
extern const Kernels kAvx2;
extern const Kernels kAvx512;

}  // namespace tessera::dnn::move_kernels
