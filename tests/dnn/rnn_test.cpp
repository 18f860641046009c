// Recurrent networks: every cell (RNN tanh/relu, LSTM with and without peepholes, GRU in both
// linear-before-reset variants) against the ONNX equations written out here in double, over
// 1-2 layers, one or two directions and variable sequence lengths; the backward against
// central finite differences of the forward for x, h0, c0 and every weight; the same for the
// library's reference (rnn_fwd_ref / rnn_bwd_ref), and the BLAS path against it over sizes
// that cross the vector widths; every ISA path of the vector math and thread-count
// independence; PyTorch's results; bad arguments.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/core/cpu.hpp>
#include <tessera/core/npy.hpp>
#include <tessera/dnn.hpp>

#include "../../src/dnn/ops/rnn/rnn.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using i64 = std::int64_t;
using V = std::vector<double>;

double sg(double v) { return 1 / (1 + std::exp(-v)); }

// The ONNX equations, one scalar at a time (layouts as rnn.hpp).
void reference(const RnnDesc& d, i64 S, i64 B, const std::vector<float>& x, const std::vector<int>& lens,
               const std::vector<float>& w, const std::vector<float>& h0, const std::vector<float>& c0, V& y, V& hn, V& cn) {
  const i64 H = d.hidden_size, dirs = d.bidirectional ? 2 : 1;
  V in(x.begin(), x.end());
  hn.assign(static_cast<std::size_t>(d.layers * dirs * B * H), 0);
  cn = hn;
  for (int l = 0; l < d.layers; ++l) {
    const i64 IN = l == 0 ? d.input_size : dirs * H;
    V out(static_cast<std::size_t>(S * B * dirs * H), 0.0);
    for (int dir = 0; dir < dirs; ++dir) {
      const RnnWeightParts p = rnn_weight_parts(d, l, dir).value();
      auto W = [&](i64 r, i64 c) { return static_cast<double>(w[static_cast<std::size_t>(p.w + r * IN + c)]); };
      auto R = [&](i64 r, i64 c) { return static_cast<double>(w[static_cast<std::size_t>(p.r + r * H + c)]); };
      auto Wb = [&](i64 r) { return static_cast<double>(w[static_cast<std::size_t>(p.wb + r)]); };
      auto Rb = [&](i64 r) { return static_cast<double>(w[static_cast<std::size_t>(p.rb + r)]); };
      auto Pp = [&](i64 r) { return p.p >= 0 ? static_cast<double>(w[static_cast<std::size_t>(p.p + r)]) : 0.0; };
      const i64 si = l * dirs + dir;
      for (i64 b = 0; b < B; ++b) {
        V hh(static_cast<std::size_t>(H)), cc(static_cast<std::size_t>(H));
        for (i64 k = 0; k < H; ++k) {
          hh[static_cast<std::size_t>(k)] = h0.empty() ? 0 : h0[static_cast<std::size_t>((si * B + b) * H + k)];
          cc[static_cast<std::size_t>(k)] = c0.empty() ? 0 : c0[static_cast<std::size_t>((si * B + b) * H + k)];
        }
        const i64 len = lens.empty() ? S : lens[static_cast<std::size_t>(b)];
        for (i64 s = 0; s < len; ++s) {
          const i64 t = dir == 0 ? s : len - 1 - s;
          auto xa = [&](i64 g) {  // x W_g^T + Wb_g
            double v = Wb(g);
            for (i64 c = 0; c < IN; ++c) v += W(g, c) * in[static_cast<std::size_t>((t * B + b) * IN + c)];
            return v;
          };
          auto ra = [&](i64 g, const V& hv) {  // hv R_g^T
            double v = 0;
            for (i64 c = 0; c < H; ++c) v += R(g, c) * hv[static_cast<std::size_t>(c)];
            return v;
          };
          V nh(static_cast<std::size_t>(H)), nc(static_cast<std::size_t>(H));
          for (i64 k = 0; k < H; ++k) {
            const auto ku = static_cast<std::size_t>(k);
            if (d.cell == RnnCell::kLstm) {
              const double i = sg(xa(k) + ra(k, hh) + Rb(k) + Pp(k) * cc[ku]);
              const double f = sg(xa(2 * H + k) + ra(2 * H + k, hh) + Rb(2 * H + k) + Pp(2 * H + k) * cc[ku]);
              const double g = std::tanh(xa(3 * H + k) + ra(3 * H + k, hh) + Rb(3 * H + k));
              nc[ku] = f * cc[ku] + i * g;
              const double o = sg(xa(H + k) + ra(H + k, hh) + Rb(H + k) + Pp(H + k) * nc[ku]);
              nh[ku] = o * std::tanh(nc[ku]);
            } else if (d.cell == RnnCell::kGru) {
              const double zz = sg(xa(k) + ra(k, hh) + Rb(k));
              const double r = sg(xa(H + k) + ra(H + k, hh) + Rb(H + k));
              double g = 0;
              if (d.linear_before_reset) {
                g = std::tanh(xa(2 * H + k) + r * (ra(2 * H + k, hh) + Rb(2 * H + k)));
              } else {
                V rh(static_cast<std::size_t>(H));
                for (i64 c = 0; c < H; ++c) {
                  const double rc = sg(xa(H + c) + ra(H + c, hh) + Rb(H + c));
                  rh[static_cast<std::size_t>(c)] = rc * hh[static_cast<std::size_t>(c)];
                }
                g = std::tanh(xa(2 * H + k) + ra(2 * H + k, rh) + Rb(2 * H + k));
              }
              nh[ku] = (1 - zz) * g + zz * hh[ku];
            } else {
              const double v = xa(k) + ra(k, hh) + Rb(k);
              nh[ku] = d.cell == RnnCell::kRnnTanh ? std::tanh(v) : std::max(v, 0.0);
            }
          }
          hh = nh;
          if (d.cell == RnnCell::kLstm) cc = nc;
          for (i64 k = 0; k < H; ++k) out[static_cast<std::size_t>((t * B + b) * dirs * H + dir * H + k)] = hh[static_cast<std::size_t>(k)];
        }
        for (i64 k = 0; k < H; ++k) {
          hn[static_cast<std::size_t>((si * B + b) * H + k)] = hh[static_cast<std::size_t>(k)];
          cn[static_cast<std::size_t>((si * B + b) * H + k)] = cc[static_cast<std::size_t>(k)];
        }
      }
    }
    in = out;
  }
  y = in;
}

