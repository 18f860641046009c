// Entry points of the data-movement operations: argument checks, then each operation as one
// or more moves (move.hpp) between a view of its input and a view of its output:
// - cast and expand: x as it is (stride 0 along broadcast dims);
// - transpose: x's strides permuted; slice: x from its first element with steps as strides
//   (negative steps give negative strides); concat / split: one move per input / output,
//   into / out of the output's / input's part along the axis, or, for packed tensors cut
//   along an inner axis with short rows, one walk over the rows for all parts (parts.cpp);
// - tile: every dim split in (repeat, dim), x's stride 0 along the repeats;
// - depth_to_space / space_to_depth: [N, C, H, b, W, b] boxes, the block strides on one side
//   and the channel strides on the other;
// - pad (not a move): one pass over y's rows, each row's source row in x found from the
//   outer indices, its borders element by element and x's part copied whole.
#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../eltwise/nest.hpp"
#include "move.hpp"
#include "ref.hpp"

namespace tessera::dnn {
namespace {

using i64 = std::int64_t;
using detail::Move;
using std::to_string;

using detail::dtn;
std::size_t z(int i) { return static_cast<std::size_t>(i); }

// x and y valid, y's elements distinct, and y apart from x: exactly x allowed (in place) only
// for the elementwise ones (cast, expand), disjoint for the rest.
enum class InPlace { kExact, kNever };
Status check_pair(const std::string& fn, const TensorDesc& x, const void* xp, const TensorDesc& y,
                  const void* yp, InPlace in_place = InPlace::kNever, bool same_dtype = true) {
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x, xp));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y, yp));
  if (same_dtype) TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x, "y", y));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y));
  if (in_place == InPlace::kExact) return detail::check_no_overlap(fn, "y", y, yp, "x", x, xp);
  return detail::check_disjoint(fn, "y", y, yp, "x", x, xp);
}
Status check_out_dims(const std::string& fn, const TensorDesc& y, const std::vector<i64>& expect) {
  if (y.dims == expect) return Status::ok();
  return invalid_argument(fn + ": y dims [" + detail::dims_string(y.dims) + "] must be [" +
                          detail::dims_string(expect) + "]");
}
Result<int> norm_axis(const std::string& fn, int axis, int rank) {
  if (axis < -rank || axis >= rank)
    return invalid_argument(fn + ": axis " + to_string(axis) + " is out of range for rank " + to_string(rank));
  return axis < 0 ? axis + rank : axis;
}
Status begin(Handle& h, const char* fn) { return detail::begin_call(h, fn); }
Status move(Handle& h, const Move& m) { return detail::run_move(h, m); }

// "a<sep>b<sep>c".
std::string join(std::span<const int> v, char sep) {
  std::string s;
  for (int a : v) {
    if (!s.empty()) s += sep;
    s += to_string(a);
  }
  return s;
}

// ---- slice ------------------------------------------------------------------------------------
struct SlicePlan {
  std::vector<i64> dims;    // y's
  std::vector<i64> strides;  // x's, per y dim (negative for negative steps)
  i64 offset = 0;           // x's first element
};
Result<SlicePlan> plan_slice(const std::string& fn, const TensorDesc& x, std::span<const i64> starts,
                             std::span<const i64> ends, std::span<const int> axes,
                             std::span<const i64> steps) {
  const int r = x.rank();
  if (starts.size() != ends.size())
    return invalid_argument(fn + ": " + to_string(starts.size()) + " starts but " + to_string(ends.size()) + " ends");
  if (!axes.empty() && axes.size() != starts.size())
    return invalid_argument(fn + ": " + to_string(axes.size()) + " axes for " + to_string(starts.size()) + " starts");
  if (!steps.empty() && steps.size() != starts.size())
    return invalid_argument(fn + ": " + to_string(steps.size()) + " steps for " + to_string(starts.size()) + " starts");
  if (axes.empty() && starts.size() > static_cast<std::size_t>(r))
    return invalid_argument(fn + ": " + to_string(starts.size()) + " starts for rank " + to_string(r));
  SlicePlan p;
  p.dims = x.dims;
  p.strides = x.strides;
  std::vector<bool> seen(z(r), false);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    int a = static_cast<int>(i);
    if (!axes.empty()) {
      TESSERA_ASSIGN_OR_RETURN(a, norm_axis(fn, axes[i], r));
    }
    if (seen[z(a)]) return invalid_argument(fn + ": axis " + to_string(a) + " is sliced twice");
    seen[z(a)] = true;
    const i64 t = steps.empty() ? 1 : steps[i];
    if (t == 0) return invalid_argument(fn + ": step of axis " + to_string(a) + " is 0");
    const i64 d = x.dims[z(a)];
    i64 s = starts[i], e = ends[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    i64 count = 0;
    if (t > 0) {
      s = std::clamp<i64>(s, 0, d);
      e = std::clamp<i64>(e, 0, d);
      count = e > s ? (e - s - 1) / t + 1 : 0;
    } else if (d > 0) {
      s = std::clamp<i64>(s, 0, d - 1);
      e = std::clamp<i64>(e, -1, d - 1);
      const auto step = static_cast<std::uint64_t>(-(t + 1)) + 1;  // |t|, also for INT64_MIN
      count = s > e ? static_cast<i64>(static_cast<std::uint64_t>(s - e - 1) / step) + 1 : 0;
    }
    p.dims[z(a)] = count;
    if (count > 0) p.offset += s * x.strides[z(a)];
    p.strides[z(a)] = count > 1 ? t * x.strides[z(a)] : 0;  // |t| < d here: no overflow
  }
  return p;
}


