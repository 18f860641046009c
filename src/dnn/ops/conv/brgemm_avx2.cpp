// Batch-reduce GEMM tiles, AVX2 + FMA: the tiles of brgemm_kernels.hpp computed 16 channels
// (two ymm) at a time. Sixteen ymm registers hold 6 pixels x 16 channels (12 accumulators,
// two weight vectors and the broadcast), the classic AVX2 GEMM block; a 64-channel tile runs
// as up to four such parts, each re-reading the pixels' rows from L1 and its own contiguous
// weights (br_pack_avx2). Each part is the same chain of fused multiply-adds per output
// element as the AVX-512 tiles (segments in order, then the stored partial sum, bias,
// residual, activation), so every output has the same bits on both ISAs.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "brgemm_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

using i64 = std::int64_t;

// Run tiles: 6 pixels x 16 channels, 12 pixels x 8 channels for a tile of at most 8, and 4
// pixels x 24 channels for the last 17-24 channels of a tile (12 accumulators, three weight
// vectors: 7 loads a step for 12 multiply-adds, where a part of 16 and one of 8 take 15 for
// 18; MobileNet-V2's 24-channel projections).
constexpr int kWidePixels = 6;
constexpr int kNarrowPixels = 12;
constexpr int kThreePixels = 4;
constexpr i64 kBlockBytes = 16 << 10;

__m256i lane_mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256 load_n(const float* p, int n) {
  return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lane_mask(n));
}

// The part's store: nk channels (1..8 NV) of MP pixels at y (pixel stride ldy); the stored
// partial sum added first when accumulating, then bias, residual and the activation (e: the
// tile's epilogue with bias and residual already at this part's first channel and pixel).
template <int MP, int NV>
inline void store(__m256 (&acc)[MP][NV], float* y, i64 ldy, int nk, bool accumulate, const BrEpilogue* e,
                  const float* bias, const float* res) {
  const __m256 zero = _mm256_setzero_ps();
  if (nk >= 8 * NV && e == nullptr) {  // whole vectors, no post-ops: the common case, unbranched
    if (accumulate) {
#pragma GCC unroll 12
      for (int j = 0; j < MP; ++j)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v)
          _mm256_storeu_ps(y + j * ldy + 8 * v, _mm256_add_ps(_mm256_loadu_ps(y + j * ldy + 8 * v), acc[j][v]));
    } else {
#pragma GCC unroll 12
      for (int j = 0; j < MP; ++j)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) _mm256_storeu_ps(y + j * ldy + 8 * v, acc[j][v]);
    }
    return;
  }
#pragma GCC unroll 12
  for (int j = 0; j < MP; ++j) {
    float* yj = y + j * ldy;
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const int n = std::min(8, nk - 8 * v);
      if (n <= 0) break;
      __m256 s = acc[j][v];
      if (accumulate) s = _mm256_add_ps(load_n(yj + 8 * v, n), s);
      if (e) {
        if (bias) s = _mm256_add_ps(s, load_n(bias + 8 * v, n));
        if (res) s = _mm256_add_ps(s, load_n(res + j * ldy + 8 * v, n));
        if (e->relu) s = _mm256_max_ps(s, zero);
        if (e->clip) s = _mm256_min_ps(_mm256_max_ps(s, _mm256_set1_ps(e->lo)), _mm256_set1_ps(e->hi));
        if (e->stream && n == 8) {  // the part's two vectors are one 64-byte line, stored in turn
          _mm256_stream_ps(yj + 8 * v, s);
          continue;
        }
      }
      if (n == 8) _mm256_storeu_ps(yj + 8 * v, s);
      else _mm256_maskstore_ps(yj + 8 * v, lane_mask(n), s);
    }
  }
}

