// The executor's detection, positional-embedding and integer matrix kernels, reference-grade:
// NonMaxSuppression (greedy per batch and class, IoU in f32 as ONNX's reference and ONNX
// Runtime compute it), RotaryEmbedding (opset 23: 3-D and 4-D input, halves or interleaved
// pairs, partial rotation, caches indexed by position_ids or given per token; f64), and the
// integer matrix products MatMulInteger (i32, wrapping) and QLinearMatMul (requantised to the
// output's zero point type), both with NumPy's matmul shapes and zero points (and scales) per
// tensor, per row of A or per column of B, summed exactly in i64.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

// ---- NonMaxSuppression -------------------------------------------------------------------

// An optional scalar input: absent when left out or empty.
Result<std::optional<double>> optional_scalar(dnn::Handle& h, const Tensor* t, const std::string& what) {
  if (!t || t->numel() == 0) return std::optional<double>();
  TESSERA_ASSIGN_OR_RETURN(const double v, scalar_value(h, *t, what));
  return std::optional<double>(v);
}

// Whether two boxes overlap by an IoU above `threshold`; corners [y1, x1, y2, x2] in any order,
// or [x centre, y centre, width, height].
bool suppresses(const float* a, const float* b, bool centre, float threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (centre) {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  } else {
    ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]), ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
    bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]), by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  }
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1), iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (!(ix1 > ix0) || !(iy1 > iy0)) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  const float uni = area_a + area_b - inter;
  if (!(inter > 0) || !(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;
  return inter / uni > threshold;
}

// ---- integer matrix products -------------------------------------------------------------

// NumPy matmul's shapes for A and B: each promoted to rank 2 or more (a 1-D A is one row, a
// 1-D B one column), batch dims broadcast; per output batch, the batch index into each.
struct MatmulShape {
  Dims a, b, ydims;  // a [..., m, k], b [..., k, n] as promoted; the output's dims
  std::int64_t m = 0, k = 0, n = 0;
  std::vector<std::int64_t> abatch, bbatch;
};

std::int64_t product(Dims::const_iterator first, Dims::const_iterator last) {
  std::int64_t p = 1;
  for (; first != last; ++first) p *= *first;
  return p;
}

Result<MatmulShape> matmul_shape(const Tensor& a, const Tensor& b) {
  if (a.rank() < 1 || b.rank() < 1) return invalid_argument("the matrices must have rank 1 or more, not " + a.shape().to_string() + " and " + b.shape().to_string());
  MatmulShape s;
  s.a = a.shape().dims();
  s.b = b.shape().dims();
  if (a.rank() == 1) s.a.insert(s.a.begin(), 1);
  if (b.rank() == 1) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k) return invalid_argument("A " + a.shape().to_string() + " and B " + b.shape().to_string() + " do not multiply (inner dims " + std::to_string(s.k) + " and " + std::to_string(s.b[s.b.size() - 2]) + ")");
  const Dims ab(s.a.begin(), s.a.end() - 2), bb(s.b.begin(), s.b.end() - 2);
  TESSERA_ASSIGN_OR_RETURN(const Dims batch, dnn::broadcast_dims(ab, bb));
  s.ydims = batch;
  if (a.rank() > 1) s.ydims.push_back(s.m);
  if (b.rank() > 1) s.ydims.push_back(s.n);
  const std::int64_t nb = product(batch.begin(), batch.end());
  Dims idx;
  for (std::int64_t o = 0; o < nb; ++o) {
    unravel(o, batch, idx);
    auto flat = [&](const Dims& own) {  // own batch dims, right-aligned to the output's
      std::int64_t f = 0;
      const std::size_t lead = batch.size() - own.size();
      for (std::size_t i = 0; i < own.size(); ++i) f = f * own[i] + (own[i] == 1 ? 0 : idx[lead + i]);
      return f;
    };
    s.abatch.push_back(flat(ab));
    s.bbatch.push_back(flat(bb));
  }
  return s;
}

