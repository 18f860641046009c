#include "nest.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "../../common.hpp"

namespace tessera::dnn::detail {

std::int64_t Nest::rows() const {
  std::int64_t r = 1;
  for (int i = 0; i + 1 < rank; ++i) r *= dims[static_cast<std::size_t>(i)];
  return r;
}

Nest make_nest(std::span<const std::int64_t> out, std::span<const TensorDesc* const> operands) {
  const int R = static_cast<int>(out.size());
  std::array<std::array<std::int64_t, kMaxNestRank>, kMaxOperands> aligned{};
  const std::int64_t* ptrs[kMaxOperands];
  for (std::size_t o = 0; o < operands.size(); ++o) {
    const TensorDesc& t = *operands[o];
    for (int i = 0; i < R; ++i) {
      const int j = i - (R - t.rank());
      const bool present = j >= 0 && t.dims[static_cast<std::size_t>(j)] != 1;
      aligned[o][static_cast<std::size_t>(i)] = present ? t.strides[static_cast<std::size_t>(j)] : 0;
    }
    ptrs[o] = aligned[o].data();
  }
  return make_nest(R, out.data(), std::span<const std::int64_t* const>(ptrs, operands.size()));
}

Nest make_nest(int R, const std::int64_t* dims, std::span<const std::int64_t* const> strides) {
  Nest n;
  n.operands = static_cast<int>(strides.size());
  // Drop dims of 1.
  for (int i = 0; i < R; ++i) {
    const std::int64_t d = dims[i];
    if (d == 1) continue;
    const auto k = static_cast<std::size_t>(n.rank++);
    n.dims[k] = d;
    for (int o = 0; o < n.operands; ++o)
      n.strides[static_cast<std::size_t>(o)][k] = strides[static_cast<std::size_t>(o)][i];
  }
  if (n.rank == 0) {  // a single element
    n.rank = 1;
    n.dims[0] = 1;
    for (int o = 0; o < n.operands; ++o) n.strides[static_cast<std::size_t>(o)][0] = 0;
    return n;
  }
  // Merge dim i into dim i + 1 (inner) where every operand steps through the pair as one.
  int w = 0;
  for (int i = 1; i < n.rank; ++i) {
    const auto a = static_cast<std::size_t>(w), b = static_cast<std::size_t>(i);
    bool merge = true;
    for (int o = 0; o < n.operands && merge; ++o) {
      const auto& s = n.strides[static_cast<std::size_t>(o)];
      merge = s[a] == s[b] * n.dims[b];
    }
    if (merge) {
      n.dims[a] *= n.dims[b];
      for (int o = 0; o < n.operands; ++o) {
        auto& s = n.strides[static_cast<std::size_t>(o)];
        s[a] = s[b];
      }
    } else {
      ++w;
      n.dims[static_cast<std::size_t>(w)] = n.dims[b];
      for (int o = 0; o < n.operands; ++o) {
        auto& s = n.strides[static_cast<std::size_t>(o)];
        s[static_cast<std::size_t>(w)] = s[b];
      }
    }
  }
  n.rank = w + 1;
  return n;
}

RowCursor::RowCursor(const Nest& n, std::int64_t row) : nest(n) {
  for (int i = n.rank - 2; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    index[k] = row % n.dims[k];
    row /= n.dims[k];
    for (int o = 0; o < n.operands; ++o)
      offset[static_cast<std::size_t>(o)] += index[k] * n.strides[static_cast<std::size_t>(o)][k];
  }
}

void RowCursor::next() {
  for (int i = nest.rank - 2; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    for (int o = 0; o < nest.operands; ++o)
      offset[static_cast<std::size_t>(o)] += nest.strides[static_cast<std::size_t>(o)][k];
    if (++index[k] < nest.dims[k]) return;
    for (int o = 0; o < nest.operands; ++o)
      offset[static_cast<std::size_t>(o)] -= index[k] * nest.strides[static_cast<std::size_t>(o)][k];
    index[k] = 0;
  }
}

std::vector<std::int64_t> box_offsets(std::span<const std::int64_t> dims, std::span<const std::int64_t> strides) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  std::vector<std::int64_t> idx(dims.size(), 0);
  std::int64_t off = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    out[static_cast<std::size_t>(e)] = off;
    for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      off += strides[k];
      if (++idx[k] < dims[k]) break;
      off -= idx[k] * strides[k];
      idx[k] = 0;
    }
  }
  return out;
}