// ---- pad ---------------------------------------------------------------------------------------
struct PadDim {
  i64 out;    // y's extent
  i64 inner;  // x's elements kept (after negative pads)
  i64 begin;  // y index of the first of them
  i64 crop;   // x index of the first of them
};
struct PadCall {
  PadMode mode;
  std::vector<PadDim> dims;
  const std::vector<i64>& xs;
  const std::vector<i64>& ys;
  const void* x;
  void* y;
  alignas(8) unsigned char fill[8];
};
// x's index along a dim for y's index j, or -1 where the constant goes.
i64 pad_source(PadMode mode, const PadDim& d, i64 j) {
  i64 t = j - d.begin;
  if (t < 0 || t >= d.inner) {
    switch (mode) {
      case PadMode::kConstant: return -1;
      case PadMode::kEdge: t = std::clamp<i64>(t, 0, d.inner - 1); break;
      case PadMode::kReflect: t = t < 0 ? -t : 2 * (d.inner - 1) - t; break;
      case PadMode::kWrap: t = (t % d.inner + d.inner) % d.inner; break;
    }
  }
  return d.crop + t;
}

// One pass over y's rows (its last dim), each written once: the row's source row in x from
// the outer indices (or the constant), then the row's left border, x's elements, right border.
template <typename E>
void pad_rows(Handle& h, const PadCall& c) {
  const int r = static_cast<int>(c.dims.size());
  if (r == 0) {
    std::memcpy(c.y, c.x, sizeof(E));
    return;
  }
  const PadDim& last = c.dims.back();
  const i64 L = last.out, xsl = c.xs.back(), ysl = c.ys.back();
  i64 rows = 1;
  for (int i = 0; i + 1 < r; ++i) rows *= c.dims[z(i)].out;
  E fill;
  std::memcpy(&fill, c.fill, sizeof(E));
  const E* x = static_cast<const E*>(c.x);
  E* y = static_cast<E*>(c.y);
  detail::parallel_for(h, 0, rows, std::max<i64>(1, 65536 / std::max<i64>(1, L)), [&](i64 r0, i64 r1) {
    std::vector<i64> idx(z(r), 0);
    for (i64 q = r0, i = r - 2; i >= 0; --i) {
      idx[z(static_cast<int>(i))] = q % c.dims[z(static_cast<int>(i))].out;
      q /= c.dims[z(static_cast<int>(i))].out;
    }
    for (i64 row = r0; row < r1; ++row) {
      i64 xo = 0, yo = 0;
      bool constant = false;
      for (int i = 0; i + 1 < r; ++i) {
        const i64 s = pad_source(c.mode, c.dims[z(i)], idx[z(i)]);
        constant = constant || s < 0;
        xo += s * c.xs[z(i)];
        yo += idx[z(i)] * c.ys[z(i)];
      }
      E* yr = y + yo;
      if (constant) {
        for (i64 j = 0; j < L; ++j) yr[j * ysl] = fill;
      } else {
        const E* xr = x + xo;
        const i64 mid0 = last.begin, mid1 = last.begin + last.inner;
        for (i64 j = 0; j < mid0; ++j) {
          const i64 s = pad_source(c.mode, last, j);
          yr[j * ysl] = s < 0 ? fill : xr[s * xsl];
        }
        if (xsl == 1 && ysl == 1) {
          std::memcpy(yr + mid0, xr + last.crop, static_cast<std::size_t>(last.inner) * sizeof(E));
        } else {
          for (i64 j = mid0; j < mid1; ++j) yr[j * ysl] = xr[(last.crop + j - mid0) * xsl];
        }
        for (i64 j = mid1; j < L; ++j) {
          const i64 s = pad_source(c.mode, last, j);
          yr[j * ysl] = s < 0 ? fill : xr[s * xsl];
        }
      }
      for (int i = r - 2; i >= 0; --i) {  // the next row
        if (++idx[z(i)] < c.dims[z(i)].out) break;
        idx[z(i)] = 0;
      }
    }
  });
}

