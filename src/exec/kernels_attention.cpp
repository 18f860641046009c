// ONNX Attention (opsets 23-25): scaled dot-product attention over 3-D ([B, L, H * D]) or 4-D
// ([B, H, L, D]) Q, K, V with an optional mask (bool: attend where true; float: added), a
// key/value cache (past_key/past_value, returned extended as present_*), nonpad_kv_seqlen,
// causal and sliding-window masking (bottom-right aligned to the cache), grouped-query heads,
// softcap and the qk_matmul_output modes. A row with no key to attend gives zeros.
//
// Computed in f64 loops, each output rounded once to Q's dtype: a reference-grade kernel for
// conformance. Transformer models exported from PyTorch reach tessera as MatMul + Softmax,
// which run on the blas and dnn primitives; a fused attention primitive is future work.
#include <cmath>
#include <limits>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A tensor as f64 in [B, H, L, D] order: 4-D as it is, 3-D [B, L, H * D] split into heads.
struct Heads {
  Tensor data;  // packed f64 [B, H, L, D]
  std::int64_t b = 0, h = 0, l = 0, d = 0;
  double at(std::int64_t bi, std::int64_t hi, std::int64_t li, std::int64_t di) const {
    return data.data<double>()[((bi * h + hi) * l + li) * d + di];
  }
};

Result<Heads> heads(dnn::Handle& hd, const Tensor& x, std::int64_t num_heads, const char* what) {
  Heads r;
  if (x.rank() == 4) {
    TESSERA_ASSIGN_OR_RETURN(r.data, as_f64(hd, x));
    r.b = x.shape()[0], r.h = x.shape()[1], r.l = x.shape()[2], r.d = x.shape()[3];
    return r;
  }
  if (x.rank() != 3) return invalid_argument(std::string(what) + " must be 3-D or 4-D, not rank " + std::to_string(x.rank()));
  if (num_heads <= 0 || x.shape()[2] % num_heads != 0)
    return invalid_argument(std::string(what) + "'s hidden size " + std::to_string(x.shape()[2]) + " does not split into " + std::to_string(num_heads) + " heads");
  r.b = x.shape()[0], r.h = num_heads, r.l = x.shape()[1], r.d = x.shape()[2] / num_heads;
  TESSERA_ASSIGN_OR_RETURN(Tensor split, reshaped(hd, x, {r.b, r.l, r.h, r.d}));
  TESSERA_ASSIGN_OR_RETURN(Tensor t, split.permute({0, 2, 1, 3}));
  TESSERA_ASSIGN_OR_RETURN(r.data, as_f64(hd, t));
  return r;
}

// [past ; now] along the sequence (dim 2).
Result<Heads> with_past(const Tensor* past, dnn::Handle& hd, Heads now, const char* what) {
  if (!past) return now;
  TESSERA_ASSIGN_OR_RETURN(Heads p, heads(hd, *past, 0, what));
  if (past->rank() != 4 || p.b != now.b || p.h != now.h || p.d != now.d)
    return invalid_argument(std::string(what) + " has dims " + past->shape().to_string() + ", which do not match the new keys/values");
  Heads r{Tensor(), now.b, now.h, p.l + now.l, now.d};
  TESSERA_ASSIGN_OR_RETURN(r.data, new_tensor({r.b, r.h, r.l, r.d}, DType::kF64));
  double* o = r.data.data<double>();
  for (std::int64_t b = 0; b < r.b; ++b)
    for (std::int64_t h = 0; h < r.h; ++h)
      for (std::int64_t l = 0; l < r.l; ++l)
        for (std::int64_t d = 0; d < r.d; ++d) *o++ = l < p.l ? p.at(b, h, l, d) : now.at(b, h, l - p.l, d);
  return r;
}

}  // namespace