// A zero point or scale of an operand of (promoted) dims d as one value per batch index of d
// and row (A: `rows`) or column (B): per tensor (one value), an M- (N-) element vector, or a
// tensor that broadcasts to d with its K dim set to 1 ([..., M, 1] or [..., 1, N]). Zeros when
// left out.
Result<std::vector<double>> line_values(KernelCall& c, const Tensor* p, const Dims& d, bool rows, const std::string& what) {
  const std::int64_t lines = rows ? d[d.size() - 2] : d.back();
  const std::int64_t count = product(d.begin(), d.end() - 2) * lines;
  if (!p) return std::vector<double>(static_cast<std::size_t>(count), 0.0);
  TESSERA_ASSIGN_OR_RETURN(Tensor pd, as_f64(c.h, *p));
  const double* v = pd.data<double>();
  std::vector<double> out(static_cast<std::size_t>(count));
  if (p->numel() == 1) {
    std::fill(out.begin(), out.end(), v[0]);
    return out;
  }
  if (p->rank() == 1 && p->numel() == lines) {
    for (std::int64_t i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = v[i % lines];
    return out;
  }
  Dims target = d;
  target[rows ? d.size() - 1 : d.size() - 2] = 1;
  Result<Dims> both = dnn::broadcast_dims(p->shape().dims(), target);
  if (!both.is_ok() || both.value() != target)
    return invalid_argument(what + " has dims " + p->shape().to_string() + ": it must be a scalar, hold " + std::to_string(lines) + " values (one per " +
                            (rows ? "row" : "column") + ") or broadcast to " + dims_string(target));
  TESSERA_ASSIGN_OR_RETURN(Tensor e, new_tensor(target, DType::kF64));
  TESSERA_RETURN_IF_ERROR(dnn::expand(c.h, desc(pd), pd.data(), desc(e), e.data()));
  std::memcpy(out.data(), e.data(), out.size() * sizeof(double));
  return out;
}

// The products of (A - its zero points) and (B - its zero points), [batch, m, n] in i64.
struct IntProducts {
  MatmulShape shape;
  std::vector<std::int64_t> y;
};

Result<IntProducts> int_products(KernelCall& c, const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp) {
  for (const Tensor* t : {&a, &b})
    if (t->dtype() != DType::kU8 && t->dtype() != DType::kI8) return unsupported(c.node.op_type + " of " + std::string(dtype_name(t->dtype())) + " (u8 and i8 only)");
  if (azp && azp->dtype() != a.dtype()) return invalid_argument("a_zero_point is " + std::string(dtype_name(azp->dtype())) + ", A " + std::string(dtype_name(a.dtype())));
  if (bzp && bzp->dtype() != b.dtype()) return invalid_argument("b_zero_point is " + std::string(dtype_name(bzp->dtype())) + ", B " + std::string(dtype_name(b.dtype())));
  IntProducts r;
  TESSERA_ASSIGN_OR_RETURN(r.shape, matmul_shape(a, b));
  const MatmulShape& s = r.shape;
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> za, line_values(c, azp, s.a, true, "a_zero_point"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> zb, line_values(c, bzp, s.b, false, "b_zero_point"));
  TESSERA_ASSIGN_OR_RETURN(const Tensor ai, as_i64(c.h, a));
  TESSERA_ASSIGN_OR_RETURN(const Tensor bi, as_i64(c.h, b));
  const std::int64_t* ap = ai.data<std::int64_t>();
  const std::int64_t* bp = bi.data<std::int64_t>();
  const std::int64_t m = s.m, k = s.k, n = s.n;
  r.y.assign(s.abatch.size() * static_cast<std::size_t>(m * n), 0);
  std::vector<std::int64_t> row(static_cast<std::size_t>(k));
  for (std::size_t o = 0; o < s.abatch.size(); ++o) {
    const std::int64_t ab = s.abatch[o], bb = s.bbatch[o];
    for (std::int64_t i = 0; i < m; ++i) {
      const auto z = static_cast<std::int64_t>(za[static_cast<std::size_t>(ab * m + i)]);
      for (std::int64_t q = 0; q < k; ++q) row[static_cast<std::size_t>(q)] = ap[(ab * m + i) * k + q] - z;
      for (std::int64_t j = 0; j < n; ++j) {
        const auto zj = static_cast<std::int64_t>(zb[static_cast<std::size_t>(bb * n + j)]);
        std::int64_t sum = 0;
        for (std::int64_t q = 0; q < k; ++q) sum += row[static_cast<std::size_t>(q)] * (bp[(bb * k + q) * n + j] - zj);
        r.y[(o * static_cast<std::size_t>(m) + static_cast<std::size_t>(i)) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j)] = sum;
      }
    }
  }
  return r;
}

}  // namespace