// A validated pad call, as the ordered list's entries take it.
struct PadProblem {
  PadMode mode;
  std::span<const i64> pads;
  double value;
  const TensorDesc& x_desc;
  const void* x;
  const TensorDesc& y_desc;
  void* y;
};
Status pad_by_rows(Handle& h, const PadProblem& q) {
  const int r = q.x_desc.rank();
  PadCall c{q.mode, {}, q.x_desc.strides, q.y_desc.strides, q.x, q.y, {}};
  for (int i = 0; i < r; ++i) {
    const i64 pb = q.pads[z(i)], pe = q.pads[z(i + r)];
    const i64 crop = std::max<i64>(0, -pb);
    c.dims.push_back({q.y_desc.dims[z(i)], q.x_desc.dims[z(i)] - crop - std::max<i64>(0, -pe), std::max<i64>(0, pb), crop});
  }
  detail::convert_element(DType::kF64, &q.value, q.y_desc.dtype, c.fill);
  switch (dtype_size(q.y_desc.dtype)) {
    case 1: pad_rows<std::uint8_t>(h, c); break;
    case 2: pad_rows<std::uint16_t>(h, c); break;
    case 4: pad_rows<std::uint32_t>(h, c); break;
    default: pad_rows<std::uint64_t>(h, c); break;
  }
  return Status::ok();
}
Status pad_reference(Handle&, const PadProblem& q) {
  ref::pad(q.mode, q.pads, q.value, q.x_desc, q.x, q.y_desc, q.y);
  return Status::ok();
}
// Ordered list: the row pass takes every problem; the reference (ref.cpp) is last.
constexpr detail::Impl<PadProblem> kPadImpls[] = {
    {"pad_rows", detail::accepts_all<PadProblem>, &pad_by_rows},
    {"pad_ref", detail::accepts_all<PadProblem>, &pad_reference},
};

