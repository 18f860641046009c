// Convolution descriptors: validation, output shape, normalisation to 3 spatial dims,
// signatures, and the shared post-op epilogue.
#include "problem.hpp"

#include <algorithm>

#include "../activation/act_scalar.hpp"

namespace tessera::dnn {
namespace conv {
namespace {

// The spatial parameter vector of ConvDesc (empty -> default), checked to have `rank` entries.
Result<std::vector<std::int64_t>> spatial_param(const std::string& fn, const char* name,
                                                const std::vector<std::int64_t>& v, int rank,
                                                std::int64_t dflt, std::int64_t min) {
  if (v.empty()) return std::vector<std::int64_t>(static_cast<std::size_t>(rank), dflt);
  if (static_cast<int>(v.size()) != rank)
    return invalid_argument(fn + ": " + name + " has " + std::to_string(v.size()) +
                            " values for " + std::to_string(rank) + " spatial dims");
  for (auto e : v)
    if (e < min)
      return invalid_argument(fn + ": " + name + " = [" + detail::dims_string(v) +
                              "]; each must be >= " + std::to_string(min));
  return v;
}

Strides5 expand(const TensorDesc& d) {
  // rank 3..5 -> (n, c, d, h, w), missing leading spatial dims get stride 0 (size 1).
  const auto& s = d.strides;
  const int r = d.rank();
  Strides5 o{s[0], s[1], 0, 0, 0};
  std::int64_t* sp[3] = {&o.d, &o.h, &o.w};
  for (int i = 2; i < r; ++i) *sp[3 - (r - i)] = s[static_cast<std::size_t>(i)];
  return o;
}

bool weights_packed_ohwi(const TensorDesc& w) {
  // [K][k...][Cg]: Cg innermost, then spatial row-major, K outermost.
  return w.is_packed(Layout::kNHWC);
}

}  // namespace


// Everything that depends on x, w and the descriptor: sizes, groups, output extents.
Result<Problem> shape_problem(const std::string& fn, ConvDir dir, const ConvDesc& c,
                              const TensorDesc& x, const TensorDesc& w) {
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, dir == ConvDir::kBackwardData ? "dx" : "x", x, 3, 5));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, dir == ConvDir::kBackwardWeights ? "dw" : "w", w, 3, 5));
  TESSERA_RETURN_IF_ERROR(detail::check_float_dtype(fn, "x", x));
  if (w.dtype != x.dtype)
    return invalid_argument(fn + ": w dtype " + std::string(dtype_name(w.dtype)) +
                            " differs from x dtype " + std::string(dtype_name(x.dtype)));
  if (w.rank() != x.rank())
    return invalid_argument(fn + ": w has rank " + std::to_string(w.rank()) +
                            " but x has rank " + std::to_string(x.rank()));
  const int sr = x.rank() - 2;
  Problem p;
  p.conv = c;
  p.dir = dir;
  p.dtype = x.dtype;
  p.spatial_rank = sr;
  p.N = x.dims[0];
  p.C = x.dims[1];
  p.K = w.dims[0];
  p.G = c.groups;
  if (p.G < 1) return invalid_argument(fn + ": groups = " + std::to_string(p.G) + " must be >= 1");
  if (p.C % p.G != 0)
    return invalid_argument(fn + ": channels C = " + std::to_string(p.C) +
                            " are not divisible by groups = " + std::to_string(p.G));
  if (p.K % p.G != 0)
    return invalid_argument(fn + ": output channels K = " + std::to_string(p.K) +
                            " are not divisible by groups = " + std::to_string(p.G));
  p.Cg = p.C / p.G;
  p.Kg = p.K / p.G;
  if (w.dims[1] != p.Cg)
    return invalid_argument(fn + ": weights have " + std::to_string(w.dims[1]) +
                            " input channels per group but x has C / groups = " +
                            std::to_string(p.C) + " / " + std::to_string(p.G) + " = " +
                            std::to_string(p.Cg));
  TESSERA_ASSIGN_OR_RETURN(auto stride, spatial_param(fn, "stride", c.stride, sr, 1, 1));
  TESSERA_ASSIGN_OR_RETURN(auto dil, spatial_param(fn, "dilation", c.dilation, sr, 1, 1));
  TESSERA_ASSIGN_OR_RETURN(auto pb, spatial_param(fn, "pad_begin", c.pad_begin, sr, 0, 0));
  TESSERA_ASSIGN_OR_RETURN(auto pe, spatial_param(fn, "pad_end", c.pad_end, sr, 0, 0));
  for (int i = 0; i < 3; ++i) {
    const int s = i - (3 - sr);  // index into the caller's spatial dims, < 0 for padding dims
    const auto si = static_cast<std::size_t>(s);
    const bool real = s >= 0;
    p.in[i] = real ? x.dims[si + 2] : 1;
    p.ker[i] = real ? w.dims[si + 2] : 1;
    p.stride[i] = real ? stride[si] : 1;
    p.dil[i] = real ? dil[si] : 1;
    p.pad_b[i] = real ? pb[si] : 0;
    p.pad_e[i] = real ? pe[si] : 0;
    if (p.ker[i] < 1)
      return invalid_argument(fn + ": kernel size " + std::to_string(p.ker[i]) +
                              " in spatial dim " + std::to_string(s) + " must be >= 1");
    const std::int64_t span = p.dil[i] * (p.ker[i] - 1) + 1;
    const std::int64_t padded = p.in[i] + p.pad_b[i] + p.pad_e[i];
    if (padded < span)
      return invalid_argument(fn + ": output too small: spatial dim " + std::to_string(s) +
                              " has padded input " + std::to_string(padded) +
                              " < dilated kernel extent " + std::to_string(span));
    p.out[i] = (padded - span) / p.stride[i] + 1;
  }
  return p;
}


