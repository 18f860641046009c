// The indexing operations (gather, gather_elements, gather_nd, scatter_elements, scatter_nd,
// one_hot), cumsum and top_k: the entry points' checks, then each op's ordered list (the dense
// entries in index_dense.cpp, cumsum's here) ending in its reference. Every index is checked
// before anything is written, so a bad one fails the call with y untouched. The references
// read the indices into a packed i64 copy and copy by slabs: the dims after the indexed ones
// form a box that is one memcpy when packed on both sides, else an element walk through
// precomputed offsets. Gathers, one-hot, cumsum and top-k split their independent rows over
// threads; the reference scatters run in the updates' order on one thread (duplicates resolve
// the same way every time).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../eltwise/nest.hpp"
#include "indexing.hpp"
#include "kernels.hpp"
#include "move.hpp"

namespace tessera::dnn {
namespace {

namespace mk = move_kernels;
using i64 = std::int64_t;
using std::to_string;
std::size_t z(i64 i) { return static_cast<std::size_t>(i); }
using detail::dtn;

Result<int> norm_axis(const std::string& fn, int axis, int rank) {
  if (axis < -rank || axis >= rank)
    return invalid_argument(fn + ": axis " + to_string(axis) + " is out of range for rank " + to_string(rank));
  return axis < 0 ? axis + rank : axis;
}
Status check_indices_dtype(const std::string& fn, const TensorDesc& d) {
  if (d.dtype == DType::kI32 || d.dtype == DType::kI64) return Status::ok();
  return invalid_argument(fn + ": indices dtype " + dtn(d.dtype) + " must be i32 or i64");
}
Status check_dims(const std::string& fn, const char* name, const TensorDesc& d, const std::vector<i64>& want) {
  if (d.dims == want) return Status::ok();
  return invalid_argument(fn + ": " + name + " dims [" + detail::dims_string(d.dims) + "] must be [" +
                          detail::dims_string(want) + "]");
}
// y's elements distinct and apart from every input; `exact` names the one input y may be
// exactly (in place), if any.
Status check_output(const std::string& fn, const TensorDesc& y, void* yp,
                    std::initializer_list<std::pair<const TensorDesc*, const void*>> inputs,
                    std::initializer_list<const char*> names, const char* exact = nullptr) {
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y));
  auto name = names.begin();
  for (const auto& [d, p] : inputs) {
    const char* n = *name++;
    const bool may = exact != nullptr && std::string(n) == exact;
    TESSERA_RETURN_IF_ERROR(may ? detail::check_no_overlap(fn, "y", y, yp, n, *d, p) : detail::check_disjoint(fn, "y", y, yp, n, *d, p));
  }
  return Status::ok();
}

using detail::box_offsets;
std::vector<i64> sub(const std::vector<i64>& v, i64 b, i64 e) { return {v.begin() + b, v.begin() + e}; }

// Every index, packed row-major, negatives wrapped, checked against limits[pos % size].
Result<std::vector<i64>> load_indices(const std::string& fn, const TensorDesc& d, const void* p,
                                      const std::vector<i64>& limits) {
  const std::vector<i64> offs = box_offsets(d.dims, d.strides);
  std::vector<i64> out(offs.size());
  const std::size_t period = limits.size();
  for (std::size_t i = 0; i < offs.size(); ++i) {
    const i64 v = d.dtype == DType::kI32 ? static_cast<const std::int32_t*>(p)[offs[i]] : static_cast<const i64*>(p)[offs[i]];
    const i64 lim = limits[i % period];
    const i64 w = v < 0 ? v + lim : v;
    if (v < -lim || w >= lim || w < 0)
      return invalid_argument(fn + ": index " + to_string(v) + " at position " + to_string(i) +
                              " is out of range for a dim of " + to_string(lim));
    out[i] = w;
  }
  return out;
}

// Every index checked as load_indices does, without keeping them: packed indices in one pass
// over their storage (one limit: the movement kernels' vector check on the best ISA allowed;
// one limit per tuple entry: a scalar walk), others through load_indices.
template <typename I>
i64 first_bad_periodic(const I* p, i64 n, const std::vector<i64>& limits) {
  const std::size_t period = limits.size();
  std::size_t j = 0;  // (i % period, without a division per index)
  for (i64 i = 0; i < n; ++i) {
    if (p[i] < -limits[j] || p[i] >= limits[j]) return i;
    if (++j == period) j = 0;
  }
  return -1;
}
Status check_indices(const std::string& fn, const TensorDesc& d, const void* p, const std::vector<i64>& limits) {
  if (!d.is_packed(Layout::kNCHW)) return load_indices(fn, d, p, limits).status();
  const i64 n = d.numel();
  const bool wide = d.dtype == DType::kI64;
  const i64 bad = limits.size() == 1 ? detail::best_allowed(mk::kAvx512, mk::kAvx2, mk::kGeneric).first_bad_index[wide](n, p, limits[0])
                  : wide             ? first_bad_periodic(static_cast<const i64*>(p), n, limits)
                                     : first_bad_periodic(static_cast<const std::int32_t*>(p), n, limits);
  if (bad < 0) return Status::ok();
  const i64 v = wide ? static_cast<const i64*>(p)[bad] : static_cast<const std::int32_t*>(p)[bad];
  return invalid_argument(fn + ": index " + to_string(v) + " at position " + to_string(bad) +
                          " is out of range for a dim of " + to_string(limits[static_cast<std::size_t>(bad) % limits.size()]));
}

