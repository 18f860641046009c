// The convolution algorithms: each one `accepts` (with a reason when it refuses) and `run`s
// a Problem for one direction. impls.cpp orders them into the per-direction lists.
#pragma once

#include <cstdint>
#include <vector>

#include "problem.hpp"

namespace tessera::dnn::conv {

// Weights packed for an algorithm (per call, or once by a plan), 64-byte aligned.
class PackedWeights {
 public:
  float* allocate(std::size_t n) {
    buf_.resize(n + 16);
    const auto addr = reinterpret_cast<std::uintptr_t>(buf_.data());
    off_ = ((64 - addr % 64) % 64) / sizeof(float);
    n_ = n;
    return buf_.data() + off_;
  }
  const float* data() const { return n_ ? buf_.data() + off_ : nullptr; }
  std::size_t size() const { return n_; }

 private:
  std::vector<float> buf_;
  std::size_t off_ = 0, n_ = 0;
};

struct Algo {
  ConvAlgo algo;
  detail::Impl<Problem> impl;
  // Immediate mode's heuristic: an algorithm that accepts but is not preferred (a reason
  // says why) is skipped by the heuristic; Find mode and explicit requests still run it.
  Status (*prefers)(const Problem&) = nullptr;
  // Plans (forward): packs p.w into the layout `impl.run` reads through p.w_packed; leaves
  // `out` empty when this problem runs on the weights as given. Null: never packs.
  void (*pack)(Handle&, const Problem&, PackedWeights& out) = nullptr;
};

// GEMM-based (gemm_algos.cpp): im2col + GEMM for fwd/bwd-weights and GEMM + col2im for
// bwd-data; 1x1 stride-1 unpadded convolution as plain GEMM.
Status im2col_accepts(const Problem& p);
Status im2col_fwd(Handle& h, const Problem& p);
Status im2col_bwd_data(Handle& h, const Problem& p);
Status im2col_bwd_weights(Handle& h, const Problem& p);
Status gemm1x1_accepts(const Problem& p);      // bwd-weights: stride 1
Status gemm1x1_bwd_data_accepts(const Problem& p);  // stride 1, or any through brgemm
Status gemm1x1_fwd_accepts(const Problem& p);  // forward: any stride (channels-last above 1)
Status gemm1x1_fwd(Handle& h, const Problem& p);
void gemm1x1_pack(Handle& h, const Problem& p, PackedWeights& out);
Status gemm1x1_bwd_data(Handle& h, const Problem& p);
Status gemm1x1_bwd_weights(Handle& h, const Problem& p);

// Batch-reduce GEMM (brgemm.cpp + brgemm_avx512.cpp): channels-last forward convolution of
// any shape on AVX-512 machines, activations read in place; runs the direct algorithm and
// gemm1x1's channels-last problems (any stride).
bool brgemm_usable(const Problem& p);
// brgemm_fwd runs (and brgemm_pack packs) for p: brgemm_usable, or channels-last on AVX2.
bool brgemm_fwd_usable(const Problem& p);
// Few input channels (< 16), one group, no dilation along w, taps x channels <= 512: each
// tile reduces over whole kernel rows (KW x Cg contiguous floats) instead of single taps.
bool brgemm_kernel_rows(const Problem& p);
// The weights the tiles read, for reduction channel c of tap t in channel tile kt of group
// g: base + g*group + kt*tile + t*tap + c*ldw, 64 (16 * vectors of the tile) output
// channels from there on, 16 at a time `part` floats apart. Packed tiles (brgemm_pack) are
// one view; a dense OHWI tensor read flipped, in place, is another (backward data).
struct BrWeights {
  const float* base;
  std::int64_t group, tile, tap, ldw;
  std::int64_t part = 16;
};
// Runs the forward problem p (p.w unused) on the weights wv.
Status brgemm_run(Handle& h, const Problem& p, const BrWeights& wv);
// Backward data p as its flipped forward problem q (stride 1; NHWC; p.Cg a multiple of 16),
// the caller's weights read flipped in place: taps walked backwards, rows taps * Cg apart.
Status brgemm_bwd_data_flipped(Handle& h, const Problem& p, const Problem& q);
// Runs on p.w_packed when set (packed by brgemm_pack), else packs per call.
Status brgemm_fwd(Handle& h, const Problem& p);
// Backward data of 1x1 unpadded convolutions (any stride), channels-last, Cg a multiple of
// 16: W's rows read in place by the run tiles.
bool brgemm_bwd_data_1x1_usable(const Problem& p);
Status brgemm_bwd_data_1x1(Handle& h, const Problem& p);
// Backward data of strided 2-D channels-last convolutions (one group, Cg a multiple of 16,
// no dilation) on the batch-reduce run tiles, per dx row and phase (brgemm.cpp).
bool brgemm_bwd_data_strided_usable(const Problem& p);
Status brgemm_bwd_data_strided(Handle& h, const Problem& p);
// Weight gradients of layers with few input channels (at most 32, one group, no dilation along
// w, K a multiple of 16, x and dy both channels-last or both channels-first): run tiles over
// whole kernel rows of a padded channels-last copy of x.
bool brgemm_wgrad_rows_usable(const Problem& p);
bool brgemm_wgrad_rows_preferred(const Problem& p);  // the heuristic takes it (few channels)
Status brgemm_wgrad_rows(Handle& h, const Problem& p);
// A plan's weights for brgemm_fwd when brgemm_usable(p), else nothing.
void brgemm_pack(Handle& h, const Problem& p, PackedWeights& out);

// Depthwise (depthwise.cpp + per-ISA kernels): groups == C, one filter per channel
// (K == C), NHWC or NCHW.
Status depthwise_accepts(const Problem& p);
// Runs on p.w_packed when set (packed by depthwise_pack: [taps][C]), else packs per call.
Status depthwise_fwd(Handle& h, const Problem& p);
void depthwise_pack(Handle& h, const Problem& p, PackedWeights& out);
Status depthwise_bwd_weights(Handle& h, const Problem& p);

// Direct (direct.cpp): the batch-reduce GEMM above over every tap, NHWC on AVX-512 or AVX2;
// NCHW through channels-last copies of x and y.
Status direct_accepts(const Problem& p);
Status direct_prefers(const Problem& p);
Status direct_fwd(Handle& h, const Problem& p);
// A packed NCHW forward problem on the tiles through channels-last copies of x and y (in the
// handle's workspace; direct and gemm1x1 use it), and the tiles' packing for plans (either
// layout).
Status channels_last_fwd(Handle& h, const Problem& p);
void channels_last_pack(Handle& h, const Problem& p, PackedWeights& out);

// Winograd (winograd.cpp + per-ISA kernels): 3x3, stride 1, dilation 1.
Status winograd_f2x3_accepts(const Problem& p);
Status winograd_f4x3_accepts(const Problem& p);
Status winograd_f2x3_fwd(Handle& h, const Problem& p);
Status winograd_f4x3_fwd(Handle& h, const Problem& p);
// Plans: the transformed filters of every group, panel and block of input channels (see
// winograd.cpp); the forward runs on them through p.w_packed.
void winograd_f2x3_pack(Handle& h, const Problem& p, PackedWeights& out);
void winograd_f4x3_pack(Handle& h, const Problem& p, PackedWeights& out);
// The heuristic skips Winograd below 128 output pixels (N x OH x OW).
Status winograd_prefers(const Problem& p);
// Backward-weights (winograd_wgrad.cpp), the same shapes as the forward.
Status winograd_f2x3_bwd_weights_accepts(const Problem& p);
Status winograd_f4x3_bwd_weights_accepts(const Problem& p);
Status winograd_f2x3_bwd_weights(Handle& h, const Problem& p);
Status winograd_f4x3_bwd_weights(Handle& h, const Problem& p);

// FFT (fft_conv.cpp): stride 1, no dilation, packed NCHW or NHWC; any kernel size, spectra
// of every plane through the FFT library. Preferred in NCHW from 11x11 taps up.
Status fft_accepts(const Problem& p);
Status fft_prefers(const Problem& p);
Status fft_fwd(Handle& h, const Problem& p);
// A plan's filter spectra for fft_fwd: [K][Cg] planes of bins complex values (interleaved).
void fft_pack(Handle& h, const Problem& p, PackedWeights& out);
Status fft_bwd_weights(Handle& h, const Problem& p);

// Shared pieces.
// Weights of group g as a dense row-major [Kg][taps][Cg] (channels-inner, "ohwi") or
// [Kg][Cg][taps] ("oihw") matrix, from any weight strides. taps = KD*KH*KW in row-major order.
void pack_weights(const Problem& p, bool channels_inner, float* dst);
// Thread-local scratch of at least n floats, 64-byte aligned (kept between calls on the same
// thread; the same alignment on every thread keeps BLAS results thread-independent).
float* thread_scratch(std::size_t n);
// dbias[k] = sum of dy over N and spatial dims, fixed order (bwd-weights).
void bias_grad(const Problem& p);

}  // namespace tessera::dnn::conv
