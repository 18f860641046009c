// A validated convolution problem, normalised to three spatial dims (1-D and 2-D problems
// get leading spatial dims of size 1), shared by the reference and every algorithm.
//
// Index names: n batch, g group, c input channel within its group, k output channel
// (0..K over all groups), (d, h, w) spatial. Logical tensors:
//   x [N, G*Cg, ID, IH, IW]   w [K, Cg, KD, KH, KW]   y [N, K, OD, OH, OW]   (K = G*Kg)
// Each tensor keeps the caller's strides (expanded to rank 5), so any layout reaches the
// reference; fast paths check `layout` (x and y packed alike) and the weight layout.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "../../common.hpp"

namespace tessera::dnn::conv {

struct Strides5 {
  std::int64_t n, c, d, h, w;
};

struct Problem {
  ConvDir dir = ConvDir::kForward;
  ConvDesc conv;
  DType dtype = DType::kF32;
  int spatial_rank = 2;  // 1..3, as the caller gave it
  std::int64_t N = 0, C = 0, K = 0, G = 1, Cg = 0, Kg = 0;
  std::array<std::int64_t, 3> in{}, out{}, ker{}, stride{}, dil{}, pad_b{}, pad_e{};  // d, h, w
  Strides5 xs{}, ws{}, ys{};  // element strides of x, w, y (for bwd: dx, dw, dy)
  // Packed layouts (nullopt when the strides are anything else).
  std::optional<Layout> x_layout, y_layout;
  bool w_oihw = false, w_ohwi = false;  // weights packed [K][Cg][k...] or [K][k...][Cg]
  // Original descriptors (for staging and logs).
  TensorDesc x_desc, w_desc, y_desc;
  // Data. Forward: x, w read, y written. Backward-data: w, y (= dy) read, x (= dx) written.
  // Backward-weights: x, y (= dy) read, w (= dw) written, dbias optional.
  const float* x = nullptr;
  const float* w = nullptr;
  const float* y_in = nullptr;  // dy
  float* x_out = nullptr;       // dx
  float* w_out = nullptr;       // dw
  float* y_out = nullptr;       // y
  float* dbias = nullptr;
  PostOps post;  // forward only; residual points at f32 data laid out like y
  // Forward, from a plan: w packed by the chosen algorithm's `pack` (null: pack per call).
  const float* w_packed = nullptr;
  // Chosen for a plan: the weights' preparation (packing, transforms) is paid once, not per
  // call, which moves the heuristic's thresholds (the FFT's filter spectra).
  bool planned = false;

  std::int64_t in_spatial() const { return in[0] * in[1] * in[2]; }
  std::int64_t out_spatial() const { return out[0] * out[1] * out[2]; }
  std::int64_t ker_spatial() const { return ker[0] * ker[1] * ker[2]; }
  bool is_1x1_s1_p0() const {
    for (int i = 0; i < 3; ++i)
      if (ker[i] != 1 || stride[i] != 1 || pad_b[i] != 0 || pad_e[i] != 0) return false;
    return true;
  }
  bool same_layout(Layout l) const { return x_layout == l && y_layout == l; }
  bool has_post_ops() const {
    return post.bias != nullptr || post.residual != nullptr || post.act.kind != ActKind::kIdentity;
  }
  double flops() const {  // 2 * multiply-adds of the direct algorithm
    return 2.0 * static_cast<double>(N) * K * out_spatial() * Cg * ker_spatial();
  }
  std::string signature() const;
};

// Validates the shapes of x and w (and the descriptor) and computes the output extents.
Result<Problem> shape_problem(const std::string& fn, ConvDir dir, const ConvDesc& c,
                              const TensorDesc& x_desc, const TensorDesc& w_desc);
// Validates and normalises. `fn` names the entry point in messages. For bwd-data, x_desc is
// dx's descriptor and y_desc dy's; for bwd-weights, w_desc is dw's.
Result<Problem> make_problem(const std::string& fn, ConvDir dir, const ConvDesc& c,
                             const TensorDesc& x_desc, const TensorDesc& w_desc,
                             const TensorDesc& y_desc);

// p with x and y described as packed channels-last (NHWC / NDHWC) tensors of the same dims;
// data pointers, weights and post-ops unchanged.
Problem channels_last(const Problem& p);

// The plain reference (any strides; f64 accumulation).
Status reference(const Problem& p);

// Applies the post-ops to y elements [begin, end) of the packed output rows given by the
// caller: for NCHW a row is one (n, k) plane slice, for NHWC a run of K channels. Shared by
// every forward algorithm's epilogue.
void apply_post_ops_nhwc(const Problem& p, float* y, const float* residual, std::int64_t pixels);
// The same on channels [k0, k1) of each row only (y and residual still at channel 0).
void apply_post_ops_nhwc(const Problem& p, float* y, const float* residual, std::int64_t pixels,
                         std::int64_t k0, std::int64_t k1);
void apply_post_ops_nchw(const Problem& p, float* y, const float* residual, std::int64_t k0,
                         std::int64_t k1, std::int64_t plane, std::int64_t plane_stride);

}  // namespace tessera::dnn::conv
