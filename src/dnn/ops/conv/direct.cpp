// Direct convolution, channels-last, on AVX-512 and AVX2 machines: the batch-reduce GEMM of
// brgemm.cpp (tiles of output pixels x 64 channels accumulated over every tap in registers,
// activations read in place, padding read as a row of zeros). It replaced a 12 x 32 strip
// kernel over a padded copy of the input, which it beat on every 3x3 layer of ResNet-50 (see
// docs/performance.md).
#include "algos.hpp"
#include "tessera/core/cpu.hpp"

namespace tessera::dnn::conv {

Status direct_accepts(const Problem& p) {
  if (!cpu_info().usable(CpuFeature::kAvx512f) && !cpu_info().usable(CpuFeature::kAvx2))
    return detail::refuse("needs AVX2 or AVX-512");
  if (!p.same_layout(Layout::kNHWC)) return detail::refuse("needs x and y packed NHWC");
  if (p.Kg < 8) return detail::refuse("fewer than 8 output channels per group");
  return Status::ok();
}

// With few channels a segment of one tap reduces over too few values (ResNet-50's 7x7 stem,
// Cg = 3, mb8: 15.2-15.6 ms per tap, 12.4-14.4 ms with im2col); segments over whole kernel
// rows (brgemm_kernel_rows) take 11.0-13.1 ms, and im2col stays for the rest.
constexpr std::int64_t kMinChannels = 16;
Status direct_prefers(const Problem& p) {
  if (p.ker_spatial() == 1) return detail::refuse("1x1 kernel: gemm1x1 runs the same tiles");
  if (p.Cg < kMinChannels && !brgemm_kernel_rows(p))
    return detail::refuse("fewer than " + std::to_string(kMinChannels) +
                          " input channels per group and no whole kernel rows to reduce over: "
                          "im2col + GEMM reduces them better");
  return Status::ok();
}

Status direct_fwd(Handle& h, const Problem& p) { return brgemm_fwd(h, p); }

}  // namespace tessera::dnn::conv
