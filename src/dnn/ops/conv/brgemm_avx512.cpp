// Batch-reduce GEMM tiles, AVX-512: up to 6 pixels x 64 channels (24 zmm accumulators). Each
// step of the reduction loads 4 weight vectors and broadcasts one input value per pixel from
// that pixel's own row, so the activations are never copied; six rows stay within the ways of
// an L1 set even when the pixel stride is a multiple of 4 KiB.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "brgemm_kernels.hpp"
#include "tessera/core/cpu.hpp"

namespace tessera::dnn::conv {
namespace {

__mmask16 lanes(int n) { return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u); }

// The tile's last store: y (+ the stored partial sum) (+ bias + residual, relu), with the
// branches on what to add taken once per tile, not per vector.
template <int MP, int NV, bool ACC, bool POST>
inline void store_as(__m512 (&acc)[MP][NV], float* y, std::int64_t ldy, int nk, const BrEpilogue* e,
                     const float* res) {
  const __mmask16 last = lanes(nk - 16 * (NV - 1));
  __m512 bias[NV], lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
  if constexpr (POST) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bias[v] = e->bias ? _mm512_maskz_loadu_ps(v == NV - 1 ? last : lanes(16), e->bias + 16 * v)
                        : _mm512_setzero_ps();
    lo = _mm512_set1_ps(e->lo);
    hi = _mm512_set1_ps(e->hi);
  }
#pragma GCC unroll 24
  for (int j = 0; j < MP; ++j) {
    float* yj = y + j * ldy;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? last : lanes(16);
      __m512 s = acc[j][v];
      if constexpr (ACC) s = _mm512_add_ps(_mm512_maskz_loadu_ps(m, yj + 16 * v), s);
      if constexpr (POST) {
        s = _mm512_add_ps(s, bias[v]);
        if (res) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, res + j * ldy + 16 * v));
        if (e->relu) s = _mm512_max_ps(s, _mm512_setzero_ps());
        if (e->clip) s = _mm512_min_ps(_mm512_max_ps(s, lo), hi);  // a NaN s gives the second operand, lo
        if (e->stream && m == lanes(16)) {
          _mm512_stream_ps(yj + 16 * v, s);
          continue;
        }
      }
      _mm512_mask_storeu_ps(yj + 16 * v, m, s);
    }
  }
}
// `off` pixels and `koff` channels past the tile's first (run tiles called for the later
// pieces and channel tiles of a run).
template <int MP, int NV>
inline void store(__m512 (&acc)[MP][NV], float* y, std::int64_t ldy, int nk, bool accumulate,
                  const BrEpilogue* e, std::int64_t off = 0, std::int64_t koff = 0) {
  y += off * ldy + koff;
  const float* res = e && e->residual ? e->residual + off * ldy + koff : nullptr;
  BrEpilogue shifted;
  if (e && koff != 0) {
    shifted = *e;
    if (shifted.bias) shifted.bias += koff;
    e = &shifted;
  }
  if (accumulate)
    e ? store_as<MP, NV, true, true>(acc, y, ldy, nk, e, res) : store_as<MP, NV, true, false>(acc, y, ldy, nk, e, res);
  else
    e ? store_as<MP, NV, false, true>(acc, y, ldy, nk, e, res) : store_as<MP, NV, false, false>(acc, y, ldy, nk, e, res);
}

