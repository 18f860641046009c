// Recurrent networks on the BLAS layer. Per layer and direction:
// - forward: one GEMM projects every step's input (xW^T + biases); then per step one GEMM with R
//   (two for GRU: z, r first, then the h gate) and the cell's elementwise update. Rows of the
//   batch whose sequence has ended keep their state. A training forward saves, per time step,
//   the gate activations, the new state, and what the backward's R products need.
// - backward: per step in reverse the gate gradients (elementwise) and dh' = dgates R (GEMM);
//   the gate gradients of all steps are kept, so dW, dR, the bias gradients and dx are each one
//   GEMM (or column sum) at the end.
// Sums run in a fixed order and BLAS runs in its bitwise mode: any thread count gives the same
// bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../activation/kernels.hpp"
#include "rnn.hpp"
#include "tessera/blas.hpp"

namespace tessera::dnn {
namespace {

using i64 = std::int64_t;
using std::to_string;
std::size_t z(i64 i) { return static_cast<std::size_t>(i); }

namespace ak = act_kernels;
using namespace rnn;  // Dims, Reserve, time_of, the calls

// The activations' vector math (sigmoid, tanh on rows) of the best ISA allowed.
const ak::Kernels& math_table() { return detail::best_allowed(ak::kAvx512, ak::kAvx2, ak::kGeneric); }

// Row-major C[M, N] = alpha op(A) op(B) + beta C through column-major BLAS (C^T = op(B)^T op(A)^T).
Status mm(Handle& h, bool ta, bool tb, i64 M, i64 N, i64 K, float alpha, const float* A, i64 lda, const float* B,
          i64 ldb, float beta, float* C, i64 ldc) {
  if (M == 0 || N == 0) return Status::ok();
  return blas::gemm<float>(h.blas(), tb ? blas::Op::kTrans : blas::Op::kNoTrans, ta ? blas::Op::kTrans : blas::Op::kNoTrans,
                           N, M, K, alpha, B, std::max<i64>(1, ldb), A, std::max<i64>(1, lda), beta, C,
                           std::max<i64>(1, ldc));
}

Status check(const std::string& fn, const RnnDesc& d, i64 seq, i64 batch, const std::int32_t* lens) {
  if (rnn_cell_name(d.cell).empty()) return invalid_argument(fn + ": unknown cell");
  if (d.input_size < 1 || d.hidden_size < 1 || d.layers < 1)
    return invalid_argument(fn + ": input_size " + to_string(d.input_size) + ", hidden_size " + to_string(d.hidden_size) +
                            " and layers " + to_string(d.layers) + " must be >= 1");
  if (seq < 0 || batch < 0) return invalid_argument(fn + ": seq " + to_string(seq) + " and batch " + to_string(batch) + " must be >= 0");
  if (d.peepholes && d.cell != RnnCell::kLstm) return invalid_argument(fn + ": peepholes are an LSTM option");
  if (d.linear_before_reset && d.cell != RnnCell::kGru) return invalid_argument(fn + ": linear_before_reset is a GRU option");
  const double elems = static_cast<double>(seq) * static_cast<double>(batch) * static_cast<double>(d.hidden_size) * 8.0 *
                       static_cast<double>(d.layers) * 2.0 + static_cast<double>(d.input_size) * static_cast<double>(d.hidden_size) * 8.0;
  if (elems > 1e15) return invalid_argument(fn + ": sizes are too large");
  if (lens != nullptr)
    for (i64 b = 0; b < batch; ++b)
      if (lens[b] < 0 || lens[b] > seq)
        return invalid_argument(fn + ": seq_lengths[" + to_string(b) + "] = " + to_string(lens[b]) + " is outside [0, " + to_string(seq) + "]");
  return Status::ok();
}

}  // namespace

namespace rnn {

Dims dims_of(const RnnDesc& d, i64 seq, i64 batch) {
  Dims m{};
  m.S = seq;
  m.B = batch;
  m.H = d.hidden_size;
  m.G = rnn_gates(d.cell);
  m.dirs = d.bidirectional ? 2 : 1;
  m.GH = m.G * m.H;
  m.lstm = d.cell == RnnCell::kLstm;
  m.gru = d.cell == RnnCell::kGru;
  m.lbr = m.gru && d.linear_before_reset;
  m.peep = m.lstm && d.peepholes;
  return m;
}

Reserve reserve_of(const Dims& m) {
  Reserve r{};
  r.per_dir = m.S * m.B * (m.GH + 2 * m.H);
  r.per_layer = m.S * m.B * m.dirs * m.H + m.dirs * r.per_dir;
  return r;
}

}  // namespace rnn

int rnn_gates(RnnCell c) { return c == RnnCell::kLstm ? 4 : c == RnnCell::kGru ? 3 : 1; }

Result<RnnWeightParts> rnn_weight_parts(const RnnDesc& d, int layer, int dir) {
  TESSERA_RETURN_IF_ERROR(check("rnn_weight_parts", d, 0, 0, nullptr));
  const int dirs = d.bidirectional ? 2 : 1;
  if (layer < 0 || layer >= d.layers || dir < 0 || dir >= dirs)
    return invalid_argument("rnn_weight_parts: layer " + to_string(layer) + " / direction " + to_string(dir) + " out of range");
  const i64 H = d.hidden_size, GH = rnn_gates(d.cell) * H;
  i64 off = 0;
  RnnWeightParts p;
  for (int l = 0; l <= layer; ++l)
    for (int k = 0; k < dirs; ++k) {
      const i64 in = l == 0 ? d.input_size : dirs * H;
      if (l == layer && k == dir) {
        p.w = off;
        p.r = off + GH * in;
        p.wb = p.r + GH * H;
        p.rb = p.wb + GH;
        p.p = d.peepholes ? p.rb + GH : -1;
        return p;
      }
      off += GH * in + GH * H + 2 * GH + (d.peepholes ? 3 * H : 0);
    }
  return p;
}

Result<i64> rnn_weights_size(const RnnDesc& d) {
  TESSERA_RETURN_IF_ERROR(check("rnn_weights_size", d, 0, 0, nullptr));
  const int dirs = d.bidirectional ? 2 : 1;
  TESSERA_ASSIGN_OR_RETURN(RnnWeightParts p, rnn_weight_parts(d, d.layers - 1, dirs - 1));
  return (d.peepholes ? p.p + 3 * d.hidden_size : p.rb + rnn_gates(d.cell) * d.hidden_size);
}

Result<i64> rnn_reserve_size(const RnnDesc& d, i64 seq, i64 batch) {
  TESSERA_RETURN_IF_ERROR(check("rnn_reserve_size", d, seq, batch, nullptr));
  return reserve_of(dims_of(d, seq, batch)).per_layer * d.layers;
}

namespace {

// The BLAS path (see the top of the file).
Status blas_forward(Handle& h, const FwdCall& c) {
  const RnnDesc& d = c.d;
  const std::int32_t* lens = c.lens;
  const float *x = c.x, *weights = c.w, *h0 = c.h0, *c0 = c.c0;
  float *y = c.y, *hn = c.hn, *cn = c.cn, *reserve = c.reserve;
  const Dims m = dims_of(d, c.seq, c.batch);
  {
    const Reserve rs = reserve_of(m);
    const i64 S = m.S, B = m.B, H = m.H, GH = m.GH, dirs = m.dirs;
    const ak::Kernels& mt = math_table();
    const auto sigmoid = [&](i64 n, const float* a, float* b) { mt.math[ak::kMathSigmoid](n, a, b); };
    const auto tanh_ = [&](i64 n, const float* a, float* b) { mt.math[ak::kMathTanh](n, a, b); };
    std::vector<float> ybuf[2], xw(z(S * B * GH)), gates(z(B * GH)), rec(z(B * GH)), hcur(z(B * H)), ccur(z(B * H)),
        tmp(z(B * H));
    const float* in = x;
    for (int l = 0; l < d.layers; ++l) {
      const i64 IN = m.in(l, d);
      const bool last = l + 1 == d.layers;
      float* out = reserve != nullptr ? reserve + rs.y(l) : last ? y : (ybuf[l % 2].resize(z(S * B * dirs * H)), ybuf[l % 2].data());
      std::fill(out, out + S * B * dirs * H, 0.0f);
      for (int dir = 0; dir < dirs; ++dir) {
        TESSERA_ASSIGN_OR_RETURN(RnnWeightParts wp, rnn_weight_parts(d, l, static_cast<int>(dir)));
        const float* W = weights + wp.w;
        const float* R = weights + wp.r;
        const float* Wb = weights + wp.wb;
        const float* Rb = weights + wp.rb;
        const float* P = wp.p >= 0 ? weights + wp.p : nullptr;
        float* res = reserve != nullptr ? reserve + rs.dir(l, dir, m) : nullptr;
        // xw = in W^T + Wb + Rb (GRU with linear_before_reset: Rb of the h gate goes inside r (.)).
        TESSERA_RETURN_IF_ERROR(mm(h, false, true, S * B, GH, IN, 1.0f, in, IN, W, IN, 0.0f, xw.data(), GH));
        for (i64 row = 0; row < S * B; ++row)
          for (i64 j = 0; j < GH; ++j) xw[z(row * GH + j)] += Wb[j] + (m.lbr && j >= 2 * H ? 0.0f : Rb[j]);
        const i64 sidx = l * dirs + dir;
        for (i64 b = 0; b < B; ++b)
          for (i64 k = 0; k < H; ++k) {
            hcur[z(b * H + k)] = h0 != nullptr ? h0[(sidx * B + b) * H + k] : 0.0f;
            ccur[z(b * H + k)] = m.lstm && c0 != nullptr ? c0[(sidx * B + b) * H + k] : 0.0f;
          }
        for (i64 s = 0; s < S; ++s) {
          // The recurrent part: h' R^T (GRU: the z and r gates only, the h gate below).
          TESSERA_RETURN_IF_ERROR(mm(h, false, true, B, m.gru ? 2 * H : GH, H, 1.0f, hcur.data(), H, R, H, 0.0f, rec.data(), GH));
          for (i64 b = 0; b < B; ++b) {
            const i64 t = time_of(dir, s, lens != nullptr ? lens[b] : S);
            if (t < 0) continue;
            float* g = &gates[z(b * GH)];
            const float* xr = &xw[z((t * B + b) * GH)];
            const float* rr = &rec[z(b * GH)];
            float* hb = &hcur[z(b * H)];
            float* cb = &ccur[z(b * H)];
            float* saved = res != nullptr ? res + (t * B + b) * (GH + 2 * H) : nullptr;
            if (m.lstm) {
              // Pre-activations, then sigmoid(i, f), tanh(g), the cell, sigmoid(o) (its peephole
              // sees the new cell), h = o tanh(c).
              for (i64 k = 0; k < GH; ++k) g[k] = xr[k] + rr[k];
              if (P)
                for (i64 k = 0; k < H; ++k) {
                  g[k] += P[k] * cb[k];
                  g[2 * H + k] += P[2 * H + k] * cb[k];
                }
              sigmoid(H, g, g);
              sigmoid(H, g + 2 * H, g + 2 * H);
              tanh_(H, g + 3 * H, g + 3 * H);
              for (i64 k = 0; k < H; ++k) {
                cb[k] = g[2 * H + k] * cb[k] + g[k] * g[3 * H + k];
                if (P) g[H + k] += P[H + k] * cb[k];
              }
              sigmoid(H, g + H, g + H);
              tanh_(H, cb, hb);
              for (i64 k = 0; k < H; ++k) hb[k] *= g[H + k];
              if (saved) std::memcpy(saved + GH + H, cb, z(H) * sizeof(float));
            } else if (!m.gru) {
              for (i64 k = 0; k < H; ++k) g[k] = xr[k] + rr[k];
              if (d.cell == RnnCell::kRnnTanh) tanh_(H, g, g);
              else
                for (i64 k = 0; k < H; ++k) g[k] = std::max(g[k], 0.0f);
              std::memcpy(hb, g, z(H) * sizeof(float));
            } else {
              for (i64 k = 0; k < 2 * H; ++k) g[k] = xr[k] + rr[k];
              sigmoid(2 * H, g, g);
            }
            if (saved && !m.gru) {
              std::memcpy(saved, g, z(GH) * sizeof(float));
              std::memcpy(saved + GH, hb, z(H) * sizeof(float));
            }
          }
          if (m.gru) {
            // The h gate: (r (.) h') Rh^T, or h' Rh^T + Rbh (then times r).
            for (i64 b = 0; b < B; ++b)
              for (i64 k = 0; k < H; ++k) tmp[z(b * H + k)] = m.lbr ? hcur[z(b * H + k)] : gates[z(b * GH + H + k)] * hcur[z(b * H + k)];
            TESSERA_RETURN_IF_ERROR(mm(h, false, true, B, H, H, 1.0f, tmp.data(), H, R + 2 * H * H, H, 0.0f, rec.data() + 2 * H, GH));
            for (i64 b = 0; b < B; ++b) {
              const i64 t = time_of(dir, s, lens != nullptr ? lens[b] : S);
              if (t < 0) continue;
              float* g = &gates[z(b * GH)];
              const float* xr = &xw[z((t * B + b) * GH)];
              const float* rr = &rec[z(b * GH)];
              float* hb = &hcur[z(b * H)];
              float* saved = res != nullptr ? res + (t * B + b) * (GH + 2 * H) : nullptr;
              for (i64 k = 0; k < H; ++k) {
                const float q = rr[2 * H + k] + (m.lbr ? Rb[2 * H + k] : 0.0f);
                g[2 * H + k] = xr[2 * H + k] + (m.lbr ? g[H + k] * q : q);
                if (saved) saved[GH + H + k] = q;
              }
              tanh_(H, g + 2 * H, g + 2 * H);
              for (i64 k = 0; k < H; ++k) hb[k] = (1 - g[k]) * g[2 * H + k] + g[k] * hb[k];
              if (saved) {
                std::memcpy(saved, g, z(GH) * sizeof(float));
                std::memcpy(saved + GH, hb, z(H) * sizeof(float));
              }
            }
          }
          for (i64 b = 0; b < B; ++b) {
            const i64 t = time_of(dir, s, lens != nullptr ? lens[b] : S);
            if (t >= 0) std::memcpy(out + (t * B + b) * dirs * H + dir * H, &hcur[z(b * H)], z(H) * sizeof(float));
          }
        }
        if (hn != nullptr) std::memcpy(hn + sidx * B * H, hcur.data(), z(B * H) * sizeof(float));
        if (cn != nullptr && m.lstm) std::memcpy(cn + sidx * B * H, ccur.data(), z(B * H) * sizeof(float));
      }
      if (last && out != y) std::memcpy(y, out, z(S * B * dirs * H) * sizeof(float));
      in = out;
    }
  }
  return Status::ok();
}

Status blas_backward(Handle& h, const BwdCall& call) {
  const RnnDesc& d = call.d;
  const std::int32_t* lens = call.lens;
  const float *x = call.x, *weights = call.w, *h0 = call.h0, *c0 = call.c0, *reserve = call.reserve, *dy = call.dy, *dhn = call.dhn,
              *dcn = call.dcn;
  float *dx = call.dx, *dh0 = call.dh0, *dc0 = call.dc0, *dweights = call.dw;
  const Dims m = dims_of(d, call.seq, call.batch);
  const i64 nweights = rnn_weights_size(d).value();  // checked by the entry point
  {
    const Reserve rs = reserve_of(m);
    const i64 S = m.S, B = m.B, H = m.H, GH = m.GH, dirs = m.dirs;
    const ak::Kernels& mt = math_table();
    std::fill(dweights, dweights + nweights, 0.0f);
    std::vector<float> dout(z(S * B * dirs * H)), din, dgx(z(S * B * GH)), dgr(z(S * B * GH)), rin(z(S * B * H)),
        rin2(m.gru && !m.lbr ? z(S * B * H) : 0), dhcur(z(B * H)), dccur(z(B * H)), dgstep(z(B * GH)), dhprev(z(B * H)),
        dgh(z(B * H));
    if (S > 0 && B > 0) std::memcpy(dout.data(), dy, z(S * B * dirs * H) * sizeof(float));
    for (int l = d.layers - 1; l >= 0; --l) {
      const i64 IN = m.in(l, d);
      const float* in = l == 0 ? x : reserve + rs.y(l - 1);
      din.assign(z(S * B * IN), 0.0f);
      for (int dir = 0; dir < dirs; ++dir) {
        TESSERA_ASSIGN_OR_RETURN(RnnWeightParts wp, rnn_weight_parts(d, l, static_cast<int>(dir)));
        const float* W = weights + wp.w;
        const float* R = weights + wp.r;
        const float* P = wp.p >= 0 ? weights + wp.p : nullptr;
        float* dP = wp.p >= 0 ? dweights + wp.p : nullptr;
        const float* res = reserve + rs.dir(l, dir, m);
        const float* hs_out = reserve + rs.y(l);  // h at (t, b) is out[(t*B + b)*dirs*H + dir*H]
        const i64 sidx = l * dirs + dir;
        std::fill(dgx.begin(), dgx.end(), 0.0f);
        std::fill(dgr.begin(), dgr.end(), 0.0f);
        std::fill(rin.begin(), rin.end(), 0.0f);
        std::fill(rin2.begin(), rin2.end(), 0.0f);
        for (i64 i = 0; i < B * H; ++i) {
          dhcur[z(i)] = dhn != nullptr ? dhn[sidx * B * H + i] : 0.0f;
          dccur[z(i)] = m.lstm && dcn != nullptr ? dcn[sidx * B * H + i] : 0.0f;
        }
        auto h_prev = [&](i64 t, i64 b, i64 len) -> const float* {
          const i64 tp = prev_time(dir, t, len);
          if (tp < 0) return h0 != nullptr ? h0 + (sidx * B + b) * H : nullptr;
          return hs_out + (tp * B + b) * dirs * H + dir * H;
        };
        auto c_prev = [&](i64 t, i64 b, i64 len) -> const float* {
          const i64 tp = prev_time(dir, t, len);
          if (tp < 0) return c0 != nullptr ? c0 + (sidx * B + b) * H : nullptr;
          return res + (tp * B + b) * (GH + 2 * H) + GH + H;
        };
        for (i64 s = S - 1; s >= 0; --s) {
          std::fill(dgstep.begin(), dgstep.end(), 0.0f);
          for (i64 b = 0; b < B; ++b) {
            const i64 len = lens != nullptr ? lens[b] : S;
            const i64 t = time_of(dir, s, len);
            if (t < 0) continue;
            const float* sv = res + (t * B + b) * (GH + 2 * H);
            const float* hp = h_prev(t, b, len);
            float* dh = &dhcur[z(b * H)];
            const float* dyt = dout.data() + (t * B + b) * dirs * H + dir * H;
            float* gx = &dgx[z((t * B + b) * GH)];
            float* gr = &dgr[z((t * B + b) * GH)];
            float* ri = &rin[z((t * B + b) * H)];
            for (i64 k = 0; k < H; ++k) {
              dh[k] += dyt[k];
              ri[k] = hp ? hp[k] : 0.0f;
            }
            if (m.lstm) {
              const float* cp = c_prev(t, b, len);
              float* dc = &dccur[z(b * H)];
              float* tcs = &dgh[z(b * H)];  // tanh(c), scratch
              mt.math[ak::kMathTanh](H, sv + GH + H, tcs);
              for (i64 k = 0; k < H; ++k) {
                const float i = sv[k], o = sv[H + k], f = sv[2 * H + k], gg = sv[3 * H + k], c = sv[GH + H + k];
                const float cpk = cp ? cp[k] : 0.0f, tc = tcs[k];
                const float dop = dh[k] * tc * o * (1 - o);
                const float dck = dc[k] + dh[k] * o * (1 - tc * tc) + (P ? dop * P[H + k] : 0.0f);
                const float dip = dck * gg * i * (1 - i);
                const float dfp = dck * cpk * f * (1 - f);
                const float dgp = dck * i * (1 - gg * gg);
                gx[k] = dip;
                gx[H + k] = dop;
                gx[2 * H + k] = dfp;
                gx[3 * H + k] = dgp;
                dc[k] = dck * f + (P ? dip * P[k] + dfp * P[2 * H + k] : 0.0f);
                if (dP) {
                  dP[k] += dip * cpk;
                  dP[2 * H + k] += dfp * cpk;
                  dP[H + k] += dop * c;
                }
              }
              std::memcpy(gr, gx, z(GH) * sizeof(float));
            } else if (!m.gru) {
              for (i64 k = 0; k < H; ++k) {
                const float v = sv[k];
                gx[k] = dh[k] * (d.cell == RnnCell::kRnnTanh ? 1 - v * v : (v > 0 ? 1.0f : 0.0f));
              }
              std::memcpy(gr, gx, z(GH) * sizeof(float));
            } else {
              float* r2 = m.lbr ? nullptr : &rin2[z((t * B + b) * H)];
              for (i64 k = 0; k < H; ++k) {
                const float zz = sv[k], r = sv[H + k], gg = sv[2 * H + k], hpk = hp ? hp[k] : 0.0f;
                const float dzp = dh[k] * (hpk - gg) * zz * (1 - zz);
                const float dgp = dh[k] * (1 - zz) * (1 - gg * gg);
                gx[k] = gr[k] = dzp;
                gx[2 * H + k] = dgp;
                if (m.lbr) {
                  const float q = sv[GH + H + k];
                  gr[2 * H + k] = dgp * r;              // dq
                  gx[H + k] = gr[H + k] = dgp * q * r * (1 - r);
                } else {
                  gr[2 * H + k] = dgp;
                  r2[k] = r * hpk;
                }
              }
            }
            std::memcpy(&dgstep[z(b * GH)], gr, z(GH) * sizeof(float));
          }
          // dh' = dgates_r R (+ the z (.) dh term and GRU's reset path), rows of ended sequences
          // keep their carried gradient.
          if (m.gru && !m.lbr) {
            // d(r (.) h') = dg_h Rh; dr = that (.) h'; dh' gets that (.) r.
            TESSERA_RETURN_IF_ERROR(mm(h, false, false, B, H, H, 1.0f, dgstep.data() + 2 * H, GH, R + 2 * H * H, H, 0.0f, dgh.data(), H));
            for (i64 b = 0; b < B; ++b) {
              const i64 len = lens != nullptr ? lens[b] : S;
              const i64 t = time_of(dir, s, len);
              if (t < 0) continue;
              const float* sv = res + (t * B + b) * (GH + 2 * H);
              const float* hp = h_prev(t, b, len);
              float* gx = &dgx[z((t * B + b) * GH)];
              for (i64 k = 0; k < H; ++k) {
                const float r = sv[H + k];
                const float drp = dgh[z(b * H + k)] * (hp ? hp[k] : 0.0f) * r * (1 - r);
                gx[H + k] = drp;
                dgr[z((t * B + b) * GH + H + k)] = drp;
                dgstep[z(b * GH + H + k)] = drp;
              }
            }
          }
          const i64 rg = m.gru ? 2 * H : GH;  // the gates whose R product is h' itself
          TESSERA_RETURN_IF_ERROR(mm(h, false, false, B, H, rg, 1.0f, dgstep.data(), GH, R, H, 0.0f, dhprev.data(), H));
          if (m.gru && m.lbr) TESSERA_RETURN_IF_ERROR(mm(h, false, false, B, H, H, 1.0f, dgstep.data() + 2 * H, GH, R + 2 * H * H, H, 1.0f, dhprev.data(), H));
          for (i64 b = 0; b < B; ++b) {
            const i64 len = lens != nullptr ? lens[b] : S;
            const i64 t = time_of(dir, s, len);
            if (t < 0) continue;
            const float* sv = res + (t * B + b) * (GH + 2 * H);
            for (i64 k = 0; k < H; ++k) {
              float v = dhprev[z(b * H + k)];
              if (m.gru) v += dhcur[z(b * H + k)] * sv[k] + (m.lbr ? 0.0f : dgh[z(b * H + k)] * sv[H + k]);
              dhcur[z(b * H + k)] = v;
            }
          }
        }
        if (dh0 != nullptr) std::memcpy(dh0 + sidx * B * H, dhcur.data(), z(B * H) * sizeof(float));
        if (dc0 != nullptr && m.lstm) std::memcpy(dc0 + sidx * B * H, dccur.data(), z(B * H) * sizeof(float));
        // The weights: dW = dgx^T in, dR = dgr^T h' (GRU h gate without linear_before_reset:
        // (r (.) h')), bias gradients the column sums, din += dgx W.
        float* dW = dweights + wp.w;
        float* dR = dweights + wp.r;
        float* dWb = dweights + wp.wb;
        float* dRb = dweights + wp.rb;
        TESSERA_RETURN_IF_ERROR(mm(h, true, false, GH, IN, S * B, 1.0f, dgx.data(), GH, in, IN, 0.0f, dW, IN));
        if (m.gru && !m.lbr) {
          TESSERA_RETURN_IF_ERROR(mm(h, true, false, 2 * H, H, S * B, 1.0f, dgr.data(), GH, rin.data(), H, 0.0f, dR, H));
          TESSERA_RETURN_IF_ERROR(mm(h, true, false, H, H, S * B, 1.0f, dgr.data() + 2 * H, GH, rin2.data(), H, 0.0f, dR + 2 * H * H, H));
        } else {
          TESSERA_RETURN_IF_ERROR(mm(h, true, false, GH, H, S * B, 1.0f, dgr.data(), GH, rin.data(), H, 0.0f, dR, H));
        }
        for (i64 row = 0; row < S * B; ++row)
          for (i64 j = 0; j < GH; ++j) {
            dWb[j] += dgx[z(row * GH + j)];
            dRb[j] += dgr[z(row * GH + j)];
          }
        TESSERA_RETURN_IF_ERROR(mm(h, false, false, S * B, IN, GH, 1.0f, dgx.data(), GH, W, IN, 1.0f, din.data(), IN));
      }
      if (l == 0) {
        if (dx != nullptr && S * B > 0) std::memcpy(dx, din.data(), z(S * B * IN) * sizeof(float));
      } else {
        dout.assign(din.begin(), din.end());
      }
    }
  }
  return Status::ok();
}

Status ref_forward(Handle&, const FwdCall& c) {
  ref::rnn_forward(c);
  return Status::ok();
}
Status ref_backward(Handle&, const BwdCall& c) {
  ref::rnn_backward(c);
  return Status::ok();
}

// Ordered lists: the BLAS path takes every problem; the reference (ref.cpp) is last.
constexpr detail::Impl<FwdCall> kForwardImpls[] = {
    {"rnn_fwd_blas", detail::accepts_all<FwdCall>, &blas_forward},
    {"rnn_fwd_ref", detail::accepts_all<FwdCall>, &ref_forward},
};
constexpr detail::Impl<BwdCall> kBackwardImpls[] = {
    {"rnn_bwd_blas", detail::accepts_all<BwdCall>, &blas_backward},
    {"rnn_bwd_ref", detail::accepts_all<BwdCall>, &ref_backward},
};

}  // namespace

Status rnn_forward(Handle& h, const RnnDesc& d, i64 seq, i64 batch, const float* x, const std::int32_t* lens,
                   const float* weights, const float* h0, const float* c0, float* y, float* hn, float* cn,
                   float* reserve) {
  const std::string fn = "rnn_forward " + std::string(rnn_cell_name(d.cell));
  TESSERA_RETURN_IF_ERROR(check(fn, d, seq, batch, lens));
  if (seq > 0 && batch > 0 && (x == nullptr || y == nullptr || weights == nullptr))
    return invalid_argument(fn + ": x, y and weights must not be null");
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "rnn_forward"));
  const FwdCall call{d, seq, batch, x, lens, weights, h0, c0, y, hn, cn, reserve};
  try {
    return detail::select_impl<FwdCall>("rnn_forward", kForwardImpls, call).run(h, call);
  } catch (const std::bad_alloc&) {
    return out_of_memory(fn + ": out of memory");
  }
}

Status rnn_backward(Handle& h, const RnnDesc& d, i64 seq, i64 batch, const float* x, const std::int32_t* lens,
                    const float* weights, const float* h0, const float* c0, const float* reserve, const float* dy,
                    const float* dhn, const float* dcn, float* dx, float* dh0, float* dc0, float* dweights) {
  const std::string fn = "rnn_backward " + std::string(rnn_cell_name(d.cell));
  TESSERA_RETURN_IF_ERROR(check(fn, d, seq, batch, lens));
  if (weights == nullptr || dweights == nullptr) return invalid_argument(fn + ": weights and dweights must not be null");
  if (seq > 0 && batch > 0 && (x == nullptr || reserve == nullptr || dy == nullptr))
    return invalid_argument(fn + ": x, reserve (from a training forward) and dy must not be null");
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "rnn_backward"));
  const BwdCall call{d, seq, batch, x, lens, weights, h0, c0, reserve, dy, dhn, dcn, dx, dh0, dc0, dweights};
  try {
    return detail::select_impl<BwdCall>("rnn_backward", kBackwardImpls, call).run(h, call);
  } catch (const std::bad_alloc&) {
    return out_of_memory(fn + ": out of memory");
  }
}

}  // namespace tessera::dnn

