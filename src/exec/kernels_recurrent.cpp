// The executor's state-carrying sequence kernels of opset 27, reference-grade (f64 loops, each
// output rounded once to its type): LinearAttention (the linear, gated, delta and gated-delta
// recurrences over a [d_k, d_v] state per key/value head, grouped-query heads, a past state in
// and the present state out) and CausalConvWithState (a depthwise causal 1-D convolution whose
// left context comes from a carried state, with bias and a fused SiLU).
//
// Both process the sequence token by token, so a sequence split into chunks, each run with the
// previous chunk's present state as its past state, gives the result of one pass over the whole.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;


// x as packed f64 (an empty tensor of x's dims when x holds nothing).
Result<Tensor> f64_of(dnn::Handle& h, const Tensor& x) {
  if (x.numel() == 0) return new_tensor(x.shape().dims(), DType::kF64);
  return as_f64(h, x);
}

// d cast to `dtype` into out (an empty tensor of d's dims when d holds nothing).
Status store(dnn::Handle& h, const Tensor& d, DType dtype, Tensor& out) {
  if (d.numel() == 0) {
    TESSERA_ASSIGN_OR_RETURN(out, new_tensor(d.shape().dims(), dtype));
    return Status::ok();
  }
  return from_f64(h, d, dtype, out);
}

// The packed f64 tensor d rounded to `dtype` and back: the value an op of that type would hold.
Status round_through(dnn::Handle& h, Tensor& d, DType dtype) {
  if (dtype == DType::kF64 || d.numel() == 0) return Status::ok();
  Tensor narrow;
  TESSERA_RETURN_IF_ERROR(from_f64(h, d, dtype, narrow));
  TESSERA_ASSIGN_OR_RETURN(d, as_f64(h, narrow));
  return Status::ok();
}

// Whether output k of the node is wanted.
bool wants_output(const KernelCall& c, std::size_t k) { return k < c.out.size() && k < c.node.outputs.size() && c.node.outputs[k] != graph::kNoValue; }

// An error unless t (named `what`; null: left out) has the dtype of ref (named `ref_what`).
Status same_dtype(const Tensor* t, const char* what, const Tensor& ref, const char* ref_what) {
  if (t && t->dtype() != ref.dtype())
    return invalid_argument(std::string(what) + " is " + std::string(dtype_name(t->dtype())) + " but " + ref_what + " is " + std::string(dtype_name(ref.dtype())) + ": they must have one type");
  return Status::ok();
}

}  // namespace