Result<Problem> make_problem(const std::string& fn, ConvDir dir, const ConvDesc& c,
                             const TensorDesc& x, const TensorDesc& w, const TensorDesc& y) {
  TESSERA_ASSIGN_OR_RETURN(Problem p, shape_problem(fn, dir, c, x, w));
  const char* yn = dir == ConvDir::kForward ? "y" : "dy";
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, yn, y, 3, 5));
  if (y.dtype != x.dtype)
    return invalid_argument(fn + ": " + yn + " dtype " + std::string(dtype_name(y.dtype)) +
                            " differs from x dtype " + std::string(dtype_name(x.dtype)));
  if (y.rank() != x.rank())
    return invalid_argument(fn + ": " + yn + " has rank " + std::to_string(y.rank()) +
                            " but x has rank " + std::to_string(x.rank()));
  const int sr = p.spatial_rank;
  for (int s = 0; s < sr; ++s) {
    const auto si = static_cast<std::size_t>(s);
    if (y.dims[si + 2] != p.out[static_cast<std::size_t>(s + 3 - sr)])
      return invalid_argument(fn + ": " + yn + " spatial dim " + std::to_string(s) + " = " +
                              std::to_string(y.dims[si + 2]) + " but the convolution gives " +
                              std::to_string(p.out[static_cast<std::size_t>(s + 3 - sr)]));
  }
  if (y.dims[0] != p.N || y.dims[1] != p.K)
    return invalid_argument(fn + ": " + yn + " dims [" +
                            detail::dims_string(y.dims) + "] must start with N = " +
                            std::to_string(p.N) + ", K = " + std::to_string(p.K));
  p.xs = expand(x);
  p.ws = expand(w);
  p.ys = expand(y);
  p.x_layout = x.packed_layout();
  p.y_layout = y.packed_layout();
  // A tensor packed both ways (one channel, or one pixel) takes the other's layout: a 1-channel
  // image in NHWC is also NCHW, and would otherwise keep x and y from matching.
  if (p.x_layout != p.y_layout) {
    if (p.y_layout && x.is_packed(*p.y_layout)) p.x_layout = p.y_layout;
    else if (p.x_layout && y.is_packed(*p.x_layout)) p.y_layout = p.x_layout;
  }
  p.w_oihw = w.is_packed(Layout::kNCHW);
  p.w_ohwi = weights_packed_ohwi(w);
  p.x_desc = x;
  p.w_desc = w;
  p.y_desc = y;
  return p;
}

