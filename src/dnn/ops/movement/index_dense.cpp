// The dense entries of the indexing operations: packed row-major tensors seen as
// [outer, len, inner] around the indexed axis, every index already checked by the entry point
// (indexing.cpp), so each is read once where it is used and wrapped without a branch.
// - gather / gather_elements: whole rows of `inner` elements copied at once, or the movement
//   kernels' gathers (along a row where inner is 1, across rows otherwise);
// - gather_nd / scatter_nd: each index tuple's offset computed where it is used, its slab asked
//   for some tuples ahead; scatter_nd applies every tuple in order in each unit of work (blocks
//   of the slabs' columns, or ranges of y), so duplicates resolve as in the reference;
// - scatter_elements: split over threads by the outer index and blocks of columns, each block
//   of y copied from x and then given its updates in their order: a y element only ever
//   receives the updates of its own (outer, column), so each sees them in the reference's
//   order whatever the split;
// - one_hot: each (outer, block of columns) filled with `off`, then `on` set where the index
//   points;
// - top_k: one pass per line keeping the k best seen in a heap whose worst entry is the bar a
//   new element must beat; the movement kernels' scans skip, a vector of compares at a time,
//   to the next element that may beat it. Lines along columns keep one heap per column of a
//   block of columns, walked a row at a time.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "indexing.hpp"
#include "kernels.hpp"
#include "move.hpp"

namespace tessera::dnn::detail {
namespace {

namespace mk = move_kernels;
using i64 = std::int64_t;


bool packed(const TensorDesc& d) { return d.is_packed(Layout::kNCHW); }

// log2 of an element's bytes, or -1 when not 1, 2, 4 or 8.
int elem_log2(DType t) {
  switch (dtype_size(t)) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
  }
}

// Index j of a packed i32 or i64 tensor.
i64 index_at(const void* p, bool wide, i64 j) {
  return wide ? static_cast<const i64*>(p)[j] : static_cast<const std::int32_t*>(p)[j];
}
const void* index_ptr(const void* p, bool wide, i64 j) {
  return static_cast<const char*>(p) + j * (wide ? 8 : 4);
}

i64 prod(const std::vector<i64>& d, int b, int e) {
  i64 p = 1;
  for (int i = b; i < e; ++i) p *= d[static_cast<std::size_t>(i)];
  return p;
}

// Whether idx has x's dims except along `axis`.
bool same_off_axis(const TensorDesc& idx, const TensorDesc& x, int axis) {
  for (int i = 0; i < x.rank(); ++i)
    if (i != axis && idx.dims[static_cast<std::size_t>(i)] != x.dims[static_cast<std::size_t>(i)]) return false;
  return true;
}

// Work of `rows` rows of `len` elements cut into pieces of about kUnitElements, run over threads.
void for_row_pieces(Handle& h, i64 rows, i64 len, const std::function<void(i64 row, i64 b, i64 e)>& fn) {
  const i64 per = std::max<i64>(1, (len + kUnitElements - 1) / kUnitElements);
  const i64 piece = (len + per - 1) / per;
  parallel_for(h, 0, rows * per, std::max<i64>(1, kUnitElements / std::max<i64>(1, piece)), [&](i64 u0, i64 u1) {
    for (i64 u = u0; u < u1; ++u) {
      const i64 row = u / per, b = (u % per) * piece;
      fn(row, b, std::min(len, b + piece));
    }
  });
}

// Asks for lines [l0, l1) of p ahead of a gather that reads them in a random order (the
// hardware prefetcher follows only sequential streams).
void prefetch_lines(const char* p, i64 l0, i64 l1) {
  for (i64 l = l0; l < l1; ++l) __builtin_prefetch(p + l * 64, 0, 3);
}

// y[o, j] = x[o, w(idx[j])] (or idx[o, j] when per_row) for the `outer` rows of n elements of
// x, j in [0, K). Rows that fit the L1 cache are asked for ahead: the current one whole as it
// starts, the next one spread over the current one's gathers.
void gather_rows(Handle& h, mk::GatherFn g, const char* x, i64 n, i64 e, i64 outer, i64 K, const void* ip, bool wide,
                 bool per_row, char* y) {
  const i64 lines = (n * e + 63) / 64;
  const bool ahead = n * e <= 32768;
  for_row_pieces(h, outer, K, [&](i64 o, i64 b, i64 end) {
    const char* row = x + o * n * e;
    if (b == 0 && ahead) prefetch_lines(row, 0, lines);
    constexpr i64 kChunk = 256;
    for (i64 c0 = b; c0 < end; c0 += kChunk) {
      const i64 c1 = std::min(end, c0 + kChunk);
      if (ahead && o + 1 < outer) prefetch_lines(row + n * e, lines * c0 / K, lines * c1 / K);
      g(c1 - c0, row, 1, index_ptr(ip, wide, (per_row ? o * K : 0) + c0), n, y + (o * K + c0) * e);
    }
  });
}

}  // namespace