// concat / split: every part of `whole`'s rank and dims off the axis, their dims along it adding
// up to whole's. Returns the normalised axis.
Result<int> check_parts(const std::string& fn, int axis, const TensorDesc& whole, const char* whole_name,
                        std::span<const TensorDesc> parts, std::size_t n_ptrs, const char* part_name) {
  if (parts.empty() || parts.size() != n_ptrs)
    return invalid_argument(fn + ": " + to_string(parts.size()) + " " + part_name + " descs and " + to_string(n_ptrs) +
                            " pointers (at least one)");
  TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(fn, axis, whole.rank()));
  i64 along = 0;
  for (std::size_t i = 0; i < parts.size() && along <= whole.dims[z(a)]; ++i) {
    const TensorDesc& d = parts[i];
    const std::string name = std::string(part_name) + "[" + to_string(i) + "]";
    TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, name.c_str(), d, whole_name, whole));
    bool fits = d.rank() == whole.rank();
    for (int k = 0; fits && k < d.rank(); ++k) fits = k == a || d.dims[z(k)] == whole.dims[z(k)];
    if (!fits)
      return invalid_argument(fn + ": " + name + " dims [" + detail::dims_string(d.dims) + "] differ from " + whole_name +
                              " dims [" + detail::dims_string(whole.dims) + "] off axis " + to_string(a));
    along += d.dims[z(a)];
  }
  if (along != whole.dims[z(a)])
    return invalid_argument(fn + ": the " + part_name + " dims along axis " + to_string(a) + " add up to " +
                            (along > whole.dims[z(a)] ? "more than" : to_string(along) + ", not") + " " + whole_name + "'s " +
                            to_string(whole.dims[z(a)]));
  return a;
}
// A packed row-major whole cut along axis a > 0 into packed parts, with rows (from the axis
// in) of at most kPartsRowBytes: one walk (run_parts) instead of a move per part. Fills all of
// p but the pointers, or returns false.
bool as_parts(int a, const TensorDesc& whole, std::span<const TensorDesc> parts, detail::Parts& p) {
  if (a == 0 || whole.numel() == 0 || !whole.is_packed(Layout::kNCHW)) return false;
  i64 outer = 1, inner = 1;
  for (int k = 0; k < a; ++k) outer *= whole.dims[z(k)];
  for (int k = a + 1; k < whole.rank(); ++k) inner *= whole.dims[z(k)];
  p.elem = static_cast<i64>(dtype_size(whole.dtype));
  if (outer < 2 || whole.dims[z(a)] * inner * p.elem > detail::kPartsRowBytes) return false;
  for (const TensorDesc& d : parts) {
    if (!d.is_packed(Layout::kNCHW)) return false;
    p.widths.push_back(d.dims[z(a)] * inner);
  }
  p.outer = outer;
  return true;
}

// Part i of `whole` along axis a as a view: each part's move goes between it and the part.
template <typename P>
void for_each_part(const TensorDesc& whole, P* base, int a, std::span<const TensorDesc> parts,
                   const std::function<void(std::size_t, const TensorDesc&, P*)>& fn) {
  i64 at = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    TensorDesc part = whole;
    part.dims[z(a)] = parts[i].dims[z(a)];
    if (part.numel() > 0) fn(i, part, detail::at_elem(base, whole.dtype, at * whole.strides[z(a)]));
    at += part.dims[z(a)];
  }
}

}  // namespace

Status cast(Handle& h, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y) {
  const std::string fn = "cast";
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y, InPlace::kExact, false));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "y", y_desc));
  if (is_complex(x_desc.dtype) || is_complex(y_desc.dtype))
    return unsupported(fn + ": complex dtypes are not supported (" + dtn(x_desc.dtype) + " to " + dtn(y_desc.dtype) + ")");
  TESSERA_RETURN_IF_ERROR(begin(h, "cast"));
  detail::log_move_bench(h, "cast", x_desc, x_desc.dtype, [&] { return " --to " + dtn(y_desc.dtype); });
  return move(h, Move::of(x_desc, x, y_desc, y));
}

Status expand(Handle& h, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y) {
  const std::string fn = "expand";
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y, InPlace::kExact));
  TESSERA_ASSIGN_OR_RETURN(auto dims, broadcast_dims(x_desc.dims, y_desc.dims));
  if (dims != y_desc.dims || x_desc.rank() > y_desc.rank())
    return invalid_argument(fn + ": x dims [" + detail::dims_string(x_desc.dims) +
                            "] do not broadcast to y dims [" + detail::dims_string(y_desc.dims) + "]");
  TensorDesc xa = y_desc;  // x right-aligned to y's rank
  xa.dtype = x_desc.dtype;
  const int off = y_desc.rank() - x_desc.rank();
  for (int i = 0; i < y_desc.rank(); ++i) {
    xa.dims[z(i)] = i < off ? 1 : x_desc.dims[z(i - off)];
    xa.strides[z(i)] = i < off ? 0 : x_desc.strides[z(i - off)];
  }
  TESSERA_RETURN_IF_ERROR(begin(h, "expand"));
  return move(h, Move::of(xa, x, y_desc, y));
}

