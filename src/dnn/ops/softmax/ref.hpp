// Reference softmax / log-softmax: any strides, f64 row arithmetic (row_math.hpp). The last
// entry of the ordered list and the oracle of the tests; arguments are validated by the
// public entry points, and `axis` is already in [0, rank).
#pragma once

#include "tessera/dnn.hpp"

namespace tessera::dnn::ref {

void softmax_forward(SoftmaxMode mode, int axis, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& y_desc, void* y);
void softmax_backward(SoftmaxMode mode, int axis, const TensorDesc& y_desc, const void* y,
                      const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                      void* dx);

}  // namespace tessera::dnn::ref