// NonMaxSuppression: per batch and class, the boxes whose score is above score_threshold (all
// when it is left out), highest score first (ties: the lower index), each kept unless its IoU
// with one kept before exceeds iou_threshold, at most max_output_boxes_per_class (0 when left
// out) of them; selected_indices [K, 3] holds (batch, class, box) in that order.
Status non_max_suppression_kernel(KernelCall& c) {
  const Tensor &boxes = *c.input(0), &scores = *c.input(1);
  if (boxes.dtype() != DType::kF32 || scores.dtype() != DType::kF32)
    return invalid_argument("NonMaxSuppression takes f32 boxes and scores, not " + std::string(dtype_name(boxes.dtype())) + " and " + std::string(dtype_name(scores.dtype())));
  if (boxes.rank() != 3 || boxes.shape()[2] != 4) return invalid_argument("boxes must be [batches, boxes, 4], not " + boxes.shape().to_string());
  if (scores.rank() != 3 || scores.shape()[0] != boxes.shape()[0] || scores.shape()[2] != boxes.shape()[1])
    return invalid_argument("scores must be [" + std::to_string(boxes.shape()[0]) + ", classes, " + std::to_string(boxes.shape()[1]) + "] for boxes " +
                            boxes.shape().to_string() + ", not " + scores.shape().to_string());
  const std::int64_t centre = c.attr_int("center_point_box", 0);
  if (centre != 0 && centre != 1) return invalid_argument("center_point_box must be 0 or 1, not " + std::to_string(centre));
  std::int64_t max_out = 0;
  if (const Tensor* t = c.input(2); t && t->numel() > 0) {
    if (t->numel() != 1) return invalid_argument("max_output_boxes_per_class must hold one value");
    TESSERA_ASSIGN_OR_RETURN(const Dims v, int_values(*t, "max_output_boxes_per_class"));
    max_out = std::max<std::int64_t>(v[0], 0);
  }
  TESSERA_ASSIGN_OR_RETURN(const std::optional<double> iou, optional_scalar(c.h, c.input(3), "iou_threshold"));
  TESSERA_ASSIGN_OR_RETURN(const std::optional<double> score_min, optional_scalar(c.h, c.input(4), "score_threshold"));
  if (iou && !(*iou >= 0 && *iou <= 1)) return invalid_argument("iou_threshold " + std::to_string(*iou) + " is outside [0, 1]");
  const auto threshold = static_cast<float>(iou.value_or(0.0));
  TESSERA_ASSIGN_OR_RETURN(const Tensor bp, as_f32(c.h, boxes));
  TESSERA_ASSIGN_OR_RETURN(const Tensor sp, as_f32(c.h, scores));
  const std::int64_t batches = boxes.shape()[0], count = boxes.shape()[1], classes = scores.shape()[1];
  std::vector<std::int64_t> picked;
  std::vector<std::int64_t> order, kept;
  for (std::int64_t b = 0; b < batches; ++b)
    for (std::int64_t k = 0; k < classes; ++k) {
      const float* sc = sp.data<float>() + (b * classes + k) * count;
      const float* bx = bp.data<float>() + b * count * 4;
      order.clear();
      kept.clear();
      for (std::int64_t i = 0; i < count; ++i)
        if (!score_min || static_cast<double>(sc[i]) > *score_min) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [sc](std::int64_t i, std::int64_t j) { return sc[i] > sc[j]; });
      for (std::int64_t i : order) {
        if (static_cast<std::int64_t>(kept.size()) >= max_out) break;
        bool keep = true;
        for (std::int64_t j : kept)
          if (suppresses(bx + i * 4, bx + j * 4, centre == 1, threshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(i);
        picked.insert(picked.end(), {b, k, i});
      }
    }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, {static_cast<std::int64_t>(picked.size() / 3), 3}, DType::kI64));
  if (!picked.empty()) std::memcpy(c.out[0].data(), picked.data(), picked.size() * sizeof(std::int64_t));
  return Status::ok();
}

