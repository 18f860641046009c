// Direct convolution, channels-last, on AVX-512 and AVX2 machines: the batch-reduce GEMM of
// brgemm.cpp (tiles of output pixels x 64 channels accumulated over every tap in registers,
// activations read in place, padding read as a row of zeros). It replaced a 12 x 32 strip
// kernel over a padded copy of the input, which it beat on every 3x3 layer of ResNet-50 (see
// docs/performance.md). Channels-first problems run on channels-last copies (below).
#include "algos.hpp"
#include "tessera/core/cpu.hpp"
#include "tessera/dnn/data_movement.hpp"

namespace tessera::dnn::conv {

Status direct_accepts(const Problem& p) {
  if (!cpu_info().usable(CpuFeature::kAvx512f) && !cpu_info().usable(CpuFeature::kAvx2))
    return detail::refuse("needs AVX2 or AVX-512");
  if (!p.same_layout(Layout::kNHWC) && !p.same_layout(Layout::kNCHW))
    return detail::refuse("needs x and y packed alike, NHWC or NCHW");
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

namespace {

// [N][A][B] -> [N][B][A], packed f32 (the library's transpose: blocked, parallel).
Status swap_inner(Handle& h, const float* src, std::int64_t n, std::int64_t a, std::int64_t b,
                  float* dst) {
  constexpr int kPerm[] = {0, 2, 1};
  return transpose(h, kPerm, TensorDesc::make(DType::kF32, {n, a, b}), src,
                   TensorDesc::make(DType::kF32, {n, b, a}), dst);
}

}  // namespace

// Channels-first through the tiles: x is transposed into a channels-last copy, the tiles
// write a channels-last y (bias and activation fused as usual), and y is transposed back; a
// residual, laid out as y, is added after that with the activation, in a pass over y.
Status channels_last_fwd(Handle& h, const Problem& p) {
  const std::int64_t is = p.in_spatial(), os = p.out_spatial();
  const auto nx = static_cast<std::size_t>(p.N * is * p.C), ny = static_cast<std::size_t>(p.N * os * p.K);
  // The handle's workspace, kept between calls (fresh buffers cost page faults every call:
  // on Zen 3 the kernel's page faults took 60% of such a call on a 56x56 layer).
  TESSERA_ASSIGN_OR_RETURN(void* ws, detail::workspace(h, (nx + ny) * sizeof(float)));
  float* const xl = static_cast<float*>(ws);
  float* const yl = xl + nx;
  TESSERA_RETURN_IF_ERROR(swap_inner(h, p.x, p.N, p.C, is, xl));
  Problem q = channels_last(p);
  q.x = xl;
  q.y_out = yl;
  const bool residual = p.post.residual != nullptr;
  if (residual) q.post = PostOps{};
  TESSERA_RETURN_IF_ERROR(brgemm_fwd(h, q));
  TESSERA_RETURN_IF_ERROR(swap_inner(h, yl, p.N, os, p.K, p.y_out));
  if (residual) {
    const auto* res = static_cast<const float*>(p.post.residual);
    detail::parallel_for(h, 0, p.N * p.K, 16, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        const std::int64_t k = i % p.K, off = i / p.K * p.ys.n + k * p.ys.c;
        apply_post_ops_nchw(p, p.y_out + off, res + off, k, k + 1, os, os);
      }
    });
  }
  return Status::ok();
}

void channels_last_pack(Handle& h, const Problem& p, PackedWeights& out) {
  brgemm_pack(h, p.x_layout == Layout::kNHWC ? p : channels_last(p), out);
}

// The two transposes cost less than im2col + GEMM's lead over the tiles wherever
// direct_prefers sends a channels-first layer here (2 threads, Zen 3, ResNet-50 NCHW, ratio to
// oneDNN at mb1 / mb8, im2col -> here: conv1 2.57 / 2.12 -> 1.42 / 1.21, res3a_branch2b 1.63 /
// 1.40 -> 1.09 / 1.14, res4a_branch2b 1.53 / 1.61 -> 0.80 / 1.08, res5a_branch2b 1.24 / 1.21 ->
// 0.70 / 0.70).
Status direct_fwd(Handle& h, const Problem& p) {
  return p.x_layout == Layout::kNHWC ? brgemm_fwd(h, p) : channels_last_fwd(h, p);
}

}  // namespace tessera::dnn::conv