// A box of elements copied from x to y (both strided): one memcpy when packed on both sides.
struct Slab {
  i64 count = 1;
  bool packed = true;
  std::vector<i64> xo, yo;
  Slab(std::span<const i64> dims, std::span<const i64> xs, std::span<const i64> ys) {
    i64 expect = 1;
    for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
      const i64 d = dims[z(i)];
      if (d != 1 && (xs[z(i)] != expect || ys[z(i)] != expect)) packed = false;
      expect *= d;
    }
    count = expect;
    if (!packed) {
      xo = box_offsets(dims, xs);
      yo = box_offsets(dims, ys);
    }
  }
  void copy(const char* x, char* y, i64 e) const {
    if (packed) {
      std::memcpy(y, x, static_cast<std::size_t>(count * e));
      return;
    }
    for (std::size_t i = 0; i < xo.size(); ++i) std::memcpy(y + yo[i] * e, x + xo[i] * e, static_cast<std::size_t>(e));
  }
};
const char* cbytes(const void* p, i64 off, i64 e) { return static_cast<const char*>(p) + off * e; }
char* bytes(void* p, i64 off, i64 e) { return static_cast<char*>(p) + off * e; }

// ---- scalar arithmetic for scatter reductions and cumsum ----------------------------------------
// Compute types: f16/bf16 in f32, the rest as they are; integer add/mul wrap (indexing.hpp).
template <typename F>
void visit_compute(DType t, F&& f) {
  switch (t) {
    case DType::kBool: f(bool{}); break;
    case DType::kI8: f(std::int8_t{}); break;
    case DType::kU8: f(std::uint8_t{}); break;
    case DType::kI32: f(std::int32_t{}); break;
    case DType::kI64: f(i64{}); break;
    case DType::kF16:
    case DType::kBF16:
    case DType::kF32: f(float{}); break;
    case DType::kF64: f(double{}); break;
    default: break;
  }
}
template <typename T>
T ld(const void* p, DType t, i64 off) {
  if constexpr (std::is_same_v<T, float>) return detail::load_f32(p, t, off);
  else if constexpr (std::is_same_v<T, bool>) return static_cast<const std::uint8_t*>(p)[off] != 0;
  else return static_cast<const T*>(p)[off];
}
template <typename T>
void st(void* p, DType t, i64 off, T v) {
  if constexpr (std::is_same_v<T, float>) detail::store_f32(p, t, off, v);
  else static_cast<T*>(p)[off] = v;
}
using detail::combine;
using detail::wrap_add;

// y = x unless they are the same tensor.
Status copy_into(Handle& h, const TensorDesc& x, const void* xp, const TensorDesc& y, void* yp) {
  if (xp == yp) return Status::ok();
  return detail::run_move(h, detail::Move::of(x, xp, y, yp));
}

// The gathers' shared checks: x, indices (i32/i64) and y valid, y of x's dtype.
Status check_gather_args(const std::string& fn, const TensorDesc& x_desc, const void* x, const TensorDesc& idx_desc,
                         const void* indices, const TensorDesc& y_desc, const void* y) {
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "indices", idx_desc, indices));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  TESSERA_RETURN_IF_ERROR(check_indices_dtype(fn, idx_desc));
  return detail::check_same_dtype(fn, "x", x_desc, "y", y_desc);
}

// GatherElements / ScatterElements: indices of x's rank, within x's dims off the axis.
Status check_fits_off_axis(const std::string& fn, const TensorDesc& idx, const TensorDesc& x, int a) {
  bool fits = idx.rank() == x.rank();
  for (int i = 0; fits && i < x.rank(); ++i) fits = i == a || idx.dims[z(i)] <= x.dims[z(i)];
  if (fits) return Status::ok();
  return invalid_argument(fn + ": indices dims [" + detail::dims_string(idx.dims) + "] must have x's rank and fit in x [" +
                          detail::dims_string(x.dims) + "] off axis " + to_string(a));
}

Status check_scatter_common(const std::string& fn, const TensorDesc& x, const void* xp, const TensorDesc& idx,
                            const void* ip, const TensorDesc& upd, const void* up, const TensorDesc& y, void* yp) {
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x, xp));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "indices", idx, ip));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "updates", upd, up));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y, yp));
  TESSERA_RETURN_IF_ERROR(check_indices_dtype(fn, idx));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x, "updates", upd));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x, "y", y));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x, "y", y));
  if (is_complex(x.dtype)) return unsupported(fn + ": complex dtypes are not supported");
  return check_output(fn, y, yp, {{&x, xp}, {&idx, ip}, {&upd, up}}, {"x", "indices", "updates"}, "x");
}

}  // namespace

