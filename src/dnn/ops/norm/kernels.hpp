// Normalisation kernels (batch, layer, group and instance norm) on packed f32 data: segment
// ("row") and matrix-column reductions and the elementwise passes. The drivers decide what a
// row or a column is for each norm and layout, split work over threads in fixed blocks and
// combine partial sums in a fixed order.
//
// Reductions take moments around a shift (an element of the data, so the sums stay small and
// the variance does not cancel) in f32 lanes, flushed to f64 at least every kRowFlush elements
// (rows) or per call (columns: the drivers bound the rows of one call).
//
// ISA files include only this header: plain data and function pointers, no inline code.
#pragma once

#include <cstdint>

namespace tessera::dnn::norm {

constexpr std::int64_t kRowFlush = 2048;

struct NormKernels {
  const char* isa;
  // s[0] += sum(x - shift), s[1] += sum((x - shift)^2) over n contiguous elements.
  void (*row_moments)(const float* x, std::int64_t n, float shift, double* s);
  // s[0] += sum(dy), s[1] += sum(dy * (x - mean)).
  void (*row_dot)(const float* x, const float* dy, std::int64_t n, float mean, double* s);
  // Per column j < cols of a rows x cols block (row stride ld): s1[j] = sum(x - shift[j]),
  // s2[j] = sum((x - shift[j])^2), in f32 (overwritten).
  void (*col_moments)(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                      const float* shift, float* s1, float* s2);
  // Per column: s1[j] = sum(dy), s2[j] = sum(dy * (x - mean[j])), in f32 (overwritten).
  void (*col_dot)(const float* x, const float* dy, std::int64_t rows, std::int64_t cols,
                  std::int64_t ld, const float* mean, float* s1, float* s2);
  // y = (x - c) * a + b over n contiguous elements (scalars), or over a block with one c, a, b
  // per column. c is an element of the data (the moments' shift) or the mean, so x - c stays
  // small and the result does not cancel when |mean| >> std.
  // `stream`: full vectors aligned to their width go out with non-temporal stores (for
  // outputs past the last-level cache, which then skip the read for ownership); the caller
  // calls fence() on the same thread before the output is read elsewhere.
  void (*row_affine)(const float* x, std::int64_t n, float c, float a, float b, float* y,
                     bool stream);
  void (*col_affine)(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                     const float* c, const float* a, const float* b, float* y, bool stream);
  // dx = a * dy + b * (x - m) + c (scalars), or one a, b, m, c per column.
  void (*row_affine2)(const float* dy, const float* x, std::int64_t n, float a, float b, float m,
                      float c, float* dx, bool stream);
  void (*col_affine2)(const float* dy, const float* x, std::int64_t rows, std::int64_t cols,
                      std::int64_t ld, const float* a, const float* b, const float* m,
                      const float* c, float* dx, bool stream);
  // Layer norm, one row of k: xhat = (x - c) * invstd + t, y = xhat * scale + bias (bias may
  // be null); c is the row's shift and t = -(mean - c) * invstd. When `next` is not null,
  // also adds the moments of the row `next` (k elements) around next[0] to next_moments,
  // exactly as row_moments(next, k, next[0], ...) would.
  void (*ln_forward)(const float* x, std::int64_t k, float c, float t, float invstd,
                     const float* scale, const float* bias, float* y, const float* next,
                     double* next_moments, bool stream);
  // Layer norm backward over n elements of a row (a whole row, or a piece starting at a multiple
  // of kRowFlush from the row's start), with xhat = (x - mean) * invstd and g = dy * scale:
  // s[0] += sum(g), s[1] += sum(g * xhat) (f32 lanes flushed to f64 every kRowFlush);
  // dscale_acc += dy * xhat and dbias_acc += dy when not null. Both take the start of the
  // piece the caller reads next (ahead_x, ahead_dy; null for none) and prefetch its lines into
  // L2 as they go: pieces of long rows are short streams far apart, and the hardware
  // prefetcher has to find each anew.
  void (*ln_bwd_reduce)(const float* x, const float* dy, std::int64_t n, float mean,
                        float invstd, const float* scale, float* dscale_acc, float* dbias_acc,
                        double* s, const float* ahead_x, const float* ahead_dy);
  // Then dx = g * invstd + xhat * c1 + c0 with c0 = -invstd * mean(g) and
  // c1 = -invstd * mean(g * xhat) over the whole row.
  void (*ln_bwd_dx)(const float* x, const float* dy, std::int64_t n, float mean, float invstd,
                    const float* scale, float c0, float c1, float* dx, bool stream,
                    const float* ahead_x, const float* ahead_dy);
  void (*fence)();  // orders this thread's non-temporal stores
};

extern const NormKernels kNormGeneric;  // generic.cpp
extern const NormKernels kNormAvx2;     // avx2.cpp
extern const NormKernels kNormAvx512;   // avx512.cpp

}  // namespace tessera::dnn::norm