// ---- gather, gather_elements ------------------------------------------------------------------
Status gather_dense_accepts(const GatherCall& c, Isa needs) {
  TESSERA_RETURN_IF_ERROR(isa_allows(needs));
  if (!packed(c.x) || !packed(c.idx) || !packed(c.y)) return refuse("x, indices and y are not all packed row-major");
  if (elem_log2(c.x.dtype) < 0) return refuse("dtype " + dtn(c.x.dtype) + " (elements of 1, 2, 4 or 8 bytes only)");
  return Status::ok();
}

Status gather_dense(Handle& h, const GatherCall& c, const mk::Kernels& k) {
  const int a = c.axis;
  const i64 n = c.x.dims[static_cast<std::size_t>(a)], outer = prod(c.x.dims, 0, a), inner = prod(c.x.dims, a + 1, c.x.rank());
  const i64 K = c.idx.numel(), e = static_cast<i64>(dtype_size(c.x.dtype));
  const bool wide = c.idx.dtype == DType::kI64;
  const char* x = static_cast<const char*>(c.xp);
  char* y = static_cast<char*>(c.yp);
  if (inner == 1) {
    gather_rows(h, k.gather_row[wide][elem_log2(c.x.dtype)], x, n, e, outer, K, c.ip, wide, false, y);
    return Status::ok();
  }
  // Rows of up to 4 KiB picked kAhead ahead are asked for whole (their start is random, so the
  // hardware prefetcher would only catch them some lines in).
  const auto row = static_cast<std::size_t>(inner * e);
  const i64 lines = row <= 4096 ? static_cast<i64>((row + 63) / 64) : 0;
  constexpr i64 kAhead = 4;
  parallel_for(h, 0, outer * K, std::max<i64>(1, kUnitElements / inner), [&](i64 u0, i64 u1) {
    i64 o = u0 / K, j = u0 % K;
    for (i64 u = u0; u < u1; ++u) {
      if (lines > 0 && j + kAhead < K)
        prefetch_lines(x + (o * n + wrap_index(index_at(c.ip, wide, j + kAhead), n)) * inner * e, 0, lines);
      std::memcpy(y + u * inner * e, x + (o * n + wrap_index(index_at(c.ip, wide, j), n)) * inner * e, row);
      if (++j == K) j = 0, ++o;
    }
  });
  return Status::ok();
}

Status gather_elements_dense_accepts(const GatherCall& c, Isa needs) { return gather_dense_accepts(c, needs); }

namespace {

// gather_elements with indices smaller than x off the axis: each line along the indices' last
// dim gathered from x's line at the same coordinates (the axis's at 0), by gather_row when the
// axis is the last dim, else gather_cols (x's last dim is contiguous).
void gather_elements_lines(Handle& h, const GatherCall& c, const mk::Kernels& k) {
  const int a = c.axis, r = c.x.rank();
  const i64 L = c.idx.dims[static_cast<std::size_t>(r - 1)], lines = c.idx.numel() / L;
  const i64 e = static_cast<i64>(dtype_size(c.x.dtype)), n = c.x.dims[static_cast<std::size_t>(a)];
  const i64 s = c.x.strides[static_cast<std::size_t>(a)];
  const bool wide = c.idx.dtype == DType::kI64;
  const mk::GatherFn g = (a == r - 1 ? k.gather_row : k.gather_cols)[wide][elem_log2(c.x.dtype)];
  const char* x = static_cast<const char*>(c.xp);
  char* y = static_cast<char*>(c.yp);
  parallel_for(h, 0, lines, std::max<i64>(1, kUnitElements / L), [&](i64 l0, i64 l1) {
    i64 at[kMaxTensorRank] = {};  // line l0's coordinates over the indices' dims before the last
    for (i64 rest = l0, d = r - 2; d >= 0; --d) {
      at[d] = rest % c.idx.dims[static_cast<std::size_t>(d)];
      rest /= c.idx.dims[static_cast<std::size_t>(d)];
    }
    for (i64 l = l0; l < l1; ++l) {
      i64 base = 0;
      for (int d = 0; d < r - 1; ++d)
        if (d != a) base += at[d] * c.x.strides[static_cast<std::size_t>(d)];
      g(L, x + base * e, s, index_ptr(c.ip, wide, l * L), n, y + l * L * e);
      for (i64 d = r - 2; d >= 0 && ++at[d] == c.idx.dims[static_cast<std::size_t>(d)]; --d) at[d] = 0;
    }
  });
}

}  // namespace