Result<TensorDesc> reshape_view(const TensorDesc& x, std::span<const i64> shape, bool allow_zero) {
  const std::string fn = "reshape_view";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x, reinterpret_cast<const void*>(1)));
  if (shape.size() > static_cast<std::size_t>(detail::kMaxTensorRank))
    return invalid_argument(fn + ": rank " + to_string(shape.size()) + " exceeds " + to_string(detail::kMaxTensorRank));
  std::vector<i64> nd(shape.begin(), shape.end());
  int infer = -1;
  bool has_zero = false;
  i64 known = 1;
  for (int i = 0; i < static_cast<int>(nd.size()); ++i) {
    i64& d = nd[z(i)];
    if (d == 0 && !allow_zero) {
      if (i >= x.rank())
        return invalid_argument(fn + ": shape entry " + to_string(i) + " is 0 (copy x's dim) but x has rank " + to_string(x.rank()));
      d = x.dims[z(i)];
    }
    if (d == -1) {
      if (infer >= 0) return invalid_argument(fn + ": more than one -1 in the shape");
      infer = i;
      continue;
    }
    if (d < 0) return invalid_argument(fn + ": shape entry " + to_string(i) + " is " + to_string(d));
    has_zero = has_zero || d == 0;
    if (__builtin_mul_overflow(known, d, &known)) return invalid_argument(fn + ": the shape's element count overflows");
  }
  const i64 total = x.numel();
  if (infer >= 0) {
    if (allow_zero && has_zero) return invalid_argument(fn + ": -1 with a 0 entry under allow_zero is ambiguous");
    if (known == 0 || total % known != 0)
      return invalid_argument(fn + ": cannot infer the -1 entry: " + to_string(total) + " elements do not divide by " + to_string(known));
    nd[z(infer)] = total / known;
    known = total;
  }
  if (known != total)
    return invalid_argument(fn + ": shape [" + detail::dims_string(nd) + "] has " + to_string(known) +
                            " elements, x [" + detail::dims_string(x.dims) + "] has " + to_string(total));
  TensorDesc y = TensorDesc::make(x.dtype, nd);
  if (total == 0) return y;
  // Group x's dims (those > 1) and the new dims into runs of equal products; each run of x's
  // must be one contiguous chain, and the new dims of the run split it.
  std::vector<i64> od, os;
  for (int i = 0; i < x.rank(); ++i)
    if (x.dims[z(i)] != 1) {
      od.push_back(x.dims[z(i)]);
      os.push_back(x.strides[z(i)]);
    }
  const int nn = static_cast<int>(nd.size()), no = static_cast<int>(od.size());
  int ni = 0, oi = 0;
  while (ni < nn && oi < no) {
    i64 np = nd[z(ni)], op = od[z(oi)];
    int nj = ni + 1, oj = oi + 1;
    while (np != op) {
      if (np < op) np *= nd[z(nj++)];
      else op *= od[z(oj++)];
    }
    for (int k = oi; k + 1 < oj; ++k)
      if (os[z(k)] != os[z(k + 1)] * od[z(k + 1)])
        return invalid_argument(fn + ": x's strides [" + detail::dims_string(x.strides) + "] cannot be viewed as [" +
                                detail::dims_string(nd) + "] (the dims merged are not contiguous); cast into a packed tensor first");
    y.strides[z(nj - 1)] = os[z(oj - 1)];
    for (int k = nj - 1; k > ni; --k) y.strides[z(k - 1)] = y.strides[z(k)] * nd[z(k)];
    ni = nj;
    oi = oj;
  }
  return y;
}

Status transpose(Handle& h, std::span<const int> perm, const TensorDesc& x_desc, const void* x,
                 const TensorDesc& y_desc, void* y) {
  const std::string fn = "transpose";
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y));
  const int r = x_desc.rank();
  std::vector<int> p(perm.begin(), perm.end());
  if (p.empty())
    for (int i = r - 1; i >= 0; --i) p.push_back(i);
  std::vector<bool> seen(z(r), false);
  bool ok = static_cast<int>(p.size()) == r;
  for (int i = 0; ok && i < r; ++i) {
    ok = p[z(i)] >= 0 && p[z(i)] < r && !seen[z(p[z(i)])];
    if (ok) seen[z(p[z(i)])] = true;
  }
  if (!ok) return invalid_argument(fn + ": perm [" + join(perm, ',') + "] is not a permutation of 0.." + to_string(r - 1));
  std::vector<i64> dims(z(r));
  TensorDesc xv = x_desc;
  for (int i = 0; i < r; ++i) {
    dims[z(i)] = x_desc.dims[z(p[z(i)])];
    xv.dims[z(i)] = dims[z(i)];
    xv.strides[z(i)] = x_desc.strides[z(p[z(i)])];
  }
  TESSERA_RETURN_IF_ERROR(check_out_dims(fn, y_desc, dims));
  TESSERA_RETURN_IF_ERROR(begin(h, "transpose"));
  detail::log_move_bench(h, "transpose", x_desc, x_desc.dtype, [&] { return " --perm " + join(p, 'x'); });
  return move(h, Move::of(xv, x, y_desc, y));
}

