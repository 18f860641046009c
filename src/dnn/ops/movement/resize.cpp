// ONNX Resize. Per dim, every output index gets its taps (input indices, clamped into the dim)
// and weights from the coordinate transform: nearest has one tap, linear two, cubic four.
// Nearest copies elements through per-dim offset tables (any dtype). Linear and cubic run one
// pass per resized dim over a packed f32 (f64) copy of x, out[o, j, i] = sum_t w[j][t] *
// in[o, tap[j][t], i], the inner index i vectorised; the last pass is cast into y (rounded once).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../eltwise/nest.hpp"
#include "move.hpp"
#include "ref.hpp"

namespace tessera::dnn {
namespace {

using i64 = std::int64_t;
using std::to_string;
std::size_t z(i64 i) { return static_cast<std::size_t>(i); }

double source_coord(ResizeCoord c, i64 o, i64 in, i64 out, double s) {
  const double od = static_cast<double>(o);
  switch (c) {
    case ResizeCoord::kHalfPixel: return (od + 0.5) / s - 0.5;
    case ResizeCoord::kHalfPixelSymmetric: {
      const double adjust = static_cast<double>(out) / (s * static_cast<double>(in));
      const double offset = static_cast<double>(in) / 2 * (1 - adjust);
      return offset + (od + 0.5) / s - 0.5;
    }
    case ResizeCoord::kPytorchHalfPixel: return out > 1 ? (od + 0.5) / s - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners: return out == 1 ? 0.0 : od * static_cast<double>(in - 1) / static_cast<double>(out - 1);
    case ResizeCoord::kAsymmetric: return od / s;
  }
  return 0;
}

// The taps of one dim: for output index j, n entries of (input index, weight).
struct Taps {
  int n = 1;
  std::vector<i64> idx;
  std::vector<double> w;
  bool identity = true;  // every output j reads input j alone
};
Taps make_taps(const ResizeParams& p, i64 in, i64 out, double s) {
  Taps t;
  t.n = p.mode == ResizeMode::kNearest ? 1 : p.mode == ResizeMode::kLinear ? 2 : 4;
  t.idx.resize(z(out * t.n));
  t.w.resize(z(out * t.n));
  const double a = p.cubic_a;
  for (i64 j = 0; j < out; ++j) {
    const double x = source_coord(p.coord, j, in, out, s);
    i64* ix = &t.idx[z(j * t.n)];
    double* w = &t.w[z(j * t.n)];
    if (p.mode == ResizeMode::kNearest) {
      double r = 0;
      switch (p.nearest) {
        case ResizeNearest::kRoundPreferFloor: r = std::ceil(x - 0.5); break;
        case ResizeNearest::kRoundPreferCeil: r = std::floor(x + 0.5); break;
        case ResizeNearest::kFloor: r = std::floor(x); break;
        case ResizeNearest::kCeil: r = std::ceil(x); break;
      }
      ix[0] = static_cast<i64>(std::clamp(r, 0.0, static_cast<double>(in - 1)));
      w[0] = 1;
    } else {
      const double f = std::floor(x), u = x - f;
      const i64 i0 = static_cast<i64>(f);
      if (p.mode == ResizeMode::kLinear) {
        const double c[2] = {1 - u, u};
        for (int k = 0; k < 2; ++k) {
          ix[k] = i0 + k;
          w[k] = c[k];
        }
      } else {  // Keys' cubic convolution with coefficient a
        const double d[4] = {u + 1, u, 1 - u, 2 - u};
        for (int k = 0; k < 4; ++k) {
          const double v = d[k];
          ix[k] = i0 - 1 + k;
          w[k] = v <= 1 ? ((a + 2) * v - (a + 3)) * v * v + 1 : ((a * v - 5 * a) * v + 8 * a) * v - 4 * a;
        }
      }
      if (p.exclude_outside) {
        double sum = 0;
        for (int k = 0; k < t.n; ++k) {
          if (ix[k] < 0 || ix[k] >= in) w[k] = 0;
          sum += w[k];
        }
        if (sum != 0)
          for (int k = 0; k < t.n; ++k) w[k] /= sum;
      }
      for (int k = 0; k < t.n; ++k) ix[k] = std::clamp<i64>(ix[k], 0, in - 1);
    }
    // Identity: all the weight on input j.
    double on_j = 0;
    bool others = false;
    for (int k = 0; k < t.n; ++k) {
      if (ix[k] == j) on_j += w[k];
      else others = others || w[k] != 0;
    }
    t.identity = t.identity && in == out && on_j == 1 && !others;
  }
  return t;
}

// One linear/cubic pass along dim d of a packed [outer, in, inner] buffer into [outer, out, inner].
template <typename C>
void interpolate_pass(Handle& h, const C* src, C* dst, i64 outer, i64 in, i64 out, i64 inner, const Taps& t) {
  detail::parallel_for(h, 0, outer * out, std::max<i64>(1, 16384 / std::max<i64>(1, inner)), [&](i64 r0, i64 r1) {
    for (i64 r = r0; r < r1; ++r) {
      const i64 o = r / out, j = r % out;
      C* d = dst + r * inner;
      const C* s = src + o * in * inner;
      for (i64 i = 0; i < inner; ++i) d[i] = 0;
      for (int k = 0; k < t.n; ++k) {
        const C w = static_cast<C>(t.w[z(j * t.n + k)]);
        if (w == 0) continue;
        const C* sk = s + t.idx[z(j * t.n + k)] * inner;
        for (i64 i = 0; i < inner; ++i) d[i] += w * sk[i];
      }
    }
  });
}

template <typename C>
Status interpolate(Handle& h, const std::vector<Taps>& taps, const TensorDesc& x_desc, const void* x,
                   const TensorDesc& y_desc, void* y, DType ct) {
  const int r = x_desc.rank();
  std::vector<i64> dims = x_desc.dims;
  std::vector<C> cur(z(std::max<i64>(1, x_desc.numel())));
  TESSERA_RETURN_IF_ERROR(detail::run_move(h, detail::Move::of(x_desc, x, TensorDesc::make(ct, dims), cur.data())));
  for (int d = 0; d < r; ++d) {
    const Taps& t = taps[z(d)];
    if (t.identity) continue;
    i64 outer = 1, inner = 1;
    for (int i = 0; i < d; ++i) outer *= dims[z(i)];
    for (int i = d + 1; i < r; ++i) inner *= dims[z(i)];
    const i64 in = dims[z(d)], out = y_desc.dims[z(d)];
    std::vector<C> next(z(std::max<i64>(1, outer * out * inner)));
    interpolate_pass<C>(h, cur.data(), next.data(), outer, in, out, inner, t);
    cur.swap(next);
    dims[z(d)] = out;
  }
  return detail::run_move(h, detail::Move::of(TensorDesc::make(ct, dims), cur.data(), y_desc, y));
}

// A validated resize call, as the ordered list's entries take it.
struct ResizeProblem {
  const ResizeParams& p;
  std::span<const double> scales;  // per dim
  const TensorDesc& x_desc;
  const void* x;
  const TensorDesc& y_desc;
  void* y;
};

// Per dim taps; nearest through offset tables, linear and cubic one pass per resized dim.
Status resize_separable(Handle& h, const ResizeProblem& q) {
  const int r = q.x_desc.rank();
  std::vector<Taps> taps;
  for (int d = 0; d < r; ++d) taps.push_back(make_taps(q.p, q.x_desc.dims[z(d)], q.y_desc.dims[z(d)], q.scales[z(d)]));
  if (q.p.mode != ResizeMode::kNearest) {
    if (q.x_desc.dtype == DType::kF64) return interpolate<double>(h, taps, q.x_desc, q.x, q.y_desc, q.y, DType::kF64);
    return interpolate<float>(h, taps, q.x_desc, q.x, q.y_desc, q.y, DType::kF32);
  }
  // Nearest: per-dim offset tables into x, y walked row by row.
  std::vector<std::vector<i64>> tab(z(r));
  for (int d = 0; d < r; ++d) {
    tab[z(d)].resize(z(q.y_desc.dims[z(d)]));
    for (i64 j = 0; j < q.y_desc.dims[z(d)]; ++j) tab[z(d)][z(j)] = taps[z(d)].idx[z(j)] * q.x_desc.strides[z(d)];
  }
  const i64 e = static_cast<i64>(dtype_size(q.x_desc.dtype));
  if (r == 0) {
    std::memcpy(q.y, q.x, static_cast<std::size_t>(e));
    return Status::ok();
  }
  const i64 L = q.y_desc.dims[z(r - 1)], ysl = q.y_desc.strides[z(r - 1)];
  const i64 rows = q.y_desc.numel() / L;
  const auto& last = tab[z(r - 1)];
  detail::parallel_for(h, 0, rows, std::max<i64>(1, 16384 / L), [&](i64 r0, i64 r1) {
    for (i64 row = r0; row < r1; ++row) {
      i64 rest = row, xo = 0, yo = 0;
      for (int d = r - 2; d >= 0; --d) {
        const i64 j = rest % q.y_desc.dims[z(d)];
        rest /= q.y_desc.dims[z(d)];
        xo += tab[z(d)][z(j)];
        yo += j * q.y_desc.strides[z(d)];
      }
      const char* xs = static_cast<const char*>(q.x) + xo * e;
      char* ys = static_cast<char*>(q.y) + yo * e;
      for (i64 j = 0; j < L; ++j) std::memcpy(ys + j * ysl * e, xs + last[z(j)] * e, static_cast<std::size_t>(e));
    }
  });
  return Status::ok();
}
Status resize_reference(Handle&, const ResizeProblem& q) {
  ref::resize(q.p, q.scales, q.x_desc, q.x, q.y_desc, q.y);
  return Status::ok();
}
// Ordered list: the separable passes take every problem; the reference (ref.cpp) is last.
constexpr detail::Impl<ResizeProblem> kResizeImpls[] = {
    {"resize_separable", detail::accepts_all<ResizeProblem>, &resize_separable},
    {"resize_ref", detail::accepts_all<ResizeProblem>, &resize_reference},
};

}  // namespace

Status resize(Handle& h, const ResizeParams& p, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
              void* y) {
  const std::string fn = "resize " + std::string(resize_mode_name(p.mode));
  if (resize_mode_name(p.mode).empty() || resize_coord_name(p.coord).empty() || resize_nearest_name(p.nearest).empty())
    return invalid_argument("resize: unknown mode, coordinate transform or nearest mode");
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x_desc, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "y", y_desc, y, "x", x_desc, x));
  const int r = x_desc.rank();
  if (y_desc.rank() != r) return invalid_argument(fn + ": y's rank " + to_string(y_desc.rank()) + " differs from x's " + to_string(r));
  if (p.mode != ResizeMode::kNearest && !is_floating(x_desc.dtype))
    return unsupported(fn + ": dtype " + std::string(dtype_name(x_desc.dtype)) + " is not supported (f16, bf16, f32, f64; nearest takes any)");
  if (is_complex(x_desc.dtype)) return unsupported(fn + ": complex dtypes are not supported");
  if (!p.scales.empty() && p.scales.size() != z(r))
    return invalid_argument(fn + ": " + to_string(p.scales.size()) + " scales for rank " + to_string(r));
  std::vector<double> scale(z(r));
  for (int d = 0; d < r; ++d) {
    const i64 in = x_desc.dims[z(d)], out = y_desc.dims[z(d)];
    if (!p.scales.empty()) {
      const double s = p.scales[z(d)];
      if (!(s > 0) || !std::isfinite(s)) return invalid_argument(fn + ": scale " + std::to_string(s) + " of dim " + to_string(d) + " must be positive");
      const double want = std::floor(static_cast<double>(in) * s);
      if (static_cast<double>(out) != want)
        return invalid_argument(fn + ": y dim " + to_string(d) + " is " + to_string(out) + " but x's " + to_string(in) +
                                " scaled by " + std::to_string(s) + " gives " + to_string(static_cast<i64>(want)));
      scale[z(d)] = s;
    } else {
      if (in == 0 && out != 0) return invalid_argument(fn + ": dim " + to_string(d) + " of x is empty but y's is " + to_string(out));
      scale[z(d)] = in == 0 ? 1.0 : static_cast<double>(out) / static_cast<double>(in);
    }
    if (in == 0 && out != 0) return invalid_argument(fn + ": dim " + to_string(d) + " of x is empty but y's is " + to_string(out));
  }
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "resize"));
  if (y_desc.numel() == 0) return Status::ok();
  const ResizeProblem q{p, scale, x_desc, x, y_desc, y};
  try {
    return detail::select_impl<ResizeProblem>("resize", kResizeImpls, q).run(h, q);
  } catch (const std::bad_alloc&) {
    return out_of_memory(fn + ": out of memory");
  }
}

}  // namespace tessera::dnn