struct Case {
  RnnCell cell;
  bool peep, lbr, bidir;
  int layers;
  bool varlen;
};
std::string name(const Case& c) {
  return std::string(rnn_cell_name(c.cell)) + (c.peep ? " peepholes" : "") + (c.lbr ? " lbr" : "") + (c.bidir ? " bidir" : "") +
         " layers " + std::to_string(c.layers) + (c.varlen ? " varlen" : "");
}
const Case kCases[] = {
    {RnnCell::kRnnTanh, false, false, false, 1, false}, {RnnCell::kRnnRelu, false, false, true, 2, true},
    {RnnCell::kLstm, false, false, false, 1, false},    {RnnCell::kLstm, true, false, true, 2, true},
    {RnnCell::kLstm, false, false, true, 1, true},      {RnnCell::kGru, false, false, false, 2, false},
    {RnnCell::kGru, false, true, true, 1, true},        {RnnCell::kGru, false, false, true, 2, true},
};

struct Problem {
  RnnDesc d;
  i64 S = 4, B = 3;
  std::vector<float> x, w, h0, c0;
  std::vector<int> lens;
};
Problem make_problem(const Case& c, std::mt19937& rng) {
  Problem p;
  p.d.cell = c.cell;
  p.d.input_size = 3;
  p.d.hidden_size = 4;
  p.d.layers = c.layers;
  p.d.bidirectional = c.bidir;
  p.d.peepholes = c.peep;
  p.d.linear_before_reset = c.lbr;
  std::uniform_real_distribution<float> u(-0.8f, 0.8f);
  const i64 dirs = c.bidir ? 2 : 1;
  p.x.resize(static_cast<std::size_t>(p.S * p.B * 3));
  p.w.resize(static_cast<std::size_t>(rnn_weights_size(p.d).value()));
  p.h0.resize(static_cast<std::size_t>(c.layers * dirs * p.B * 4));
  p.c0.resize(p.h0.size());
  for (auto* v : {&p.x, &p.w, &p.h0, &p.c0})
    for (float& e : *v) e = u(rng);
  if (c.varlen) p.lens = {4, 0, 2};
  return p;
}

const std::int32_t* lens_of(const Problem& p) { return p.lens.empty() ? nullptr : p.lens.data(); }
bool is_lstm(const Problem& p) { return p.d.cell == RnnCell::kLstm; }

