// LRN internals shared by the reference (ref.cpp) and the entry points (impls.cpp).
#pragma once

#include <cstdint>

#include "../../common.hpp"

namespace tessera::dnn::lrn {

struct LrnProblem {
  bool backward = false;
  LrnDesc d;
  TensorDesc x_desc, y_desc, dx_desc;  // backward: y_desc describes dy
  const void* x = nullptr;
  const void* dy = nullptr;
  void* y = nullptr;
  void* dx = nullptr;
};

// The window [i - lo, i + hi] of a centred window of `size` (the extra element of an even size
// on the high side, as ONNX).
inline std::int64_t window_lo(std::int64_t size) {
  return (size - 1) / 2;
}
inline std::int64_t window_hi(std::int64_t size) {
  return size - 1 - (size - 1) / 2;
}

// ref.cpp: f64 over logical indices, any strides; across and within channels.
Status lrn_ref(Handle& h, const LrnProblem& p);

}  // namespace tessera::dnn::lrn