// Per-pixel tile: channels [cb, cb + 8 NV) of the 64-channel tile, MP pixels.
template <int MP, int NV>
void tile_part(const BrTile& t, int cb) {
  __m256 acc[MP][NV];
#pragma GCC unroll 6
  for (int j = 0; j < MP; ++j)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm256_setzero_ps();
  for (int sg = 0; sg < t.nseg; ++sg) {
    const float* xr[MP];
#pragma GCC unroll 6
    for (int j = 0; j < MP; ++j) xr[j] = t.x[sg * kBrPixels + j];
    const float* w = t.w + sg * t.w_seg + cb / 16 * t.w_part;
    for (i64 r = 0; r < t.kc; ++r, w += t.ldw) {
      __m256 wv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) wv[v] = _mm256_loadu_ps(w + 8 * v);
#pragma GCC unroll 6
      for (int j = 0; j < MP; ++j) {
        const __m256 b = _mm256_broadcast_ss(xr[j] + r);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[j][v] = _mm256_fmadd_ps(b, wv[v], acc[j][v]);
      }
    }
  }
  const BrEpilogue* e = t.post;
  store<MP, NV>(acc, t.y + cb, t.ldy, std::min(8 * NV, t.nk - cb), t.accumulate, e,
                e && e->bias ? e->bias + cb : nullptr, e && e->residual ? e->residual + cb : nullptr);
}

// One reduction step of a run tile: the weights at w (vectors 0 and 1; vector 2 at w + wp, the
// next part of 16 channels), pixel j's operand at x + o[j].
template <int MP, int NV>
inline void step(__m256 (&acc)[MP][NV], const float* w, i64 wp, const float* x, const i64 (&o)[MP]) {
  __m256 wv[NV];
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) wv[v] = _mm256_loadu_ps(w + v / 2 * wp + v % 2 * 8);
#pragma GCC unroll 12
  for (int j = 0; j < MP; ++j) {
    const __m256 b = _mm256_broadcast_ss(x + o[j]);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm256_fmadd_ps(b, wv[v], acc[j][v]);
  }
}

// Run tile part: `count` tiles of MP pixels from `off` (one call for all of them: 2-10% faster
// than a call a tile, Zen 3), channels [cb, cb + 8 NV) of channel tile kt. The first part of
// a pixel tile prefetches the next tile's rows a line per reduction step (the AVX-512 run
// tiles' rule: the hardware prefetchers do not follow rows read a column at a time).
template <int MP, int NV>
void run_part(const BrRunTile& t, i64 off, i64 count, int kt, int cb) {
  const i64 ld = t.ldx, xs = t.xstep, ldw = t.ldw, wp = t.w_part;
  const i64 k = kt * kBrChannels + cb;
  const BrEpilogue* e = t.post;
  // Pixel j's operand at x + o[j]: loop-invariant offsets, so the loads take base + index
  // addressing and a step adds to two pointers only. Per-pixel pointers (a group of four
  // pixels each) cost an address computation and more adds a step: a 23-operation step
  // instead of about 30, which on Zen 3 ran the stem (3 -> 32, stride 2) 3-7% faster, and
  // 20% faster in the VM's slow phases (0.48 -> 0.39 ms, 1 thread).
  i64 o[MP];
#pragma GCC unroll 12
  for (int j = 0; j < MP; ++j) o[j] = j * ld;
  for (; count > 0; --count, off += MP) {
    __m256 acc[MP][NV];
#pragma GCC unroll 12
    for (int j = 0; j < MP; ++j)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[j][v] = _mm256_setzero_ps();
    for (int sg = 0; sg < t.nseg; ++sg) {
      const float* x = t.seg[sg].x + off * ld;
      const float* w = t.seg[sg].w + kt * t.w_tile + cb / 16 * t.w_part;
      const float* const wend = w + t.kc * ldw;
      if (kt == 0 && cb == 0) {  // a line of the next tile's rows a step (a loop of its own)
        const float* pf = x + MP * ld;
        const float* const wpf = w + std::min<i64>(t.kc, (MP * ld + 15) / 16) * ldw;
        for (; w != wpf; w += ldw, x += xs, pf += 16) {
          _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T0);
          step<MP, NV>(acc, w, wp, x, o);
        }
      }
      for (; w != wend; w += ldw, x += xs) step<MP, NV>(acc, w, wp, x, o);
    }
    store<MP, NV>(acc, t.y + off * t.ldy + k, t.ldy, std::min(8 * NV, t.nk - cb), t.accumulate, e,
                  e && e->bias ? e->bias + k : nullptr, e && e->residual ? e->residual + off * t.ldy + k : nullptr);
  }
}