// The forward through rnn_forward on h, or through the library's reference when h is null;
// outputs start as NaN, which every written element must replace.
Status forward(Handle* h, const Problem& p, std::vector<float>& y, std::vector<float>& hn, std::vector<float>& cn,
               std::vector<float>* reserve) {
  const i64 dirs = p.d.bidirectional ? 2 : 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  y.assign(static_cast<std::size_t>(p.S * p.B * dirs * p.d.hidden_size), nan);
  hn.assign(p.h0.size(), nan);
  cn.assign(p.h0.size(), nan);
  if (reserve) reserve->assign(static_cast<std::size_t>(rnn_reserve_size(p.d, p.S, p.B).value()), nan);
  float* cnp = is_lstm(p) ? cn.data() : nullptr;
  float* res = reserve ? reserve->data() : nullptr;
  if (h != nullptr)
    return rnn_forward(*h, p.d, p.S, p.B, p.x.data(), lens_of(p), p.w.data(), p.h0.data(), p.c0.data(), y.data(),
                       hn.data(), cnp, res);
  ref::rnn_forward({p.d, p.S, p.B, p.x.data(), lens_of(p), p.w.data(), p.h0.data(), p.c0.data(), y.data(), hn.data(),
                    cnp, res});
  return Status::ok();
}
Status forward(Handle& h, const Problem& p, std::vector<float>& y, std::vector<float>& hn, std::vector<float>& cn,
               std::vector<float>* reserve) {
  return forward(&h, p, y, hn, cn, reserve);
}

struct Grads {
  std::vector<float> dx, dh0, dc0, dw;
};
// The backward through rnn_backward on h (null: the library's reference) of a forward's
// reserve; gradients start as NaN.
Status backward(Handle* h, const Problem& p, const std::vector<float>& reserve, const std::vector<float>& dy,
                const std::vector<float>& dhn, const std::vector<float>& dcn, Grads& g) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  g.dx.assign(p.x.size(), nan);
  g.dh0.assign(p.h0.size(), nan);
  g.dc0.assign(p.c0.size(), nan);
  g.dw.assign(p.w.size(), nan);
  const float* dcnp = is_lstm(p) && !dcn.empty() ? dcn.data() : nullptr;
  float* dc0p = is_lstm(p) ? g.dc0.data() : nullptr;
  if (h != nullptr)
    return rnn_backward(*h, p.d, p.S, p.B, p.x.data(), lens_of(p), p.w.data(), p.h0.data(), p.c0.data(), reserve.data(),
                        dy.data(), dhn.empty() ? nullptr : dhn.data(), dcnp, g.dx.data(), g.dh0.data(), dc0p, g.dw.data());
  ref::rnn_backward({p.d, p.S, p.B, p.x.data(), lens_of(p), p.w.data(), p.h0.data(), p.c0.data(), reserve.data(), dy.data(),
                     dhn.empty() ? nullptr : dhn.data(), dcnp, g.dx.data(), g.dh0.data(), dc0p, g.dw.data()});
  return Status::ok();
}

// |got - want| <= tol (1 + |want|) everywhere (NaN fails).
void expect_near(const std::vector<float>& got, const std::vector<float>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i]))) && ++bad <= 3)
      ADD_FAILURE() << what << "[" << i << "] got " << got[i] << " want " << want[i];
}

TEST(Rnn, ForwardMatchesOnnxEquations) {
  std::mt19937 rng(3);
  for (const Case& c : kCases) {
    Problem p = make_problem(c, rng);
    V ry, rhn, rcn;
    reference(p.d, p.S, p.B, p.x, p.lens, p.w, p.h0, p.c0, ry, rhn, rcn);
    {  // the library's reference
      std::vector<float> y, hn, cn;
      ASSERT_TRUE(forward(nullptr, p, y, hn, cn, nullptr).is_ok());
      for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ry[i], 1e-6) << name(c) << " rnn_fwd_ref y " << i;
      for (std::size_t i = 0; i < hn.size(); ++i) ASSERT_NEAR(hn[i], rhn[i], 1e-6) << name(c) << " rnn_fwd_ref hn " << i;
      if (c.cell == RnnCell::kLstm) {
        for (std::size_t i = 0; i < cn.size(); ++i) ASSERT_NEAR(cn[i], rcn[i], 1e-6) << name(c) << " rnn_fwd_ref cn " << i;
      }
    }
    testing::for_each_isa([&](Isa) {
      for (bool training : {false, true})
        for (int threads : {1, 2}) {
          Handle h;
          ASSERT_TRUE(h.set_num_threads(threads).is_ok());
          std::vector<float> y, hn, cn, res;
          ASSERT_TRUE(forward(h, p, y, hn, cn, training ? &res : nullptr).is_ok()) << name(c);
          for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ry[i], 2e-6) << name(c) << " y " << i;
          for (std::size_t i = 0; i < hn.size(); ++i) ASSERT_NEAR(hn[i], rhn[i], 2e-6) << name(c) << " hn " << i;
          if (c.cell == RnnCell::kLstm) {
            for (std::size_t i = 0; i < cn.size(); ++i) ASSERT_NEAR(cn[i], rcn[i], 2e-6) << name(c) << " cn " << i;
          }
        }
    });
  }
}