// LinearAttention (opset 27). query [B, T, Hq * dk], key [B, T, Hkv * dk], value [B, T, Hkv * dv];
// one state S [dk, dv] per batch and key/value head, from past_state ([B, Hkv, dk, dv]) or zeros.
// Per token t and head: gated rules first decay S by exp(decay_t) (per head, decay [B, T, Hkv], or
// per key row, decay [B, T, Hkv * dk]); delta rules replace v_t by beta_t (v_t - S^T k_t) with the
// decayed S (beta [B, T, Hkv], or [B, T, 1] shared by the heads); then S += k_t v_t^T, and each of
// the Hq / Hkv query heads of that key/value head reads scale * S^T q_t (scale: 1 / sqrt(dk) when
// the attribute is 0 or left out). chunk_size only tunes chunked implementations: ignored here.
// Output [B, T, Hq * dv] in query's type; present_state = the final S in past_state's type
// (query's without one).
Status linear_attention_kernel(KernelCall& c) {
  const Tensor &q = *c.input(0), &k = *c.input(1), &v = *c.input(2);
  const Tensor *past = c.input(3), *decay = c.input(4), *beta = c.input(5);
  const std::string rule = c.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return invalid_argument("update_rule '" + rule + "' (linear, gated, delta or gated_delta)");
  const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  if (!c.attr("q_num_heads") || !c.attr("kv_num_heads")) return invalid_argument("LinearAttention needs both q_num_heads and kv_num_heads");
  const std::int64_t hq = c.attr_int("q_num_heads", 0), hkv = c.attr_int("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0) return invalid_argument("q_num_heads (" + std::to_string(hq) + ") and kv_num_heads (" + std::to_string(hkv) + ") must be positive");
  if (hq % hkv != 0) return invalid_argument("q_num_heads " + std::to_string(hq) + " is not a multiple of kv_num_heads " + std::to_string(hkv));
  if (gated && !decay) return invalid_argument("update_rule '" + rule + "' needs the decay input");
  if (!gated && decay) return invalid_argument("update_rule '" + rule + "' takes no decay input");
  if (delta && !beta) return invalid_argument("update_rule '" + rule + "' needs the beta input");
  if (!delta && beta) return invalid_argument("update_rule '" + rule + "' takes no beta input");

  if (!is_floating(q.dtype())) return unsupported("LinearAttention of " + std::string(dtype_name(q.dtype())));
  TESSERA_RETURN_IF_ERROR(same_dtype(&k, "key", q, "query"));
  TESSERA_RETURN_IF_ERROR(same_dtype(&v, "value", q, "query"));
  TESSERA_RETURN_IF_ERROR(same_dtype(decay, "decay", q, "query"));
  TESSERA_RETURN_IF_ERROR(same_dtype(beta, "beta", q, "query"));
  const std::pair<const Tensor*, const char*> packed[] = {{&q, "query"}, {&k, "key"}, {&v, "value"}, {decay, "decay"}, {beta, "beta"}};
  for (const auto& [t, what] : packed)
    if (t && t->rank() != 3) return invalid_argument(std::string(what) + " must be 3-D [batch, sequence, heads * size], not " + t->shape().to_string());
  const std::int64_t B = q.shape()[0], T = q.shape()[1];
  for (const auto& [t, what] : packed)
    if (t && (t->shape()[0] != B || t->shape()[1] != T))
      return invalid_argument(std::string(what) + " " + t->shape().to_string() + " does not have query's batch and sequence (" + std::to_string(B) + ", " + std::to_string(T) + ")");
  if (q.shape()[2] % hq != 0) return invalid_argument("query's hidden size " + std::to_string(q.shape()[2]) + " does not split into " + std::to_string(hq) + " heads");
  const std::int64_t dk = q.shape()[2] / hq;
  if (dk == 0) return invalid_argument("query's hidden size 0 leaves the heads no key dims");
  if (k.shape()[2] != hkv * dk)
    return invalid_argument("key's hidden size " + std::to_string(k.shape()[2]) + " is not kv_num_heads x d_k = " + std::to_string(hkv) + " x " + std::to_string(dk));
  if (v.shape()[2] % hkv != 0) return invalid_argument("value's hidden size " + std::to_string(v.shape()[2]) + " does not split into " + std::to_string(hkv) + " heads");
  const std::int64_t dv = v.shape()[2] / hkv, group = hq / hkv;
  const bool decay_per_key = decay && decay->shape()[2] == hkv * dk;
  if (decay && !decay_per_key && decay->shape()[2] != hkv)
    return invalid_argument("decay's last dim " + std::to_string(decay->shape()[2]) + " must be kv_num_heads (" + std::to_string(hkv) + ") or kv_num_heads x d_k (" +
                            std::to_string(hkv * dk) + ")");
  const bool beta_shared = beta && beta->shape()[2] == 1 && hkv != 1;
  if (beta && !beta_shared && beta->shape()[2] != hkv)
    return invalid_argument("beta's last dim " + std::to_string(beta->shape()[2]) + " must be kv_num_heads (" + std::to_string(hkv) + ") or 1");
  const Dims state_dims = {B, hkv, dk, dv};
  if (past) {
    if (!is_floating(past->dtype())) return invalid_argument("past_state must be a float tensor, not " + std::string(dtype_name(past->dtype())));
    if (past->shape().dims() != state_dims) return invalid_argument("past_state is " + past->shape().to_string() + ", not [batch, kv_num_heads, d_k, d_v] = " + dims_string(state_dims));
  }
  const float scale_attr = c.attr_float("scale", 0.0f);
  const double scale = scale_attr != 0.0f ? static_cast<double>(scale_attr) : 1.0 / std::sqrt(static_cast<double>(dk));

  TESSERA_ASSIGN_OR_RETURN(const Tensor qd, f64_of(c.h, q));
  TESSERA_ASSIGN_OR_RETURN(const Tensor kd, f64_of(c.h, k));
  TESSERA_ASSIGN_OR_RETURN(const Tensor vd, f64_of(c.h, v));
  Tensor gd, bd, state;
  if (decay) {
    TESSERA_ASSIGN_OR_RETURN(gd, f64_of(c.h, *decay));
  }
  if (beta) {
    TESSERA_ASSIGN_OR_RETURN(bd, f64_of(c.h, *beta));
  }
  if (past) {
    TESSERA_ASSIGN_OR_RETURN(state, f64_of(c.h, *past));
  } else {
    TESSERA_ASSIGN_OR_RETURN(state, new_tensor(state_dims, DType::kF64));
    for (std::int64_t i = 0; i < state.numel(); ++i) state.data<double>()[i] = 0.0;
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor({B, T, hq * dv}, DType::kF64));

  std::vector<double> u(static_cast<std::size_t>(dv));
  double* S0 = state.data<double>();
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t tok = b * T + t;
      for (std::int64_t g = 0; g < hkv; ++g) {
        double* S = S0 + (b * hkv + g) * dk * dv;
        const double* kt = kd.data<double>() + (tok * hkv + g) * dk;
        const double* vt = vd.data<double>() + (tok * hkv + g) * dv;
        if (gated) {
          for (std::int64_t i = 0; i < dk; ++i) {
            const double e = std::exp(gd.data<double>()[decay_per_key ? (tok * hkv + g) * dk + i : tok * hkv + g]);
            for (std::int64_t j = 0; j < dv; ++j) S[i * dv + j] *= e;
          }
        }
        const double bt = delta ? bd.data<double>()[beta_shared ? tok : tok * hkv + g] : 1.0;
        for (std::int64_t j = 0; j < dv; ++j) {
          double recalled = 0;
          if (delta)
            for (std::int64_t i = 0; i < dk; ++i) recalled += S[i * dv + j] * kt[i];
          u[static_cast<std::size_t>(j)] = delta ? bt * (vt[j] - recalled) : vt[j];
        }
        for (std::int64_t i = 0; i < dk; ++i)
          for (std::int64_t j = 0; j < dv; ++j) S[i * dv + j] += kt[i] * u[static_cast<std::size_t>(j)];
        for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
          const double* qt = qd.data<double>() + (tok * hq + h) * dk;
          double* y = yd.data<double>() + (tok * hq + h) * dv;
          for (std::int64_t j = 0; j < dv; ++j) {
            double acc = 0;
            for (std::int64_t i = 0; i < dk; ++i) acc += qt[i] * S[i * dv + j];
            y[j] = scale * acc;
          }
        }
      }
    }
  TESSERA_RETURN_IF_ERROR(store(c.h, yd, q.dtype(), c.out[0]));
  if (wants_output(c, 1)) {
    TESSERA_RETURN_IF_ERROR(store(c.h, state, past ? past->dtype() : q.dtype(), c.out[1]));
  }
  return Status::ok();
}