Status gather_elements_dense(Handle& h, const GatherCall& c, const mk::Kernels& k) {
  if (!same_off_axis(c.idx, c.x, c.axis)) {
    gather_elements_lines(h, c, k);
    return Status::ok();
  }
  const int a = c.axis;
  const i64 n = c.x.dims[static_cast<std::size_t>(a)], m = c.idx.dims[static_cast<std::size_t>(a)];
  const i64 outer = prod(c.x.dims, 0, a), inner = prod(c.x.dims, a + 1, c.x.rank());
  const i64 e = static_cast<i64>(dtype_size(c.x.dtype));
  const bool wide = c.idx.dtype == DType::kI64;
  const int lg = elem_log2(c.x.dtype);
  const char* x = static_cast<const char*>(c.xp);
  char* y = static_cast<char*>(c.yp);
  if (inner == 1) {  // y[o, j] = x[o, idx[o, j]]
    gather_rows(h, k.gather_row[wide][lg], x, n, e, outer, m, c.ip, wide, true, y);
    return Status::ok();
  }
  // y[o, j, i] = x[o, idx[o, j, i], i]: row (o, j) of y from the rows of x's slice o.
  const mk::GatherFn g = k.gather_cols[wide][lg];
  for_row_pieces(h, outer * m, inner, [&](i64 r, i64 b, i64 end) {
    const i64 o = r / m;
    g(end - b, x + (o * n * inner + b) * e, inner, index_ptr(c.ip, wide, r * inner + b), n, y + (r * inner + b) * e);
  });
  return Status::ok();
}

// ---- gather_nd --------------------------------------------------------------------------------
namespace {

// Where the index tuples of gather_nd / scatter_nd point in a packed tensor t: tuple j's
// element offset is its batch's base plus each wrapped index times the stride of its dim;
// `slab` elements (the dims after the indexed ones) follow each.
struct NdTuples {
  const void* ip;
  bool wide;
  i64 k, count, per_batch, batch_stride, slab;
  i64 lim[kMaxTensorRank] = {}, stride[kMaxTensorRank] = {};
  NdTuples(const TensorDesc& t, int b, i64 k_, const TensorDesc& idx, const void* ip_)
      : ip(ip_), wide(idx.dtype == DType::kI64), k(k_), count(idx.numel() / k_) {
    const int r = t.rank();
    per_batch = prod(idx.dims, b, idx.rank() - 1);
    batch_stride = b == 0 ? 0 : prod(t.dims, b, r);
    slab = prod(t.dims, b + static_cast<int>(k), r);
    for (i64 j = 0; j < k; ++j) {
      lim[j] = t.dims[static_cast<std::size_t>(b + j)];
      stride[j] = prod(t.dims, b + static_cast<int>(j) + 1, r);
    }
  }
  i64 offset(i64 j) const {
    i64 off = batch_stride == 0 ? 0 : j / per_batch * batch_stride;
    for (i64 i = 0; i < k; ++i) off += wrap_index(index_at(ip, wide, j * k + i), lim[i]) * stride[i];
    return off;
  }
};

// Calls fn(t, offset of tuple t) for t in [t0, t1) in order, each tuple's slab (its first
// 4 KiB at base, elements of e bytes) asked for `ahead` tuples ahead (32 for slabs of one
// line, fewer for wider ones): the tuples point anywhere, out of the hardware prefetcher's
// sight. Only slabs at offsets in [lo, hi) are asked for.
template <bool kWrite, typename Fn>
void walk_tuples(const NdTuples& nd, i64 t0, i64 t1, const char* base, i64 e, i64 lo, i64 hi, Fn&& fn) {
  constexpr i64 kRing = 32;  // single elements 32 tuples ahead: 8 ran 1.8x slower, 64 no faster
  const i64 lines = std::min<i64>(64, (nd.slab * e + 63) / 64), ahead = std::max<i64>(2, kRing / lines);
  i64 ring[kRing];
  const auto ask = [&](i64 t) {
    const i64 at = ring[t % kRing] = nd.offset(t);
    if (at >= lo && at < hi)
      for (i64 l = 0; l < lines; ++l) __builtin_prefetch(base + at * e + l * 64, kWrite, 3);
  };
  for (i64 t = t0; t < std::min(t1, t0 + ahead); ++t) ask(t);
  for (i64 t = t0; t < t1; ++t) {
    const i64 at = ring[t % kRing];
    if (t + ahead < t1) ask(t + ahead);
    fn(t, at);
  }
}
constexpr i64 kAll = std::numeric_limits<i64>::max();

template <typename E>
void gather_nd_elements(Handle& h, const NdTuples& nd, i64 count, const char* x, char* y) {
  parallel_for(h, 0, count, kUnitElements, [&](i64 t0, i64 t1) {
    walk_tuples<false>(nd, t0, t1, x, sizeof(E), 0, kAll, [&](i64 t, i64 at) {
      std::memcpy(y + t * static_cast<i64>(sizeof(E)), x + at * static_cast<i64>(sizeof(E)), sizeof(E));
    });
  });
}

}  // namespace