namespace {

// ---- references: one element (or slab) at a time through precomputed offsets ------------------
Status gather_ref(Handle& h, const detail::GatherCall& c) {
  const TensorDesc &x_desc = c.x, &idx_desc = c.idx, &y_desc = c.y;
  const void* x = c.xp;
  void* y = c.yp;
  const int a = c.axis, q = idx_desc.rank(), r = x_desc.rank();
  TESSERA_ASSIGN_OR_RETURN(auto iv, load_indices("gather", idx_desc, c.ip, {x_desc.dims[z(a)]}));
  const auto outer_x = box_offsets(sub(x_desc.dims, 0, a), sub(x_desc.strides, 0, a));
  const auto outer_y = box_offsets(sub(x_desc.dims, 0, a), sub(y_desc.strides, 0, a));
  const auto idx_y = box_offsets(idx_desc.dims, sub(y_desc.strides, a, a + q));
  const Slab slab(sub(x_desc.dims, a + 1, r), sub(x_desc.strides, a + 1, r), sub(y_desc.strides, a + q, a + q + r - a - 1));
  const i64 e = static_cast<i64>(dtype_size(x_desc.dtype)), K = static_cast<i64>(iv.size()), xa = x_desc.strides[z(a)];
  detail::parallel_for(h, 0, static_cast<i64>(outer_x.size()) * K, std::max<i64>(1, 16384 / slab.count), [&](i64 u0, i64 u1) {
    for (i64 u = u0; u < u1; ++u) {
      const i64 o = u / K, k = u % K;
      slab.copy(cbytes(x, outer_x[z(o)] + iv[z(k)] * xa, e), bytes(y, outer_y[z(o)] + idx_y[z(k)], e), e);
    }
  });
  return Status::ok();
}

Status gather_elements_ref(Handle& h, const detail::GatherCall& c) {
  const TensorDesc &x_desc = c.x, &idx_desc = c.idx, &y_desc = c.y;
  const void* x = c.xp;
  void* y = c.yp;
  const int a = c.axis;
  TESSERA_ASSIGN_OR_RETURN(auto iv, load_indices("gather_elements", idx_desc, c.ip, {x_desc.dims[z(a)]}));
  std::vector<i64> xs = x_desc.strides;
  xs[z(a)] = 0;
  const auto xo = box_offsets(idx_desc.dims, xs), yo = box_offsets(idx_desc.dims, y_desc.strides);
  const i64 e = static_cast<i64>(dtype_size(x_desc.dtype)), xa = x_desc.strides[z(a)];
  detail::parallel_for(h, 0, static_cast<i64>(iv.size()), 16384, [&](i64 p0, i64 p1) {
    for (i64 p = p0; p < p1; ++p)
      std::memcpy(bytes(y, yo[z(p)], e), cbytes(x, xo[z(p)] + iv[z(p)] * xa, e), static_cast<std::size_t>(e));
  });
  return Status::ok();
}

// An ordered-list entry of a dense implementation on one ISA's movement kernels: its accepts
// with the ISA it needs, its run with that ISA's table.
template <typename C, Status (*kAccepts)(const C&, Isa), Isa kNeeds>
Status on_isa(const C& c) {
  return kAccepts(c, kNeeds);
}
template <typename C, Status (*kRun)(Handle&, const C&, const mk::Kernels&), const mk::Kernels* kK>
Status with_table(Handle& h, const C& c) {
  return kRun(h, c, *kK);
}
using detail::GatherCall;
using detail::TopKCall;

constexpr detail::Impl<GatherCall> kGatherImpls[] = {
    {"gather_dense_avx512", &on_isa<GatherCall, &detail::gather_dense_accepts, Isa::kAvx512>,
     &with_table<GatherCall, &detail::gather_dense, &mk::kAvx512>},
    {"gather_dense_avx2", &on_isa<GatherCall, &detail::gather_dense_accepts, Isa::kAvx2>,
     &with_table<GatherCall, &detail::gather_dense, &mk::kAvx2>},
    {"gather_dense_generic", &on_isa<GatherCall, &detail::gather_dense_accepts, Isa::kGeneric>,
     &with_table<GatherCall, &detail::gather_dense, &mk::kGeneric>},
    {"gather_ref", &detail::accepts_all<GatherCall>, &gather_ref},
};
constexpr detail::Impl<GatherCall> kGatherElementsImpls[] = {
    {"gather_elements_dense_avx512", &on_isa<GatherCall, &detail::gather_elements_dense_accepts, Isa::kAvx512>,
     &with_table<GatherCall, &detail::gather_elements_dense, &mk::kAvx512>},
    {"gather_elements_dense_avx2", &on_isa<GatherCall, &detail::gather_elements_dense_accepts, Isa::kAvx2>,
     &with_table<GatherCall, &detail::gather_elements_dense, &mk::kAvx2>},
    {"gather_elements_dense_generic", &on_isa<GatherCall, &detail::gather_elements_dense_accepts, Isa::kGeneric>,
     &with_table<GatherCall, &detail::gather_elements_dense, &mk::kGeneric>},
    {"gather_elements_ref", &detail::accepts_all<GatherCall>, &gather_elements_ref},
};

}  // namespace

Status gather(Handle& h, int axis, const TensorDesc& x_desc, const void* x, const TensorDesc& idx_desc,
              const void* indices, const TensorDesc& y_desc, void* y) {
  const std::string fn = "gather";
  TESSERA_RETURN_IF_ERROR(check_gather_args(fn, x_desc, x, idx_desc, indices, y_desc, y));
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(fn, axis, x_desc.rank()));
  std::vector<i64> dims = sub(x_desc.dims, 0, a);
  dims.insert(dims.end(), idx_desc.dims.begin(), idx_desc.dims.end());
  dims.insert(dims.end(), x_desc.dims.begin() + a + 1, x_desc.dims.end());
  if (dims.size() > static_cast<std::size_t>(detail::kMaxTensorRank))
    return invalid_argument(fn + ": y's rank " + to_string(dims.size()) + " exceeds " + to_string(detail::kMaxTensorRank));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "y", y_desc, dims));
  TESSERA_RETURN_IF_ERROR(check_output(fn, y_desc, y, {{&x_desc, x}, {&idx_desc, indices}}, {"x", "indices"}));
  TESSERA_RETURN_IF_ERROR(check_indices(fn, idx_desc, indices, {x_desc.dims[z(a)]}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "gather"));
  detail::log_move_bench(h, "gather", x_desc, x_desc.dtype, [&] {
    return " --axis " + to_string(a) + (idx_desc.rank() > 0 ? " --index-dims " + detail::dims_x(idx_desc) : "");
  });
  if (y_desc.numel() == 0) return Status::ok();
  return detail::run_first_accepting(h, "gather", kGatherImpls, detail::GatherCall{a, x_desc, x, idx_desc, indices, y_desc, y});
}

