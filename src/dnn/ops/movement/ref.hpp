// Reference pad and resize: one output element at a time, straight from ONNX's definitions, any
// strides and dtypes (resize's linear and cubic interpolation summed in f64 over every tap of
// every dim, rounded once into y). The last entries of their ordered lists and the oracles of
// the tests; arguments are validated by the public entry points.
#pragma once

#include <cstdint>
#include <span>

#include "tessera/dnn.hpp"

namespace tessera::dnn::ref {

// pads: the begin pads of every dim, then the end pads (negative ones crop).
void pad(PadMode mode, std::span<const std::int64_t> pads, double value, const TensorDesc& x_desc, const void* x,
         const TensorDesc& y_desc, void* y);
// scales: one per dim, as the public entry resolved them (given, or out / in).
void resize(const ResizeParams& p, std::span<const double> scales, const TensorDesc& x_desc, const void* x,
            const TensorDesc& y_desc, void* y);

}  // namespace tessera::dnn::ref