// CausalConvWithState (opset 27). input [B, C, L], weight [C, 1, K], optional bias [C] and
// past_state [B, C, K - 1] (zeros when left out). Over the padded sequence P = past_state ++
// input (length K - 1 + L): output[b, c, l] = bias[c] + sum_j weight[c, 0, j] P[b, c, l + j],
// rounded to the input's type, then, with activation silu (or its alias swish), times its
// sigmoid. present_state is the last K - 1 positions of P (reaching into past_state when L is
// shorter than that; [B, C, 0] for K = 1).
Status causal_conv_with_state_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &w = *c.input(1);
  const Tensor *bias = c.input(2), *past = c.input(3);
  const std::string act = c.attr_string("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") return invalid_argument("activation '" + act + "' (none, silu or swish)");
  const bool silu = act != "none";
  if (!is_floating(x.dtype())) return unsupported("CausalConvWithState of " + std::string(dtype_name(x.dtype())));
  TESSERA_RETURN_IF_ERROR(same_dtype(&w, "weight", x, "input"));
  TESSERA_RETURN_IF_ERROR(same_dtype(bias, "bias", x, "input"));
  TESSERA_RETURN_IF_ERROR(same_dtype(past, "past_state", x, "input"));
  if (x.rank() != 3) return invalid_argument("input must be 3-D [batch, channels, length], not " + x.shape().to_string());
  const std::int64_t B = x.shape()[0], C = x.shape()[1], L = x.shape()[2];
  if (w.rank() != 3 || w.shape()[0] != C || w.shape()[1] != 1)
    return invalid_argument("weight must be [channels, 1, kernel size] with " + std::to_string(C) + " channels, not " + w.shape().to_string());
  const std::int64_t K = w.shape()[2];
  if (K < 1) return invalid_argument("weight " + w.shape().to_string() + " has a kernel size of 0");
  if (bias && (bias->rank() != 1 || bias->shape()[0] != C))
    return invalid_argument("bias must be [" + std::to_string(C) + "] (one per channel), not " + bias->shape().to_string());
  const Dims state_dims = {B, C, K - 1};
  if (past && past->shape().dims() != state_dims)
    return invalid_argument("past_state is " + past->shape().to_string() + ", not [batch, channels, kernel size - 1] = " + dims_string(state_dims));

  TESSERA_ASSIGN_OR_RETURN(const Tensor xd, f64_of(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(const Tensor wd, f64_of(c.h, w));
  Tensor bd, pd;
  if (bias) {
    TESSERA_ASSIGN_OR_RETURN(bd, f64_of(c.h, *bias));
  }
  if (past) {
    TESSERA_ASSIGN_OR_RETURN(pd, f64_of(c.h, *past));
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor({B, C, L}, DType::kF64));
  TESSERA_ASSIGN_OR_RETURN(Tensor sd, new_tensor(state_dims, DType::kF64));
  const std::int64_t K1 = K - 1;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      const std::int64_t row = b * C + ch;
      // Position p of the padded sequence: past_state (or 0) before K - 1, the input after.
      auto padded = [&](std::int64_t p) {
        if (p >= K1) return xd.data<double>()[row * L + p - K1];
        return past ? pd.data<double>()[row * K1 + p] : 0.0;
      };
      const double* wk = wd.data<double>() + ch * K;
      for (std::int64_t l = 0; l < L; ++l) {
        double acc = bias ? bd.data<double>()[ch] : 0.0;
        for (std::int64_t j = 0; j < K; ++j) acc += wk[j] * padded(l + j);
        yd.data<double>()[row * L + l] = acc;
      }
      for (std::int64_t j = 0; j < K1; ++j) sd.data<double>()[row * K1 + j] = padded(L + j);
    }
  if (silu) {
    // The convolution's output as the input's type holds it, then x * sigmoid(x).
    TESSERA_RETURN_IF_ERROR(round_through(c.h, yd, x.dtype()));
    double* y = yd.data<double>();
    for (std::int64_t i = 0; i < yd.numel(); ++i) y[i] = y[i] / (1.0 + std::exp(-y[i]));
  }
  TESSERA_RETURN_IF_ERROR(store(c.h, yd, x.dtype(), c.out[0]));
  if (wants_output(c, 1)) {
    TESSERA_RETURN_IF_ERROR(store(c.h, sd, x.dtype(), c.out[1]));
  }
  return Status::ok();
}

}  // namespace tessera::exec::detail
