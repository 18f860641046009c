// Direct convolution, AVX-512: 12 pixels x 32 channels of accumulators (24 zmm), each input
// value broadcast once per pixel and multiplied into two weight vectors.
#include <immintrin.h>

#include "direct_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

template <int MB>
void strip(const DirectStrip& s) {
  __m512 a0[MB], a1[MB];
#pragma GCC unroll 12
  for (int j = 0; j < MB; ++j) a0[j] = _mm512_setzero_ps(), a1[j] = _mm512_setzero_ps();
  // Input channels in blocks of kDirectBlockC, taps inside: the strip's slice of x for one
  // block stays in L1 while the taps that overlap it (kw shifts) reuse it.
  const float* w = s.w;
  for (std::int64_t c0 = 0; c0 < s.Cg; c0 += kDirectBlockC) {
    const std::int64_t cn = s.Cg - c0 < kDirectBlockC ? s.Cg - c0 : kDirectBlockC;
    for (std::int64_t td = 0; td < s.kd; ++td)
      for (std::int64_t th = 0; th < s.kh; ++th)
        for (std::int64_t tw = 0; tw < s.kw; ++tw) {
          const float* x = s.x + td * s.x_td + th * s.x_th + tw * s.x_tw + c0;
          for (std::int64_t c = 0; c < cn; ++c, w += 32) {
            const __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);
#pragma GCC unroll 12
            for (int j = 0; j < MB; ++j) {
              const __m512 xv = _mm512_set1_ps(x[j * s.x_pix + c]);
              a0[j] = _mm512_fmadd_ps(xv, w0, a0[j]);
              a1[j] = _mm512_fmadd_ps(xv, w1, a1[j]);
            }
          }
        }
  }
  const int n0 = s.nk < 16 ? s.nk : 16, n1 = s.nk - n0;
  const __mmask16 m0 = static_cast<__mmask16>((1u << n0) - 1u);
  const __mmask16 m1 = static_cast<__mmask16>((1u << n1) - 1u);
#pragma GCC unroll 12
  for (int j = 0; j < MB; ++j) {
    if (s.y[j] == nullptr) continue;
    _mm512_mask_storeu_ps(s.y[j], m0, a0[j]);
    _mm512_mask_storeu_ps(s.y[j] + 16, m1, a1[j]);
  }
}

}  // namespace

void direct_strip_avx512(const DirectStrip& s) {
  switch (s.mb) {
    case 12: return strip<12>(s);
    case 11: return strip<11>(s);
    case 10: return strip<10>(s);
    case 9: return strip<9>(s);
    case 8: return strip<8>(s);
    case 7: return strip<7>(s);
    case 6: return strip<6>(s);
    case 5: return strip<5>(s);
    case 4: return strip<4>(s);
    case 3: return strip<3>(s);
    case 2: return strip<2>(s);
    default: return strip<1>(s);
  }
}

}  // namespace tessera::dnn::conv