Status gather_elements(Handle& h, int axis, const TensorDesc& x_desc, const void* x, const TensorDesc& idx_desc,
                       const void* indices, const TensorDesc& y_desc, void* y) {
  const std::string fn = "gather_elements";
  TESSERA_RETURN_IF_ERROR(check_gather_args(fn, x_desc, x, idx_desc, indices, y_desc, y));
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(fn, axis, x_desc.rank()));
  TESSERA_RETURN_IF_ERROR(check_fits_off_axis(fn, idx_desc, x_desc, a));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "y", y_desc, idx_desc.dims));
  TESSERA_RETURN_IF_ERROR(check_output(fn, y_desc, y, {{&x_desc, x}, {&idx_desc, indices}}, {"x", "indices"}));
  TESSERA_RETURN_IF_ERROR(check_indices(fn, idx_desc, indices, {x_desc.dims[z(a)]}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "gather_elements"));
  detail::log_move_bench(h, "gather_elements", x_desc, x_desc.dtype, [&] {
    return " --axis " + to_string(a) + (idx_desc.dims != x_desc.dims ? " --index-dims " + detail::dims_x(idx_desc) : "");
  });
  if (y_desc.numel() == 0) return Status::ok();
  return detail::run_first_accepting(h, "gather_elements", kGatherElementsImpls,
                                     detail::GatherCall{a, x_desc, x, idx_desc, indices, y_desc, y});
}

namespace {

Status gather_nd_ref(Handle& h, const detail::GatherNdCall& c) {
  const TensorDesc &x_desc = c.x, &idx_desc = c.idx, &y_desc = c.y;
  const int r = x_desc.rank(), q = idx_desc.rank(), b = c.batch_dims;
  const i64 k = c.k;
  TESSERA_ASSIGN_OR_RETURN(auto iv, load_indices("gather_nd", idx_desc, c.ip, sub(x_desc.dims, b, b + k)));
  const std::vector<i64> tdims = sub(idx_desc.dims, 0, q - 1);
  std::vector<i64> bx(z(q - 1), 0);  // x's batch strides along the tuples' dims
  for (int i = 0; i < b; ++i) bx[z(i)] = x_desc.strides[z(i)];
  const auto tx = box_offsets(tdims, bx), ty = box_offsets(tdims, sub(y_desc.strides, 0, q - 1));
  const Slab slab(sub(x_desc.dims, b + k, r), sub(x_desc.strides, b + k, r), sub(y_desc.strides, q - 1, y_desc.rank()));
  const i64 e = static_cast<i64>(dtype_size(x_desc.dtype));
  detail::parallel_for(h, 0, static_cast<i64>(tx.size()), std::max<i64>(1, 16384 / slab.count), [&](i64 t0, i64 t1) {
    for (i64 t = t0; t < t1; ++t) {
      i64 off = tx[z(t)];
      for (i64 j = 0; j < k; ++j) off += iv[z(t * k + j)] * x_desc.strides[z(b + j)];
      slab.copy(cbytes(c.xp, off, e), bytes(c.yp, ty[z(t)], e), e);
    }
  });
  return Status::ok();
}

constexpr detail::Impl<detail::GatherNdCall> kGatherNdImpls[] = {
    {"gather_nd_dense", &detail::gather_nd_dense_accepts, &detail::gather_nd_dense},
    {"gather_nd_ref", &detail::accepts_all<detail::GatherNdCall>, &gather_nd_ref},
};

}  // namespace

Status gather_nd(Handle& h, int batch_dims, const TensorDesc& x_desc, const void* x, const TensorDesc& idx_desc,
                 const void* indices, const TensorDesc& y_desc, void* y) {
  const std::string fn = "gather_nd";
  TESSERA_RETURN_IF_ERROR(check_gather_args(fn, x_desc, x, idx_desc, indices, y_desc, y));
  const int r = x_desc.rank(), q = idx_desc.rank(), b = batch_dims;
  if (q < 1 || b < 0 || b >= q || b >= r)
    return invalid_argument(fn + ": batch_dims " + to_string(b) + " must be below the ranks of x (" + to_string(r) +
                            ") and indices (" + to_string(q) + ", at least 1)");
  const i64 k = idx_desc.dims[z(q - 1)];
  if (k < 1 || k > r - b)
    return invalid_argument(fn + ": the index tuples' length " + to_string(k) + " must be in [1, " + to_string(r - b) + "]");
  for (int i = 0; i < b; ++i)
    if (x_desc.dims[z(i)] != idx_desc.dims[z(i)])
      return invalid_argument(fn + ": batch dim " + to_string(i) + " differs: x " + to_string(x_desc.dims[z(i)]) +
                              ", indices " + to_string(idx_desc.dims[z(i)]));
  std::vector<i64> dims = sub(idx_desc.dims, 0, q - 1);
  dims.insert(dims.end(), x_desc.dims.begin() + b + k, x_desc.dims.end());
  if (dims.size() > static_cast<std::size_t>(detail::kMaxTensorRank))
    return invalid_argument(fn + ": y's rank " + to_string(dims.size()) + " exceeds " + to_string(detail::kMaxTensorRank));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "y", y_desc, dims));
  TESSERA_RETURN_IF_ERROR(check_output(fn, y_desc, y, {{&x_desc, x}, {&idx_desc, indices}}, {"x", "indices"}));
  TESSERA_RETURN_IF_ERROR(check_indices(fn, idx_desc, indices, sub(x_desc.dims, b, b + k)));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "gather_nd"));
  detail::log_move_bench(h, "gather_nd", x_desc, x_desc.dtype, [&] {
    return " --index-dims " + detail::dims_x(idx_desc) + (b > 0 ? " --batch-dims " + to_string(b) : "");
  });
  if (y_desc.numel() == 0) return Status::ok();
  return detail::run_first_accepting(h, "gather_nd", kGatherNdImpls,
                                     detail::GatherNdCall{b, k, x_desc, x, idx_desc, indices, y_desc, y});
}

