// Shared by the recurrent networks' BLAS path (rnn.cpp) and reference (ref.cpp): the sizes of
// a problem, the reserve's layout, the step-to-time rule, and the checked calls the ordered
// implementation lists run.
#pragma once

#include <cstdint>

#include "tessera/dnn.hpp"

namespace tessera::dnn::rnn {

using i64 = std::int64_t;

struct Dims {
  i64 S, B, H, G, dirs, GH;
  bool lstm, gru, lbr, peep;
  i64 in(int l, const RnnDesc& d) const { return l == 0 ? d.input_size : dirs * H; }
};
Dims dims_of(const RnnDesc& d, i64 seq, i64 batch);

// The reserve: per layer, its output [S, B, dirs*H]; per layer and direction, per (t, b) a
// record of kRecord = GH + 2H floats: the gate activations (GH), the new state h (H), then the
// new cell c (LSTM) or q = h'Rh^T + Rbh (GRU with linear_before_reset) (H).
struct Reserve {
  i64 per_layer, per_dir;
  i64 y(int l) const { return l * per_layer; }
  i64 dir(int l, int d, const Dims& m) const { return l * per_layer + m.S * m.B * m.dirs * m.H + d * per_dir; }
};
Reserve reserve_of(const Dims& m);

// Time index of batch row b at step s of direction d, or -1 when its sequence has ended.
inline i64 time_of(int d, i64 s, i64 len) { return s >= len ? -1 : d == 0 ? s : len - 1 - s; }
// The time whose state precedes time t (-1: the initial state).
inline i64 prev_time(int d, i64 t, i64 len) { return d == 0 ? t - 1 : (t + 1 < len ? t + 1 : -1); }

// Checked arguments of rnn_forward / rnn_backward (public header's meaning; seq, batch > 0).
struct FwdCall {
  const RnnDesc& d;
  i64 seq, batch;
  const float* x;
  const std::int32_t* lens;
  const float *w, *h0, *c0;
  float *y, *hn, *cn, *reserve;
};
struct BwdCall {
  const RnnDesc& d;
  i64 seq, batch;
  const float* x;
  const std::int32_t* lens;
  const float *w, *h0, *c0, *reserve, *dy, *dhn, *dcn;
  float *dx, *dh0, *dc0, *dw;
};

}  // namespace tessera::dnn::rnn

// The reference: the ONNX equations one batch row, step and scalar at a time in double, no
// BLAS. The forward fills the reserve (when given) in the layout above, so the BLAS backward
// can run on it; the backward ignores the reserve and recomputes the forward.
namespace tessera::dnn::ref {
void rnn_forward(const rnn::FwdCall& c);
void rnn_backward(const rnn::BwdCall& c);
}  // namespace tessera::dnn::ref
