// Elementwise tensor-operation kernels compiled for generic (body.inc over scalar.inc).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels.hpp"

namespace tessera::dnn::elt_kernels {
namespace {
#include "scalar.inc"
#include "../half_blocks.inc"
// One 64-byte line of y from a block (no non-temporal stores here: a plain copy).
constexpr int kLine = 64;
inline void stream_line(void* dst, const void* src) { std::memcpy(dst, src, kLine); }
#include "body.inc"
void copy_plain(void* dst, const void* src, std::int64_t bytes) {
  std::memcpy(dst, src, static_cast<std::size_t>(bytes));
}
void no_fence() {}
}  // namespace

constinit const Kernels kGeneric = make_table("generic", &copy_plain, &no_fence);

}  // namespace tessera::dnn::elt_kernels