namespace {

Status scatter_elements_ref(Handle& h, const detail::ScatterCall& c) {
  const TensorDesc &x_desc = c.x, &idx_desc = c.idx, &upd_desc = c.upd, &y_desc = c.y;
  void* y = c.yp;
  const int a = c.axis;
  TESSERA_ASSIGN_OR_RETURN(auto iv, load_indices("scatter_elements", idx_desc, c.ip, {x_desc.dims[z(a)]}));
  TESSERA_RETURN_IF_ERROR(copy_into(h, x_desc, c.xp, y_desc, y));
  std::vector<i64> ys = y_desc.strides;
  ys[z(a)] = 0;
  const auto yo = box_offsets(idx_desc.dims, ys), uo = box_offsets(idx_desc.dims, upd_desc.strides);
  const i64 ya = y_desc.strides[z(a)];
  const DType t = y_desc.dtype;
  visit_compute(t, [&](auto tag) {
    using T = decltype(tag);
    for (std::size_t p = 0; p < iv.size(); ++p) {
      const i64 at = yo[p] + iv[p] * ya;
      st<T>(y, t, at, combine<T>(c.reduction, ld<T>(y, t, at), ld<T>(c.up, t, uo[p])));
    }
  });
  return Status::ok();
}

constexpr detail::Impl<detail::ScatterCall> kScatterElementsImpls[] = {
    {"scatter_elements_dense", &detail::scatter_elements_dense_accepts, &detail::scatter_elements_dense},
    {"scatter_elements_ref", &detail::accepts_all<detail::ScatterCall>, &scatter_elements_ref},
};

}  // namespace

Status scatter_elements(Handle& h, int axis, ScatterReduce reduction, const TensorDesc& x_desc, const void* x,
                        const TensorDesc& idx_desc, const void* indices, const TensorDesc& upd_desc,
                        const void* updates, const TensorDesc& y_desc, void* y) {
  const std::string fn = "scatter_elements";
  if (scatter_reduce_name(reduction).empty()) return invalid_argument(fn + ": unknown reduction");
  TESSERA_RETURN_IF_ERROR(check_scatter_common(fn, x_desc, x, idx_desc, indices, upd_desc, updates, y_desc, y));
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(fn, axis, x_desc.rank()));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "updates", upd_desc, idx_desc.dims));
  TESSERA_RETURN_IF_ERROR(check_fits_off_axis(fn, idx_desc, x_desc, a));
  TESSERA_RETURN_IF_ERROR(check_indices(fn, idx_desc, indices, {x_desc.dims[z(a)]}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "scatter_elements"));
  detail::log_move_bench(h, "scatter_elements", x_desc, x_desc.dtype, [&] {
    return " --axis " + to_string(a) + (idx_desc.dims != x_desc.dims ? " --index-dims " + detail::dims_x(idx_desc) : "") +
           " --reduce " + std::string(scatter_reduce_name(reduction));
  });
  const detail::ScatterCall c{a, reduction, x_desc, x, idx_desc, indices, upd_desc, updates, y_desc, y};
  return detail::run_first_accepting(h, "scatter_elements", kScatterElementsImpls, c);
}

namespace {

// y already holds x; the tuples applied in their order on one thread.
Status scatter_nd_ref(Handle&, const detail::ScatterNdCall& c) {
  const TensorDesc &idx_desc = c.idx, &upd_desc = c.upd, &y_desc = c.y;
  const int r = y_desc.rank(), q = idx_desc.rank();
  const i64 k = c.k;
  TESSERA_ASSIGN_OR_RETURN(auto iv, load_indices("scatter_nd", idx_desc, c.ip, sub(y_desc.dims, 0, k)));
  const std::vector<i64> tdims = sub(idx_desc.dims, 0, q - 1), sdims = sub(y_desc.dims, k, r);
  const auto tu = box_offsets(tdims, sub(upd_desc.strides, 0, q - 1));
  const auto sy = box_offsets(sdims, sub(y_desc.strides, k, r)), su = box_offsets(sdims, sub(upd_desc.strides, q - 1, upd_desc.rank()));
  const DType t = y_desc.dtype;
  visit_compute(t, [&](auto tag) {
    using T = decltype(tag);
    for (std::size_t tup = 0; tup < tu.size(); ++tup) {
      i64 base = 0;
      for (i64 j = 0; j < k; ++j) base += iv[tup * z(k) + z(j)] * y_desc.strides[z(j)];
      for (std::size_t s = 0; s < sy.size(); ++s) {
        const i64 at = base + sy[s];
        st<T>(c.yp, t, at, combine<T>(c.reduction, ld<T>(c.yp, t, at), ld<T>(c.up, t, tu[tup] + su[s])));
      }
    }
  });
  return Status::ok();
}

constexpr detail::Impl<detail::ScatterNdCall> kScatterNdImpls[] = {
    {"scatter_nd_dense", &detail::scatter_nd_dense_accepts, &detail::scatter_nd_dense},
    {"scatter_nd_ref", &detail::accepts_all<detail::ScatterNdCall>, &scatter_nd_ref},
};

}  // namespace

