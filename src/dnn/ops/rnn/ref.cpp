// The recurrent networks' reference: every gate of every step of every batch row as plain dot
// products in double, in the order the ONNX equations are written (rnn.hpp in the public
// headers). The backward runs this forward again, keeping each step's gates and states, and
// walks the steps back one batch row at a time. Nothing here shares code with the BLAS path
// but the reserve's layout.
#include <algorithm>
#include <cmath>
#include <vector>

#include "rnn.hpp"

namespace tessera::dnn::ref {
namespace {

using rnn::i64;
using V = std::vector<double>;
std::size_t z(i64 i) { return static_cast<std::size_t>(i); }
double sg(double v) { return 1 / (1 + std::exp(-v)); }

// One layer's and direction's weights.
struct Params {
  const float *W, *R, *Wb, *Rb, *P;
  i64 IN, H;
  RnnWeightParts at;
  double w(i64 r, i64 c) const { return W[r * IN + c]; }
  double r(i64 r, i64 c) const { return R[r * H + c]; }
  double p(i64 k) const { return P != nullptr ? P[k] : 0.0; }
};
Params params(const RnnDesc& d, const rnn::Dims& m, const float* w, int l, int dir) {
  const RnnWeightParts at = rnn_weight_parts(d, l, dir).value();  // checked by the entry point
  return {w + at.w, w + at.r, w + at.wb, w + at.rb, at.p >= 0 ? w + at.p : nullptr, m.in(l, d), m.H, at};
}

// One step of one batch row: the gate activations in ONNX order, the new state, and for GRU
// with linear_before_reset q = h'Rh^T + Rbh.
struct Step {
  V gates, h, c, q;
};

Step cell(const RnnDesc& d, const Params& p, const double* x, const V& hp, const V& cp) {
  const i64 H = p.H;
  const auto xa = [&](i64 g) {  // x W_g^T + Wb_g
    double v = p.Wb[g];
    for (i64 c = 0; c < p.IN; ++c) v += p.w(g, c) * x[c];
    return v;
  };
  const auto ra = [&](i64 g, const V& hv) {  // hv R_g^T + Rb_g
    double v = p.Rb[g];
    for (i64 c = 0; c < H; ++c) v += p.r(g, c) * hv[z(c)];
    return v;
  };
  Step s;
  s.gates.resize(z(rnn_gates(d.cell) * H));
  s.h.resize(z(H));
  V& g = s.gates;
  if (d.cell == RnnCell::kLstm) {
    s.c.resize(z(H));
    for (i64 k = 0; k < H; ++k) {
      const double i = sg(xa(k) + ra(k, hp) + p.p(k) * cp[z(k)]);
      const double f = sg(xa(2 * H + k) + ra(2 * H + k, hp) + p.p(2 * H + k) * cp[z(k)]);
      const double gg = std::tanh(xa(3 * H + k) + ra(3 * H + k, hp));
      const double c = f * cp[z(k)] + i * gg;
      const double o = sg(xa(H + k) + ra(H + k, hp) + p.p(H + k) * c);
      g[z(k)] = i, g[z(H + k)] = o, g[z(2 * H + k)] = f, g[z(3 * H + k)] = gg;
      s.c[z(k)] = c;
      s.h[z(k)] = o * std::tanh(c);
    }
  } else if (d.cell == RnnCell::kGru) {
    for (i64 k = 0; k < H; ++k) {
      g[z(k)] = sg(xa(k) + ra(k, hp));
      g[z(H + k)] = sg(xa(H + k) + ra(H + k, hp));
    }
    V rh(z(H));
    for (i64 k = 0; k < H; ++k) rh[z(k)] = g[z(H + k)] * hp[z(k)];
    if (d.linear_before_reset) s.q.resize(z(H));
    for (i64 k = 0; k < H; ++k) {
      if (d.linear_before_reset) {
        s.q[z(k)] = ra(2 * H + k, hp);
        g[z(2 * H + k)] = std::tanh(xa(2 * H + k) + g[z(H + k)] * s.q[z(k)]);
      } else {
        g[z(2 * H + k)] = std::tanh(xa(2 * H + k) + ra(2 * H + k, rh));
      }
      s.h[z(k)] = (1 - g[z(k)]) * g[z(2 * H + k)] + g[z(k)] * hp[z(k)];
    }
  } else {
    for (i64 k = 0; k < H; ++k) {
      const double v = xa(k) + ra(k, hp);
      g[z(k)] = s.h[z(k)] = d.cell == RnnCell::kRnnTanh ? std::tanh(v) : std::max(v, 0.0);
    }
  }
  return s;
}

// The whole forward: each layer's input and output, the initial state and the steps of every
// (layer, direction, batch row) (steps indexed by time; those at or past the row's length are
// empty), and the final states.
struct Trace {
  std::vector<V> in, out;              // per layer: [S, B, IN], [S, B, dirs*H]
  std::vector<V> h0, c0;               // per (l*dirs + dir)*B + b
  std::vector<std::vector<Step>> steps;
  V hn, cn;                            // [layers*dirs, B, H]
};

i64 len_of(const std::int32_t* lens, i64 b, i64 S) { return lens != nullptr ? lens[b] : S; }

Trace run(const RnnDesc& d, const rnn::Dims& m, const float* x, const std::int32_t* lens, const float* w,
          const float* h0, const float* c0) {
  const i64 S = m.S, B = m.B, H = m.H, dirs = m.dirs;
  Trace tr;
  const i64 units = d.layers * dirs * B;
  tr.h0.resize(z(units));
  tr.c0.resize(z(units));
  tr.steps.resize(z(units));
  tr.hn.assign(z(units * H), 0.0);
  tr.cn.assign(z(units * H), 0.0);
  V in(x, x + S * B * d.input_size);
  for (int l = 0; l < d.layers; ++l) {
    const i64 IN = m.in(l, d);
    V out(z(S * B * dirs * H), 0.0);
    for (int dir = 0; dir < dirs; ++dir) {
      const Params p = params(d, m, w, l, dir);
      for (i64 b = 0; b < B; ++b) {
        const i64 u = (l * dirs + dir) * B + b;  // also the row of h0/hn
        V hp(z(H)), cp(z(H));
        for (i64 k = 0; k < H; ++k) {
          hp[z(k)] = h0 != nullptr ? h0[u * H + k] : 0.0;
          cp[z(k)] = m.lstm && c0 != nullptr ? c0[u * H + k] : 0.0;
        }
        tr.h0[z(u)] = hp;
        tr.c0[z(u)] = cp;
        auto& steps = tr.steps[z(u)];
        steps.resize(z(S));
        const i64 len = len_of(lens, b, S);
        for (i64 s = 0; s < len; ++s) {
          const i64 t = rnn::time_of(dir, s, len);
          Step st = cell(d, p, &in[z((t * B + b) * IN)], hp, cp);
          hp = st.h;
          if (m.lstm) cp = st.c;
          std::copy(hp.begin(), hp.end(), out.begin() + (t * B + b) * dirs * H + dir * H);
          steps[z(t)] = std::move(st);
        }
        std::copy(hp.begin(), hp.end(), tr.hn.begin() + u * H);
        std::copy(cp.begin(), cp.end(), tr.cn.begin() + u * H);
      }
    }
    tr.in.push_back(std::move(in));
    tr.out.push_back(out);
    in = std::move(out);
  }
  return tr;
}

void put(const V& v, float* dst) {
  if (dst != nullptr) std::transform(v.begin(), v.end(), dst, [](double e) { return static_cast<float>(e); });
}

}  // namespace

void rnn_forward(const rnn::FwdCall& c) {
  const RnnDesc& d = c.d;
  const rnn::Dims m = rnn::dims_of(d, c.seq, c.batch);
  const Trace tr = run(d, m, c.x, c.lens, c.w, c.h0, c.c0);
  put(tr.out.back(), c.y);
  put(tr.hn, c.hn);
  if (m.lstm) put(tr.cn, c.cn);
  if (c.reserve == nullptr) return;
  const rnn::Reserve rs = rnn::reserve_of(m);
  const i64 S = m.S, B = m.B, H = m.H, GH = m.GH;
  std::fill(c.reserve, c.reserve + rs.per_layer * d.layers, 0.0f);
  for (int l = 0; l < d.layers; ++l) {
    put(tr.out[z(l)], c.reserve + rs.y(l));
    for (int dir = 0; dir < m.dirs; ++dir)
      for (i64 b = 0; b < B; ++b) {
        const auto& steps = tr.steps[z((l * m.dirs + dir) * B + b)];
        for (i64 t = 0; t < S; ++t) {
          const Step& st = steps[z(t)];
          if (st.h.empty()) continue;
          float* rec = c.reserve + rs.dir(l, dir, m) + (t * B + b) * (GH + 2 * H);
          put(st.gates, rec);
          put(st.h, rec + GH);
          if (m.lstm) put(st.c, rec + GH + H);
          if (m.lbr) put(st.q, rec + GH + H);
        }
      }
  }
}

void rnn_backward(const rnn::BwdCall& c) {
  const RnnDesc& d = c.d;
  const rnn::Dims m = rnn::dims_of(d, c.seq, c.batch);
  const i64 S = m.S, B = m.B, H = m.H, GH = m.GH, dirs = m.dirs;
  const Trace tr = run(d, m, c.x, c.lens, c.w, c.h0, c.c0);
  V dw(z(rnn_weights_size(d).value()), 0.0), dh0(z(d.layers * dirs * B * H)), dc0(dh0.size());
  V dout(c.dy, c.dy + S * B * dirs * H);
  for (int l = d.layers - 1; l >= 0; --l) {
    const i64 IN = m.in(l, d);
    V din(z(S * B * IN), 0.0);
    for (int dir = 0; dir < dirs; ++dir) {
      const Params p = params(d, m, c.w, l, dir);
      double* dW = &dw[z(p.at.w)];
      double* dR = &dw[z(p.at.r)];
      double* dWb = &dw[z(p.at.wb)];
      double* dRb = &dw[z(p.at.rb)];
      double* dP = p.at.p >= 0 ? &dw[z(p.at.p)] : nullptr;
      for (i64 b = 0; b < B; ++b) {
        const i64 u = (l * dirs + dir) * B + b;
        const auto& steps = tr.steps[z(u)];
        V dh(z(H)), dc(z(H));
        for (i64 k = 0; k < H; ++k) {
          dh[z(k)] = c.dhn != nullptr ? c.dhn[u * H + k] : 0.0;
          dc[z(k)] = m.lstm && c.dcn != nullptr ? c.dcn[u * H + k] : 0.0;
        }
        const i64 len = len_of(c.lens, b, S);
        for (i64 s = len - 1; s >= 0; --s) {
          const i64 t = rnn::time_of(dir, s, len);
          const i64 tp = rnn::prev_time(dir, t, len);
          const Step& st = steps[z(t)];
          const V& hp = tp < 0 ? tr.h0[z(u)] : steps[z(tp)].h;
          const V& cp = tp < 0 ? tr.c0[z(u)] : steps[z(tp)].c;
          for (i64 k = 0; k < H; ++k) dh[z(k)] += dout[z((t * B + b) * dirs * H + dir * H + k)];
          // a: the pre-activation gradients of x W^T + Wb; ar: those of hv R^T + Rb, where hv is
          // h' (GRU without linear_before_reset: r (.) h' for the h gate). dhp: dh' so far.
          V a(z(GH)), ar(z(GH)), dhp(z(H), 0.0), hv_h;
          const V& g = st.gates;
          if (m.lstm) {
            for (i64 k = 0; k < H; ++k) {
              const double i = g[z(k)], o = g[z(H + k)], f = g[z(2 * H + k)], gg = g[z(3 * H + k)];
              const double cc = st.c[z(k)], tc = std::tanh(cc), cpk = cp[z(k)];
              const double dop = dh[z(k)] * tc * o * (1 - o);
              const double dct = dc[z(k)] + dh[z(k)] * o * (1 - tc * tc) + dop * p.p(H + k);
              const double dip = dct * gg * i * (1 - i), dfp = dct * cpk * f * (1 - f), dgp = dct * i * (1 - gg * gg);
              a[z(k)] = dip, a[z(H + k)] = dop, a[z(2 * H + k)] = dfp, a[z(3 * H + k)] = dgp;
              dc[z(k)] = dct * f + dip * p.p(k) + dfp * p.p(2 * H + k);
              if (dP != nullptr) {
                dP[k] += dip * cpk;
                dP[2 * H + k] += dfp * cpk;
                dP[H + k] += dop * cc;
              }
            }
            ar = a;
          } else if (m.gru) {
            for (i64 k = 0; k < H; ++k) {
              const double zz = g[z(k)], gg = g[z(2 * H + k)];
              a[z(k)] = dh[z(k)] * (hp[z(k)] - gg) * zz * (1 - zz);
              a[z(2 * H + k)] = dh[z(k)] * (1 - zz) * (1 - gg * gg);
              dhp[z(k)] = dh[z(k)] * zz;
            }
            if (m.lbr) {
              for (i64 k = 0; k < H; ++k) {
                const double r = g[z(H + k)];
                ar[z(2 * H + k)] = a[z(2 * H + k)] * r;  // dq
                a[z(H + k)] = a[z(2 * H + k)] * st.q[z(k)] * r * (1 - r);
              }
            } else {
              hv_h.resize(z(H));
              for (i64 cc = 0; cc < H; ++cc) {
                double drh = 0;  // d(r (.) h')_cc
                for (i64 k = 0; k < H; ++k) drh += a[z(2 * H + k)] * p.r(2 * H + k, cc);
                const double r = g[z(H + cc)];
                a[z(H + cc)] = drh * hp[z(cc)] * r * (1 - r);
                dhp[z(cc)] += drh * r;
                hv_h[z(cc)] = r * hp[z(cc)];
              }
              for (i64 k = 0; k < H; ++k) ar[z(2 * H + k)] = a[z(2 * H + k)];
            }
            for (i64 k = 0; k < 2 * H; ++k) ar[z(k)] = a[z(k)];
          } else {
            for (i64 k = 0; k < H; ++k) {
              const double v = g[z(k)];
              a[z(k)] = dh[z(k)] * (d.cell == RnnCell::kRnnTanh ? 1 - v * v : (v > 0 ? 1.0 : 0.0));
            }
            ar = a;
          }
          const double* xin = &tr.in[z(l)][z((t * B + b) * IN)];
          double* dxin = &din[z((t * B + b) * IN)];
          for (i64 j = 0; j < GH; ++j) {
            dWb[j] += a[z(j)];
            for (i64 cc = 0; cc < IN; ++cc) {
              dW[j * IN + cc] += a[z(j)] * xin[cc];
              dxin[cc] += a[z(j)] * p.w(j, cc);
            }
            const bool through_r = m.gru && !m.lbr && j >= 2 * H;  // its dh' went in above
            const V& hv = through_r ? hv_h : hp;
            dRb[j] += ar[z(j)];
            for (i64 cc = 0; cc < H; ++cc) {
              dR[j * H + cc] += ar[z(j)] * hv[z(cc)];
              if (!through_r) dhp[z(cc)] += ar[z(j)] * p.r(j, cc);
            }
          }
          dh = dhp;
        }
        std::copy(dh.begin(), dh.end(), dh0.begin() + u * H);
        std::copy(dc.begin(), dc.end(), dc0.begin() + u * H);
      }
    }
    dout = std::move(din);
  }
  put(dout, c.dx);
  put(dh0, c.dh0);
  if (m.lstm) put(dc0, c.dc0);
  put(dw, c.dw);
}

}  // namespace tessera::dnn::ref