Result<TensorDesc> slice_output_desc(const TensorDesc& x, std::span<const i64> starts,
                                     std::span<const i64> ends, std::span<const int> axes,
                                     std::span<const i64> steps) {
  TESSERA_RETURN_IF_ERROR(detail::check_desc("slice", "x", x, 0, detail::kMaxTensorRank));
  TESSERA_ASSIGN_OR_RETURN(SlicePlan p, plan_slice("slice", x, starts, ends, axes, steps));
  return TensorDesc::make(x.dtype, p.dims);
}

Status slice(Handle& h, std::span<const i64> starts, std::span<const i64> ends, std::span<const int> axes,
             std::span<const i64> steps, const TensorDesc& x_desc, const void* x,
             const TensorDesc& y_desc, void* y) {
  const std::string fn = "slice";
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y));
  TESSERA_ASSIGN_OR_RETURN(SlicePlan p, plan_slice(fn, x_desc, starts, ends, axes, steps));
  TESSERA_RETURN_IF_ERROR(check_out_dims(fn, y_desc, p.dims));
  TESSERA_RETURN_IF_ERROR(begin(h, "slice"));
  Move m;
  m.xt = x_desc.dtype;
  m.yt = y_desc.dtype;
  m.x = detail::at_elem(x, x_desc.dtype, p.offset);
  m.y = y;
  for (int i = 0; i < y_desc.rank(); ++i) m.add(p.dims[z(i)], p.strides[z(i)], y_desc.strides[z(i)]);
  return move(h, m);
}

Status concat(Handle& h, int axis, std::span<const TensorDesc> x_descs, std::span<const void* const> xs,
              const TensorDesc& y_desc, void* y) {
  const std::string fn = "concat";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y_desc));
  for (std::size_t i = 0; i < std::min(x_descs.size(), xs.size()); ++i)
    TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, ("x[" + to_string(i) + "]").c_str(), x_descs[i], xs[i]));
  TESSERA_ASSIGN_OR_RETURN(const int a, check_parts(fn, axis, y_desc, "y", x_descs, xs.size(), "x"));
  for (std::size_t i = 0; i < xs.size(); ++i)
    TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "y", y_desc, y, ("x[" + to_string(i) + "]").c_str(), x_descs[i], xs[i]));
  TESSERA_RETURN_IF_ERROR(begin(h, "concat"));
  if (detail::Parts p; as_parts(a, y_desc, x_descs, p)) {
    for (const void* x : xs) p.src.push_back(static_cast<const unsigned char*>(x));
    p.dst.push_back(static_cast<unsigned char*>(y));
    return detail::run_parts(h, p);
  }
  Status st = Status::ok();
  for_each_part<void>(y_desc, y, a, x_descs, [&](std::size_t i, const TensorDesc& part, void* at) {
    if (st.is_ok()) st = move(h, Move::of(x_descs[i], xs[i], part, at));
  });
  return st;
}

Status split(Handle& h, int axis, const TensorDesc& x_desc, const void* x, std::span<const TensorDesc> y_descs,
             std::span<void* const> ys) {
  const std::string fn = "split";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  for (std::size_t i = 0; i < std::min(y_descs.size(), ys.size()); ++i) {
    const std::string name = "y[" + to_string(i) + "]";
    TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, name.c_str(), y_descs[i], ys[i]));
    TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, name.c_str(), y_descs[i]));
  }
  TESSERA_ASSIGN_OR_RETURN(const int a, check_parts(fn, axis, x_desc, "x", y_descs, ys.size(), "y"));
  for (std::size_t i = 0; i < ys.size(); ++i) {
    const std::string name = "y[" + to_string(i) + "]";
    TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, name.c_str(), y_descs[i], ys[i], "x", x_desc, x));
    for (std::size_t j = 0; j < i; ++j)
      TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, name.c_str(), y_descs[i], ys[i], ("y[" + to_string(j) + "]").c_str(), y_descs[j], ys[j]));
  }
  TESSERA_RETURN_IF_ERROR(begin(h, "split"));
  if (detail::Parts p; as_parts(a, x_desc, y_descs, p)) {
    p.join = false;
    p.src.push_back(static_cast<const unsigned char*>(x));
    for (void* y : ys) p.dst.push_back(static_cast<unsigned char*>(y));
    return detail::run_parts(h, p);
  }
  Status st = Status::ok();
  for_each_part<const void>(x_desc, x, a, y_descs, [&](std::size_t i, const TensorDesc& part, const void* at) {
    if (st.is_ok()) st = move(h, Move::of(part, at, y_descs[i], ys[i]));
  });
  return st;
}