// RotaryEmbedding (opset 23): X [batch, heads, seq, head_size] or [batch, seq, heads *
// head_size] (num_heads given). The first rotary_embedding_dim (default: all) entries of each
// head form pairs (i, i + dim/2), or (2i, 2i + 1) when interleaved, each rotated by the angle
// whose cos and sin are the caches' entry i at the token's position: cos_cache[position_ids[b,
// s], i] ([max position + 1, dim/2] caches), or cos_cache[b, s, i] ([batch, seq, dim/2] caches)
// without position_ids. The rest of the head is copied.
Status rotary_embedding_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &cos_t = *c.input(1), &sin_t = *c.input(2);
  const Tensor* pos = c.input(3);
  if (!is_floating(x.dtype())) return unsupported("RotaryEmbedding of " + std::string(dtype_name(x.dtype())));
  if (x.rank() != 3 && x.rank() != 4) return invalid_argument("RotaryEmbedding's input must be 3-D or 4-D, not " + x.shape().to_string());
  const std::int64_t attr_heads = c.attr_int("num_heads", 0);
  const std::int64_t batch = x.shape()[0];
  std::int64_t seq = 0, heads = 0, head = 0;
  if (x.rank() == 4) {
    heads = x.shape()[1], seq = x.shape()[2], head = x.shape()[3];
    if (attr_heads != 0 && attr_heads != heads) return invalid_argument("num_heads " + std::to_string(attr_heads) + " for an input of " + std::to_string(heads) + " heads " + x.shape().to_string());
  } else {
    seq = x.shape()[1];
    if (attr_heads <= 0) return invalid_argument("a 3-D input needs num_heads (a positive number)");
    if (x.shape()[2] % attr_heads != 0) return invalid_argument("hidden size " + std::to_string(x.shape()[2]) + " is not a multiple of num_heads " + std::to_string(attr_heads));
    heads = attr_heads, head = x.shape()[2] / attr_heads;
  }
  std::int64_t rot = c.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = head;
  if (rot < 0 || rot > head || rot % 2 != 0) return invalid_argument("rotary_embedding_dim " + std::to_string(rot) + " must be even and at most the head size " + std::to_string(head));
  const std::int64_t half = rot / 2;
  if (cos_t.shape().dims() != sin_t.shape().dims()) return invalid_argument("cos_cache " + cos_t.shape().to_string() + " and sin_cache " + sin_t.shape().to_string() + " differ");
  std::vector<std::int64_t> row(static_cast<std::size_t>(batch * seq));  // per token: its cache row
  if (pos) {
    if (pos->rank() != 2 || pos->shape()[0] != batch || pos->shape()[1] != seq)
      return invalid_argument("position_ids must be [" + std::to_string(batch) + ", " + std::to_string(seq) + "], not " + pos->shape().to_string());
    if (!is_integer(pos->dtype())) return invalid_argument("position_ids must be integers, not " + std::string(dtype_name(pos->dtype())));
    if (cos_t.rank() != 2 || cos_t.shape()[1] != half)
      return invalid_argument("with position_ids the caches must be [max position + 1, " + std::to_string(half) + "], not " + cos_t.shape().to_string());
    TESSERA_ASSIGN_OR_RETURN(const Tensor ids, as_i64(c.h, *pos));
    for (std::int64_t i = 0; i < batch * seq; ++i) {
      const std::int64_t p = ids.data<std::int64_t>()[i];
      if (p < 0 || p >= cos_t.shape()[0]) return invalid_argument("position id " + std::to_string(p) + " is outside the caches' [0, " + std::to_string(cos_t.shape()[0]) + ")");
      row[static_cast<std::size_t>(i)] = p;
    }
  } else {
    if (cos_t.rank() != 3 || cos_t.shape()[0] != batch || cos_t.shape()[1] != seq || cos_t.shape()[2] != half)
      return invalid_argument("without position_ids the caches must be [" + std::to_string(batch) + ", " + std::to_string(seq) + ", " + std::to_string(half) + "], not " +
                              cos_t.shape().to_string());
    for (std::int64_t i = 0; i < batch * seq; ++i) row[static_cast<std::size_t>(i)] = i;
  }
  const bool interleaved = c.attr_int("interleaved", 0) != 0;
  TESSERA_ASSIGN_OR_RETURN(Tensor y, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(const Tensor cd, as_f64(c.h, cos_t));
  TESSERA_ASSIGN_OR_RETURN(const Tensor sd, as_f64(c.h, sin_t));
  double* yp = y.data<double>();
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t s = 0; s < seq; ++s) {
      const std::int64_t r = row[static_cast<std::size_t>(b * seq + s)];
      const double* cs = cd.data<double>() + r * half;
      const double* sn = sd.data<double>() + r * half;
      for (std::int64_t h = 0; h < heads; ++h) {
        double* v = yp + (x.rank() == 4 ? ((b * heads + h) * seq + s) * head : (b * seq + s) * heads * head + h * head);
        for (std::int64_t i = 0; i < half; ++i) {
          const std::int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
          const double x1 = v[i1], x2 = v[i2];
          v[i1] = cs[i] * x1 - sn[i] * x2;
          v[i2] = sn[i] * x1 + cs[i] * x2;
        }
      }
    }
  return from_f64(c.h, y, x.dtype(), c.out[0]);
}

// MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in i32 (sums wrap modulo 2^32).
Status matmul_integer_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(const IntProducts p, int_products(c, *c.input(0), *c.input(1), c.input(2), c.input(3)));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, p.shape.ydims, DType::kI32));
  std::int32_t* y = c.out[0].data<std::int32_t>();
  for (std::size_t i = 0; i < p.y.size(); ++i) y[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(p.y[i]));
  return Status::ok();
}

// QLinearMatMul: y = saturate(round_half_even((A - a_zp) x (B - b_zp) * a_scale * b_scale /
// y_scale) + y_zp), y of y_zero_point's dtype; the multiplier a_scale * b_scale / y_scale in
// f32 (as ONNX Runtime has it), per tensor or per row of A and column of B; y's scale and zero
// point per tensor.
Status qlinear_matmul_kernel(KernelCall& c) {
  const Tensor &a = *c.input(0), &b = *c.input(3);
  const Tensor *as = c.input(1), *bs = c.input(4), *ys = c.input(6), *yz = c.input(7);
  if (!as || !bs || !ys || !yz) return invalid_argument("QLinearMatMul needs a_scale, b_scale, y_scale and y_zero_point");
  for (const Tensor* t : {as, bs, ys})
    if (!is_floating(t->dtype())) return invalid_argument("the scales must be float tensors, not " + std::string(dtype_name(t->dtype())));
  if (yz->dtype() != DType::kU8 && yz->dtype() != DType::kI8) return unsupported("QLinearMatMul to " + std::string(dtype_name(yz->dtype())) + " (u8 and i8 only)");
  if (ys->numel() != 1 || yz->numel() != 1) return invalid_argument("y_scale and y_zero_point must hold one value (per tensor), not " + ys->shape().to_string() + " and " + yz->shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(const IntProducts p, int_products(c, a, b, c.input(2), c.input(5)));
  const MatmulShape& s = p.shape;
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> sa, line_values(c, as, s.a, true, "a_scale"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> sb, line_values(c, bs, s.b, false, "b_scale"));
  TESSERA_ASSIGN_OR_RETURN(const double y_scale, scalar_value(c.h, *ys, "y_scale"));
  TESSERA_ASSIGN_OR_RETURN(const double y_zero, scalar_value(c.h, *yz, "y_zero_point"));
  const double lo = yz->dtype() == DType::kU8 ? 0 : -128, hi = yz->dtype() == DType::kU8 ? 255 : 127;
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(s.ydims, DType::kF64));
  double* y = yd.data<double>();
  const std::int64_t m = s.m, n = s.n;
  for (std::size_t o = 0; o < s.abatch.size(); ++o)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const auto scale_ab = static_cast<float>(sa[static_cast<std::size_t>(s.abatch[o] * m + i)] * sb[static_cast<std::size_t>(s.bbatch[o] * n + j)]);
        const auto mult = static_cast<float>(static_cast<double>(scale_ab) / y_scale);
        const std::size_t at = (o * static_cast<std::size_t>(m) + static_cast<std::size_t>(i)) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j);
        y[at] = std::clamp(std::nearbyint(static_cast<double>(p.y[at]) * static_cast<double>(mult)) + y_zero, lo, hi);
      }
  return from_f64(c.h, yd, yz->dtype(), c.out[0]);
}

}  // namespace tessera::exec::detail