Problem channels_last(const Problem& p) {
  // From the sizes, not x_desc / y_desc (a flipped backward-data problem keeps the caller's).
  auto dims = [&](std::int64_t ch, const std::array<std::int64_t, 3>& sp) {
    std::vector<std::int64_t> d = {p.N, ch};
    d.insert(d.end(), sp.end() - p.spatial_rank, sp.end());
    return TensorDesc::make(DType::kF32, d, Layout::kNHWC);
  };
  Problem q = p;
  q.x_desc = dims(p.C, p.in);
  q.y_desc = dims(p.K, p.out);
  q.xs = expand(q.x_desc);
  q.ys = expand(q.y_desc);
  q.x_layout = q.y_layout = Layout::kNHWC;
  return q;
}

std::string Problem::signature() const { return conv_signature(dir, conv, x_desc, w_desc, y_desc); }

void apply_post_ops_nhwc(const Problem& p, float* y, const float* residual, std::int64_t pixels) {
  apply_post_ops_nhwc(p, y, residual, pixels, 0, p.K);
}

namespace {

// y = act(y + bias + residual) per element in one pass, the branches on what to add and which
// activation taken once per call (the short per-pixel loops of a channel block, 32 or 64
// channels, cost more in loop overhead than in arithmetic when each operation was a loop of
// its own). A: 0 none, 1 ReLU, 2 clip (NaN -> lo, as act::forward's fmax/fmin).
template <bool B, bool R, int A>
void post_pixels(float* y, const float* residual, const float* __restrict bias, std::int64_t pixels, std::int64_t K,
                 std::int64_t n, float lo, float hi) {
  for (std::int64_t i = 0; i < pixels; ++i) {
    float* row = y + i * K;
    const float* res = R ? residual + i * K : nullptr;
    for (std::int64_t k = 0; k < n; ++k) {
      float v = row[k];
      if constexpr (B) v += bias[k];
      if constexpr (R) v += res[k];
      if constexpr (A == 1) v = v > 0.0f ? v : 0.0f;
      if constexpr (A == 2) {  // the activation's clip, fmin(fmax(v, lo), hi): NaN -> lo
        v = v > lo ? v : lo;
        v = v < hi ? v : hi;
      }
      row[k] = v;
    }
  }
}

template <int A>
void post_pixels_by(bool b, bool r, float* y, const float* residual, const float* bias, std::int64_t pixels, std::int64_t K,
                    std::int64_t n, float lo, float hi) {
  if (b && r) post_pixels<true, true, A>(y, residual, bias, pixels, K, n, lo, hi);
  else if (b) post_pixels<true, false, A>(y, residual, bias, pixels, K, n, lo, hi);
  else if (r) post_pixels<false, true, A>(y, residual, bias, pixels, K, n, lo, hi);
  else post_pixels<false, false, A>(y, residual, bias, pixels, K, n, lo, hi);
}

}  // namespace

void apply_post_ops_nhwc(const Problem& p, float* y, const float* residual, std::int64_t pixels,
                         std::int64_t k0, std::int64_t k1) {
  const PostOps& po = p.post;
  const std::int64_t K = p.K, n = k1 - k0;
  const bool b = po.bias != nullptr, r = residual != nullptr;
  const float* bias = b ? po.bias + k0 : nullptr;
  const float* res = r ? residual + k0 : nullptr;
  const float lo = po.act.alpha, hi = po.act.beta;
  switch (po.act.kind) {
    case ActKind::kIdentity: post_pixels_by<0>(b, r, y + k0, res, bias, pixels, K, n, lo, hi); return;
    case ActKind::kRelu: post_pixels_by<1>(b, r, y + k0, res, bias, pixels, K, n, lo, hi); return;
    case ActKind::kClip: post_pixels_by<2>(b, r, y + k0, res, bias, pixels, K, n, lo, hi); return;  // ReLU6 and friends
    default: break;
  }
  post_pixels_by<0>(b, r, y + k0, res, bias, pixels, K, n, lo, hi);
  for (std::int64_t i = 0; i < pixels; ++i) {
    float* row = y + i * K + k0;
    for (std::int64_t k = 0; k < n; ++k) row[k] = act::forward(po.act, row[k]);
  }
}

