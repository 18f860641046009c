// Helpers shared by the activation and softmax fast paths: layout predicates, work
// splitting, the ISA gate of the ordered lists and replay-line pieces. A "dense" tensor covers
// the elements [0, numel) of its storage exactly once (a packed layout in some dim order:
// NCHW, NHWC or any other permutation), so elementwise work can treat it as a flat array.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <new>
#include <string>

#include "../../common.hpp"
#include "tessera/core/cpu.hpp"
#include "tessera/dnn.hpp"

namespace tessera::dnn::detail {

// Highest rank the activation and softmax entry points accept.
constexpr int kMaxElementwiseRank = 16;

// Argument checks of the activation and softmax entry points: the first tensor (x or y) and
// each further one must have a valid desc of rank [min_rank, kMaxElementwiseRank], a float
// dtype equal to the first's, dims equal to the first's (when same_dims) and a non-null
// pointer unless empty. Messages name the function and the tensor.
struct TensorArg {
  const char* name;
  const TensorDesc& desc;
  const void* ptr;
  bool same_dims = true;
};
Status check_tensor_args(const std::string& fn, int min_rank,
                         std::initializer_list<TensorArg> args);

// Index of f32/bf16/f16 in the kernel tables (act_kernels::Storage), and element bytes.
int storage_index(DType t);
std::int64_t storage_bytes(DType t);
inline const void* at_element(const void* p, std::int64_t i, std::int64_t bytes) {
  return static_cast<const char*>(p) + i * bytes;
}
inline void* at_element(void* p, std::int64_t i, std::int64_t bytes) {
  return static_cast<char*>(p) + i * bytes;
}

// Whether an output of `bytes` is written with non-temporal stores: when it is at least the
// size of the last-level cache (so it could not stay cached for the next operation anyway), or
// at least TESSERA_STREAM_BYTES when that is set (read once; tests set 0 to stream everything).
bool stream_output(std::int64_t bytes);

// ok when cpu_info().isa() (capped by TESSERA_MAX_ISA) reaches `needs`, else a refusal.
Status isa_allows(Isa needs);
// The kernel table of the best ISA allowed, for code outside the ordered lists.
template <typename K>
const K& best_allowed(const K& avx512, const K& avx2, const K& generic) {
  if (isa_allows(Isa::kAvx512).is_ok()) return avx512;
  if (isa_allows(Isa::kAvx2).is_ok()) return avx2;
  return generic;
}

// Runs fn(unit, segment, begin, end) over `segments` segments of `len` elements each, cut into
// units of at most kUnitElements (a segment has ceil(len / kUnitElements) units, numbered
// segment-major). Units go to threads in contiguous chunks of about kGrainElements; the units
// themselves depend only on the sizes, never on the thread count.
constexpr std::int64_t kUnitElements = 16384;
constexpr std::int64_t kGrainElements = 32768;
std::int64_t units_per_segment(std::int64_t len);
void for_each_unit(const Handle& h, std::int64_t segments, std::int64_t len,
                   const std::function<void(std::int64_t unit, std::int64_t segment,
                                            std::int64_t begin, std::int64_t end)>& fn);

bool is_dense(const TensorDesc& d);
// a and b have equal dims, are dense, and agree on every stride of a dim larger than 1.
bool same_dense_layout(const TensorDesc& a, const TensorDesc& b);

// A dense tensor seen as [outer, len, inner] around one axis: element (o, a, i) at
// o*len*inner + a*inner + i. For len <= 1 the axis is folded away (inner = 1).
struct AxisSplit {
  std::int64_t outer = 0, len = 0, inner = 1;
};
AxisSplit split_at_axis(const TensorDesc& d, int axis);

// Whether `wide` is `narrow` with dim 1 scaled (CReLU's y = [relu(x), relu(-x)] along dim 1):
// both dense, in the same dim order, so that per outer index the C*inner elements of narrow
// map to the first (and second) C*inner elements of wide's 2C*inner block.
bool same_order_channel_doubled(const TensorDesc& narrow, const TensorDesc& wide);

// Runs the first implementation of `list` that accepts `p` (logging choices and refusals);
// an allocation failure becomes kOutOfMemory.
template <typename P, std::size_t N>
Status run_first_accepting(Handle& h, const char* op, const Impl<P> (&list)[N], const P& p) {
  const Impl<P>& impl = select_impl<P>(op, list, p);
  try {
    return impl.run(h, p);
  } catch (const std::bad_alloc&) {
    return out_of_memory(std::string(op) + ": out of memory");
  }
}

// Replay-line helpers: "8x64x56x56", and " --layout nhwc" / " --strided" / "".
std::string dims_x(const TensorDesc& d);
std::string layout_flag(const TensorDesc& d);

}  // namespace tessera::dnn::detail
