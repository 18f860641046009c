// Pointwise (1x1) convolution kernels, channels-last: a tile of up to kPwPixels output pixels
// by up to kPwChannels output channels, its reduction read straight from each pixel's input
// row (no packing of the activations) against weights packed once per call.
//
// Packed weights of one channel tile: wp[r * kPwChannels + k] = W[k0 + k][r] for r < red,
// k < kPwChannels (rows past the last output channel are zero).
#pragma once

#include <cstdint>

namespace tessera::dnn::conv {

inline constexpr int kPwPixels = 6;     // 6 x 4 vectors of 16 = 24 accumulator registers
inline constexpr int kPwChannels = 64;

// Post-ops fused into a tile's last store: y = act(y + bias + residual), act relu or none.
struct PwEpilogue {
  const float* bias = nullptr;      // at the tile's first channel
  const float* residual = nullptr;  // at the tile's first pixel and channel, pixel stride ldy
  bool relu = false;
};

struct PwTile {
  const float* const* x;  // the input row of each pixel at the block's first reduction index
  const float* w;         // packed weights at the block's first reduction index
  float* y;               // output of the first pixel at the tile's first channel
  std::int64_t ldy;       // floats between consecutive pixels' outputs
  std::int64_t kc;        // reduction length of the block
  int mp;                 // pixels, 1..kPwPixels
  int nk;                 // channels, 1..kPwChannels
  bool accumulate;        // add to y (a later reduction block) instead of overwriting it
  const PwEpilogue* post; // null: plain store
};

// AVX-512F. Every output element is one chain of fused multiply-adds in reduction order
// (blocks in order, each block added to the stored partial sum), whatever the tile shape.
void pw_tile_avx512(const PwTile& t);
// Packs rows [0, rows) (rows <= kPwChannels) of the row-major matrix w (row stride ldw) over
// reduction indices [0, red) into dst as above; rows in [rows, kPwChannels) are zero.
void pw_pack_avx512(const float* w, std::int64_t ldw, std::int64_t rows, std::int64_t red,
                    float* dst);

}  // namespace tessera::dnn::conv