Status scatter_nd(Handle& h, ScatterReduce reduction, const TensorDesc& x_desc, const void* x,
                  const TensorDesc& idx_desc, const void* indices, const TensorDesc& upd_desc, const void* updates,
                  const TensorDesc& y_desc, void* y) {
  const std::string fn = "scatter_nd";
  if (scatter_reduce_name(reduction).empty()) return invalid_argument(fn + ": unknown reduction");
  TESSERA_RETURN_IF_ERROR(check_scatter_common(fn, x_desc, x, idx_desc, indices, upd_desc, updates, y_desc, y));
  const int r = x_desc.rank(), q = idx_desc.rank();
  if (q < 1) return invalid_argument(fn + ": indices need rank >= 1 (the last dim holds the index tuples)");
  const i64 k = idx_desc.dims[z(q - 1)];
  if (k < 1 || k > r) return invalid_argument(fn + ": the index tuples' length " + to_string(k) + " must be in [1, " + to_string(r) + "]");
  std::vector<i64> udims = sub(idx_desc.dims, 0, q - 1);
  udims.insert(udims.end(), x_desc.dims.begin() + k, x_desc.dims.end());
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "updates", upd_desc, udims));
  TESSERA_RETURN_IF_ERROR(check_indices(fn, idx_desc, indices, sub(x_desc.dims, 0, k)));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "scatter_nd"));
  detail::log_move_bench(h, "scatter_nd", x_desc, x_desc.dtype, [&] {
    return " --index-dims " + detail::dims_x(idx_desc) + " --reduce " + std::string(scatter_reduce_name(reduction));
  });
  TESSERA_RETURN_IF_ERROR(copy_into(h, x_desc, x, y_desc, y));
  return detail::run_first_accepting(h, "scatter_nd", kScatterNdImpls,
                                     detail::ScatterNdCall{reduction, k, idx_desc, indices, upd_desc, updates, y_desc, y});
}

namespace {

Status one_hot_ref(Handle& h, const detail::OneHotCall& c) {
  const TensorDesc &idx_desc = c.idx, &y_desc = c.y;
  const void* indices = c.ip;
  void* y = c.yp;
  const int a = c.axis;
  const i64 depth = c.depth;
  const double on = c.on, off = c.off;
  // Positions: the index (cast to i64 by cast's rules, negatives + depth), -1 where none.
  const auto io = box_offsets(idx_desc.dims, idx_desc.strides);
  std::vector<i64> pos(io.size());
  for (std::size_t p = 0; p < io.size(); ++p) {
    i64 v = 0;
    detail::convert_element(idx_desc.dtype, cbytes(indices, io[p], static_cast<i64>(dtype_size(idx_desc.dtype))), DType::kI64, &v);
    if (v < 0 && v >= -depth) v += depth;
    pos[p] = v >= 0 && v < depth ? v : -1;
  }
  std::vector<i64> ys = y_desc.strides;
  const i64 ya = ys[z(a)];
  ys.erase(ys.begin() + a);
  const auto yo = box_offsets(idx_desc.dims, ys);
  const i64 e = static_cast<i64>(dtype_size(y_desc.dtype));
  unsigned char on_b[8], off_b[8];
  detail::convert_element(DType::kF64, &on, y_desc.dtype, on_b);
  detail::convert_element(DType::kF64, &off, y_desc.dtype, off_b);
  detail::parallel_for(h, 0, static_cast<i64>(pos.size()), std::max<i64>(1, 16384 / std::max<i64>(1, depth)), [&](i64 p0, i64 p1) {
    for (i64 p = p0; p < p1; ++p)
      for (i64 j = 0; j < depth; ++j)
        std::memcpy(bytes(y, yo[z(p)] + j * ya, e), j == pos[z(p)] ? on_b : off_b, static_cast<std::size_t>(e));
  });
  return Status::ok();
}

constexpr detail::Impl<detail::OneHotCall> kOneHotImpls[] = {
    {"one_hot_dense", &detail::one_hot_dense_accepts, &detail::one_hot_dense},
    {"one_hot_ref", &detail::accepts_all<detail::OneHotCall>, &one_hot_ref},
};

}  // namespace

Status one_hot(Handle& h, int axis, i64 depth, double off, double on, const TensorDesc& idx_desc, const void* indices,
               const TensorDesc& y_desc, void* y) {
  const std::string fn = "one_hot";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "indices", idx_desc, indices));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  if (is_complex(idx_desc.dtype) || idx_desc.dtype == DType::kBool)
    return invalid_argument(fn + ": indices dtype " + dtn(idx_desc.dtype) + " must be an integer or float type");
  if (is_complex(y_desc.dtype)) return unsupported(fn + ": complex outputs are not supported");
  if (depth < 0) return invalid_argument(fn + ": depth " + to_string(depth) + " is negative");
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(fn, axis, idx_desc.rank() + 1));
  std::vector<i64> dims = idx_desc.dims;
  dims.insert(dims.begin() + a, depth);
  if (dims.size() > static_cast<std::size_t>(detail::kMaxTensorRank))
    return invalid_argument(fn + ": y's rank " + to_string(dims.size()) + " exceeds " + to_string(detail::kMaxTensorRank));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "y", y_desc, dims));
  TESSERA_RETURN_IF_ERROR(check_output(fn, y_desc, y, {{&idx_desc, indices}}, {"indices"}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "one_hot"));
  detail::log_move_bench(h, "one_hot", idx_desc, y_desc.dtype, [&] { return " --depth " + to_string(depth); });
  if (y_desc.numel() == 0) return Status::ok();
  return detail::run_first_accepting(h, "one_hot", kOneHotImpls, detail::OneHotCall{a, depth, off, on, idx_desc, indices, y_desc, y});
}