Status pad(Handle& h, PadMode mode, std::span<const i64> pads, double value, const TensorDesc& x_desc,
           const void* x, const TensorDesc& y_desc, void* y) {
  const std::string fn = "pad " + std::string(pad_mode_name(mode));
  if (pad_mode_name(mode).empty()) return invalid_argument("pad: unknown mode " + to_string(static_cast<int>(mode)));
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y));
  const int r = x_desc.rank();
  if (pads.size() != z(2 * r))
    return invalid_argument(fn + ": " + to_string(pads.size()) + " pads for rank " + to_string(r) + " (need " + to_string(2 * r) + ")");
  std::vector<i64> dims(z(r)), inner(z(r)), b(z(r)), e(z(r));
  for (int i = 0; i < r; ++i) {
    const i64 d = x_desc.dims[z(i)], pb = pads[z(i)], pe = pads[z(i + r)];
    i64 out = 0;
    if (__builtin_add_overflow(d, pb, &out) || __builtin_add_overflow(out, pe, &out) || out < 0)
      return invalid_argument(fn + ": dim " + to_string(i) + " of " + to_string(d) + " padded by " + to_string(pb) + " and " +
                              to_string(pe) + " is negative or overflows");
    dims[z(i)] = out;
    const i64 cut = std::max<i64>(0, -pb) + std::max<i64>(0, -pe);
    if (cut > d) return invalid_argument(fn + ": the negative pads of dim " + to_string(i) + " remove more than its " + to_string(d) + " elements");
    inner[z(i)] = d - cut;
    b[z(i)] = std::max<i64>(0, pb);
    e[z(i)] = std::max<i64>(0, pe);
    const i64 most = std::max(b[z(i)], e[z(i)]);
    const bool bad = most > 0 && (mode == PadMode::kEdge ? inner[z(i)] < 1
                                  : mode == PadMode::kReflect ? most > inner[z(i)] - 1
                                  : mode == PadMode::kWrap ? most > inner[z(i)] : false);
    if (bad)
      return invalid_argument(fn + ": pads " + to_string(b[z(i)]) + " and " + to_string(e[z(i)]) + " of dim " + to_string(i) +
                              " need " + (mode == PadMode::kEdge ? "a non-empty dim" : mode == PadMode::kReflect ? "pads <= dim - 1" : "pads <= dim") +
                              " (" + to_string(inner[z(i)]) + " elements)");
  }
  TESSERA_RETURN_IF_ERROR(check_out_dims(fn, y_desc, dims));
  TESSERA_RETURN_IF_ERROR(begin(h, "pad"));
  detail::log_move_bench(h, "pad", x_desc, x_desc.dtype, [&] { return " --mode " + std::string(pad_mode_name(mode)); });
  if (y_desc.numel() == 0) return Status::ok();
  const PadProblem q{mode, pads, value, x_desc, x, y_desc, y};
  try {
    return detail::select_impl<PadProblem>("pad", kPadImpls, q).run(h, q);
  } catch (const std::bad_alloc&) {
    return out_of_memory(fn + ": out of memory");
  }
}