template <int MP, int NV>
void tile(const BrTile& t) {
  __m512 acc[MP][NV];
#pragma GCC unroll 8
  for (int j = 0; j < MP; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_setzero_ps();
  for (int sg = 0; sg < t.nseg; ++sg) {
    const float* xr[MP];
#pragma GCC unroll 8
    for (int j = 0; j < MP; ++j) xr[j] = t.x[sg * kBrPixels + j];
    const float* w = t.w + sg * t.w_seg;
    for (std::int64_t r = 0; r < t.kc; ++r, w += t.ldw) {
      __m512 wv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) wv[v] = _mm512_loadu_ps(w + 16 * v);
#pragma GCC unroll 8
      for (int j = 0; j < MP; ++j) {
        const __m512 b = _mm512_set1_ps(xr[j][r]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_fmadd_ps(b, wv[v], acc[j][v]);
      }
    }
  }
  store<MP, NV>(acc, t.y, t.ldy, t.nk, t.accumulate, t.post);
}

// The rows of the next tile (the next pixels of the run) are prefetched a line per reduction
// step: a tile reads its rows a column at a time, one line of each row per 16 steps, which
// the hardware prefetchers do not follow; from L3 that stalled every 16th step (MobileNet-V2
// b3_project at mb8, 14 MB of input, one thread: 4.2 ms without, 2.2-2.4 with; oneDNN 3.5).
// Pixels in groups of four share a pointer: operands at q, q + ldx, q + 2 ldx, q + 3 ldx are
// base + index addressing with ldx and 3 ldx in registers, so a tile of 24 pixels needs six
// pointers, not 24.
template <int MP, int NV>
void run_tile(const BrRunTile& t, std::int64_t off, int kt) {
  constexpr int NG = (MP + 3) / 4;
  __m512 acc[MP][NV];
#pragma GCC unroll 24
  for (int j = 0; j < MP; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_setzero_ps();
  const std::int64_t ld = t.ldx, ld3 = 3 * t.ldx, xs = t.xstep;
  for (int sg = 0; sg < t.nseg; ++sg) {
    const float* q[NG];
#pragma GCC unroll 6
    for (int g = 0; g < NG; ++g) q[g] = t.seg[sg].x + (off + 4 * g) * ld;
    const float* w = t.seg[sg].w + kt * t.w_tile;
    const float* pf = t.seg[sg].x + (off + MP) * ld;  // the next tile's rows
    const std::int64_t lines = kt == 0 ? (MP * ld + 15) / 16 : 0;
    for (std::int64_t r = 0; r < t.kc; ++r, w += t.ldw) {
      if (r < lines) _mm_prefetch(reinterpret_cast<const char*>(pf + 16 * r), _MM_HINT_T0);
      __m512 wv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) wv[v] = _mm512_loadu_ps(w + 16 * v);
#pragma GCC unroll 24
      for (int j = 0; j < MP; ++j) {
        const float* qj = q[j / 4];
        const int i = j % 4;
        const float* xp = i == 0 ? qj : i == 1 ? qj + ld : i == 2 ? qj + 2 * ld : qj + ld3;
        if constexpr ((MP + 1) * NV >= 32) {
          // No register left for the broadcast: the FMAs read it from memory ({1to16}).
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v)
            __asm__("vfmadd231ps %[x]%{1to16%}, %[w], %[a]" : [a] "+v"(acc[j][v]) : [w] "v"(wv[v]), [x] "m"(*xp));
        } else {
          const __m512 b = _mm512_set1_ps(*xp);
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_fmadd_ps(b, wv[v], acc[j][v]);
        }
      }
#pragma GCC unroll 6
      for (int g = 0; g < NG; ++g) q[g] += xs;
    }
  }
  store<MP, NV>(acc, t.y, t.ldy, t.nk, t.accumulate, t.post, off, kt * kBrChannels);
}

// Run tile of 17..24 channels in three 8-lane vectors (see br_run_pixels).
template <int MP>
void run_tile_y3(const BrRunTile& t, std::int64_t off, int /*kt: always 0, one tile*/) {
  constexpr int NG = (MP + 3) / 4;
  __m256 acc[MP][3];
#pragma GCC unroll 9
  for (int j = 0; j < MP; ++j)
#pragma GCC unroll 3
    for (int v = 0; v < 3; ++v) acc[j][v] = _mm256_setzero_ps();
  const std::int64_t ld = t.ldx, ld3 = 3 * t.ldx, xs = t.xstep;
  for (int sg = 0; sg < t.nseg; ++sg) {
    const float* q[NG];
#pragma GCC unroll 3
    for (int g = 0; g < NG; ++g) q[g] = t.seg[sg].x + (off + 4 * g) * ld;
    const float* w = t.seg[sg].w;
    const float* pf = t.seg[sg].x + (off + MP) * ld;  // the next tile's rows
    const std::int64_t lines = (MP * ld + 15) / 16;
    for (std::int64_t r = 0; r < t.kc; ++r, w += t.ldw) {
      if (r < lines) _mm_prefetch(reinterpret_cast<const char*>(pf + 16 * r), _MM_HINT_T0);
      const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8), w2 = _mm256_loadu_ps(w + 16);
#pragma GCC unroll 9
      for (int j = 0; j < MP; ++j) {
        const float* qj = q[j / 4];
        const int i = j % 4;
        const __m256 b = _mm256_set1_ps(i == 0 ? qj[0] : i == 1 ? qj[ld] : i == 2 ? qj[2 * ld] : qj[ld3]);
        acc[j][0] = _mm256_fmadd_ps(b, w0, acc[j][0]);
        acc[j][1] = _mm256_fmadd_ps(b, w1, acc[j][1]);
        acc[j][2] = _mm256_fmadd_ps(b, w2, acc[j][2]);
      }
#pragma GCC unroll 3
      for (int g = 0; g < NG; ++g) q[g] += xs;
    }
  }
  const __mmask8 last = static_cast<__mmask8>((1u << (t.nk - 16)) - 1u);
  const BrEpilogue* e = t.post;
  for (int j = 0; j < MP; ++j) {
    float* y = t.y + (off + j) * t.ldy;
    for (int v = 0; v < 3; ++v) {
      const __mmask8 m = v == 2 ? last : static_cast<__mmask8>(0xff);
      __m256 s = acc[j][v];
      if (t.accumulate) s = _mm256_add_ps(_mm256_maskz_loadu_ps(m, y + 8 * v), s);
      if (e) {
        if (e->bias) s = _mm256_add_ps(s, _mm256_maskz_loadu_ps(m, e->bias + 8 * v));
        if (e->residual) s = _mm256_add_ps(s, _mm256_maskz_loadu_ps(m, e->residual + (off + j) * t.ldy + 8 * v));
        if (e->relu) s = _mm256_max_ps(s, _mm256_setzero_ps());
        if (e->clip) s = _mm256_min_ps(_mm256_max_ps(s, _mm256_set1_ps(e->lo)), _mm256_set1_ps(e->hi));
      }
      _mm256_mask_storeu_ps(y + 8 * v, m, s);  // (never streamed: half lines)
    }
  }
}

