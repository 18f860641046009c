// Reference MatMul: every output element as a plain dot product through multi-indices and
// strides (batch dims right-aligned and broadcast, 1-D operands as in numpy.matmul). Floats
// accumulate in f64 (f16/bf16 results go through f32, then to nearest even); u8 x i8
// accumulates exactly and wraps to i32 as the BLAS kernel's i32 accumulator does. Arguments
// are checked by the entry point.
#pragma once

#include "tessera/dnn.hpp"

namespace tessera::dnn::ref {

void matmul(const TensorDesc& a, const void* ap, const TensorDesc& b, const void* bp, const TensorDesc& y, void* yp);

}  // namespace tessera::dnn::ref