void apply_post_ops_nchw(const Problem& p, float* y, const float* residual, std::int64_t k0,
                         std::int64_t k1, std::int64_t plane, std::int64_t plane_stride) {
  const PostOps& po = p.post;
  const bool act = po.act.kind != ActKind::kIdentity;
  for (std::int64_t k = k0; k < k1; ++k) {
    float* row = y + (k - k0) * plane_stride;
    const float* res = residual ? residual + (k - k0) * plane_stride : nullptr;
    const float b = po.bias ? po.bias[k] : 0.0f;
    if (po.bias)
      for (std::int64_t i = 0; i < plane; ++i) row[i] += b;
    if (res)
      for (std::int64_t i = 0; i < plane; ++i) row[i] += res[i];
    if (po.act.kind == ActKind::kRelu) {
      for (std::int64_t i = 0; i < plane; ++i) row[i] = row[i] > 0.0f ? row[i] : 0.0f;
    } else if (po.act.kind == ActKind::kClip) {
      const float lo = po.act.alpha, hi = po.act.beta;
      for (std::int64_t i = 0; i < plane; ++i) {  // NaN -> lo, as act::forward
        const float v = row[i] > lo ? row[i] : lo;
        row[i] = v < hi ? v : hi;
      }
    } else if (act) {
      for (std::int64_t i = 0; i < plane; ++i) row[i] = act::forward(po.act, row[i]);
    }
  }
}

}  // namespace conv

Result<TensorDesc> conv_output_desc(const ConvDesc& c, const TensorDesc& x, const TensorDesc& w) {
  TESSERA_ASSIGN_OR_RETURN(conv::Problem p,
                           conv::shape_problem("conv_output_desc", ConvDir::kForward, c, x, w));
  std::vector<std::int64_t> dims = {p.N, p.K};
  for (int i = 3 - p.spatial_rank; i < 3; ++i) dims.push_back(p.out[static_cast<std::size_t>(i)]);
  return TensorDesc::make(x.dtype, dims, x.packed_layout().value_or(Layout::kNCHW));
}

std::string conv_signature(ConvDir dir, const ConvDesc& c, const TensorDesc& x,
                           const TensorDesc& w, const TensorDesc& y) {
  auto layout_of = [](const TensorDesc& t, bool weights) -> std::string {
    if (t.rank() < 3) return "";
    if (t.is_packed(Layout::kNCHW)) return weights ? "oihw" : "nchw";
    if (t.is_packed(Layout::kNHWC)) return weights ? "ohwi" : "nhwc";
    std::string s = "{";
    s += detail::dims_string(t.strides);
    s += "}";
    return s;
  };
  auto vec = [](const std::vector<std::int64_t>& v, std::int64_t dflt, std::size_t n) {
    std::vector<std::int64_t> o = v.empty() ? std::vector<std::int64_t>(n, dflt) : v;
    return detail::dims_string(o, 'x');
  };
  const std::size_t sr = x.dims.size() >= 2 ? x.dims.size() - 2 : 0;
  return std::string(dir_name(dir)) + " " + std::string(dtype_name(x.dtype)) + " x[" +
         detail::dims_string(x.dims) + "]" + layout_of(x, false) + " w[" +
         detail::dims_string(w.dims) + "]" + layout_of(w, true) + " y" + layout_of(y, false) +
         " s" + vec(c.stride, 1, sr) + " d" + vec(c.dilation, 1, sr) + " p" +
         vec(c.pad_begin, 0, sr) + "x" + vec(c.pad_end, 0, sr) + " g" + std::to_string(c.groups);
}

}  // namespace tessera::dnn