Status gather_nd_dense_accepts(const GatherNdCall& c) {
  if (!packed(c.x) || !packed(c.idx) || !packed(c.y)) return refuse("x, indices and y are not all packed row-major");
  return Status::ok();
}

// Single elements (the tuples index every dim) by a typed copy, slabs by memcpy.
Status gather_nd_dense(Handle& h, const GatherNdCall& c) {
  const NdTuples nd(c.x, c.batch_dims, c.k, c.idx, c.ip);
  const i64 count = nd.count, e = static_cast<i64>(dtype_size(c.x.dtype));
  const char* x = static_cast<const char*>(c.xp);
  char* y = static_cast<char*>(c.yp);
  if (nd.slab == 1) {
    switch (elem_log2(c.x.dtype)) {
      case 0: gather_nd_elements<std::uint8_t>(h, nd, count, x, y); return Status::ok();
      case 1: gather_nd_elements<std::uint16_t>(h, nd, count, x, y); return Status::ok();
      case 2: gather_nd_elements<std::uint32_t>(h, nd, count, x, y); return Status::ok();
      case 3: gather_nd_elements<std::uint64_t>(h, nd, count, x, y); return Status::ok();
      default: break;
    }
  }
  const auto row = static_cast<std::size_t>(nd.slab * e);
  parallel_for(h, 0, count, std::max<i64>(1, kUnitElements / nd.slab), [&](i64 t0, i64 t1) {
    walk_tuples<false>(nd, t0, t1, x, e, 0, kAll, [&](i64 t, i64 at) { std::memcpy(y + t * nd.slab * e, x + at * e, row); });
  });
  return Status::ok();
}

// ---- scatter_elements -------------------------------------------------------------------------
namespace {

// The dense scatters' element types: `none` moves bytes (any dtype of 1, 2, 4 or 8 bytes, as
// the unsigned integer of its size); the reductions compute in f32, f64, i32 or i64, f16 and
// bf16 in f32 with each result rounded back, as the reference stages them.
template <bool kBf16>
struct Half {
  std::uint16_t bits;
};
template <typename T, ScatterReduce kR>
inline void reduce_into(T& at, T u) {
  if constexpr (std::is_same_v<T, Half<true>>) {
    at.bits = f32_to_bf16_bits(combine<float>(kR, bf16_bits_to_f32(at.bits), bf16_bits_to_f32(u.bits)));
  } else if constexpr (std::is_same_v<T, Half<false>>) {
    at.bits = f32_to_f16_bits(combine<float>(kR, f16_bits_to_f32(at.bits), f16_bits_to_f32(u.bits)));
  } else {
    at = combine<T>(kR, at, u);
  }
}
Status scatter_dtype_allows(ScatterReduce r, DType t) {
  if (r == ScatterReduce::kNone ? elem_log2(t) >= 0
                                : t == DType::kF32 || t == DType::kF64 || t == DType::kI32 || t == DType::kI64 ||
                                      t == DType::kF16 || t == DType::kBF16)
    return Status::ok();
  return refuse("reduction " + std::string(scatter_reduce_name(r)) + " on dtype " + dtn(t) +
                " (none: elements of 1, 2, 4 or 8 bytes; the others: f32, f64, f16, bf16, i32, i64)");
}
template <typename F>
void visit_scatter_type(ScatterReduce r, DType t, F&& f) {
  if (r == ScatterReduce::kNone) {
    switch (elem_log2(t)) {
      case 0: f(std::uint8_t{}); return;
      case 1: f(std::uint16_t{}); return;
      case 2: f(std::uint32_t{}); return;
      default: f(std::uint64_t{}); return;
    }
  }
  switch (t) {
    case DType::kF32: f(float{}); return;
    case DType::kF64: f(double{}); return;
    case DType::kF16: f(Half<false>{}); return;
    case DType::kBF16: f(Half<true>{}); return;
    case DType::kI32: f(std::int32_t{}); return;
    default: f(i64{}); return;
  }
}

// Rows j in [0, m) of updates (row stride ld) into y: update (j, i) combined into
// y[w(idx[j, i]) * ly + col(i)], col(i) = cols[i] (or i without a table).
template <typename T, ScatterReduce kR>
void scatter_cols(i64 m, i64 ld, i64 w, const void* ip, bool wide, i64 n, i64 ly, const i64* cols, const T* u, T* y) {
  for (i64 j = 0; j < m; ++j) {
    if (cols == nullptr) {
      for (i64 i = 0; i < w; ++i)
        reduce_into<T, kR>(y[wrap_index(index_at(ip, wide, j * ld + i), n) * ly + i], u[j * ld + i]);
    } else {
      for (i64 i = 0; i < w; ++i)
        reduce_into<T, kR>(y[wrap_index(index_at(ip, wide, j * ld + i), n) * ly + cols[i]], u[j * ld + i]);
    }
  }
}
template <typename T, ScatterReduce kR>
void scatter_slab(i64 w, const T* u, T* y) {
  if constexpr (kR == ScatterReduce::kNone) std::memcpy(y, u, static_cast<std::size_t>(w) * sizeof(T));
  else
    for (i64 i = 0; i < w; ++i) reduce_into<T, kR>(y[i], u[i]);
}

// K<T, kR>::fn, the kernel K instantiated for reduction r (scatter_cols or scatter_slab).
template <typename T, ScatterReduce kR>
struct Cols {
  static constexpr auto fn = &scatter_cols<T, kR>;
};
template <typename T, ScatterReduce kR>
struct Slab {
  static constexpr auto fn = &scatter_slab<T, kR>;
};
template <template <typename, ScatterReduce> class K, typename T>
auto for_reduction(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::kAdd: return K<T, ScatterReduce::kAdd>::fn;
    case ScatterReduce::kMul: return K<T, ScatterReduce::kMul>::fn;
    case ScatterReduce::kMax: return K<T, ScatterReduce::kMax>::fn;
    case ScatterReduce::kMin: return K<T, ScatterReduce::kMin>::fn;
    case ScatterReduce::kNone: break;
  }
  return K<T, ScatterReduce::kNone>::fn;
}

