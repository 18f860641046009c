// Direct convolution microkernels (channels-last): one strip of MB output pixels whose
// inputs lie at a uniform distance in the (padded) input, times a block of 32 output channels,
// over every tap and input channel.
#pragma once

#include <cstdint>

namespace tessera::dnn::conv {

struct DirectStrip {
  const float* x;   // padded input at the strip's first pixel, tap (0, 0, 0), group channel 0
  const float* w;   // packed weights of this channel block: [Cg / kDirectBlockC][taps][<= kDirectBlockC][32]
  float* y[12];     // output of each strip pixel at this block's first channel (null: skip)
  std::int64_t Cg;          // input channels of the group
  std::int64_t x_pix;       // floats between consecutive strip pixels (stride_w * C)
  std::int64_t kd, kh, kw;  // kernel extents
  std::int64_t x_td, x_th, x_tw;  // floats between taps along d, h, w (dilation included)
  int nk;           // valid output channels in the block (1..32)
  int mb;           // pixels in the strip (1..12)
};

inline constexpr int kDirectMaxPixels = 12;
inline constexpr std::int64_t kDirectBlockC = 64;  // input channels per inner block
void direct_strip_avx512(const DirectStrip& s);

}  // namespace tessera::dnn::conv
