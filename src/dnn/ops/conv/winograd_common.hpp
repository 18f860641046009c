// Pieces shared by the Winograd forward (winograd.cpp) and backward-weights
// (winograd_wgrad.cpp) drivers: sizes, the ISA's kernel table, the shape test, and the staging
// of image rows into zero-padded channels-inner strips.
#pragma once

#include <cstdint>

#include "algos.hpp"
#include "winograd_kernels.hpp"

namespace tessera::dnn::conv::wino {

using i64 = std::int64_t;

inline i64 round_up(i64 v, i64 m) {
  return (v + m - 1) / m * m;
}
inline i64 ceil_div(i64 a, i64 b) {
  return (a + b - 1) / b;
}
// Floats of a stride between the alpha^2 streams a transform reads or writes: an odd number
// of cache lines, so that the streams fall into different cache sets (with a power-of-two
// stride all 36 land in one set).
inline i64 odd_lines(i64 floats) {
  const i64 s = round_up(floats, 16);
  return (s / 16) % 2 == 0 ? s + 16 : s;
}

// The table for the best ISA of this machine (TESSERA_MAX_ISA applies).
const WinoKernels& kernels();

// Whether F(2x2,3x3) (variant 0) or F(4x4,3x3) (variant 1) fits the shapes and layouts of p,
// whatever its direction: 2-D 3x3, stride 1, dilation 1, >= 8 channels per group in and out,
// x and y packed alike in NCHW or NHWC, and tiles that save multiplications.
Status shape_accepts(const Problem& p, int variant);

// One image's channels [0, channels) at `base` (strides s, extent h x w; NHWC: channels
// inner, else NCHW), rows [h0, h0 + rows) and columns [w0, w0 + sw), as a strip
// [rows][sw][cp] with rows odd_lines(sw * cp) apart. Outside the image and from `channels` to
// cp (a multiple of kWinoPad) the strip is zero.
struct Plane {
  const float* base;
  Strides5 s;
  i64 h, w, channels;
  bool nhwc;
};
void stage_strip(const WinoKernels& k, const Plane& src, i64 h0, i64 w0, i64 rows, i64 sw, i64 cp,
                 float* strip);

}  // namespace tessera::dnn::conv::wino