TEST(Rnn, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(5);
  for (const Case& c : kCases) {
    Problem p = make_problem(c, rng);
    Handle h;
    std::vector<float> y, hn, cn, res;
    ASSERT_TRUE(forward(h, p, y, hn, cn, &res).is_ok());
    // The objective: sum r1 y + sum r2 hn + sum r3 cn, in double from the reference.
    std::uniform_real_distribution<float> u(0.5f, 1.5f);
    std::vector<float> dy(y.size()), dhn(hn.size()), dcn(cn.size());
    for (auto* v : {&dy, &dhn, &dcn})
      for (float& e : *v) e = u(rng);
    // Zero-length rows and the padded steps carry no y: their dy must not matter.
    auto objective = [&]() {
      V ry, rhn, rcn;
      reference(p.d, p.S, p.B, p.x, p.lens, p.w, p.h0, p.c0, ry, rhn, rcn);
      double s = 0;
      for (std::size_t i = 0; i < ry.size(); ++i) s += dy[i] * ry[i];
      for (std::size_t i = 0; i < rhn.size(); ++i) s += dhn[i] * rhn[i];
      if (c.cell == RnnCell::kLstm)
        for (std::size_t i = 0; i < rcn.size(); ++i) s += dcn[i] * rcn[i];
      return s;
    };
    Grads blas, lib;
    ASSERT_TRUE(backward(&h, p, res, dy, dhn, dcn, blas).is_ok()) << name(c);
    ASSERT_TRUE(backward(nullptr, p, res, dy, dhn, dcn, lib).is_ok()) << name(c);
    auto check = [&](std::vector<float>& v, const std::vector<float>& g, const std::vector<float>& gr, const char* what) {
      int bad = 0;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const float keep = v[i];
        const double step = 1e-3;
        v[i] = static_cast<float>(keep + step);
        const double up = objective();
        v[i] = static_cast<float>(keep - step);
        const double down = objective();
        v[i] = keep;
        const double num = (up - down) / (static_cast<double>(static_cast<float>(keep + step)) - static_cast<double>(static_cast<float>(keep - step)));
        if (!(std::fabs(num - g[i]) <= 2e-3 * (1 + std::fabs(num))) && ++bad <= 3)
          ADD_FAILURE() << name(c) << " d" << what << "[" << i << "] analytic " << g[i] << " numeric " << num;
        if (!(std::fabs(num - gr[i]) <= 2e-3 * (1 + std::fabs(num))) && ++bad <= 3)
          ADD_FAILURE() << name(c) << " rnn_bwd_ref d" << what << "[" << i << "] analytic " << gr[i] << " numeric " << num;
      }
    };
    check(p.x, blas.dx, lib.dx, "x");
    check(p.h0, blas.dh0, lib.dh0, "h0");
    if (c.cell == RnnCell::kLstm) check(p.c0, blas.dc0, lib.dc0, "c0");
    check(p.w, blas.dw, lib.dw, "weights");
  }
}

