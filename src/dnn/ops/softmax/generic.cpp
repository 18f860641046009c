// Softmax kernels in plain C++: the reference's row arithmetic (row_math.hpp) on contiguous
// rows and columns, so results equal the reference's bit for bit.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../activation/generic_storage.hpp"
#include "kernels.hpp"
#include "row_math.hpp"

namespace tessera::dnn::softmax_kernels {
namespace {

using i64 = std::int64_t;

using act_kernels::ld;
using act_kernels::st;

// Row (or column) starting at element `base` with element stride `step`.
template <int Mode, int S>
void line_fwd(i64 len, i64 base, i64 step, const void* x, void* y) {
  softmax_row::forward(
      Mode == kLogSoftmax, len, [&](i64 i) { return ld<S>(x, base + i * step); },
      [&](i64 i, float v) { st<S>(y, base + i * step, v); });
}
template <int Mode, int S>
void line_bwd(i64 len, i64 base, i64 step, const void* y, const void* dy, void* dx) {
  softmax_row::backward(
      Mode == kLogSoftmax, len, [&](i64 i) { return ld<S>(y, base + i * step); },
      [&](i64 i) { return ld<S>(dy, base + i * step); },
      [&](i64 i, float v) { st<S>(dx, base + i * step, v); });
}

template <int Mode, int S>
void rows_fwd(i64 rows, i64 len, const void* x, void* y, bool) {
  for (i64 r = 0; r < rows; ++r) line_fwd<Mode, S>(len, r * len, 1, x, y);
}
template <int Mode, int S>
void rows_bwd(i64 rows, i64 len, const void* y, const void* dy, void* dx, bool) {
  for (i64 r = 0; r < rows; ++r) line_bwd<Mode, S>(len, r * len, 1, y, dy, dx);
}
template <int Mode, int S>
void cols_fwd(i64 len, i64 inner, i64 c0, i64 c1, i64 slices, const void* x, void* y, bool,
              float*) {
  for (i64 o = 0; o < slices; ++o)
    for (i64 c = c0; c < c1; ++c) line_fwd<Mode, S>(len, o * len * inner + c, inner, x, y);
}
template <int Mode, int S>
void cols_bwd(i64 len, i64 inner, i64 c0, i64 c1, const void* y, const void* dy, void* dx, bool) {
  for (i64 c = c0; c < c1; ++c) line_bwd<Mode, S>(len, c, inner, y, dy, dx);
}

// log_sum_exp of a line as the reference computes it (f64, in the line's order).
double line_lse(i64 len, i64 step, const float* x) {
  double m = -std::numeric_limits<double>::infinity();
  for (i64 i = 0; i < len; ++i) {
    const double v = x[i * step];
    if (m != m) break;
    if (v != v || v > m) m = v;
  }
  if (!std::isfinite(m)) return m;
  double s = 0.0;
  for (i64 i = 0; i < len; ++i) s += std::exp(x[i * step] - m);
  return m + std::log(s);
}
void lse_rows(i64 rows, i64 len, i64 ldx, const float* x, double* out) {
  for (i64 r = 0; r < rows; ++r) out[r] = line_lse(len, 1, x + r * ldx);
}
void lse_cols(i64 len, i64 ldx, i64 width, const float* x, const float*, double* out) {
  for (i64 j = 0; j < width; ++j) out[j] = line_lse(len, ldx, x + j);
}

template <int Mode, int S>
constexpr void fill(Kernels& t) {
  t.rows_fwd[Mode][S] = &rows_fwd<Mode, S>;
  t.rows_bwd[Mode][S] = &rows_bwd<Mode, S>;
  t.cols_fwd[Mode][S] = &cols_fwd<Mode, S>;
  t.cols_bwd[Mode][S] = &cols_bwd<Mode, S>;
}

constexpr Kernels make_kernels() {
  Kernels t{};
  t.isa = "generic";
  fill<kSoftmax, act_kernels::kF32>(t);
  fill<kSoftmax, act_kernels::kBF16>(t);
  fill<kSoftmax, act_kernels::kF16>(t);
  fill<kLogSoftmax, act_kernels::kF32>(t);
  fill<kLogSoftmax, act_kernels::kBF16>(t);
  fill<kLogSoftmax, act_kernels::kF16>(t);
  t.lse_rows = &lse_rows;
  t.lse_cols = &lse_cols;
  return t;
}

}  // namespace

extern const Kernels kGeneric = make_kernels();

}  // namespace tessera::dnn::softmax_kernels