using TileFn = void (*)(const BrTile&, int);
template <int NV>
constexpr TileFn kTileRow[kBrPixels] = {tile_part<1, NV>, tile_part<2, NV>, tile_part<3, NV>,
                                        tile_part<4, NV>, tile_part<5, NV>, tile_part<6, NV>};

using RunFn = void (*)(const BrRunTile&, i64, i64, int, int);
template <int NV, int... J>
constexpr std::array<RunFn, sizeof...(J)> run_row(std::integer_sequence<int, J...>) {
  return {run_part<J + 1, NV>...};
}
constexpr auto kRunWide = run_row<2>(std::make_integer_sequence<int, kWidePixels>{});
constexpr auto kRunNarrow = run_row<1>(std::make_integer_sequence<int, kNarrowPixels>{});
constexpr auto kRunThree = run_row<3>(std::make_integer_sequence<int, kThreePixels>{});

}  // namespace

void br_tile_avx2(const BrTile& t) {
  for (int cb = 0; cb < t.nk; cb += 16) (t.nk - cb > 8 ? kTileRow<2> : kTileRow<1>)[t.mp - 1](t, cb);
}

void br_run_tile_avx2(const BrRunTile& t) {
  // Blocks of pixel tiles whose rows take about kBlockBytes, each part through the block's
  // tiles in turn: its weights stay in L1 (2-7% on MobileNet-V2's 1x1 layers, Zen 3).
  const int mp = br_run_pixels_avx2(t.nk);
  const i64 row_bytes = t.kc * t.nseg * static_cast<i64>(sizeof(float));
  const i64 blk = std::max<i64>(1, kBlockBytes / (row_bytes * mp)) * mp;
  for (i64 o0 = 0; o0 < t.mp; o0 += blk) {
    const i64 n = std::min<i64>(t.mp, o0 + blk) - o0;
    for (int kt = 0; kt < t.ntiles; ++kt)
      for (int cb = 0; cb < t.nk; cb += 16) {
        const int left = t.nk - cb;
        const bool three = left > 16 && left <= 24;  // the tile's last part
        const RunFn* fns = three ? kRunThree.data() : left > 8 ? kRunWide.data() : kRunNarrow.data();
        const int h = three ? kThreePixels : left > 8 ? kWidePixels : mp;  // (12 only when nk <= 8)
        const i64 full = n / h, rest = n % h;
        if (full > 0) fns[h - 1](t, o0, full, kt, cb);
        if (rest > 0) fns[rest - 1](t, o0 + full * h, 1, kt, cb);
        if (three) break;
      }
  }
}

int br_run_pixels_avx2(int nk) {
  return nk <= 8 ? kNarrowPixels : nk > 16 && nk <= 24 ? kThreePixels : kWidePixels;
}

void br_pack_avx2(const float* w, i64 ldw, i64 rows, i64 red, float* dst) {
  // Parts of 16 channels, each [red][16] (brgemm_kernels.hpp). Row k of w is read a line (16
  // reduction indices) at a time and scattered down a column of its part.
  for (i64 r0 = 0; r0 < red; r0 += 16) {
    const i64 nr = std::min<i64>(16, red - r0);
    for (i64 k = 0; k < kBrChannels; ++k) {
      float* col = dst + (k / 16 * red + r0) * 16 + k % 16;
      for (i64 r = 0; r < nr; ++r) col[r * 16] = k < rows ? w[k * ldw + r0 + r] : 0.0f;
    }
  }
}

}  // namespace tessera::dnn::conv
