#include "ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../../common.hpp"

namespace tessera::dnn::ref {
namespace {
#include "scalar.inc"

using i64 = std::int64_t;

// Calls f(T{}) with T the compute type of dtype t (f16/bf16 compute in float).
template <typename F>
void visit(DType t, F&& f) {
  switch (t) {
    case DType::kBool: f(bool{}); break;
    case DType::kI8: f(std::int8_t{}); break;
    case DType::kU8: f(std::uint8_t{}); break;
    case DType::kI32: f(std::int32_t{}); break;
    case DType::kI64: f(std::int64_t{}); break;
    case DType::kF16:
    case DType::kBF16:
    case DType::kF32: f(float{}); break;
    case DType::kF64: f(double{}); break;
    default: break;
  }
}
template <typename T>
T load(const void* p, DType t, i64 i) {
  if constexpr (std::is_same_v<T, float>) {
    return detail::load_f32(p, t, i);
  } else {
    T v;
    std::memcpy(&v, static_cast<const char*>(p) + i * static_cast<i64>(sizeof(T)), sizeof(T));
    return v;
  }
}
template <typename T>
void store(void* p, DType t, i64 i, T v) {
  if constexpr (std::is_same_v<T, float>) {
    detail::store_f32(p, t, i, v);
  } else {
    std::memcpy(static_cast<char*>(p) + i * static_cast<i64>(sizeof(T)), &v, sizeof(T));
  }
}

// Offset in `d` of output multi-index `idx` (rank R), d right-aligned and broadcast.
i64 bcast_offset(const TensorDesc& d, const std::vector<i64>& idx) {
  const int R = static_cast<int>(idx.size());
  i64 off = 0;
  for (int j = 0; j < d.rank(); ++j) {
    const auto k = static_cast<std::size_t>(j);
    if (d.dims[k] != 1) off += idx[static_cast<std::size_t>(j + R - d.rank())] * d.strides[k];
  }
  return off;
}
// Calls f(idx) for every multi-index of dims, last dim fastest.
template <typename F>
void for_each_index(const std::vector<i64>& dims, F&& f) {
  for (i64 d : dims)
    if (d == 0) return;
  std::vector<i64> idx(dims.size(), 0);
  while (true) {
    f(idx);
    int i = static_cast<int>(dims.size()) - 1;
    for (; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
    if (i < 0) return;
  }
}

template <int Op, typename T>
void binary_t(const TensorDesc& a, const void* ap, const TensorDesc& b, const void* bp,
              const TensorDesc& y, void* yp) {
  if constexpr (binary_takes<Op, T>()) {
    for_each_index(y.dims, [&](const std::vector<i64>& idx) {
      const T va = load<T>(ap, a.dtype, bcast_offset(a, idx));
      const T vb = load<T>(bp, b.dtype, bcast_offset(b, idx));
      store(yp, y.dtype, bcast_offset(y, idx), binary_op<Op, T>(va, vb));
    });
  }
}
template <int Op, typename T>
void unary_t(const TensorDesc& x, const void* xp, const TensorDesc& y, void* yp) {
  if constexpr (unary_takes<Op, T>()) {
    for_each_index(y.dims, [&](const std::vector<i64>& idx) {
      store(yp, y.dtype, bcast_offset(y, idx), unary_op<Op, T>(load<T>(xp, x.dtype, bcast_offset(x, idx))));
    });
  }
}
template <int... Op, typename F>
void dispatch_op(int op, std::integer_sequence<int, Op...>, F&& f) {
  ((op == Op ? (f(std::integral_constant<int, Op>{}), 0) : 0), ...);
}

}  // namespace

void binary(BinaryOp op, const TensorDesc& a, const void* ap, const TensorDesc& b, const void* bp,
            const TensorDesc& y, void* yp) {
  visit(a.dtype, [&](auto t) {
    using T = decltype(t);
    dispatch_op(static_cast<int>(op), std::make_integer_sequence<int, kNumBinaryOps>{}, [&](auto o) {
      binary_t<decltype(o)::value, T>(a, ap, b, bp, y, yp);
    });
  });
}

void unary(UnaryOp op, const TensorDesc& x, const void* xp, const TensorDesc& y, void* yp) {
  visit(x.dtype, [&](auto t) {
    using T = decltype(t);
    dispatch_op(static_cast<int>(op), std::make_integer_sequence<int, kNumUnaryOps>{}, [&](auto o) {
      unary_t<decltype(o)::value, T>(x, xp, y, yp);
    });
  });
}

void where(const TensorDesc& c, const void* cp, const TensorDesc& a, const void* ap,
           const TensorDesc& b, const void* bp, const TensorDesc& y, void* yp) {
  const auto bytes = dtype_size(y.dtype);
  const auto* cb = static_cast<const unsigned char*>(cp);
  for_each_index(y.dims, [&](const std::vector<i64>& idx) {
    const bool pick_a = cb[bcast_offset(c, idx)] != 0;
    const char* src = pick_a ? static_cast<const char*>(ap) + bcast_offset(a, idx) * static_cast<i64>(bytes)
                             : static_cast<const char*>(bp) + bcast_offset(b, idx) * static_cast<i64>(bytes);
    std::memcpy(static_cast<char*>(yp) + bcast_offset(y, idx) * static_cast<i64>(bytes), src, bytes);
  });
}

}  // namespace tessera::dnn::ref

namespace tessera::dnn::ref {
namespace {

// Calls f(kept index, reduced index) order: for each output (kept dims row-major), every
// reduced multi-index row-major; f_out(y offset, x base) first.
struct Split {
  std::vector<i64> kept_dims, red_dims, kept_x, red_x, kept_y;
};
Split split(std::span<const int> axes, const TensorDesc& x, const TensorDesc& y) {
  Split s;
  const bool keep = y.rank() == x.rank();
  int yi = 0;
  for (int i = 0; i < x.rank(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    const bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (r) {
      s.red_dims.push_back(x.dims[k]);
      s.red_x.push_back(x.strides[k]);
      if (keep) ++yi;
    } else {
      s.kept_dims.push_back(x.dims[k]);
      s.kept_x.push_back(x.strides[k]);
      s.kept_y.push_back(y.strides[static_cast<std::size_t>(yi++)]);
    }
  }
  return s;
}
i64 dot(const std::vector<i64>& idx, const std::vector<i64>& st) {
  i64 o = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) o += idx[i] * st[i];
  return o;
}

template <typename T>
void reduce_t(ReduceOp op, const Split& s, const TensorDesc& x, const void* xp, const TensorDesc& y, void* yp) {
  i64 count = 1;
  for (i64 d : s.red_dims) count *= d;
  const double inf = std::numeric_limits<double>::infinity();
  for_each_index(s.kept_dims, [&](const std::vector<i64>& k) {
    const i64 xb = dot(k, s.kept_x), yo = dot(k, s.kept_y);
    auto each = [&](auto&& f) {
      for_each_index(s.red_dims, [&](const std::vector<i64>& r) { f(load<T>(xp, x.dtype, xb + dot(r, s.red_x))); });
    };
    if constexpr (std::is_floating_point_v<T>) {
      double v = 0.0;
      switch (op) {
        case ReduceOp::kProd: v = 1.0; each([&](T e) { v *= static_cast<double>(e); }); break;
        case ReduceOp::kMax:
        case ReduceOp::kMin: {
          const bool mx = op == ReduceOp::kMax;
          v = mx ? -inf : inf;
          each([&](T e) {
            const double d = e;
            if (v != v) return;
            if (d != d || (mx ? d > v : d < v)) v = d;
          });
          break;
        }
        case ReduceOp::kL1: each([&](T e) { v += std::fabs(static_cast<double>(e)); }); break;
        case ReduceOp::kL2:
        case ReduceOp::kSumSquare: each([&](T e) { v += static_cast<double>(e) * static_cast<double>(e); }); break;
        case ReduceOp::kLogSumExp: {
          double m = -inf;
          each([&](T e) {
            const double d = e;
            if (m != m) return;
            if (d != d || d > m) m = d;
          });
          if (!std::isfinite(m)) {
            v = m;
            break;
          }
          double sum = 0.0;
          each([&](T e) { sum += std::exp(static_cast<double>(e) - m); });
          v = m + std::log(sum);
          break;
        }
        default: each([&](T e) { v += static_cast<double>(e); }); break;
      }
      if (op == ReduceOp::kMean) v /= static_cast<double>(count);
      if (op == ReduceOp::kL2) v = std::sqrt(v);
      if (op == ReduceOp::kLogSum) v = std::log(v);
      if (y.dtype == DType::kF64) static_cast<double*>(yp)[yo] = v;
      else detail::store_f32(yp, y.dtype, yo, static_cast<float>(v));
    } else {
      std::uint64_t v = op == ReduceOp::kProd ? 1 : 0;
      T ext = op == ReduceOp::kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      each([&](T e) {
        const auto u = static_cast<std::uint64_t>(static_cast<i64>(e));
        switch (op) {
          case ReduceOp::kProd: v *= u; break;
          case ReduceOp::kMax: ext = std::max(ext, e); break;
          case ReduceOp::kMin: ext = std::min(ext, e); break;
          case ReduceOp::kL1: v += e < 0 ? 0 - u : u; break;
          case ReduceOp::kSumSquare: v += u * u; break;
          default: v += u; break;
        }
      });
      i64 r = static_cast<i64>(v);
      if (op == ReduceOp::kMax || op == ReduceOp::kMin) r = ext;
      if (op == ReduceOp::kMean) r = count == 0 ? 0 : r / count;
      store(yp, y.dtype, yo, static_cast<T>(r));
    }
  });
}

}  // namespace

void reduce(ReduceOp op, std::span<const int> axes, const TensorDesc& x, const void* xp,
            const TensorDesc& y, void* yp) {
  const Split s = split(axes, x, y);
  visit(x.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (!std::is_same_v<T, bool>) reduce_t<T>(op, s, x, xp, y, yp);
  });
}

void arg_reduce(bool arg_max, int axis, bool last_index, const TensorDesc& x, const void* xp,
                const TensorDesc& y, void* yp) {
  const int one[1] = {axis};
  const Split s = split(one, x, y);
  const i64 len = x.dims[static_cast<std::size_t>(axis)], st = x.strides[static_cast<std::size_t>(axis)];
  visit(x.dtype, [&](auto t) {
    using T = decltype(t);
    for_each_index(s.kept_dims, [&](const std::vector<i64>& k) {
      const i64 xb = dot(k, s.kept_x);
      i64 best = 0;
      T bv = load<T>(xp, x.dtype, xb);
      for (i64 i = 1; i < len; ++i) {
        const T v = load<T>(xp, x.dtype, xb + i * st);
        bool better;
        if constexpr (std::is_floating_point_v<T>) {
          if (bv != bv) better = last_index && v != v;  // a NaN holds; a later NaN with last
          else if (v != v) better = true;
          else better = arg_max ? (last_index ? v >= bv : v > bv) : (last_index ? v <= bv : v < bv);
        } else {
          better = arg_max ? (last_index ? v >= bv : v > bv) : (last_index ? v <= bv : v < bv);
        }
        if (better) best = i, bv = v;
      }
      static_cast<i64*>(yp)[dot(k, s.kept_y)] = best;
    });
  });
}

}  // namespace tessera::dnn::ref