// The BLAS path against the library's reference over sizes that cross the vector widths and
// the BLAS tiles (hidden 17 and 33, inputs 5 and 19), sequences that end early or are empty,
// and the reference's reserve fed to the BLAS backward (the two share its layout).
TEST(Rnn, BlasPathMatchesTheLibraryReference) {
  std::mt19937 rng(29);
  const std::pair<i64, i64> sizes[] = {{5, 17}, {19, 33}};
  for (const Case& c : kCases)
    for (const auto& [in, hidden] : sizes) {
      Problem p = make_problem(c, rng);
      p.S = 6;
      p.B = 5;
      p.d.input_size = in;
      p.d.hidden_size = hidden;
      const i64 dirs = c.bidir ? 2 : 1;
      std::uniform_real_distribution<float> u(-0.5f, 0.5f);
      p.x.resize(static_cast<std::size_t>(p.S * p.B * in));
      p.w.resize(static_cast<std::size_t>(rnn_weights_size(p.d).value()));
      p.h0.resize(static_cast<std::size_t>(c.layers * dirs * p.B * hidden));
      p.c0.resize(p.h0.size());
      for (auto* v : {&p.x, &p.w, &p.h0, &p.c0})
        for (float& e : *v) e = u(rng);
      if (c.varlen) p.lens = {6, 0, 3, 1, 5};
      const std::string what = name(c) + " input " + std::to_string(in) + " hidden " + std::to_string(hidden);
      Handle h;
      std::vector<float> y, hn, cn, res, ry, rhn, rcn, rres;
      ASSERT_TRUE(forward(&h, p, y, hn, cn, &res).is_ok()) << what;
      ASSERT_TRUE(forward(nullptr, p, ry, rhn, rcn, &rres).is_ok()) << what;
      expect_near(y, ry, 1e-5, what + " y");
      expect_near(hn, rhn, 1e-5, what + " hn");
      if (is_lstm(p)) expect_near(cn, rcn, 1e-5, what + " cn");
      std::vector<float> dy(y.size()), dhn(hn.size()), dcn(cn.size());
      for (auto* v : {&dy, &dhn, &dcn})
        for (float& e : *v) e = u(rng);
      Grads blas, lib, blas_on_ref;
      ASSERT_TRUE(backward(&h, p, res, dy, dhn, dcn, blas).is_ok()) << what;
      ASSERT_TRUE(backward(nullptr, p, rres, dy, dhn, dcn, lib).is_ok()) << what;
      ASSERT_TRUE(backward(&h, p, rres, dy, dhn, dcn, blas_on_ref).is_ok()) << what;
      for (const Grads* g : {&blas, &blas_on_ref}) {
        const std::string w = what + (g == &blas ? "" : " (on rnn_fwd_ref's reserve)");
        expect_near(g->dx, lib.dx, 2e-5, w + " dx");
        expect_near(g->dh0, lib.dh0, 2e-5, w + " dh0");
        if (is_lstm(p)) expect_near(g->dc0, lib.dc0, 2e-5, w + " dc0");
        expect_near(g->dw, lib.dw, 2e-5, w + " dweights");
      }
    }
}

// PyTorch's outputs and gradients for the same weights (tests/data/rnn_torch, written by
// tools/rnn_torch_golden.py): 2-layer bidirectional LSTM and GRU (linear_before_reset), packed
// sequences of lengths 5, 3, 1.
template <typename T>
std::vector<T> load(const std::string& cell, const std::string& what) {
  const char* root = std::getenv("TESSERA_TEST_DATA");
  const std::string path = std::string(root != nullptr ? root : "tests") + "/data/rnn_torch/" + cell + "_" + what + ".npy";
  auto t = read_npy(path);
  if (!t.is_ok()) {
    ADD_FAILURE() << path << ": " << t.status().to_string();
    return {};
  }
  return t.value().to_vector<T>();
}
void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what, double tol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i]))) && ++bad <= 3)
      ADD_FAILURE() << what << "[" << i << "] tessera " << got[i] << " torch " << want[i];
}

