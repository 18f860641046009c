// Depthwise convolution, channels-last, AVX-512: 16 channels per vector (masked tail), four
// output pixels per register block, taps outside the input skipped.
#include <immintrin.h>

#include "depthwise_kernels.hpp"

namespace tessera::dnn::conv {

void dw_row_nhwc_avx512(const DwRow& r) {
  constexpr int kB = 4;  // output pixels per block
  for (std::int64_t c0 = 0; c0 < r.C; c0 += 16) {
    const std::int64_t cl = r.C - c0 < 16 ? r.C - c0 : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << cl) - 1u);
    for (std::int64_t ow0 = 0; ow0 < r.OW; ow0 += kB) {
      const int nb = static_cast<int>(r.OW - ow0 < kB ? r.OW - ow0 : kB);
      __m512 acc[kB] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                        _mm512_setzero_ps()};
      std::int64_t t = 0;
      for (std::int64_t kd = 0; kd < r.KD; ++kd) {
        const std::int64_t id = r.od * r.sd - r.pd + kd * r.dd;
        if (id < 0 || id >= r.ID) {
          t += r.KH * r.KW;
          continue;
        }
        for (std::int64_t kh = 0; kh < r.KH; ++kh) {
          const std::int64_t ih = r.oh * r.sh - r.ph + kh * r.dh;
          if (ih < 0 || ih >= r.IH) {
            t += r.KW;
            continue;
          }
          const float* xrow = r.x + (id * r.IH + ih) * r.IW * r.C + c0;
          for (std::int64_t kw = 0; kw < r.KW; ++kw, ++t) {
            const __m512 wv = _mm512_maskz_loadu_ps(m, r.w + t * r.C + c0);
            const std::int64_t iw0 = ow0 * r.sw - r.pw + kw * r.dw;
            if (nb == kB && iw0 >= 0 && iw0 + (kB - 1) * r.sw < r.IW) {
#pragma GCC unroll 4
              for (int j = 0; j < kB; ++j)
                acc[j] = _mm512_fmadd_ps(
                    _mm512_maskz_loadu_ps(m, xrow + (iw0 + j * r.sw) * r.C), wv, acc[j]);
            } else {
              for (int j = 0; j < nb; ++j) {
                const std::int64_t iw = iw0 + j * r.sw;
                if (iw >= 0 && iw < r.IW)
                  acc[j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xrow + iw * r.C), wv, acc[j]);
              }
            }
          }
        }
      }
      for (int j = 0; j < nb; ++j) _mm512_mask_storeu_ps(r.y + (ow0 + j) * r.C + c0, m, acc[j]);
    }
  }
}

}  // namespace tessera::dnn::conv