// ---- cumsum's entries: dense lines (rows or columns), then the reference -------------------------
namespace {

struct CumsumCall {
  int axis;
  bool exclusive, reverse;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& y;
  void* yp;
};

int cum_type(DType t) {
  return t == DType::kF32 ? mk::kCumF32 : t == DType::kF64 ? mk::kCumF64 : t == DType::kI32 ? mk::kCumI32 : mk::kCumI64;
}

template <Isa kNeeds>
Status cumsum_dense_accepts(const CumsumCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  const DType t = c.x.dtype;
  if (t != DType::kF32 && t != DType::kF64 && t != DType::kI32 && t != DType::kI64)
    return detail::refuse("dtype " + dtn(t) + " (f32, f64, i32 and i64 only)");
  if (c.x.rank() == 0) return detail::refuse("a scalar");
  if (!detail::same_dense_layout(c.x, c.y)) return detail::refuse("x and y are not packed alike");
  return Status::ok();
}

// Rows split over threads in runs; columns in units (outer index, a block of columns), one per
// thread where the slices are fewer: wide blocks keep each row's piece whole pages (blocks of
// 512 columns, 2 KiB of a 16 KiB row, ran 20% slower at 4096x4096). Each line's sum is the same
// whatever the split.
template <const mk::Kernels* kK>
Status cumsum_dense_run(Handle& h, const CumsumCall& c) {
  const detail::AxisSplit sp = detail::split_at_axis(c.x, c.axis);
  const int t = cum_type(c.x.dtype);
  const i64 e = static_cast<i64>(dtype_size(c.x.dtype));
  if (sp.inner == 1) {
    detail::parallel_for(h, 0, sp.outer, std::max<i64>(4, 16384 / std::max<i64>(1, sp.len)), [&](i64 l0, i64 l1) {
      kK->cumsum_rows[t](l1 - l0, sp.len, cbytes(c.xp, l0 * sp.len, e), bytes(c.yp, l0 * sp.len, e), c.exclusive,
                         c.reverse);
    });
    return Status::ok();
  }
  const i64 want = std::max(1, detail::max_threads(h));
  const i64 pieces = sp.outer >= want ? 1 : (want + sp.outer - 1) / sp.outer;
  const i64 block = std::max<i64>(64, (sp.inner / pieces + 63) / 64 * 64);
  const i64 per = (sp.inner + block - 1) / block;
  detail::parallel_for(h, 0, sp.outer * per, 1, [&](i64 u0, i64 u1) {
    for (i64 u = u0; u < u1; ++u) {
      const i64 o = u / per, c0 = (u % per) * block, at = o * sp.len * sp.inner + c0;
      kK->cumsum_cols[t](sp.len, sp.inner, std::min(sp.inner, c0 + block) - c0, cbytes(c.xp, at, e), bytes(c.yp, at, e),
                         c.exclusive, c.reverse);
    }
  });
  return Status::ok();
}

Status cumsum_ref(Handle& h, const CumsumCall& c) {
  const TensorDesc &x_desc = c.x, &y_desc = c.y;
  const void* x = c.xp;
  void* y = c.yp;
  const int a = c.axis;
  const bool exclusive = c.exclusive, reverse = c.reverse;
  const bool scalar = x_desc.rank() == 0;
  const i64 n = scalar ? 1 : x_desc.dims[z(a)], xa = scalar ? 0 : x_desc.strides[z(a)], ya = scalar ? 0 : y_desc.strides[z(a)];
  std::vector<i64> dims = x_desc.dims, xs = x_desc.strides, ys = y_desc.strides;
  if (!scalar) {
    dims.erase(dims.begin() + a);
    xs.erase(xs.begin() + a);
    ys.erase(ys.begin() + a);
  }
  const auto xo = box_offsets(dims, xs), yo = box_offsets(dims, ys);
  const DType t = x_desc.dtype;
  visit_compute(t, [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    detail::parallel_for(h, 0, static_cast<i64>(xo.size()), std::max<i64>(1, 16384 / n), [&](i64 l0, i64 l1) {
      for (i64 l = l0; l < l1; ++l) {
        Acc acc{};
        for (i64 s = 0; s < n; ++s) {
          const i64 j = reverse ? n - 1 - s : s;
          const Acc v = static_cast<Acc>(ld<T>(x, t, xo[z(l)] + j * xa));  // read before y's write (in place)
          if (!exclusive) acc = wrap_add(acc, v);
          if constexpr (std::is_floating_point_v<T>) {  // f64 to the dtype, rounded once
            detail::convert_element(DType::kF64, &acc, t, bytes(y, yo[z(l)] + j * ya, static_cast<i64>(dtype_size(t))));
          } else {
            st<T>(y, t, yo[z(l)] + j * ya, acc);
          }
          if (exclusive) acc = wrap_add(acc, v);
        }
      }
    });
  });
  return Status::ok();
}

constexpr detail::Impl<CumsumCall> kCumsumImpls[] = {
    {"cumsum_dense_avx512", &cumsum_dense_accepts<Isa::kAvx512>, &cumsum_dense_run<&mk::kAvx512>},
    {"cumsum_dense_avx2", &cumsum_dense_accepts<Isa::kAvx2>, &cumsum_dense_run<&mk::kAvx2>},
    {"cumsum_dense_generic", &cumsum_dense_accepts<Isa::kGeneric>, &cumsum_dense_run<&mk::kGeneric>},
    {"cumsum_ref", &detail::accepts_all<CumsumCall>, &cumsum_ref},
};

}  // namespace