TEST(Rnn, MatchesPyTorch) {
  for (const std::string cell : {"lstm", "gru"}) {
    const bool lstm = cell == "lstm";
    RnnDesc d;
    d.cell = lstm ? RnnCell::kLstm : RnnCell::kGru;
    d.input_size = 4;
    d.hidden_size = 6;
    d.layers = 2;
    d.bidirectional = true;
    d.linear_before_reset = !lstm;
    const i64 S = 5, B = 3;
    const auto x = load<float>(cell, "x"), w = load<float>(cell, "w"), h0 = load<float>(cell, "h0"), dy = load<float>(cell, "dy"),
               dhn = load<float>(cell, "dhn");
    const auto lens = load<std::int32_t>(cell, "lens");
    const auto c0 = lstm ? load<float>(cell, "c0") : std::vector<float>(h0.size(), 0.0f);
    const auto dcn = lstm ? load<float>(cell, "dcn") : std::vector<float>{};
    ASSERT_EQ(static_cast<i64>(w.size()), rnn_weights_size(d).value()) << cell;
    Handle h;
    std::vector<float> y(static_cast<std::size_t>(S * B * 2 * 6)), hn(h0.size()), cn(h0.size());
    std::vector<float> res(static_cast<std::size_t>(rnn_reserve_size(d, S, B).value()));
    ASSERT_TRUE(rnn_forward(h, d, S, B, x.data(), lens.data(), w.data(), h0.data(), c0.data(), y.data(), hn.data(),
                            lstm ? cn.data() : nullptr, res.data()).is_ok());
    expect_close(y, load<float>(cell, "y"), cell + " y", 1e-5);
    expect_close(hn, load<float>(cell, "hn"), cell + " hn", 1e-5);
    if (lstm) expect_close(cn, load<float>(cell, "cn"), cell + " cn", 1e-5);
    std::vector<float> dx(x.size()), dh0(h0.size()), dc0(h0.size()), dw(w.size());
    ASSERT_TRUE(rnn_backward(h, d, S, B, x.data(), lens.data(), w.data(), h0.data(), c0.data(), res.data(), dy.data(),
                             dhn.data(), lstm ? dcn.data() : nullptr, dx.data(), dh0.data(), lstm ? dc0.data() : nullptr,
                             dw.data()).is_ok());
    expect_close(dx, load<float>(cell, "dx"), cell + " dx", 1e-4);
    expect_close(dh0, load<float>(cell, "dh0"), cell + " dh0", 1e-4);
    if (lstm) expect_close(dc0, load<float>(cell, "dc0"), cell + " dc0", 1e-4);
    expect_close(dw, load<float>(cell, "dw"), cell + " dweights", 1e-4);
  }
}

TEST(Rnn, SameBitsForAnyThreadCount) {
  std::mt19937 rng(13);
  for (const Case& c : kCases) {
    Problem p = make_problem(c, rng);
    // Large enough for BLAS to split its GEMMs over the threads.
    p.S = 9;
    p.B = 40;
    p.d.hidden_size = 96;
    const i64 dirs = c.bidir ? 2 : 1;
    std::uniform_real_distribution<float> u(-0.3f, 0.3f);
    p.x.resize(static_cast<std::size_t>(p.S * p.B * 3));
    p.w.resize(static_cast<std::size_t>(rnn_weights_size(p.d).value()));
    p.h0.resize(static_cast<std::size_t>(c.layers * dirs * p.B * 96));
    p.c0.resize(p.h0.size());
    for (auto* v : {&p.x, &p.w, &p.h0, &p.c0})
      for (float& e : *v) e = u(rng);
    if (c.varlen) {
      p.lens.resize(static_cast<std::size_t>(p.B));
      for (int& l : p.lens) l = std::uniform_int_distribution<int>(0, 9)(rng);
    }
    std::vector<std::vector<float>> first;
    for (int threads : {1, 2}) {
      Handle h;
      ASSERT_TRUE(h.set_num_threads(threads).is_ok());
      std::vector<float> y, hn, cn, res;
      ASSERT_TRUE(forward(h, p, y, hn, cn, &res).is_ok());
      std::vector<float> dy(y.size(), 0.25f), dx(p.x.size()), dh0(p.h0.size()), dc0(p.c0.size()), dw(p.w.size());
      ASSERT_TRUE(rnn_backward(h, p.d, p.S, p.B, p.x.data(), p.lens.empty() ? nullptr : p.lens.data(), p.w.data(), p.h0.data(),
                               p.c0.data(), res.data(), dy.data(), nullptr, nullptr, dx.data(), dh0.data(), dc0.data(), dw.data())
                      .is_ok());
      const std::vector<std::vector<float>> all = {y, hn, dx, dh0, dw};
      if (threads == 1) first = all;
      else
        for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], first[i]) << name(c) << " output " << i;
    }
  }
}

TEST(Rnn, BadArguments) {
  Handle h;
  RnnDesc d;
  d.cell = RnnCell::kGru;
  d.input_size = 2;
  d.hidden_size = 3;
  d.peepholes = true;
  float buf[4] = {};
  Status s = rnn_forward(h, d, 1, 1, buf, nullptr, buf, nullptr, nullptr, buf, nullptr, nullptr, nullptr);
  EXPECT_NE(s.message().find("peepholes are an LSTM option"), std::string::npos) << s.message();
  d.peepholes = false;
  const std::int32_t lens[1] = {5};
  s = rnn_forward(h, d, 2, 1, buf, lens, buf, nullptr, nullptr, buf, nullptr, nullptr, nullptr);
  EXPECT_NE(s.message().find("seq_lengths[0] = 5 is outside [0, 2]"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::dnn
