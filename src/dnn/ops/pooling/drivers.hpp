// Pooling drivers shared by the forward (impls.cpp) and backward (backward.cpp) files: the
// per-ISA kernel tables, window geometry built once a call, and the backward entry point.
// Generic code only.
#pragma once

#include <vector>

#include <tessera/core/cpu.hpp>

#include "kernels.hpp"
#include "pool.hpp"

namespace tessera::dnn::pool {

const PoolKernels& kernels_for(Isa isa);

// Per output column, the divisor factor of the W dim (average; 1 for max).
std::vector<float> count_w_of(const Geom& g);

// The input rows the windows of every output row (od, oh) cover, in window order: their offsets
// from the plane (or image) base under strides st and their spatial flat indices, and the
// average divisor factor of the D and H dims. The same for every plane, so built once a call.
struct WindowRows {
  i64 max_rows = 0;
  // offset/row_index/flat: max_rows per output row; flat is the row's index id * in_h + ih.
  std::vector<i64> count, offset, row_index, flat;
  std::vector<float> row_count;

  WindowRows(const Geom& g, const Strides5& st) : max_rows(g.k[0] * g.k[1]) {
    const i64 rows = g.out[0] * g.out[1];
    count.resize(static_cast<std::size_t>(rows));
    offset.resize(static_cast<std::size_t>(rows * max_rows));
    row_index.resize(offset.size());
    flat.resize(offset.size());
    row_count.resize(count.size());
    for (i64 od = 0; od < g.out[0]; ++od)
      for (i64 oh = 0; oh < g.out[1]; ++oh) {
        const i64 w = od * g.out[1] + oh;
        i64 dlo, dhi, hlo, hhi;
        valid_taps(g, 0, od, &dlo, &dhi);
        valid_taps(g, 1, oh, &hlo, &hhi);
        i64 n = 0;
        for (i64 kd = dlo; kd < dhi; ++kd) {
          const i64 id = od * g.s[0] - g.pb[0] + kd * g.d[0];
          for (i64 kh = hlo; kh < hhi; ++kh) {
            const i64 ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
            offset[static_cast<std::size_t>(w * max_rows + n)] = id * st.v[2] + ih * st.v[3];
            row_index[static_cast<std::size_t>(w * max_rows + n)] = (id * g.in[1] + ih) * g.in[2];
            flat[static_cast<std::size_t>(w * max_rows + n)] = id * g.in[1] + ih;
            ++n;
          }
        }
        count[static_cast<std::size_t>(w)] = n;
        row_count[static_cast<std::size_t>(w)] =
            g.is_max() ? 1.0f : static_cast<float>(divisor_taps(g, 0, od) * divisor_taps(g, 1, oh));
      }
  }
  const i64* offsets(i64 w) const { return offset.data() + w * max_rows; }
  const i64* indices(i64 w) const { return row_index.data() + w * max_rows; }
  const i64* rows(i64 w) const { return flat.data() + w * max_rows; }

  // The rows of window w + 1 that window w does not reach (windows move down), of the image
  // at xb, each len floats, added to ahead / ahead_len (PoolFwdRow) from n on; the new count.
  // w = -1: every row of window 0.
  i64 next_rows(i64 w, const float* xb, i64 len, const float** ahead, i64* ahead_len,
                i64 n) const {
    if (w + 1 >= static_cast<i64>(count.size())) return n;
    const i64 cw = w < 0 ? 0 : count[static_cast<std::size_t>(w)];
    const i64 last = cw > 0 ? rows(w)[cw - 1] : -1;
    for (i64 i = 0; i < count[static_cast<std::size_t>(w + 1)]; ++i)
      if (rows(w + 1)[i] > last) {
        ahead[n] = xb + offsets(w + 1)[i];
        ahead_len[n++] = len;
      }
    return n;
  }
};

// The innermost dim's geometry with its tap ranges (per output position, the taps inside the
// input) and the interior where every tap is inside; `taps` holds the ranges.
RowGeom row_geom(const Geom& g, bool nhwc, std::vector<i64>& taps);

// Global pooling: the window is the whole input (each dim's window its input, no padding,
// dilation 1), one output per plane (average: dividing by the plane's size; max: its first
// maximum, at its flat index in the plane).
inline bool global_window(const Geom& g) {
  for (int i = 0; i < 3; ++i)
    if (g.k[i] != g.in[i] || g.pb[i] != 0 || g.pe[i] != 0 || g.d[i] != 1 || g.out[i] != 1) return false;
  return g.in_plane() > 0;
}

// Whether PoolKernels::planes_nchw applies (2-D, packed NCHW x and out), and its arguments
// for `planes` planes from x (count_h and count_w: average divisors, null for max).
bool planes_apply(const Geom& g, const TensorDesc& x_desc, const TensorDesc& out_desc);
PoolPlanes planes_args(const Geom& g, const float* x, i64 planes, float* y,
                       std::int64_t* indices, const float* x_begin, const float* x_end,
                       bool stream, const float* count_h, const float* count_w);

// Backward of a problem the fast lists accepted, on kernels K (backward.cpp).
Status run_backward(Handle& h, const BwdProblem& p, const PoolKernels& K, Layout layout);

}  // namespace tessera::dnn::pool
