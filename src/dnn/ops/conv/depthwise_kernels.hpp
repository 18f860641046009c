// Depthwise convolution row kernels (one output row of one image, channels-last), per ISA.
#pragma once

#include <cstdint>

namespace tessera::dnn::conv {

struct DwRow {
  const float* x;  // image base, NHWC packed: pixel (d, h, w) channel c at ((d*IH + h)*IW + w)*C + c
  const float* w;  // weights packed [taps][C], taps row-major over (kd, kh, kw)
  float* y;        // output row base: OW pixels of C channels
  std::int64_t C, ID, IH, IW, OW, KD, KH, KW;
  std::int64_t sd, sh, sw, dd, dh, dw, pd, ph, pw;
  std::int64_t od, oh;  // this row's output coordinates
};

void dw_row_nhwc_generic(const DwRow& r);
void dw_row_nhwc_avx512(const DwRow& r);

}  // namespace tessera::dnn::conv
