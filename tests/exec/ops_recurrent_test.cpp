// The state-carrying kernels of opset 27 (kernels_recurrent.cpp) on cases ONNX's node tests
// leave out, against plain loops written here: LinearAttention under each update rule with
// three query heads per key/value head, a past state and an explicit scale; a sequence run in
// chunks, each chunk's present state fed back as the next one's past state, against one pass;
// a sequence of length zero; an f16 state next to f32 activations. CausalConvWithState with
// bias and SiLU run in chunks shorter than the kernel (the carried state reaching back into the
// previous past state) against one loop over the whole sequence, and with an empty input. Bad
// inputs each give one clear error.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/core/half.hpp>
#include <tessera/session.hpp>

#include "one_op.hpp"
#include "onnx_builder.hpp"
#include "test_util.hpp"

namespace tessera::exec {
namespace {

using Dims = std::vector<std::int64_t>;
using Vec = std::vector<double>;

// One opset-27 node of `op` over the given inputs (an empty name leaves an optional input out),
// with outputs "y" and "state".
struct Node : testing_util::OneOp {
  Node(const std::string& op, const std::vector<NamedTensor>& inputs) : OneOp(27, op, inputs, {"y", "state"}) {}
  void attr(const std::string& name, std::int64_t v) { testing::OnnxBuilder::attr(node, name, v); }
  void attr(const std::string& name, const std::string& v) { testing::OnnxBuilder::attr_string(node, name, v); }
  void attr(const std::string& name, float v) { real(name, v); }
  // Output y and the present state.
  Result<std::pair<Tensor, Tensor>> run() const {
    TESSERA_ASSIGN_OR_RETURN(std::vector<NamedTensor> out, run_all());
    return std::make_pair(out[0].tensor, out[1].tensor);
  }
};

Tensor floats(const Dims& dims, const std::vector<float>& v) { return Tensor::from_vector<float>(Shape(dims), v).value_or_throw(); }
Vec widen(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }
std::vector<float> narrow(const Vec& v) { return std::vector<float>(v.begin(), v.end()); }

template <typename T>
void expect_error(const Result<T>& r, const std::string& needle) {
  ASSERT_FALSE(r.is_ok()) << needle;
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().to_string();
}

void expect_near(const std::vector<float>& got, const Vec& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " at " << i;
}

// ---- LinearAttention --------------------------------------------------------------------

// The sizes of a LinearAttention case: batch, sequence, query heads, key/value heads, d_k, d_v.
struct LaDims {
  int b, t, hq, hkv, dk, dv;
};

// The recurrence as the schema writes it, per batch and key/value head: with S the state before
// the token and a = exp(g_t) (1 when not gated), S' = a S + k_t (x)  w_t, where w_t = v_t (not
// delta) or beta_t (v_t - a S^T k_t); query head h reads key/value head h / (hq / hkv).
// decay: [b, t, hkv] (per_key false) or [b, t, hkv * dk]; beta: [b, t, hkv] or [b, t, 1].
// Returns the output [b, t, hq * dv]; `state` ([b, hkv, dk, dv]) is updated in place.
Vec linear_attention_loop(const LaDims& d, const std::string& rule, const Vec& q, const Vec& k, const Vec& v, const Vec& decay, bool per_key, const Vec& beta,
                          bool beta_shared, double scale, Vec& state) {
  const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  Vec y(static_cast<std::size_t>(d.b * d.t * d.hq * d.dv), 0.0);
  auto at = [](int i) { return static_cast<std::size_t>(i); };
  for (int b = 0; b < d.b; ++b)
    for (int t = 0; t < d.t; ++t)
      for (int g = 0; g < d.hkv; ++g) {
        const int tok = b * d.t + t;
        auto S = [&](int i, int j) -> double& { return state[at(((b * d.hkv + g) * d.dk + i) * d.dv + j)]; };
        auto a = [&](int i) { return gated ? std::exp(decay[at(per_key ? (tok * d.hkv + g) * d.dk + i : tok * d.hkv + g)]) : 1.0; };
        const double bt = delta ? beta[at(beta_shared ? tok : tok * d.hkv + g)] : 0.0;
        Vec w(at(d.dv));
        for (int j = 0; j < d.dv; ++j) {
          const double vj = v[at((tok * d.hkv + g) * d.dv + j)];
          double recalled = 0;
          for (int i = 0; i < d.dk; ++i) recalled += a(i) * S(i, j) * k[at((tok * d.hkv + g) * d.dk + i)];
          w[at(j)] = delta ? bt * (vj - recalled) : vj;
        }
        for (int i = 0; i < d.dk; ++i)
          for (int j = 0; j < d.dv; ++j) S(i, j) = a(i) * S(i, j) + k[at((tok * d.hkv + g) * d.dk + i)] * w[at(j)];
        for (int h = 0; h < d.hq; ++h) {
          if (h / (d.hq / d.hkv) != g) continue;
          for (int j = 0; j < d.dv; ++j) {
            double o = 0;
            for (int i = 0; i < d.dk; ++i) o += q[at((tok * d.hq + h) * d.dk + i)] * S(i, j);
            y[at((tok * d.hq + h) * d.dv + j)] = scale * o;
          }
        }
      }
  return y;
}

// A LinearAttention node over those inputs (empty vectors: left out).
Node linear_attention(const LaDims& d, const std::string& rule, const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                      const std::vector<float>& past, const std::vector<float>& decay, int decay_last, const std::vector<float>& beta, int beta_last) {
  std::vector<NamedTensor> in = {{"q", floats({d.b, d.t, d.hq * d.dk}, q)}, {"k", floats({d.b, d.t, d.hkv * d.dk}, k)}, {"v", floats({d.b, d.t, d.hkv * d.dv}, v)}};
  in.push_back(past.empty() ? NamedTensor{"", Tensor()} : NamedTensor{"past", floats({d.b, d.hkv, d.dk, d.dv}, past)});
  in.push_back(decay.empty() ? NamedTensor{"", Tensor()} : NamedTensor{"decay", floats({d.b, d.t, decay_last}, decay)});
  if (!beta.empty()) in.push_back({"beta", floats({d.b, d.t, beta_last}, beta)});
  Node n("LinearAttention", in);
  n.attr("q_num_heads", std::int64_t{d.hq});
  n.attr("kv_num_heads", std::int64_t{d.hkv});
  n.attr("update_rule", rule);
  return n;
}

// Log-space decays in (-0.5, 0) and update rates in (0, 1), as a model's would be.
std::vector<float> decays(std::size_t n, unsigned seed) {
  auto v = testing::random_floats(n, seed);
  for (float& x : v) x = -0.25f * (x + 1);
  return v;
}
std::vector<float> rates(std::size_t n, unsigned seed) {
  auto v = testing::random_floats(n, seed);
  for (float& x : v) x = 0.5f * (x + 1);
  return v;
}

TEST(ExecRecurrent, LinearAttentionEachRuleWithGroupedHeadsMatchesALoop) {
  // Three query heads per key/value head; d_k != d_v; a past state; scale 0.5.
  const LaDims d{2, 5, 6, 2, 3, 4};
  const auto n = [](int x) { return static_cast<std::size_t>(x); };
  const auto q = testing::random_floats(n(d.b * d.t * d.hq * d.dk), 1), k = testing::random_floats(n(d.b * d.t * d.hkv * d.dk), 2);
  const auto v = testing::random_floats(n(d.b * d.t * d.hkv * d.dv), 3), past = testing::random_floats(n(d.b * d.hkv * d.dk * d.dv), 4);
  const auto decay_key = decays(n(d.b * d.t * d.hkv * d.dk), 5), decay_head = decays(n(d.b * d.t * d.hkv), 6);
  const auto beta_head = rates(n(d.b * d.t * d.hkv), 7), beta_one = rates(n(d.b * d.t), 8);
  struct Case {
    std::string rule;
    bool per_key, beta_shared;
  };
  for (const Case& cs : {Case{"linear", false, false}, Case{"gated", false, false}, Case{"gated", true, false}, Case{"delta", false, true},
                         Case{"delta", false, false}, Case{"gated_delta", true, false}, Case{"gated_delta", false, true}}) {
    const bool gated = cs.rule == "gated" || cs.rule == "gated_delta", delta = cs.rule == "delta" || cs.rule == "gated_delta";
    const auto& decay = cs.per_key ? decay_key : decay_head;
    const auto& beta = cs.beta_shared ? beta_one : beta_head;
    Node node = linear_attention(d, cs.rule, q, k, v, past, gated ? decay : std::vector<float>{}, cs.per_key ? d.hkv * d.dk : d.hkv,
                                 delta ? beta : std::vector<float>{}, cs.beta_shared ? 1 : d.hkv);
    node.attr("scale", 0.5f);
    const auto [y, state] = node.run().value_or_throw();
    Vec want_state = widen(past);
    const Vec want = linear_attention_loop(d, cs.rule, widen(q), widen(k), widen(v), widen(decay), cs.per_key, widen(beta), cs.beta_shared, 0.5, want_state);
    const std::string what = cs.rule + (cs.per_key ? " per key" : "") + (cs.beta_shared ? " shared beta" : "");
    EXPECT_EQ(y.shape().dims(), (Dims{d.b, d.t, d.hq * d.dv})) << what;
    EXPECT_EQ(state.shape().dims(), (Dims{d.b, d.hkv, d.dk, d.dv})) << what;
    expect_near(y.to_vector<float>(), want, 1e-5, what + " output");
    expect_near(state.to_vector<float>(), want_state, 1e-5, what + " state");
  }
}

TEST(ExecRecurrent, LinearAttentionInChunksEqualsOnePass) {
  // 7 tokens as 3 then 4, the first chunk's present state the second's past; without a past
  // state the first chunk starts from zeros. Default scale 1 / sqrt(d_k), per-head decay.
  const LaDims whole{1, 7, 4, 2, 4, 3};
  const auto n = [](int x) { return static_cast<std::size_t>(x); };
  const int qw = whole.hq * whole.dk, kw = whole.hkv * whole.dk, vw = whole.hkv * whole.dv;
  const auto q = testing::random_floats(n(whole.t * qw), 11), k = testing::random_floats(n(whole.t * kw), 12), v = testing::random_floats(n(whole.t * vw), 13);
  const auto decay = decays(n(whole.t * whole.hkv), 14), beta = rates(n(whole.t * whole.hkv), 15);
  auto part = [](const std::vector<float>& x, int width, int from, int to) { return std::vector<float>(x.begin() + from * width, x.begin() + to * width); };
  const auto [y_all, s_all] = linear_attention(whole, "gated_delta", q, k, v, {}, decay, whole.hkv, beta, whole.hkv).run().value_or_throw();
  LaDims first = whole, second = whole;
  first.t = 3, second.t = 4;
  const auto [y1, s1] =
      linear_attention(first, "gated_delta", part(q, qw, 0, 3), part(k, kw, 0, 3), part(v, vw, 0, 3), {}, part(decay, whole.hkv, 0, 3), whole.hkv, part(beta, whole.hkv, 0, 3), whole.hkv)
          .run()
          .value_or_throw();
  const auto [y2, s2] = linear_attention(second, "gated_delta", part(q, qw, 3, 7), part(k, kw, 3, 7), part(v, vw, 3, 7), s1.to_vector<float>(), part(decay, whole.hkv, 3, 7),
                                         whole.hkv, part(beta, whole.hkv, 3, 7), whole.hkv)
                            .run()
                            .value_or_throw();
  std::vector<float> chunked = y1.to_vector<float>();
  for (float x : y2.to_vector<float>()) chunked.push_back(x);
  expect_near(chunked, widen(y_all.to_vector<float>()), 1e-6, "output");
  expect_near(s2.to_vector<float>(), widen(s_all.to_vector<float>()), 1e-6, "state");
  // And both against the loop, from a zero state with scale 1 / 2.
  Vec state(n(whole.hkv * whole.dk * whole.dv), 0.0);
  const Vec want = linear_attention_loop(whole, "gated_delta", widen(q), widen(k), widen(v), widen(decay), false, widen(beta), false, 0.5, state);
  expect_near(y_all.to_vector<float>(), want, 1e-5, "one pass");
  expect_near(s_all.to_vector<float>(), state, 1e-5, "one pass state");
}

TEST(ExecRecurrent, LinearAttentionOfAnEmptySequenceReturnsThePastState) {
  const LaDims d{2, 0, 2, 1, 2, 3};
  const auto past = testing::random_floats(12, 21);
  const auto [y, state] = linear_attention(d, "linear", {}, {}, {}, past, {}, 0, {}, 0).run().value_or_throw();
  EXPECT_EQ(y.shape().dims(), (Dims{2, 0, 6}));
  EXPECT_EQ(state.to_vector<float>(), past);
  // Without a past state: zeros.
  const auto [y0, zero] = linear_attention(d, "linear", {}, {}, {}, {}, {}, 0, {}, 0).run().value_or_throw();
  EXPECT_EQ(y0.numel(), 0);
  EXPECT_EQ(zero.to_vector<float>(), std::vector<float>(12, 0.0f));
}

TEST(ExecRecurrent, LinearAttentionKeepsAnF16StateNextToF32Activations) {
  // present_state takes past_state's type (f16) while the output keeps query's (f32).
  const LaDims d{1, 2, 1, 1, 2, 2};
  const auto q = testing::random_floats(4, 31), k = testing::random_floats(4, 32), v = testing::random_floats(4, 33), past = testing::random_floats(4, 34);
  std::vector<f16> past16;
  for (float x : past) past16.push_back(f16(x));
  Node node("LinearAttention", {{"q", floats({1, 2, 2}, q)}, {"k", floats({1, 2, 2}, k)}, {"v", floats({1, 2, 2}, v)},
                                {"past", Tensor::from_vector<f16>(Shape({1, 1, 2, 2}), past16).value_or_throw()}});
  node.attr("q_num_heads", std::int64_t{1});
  node.attr("kv_num_heads", std::int64_t{1});
  node.attr("update_rule", std::string("linear"));
  const auto [y, state] = node.run().value_or_throw();
  ASSERT_EQ(y.dtype(), DType::kF32);
  ASSERT_EQ(state.dtype(), DType::kF16);
  Vec want_state;
  for (f16 x : past16) want_state.push_back(static_cast<float>(x));
  const Vec want = linear_attention_loop(d, "linear", widen(q), widen(k), widen(v), {}, false, {}, false, 1 / std::sqrt(2.0), want_state);
  expect_near(y.to_vector<float>(), want, 1e-6, "output");
  const auto got16 = state.to_vector<f16>();
  std::vector<float> got_state;
  for (f16 x : got16) got_state.push_back(static_cast<float>(x));
  expect_near(got_state, want_state, 1e-3, "f16 state");
}

TEST(ExecRecurrent, LinearAttentionBadInputs) {
  const LaDims d{1, 2, 4, 2, 2, 2};
  const std::vector<float> q(16, 0.5f), kv(8, 0.5f), g(4, -0.1f), b(4, 0.5f);
  auto la = [&](const LaDims& dd, const std::string& rule, const std::vector<float>& past, const std::vector<float>& decay, int decay_last, const std::vector<float>& beta,
                int beta_last) { return linear_attention(dd, rule, q, kv, kv, past, decay, decay_last, beta, beta_last).run(); };
  expect_error(la(d, "gated_delta", {}, {}, 0, b, 2), "update_rule 'gated_delta' needs the decay input");
  expect_error(la(d, "linear", {}, {}, 0, b, 2), "update_rule 'linear' takes no beta input");
  expect_error(la(d, "delta", {}, g, 2, b, 2), "update_rule 'delta' takes no decay input");
  expect_error(la(d, "gated", {}, {}, 0, {}, 0), "update_rule 'gated' needs the decay input");
  expect_error(la(d, "fast", {}, {}, 0, {}, 0), "update_rule 'fast' (linear, gated, delta or gated_delta)");
  expect_error(la(d, "gated", {}, std::vector<float>(6, -0.1f), 3, {}, 0), "decay's last dim 3 must be kv_num_heads (2) or kv_num_heads x d_k (4)");
  expect_error(la(d, "delta", {}, {}, 0, std::vector<float>(6, 0.5f), 3), "beta's last dim 3 must be kv_num_heads (2) or 1");
  // A state of the wrong dims: [1, 2, 2, 2] expected.
  Node wrong("LinearAttention", {{"q", floats({1, 2, 8}, q)}, {"k", floats({1, 2, 4}, kv)}, {"v", floats({1, 2, 4}, kv)}, {"past", floats({1, 2, 4}, kv)}});
  wrong.attr("q_num_heads", std::int64_t{4});
  wrong.attr("kv_num_heads", std::int64_t{2});
  wrong.attr("update_rule", std::string("linear"));
  expect_error(wrong.run(), "past_state is [1, 2, 4], not [batch, kv_num_heads, d_k, d_v] = [1, 2, 2, 2]");
  // Head counts that do not divide: 4 query heads over 3 key/value heads; 3 heads for 8 query dims.
  LaDims three = d;
  three.hkv = 3;
  Node odd = linear_attention(three, "linear", q, std::vector<float>(12, 0.5f), std::vector<float>(12, 0.5f), {}, {}, 0, {}, 0);
  expect_error(odd.run(), "q_num_heads 4 is not a multiple of kv_num_heads 3");
  Node split("LinearAttention", {{"q", floats({1, 2, 8}, q)}, {"k", floats({1, 2, 4}, kv)}, {"v", floats({1, 2, 4}, kv)}});
  split.attr("q_num_heads", std::int64_t{3});
  split.attr("kv_num_heads", std::int64_t{1});
  split.attr("update_rule", std::string("linear"));
  expect_error(split.run(), "query's hidden size 8 does not split into 3 heads");
  // Key of another head size than the query's; a 2-D query; no head counts.
  Node keys("LinearAttention", {{"q", floats({1, 2, 8}, q)}, {"k", floats({1, 2, 6}, std::vector<float>(12, 0.5f))}, {"v", floats({1, 2, 4}, kv)}});
  keys.attr("q_num_heads", std::int64_t{4});
  keys.attr("kv_num_heads", std::int64_t{2});
  keys.attr("update_rule", std::string("linear"));
  expect_error(keys.run(), "key's hidden size 6 is not kv_num_heads x d_k = 2 x 2");
  Node flat("LinearAttention", {{"q", floats({2, 8}, q)}, {"k", floats({1, 2, 4}, kv)}, {"v", floats({1, 2, 4}, kv)}});
  flat.attr("q_num_heads", std::int64_t{4});
  flat.attr("kv_num_heads", std::int64_t{2});
  flat.attr("update_rule", std::string("linear"));
  expect_error(flat.run(), "query must be 3-D [batch, sequence, heads * size], not [2, 8]");
  Node bare("LinearAttention", {{"q", floats({1, 2, 8}, q)}, {"k", floats({1, 2, 4}, kv)}, {"v", floats({1, 2, 4}, kv)}});
  bare.attr("update_rule", std::string("linear"));
  expect_error(bare.run(), "LinearAttention needs both q_num_heads and kv_num_heads");
}

// ---- CausalConvWithState ----------------------------------------------------------------

// y[b, c, l] = bias[c] + sum_j w[c, j] P[b, c, l + j] over P = past ++ x, then x sigmoid(x) with
// silu. Returns y; `past` becomes the last K - 1 positions of P.
Vec causal_conv_loop(int B, int C, int L, int K, const Vec& x, const Vec& w, const Vec& bias, bool silu, Vec& past) {
  auto at = [](int i) { return static_cast<std::size_t>(i); };
  Vec y(at(B * C * L)), next(at(B * C * (K - 1)));
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < C; ++c) {
      Vec p(past.begin() + (b * C + c) * (K - 1), past.begin() + (b * C + c + 1) * (K - 1));
      for (int l = 0; l < L; ++l) p.push_back(x[at((b * C + c) * L + l)]);
      for (int l = 0; l < L; ++l) {
        double s = bias.empty() ? 0.0 : bias[at(c)];
        for (int j = 0; j < K; ++j) s += w[at(c * K + j)] * p[at(l + j)];
        y[at((b * C + c) * L + l)] = silu ? s / (1 + std::exp(-s)) : s;
      }
      for (int j = 0; j < K - 1; ++j) next[at((b * C + c) * (K - 1) + j)] = p[at(L + j)];
    }
  past = next;
  return y;
}

Node causal_conv(int B, int C, int L, int K, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias, const std::vector<float>& past) {
  std::vector<NamedTensor> in = {{"x", floats({B, C, L}, x)}, {"w", floats({C, 1, K}, w)}};
  in.push_back(bias.empty() ? NamedTensor{"", Tensor()} : NamedTensor{"bias", floats({C}, bias)});
  if (!past.empty()) in.push_back({"past", floats({B, C, K - 1}, past)});
  return Node("CausalConvWithState", in);
}

TEST(ExecRecurrent, CausalConvInChunksShorterThanTheKernelMatchesALoop) {
  // Kernel 5 (a state of 4 positions), 9 positions as chunks of 1, 2, 1 and 5: each short chunk's
  // present state keeps positions of the previous past state. Bias and SiLU; a starting state.
  constexpr int B = 2, C = 3, L = 9, K = 5;
  const auto x = testing::random_floats(B * C * L, 41), w = testing::random_floats(C * K, 42), bias = testing::random_floats(C, 43), past0 = testing::random_floats(B * C * (K - 1), 44);
  Vec want_state = widen(past0);
  const Vec want = causal_conv_loop(B, C, L, K, widen(x), widen(w), widen(bias), true, want_state);
  std::vector<float> state = past0, got(static_cast<std::size_t>(B * C * L));
  int from = 0;
  for (int len : {1, 2, 1, 5}) {
    std::vector<float> chunk;
    for (int r = 0; r < B * C; ++r)
      for (int l = from; l < from + len; ++l) chunk.push_back(x[static_cast<std::size_t>(r * L + l)]);
    Node node = causal_conv(B, C, len, K, chunk, w, bias, state);
    node.attr("activation", std::string("silu"));
    const auto [y, present] = node.run().value_or_throw();
    ASSERT_EQ(y.shape().dims(), (Dims{B, C, len}));
    ASSERT_EQ(present.shape().dims(), (Dims{B, C, K - 1}));
    const auto yv = y.to_vector<float>();
    for (int r = 0; r < B * C; ++r)
      for (int l = 0; l < len; ++l) got[static_cast<std::size_t>(r * L + from + l)] = yv[static_cast<std::size_t>(r * len + l)];
    state = present.to_vector<float>();
    from += len;
  }
  expect_near(got, want, 1e-6, "output");
  EXPECT_EQ(state, narrow(want_state));  // positions are copied, never rounded
}

TEST(ExecRecurrent, CausalConvOfAnEmptyInputReturnsThePastState) {
  constexpr int B = 1, C = 2, K = 3;
  const auto w = testing::random_floats(C * K, 51), past = testing::random_floats(B * C * (K - 1), 52);
  const auto [y, present] = causal_conv(B, C, 0, K, {}, w, {}, past).run().value_or_throw();
  EXPECT_EQ(y.shape().dims(), (Dims{B, C, 0}));
  EXPECT_EQ(present.to_vector<float>(), past);
  // No past state, input shorter than the state: zeros, then the input.
  const auto [y2, present2] = causal_conv(B, C, 1, K, {3.0f, 4.0f}, w, {}, {}).run().value_or_throw();
  EXPECT_EQ(present2.to_vector<float>(), (std::vector<float>{0.0f, 3.0f, 0.0f, 4.0f}));
  EXPECT_FLOAT_EQ(y2.to_vector<float>()[1], 4.0f * w[5]);
}

TEST(ExecRecurrent, CausalConvBadInputs) {
  const std::vector<float> x(8, 1.0f), w(6, 0.5f);
  expect_error(Node("CausalConvWithState", {{"x", floats({1, 2, 4}, x)}, {"w", floats({2, 1, 3}, w)}, {"", Tensor()}, {"past", floats({1, 2, 1}, {0, 0})}}).run(),
               "past_state is [1, 2, 1], not [batch, channels, kernel size - 1] = [1, 2, 2]");
  expect_error(Node("CausalConvWithState", {{"x", floats({1, 2, 4}, x)}, {"w", floats({2, 1, 3}, w)}, {"bias", floats({3}, {1, 2, 3})}}).run(), "bias must be [2] (one per channel), not [3]");
  expect_error(Node("CausalConvWithState", {{"x", floats({1, 2, 4}, x)}, {"w", floats({2, 3}, w)}}).run(), "weight must be [channels, 1, kernel size] with 2 channels, not [2, 3]");
  expect_error(Node("CausalConvWithState", {{"x", floats({1, 2, 4}, x)}, {"w", floats({1, 2, 3}, w)}}).run(), "weight must be [channels, 1, kernel size] with 2 channels, not [1, 2, 3]");
  expect_error(Node("CausalConvWithState", {{"x", floats({2, 4}, x)}, {"w", floats({2, 1, 3}, w)}}).run(), "input must be 3-D [batch, channels, length], not [2, 4]");
  expect_error(Node("CausalConvWithState", {{"x", floats({1, 2, 4}, x)}, {"w", floats({2, 1, 0}, {})}}).run(), "has a kernel size of 0");
  Node relu = causal_conv(1, 2, 4, 3, x, w, {}, {});
  relu.attr("activation", std::string("relu"));
  expect_error(relu.run(), "activation 'relu' (none, silu or swish)");
}

}  // namespace
}  // namespace tessera::exec
