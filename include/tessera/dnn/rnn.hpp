// tessera DNN recurrent networks: vanilla RNN (tanh / relu), LSTM (optional peepholes), GRU
// (either linear-before-reset variant); multi-layer, bidirectional, variable sequence lengths;
// inference and training forward, backward for data and weights. Included by tessera/dnn.hpp.
//
// Layouts (f32, packed):
// - x: [seq, batch, input]; y: [seq, batch, dirs * hidden] (direction d's hidden state at
//   columns d*hidden .. d*hidden + hidden - 1; also the next layer's input).
// - h0, hn (and c0, cn for LSTM): [layers * dirs, batch, hidden], entry l * dirs + d.
// - weights: one buffer; per layer l and direction d, in that order, ONNX's tensors for one
//   direction: W [G*hidden, in_l], R [G*hidden, hidden], Wb [G*hidden], Rb [G*hidden], and for
//   LSTM with peepholes P [3*hidden]. in_0 = input, in_l = dirs * hidden. Gate order is
//   ONNX's: LSTM i, o, f, c; GRU z, r, h; RNN one gate (G = 4, 3, 1).
// - seq_lengths: [batch] i32 in [0, seq], or null for all seq. Steps at or past a sequence's
//   length leave its state alone and give y = 0; the reverse direction starts at its last
//   valid step (ONNX).
//
// Equations (ONNX; s = sigmoid, (.) elementwise):
//   RNN   h = act(x W^T + Wb + h' R^T + Rb)
//   LSTM  i = s(xWi + h'Ri + b_i + Pi (.) c'), f = s(xWf + h'Rf + b_f + Pf (.) c'),
//         g = tanh(xWc + h'Rc + b_c), c = f (.) c' + i (.) g, o = s(xWo + h'Ro + b_o + Po (.) c),
//         h = o (.) tanh(c)
//   GRU   z = s(xWz + h'Rz + b_z), r = s(xWr + h'Rr + b_r),
//         g = tanh(xWh + (r (.) h') Rh^T + Rbh + Wbh)         (linear_before_reset = false)
//         g = tanh(xWh + r (.) (h' Rh^T + Rbh) + Wbh)          (linear_before_reset = true)
//         h = (1 - z) (.) g + z (.) h'
// PyTorch's GRU is linear_before_reset = true with gates r, z, n; its LSTM gates are i, f, g, o.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tessera/dnn.hpp"

namespace tessera::dnn {

enum class RnnCell : int { kRnnTanh, kRnnRelu, kLstm, kGru };
std::string_view rnn_cell_name(RnnCell c);  // "rnn_tanh", "rnn_relu", "lstm", "gru"
std::optional<RnnCell> parse_rnn_cell(std::string_view name);

struct RnnDesc {
  RnnCell cell = RnnCell::kLstm;
  std::int64_t input_size = 0;
  std::int64_t hidden_size = 0;
  int layers = 1;
  bool bidirectional = false;
  bool linear_before_reset = false;  // GRU
  bool peepholes = false;            // LSTM
};
int rnn_gates(RnnCell c);  // 1, 1, 4, 3

// Offsets (in floats) of one layer's and direction's weights within the buffer.
struct RnnWeightParts {
  std::int64_t w = 0, r = 0, wb = 0, rb = 0, p = -1;  // p: -1 without peepholes
};
Result<RnnWeightParts> rnn_weight_parts(const RnnDesc& d, int layer, int dir);
Result<std::int64_t> rnn_weights_size(const RnnDesc& d);
// Floats of the reserve a training forward fills and the backward reads.
Result<std::int64_t> rnn_reserve_size(const RnnDesc& d, std::int64_t seq, std::int64_t batch);

// Forward. h0/c0 may be null (zeros); hn/cn may be null (not written); reserve null for
// inference, else rnn_reserve_size floats.
Status rnn_forward(Handle& h, const RnnDesc& d, std::int64_t seq, std::int64_t batch,
                   const float* x, const std::int32_t* seq_lengths, const float* weights,
                   const float* h0, const float* c0, float* y, float* hn, float* cn,
                   float* reserve);
// Backward of a training forward with the same arguments: dy (and dhn, dcn, null for zero)
// give dx, dh0, dc0 (null: not wanted) and dweights (overwritten, weights' layout).
Status rnn_backward(Handle& h, const RnnDesc& d, std::int64_t seq, std::int64_t batch,
                    const float* x, const std::int32_t* seq_lengths, const float* weights,
                    const float* h0, const float* c0, const float* reserve, const float* dy,
                    const float* dhn, const float* dcn, float* dx, float* dh0, float* dc0,
                    float* dweights);

}  // namespace tessera::dnn
