// Dropout and loss kernels on dense tensors, one table per instruction set: avx512.cpp and
// avx2.cpp (body.inc over the activation layer's Vec, vector math and row sums, plus each
// file's vectorised Philox) and generic.cpp (plain C++). training.cpp checks the arguments and
// runs the first entry of each ordered list that accepts; the reference (ref.cpp) ends every
// list.
//
// Storage is f32 or bf16/f16 bit patterns (act_kernels::Storage) with f32 compute; sums are
// row_sum's fixed order (f32 blocks of 1024 elements added in f64), so they depend on the sizes
// only, never on the thread count.
#pragma once

#include <cstdint>

#include "../activation/kernels.hpp"

namespace tessera::dnn::training_kernels {

using i64 = std::int64_t;
constexpr int kNumStorage = act_kernels::kNumStorage;

// ---- dropout ------------------------------------------------------------------------------------
// Element i of a row-major tensor is kept when (word i % 4 of Philox4x32-10 for counter
// (i / 4, offset) and key seed) >> 8 >= threshold (threshold = ceil(ratio 2^24), so the test is
// the reference's u >= ratio exactly); kept elements are scaled, the others are 0.
struct DropoutArgs {
  std::uint32_t key[2];
  std::uint32_t round_key[10][2];  // key + round (0x9E3779B9, 0xBB67AE85), round 0..9
  std::uint32_t offset[2];  // counter words 2 and 3
  std::uint32_t threshold;
  float scale;
};
// Elements [first, first + n) (first a multiple of kDropoutAlign): x, y and mask (which may be
// null) point at element `first`. `stream`: non-temporal stores for y.
constexpr i64 kDropoutAlign = 64;
using DropoutFwdFn = void (*)(i64 first, i64 n, const void* x, void* y, unsigned char* mask,
                              const DropoutArgs& a, bool stream);
// dx[i] = mask[i] ? dy[i] * scale : 0 over [0, n) (pointers at the first element).
using DropoutBwdFn = void (*)(i64 n, const unsigned char* mask, const void* dy, void* dx,
                              float scale, bool stream);

// ---- pointwise losses ---------------------------------------------------------------------------
// In PointLoss's order: mse, l1, smooth_l1, bce_with_logits.
enum PointKind : int { kMse, kL1, kSmoothL1, kBce, kNumPointKinds };
struct PointArgs {
  float beta = 1.0f;        // smooth_l1
  float pos_weight = 1.0f;  // bce_with_logits
};
// loss(x, t) over [0, n): into `out` (x's storage) when it is not null, else their sum (f64,
// row_sum's order) is returned.
using PointFwdFn = double (*)(i64 n, const void* x, const void* t, void* out, const PointArgs& a,
                              bool stream);
// dx = g * dloss/dx over [0, n), g per element from `g` (x's storage) or, when g is null, the
// scalar `gs`.
using PointBwdFn = void (*)(i64 n, const void* x, const void* t, const void* g, float gs,
                            void* dx, const PointArgs& a, bool stream);

// ---- softmax cross-entropy ------------------------------------------------------------------------
// Per sample: lse = log sum_c e^(x_c) (computed as m + log sum_c e^(x_c - m); an infinite max m
// gives m), and, when wx is not null, wx = sum_c w_c x_c (w null: every w_c = 1).
// The backward's per-sample coefficients (arrays indexed like lse):
//   dx_c = ka e^(x_c - lse) - kb w_c, minus kt at c = label; label < 0 (ignored): dx_c = 0.
// Labels are floats (exact: the fast paths take C < 2^24).
struct CeCoef {
  const float* ka;
  const float* kb;
  const float* kt;
  const float* label;
};
// Rows: `rows` samples of `len` contiguous scores each (row r at r * len).
using CeRowsFwdFn = void (*)(i64 rows, i64 len, const void* x, const float* w, double* lse,
                             double* wx);
using CeRowsBwdFn = void (*)(i64 rows, i64 len, const void* x, const float* w, const CeCoef& k,
                             void* dx, bool stream);
// Columns: samples [c0, c1) of one [len, inner] slice (score c of sample j at c * inner + j),
// vectorised across samples; x and dx at the slice's first element, lse and wx at its sample 0,
// k's arrays at sample c0.
using CeColsFwdFn = void (*)(i64 len, i64 inner, i64 c0, i64 c1, const void* x, const float* w,
                             double* lse, double* wx);
using CeColsBwdFn = void (*)(i64 len, i64 inner, i64 c0, i64 c1, const void* x, const float* w,
                             const CeCoef& k, void* dx);

struct Kernels {
  const char* isa;  // "avx512", "avx2", "generic"
  DropoutFwdFn dropout_fwd[kNumStorage];
  DropoutBwdFn dropout_bwd[kNumStorage];
  PointFwdFn point_fwd[kNumPointKinds][kNumStorage];
  PointBwdFn point_bwd[kNumPointKinds][kNumStorage];
  CeRowsFwdFn ce_rows_fwd[kNumStorage];
  CeRowsBwdFn ce_rows_bwd[kNumStorage];
  CeColsFwdFn ce_cols_fwd[kNumStorage];
  CeColsBwdFn ce_cols_bwd[kNumStorage];
};

extern const Kernels kAvx512;   // avx512.cpp
extern const Kernels kAvx2;     // avx2.cpp
extern const Kernels kGeneric;  // generic.cpp

}  // namespace tessera::dnn::training_kernels
