// Local response normalisation kernels, across channels, on packed f32 data:
//   y = x * D^-beta,  D = k + alpha/n * sum over the channel window of x^2,
// the window [c - lo, c + hi] clipped to the channels. Backward:
//   dx_i = dy_i * D_i^-beta - 2 * beta * alpha/n * x_i * sum_{j : i in window(j)} dy_j x_j
//   D_j^(-beta-1)
// Sums run over the window in increasing channel order, in f32.
//
// ISA files include only this header: plain data and function pointers, no inline code.
#pragma once

#include <cstdint>

namespace tessera::dnn::lrn {

// How D^-beta is computed: exactly-rounded square roots and divisions for the common betas,
// powf per element otherwise.
enum class PowKind : int { kGeneral = 0, kThreeQuarters = 1, kHalf = 2, kOne = 3 };
constexpr int kNumPowKinds = 4;

struct AcrossParams {
  std::int64_t channels;
  std::int64_t lo, hi;  // window [c - lo, c + hi]
  float k, alpha_over_n, beta;
  PowKind pow;
  // Full aligned vectors of the output with non-temporal stores (outputs past the last-level
  // cache); the caller then calls fence() on the same thread.
  bool stream;
};

// Each kernel per PowKind (indexed by it), the power's computation compiled into its loops.
struct LrnKernels {
  const char* isa;
  // One NCHW image (channels of `plane` elements each): spatial positions [s0, s1).
  void (*forward_nchw[kNumPowKinds])(const AcrossParams& p, const float* x, std::int64_t plane,
                                     std::int64_t s0, std::int64_t s1, float* y);
  // `pixels` NHWC pixels of `channels` elements (scratch: see kScratchPad).
  void (*forward_nhwc[kNumPowKinds])(const AcrossParams& p, const float* x, std::int64_t pixels,
                                     float* y, float* scratch);
  // One NCHW image, spatial positions [s0, s1) (at most kTile); scratch: 2 * channels * kTile.
  void (*backward_nchw[kNumPowKinds])(const AcrossParams& p, const float* x, const float* dy,
                                      std::int64_t plane, std::int64_t s0, std::int64_t s1,
                                      float* dx, float* scratch);
  void (*backward_nhwc[kNumPowKinds])(const AcrossParams& p, const float* x, const float* dy,
                                      std::int64_t pixels, float* dx, float* scratch);
  void (*fence)();
};

// Spatial positions of one NCHW backward call at most.
constexpr std::int64_t kTile = 512;
// Scratch of the NHWC kernels: 6 * (channels + lo + hi + kScratchPad) floats.
constexpr std::int64_t kScratchPad = 64;

extern const LrnKernels kLrnGeneric;  // generic.cpp
extern const LrnKernels kLrnAvx2;     // avx2.cpp
extern const LrnKernels kLrnAvx512;   // avx512.cpp

}  // namespace tessera::dnn::lrn
