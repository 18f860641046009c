// The loop nest of an elementwise operation over broadcast operands: the output's dims with
// each operand's element strides aligned to them (0 along broadcast dims), size-1 dims dropped
// and neighbouring dims merged wherever every operand steps through them as one. The tensor
// operations (elementwise and reductions) walk it row by row: a row is the innermost dim.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/status.hpp"
#include "tessera/dnn.hpp"

namespace tessera::dnn::detail {

constexpr int kMaxTensorRank = 16;  // rank limit of the tensor operations
constexpr int kMaxNestRank = 32;    // internal views (tile splits every dim in two)
constexpr int kMaxOperands = 6;  // elementwise chains: x, four operands, y

struct Nest {
  int rank = 0;  // >= 1 (a scalar is one dim of 1)
  int operands = 0;
  std::array<std::int64_t, kMaxNestRank> dims{};
  std::array<std::array<std::int64_t, kMaxNestRank>, kMaxOperands> strides{};
  std::int64_t inner() const { return dims[static_cast<std::size_t>(rank - 1)]; }
  std::int64_t rows() const;  // product of the outer dims
  std::int64_t inner_stride(int op) const {
    return strides[static_cast<std::size_t>(op)][static_cast<std::size_t>(rank - 1)];
  }
};

// `out` dims; each operand desc right-aligned to them (its dims equal or 1, or missing).
Nest make_nest(std::span<const std::int64_t> out, std::span<const TensorDesc* const> operands);
// `rank` <= kMaxNestRank dims with each operand's strides already aligned to them (any sign).
Nest make_nest(int rank, const std::int64_t* dims, std::span<const std::int64_t* const> strides);

// Element offsets of every operand at the start of row `row`, and stepping to the next row.
struct RowCursor {
  explicit RowCursor(const Nest& n, std::int64_t row);
  void next();
  const Nest& nest;
  std::array<std::int64_t, kMaxNestRank> index{};
  std::array<std::int64_t, kMaxOperands> offset{};
};

// Element offsets of every index of a box (dims with strides), walked row-major.
std::vector<std::int64_t> box_offsets(std::span<const std::int64_t> dims,
                                      std::span<const std::int64_t> strides);

// f16/bf16: stored in 16 bits, computed in f32 by the tensor operations.
inline bool is_half(DType t) { return t == DType::kF16 || t == DType::kBF16; }

// Checks shared by the tensor operations: a valid desc of rank <= kMaxTensorRank whose element
// count fits in int64 (and the pointer, unless empty).
Status check_tensor(const std::string& fn, const char* name, const TensorDesc& d, const void* p);
// An output's elements must be distinct (no zero or interleaving strides along dims > 1).
Status check_distinct(const std::string& fn, const char* name, const TensorDesc& d);
// The output must not overlap an input unless it is the same tensor (pointer, dims, strides,
// dtype size): in place.
Status check_no_overlap(const std::string& fn, const char* out_name, const TensorDesc& out,
                        const void* outp, const char* in_name, const TensorDesc& in,
                        const void* inp);

// The output must not share any memory with the input (operations that read other elements
// than the one they write, where even exact in-place use would read overwritten values).
Status check_disjoint(const std::string& fn, const char* out_name, const TensorDesc& out,
                      const void* outp, const char* in_name, const TensorDesc& in,
                      const void* inp);

}  // namespace tessera::dnn::detail
