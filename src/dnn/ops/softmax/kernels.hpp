// Softmax / log-softmax kernels on dense tensors seen as [outer, len, inner] around the axis
// (dense.hpp), one table per instruction set: avx512.cpp and avx2.cpp (over softmax_body.inc
// and the activation layer's vector math) and generic.cpp (scalar, bit-identical to the
// reference). impls.cpp splits outer rows or column blocks over threads; every softmax row is
// reduced by one call, in an order fixed by len alone, so results never depend on threads.
//
// ISA files include only this header (declarations, no inline code). Storage is f32 or
// bf16/f16 bit patterns (act_kernels::Storage) with f32 compute and f64 sums.
#pragma once

#include <cstdint>

#include "../activation/kernels.hpp"

namespace tessera::dnn::softmax_kernels {

enum Mode : int { kSoftmax = 0, kLogSoftmax = 1, kNumModes = 2 };
constexpr int kNumStorage = act_kernels::kNumStorage;

// inner == 1: `rows` contiguous rows of `len` elements (row r at r*len).
// inner > 1: columns [c0, c1) of one [len, inner] slice (element (a, i) at a*inner + i); the
// softmax runs down each column, vectorised across columns.
// `stream`: non-temporal stores for the output (the vector kernels), for outputs far larger
// than the caches; the results are the same either way.
using RowsFwdFn = void (*)(std::int64_t rows, std::int64_t len, const void* x, void* y,
                           bool stream);
using RowsBwdFn = void (*)(std::int64_t rows, std::int64_t len, const void* y, const void* dy,
                           void* dx, bool stream);
// `scratch` (kColsScratch floats, private to the call) keeps softmax's exponentials between
// its passes in the vector kernels; the generic kernels ignore it.
constexpr std::int64_t kColsScratch = 327680;
// cols_fwd runs `slices` consecutive slices (len*inner elements apart) at once.
using ColsFwdFn = void (*)(std::int64_t len, std::int64_t inner, std::int64_t c0, std::int64_t c1,
                           std::int64_t slices, const void* x, void* y, bool stream,
                           float* scratch);
using ColsBwdFn = void (*)(std::int64_t len, std::int64_t inner, std::int64_t c0, std::int64_t c1,
                           const void* y, const void* dy, void* dx, bool stream);

// log_sum_exp (the reduction), f32 lines, results in f64: m + log(sum e^(x - m)) with m the
// line's max; a line whose max is not finite gives NaN if it holds a NaN, else that max.
// lse_rows: `rows` rows of len, row r at x + r*ldx, into out[r]. lse_cols: the `width`
// contiguous columns of the [len, width] block at x (rows ldx apart), into out[j]; `next` is the
// block the caller runs next (prefetched meanwhile), or null. Each line's arithmetic depends on
// its length and its values alone, never on rows, width, blocks or threads.
using LseRowsFn = void (*)(std::int64_t rows, std::int64_t len, std::int64_t ldx, const float* x,
                           double* out);
using LseColsFn = void (*)(std::int64_t len, std::int64_t ldx, std::int64_t width, const float* x,
                           const float* next, double* out);

// Forward: m = max, s = sum e^(x-m); softmax y = e^(x-m) / s, log-softmax y = (x-m) - log s.
// Backward (from y): softmax dx = y (dy - sum dy*y), log-softmax dx = dy - e^y sum dy.
struct Kernels {
  const char* isa;  // "avx512", "avx2", "generic"
  RowsFwdFn rows_fwd[kNumModes][kNumStorage];
  RowsBwdFn rows_bwd[kNumModes][kNumStorage];
  ColsFwdFn cols_fwd[kNumModes][kNumStorage];
  ColsBwdFn cols_bwd[kNumModes][kNumStorage];
  LseRowsFn lse_rows;
  LseColsFn lse_cols;
};

extern const Kernels kAvx512;   // avx512.cpp
extern const Kernels kAvx2;     // avx2.cpp
extern const Kernels kGeneric;  // generic.cpp

}  // namespace tessera::dnn::softmax_kernels