Status tile(Handle& h, std::span<const i64> repeats, const TensorDesc& x_desc, const void* x,
            const TensorDesc& y_desc, void* y) {
  const std::string fn = "tile";
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y));
  const int r = x_desc.rank();
  if (repeats.size() != z(r))
    return invalid_argument(fn + ": " + to_string(repeats.size()) + " repeats for rank " + to_string(r));
  std::vector<i64> dims(z(r));
  for (int i = 0; i < r; ++i) {
    if (repeats[z(i)] < 0 || __builtin_mul_overflow(x_desc.dims[z(i)], repeats[z(i)], &dims[z(i)]))
      return invalid_argument(fn + ": repeat " + to_string(repeats[z(i)]) + " of dim " + to_string(i) +
                              " is negative or overflows");
  }
  TESSERA_RETURN_IF_ERROR(check_out_dims(fn, y_desc, dims));
  TESSERA_RETURN_IF_ERROR(begin(h, "tile"));
  Move m;
  m.xt = m.yt = x_desc.dtype;
  m.x = x;
  m.y = y;
  for (int i = 0; i < r; ++i) {
    const auto k = z(i);
    m.add(repeats[k], 0, x_desc.dims[k] * y_desc.strides[k]);
    m.add(x_desc.dims[k], x_desc.strides[k], y_desc.strides[k]);
  }
  return move(h, m);
}

Status depth_to_space(Handle& h, i64 block, bool crd, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& y_desc, void* y) {
  const std::string fn = "depth_to_space";
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y));
  if (x_desc.rank() != 4) return invalid_argument(fn + ": x must be [N, C, H, W], got rank " + to_string(x_desc.rank()));
  const i64 bb = block * block;
  if (block < 1 || block > (1 << 15) || x_desc.dims[1] % bb != 0)
    return invalid_argument(fn + ": block " + to_string(block) + " must be >= 1 with block^2 dividing C = " + to_string(x_desc.dims[1]));
  const i64 N = x_desc.dims[0], C = x_desc.dims[1] / bb, H = x_desc.dims[2], W = x_desc.dims[3];
  i64 hb = 0, wb = 0;
  if (__builtin_mul_overflow(H, block, &hb) || __builtin_mul_overflow(W, block, &wb))
    return invalid_argument(fn + ": the output's spatial dims overflow");
  TESSERA_RETURN_IF_ERROR(check_out_dims(fn, y_desc, {N, C, hb, wb}));
  TESSERA_RETURN_IF_ERROR(begin(h, "depth_to_space"));
  const auto& xs = x_desc.strides;
  const auto& ys = y_desc.strides;
  Move m;
  m.xt = m.yt = x_desc.dtype;
  m.x = x;
  m.y = y;
  m.add(N, xs[0], ys[0]).add(C, crd ? bb * xs[1] : xs[1], ys[1]).add(H, xs[2], block * ys[2]);
  m.add(block, crd ? block * xs[1] : block * C * xs[1], ys[2]).add(W, xs[3], block * ys[3]);
  m.add(block, crd ? xs[1] : C * xs[1], ys[3]);
  return move(h, m);
}

Status space_to_depth(Handle& h, i64 block, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                      void* y) {
  const std::string fn = "space_to_depth";
  TESSERA_RETURN_IF_ERROR(check_pair(fn, x_desc, x, y_desc, y));
  if (x_desc.rank() != 4) return invalid_argument(fn + ": x must be [N, C, H, W], got rank " + to_string(x_desc.rank()));
  if (block < 1 || block > (1 << 15) || x_desc.dims[2] % block != 0 || x_desc.dims[3] % block != 0)
    return invalid_argument(fn + ": block " + to_string(block) + " must be >= 1 and divide H = " +
                            to_string(x_desc.dims[2]) + " and W = " + to_string(x_desc.dims[3]));
  const i64 N = x_desc.dims[0], C = x_desc.dims[1], H = x_desc.dims[2] / block, W = x_desc.dims[3] / block;
  i64 cb = 0;
  if (__builtin_mul_overflow(C, block * block, &cb)) return invalid_argument(fn + ": the output's channels overflow");
  TESSERA_RETURN_IF_ERROR(check_out_dims(fn, y_desc, {N, cb, H, W}));
  TESSERA_RETURN_IF_ERROR(begin(h, "space_to_depth"));
  const auto& xs = x_desc.strides;
  const auto& ys = y_desc.strides;
  Move m;
  m.xt = m.yt = x_desc.dtype;
  m.x = x;
  m.y = y;
  m.add(N, xs[0], ys[0]).add(C, xs[1], ys[1]).add(H, block * xs[2], ys[2]);
  m.add(block, xs[2], block * C * ys[1]).add(W, block * xs[3], ys[3]).add(block, xs[3], C * ys[1]);
  return move(h, m);
}

}  // namespace tessera::dnn
