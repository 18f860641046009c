// Batch-reduce GEMM tiles for channels-last convolution: a tile of up to kBrPixels output
// pixels by up to kBrChannels output channels, accumulated in registers over a batch of
// segments. A segment is one kernel tap over a run of input channels: each pixel's operand is
// read straight from its input row (no im2col, no packing of the activations; pixels whose tap
// falls in the padding point at a row of zeros) against weights packed once per call.
//
// Packed weights of one channel tile: wp[r * kBrChannels + k] = W[k0 + k][r] over the
// reduction index r = tap * Cg + c (channels inner), k < kBrChannels (rows past the last output
// channel are zero). The AVX2 tiles, which run a tile as parts of 16 channels, take each part
// contiguous instead: wp[(k / 16 * R + r) * 16 + k % 16] over the R reduction indices (a part
// reads whole lines, in order; 1-6% faster on MobileNet-V2's 1x1 layers, Zen 3).
#pragma once

#include <cstdint>

namespace tessera::dnn::conv {

inline constexpr int kBrPixels = 6;  // 6 x 4 vectors of 16 = 24 accumulator registers
inline constexpr int kBrChannels = 64;

// Post-ops fused into a tile's last store: y = act(y + bias + residual), act relu or none.
struct BrEpilogue {
  const float* bias = nullptr;      // at the tile's first channel
  const float* residual = nullptr;  // at the tile's first pixel and channel, pixel stride ldy
  bool relu = false;  // max(y, 0) (NaN -> 0, as the reference's y > 0 ? y : 0)
  bool clip = false;  // fmin(fmax(y, lo), hi), the activation's clip (NaN -> lo)
  float lo = 0.0f, hi = 0.0f;
  // Non-temporal stores for whole 64-byte lines (y and its pixel stride 64-byte aligned): an
  // output larger than the last-level cache skips the read-for-ownership of every line.
  bool stream = false;
};

struct BrTile {
  const float* const* x;  // segment s, pixel j: x[s * kBrPixels + j], at the segment's first channel
  const float* w;         // packed weights of segment 0; segment s at w + s * w_seg
  std::int64_t w_seg;     // floats between consecutive segments' weights (may be negative)
  int nseg;               // segments in the batch (>= 1)
  std::int64_t kc;        // reduction length of each segment (input channels)
  float* y;               // output of the first pixel at the tile's first channel
  std::int64_t ldy;       // floats between consecutive pixels' outputs
  int mp;                 // pixels, 1..kBrPixels
  int nk;                 // channels, 1..kBrChannels
  bool accumulate;        // add to y (a later batch) instead of overwriting it
  const BrEpilogue* post; // null: plain store
  std::int64_t ldw = kBrChannels;  // floats between consecutive reduction steps' weights
  std::int64_t w_part = 16;        // floats between the weights of consecutive 16-channel parts
};

// Run tiles: the pixels of a tile lie evenly spaced in memory (a 1x1 convolution's pixels, or
// one output row when a segment spans a whole kernel row of a layer with few channels), so
// pixel j's operand of segment s is seg[s].x + j * ldx and no per-pixel pointers are needed.
// That frees the registers for taller tiles over narrow channel tiles: kRunPixels[NV - 1]
// pixels by NV vectors of 16 channels.
// 7 x 64 uses all 32 registers (28 accumulators, 4 weight vectors; broadcasts come from
// memory in the FMAs), and every MobileNet-V2 / ResNet-50 spatial size is a multiple of 7.
inline constexpr int kRunPixels[4] = {24, 12, 8, 7};
struct BrSeg {
  const float* x;  // pixel 0's operand at the segment's first reduction index
  const float* w;  // the segment's packed weights (row stride kBrChannels)
};
struct BrRunTile {
  const BrSeg* seg;
  int nseg;
  std::int64_t kc;   // reduction length of each segment
  std::int64_t ldx;  // floats between consecutive pixels' operands
  float* y;
  std::int64_t ldy;
  int mp;  // pixels, any number: the kernel runs them as tiles of br_run_pixels(nk)
  int nk;  // channels of each channel tile, 1..kBrChannels
  bool accumulate;
  const BrEpilogue* post;  // bias and residual at channel tile 0
  // Consecutive channel tiles (each nk channels, kBrChannels apart in y, bias and residual;
  // weights w_tile floats apart), pixels outer: a tile's rows are read once for all of them.
  int ntiles = 1;
  std::int64_t w_tile = 0;
  // Floats between consecutive reduction steps' weights: kBrChannels for packed tiles; a
  // row-major matrix read in place (rows at least NV * 16 floats readable) gives its row stride.
  std::int64_t ldw = kBrChannels;
  // Floats between consecutive reduction steps' operands of one pixel: 1 when the reduction
  // runs over channels; a weight gradient reducing over output pixels steps by stride x C.
  std::int64_t xstep = 1;
  std::int64_t w_part = 16;  // floats between the weights of consecutive 16-channel parts
};

// AVX-512F. Every output element is one chain of fused multiply-adds in reduction order
// (segments in order; each batch added to the stored partial sum), whatever the tile shape.
void br_tile_avx512(const BrTile& t);
void br_run_tile_avx512(const BrRunTile& t);
// The height of the run tile for a channel tile of nk channels: kRunPixels[(nk + 15) / 16 - 1],
// except 17..24 channels on CPUs that execute 512-bit operations as two 256-bit halves (AMD
// Zen 4): there three 8-lane vectors by 9 pixels fill every lane at the same rate, where two
// 16-lane vectors would leave a quarter of the lanes idle (MobileNet-V2's 24-channel layers).
int br_run_pixels_avx512(int nk);
// Orders a thread's non-temporal stores before its later stores (an sfence): called before a
// thread that streamed reports its share done.
void br_stream_fence();
// Packs rows [0, rows) (rows <= kBrChannels) of the row-major matrix w (row stride ldw) over
// reduction indices [0, red) into dst as above; rows in [rows, kBrChannels) are zero.
void br_pack_avx512(const float* w, std::int64_t ldw, std::int64_t rows, std::int64_t red,
                    float* dst);

// AVX2 + FMA (brgemm_avx2.cpp): the same tiles and packed weights, 16 channels at a time; run
// tiles of 6 pixels (12 when the channel tile has at most 8 channels; a tile's last 17-24
// channels as one part of 4 pixels by 24).
void br_tile_avx2(const BrTile& t);
void br_run_tile_avx2(const BrRunTile& t);
int br_run_pixels_avx2(int nk);
void br_pack_avx2(const float* w, std::int64_t ldw, std::int64_t rows, std::int64_t red, float* dst);  // parts contiguous

}  // namespace tessera::dnn::conv