// Indices smaller than x off the axis: y = x first, then units of (outer index of the indices,
// block of their inner columns), each column's x offset from a table. Distinct units reach
// distinct elements of y, and each element gets its updates in the reference's order (rows
// ascending).
template <typename T>
void scatter_smaller(Handle& h, const ScatterCall& c) {
  const int a = c.axis;
  const std::vector<i64>& xs = c.x.strides;
  const i64 n = c.x.dims[static_cast<std::size_t>(a)], m = c.idx.dims[static_cast<std::size_t>(a)];
  const std::span<const i64> id(c.idx.dims);
  const std::vector<i64> outer = box_offsets(id.first(static_cast<std::size_t>(a)), std::span<const i64>(xs).first(static_cast<std::size_t>(a)));
  const std::vector<i64> cols = box_offsets(id.subspan(static_cast<std::size_t>(a) + 1), std::span<const i64>(xs).subspan(static_cast<std::size_t>(a) + 1));
  // Blocks of columns: at least 64, at most kUnitElements, enough of them to give every thread one.
  const i64 inner = static_cast<i64>(cols.size()), units = static_cast<i64>(outer.size()), want = std::max(1, max_threads(h));
  const i64 pieces = units >= want ? 1 : (want + units - 1) / units;
  const i64 block = std::min(kUnitElements, std::max<i64>(64, (inner / pieces + 63) / 64 * 64)), per = (inner + block - 1) / block;
  const bool wide = c.idx.dtype == DType::kI64;
  const auto f = for_reduction<Cols, T>(c.reduction);
  const T* u = static_cast<const T*>(c.up);
  T* y = static_cast<T*>(c.yp);
  parallel_for(h, 0, units * per, 1, [&](i64 u0, i64 u1) {
    for (i64 unit = u0; unit < u1; ++unit) {
      const i64 o = unit / per, c0 = (unit % per) * block, w = std::min(inner, c0 + block) - c0;
      const i64 at = o * m * inner + c0;
      f(m, inner, w, index_ptr(c.ip, wide, at), wide, n, xs[static_cast<std::size_t>(a)], cols.data() + c0, u + at,
        y + outer[static_cast<std::size_t>(o)]);
    }
  });
}

template <typename T>
void scatter_run(Handle& h, const ScatterCall& c) {
  if (!same_off_axis(c.idx, c.x, c.axis)) {
    scatter_smaller<T>(h, c);
    return;
  }
  const int a = c.axis;
  const i64 n = c.x.dims[static_cast<std::size_t>(a)], m = c.idx.dims[static_cast<std::size_t>(a)];
  const i64 outer = prod(c.x.dims, 0, a), inner = prod(c.x.dims, a + 1, c.x.rank());
  const bool wide = c.idx.dtype == DType::kI64;
  const auto f = for_reduction<Cols, T>(c.reduction);
  // Blocks of columns: at least 64, enough of them to give every thread one.
  const i64 want = std::max(1, max_threads(h));
  const i64 pieces = outer >= want ? 1 : (want + outer - 1) / outer;
  const i64 block = std::min(inner, std::max<i64>(64, (inner / pieces + 63) / 64 * 64));
  const i64 per = (inner + block - 1) / block;
  const T* u = static_cast<const T*>(c.up);
  const T* x = static_cast<const T*>(c.xp);
  T* y = static_cast<T*>(c.yp);
  parallel_for(h, 0, outer * per, 1, [&](i64 u0, i64 u1) {
    for (i64 unit = u0; unit < u1; ++unit) {
      const i64 o = unit / per, c0 = (unit % per) * block, w = std::min(inner, c0 + block) - c0;
      const i64 at = o * m * inner + c0, yo = o * n * inner + c0;
      if (x != y) {  // y's block = x's, just before its updates (so they find it cached)
        if (w == inner) std::memcpy(y + yo, x + yo, static_cast<std::size_t>(n * inner) * sizeof(T));
        else
          for (i64 r = 0; r < n; ++r) std::memcpy(y + yo + r * inner, x + yo + r * inner, static_cast<std::size_t>(w) * sizeof(T));
      }
      f(m, inner, w, index_ptr(c.ip, wide, at), wide, n, inner, nullptr, u + at, y + yo);
    }
  });
}

}  // namespace