Status cumsum(Handle& h, int axis, bool exclusive, bool reverse, const TensorDesc& x_desc, const void* x,
              const TensorDesc& y_desc, void* y) {
  const std::string fn = "cumsum";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x_desc, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "y", y_desc));
  if (x_desc.dtype == DType::kBool || is_complex(x_desc.dtype))
    return unsupported(fn + ": dtype " + dtn(x_desc.dtype) + " is not supported (integers and floats)");
  const int r = std::max(1, x_desc.rank());
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(fn, axis, r));
  TESSERA_RETURN_IF_ERROR(check_output(fn, y_desc, y, {{&x_desc, x}}, {"x"}, "x"));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "cumsum"));
  detail::log_move_bench(h, "cumsum", x_desc, x_desc.dtype, [&] { return " --axis " + to_string(a); });
  if (x_desc.numel() == 0) return Status::ok();
  const CumsumCall c{a, exclusive, reverse, x_desc, x, y_desc, y};
  return detail::run_first_accepting(h, "cumsum", kCumsumImpls, c);
}

namespace {

// Each line's elements sorted by partial_sort under the total order (ties by the lower index).
Status top_k_ref(Handle& h, const detail::TopKCall& c) {
  const TensorDesc &x_desc = c.x, &values_desc = c.values, &indices_desc = c.indices;
  const void* x = c.xp;
  void* values = c.vp;
  void* indices = c.ip;
  const int a = c.axis;
  const i64 k = c.k, n = x_desc.dims[z(a)];
  const bool largest = c.largest;
  std::vector<i64> od = x_desc.dims, xs = x_desc.strides, vs = values_desc.strides, is = indices_desc.strides;
  od.erase(od.begin() + a);
  xs.erase(xs.begin() + a);
  vs.erase(vs.begin() + a);
  is.erase(is.begin() + a);
  const auto xo = box_offsets(od, xs), vo = box_offsets(od, vs), io = box_offsets(od, is);
  const i64 xa = x_desc.strides[z(a)], va = values_desc.strides[z(a)], ia = indices_desc.strides[z(a)];
  const i64 e = static_cast<i64>(dtype_size(x_desc.dtype));
  const DType t = x_desc.dtype;
  visit_compute(t, [&](auto tag) {
    using T = decltype(tag);
    detail::parallel_for(h, 0, static_cast<i64>(xo.size()), std::max<i64>(1, 16384 / n), [&](i64 l0, i64 l1) {
      std::vector<T> v(z(n));
      std::vector<i64> order(z(n));
      for (i64 l = l0; l < l1; ++l) {
        for (i64 j = 0; j < n; ++j) v[z(j)] = ld<T>(x, t, xo[z(l)] + j * xa);
        std::iota(order.begin(), order.end(), 0);
        auto before = [&](i64 p, i64 q) {
          if (detail::top_before(v[z(p)], v[z(q)], largest)) return true;
          if (detail::top_before(v[z(q)], v[z(p)], largest)) return false;
          return p < q;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (i64 j = 0; j < k; ++j) {
          std::memcpy(bytes(values, vo[z(l)] + j * va, e), cbytes(x, xo[z(l)] + order[z(j)] * xa, e), static_cast<std::size_t>(e));
          static_cast<i64*>(indices)[io[z(l)] + j * ia] = order[z(j)];
        }
      }
    });
  });
  return Status::ok();
}

constexpr detail::Impl<TopKCall> kTopKImpls[] = {
    {"top_k_dense_avx512", &on_isa<TopKCall, &detail::top_k_dense_accepts, Isa::kAvx512>,
     &with_table<TopKCall, &detail::top_k_dense, &mk::kAvx512>},
    {"top_k_dense_avx2", &on_isa<TopKCall, &detail::top_k_dense_accepts, Isa::kAvx2>,
     &with_table<TopKCall, &detail::top_k_dense, &mk::kAvx2>},
    {"top_k_dense_generic", &on_isa<TopKCall, &detail::top_k_dense_accepts, Isa::kGeneric>,
     &with_table<TopKCall, &detail::top_k_dense, &mk::kGeneric>},
    {"top_k_ref", &detail::accepts_all<TopKCall>, &top_k_ref},
};

}  // namespace

Status top_k(Handle& h, int axis, i64 k, bool largest, const TensorDesc& x_desc, const void* x,
             const TensorDesc& values_desc, void* values, const TensorDesc& indices_desc, void* indices) {
  const std::string fn = "top_k";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "values", values_desc, values));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "indices", indices_desc, indices));
  if (x_desc.dtype == DType::kBool || is_complex(x_desc.dtype))
    return unsupported(fn + ": dtype " + dtn(x_desc.dtype) + " is not supported (integers and floats)");
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x_desc, "values", values_desc));
  if (indices_desc.dtype != DType::kI64) return invalid_argument(fn + ": indices dtype " + dtn(indices_desc.dtype) + " must be i64");
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(fn, axis, x_desc.rank()));
  const i64 n = x_desc.dims[z(a)];
  if (k < 0 || k > n) return invalid_argument(fn + ": k " + to_string(k) + " must be in [0, " + to_string(n) + "]");
  std::vector<i64> dims = x_desc.dims;
  dims[z(a)] = k;
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "values", values_desc, dims));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, "indices", indices_desc, dims));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "values", values_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "indices", indices_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "values", values_desc, values, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "indices", indices_desc, indices, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "indices", indices_desc, indices, "values", values_desc, values));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "top_k"));
  detail::log_move_bench(h, "top_k", x_desc, x_desc.dtype, [&] { return " --axis " + to_string(a) + " --k " + to_string(k); });
  if (values_desc.numel() == 0) return Status::ok();
  const detail::TopKCall c{a, k, largest, x_desc, x, values_desc, values, indices_desc, indices};
  return detail::run_first_accepting(h, "top_k", kTopKImpls, c);
}

}  // namespace tessera::dnn
