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

// An ONNX RNN/LSTM/GRU node's problem for the dnn primitive: its descriptor, X in [seq, batch,
// input] order, the primitive's weight buffer, the lengths and the initial states (the
// primitive's [pdirs, batch, H], zeros in the half "reverse" leaves unused).
struct RnnSetup {
  dnn::RnnDesc d;
  int dirs = 1, first = 0, gates = 1;  // ONNX's directions; the primitive's direction of ONNX's 0
  bool batch_major = false;
  std::int64_t seq = 0, batch = 0, pdirs = 1;
  Tensor x, lens, state[2];
  std::vector<float> weights;
};

Result<RnnSetup> rnn_setup(KernelCall& c, const std::string& op) {
  RnnSetup st;
  dnn::RnnDesc& d = st.d;
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
  st.weights.assign(static_cast<std::size_t>(wsize), 0.0f);
  for (int k = 0; k < dirs; ++k) {
    TESSERA_ASSIGN_OR_RETURN(const dnn::RnnWeightParts parts, dnn::rnn_weight_parts(d, 0, k + first));
    put(st.weights.data() + parts.w, w, k * GH * d.input_size, GH * d.input_size);
    put(st.weights.data() + parts.r, r, k * GH * H, GH * H);
    if (b.defined()) {
      put(st.weights.data() + parts.wb, b, k * 2 * GH, GH);
      put(st.weights.data() + parts.rb, b, k * 2 * GH + GH, GH);
    }
    if (d.peepholes) put(st.weights.data() + parts.p, p, k * 3 * H, 3 * H);
  }
  if (const Tensor* lt = c.input(4)) {
    TESSERA_ASSIGN_OR_RETURN(st.lens, like(*lt, DType::kI32));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(*lt), lt->data(), desc(st.lens), st.lens.data()));
  }
  // Initial states: [dirs, batch, H] (layout 1: [batch, dirs, H]).
  const std::int64_t pdirs = d.bidirectional ? 2 : 1;  // the primitive's
  for (int k = 0; k < 2; ++k) {
    const Tensor* t = c.input(k == 0 ? 5 : 6);
    if (!t || (k == 1 && d.cell != dnn::RnnCell::kLstm)) continue;
    TESSERA_ASSIGN_OR_RETURN(Tensor given, seq_major(c.h, *t, batch_major));
    if (given.shape().dims() != Dims{dirs, batch, H}) return invalid_argument(std::string(k == 0 ? "initial_h" : "initial_c") + " has dims " + t->shape().to_string());
    TESSERA_ASSIGN_OR_RETURN(st.state[k], new_tensor({pdirs, batch, H}, DType::kF32));
    std::memset(st.state[k].data(), 0, st.state[k].nbytes());
    put(st.state[k].data<float>() + first * batch * H, given, 0, given.numel());
  }
  st.dirs = dirs;
  st.first = first;
  st.gates = gates;
  st.batch_major = batch_major;
  st.seq = seq;
  st.batch = batch;
  st.pdirs = pdirs;
  st.x = std::move(x);
  return st;
}

}  // namespace

Status rnn_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(RnnSetup st, rnn_setup(c, c.node.op_type));
  const dnn::RnnDesc& d = st.d;
  const Tensor& xt = *c.input(0);
  const std::int64_t seq = st.seq, batch = st.batch, pdirs = st.pdirs, H = d.hidden_size;
  const int first = st.first;
  const bool batch_major = st.batch_major;
  const Tensor& x = st.x;
  const Tensor& lens = st.lens;
  std::vector<float>& weights = st.weights;
  Tensor* state = st.state;
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