Status check_tensor(const std::string& fn, const char* name, const TensorDesc& d, const void* p) {
  TESSERA_RETURN_IF_ERROR(check_desc(fn, name, d, 0, kMaxTensorRank));
  std::int64_t n = 1, span = 0;
  bool empty = false;
  for (int i = 0; i < d.rank(); ++i) {
    const std::int64_t di = d.dims[static_cast<std::size_t>(i)];
    std::int64_t ext = 0;
    empty = empty || di == 0;
    if (di > 0 && (__builtin_mul_overflow(n, di, &n) ||
                   __builtin_mul_overflow(di - 1, d.strides[static_cast<std::size_t>(i)], &ext) ||
                   __builtin_add_overflow(span, ext, &span)))
      return invalid_argument(fn + ": " + name + " dims [" + dims_string(d.dims) +
                              "] are too large (element count or extent overflows int64)");
  }
  if (!empty && (span >= (std::int64_t{1} << 62) / static_cast<std::int64_t>(dtype_size(d.dtype))))
    return invalid_argument(fn + ": " + name + " spans more bytes than memory can hold");
  return check_ptr(fn, name, p, !empty);
}

Status check_no_overlap(const std::string& fn, const char* out_name, const TensorDesc& out,
                        const void* outp, const char* in_name, const TensorDesc& in,
                        const void* inp) {
  if (out.numel() == 0 || in.numel() == 0 || outp == nullptr || inp == nullptr)
    return Status::ok();
  const auto o0 = reinterpret_cast<std::uintptr_t>(outp);
  const auto i0 = reinterpret_cast<std::uintptr_t>(inp);
  const auto o1 = o0 + static_cast<std::uintptr_t>(out.span()) * dtype_size(out.dtype);
  const auto i1 = i0 + static_cast<std::uintptr_t>(in.span()) * dtype_size(in.dtype);
  if (o1 <= i0 || i1 <= o0) return Status::ok();
  if (o0 == i0 && out.dims == in.dims && out.strides == in.strides &&
      dtype_size(out.dtype) == dtype_size(in.dtype))
    return Status::ok();
  return invalid_argument(fn + ": " + out_name + " overlaps " + in_name +
                          " without being the same tensor (only exact in-place use is allowed)");
}

Status check_disjoint(const std::string& fn, const char* out_name, const TensorDesc& out,
                      const void* outp, const char* in_name, const TensorDesc& in,
                      const void* inp) {
  if (out.numel() == 0 || in.numel() == 0 || outp == nullptr || inp == nullptr) return Status::ok();
  const auto o0 = reinterpret_cast<std::uintptr_t>(outp);
  const auto i0 = reinterpret_cast<std::uintptr_t>(inp);
  const auto o1 = o0 + static_cast<std::uintptr_t>(out.span()) * dtype_size(out.dtype);
  const auto i1 = i0 + static_cast<std::uintptr_t>(in.span()) * dtype_size(in.dtype);
  if (o1 <= i0 || i1 <= o0) return Status::ok();
  return invalid_argument(fn + ": " + out_name + " overlaps " + in_name + " (this operation cannot run in place)");
}

// Output elements must be distinct (no zero or interleaving strides along dims > 1).
Status check_distinct(const std::string& fn, const char* name, const TensorDesc& d) {
  std::vector<std::pair<std::int64_t, std::int64_t>> s;  // (stride, dim)
  for (int i = 0; i < d.rank(); ++i)
    if (d.dims[static_cast<std::size_t>(i)] > 1)
      s.emplace_back(d.strides[static_cast<std::size_t>(i)], d.dims[static_cast<std::size_t>(i)]);
  std::sort(s.begin(), s.end());
  std::int64_t extent = 1;  // elements spanned by the dims so far
  for (const auto& [stride, dim] : s) {
    if (stride < extent)
      return invalid_argument(fn + ": " + name + " strides [" + dims_string(d.strides) +
                              "] make elements overlap; an output needs distinct elements");
    extent = stride * (dim - 1) + extent;
  }
  return Status::ok();
}

}  // namespace tessera::dnn::detail