Status attention_kernel(KernelCall& c) {
  const Tensor &qt = *c.input(0), &kt = *c.input(1), &vt = *c.input(2);
  const Tensor* mask = c.input(3);
  const Tensor *past_k = c.input(4), *past_v = c.input(5), *nonpad = c.input(6);
  if (qt.rank() != kt.rank() || qt.rank() != vt.rank()) return invalid_argument("Q, K and V must have the same rank");
  if (!is_floating(qt.dtype())) return invalid_argument("Attention takes floating-point Q, K, V");
  if ((past_k == nullptr) != (past_v == nullptr)) return invalid_argument("past_key and past_value must come together");
  if (nonpad && past_k) return invalid_argument("nonpad_kv_seqlen cannot be combined with past_key/past_value");
  const std::int64_t qn = c.attr_int("q_num_heads", 0), kvn = c.attr_int("kv_num_heads", 0);
  TESSERA_ASSIGN_OR_RETURN(Heads q, heads(c.h, qt, qn, "Q"));
  TESSERA_ASSIGN_OR_RETURN(Heads k0, heads(c.h, kt, kvn, "K"));
  TESSERA_ASSIGN_OR_RETURN(Heads v0, heads(c.h, vt, kvn, "V"));
  const std::int64_t past_len = past_k ? past_k->shape()[2] : 0;
  TESSERA_ASSIGN_OR_RETURN(Heads k, with_past(past_k, c.h, std::move(k0), "past_key"));
  TESSERA_ASSIGN_OR_RETURN(Heads v, with_past(past_v, c.h, std::move(v0), "past_value"));
  if (k.b != q.b || v.b != q.b || k.d != q.d || v.h != k.h || v.l != k.l)
    return invalid_argument("Q, K and V dims do not match (Q " + qt.shape().to_string() + ", K " + kt.shape().to_string() + ", V " + vt.shape().to_string() + ")");
  if (k.h <= 0 || q.h % k.h != 0) return invalid_argument(std::to_string(q.h) + " query heads do not group over " + std::to_string(k.h) + " key/value heads");
  const std::int64_t B = q.b, H = q.h, Lq = q.l, Lk = k.l, D = q.d, Dv = v.d, group = q.h / k.h;

  // The scale, applied as sqrt(scale) to Q and K both (rounded to Q's dtype, as ONNX does).
  const float scale_attr = c.attr_float("scale", 0.0f);
  double scale = c.attr("scale") ? static_cast<double>(scale_attr) : 1.0 / std::sqrt(static_cast<double>(D));
  {
    TESSERA_ASSIGN_OR_RETURN(Tensor s, Tensor::from_vector<double>(Shape{}, {std::sqrt(scale)}));
    Tensor st, back;
    TESSERA_RETURN_IF_ERROR(from_f64(c.h, s, qt.dtype(), st));
    TESSERA_ASSIGN_OR_RETURN(back, as_f64(c.h, st));
    scale = *back.data<double>();
  }
  const double softcap = c.attr_float("softcap", 0.0f);
  const bool causal = c.attr_int("is_causal", 0) != 0;
  const std::int64_t left = c.attr_int("left_window_size", -1), right = c.attr_int("right_window_size", -1);
  const std::int64_t mode = c.attr_int("qk_matmul_output_mode", 0);

  // The mask, right-aligned against [B, H, Lq, Lk]; keys past its last dim are masked.
  Tensor m;
  Dims mstride(4, 0);
  std::int64_t mlen = 0;
  const bool mbool = mask && mask->dtype() == DType::kBool;
  if (mask) {
    if (mask->rank() < 1 || mask->rank() > 4) return invalid_argument("attn_mask must have rank 1 to 4");
    TESSERA_ASSIGN_OR_RETURN(m, as_f64(c.h, *mask));
    const Dims want = {B, H, Lq, Lk};
    std::int64_t st = 1;
    for (int i = mask->rank() - 1, j = 3; i >= 0; --i, --j) {
      const std::int64_t d = mask->shape()[i];
      if (j == 3) {
        mlen = d;
        if (d > Lk) return invalid_argument("attn_mask has " + std::to_string(d) + " keys for " + std::to_string(Lk));
      } else if (d != 1 && d != want[static_cast<std::size_t>(j)]) {
        return invalid_argument("attn_mask dims " + mask->shape().to_string() + " do not broadcast to " + Shape(want).to_string());
      }
      mstride[static_cast<std::size_t>(j)] = d == 1 && j != 3 ? 0 : st;
      st *= d;
    }
  }
  Dims nonpad_len;
  if (nonpad) {
    TESSERA_ASSIGN_OR_RETURN(nonpad_len, int_values(*nonpad, "nonpad_kv_seqlen"));
    if (static_cast<std::int64_t>(nonpad_len.size()) != B) return invalid_argument("nonpad_kv_seqlen must hold one length per batch");
  }

  TESSERA_ASSIGN_OR_RETURN(Tensor y, new_tensor({B, H, Lq, Dv}, DType::kF64));
  TESSERA_ASSIGN_OR_RETURN(Tensor qk, new_tensor({B, H, Lq, Lk}, DType::kF64));
  std::vector<double> s(static_cast<std::size_t>(Lk)), bias(static_cast<std::size_t>(Lk));
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t offset = past_k ? past_len : nonpad ? nonpad_len[static_cast<std::size_t>(b)] - Lq : 0;
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < Lq; ++i) {
        double* qkrow = qk.data<double>() + ((b * H + h) * Lq + i) * Lk;
        bool any = false;
        for (std::int64_t j = 0; j < Lk; ++j) {
          double bj = 0;
          if (mask) {
            if (j >= mlen) {
              bj = kNegInf;
            } else {
              const double mv = m.data<double>()[b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3]];
              bj = mbool ? (mv != 0 ? 0.0 : kNegInf) : mv;
            }
          }
          if (causal && j > i + offset) bj = kNegInf;
          const std::int64_t diff = i + offset - j;
          if ((left >= 0 && diff > left) || (right >= 0 && -diff > right)) bj = kNegInf;
          if (nonpad && j >= nonpad_len[static_cast<std::size_t>(b)]) bj = kNegInf;
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d) dot += (q.at(b, h, i, d) * scale) * (k.at(b, h / group, j, d) * scale);
          if (softcap > 0) dot = softcap * std::tanh(dot / softcap);
          s[static_cast<std::size_t>(j)] = dot;
          bias[static_cast<std::size_t>(j)] = bj;
          any = any || bj != kNegInf;
          qkrow[j] = mode == 2 ? dot + bj : dot;
        }
        // Softmax of the biased scores; a row with every key masked is all zeros.
        double mx = kNegInf, sum = 0;
        for (std::int64_t j = 0; j < Lk; ++j) mx = std::max(mx, s[static_cast<std::size_t>(j)] + bias[static_cast<std::size_t>(j)]);
        for (std::int64_t j = 0; j < Lk; ++j) {
          double& p = s[static_cast<std::size_t>(j)];
          p = any && mx != kNegInf ? std::exp(p + bias[static_cast<std::size_t>(j)] - mx) : 0.0;
          sum += p;
        }
        for (std::int64_t j = 0; j < Lk; ++j) {
          double& p = s[static_cast<std::size_t>(j)];
          p = sum > 0 ? p / sum : 0.0;
          if (mode == 3) qkrow[j] = p;
        }
        double* yrow = y.data<double>() + ((b * H + h) * Lq + i) * Dv;
        for (std::int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (std::int64_t j = 0; j < Lk; ++j) acc += s[static_cast<std::size_t>(j)] * v.at(b, h / group, j, d);
          yrow[d] = acc;
        }
      }
  }
  if (qt.rank() == 3) {  // back to [B, Lq, H * Dv]
    TESSERA_ASSIGN_OR_RETURN(Tensor t, y.permute({0, 2, 1, 3}));
    TESSERA_ASSIGN_OR_RETURN(Tensor packed, like(t, DType::kF64));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(t), t.data(), desc(packed), packed.data()));
    TESSERA_ASSIGN_OR_RETURN(y, reshaped(c.h, packed, {B, Lq, H * Dv}));
  }
  TESSERA_RETURN_IF_ERROR(from_f64(c.h, y, qt.dtype(), c.out[0]));
  const Tensor* extra[3] = {&k.data, &v.data, &qk};
  for (std::size_t o = 1; o < c.out.size() && o < 4; ++o) {
    if (c.node.outputs[o] == graph::kNoValue) continue;
    TESSERA_RETURN_IF_ERROR(from_f64(c.h, *extra[o - 1], c.input(o == 2 ? 2 : o == 1 ? 1 : 0)->dtype(), c.out[o]));
  }
  return Status::ok();
}

}  // namespace tessera::exec::detail
