// Reference implementations of the tensor operations: one output element at a time through
// multi-indices and strides, every value through scalar.inc's definitions (f16/bf16 through
// f32, rounded once). Arguments are checked by the entry points.
#pragma once

#include <span>

#include "tessera/dnn.hpp"

namespace tessera::dnn::ref {

void binary(BinaryOp op, const TensorDesc& a, const void* ap, const TensorDesc& b, const void* bp,
            const TensorDesc& y, void* yp);
void unary(UnaryOp op, const TensorDesc& x, const void* xp, const TensorDesc& y, void* yp);
void where(const TensorDesc& c, const void* cp, const TensorDesc& a, const void* ap,
           const TensorDesc& b, const void* bp, const TensorDesc& y, void* yp);
// `axes` normalised (0..rank-1, sorted, distinct; all of them for a full reduction).
void reduce(ReduceOp op, std::span<const int> axes, const TensorDesc& x, const void* xp,
            const TensorDesc& y, void* yp);
void arg_reduce(bool arg_max, int axis, bool last_index, const TensorDesc& x, const void* xp,
                const TensorDesc& y, void* yp);

}  // namespace tessera::dnn::ref