// RNNGrad (tessera): the gradients of an ONNX RNN, LSTM or GRU node (attribute rnn_op, the
// node's own attributes). Inputs: the node's eight (X, W, R, B, sequence_lens, initial_h,
// initial_c, P; omitted as they were) then dY, dY_h, dY_c (omitted: zeros). Outputs, by the
// input they belong to: dX, dW, dR, dB, -, dinitial_h, dinitial_c, dP. The training forward is
// run again for the primitive's reserve, then its backward pass.
Status rnn_grad_kernel(KernelCall& c) {
  const std::string op = c.attr_string("rnn_op", "");
  if (op != "RNN" && op != "LSTM" && op != "GRU") return invalid_argument("RNNGrad: rnn_op '" + op + "' (RNN, LSTM or GRU)");
  if (c.input(0)->dtype() != DType::kF32) return unsupported("RNNGrad of " + std::string(dtype_name(c.input(0)->dtype())) + " (f32 only)");
  TESSERA_ASSIGN_OR_RETURN(RnnSetup st, rnn_setup(c, op));
  const dnn::RnnDesc& d = st.d;
  const std::int64_t seq = st.seq, batch = st.batch, pdirs = st.pdirs, H = d.hidden_size, GH = st.gates * H, in = d.input_size;
  const bool lstm = d.cell == dnn::RnnCell::kLstm;
  TESSERA_ASSIGN_OR_RETURN(const std::int64_t rsize, dnn::rnn_reserve_size(d, seq, batch));
  std::vector<float> reserve(static_cast<std::size_t>(rsize)), y(static_cast<std::size_t>(seq * batch * pdirs * H)),
      hn(static_cast<std::size_t>(pdirs * batch * H)), cn(hn.size());
  const std::int32_t* lens = st.lens.defined() ? st.lens.data<std::int32_t>() : nullptr;
  const float* h0 = st.state[0].defined() ? st.state[0].data<float>() : nullptr;
  const float* c0 = st.state[1].defined() ? st.state[1].data<float>() : nullptr;
  TESSERA_RETURN_IF_ERROR(dnn::rnn_forward(c.h, d, seq, batch, st.x.data<float>(), lens, st.weights.data(), h0, c0, y.data(), hn.data(),
                                           lstm ? cn.data() : nullptr, reserve.data()));
  // dY [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]) into the primitive's
  // [seq, batch, pdirs, H]; dY_h, dY_c [dirs, batch, H] (layout 1: [batch, dirs, H]) into
  // [pdirs, batch, H]; ONNX's direction k is the primitive's first + k.
  std::vector<float> dy(y.size(), 0.0f), dhn(hn.size(), 0.0f), dcn(hn.size(), 0.0f);
  if (const Tensor* t = c.input(8)) {
    TESSERA_ASSIGN_OR_RETURN(const Tensor g, t->contiguous());
    if (g.numel() != seq * st.dirs * batch * H) return invalid_argument("RNNGrad: dY " + g.shape().to_string() + " does not fit Y");
    const float* src = g.data<float>();
    for (std::int64_t s = 0; s < seq; ++s)
      for (std::int64_t k = 0; k < st.dirs; ++k)
        for (std::int64_t b = 0; b < batch; ++b) {
          const std::int64_t from = st.batch_major ? ((b * seq + s) * st.dirs + k) * H : ((s * st.dirs + k) * batch + b) * H;
          std::memcpy(dy.data() + ((s * batch + b) * pdirs + st.first + k) * H, src + from, static_cast<std::size_t>(H) * sizeof(float));
        }
  }
  const auto state_in = [&](const Tensor* t, std::vector<float>& to) -> Status {
    if (!t) return Status::ok();
    TESSERA_ASSIGN_OR_RETURN(const Tensor g, t->contiguous());
    if (g.numel() != st.dirs * batch * H) return invalid_argument("RNNGrad: a state gradient " + g.shape().to_string() + " does not fit");
    for (std::int64_t k = 0; k < st.dirs; ++k)
      for (std::int64_t b = 0; b < batch; ++b)
        std::memcpy(to.data() + ((st.first + k) * batch + b) * H, g.data<float>() + (st.batch_major ? b * st.dirs + k : k * batch + b) * H,
                    static_cast<std::size_t>(H) * sizeof(float));
    return Status::ok();
  };
  TESSERA_RETURN_IF_ERROR(state_in(c.input(9), dhn));
  TESSERA_RETURN_IF_ERROR(state_in(lstm ? c.input(10) : nullptr, dcn));
  std::vector<float> dx(static_cast<std::size_t>(seq * batch * in)), dh0(hn.size()), dc0(hn.size()), dw(st.weights.size());
  TESSERA_RETURN_IF_ERROR(dnn::rnn_backward(c.h, d, seq, batch, st.x.data<float>(), lens, st.weights.data(), h0, c0, reserve.data(), dy.data(), dhn.data(),
                                            lstm ? dcn.data() : nullptr, dx.data(), dh0.data(), lstm ? dc0.data() : nullptr, dw.data()));
  const auto wants = [&](std::size_t k) { return k < c.out.size() && c.node.outputs[k] != graph::kNoValue; };
  if (wants(0)) {  // dX back to X's layout
    TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, c.input(0)->shape().dims(), DType::kF32));
    float* to = c.out[0].data<float>();
    for (std::int64_t s = 0; s < seq; ++s)
      for (std::int64_t b = 0; b < batch; ++b)
        std::memcpy(to + (st.batch_major ? b * seq + s : s * batch + b) * in, dx.data() + (s * batch + b) * in, static_cast<std::size_t>(in) * sizeof(float));
  }
  // The weights' gradients per ONNX direction: W, R, B (Wb then Rb), P.
  const std::int64_t sizes[4] = {GH * in, GH * H, 2 * GH, 3 * H};
  const std::size_t slots[4] = {1, 2, 3, 7};
  for (int part = 0; part < 4; ++part) {
    const std::size_t k = slots[part];
    if (!wants(k) || (part == 3 && !d.peepholes)) continue;
    TESSERA_ASSIGN_OR_RETURN(c.out[k], c.output(k, c.input(k)->shape().dims(), DType::kF32));
    for (int dir = 0; dir < st.dirs; ++dir) {
      TESSERA_ASSIGN_OR_RETURN(const dnn::RnnWeightParts parts, dnn::rnn_weight_parts(d, 0, dir + st.first));
      float* to = c.out[k].data<float>() + dir * sizes[part];
      if (part == 0) std::memcpy(to, dw.data() + parts.w, static_cast<std::size_t>(sizes[0]) * sizeof(float));
      if (part == 1) std::memcpy(to, dw.data() + parts.r, static_cast<std::size_t>(sizes[1]) * sizeof(float));
      if (part == 2) {
        std::memcpy(to, dw.data() + parts.wb, static_cast<std::size_t>(GH) * sizeof(float));
        std::memcpy(to + GH, dw.data() + parts.rb, static_cast<std::size_t>(GH) * sizeof(float));
      }
      if (part == 3) std::memcpy(to, dw.data() + parts.p, static_cast<std::size_t>(sizes[3]) * sizeof(float));
    }
  }
  for (std::size_t k = 5; k < 7; ++k) {  // the initial states' gradients
    if (!wants(k) || !c.input(k)) continue;
    const std::vector<float>& from = k == 5 ? dh0 : dc0;
    TESSERA_ASSIGN_OR_RETURN(c.out[k], c.output(k, c.input(k)->shape().dims(), DType::kF32));
    for (std::int64_t dir = 0; dir < st.dirs; ++dir)
      for (std::int64_t b = 0; b < batch; ++b)
        std::memcpy(c.out[k].data<float>() + (st.batch_major ? b * st.dirs + dir : dir * batch + b) * H, from.data() + ((st.first + dir) * batch + b) * H,
                    static_cast<std::size_t>(H) * sizeof(float));
  }
  return Status::ok();
}

}  // namespace tessera::exec::detail
