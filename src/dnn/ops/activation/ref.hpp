// Reference implementations: plain loops over the logical index space, any strides, f32
// compute through load_f32/store_f32 and the scalar definitions of act_scalar.hpp. They are
// the last entry of every ordered list and the oracle of the tests. Arguments are validated
// by the public entry points before these run.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/dnn.hpp"

namespace tessera::dnn::ref {

void activation_forward(const Activation& act, const TensorDesc& x_desc, const void* x,
                        const TensorDesc& y_desc, void* y);
void activation_backward(const Activation& act, const TensorDesc& x_desc, const void* x,
                         const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                         void* dx);
// slope_count is 1 or x's dim 1. dslope (may be null) sums x*dy over x <= 0 in f64, in the
// order of the logical index.
void prelu_forward(const TensorDesc& x_desc, const void* x, const float* slope,
                   std::int64_t slope_count, const TensorDesc& y_desc, void* y);
void prelu_backward(const TensorDesc& x_desc, const void* x, const float* slope,
                    std::int64_t slope_count, const TensorDesc& dy_desc, const void* dy,
                    const TensorDesc& dx_desc, void* dx, float* dslope);
void crelu_forward(const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);
void crelu_backward(const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                    const void* dy, const TensorDesc& dx_desc, void* dx);

// Calls fn(index) for every multi-index of dims in row-major order (nothing when empty).
template <typename Fn>
void for_each_index(const std::vector<std::int64_t>& dims, Fn&& fn) {
  for (std::int64_t d : dims)
    if (d == 0) return;
  std::vector<std::int64_t> idx(dims.size(), 0);
  while (true) {
    fn(static_cast<const std::int64_t*>(idx.data()));
    int k = static_cast<int>(dims.size()) - 1;
    for (; k >= 0; --k) {
      if (++idx[static_cast<std::size_t>(k)] < dims[static_cast<std::size_t>(k)]) break;
      idx[static_cast<std::size_t>(k)] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace tessera::dnn::ref
