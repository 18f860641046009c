// The problems of the indexing operations with ordered lists (gather, gather_elements,
// gather_nd, scatter_elements, scatter_nd, one_hot, top_k), as indexing.cpp's entry points hand them to their lists
// after every check, every index included, has passed. index_dense.cpp holds the fast entries
// (packed tensors, typed loops and the movement kernels' gathers); indexing.cpp the references,
// which end every list. The scalar rules both sides share are here.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/core/cpu.hpp"
#include "tessera/dnn.hpp"

namespace tessera::dnn::move_kernels {
struct Kernels;
}

namespace tessera::dnn::detail {

// gather and gather_elements.
struct GatherCall {
  int axis;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& idx;
  const void* ip;
  const TensorDesc& y;
  void* yp;
};
struct ScatterCall {
  int axis;
  ScatterReduce reduction;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& idx;
  const void* ip;
  const TensorDesc& upd;
  const void* up;
  const TensorDesc& y;
  void* yp;
};
// gather_nd and scatter_nd: tuples of k indices along idx's last dim, after `batch_dims` dims
// x and idx share (scatter_nd has none).
struct GatherNdCall {
  int batch_dims;
  std::int64_t k;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& idx;
  const void* ip;
  const TensorDesc& y;
  void* yp;
};
struct ScatterNdCall {
  ScatterReduce reduction;
  std::int64_t k;
  const TensorDesc& idx;
  const void* ip;
  const TensorDesc& upd;
  const void* up;
  const TensorDesc& y;  // already holding x
  void* yp;
};
struct OneHotCall {
  int axis;
  std::int64_t depth;
  double off, on;
  const TensorDesc& idx;
  const void* ip;
  const TensorDesc& y;
  void* yp;
};
struct TopKCall {
  int axis;
  std::int64_t k;
  bool largest;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& values;
  void* vp;
  const TensorDesc& indices;
  void* ip;
};

// The gathers run on one ISA's movement kernels (refusing when the machine lacks `needs`).
Status gather_dense_accepts(const GatherCall& c, Isa needs);
Status gather_dense(Handle& h, const GatherCall& c, const move_kernels::Kernels& k);
Status gather_elements_dense_accepts(const GatherCall& c, Isa needs);
Status gather_elements_dense(Handle& h, const GatherCall& c, const move_kernels::Kernels& k);
Status scatter_elements_dense_accepts(const ScatterCall& c);
Status scatter_elements_dense(Handle& h, const ScatterCall& c);
Status gather_nd_dense_accepts(const GatherNdCall& c);
Status gather_nd_dense(Handle& h, const GatherNdCall& c);
Status scatter_nd_dense_accepts(const ScatterNdCall& c);
Status scatter_nd_dense(Handle& h, const ScatterNdCall& c);
Status one_hot_dense_accepts(const OneHotCall& c);
Status one_hot_dense(Handle& h, const OneHotCall& c);
Status top_k_dense_accepts(const TopKCall& c, Isa needs);
Status top_k_dense(Handle& h, const TopKCall& c, const move_kernels::Kernels& k);

// A checked index: negatives count from lim.
inline std::int64_t wrap_index(std::int64_t v, std::int64_t lim) { return v + ((v >> 63) & lim); }

// Scatter's reductions in a compute type (f16/bf16 in f32): integer add and mul wrap, bool add
// is or and mul is and, a NaN in max/min wins (the first one when both are NaN).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T combine(ScatterReduce r, T a, T b) {
  switch (r) {
    case ScatterReduce::kNone: return b;
    case ScatterReduce::kAdd: return wrap_add(a, b);
    case ScatterReduce::kMul:
      if constexpr (std::is_same_v<T, bool>) {
        return a && b;
      } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      } else {
        return a * b;
      }
    case ScatterReduce::kMax:
      if constexpr (std::is_floating_point_v<T>) {
        if (a != a || b != b) return a != a ? a : b;
      }
      return a < b ? b : a;
    case ScatterReduce::kMin:
      if constexpr (std::is_floating_point_v<T>) {
        if (a != a || b != b) return a != a ? a : b;
      }
      return b < a ? b : a;
  }
  return b;
}

// top_k's total order: NaN above every number; `largest` picks from the top. Whether a is
// picked before b, values alone (the tie by index is the caller's).
template <typename T>
bool top_before(T a, T b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = a != a, nb = b != b;
    if (largest) return na ? !nb : (!nb && a > b);
    return nb ? !na : (!na && a < b);
  } else {
    return largest ? a > b : a < b;
  }
}

}  // namespace tessera::dnn::detail
