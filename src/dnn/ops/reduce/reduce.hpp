// Between the reductions' entry points (api.cpp: argument checks) and their implementations
// (impls.cpp: the ordered list of fast walks and the reference).
#pragma once

#include <vector>

#include "tessera/dnn.hpp"

namespace tessera::dnn::reduce_impl {

// Whether `op` takes elements of type t: every float type; the integer types unless op is
// l2, log_sum or log_sum_exp.
bool takes_dtype(ReduceOp op, DType t);

// Runs the first implementation that accepts the call: x and y checked, axes normalised
// (ascending, distinct).
Status run(Handle& h, ReduceOp op, const std::vector<int>& axes, const TensorDesc& x, const void* xp,
           const TensorDesc& y, void* yp);

}  // namespace tessera::dnn::reduce_impl