using TileFn = void (*)(const BrTile&);
template <int NV>
constexpr TileFn kRow[kBrPixels] = {tile<1, NV>, tile<2, NV>, tile<3, NV>,
                                    tile<4, NV>, tile<5, NV>, tile<6, NV>};
constexpr const TileFn* kTiles[4] = {kRow<1>, kRow<2>, kRow<3>, kRow<4>};

using RunFn = void (*)(const BrRunTile&, std::int64_t, int);
template <int NV, int... J>
constexpr std::array<RunFn, sizeof...(J)> run_row(std::integer_sequence<int, J...>) {
  return {run_tile<J + 1, NV>...};
}
template <int NV>
constexpr auto kRunRow = run_row<NV>(std::make_integer_sequence<int, kRunPixels[NV - 1]>{});
constexpr const RunFn* kRunTiles[4] = {kRunRow<1>.data(), kRunRow<2>.data(), kRunRow<3>.data(),
                                       kRunRow<4>.data()};
constexpr int kY3Pixels = 9;
constexpr RunFn kRunY3[kY3Pixels] = {run_tile_y3<1>, run_tile_y3<2>, run_tile_y3<3>,
                                     run_tile_y3<4>, run_tile_y3<5>, run_tile_y3<6>,
                                     run_tile_y3<7>, run_tile_y3<8>, run_tile_y3<9>};

// Zen 4 (AMD family 19h with AVX-512) splits 512-bit operations into two 256-bit halves.
bool double_pumped() {
  static const bool yes = [] {
    const CpuInfo& c = cpu_info();
    return c.vendor == "AuthenticAMD" && c.family == 0x19 && c.usable(CpuFeature::kAvx512vl);
  }();
  return yes;
}
bool y3(int nk) { return nk > 16 && nk <= 24 && double_pumped(); }

// In-register transpose of a 16 x 16 block: r[i] lane j <- r[j] lane i.
void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // u[i + j]: column 4L + j of rows i..i+3 in 128-bit lane L
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 w0 = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 w1 = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 x0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 x1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(3, 2, 3, 2));
    r[j] = _mm512_shuffle_f32x4(w0, x0, _MM_SHUFFLE(2, 0, 2, 0));
    r[4 + j] = _mm512_shuffle_f32x4(w0, x0, _MM_SHUFFLE(3, 1, 3, 1));
    r[8 + j] = _mm512_shuffle_f32x4(w1, x1, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + j] = _mm512_shuffle_f32x4(w1, x1, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

}  // namespace

void br_tile_avx512(const BrTile& t) { kTiles[(t.nk + 15) / 16 - 1][t.mp - 1](t); }
void br_run_tile_avx512(const BrRunTile& t) {
  const bool narrow = y3(t.nk);
  const RunFn* row = narrow ? kRunY3 : kRunTiles[(t.nk + 15) / 16 - 1];
  const int mp = narrow ? kY3Pixels : kRunPixels[(t.nk + 15) / 16 - 1];
  for (std::int64_t off = 0; off < t.mp; off += mp) {
    const int n = static_cast<int>(std::min<std::int64_t>(mp, t.mp - off));
    for (int kt = 0; kt < t.ntiles; ++kt) row[n - 1](t, off, kt);
  }
}
int br_run_pixels_avx512(int nk) { return y3(nk) ? kY3Pixels : kRunPixels[(nk + 15) / 16 - 1]; }
void br_stream_fence() { _mm_sfence(); }

void br_pack_avx512(const float* w, std::int64_t ldw, std::int64_t rows, std::int64_t red,
                    float* dst) {
  for (std::int64_t r0 = 0; r0 < red; r0 += 16) {
    const int nr = red - r0 < 16 ? static_cast<int>(red - r0) : 16;
    const __mmask16 m = lanes(nr);
    for (int k0 = 0; k0 < kBrChannels; k0 += 16) {
      __m512 v[16];
      for (int i = 0; i < 16; ++i)
        v[i] = k0 + i < rows ? _mm512_maskz_loadu_ps(m, w + (k0 + i) * ldw + r0) : _mm512_setzero_ps();
      transpose16(v);
      for (int i = 0; i < nr; ++i) _mm512_storeu_ps(dst + (r0 + i) * kBrChannels + k0, v[i]);
    }
  }
}

}  // namespace tessera::dnn::conv
