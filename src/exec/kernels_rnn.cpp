// ONNX RNN, LSTM and GRU on the dnn recurrent primitive (one layer, forward or bidirectional,
// optional biases, sequence lengths, initial states, LSTM peepholes, both layouts). The
// primitive runs the default activations (RNN tanh or relu; LSTM and GRU sigmoid/tanh);
// other activation lists, clip and input_forget are refused by name. Direction "reverse"
// runs as the reverse half of a bidirectional primitive whose forward half is all zeros.
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/rnn.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

// x as a packed f32 tensor in [seq, batch, ...] order (layout 1 gives [batch, seq, ...]).
Result<Tensor> seq_major(dnn::Handle& h, const Tensor& x, bool batch_major) {
  if (!batch_major) return as_f32(h, x);
  TESSERA_ASSIGN_OR_RETURN(Tensor t, x.transpose(0, 1));
  return as_f32(h, t);
}

// Copies n floats of `t` (f32, packed) starting at float `from` into dst.
void put(float* dst, const Tensor& t, std::int64_t from, std::int64_t n) {
  std::memcpy(dst, t.data<float>() + from, static_cast<std::size_t>(n) * sizeof(float));
}

}  // namespace

Status rnn_kernel(KernelCall& c) {
  const std::string& op = c.node.op_type;
  dnn::RnnDesc d;
  if (op == "LSTM") d.cell = dnn::RnnCell::kLstm;
  else if (op == "GRU") d.cell = dnn::RnnCell::kGru;
  else d.cell = dnn::RnnCell::kRnnTanh;
  const std::string dir = c.attr_string("direction", "forward");
  if (dir != "forward" && dir != "bidirectional" && dir != "reverse") return invalid_argument("direction '" + dir + "'");
  d.bidirectional = dir != "forward";
  const int first = dir == "reverse" ? 1 : 0;  // the primitive's direction of ONNX's direction 0
  if (c.attr("clip")) return unsupported(op + " with clip");
  if (c.attr_int("input_forget", 0) != 0) return unsupported("LSTM with input_forget");
  if (const graph::Attribute* a = c.attr("activations")) {
    const std::vector<std::string> lstm = {"Sigmoid", "Tanh", "Tanh"}, gru = {"Sigmoid", "Tanh"};
    bool ok = true;
    for (std::size_t i = 0; i < a->strings.size(); ++i) {
      const std::string& s = a->strings[i];
      if (d.cell == dnn::RnnCell::kLstm) ok = ok && s == lstm[i % 3];
      else if (d.cell == dnn::RnnCell::kGru) ok = ok && s == gru[i % 2];
      else if (s == "Relu" && (i == 0 || d.cell == dnn::RnnCell::kRnnRelu)) d.cell = dnn::RnnCell::kRnnRelu;
      else ok = ok && s == "Tanh" && d.cell == dnn::RnnCell::kRnnTanh;
    }
    if (!ok) return unsupported(op + " with activations other than the defaults (or Relu for RNN)");
  }
  d.linear_before_reset = c.attr_int("linear_before_reset", 0) != 0;
  const bool batch_major = c.attr_int("layout", 0) != 0;
  const int dirs = dir == "bidirectional" ? 2 : 1;  // ONNX's directions
  const int gates = dnn::rnn_gates(d.cell);

  const Tensor& xt = *c.input(0);
  if (xt.rank() != 3) return invalid_argument(op + "'s X must be 3-D");
  TESSERA_ASSIGN_OR_RETURN(Tensor x, seq_major(c.h, xt, batch_major));
  const std::int64_t seq = x.shape()[0], batch = x.shape()[1];
  d.input_size = x.shape()[2];
  d.hidden_size = c.attr_int("hidden_size", c.input(2)->shape()[2]);
  const std::int64_t H = d.hidden_size, GH = gates * H;
  TESSERA_ASSIGN_OR_RETURN(Tensor w, as_f32(c.h, *c.input(1)));
  TESSERA_ASSIGN_OR_RETURN(Tensor r, as_f32(c.h, *c.input(2)));
  if (w.shape().dims() != Dims{dirs, GH, d.input_size} || r.shape().dims() != Dims{dirs, GH, H})
    return invalid_argument(op + "'s W " + w.shape().to_string() + " or R " + r.shape().to_string() + " does not match " +
                            std::to_string(dirs) + " directions, hidden size " + std::to_string(H) + " and input size " + std::to_string(d.input_size));
  Tensor b, p;
  if (const Tensor* bt = c.input(3)) {
    TESSERA_ASSIGN_OR_RETURN(b, as_f32(c.h, *bt));
    if (b.numel() != dirs * 2 * GH) return invalid_argument(op + "'s B has " + std::to_string(b.numel()) + " values, expected " + std::to_string(dirs * 2 * GH));
  }
  if (d.cell == dnn::RnnCell::kLstm && c.input(7)) {
    TESSERA_ASSIGN_OR_RETURN(p, as_f32(c.h, *c.input(7)));
    if (p.numel() != dirs * 3 * H) return invalid_argument("LSTM's P has " + std::to_string(p.numel()) + " values, expected " + std::to_string(dirs * 3 * H));
    d.peepholes = true;
  }
  // The primitive's weight buffer: per direction W, R, Wb, Rb (zeros when B is left out), P.
  TESSERA_ASSIGN_OR_RETURN(const std::int64_t wsize, dnn::rnn_weights_size(d));
  std::vector<float> weights(static_cast<std::size_t>(wsize), 0.0f);
  for (int k = 0; k < dirs; ++k) {
    TESSERA_ASSIGN_OR_RETURN(const dnn::RnnWeightParts parts, dnn::rnn_weight_parts(d, 0, k + first));
    put(weights.data() + parts.w, w, k * GH * d.input_size, GH * d.input_size);
    put(weights.data() + parts.r, r, k * GH * H, GH * H);
    if (b.defined()) {
      put(weights.data() + parts.wb, b, k * 2 * GH, GH);
      put(weights.data() + parts.rb, b, k * 2 * GH + GH, GH);
    }
    if (d.peepholes) put(weights.data() + parts.p, p, k * 3 * H, 3 * H);
  }
  Tensor lens;
  if (const Tensor* lt = c.input(4)) {
    TESSERA_ASSIGN_OR_RETURN(lens, like(*lt, DType::kI32));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(*lt), lt->data(), desc(lens), lens.data()));
  }
  // Initial states: [dirs, batch, H] (layout 1: [batch, dirs, H]).
  const std::int64_t pdirs = d.bidirectional ? 2 : 1;  // the primitive's
  Tensor state[2];
  for (int k = 0; k < 2; ++k) {
    const Tensor* t = c.input(k == 0 ? 5 : 6);
    if (!t || (k == 1 && d.cell != dnn::RnnCell::kLstm)) continue;
    TESSERA_ASSIGN_OR_RETURN(Tensor given, seq_major(c.h, *t, batch_major));
    if (given.shape().dims() != Dims{dirs, batch, H}) return invalid_argument(std::string(k == 0 ? "initial_h" : "initial_c") + " has dims " + t->shape().to_string());
    TESSERA_ASSIGN_OR_RETURN(state[k], new_tensor({pdirs, batch, H}, DType::kF32));
    std::memset(state[k].data(), 0, state[k].nbytes());
    put(state[k].data<float>() + first * batch * H, given, 0, given.numel());
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor y, new_tensor({seq, batch, pdirs, H}, DType::kF32));
  TESSERA_ASSIGN_OR_RETURN(Tensor hn, new_tensor({pdirs, batch, H}, DType::kF32));
  TESSERA_ASSIGN_OR_RETURN(Tensor cn, new_tensor({pdirs, batch, H}, DType::kF32));
  TESSERA_RETURN_IF_ERROR(dnn::rnn_forward(c.h, d, seq, batch, x.data<float>(), lens.defined() ? lens.data<std::int32_t>() : nullptr,
                                           weights.data(), state[0].defined() ? state[0].data<float>() : nullptr,
                                           state[1].defined() ? state[1].data<float>() : nullptr, y.data<float>(), hn.data<float>(),
                                           d.cell == dnn::RnnCell::kLstm ? cn.data<float>() : nullptr, nullptr));
  // Y: [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]); Y_h, Y_c: [dirs, batch, H]
  // (layout 1: [batch, dirs, H]); each in the input's dtype.
  TESSERA_ASSIGN_OR_RETURN(Tensor yv, batch_major ? y.permute({1, 0, 2, 3}) : y.permute({0, 2, 1, 3}));
  if (first) {  // "reverse": the primitive's second direction
    TESSERA_ASSIGN_OR_RETURN(yv, yv.slice(batch_major ? 2 : 1, 1, 2));
    TESSERA_ASSIGN_OR_RETURN(hn, hn.slice(0, 1, 2));
    TESSERA_ASSIGN_OR_RETURN(cn, cn.slice(0, 1, 2));
  }
  const Tensor outs[3] = {yv, hn, cn};
  for (std::size_t k = 0; k < c.out.size() && k < 3; ++k) {
    if (c.node.outputs[k] == graph::kNoValue) continue;
    Tensor t = outs[k];
    if (k > 0 && batch_major) {
      TESSERA_ASSIGN_OR_RETURN(t, t.transpose(0, 1));
    }
    TESSERA_ASSIGN_OR_RETURN(c.out[k], c.output(k, t.shape().dims(), xt.dtype()));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(t), t.data(), desc(c.out[k]), c.out[k].data()));
  }
  return Status::ok();
}

}  // namespace tessera::exec::detail
