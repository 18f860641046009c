// Reduction kernels of the tensor operations, one table per instruction set (body.inc
// compiled by generic.cpp, avx2.cpp and avx512.cpp with their flags). impls.cpp reduces a
// contiguous row with the row kernels (the reduced elements innermost) or accumulates
// contiguous blocks of outputs over the reduced rows with the column kernels (the kept
// elements innermost). ISA files include only this header.
//
// Accumulators: floating-point sums and products in f64 (f16/bf16 sums in f32 partials, see
// narrow_partials), integer sums and products in 64 bits (wrapping); max/min in the compute
// type, NaN propagating. The compute type is the element type, except for kF16 and kBF16:
// those kernels read the 16-bit elements and widen them to f32 in registers (their max/min
// accumulators and results are f32).
// A row kernel's order depends on n only: sums and products in 16 lanes (i-th element into
// lane i % 16, lanes added pairwise at the end), max and min in 64 lanes combined in order.
#pragma once

#include <cstdint>

namespace tessera::dnn::red_kernels {

enum Type : int { kI8, kU8, kI32, kI64, kF32, kF64, kF16, kBF16, kNumTypes };
// What a kernel accumulates: the sum of x, |x| or x^2, the product, the max or the min.
enum Acc : int { kSum, kSumAbs, kSumSquare, kProd, kMax, kMin, kNumAcc };

// One row: for float types the f64 result in *d, for integer types the i64 result in *i (max
// and min: the extreme element, converted). 1 <= n, and n <= kMaxPartialRow for the
// accumulations of narrow_partials.
using RowFn = void (*)(std::int64_t n, const void* x, double* d, std::int64_t* i);
// Rows [0, rows) of x, row r at x + r * ld elements, each reduced as RowFn does (the same
// bits) with its f64 result in d[r]: f32 and f64 sums of x, |x| and x^2 and products on AVX2
// and AVX-512, two rows at a time so that their dependency chains overlap, and max and min, a
// row at a time without a call each (null elsewhere).
using RowsFn = void (*)(std::int64_t n, std::int64_t rows, std::int64_t ld, const void* x, double* d);
// Columns: acc[j] (the accumulator type; max/min: the compute type) combined
// with x[j] for j in [0, n).
using ColFn = void (*)(std::int64_t n, const void* x, void* acc);
// kColGroup rows x[0], x[1], ... combined into acc in turn: the same operations as that many
// ColFn calls (so the same bits), with acc read and written once.
inline constexpr int kColGroup = 8;
using ColGroupFn = void (*)(std::int64_t n, const void* const* x, void* acc);

// Whether sums of this type accumulate in 32 bits: in partials of bounded length (row
// kernels: n <= kMaxPartialRow; column kernels: the caller folds acc into 64-bit totals every
// kMaxPartialCols reduced indices).
// - f16 and bf16 sums of x, |x| and x^2 in f32 (ARCHITECTURE.md's numerics), except bf16
//   squares (they overflow f32 where the f64 result does not). Products stay f64 (f32
//   partial products overflow and underflow).
// - i8 and u8 sums of x, |x| and x^2 in 32-bit integers (they cannot overflow: at most
//   16 Ki * 255^2 < 2^31); products stay 64-bit.
inline constexpr std::int64_t kMaxPartialRow = 16384;
inline constexpr std::int64_t kMaxPartialCols = 1024;
constexpr bool narrow_partials(int acc, int type) {
  const bool sums = acc == kSum || acc == kSumAbs || acc == kSumSquare;
  return sums && (type == kF16 || type == kI8 || type == kU8 || (type == kBF16 && acc != kSumSquare));
}

struct Kernels {
  const char* isa;
  RowFn row[kNumAcc][kNumTypes];
  RowsFn rows[kNumAcc][kNumTypes];
  ColFn col[kNumAcc][kNumTypes];
  ColGroupFn colg[kNumAcc][kNumTypes];
};
extern const Kernels kGeneric;
extern const Kernels kAvx2;
extern const Kernels kAvx512;

}  // namespace tessera::dnn::red_kernels