Status scatter_elements_dense_accepts(const ScatterCall& c) {
  if (!packed(c.x) || !packed(c.idx) || !packed(c.upd) || !packed(c.y))
    return refuse("x, indices, updates and y are not all packed row-major");
  return scatter_dtype_allows(c.reduction, c.x.dtype);
}

Status scatter_elements_dense(Handle& h, const ScatterCall& c) {
  if (c.x.numel() == 0) return Status::ok();  // (no columns would make blocks of 0)
  if (!same_off_axis(c.idx, c.x, c.axis) && c.xp != c.yp) TESSERA_RETURN_IF_ERROR(run_move(h, Move::of(c.x, c.xp, c.y, c.yp)));
  visit_scatter_type(c.reduction, c.x.dtype, [&](auto tag) { scatter_run<decltype(tag)>(h, c); });
  return Status::ok();
}

// ---- scatter_nd -------------------------------------------------------------------------------
namespace {

// Every tuple in order in each unit of work, so each element of y receives its updates in the
// reference's order: units are blocks of the slabs' columns where slabs are wide, else ranges
// of y's slabs, each thread applying only the tuples that land in its own range.
template <typename T>
void scatter_nd_run(Handle& h, const ScatterNdCall& c) {
  const NdTuples nd(c.y, 0, c.k, c.idx, c.ip);
  const i64 count = nd.count, S = nd.slab;
  const auto f = for_reduction<Slab, T>(c.reduction);
  const T* u = static_cast<const T*>(c.up);
  T* y = static_cast<T*>(c.yp);
  const i64 want = std::max(1, max_threads(h));
  const auto e = static_cast<i64>(sizeof(T));
  if (want == 1 || count * S < kUnitElements) {
    walk_tuples<true>(nd, 0, count, reinterpret_cast<char*>(y), e, 0, kAll, [&](i64 t, i64 at) { f(S, u + t * S, y + at); });
    return;
  }
  if (S >= 64 * want) {
    const i64 block = (S / want + 63) / 64 * 64, per = (S + block - 1) / block;
    parallel_for(h, 0, per, 1, [&](i64 b0, i64 b1) {
      for (i64 b = b0; b < b1; ++b) {
        const i64 c0 = b * block, w = std::min(S, c0 + block) - c0;
        walk_tuples<true>(nd, 0, count, reinterpret_cast<char*>(y + c0), e, 0, kAll,
                          [&](i64 t, i64 at) { f(w, u + t * S + c0, y + at + c0); });
      }
    });
    return;
  }
  const i64 slabs = c.y.numel() / S;
  parallel_for(h, 0, want, 1, [&](i64 p0, i64 p1) {
    for (i64 p = p0; p < p1; ++p) {
      const i64 lo = slabs * p / want * S, hi = slabs * (p + 1) / want * S;
      walk_tuples<true>(nd, 0, count, reinterpret_cast<char*>(y), e, lo, hi, [&](i64 t, i64 at) {
        if (at >= lo && at < hi) f(S, u + t * S, y + at);
      });
    }
  });
}

}  // namespace

Status scatter_nd_dense_accepts(const ScatterNdCall& c) {
  if (!packed(c.idx) || !packed(c.upd) || !packed(c.y)) return refuse("indices, updates and y are not all packed row-major");
  return scatter_dtype_allows(c.reduction, c.y.dtype);
}

Status scatter_nd_dense(Handle& h, const ScatterNdCall& c) {
  if (c.y.numel() == 0) return Status::ok();
  visit_scatter_type(c.reduction, c.y.dtype, [&](auto tag) { scatter_nd_run<decltype(tag)>(h, c); });
  return Status::ok();
}

