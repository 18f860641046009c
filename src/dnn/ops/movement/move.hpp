// The one problem every data-movement operation reduces to (ops.cpp builds it from views):
// y[i] = cast(x[i]) for every index i of a box of up to kMaxNestRank dims, x and y each
// addressed through their own element strides from a base pointer. Strides may be negative
// (reversed slices, reflections) and x's may be 0 (broadcast); y's elements are distinct and
// do not overlap x's unless exactly (in place, same element size).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../eltwise/nest.hpp"
#include "tessera/dnn.hpp"

namespace tessera::dnn::detail {

struct Move {
  int rank = 0;
  std::array<std::int64_t, kMaxNestRank> dims{}, xs{}, ys{};
  DType xt = DType::kF32, yt = DType::kF32;
  const void* x = nullptr;  // element 0 of the box
  void* y = nullptr;

  // x and y of equal rank: the box is y's dims (x's may be 1 where it broadcasts).
  static Move of(const TensorDesc& xd, const void* xp, const TensorDesc& yd, void* yp);
  // Appends a dim; returns *this.
  Move& add(std::int64_t dim, std::int64_t x_stride, std::int64_t y_stride);
  std::int64_t numel() const;
};

// Concat (`join`) or split of packed row-major tensors along an axis, seen as `outer` rows:
// the whole's row is the parts' rows (widths[i] elements of `elem` bytes) back to back. src
// holds the parts and dst the whole for a concat, the other way round for a split. Taken
// where the whole's row is at most kPartsRowBytes.
struct Parts {
  bool join = true;
  std::int64_t elem = 4, outer = 0;
  std::vector<std::int64_t> widths;
  std::vector<const unsigned char*> src;
  std::vector<unsigned char*> dst;
};
constexpr std::int64_t kPartsRowBytes = 16384;
Status run_parts(Handle& h, const Parts& p);

// Runs the first implementation of the move list that accepts m (the fast walks on each ISA,
// then the element-by-element reference).
Status run_move(Handle& h, const Move& m);

// The reference alone (one element at a time in index order), for tests.
void move_reference(const Move& m);

// One element by cast's rules (convert.inc); the pointers address single elements.
void convert_element(DType from, const void* src, DType to, void* dst);

// The `tessera bench dnn move` replay line of a call under TESSERA_LOG=bench: --dims from
// `dims`, then extra() (the op's own flags, built only when the log is on), then the dtype.
template <typename Extra>
void log_move_bench(const Handle& h, const char* op, const TensorDesc& dims, DType dtype, Extra&& extra) {
  TESSERA_VLOG(kBench) << "tessera bench dnn move --op " << op << " --dims " << dims_x(dims) << extra()
                       << " --dtype " << dtype_name(dtype) << " --threads " << max_threads(h);
}

// A dtype's name for error messages ("f32").
inline std::string dtn(DType t) { return std::string(dtype_name(t)); }

// Byte address of element `off` of a tensor of dtype t at p.
inline const void* at_elem(const void* p, DType t, std::int64_t off) {
  return static_cast<const char*>(p) + off * static_cast<std::int64_t>(dtype_size(t));
}
inline void* at_elem(void* p, DType t, std::int64_t off) {
  return static_cast<char*>(p) + off * static_cast<std::int64_t>(dtype_size(t));
}

}  // namespace tessera::dnn::detail