// ---- one_hot ----------------------------------------------------------------------------------
namespace {

template <typename E>
void one_hot_run(Handle& h, const OneHotCall& c, E off, E on) {
  const int a = c.axis;
  const i64 depth = c.depth, outer = prod(c.idx.dims, 0, a), inner = prod(c.idx.dims, a, c.idx.rank());
  const bool wide = c.idx.dtype == DType::kI64;
  E* y = static_cast<E*>(c.yp);
  const bool zero_off = off == E{};
  // Units: (outer index, block of columns); inner == 1 takes rows in runs.
  for_row_pieces(h, outer, inner, [&](i64 o, i64 b, i64 end) {
    E* slab = y + o * depth * inner;
    const auto fill = [&](E* p, i64 count) {
      if (zero_off) std::memset(p, 0, static_cast<std::size_t>(count) * sizeof(E));
      else std::fill(p, p + count, off);
    };
    if (end - b == inner) fill(slab, depth * inner);  // the whole slab: one run
    else
      for (i64 d = 0; d < depth; ++d) fill(slab + d * inner + b, end - b);
    for (i64 i = b; i < end; ++i) {
      const i64 v = index_at(c.ip, wide, o * inner + i);
      const i64 p = v < 0 ? v + depth : v;
      if (p >= 0 && p < depth) slab[p * inner + i] = on;
    }
  });
}

template <typename E>
E bits_of(double v, DType t) {
  E out{};
  convert_element(DType::kF64, &v, t, &out);
  return out;
}

}  // namespace

Status one_hot_dense_accepts(const OneHotCall& c) {
  if (!packed(c.idx) || !packed(c.y)) return refuse("indices and y are not both packed row-major");
  if (c.idx.dtype != DType::kI32 && c.idx.dtype != DType::kI64) return refuse("indices dtype " + dtn(c.idx.dtype) + " (i32 and i64 only)");
  if (elem_log2(c.y.dtype) < 0) return refuse("dtype " + dtn(c.y.dtype) + " (elements of 1, 2, 4 or 8 bytes only)");
  return Status::ok();
}

Status one_hot_dense(Handle& h, const OneHotCall& c) {
  const DType t = c.y.dtype;
  switch (elem_log2(t)) {
    case 0: one_hot_run<std::uint8_t>(h, c, bits_of<std::uint8_t>(c.off, t), bits_of<std::uint8_t>(c.on, t)); break;
    case 1: one_hot_run<std::uint16_t>(h, c, bits_of<std::uint16_t>(c.off, t), bits_of<std::uint16_t>(c.on, t)); break;
    case 2: one_hot_run<std::uint32_t>(h, c, bits_of<std::uint32_t>(c.off, t), bits_of<std::uint32_t>(c.on, t)); break;
    default: one_hot_run<std::uint64_t>(h, c, bits_of<std::uint64_t>(c.off, t), bits_of<std::uint64_t>(c.on, t)); break;
  }
  return Status::ok();
}

// ---- top_k ------------------------------------------------------------------------------------
namespace {

template <typename T>
struct Entry {
  T v;
  i64 i;
};

// Heaps of k entries ordered so that the top is the worst kept: a new element enters only when
// it beats the top's value (it comes later, so a tie keeps the kept one).
template <typename T, bool kLargest>
struct TopK {
  struct Better {  // a is picked before b
    bool operator()(const Entry<T>& a, const Entry<T>& b) const {
      if (top_before(a.v, b.v, kLargest)) return true;
      if (top_before(b.v, a.v, kLargest)) return false;
      return a.i < b.i;
    }
  };
  static void offer(Entry<T>* heap, i64 k, T& bar, T v, i64 i) {
    if (!top_before(v, bar, kLargest)) return;
    // The top replaced and sifted down: a worse child moves up while the new entry beats it.
    const Entry<T> e{v, i};
    i64 at = 0;
    for (i64 ch = 1; ch < k; ch = 2 * at + 1) {
      if (ch + 1 < k && Better{}(heap[ch], heap[ch + 1])) ++ch;
      if (!Better{}(e, heap[ch])) break;
      heap[at] = heap[ch];
      at = ch;
    }
    heap[at] = e;
    bar = heap[0].v;
  }
  // Sorts a heap best first and writes it: values at vals[j * step], indices at ids[j * step].
  static void emit(Entry<T>* heap, i64 k, i64 step, T* vals, i64* ids) {
    std::sort_heap(heap, heap + k, Better{});
    for (i64 j = 0; j < k; ++j) {
      vals[j * step] = heap[j].v;
      ids[j * step] = heap[j].i;
    }
  }
};

template <typename T, bool kLargest>
void top_k_run(Handle& h, const TopKCall& c, const mk::Kernels& kt) {
  using S = TopK<T, kLargest>;
  constexpr int type = std::is_same_v<T, float>    ? mk::kCumF32
                       : std::is_same_v<T, double> ? mk::kCumF64
                       : std::is_same_v<T, i64>    ? mk::kCumI64
                                                   : mk::kCumI32;
  const mk::TopScanRowFn scan_row = kt.top_scan_row[type][kLargest];
  const mk::TopScanColsFn scan_cols = kt.top_scan_cols[type][kLargest];
  const int a = c.axis;
  const i64 n = c.x.dims[static_cast<std::size_t>(a)], k = c.k;
  const i64 outer = prod(c.x.dims, 0, a), inner = prod(c.x.dims, a + 1, c.x.rank());
  const T* x = static_cast<const T*>(c.xp);
  T* vals = static_cast<T*>(c.vp);
  i64* ids = static_cast<i64*>(c.ip);
  if (inner == 1) {
    parallel_for(h, 0, outer, std::max<i64>(1, kUnitElements / n), [&](i64 l0, i64 l1) {
      std::vector<Entry<T>> heap(static_cast<std::size_t>(k));
      for (i64 l = l0; l < l1; ++l) {
        const T* line = x + l * n;
        for (i64 j = 0; j < k; ++j) heap[static_cast<std::size_t>(j)] = {line[j], j};
        std::make_heap(heap.begin(), heap.end(), typename S::Better{});
        T bar = heap[0].v;
        for (i64 j = k; j < n; ++j) {
          j += scan_row(n - j, line + j, &bar);
          if (j < n) S::offer(heap.data(), k, bar, line[j], j);
        }
        S::emit(heap.data(), k, 1, vals + l * k, ids + l * k);
      }
    });
    return;
  }
  // Columns: blocks of kW columns of one outer slice, a heap per column, rows walked in order.
  // Each row's piece is 512 bytes (128 f32): 64 and 256 bytes ran within 5%, 1 KiB 24% slower.
  const i64 kW = 512 / static_cast<i64>(sizeof(T)), kG = 64 / static_cast<i64>(sizeof(T));
  const i64 per = (inner + kW - 1) / kW;
  parallel_for(h, 0, outer * per, 1, [&](i64 u0, i64 u1) {
    std::vector<Entry<T>> heaps(static_cast<std::size_t>(kW * k));
    std::vector<T> bar(static_cast<std::size_t>(kW));
    for (i64 u = u0; u < u1; ++u) {
      const i64 o = u / per, c0 = (u % per) * kW, w = std::min(inner, c0 + kW) - c0;
      const T* slice = x + o * n * inner + c0;
      for (i64 j = 0; j < k; ++j)
        for (i64 q = 0; q < w; ++q) heaps[static_cast<std::size_t>(q * k + j)] = {slice[j * inner + q], j};
      for (i64 q = 0; q < w; ++q) {
        Entry<T>* hp = heaps.data() + q * k;
        std::make_heap(hp, hp + k, typename S::Better{});
        bar[q] = hp[0].v;
      }
      for (i64 j = k; j < n; ++j) {
        std::uint64_t hits = 0;
        j += scan_cols(n - j, slice + j * inner, inner, w, bar.data(), &hits);
        if (j == n) break;
        for (; hits != 0; hits &= hits - 1) {  // the groups holding a candidate
          const i64 g0 = std::countr_zero(hits) * kG;
          for (i64 q = g0; q < std::min(w, g0 + kG); ++q)
            S::offer(heaps.data() + q * k, k, bar[static_cast<std::size_t>(q)], slice[j * inner + q], j);
        }
      }
      for (i64 q = 0; q < w; ++q)
        S::emit(heaps.data() + q * k, k, inner, vals + o * k * inner + c0 + q, ids + o * k * inner + c0 + q);
    }
  });
}

template <typename T>
void top_k_typed(Handle& h, const TopKCall& c, const mk::Kernels& kt) {
  if (c.largest) top_k_run<T, true>(h, c, kt);
  else top_k_run<T, false>(h, c, kt);
}

}  // namespace

Status top_k_dense_accepts(const TopKCall& c, Isa needs) {
  TESSERA_RETURN_IF_ERROR(isa_allows(needs));
  if (!packed(c.x) || !packed(c.values) || !packed(c.indices)) return refuse("x, values and indices are not all packed row-major");
  const DType t = c.x.dtype;
  if (t != DType::kF32 && t != DType::kF64 && t != DType::kI32 && t != DType::kI64)
    return refuse("dtype " + dtn(t) + " (f32, f64, i32 and i64 only)");
  return Status::ok();
}

Status top_k_dense(Handle& h, const TopKCall& c, const mk::Kernels& k) {
  switch (c.x.dtype) {
    case DType::kF32: top_k_typed<float>(h, c, k); break;
    case DType::kF64: top_k_typed<double>(h, c, k); break;
    case DType::kI32: top_k_typed<std::int32_t>(h, c, k); break;
    default: top_k_typed<i64>(h, c, k); break;
  }
  return Status::ok();
}

}  // namespace tessera::dnn::detail
