// Depthwise convolution kernels (groups == C == K), per ISA: the row arguments, the per-ISA
// kernel tables, and the kernels written once over a vector traits type `S` (DwBody<S>), which
// depthwise_avx512.cpp, depthwise_avx2.cpp and depthwise_generic.cpp instantiate with their own
// traits (declared in an anonymous namespace, so every instantiation stays in the object
// compiled with its ISA's flags). S provides:
//   V, Mask, kWidth           the vector type, its lane mask type, lanes per vector
//   kMaxNv                    vectors per channels-last channel block (1 or 2)
//   kBlock                    output pixels per channels-last register block
//   kNchwVecs                 vectors per row in a channels-first block of kDwNchwRows rows
//   zero, set1, load, store   as usual (unaligned loads and stores)
//   mask(n), mask_range(l, h) the first n lanes (0 < n < kWidth); lanes [l, h)
//   load_m, store_m           masked: lanes outside the mask are neither read nor written
//                             (loads give 0 there)
//   fmadd(a, b, c)            a*b + c; fmadd_m(a, b, c, m): the same in the lanes of m, c
//                             elsewhere
//   load_s2(p)                p[0], p[2], ..., p[2*(kWidth-1)], reading nothing past the last
//   pin(v)                    v, held in a register (stops the compiler from folding one load
//                             into the memory operands of several instructions)
//   step(p, n)                p + n, kept a pointer increment (not per-pixel offsets)
//   add, hsum(v)              add; horizontal sum in a fixed order
//   fma1(a, b, c)             scalar, fused exactly when fmadd is
//
// Every forward output element is a chain of fmadd from zero over the taps inside the input
// in tap order (kd, kh, kw), whichever code path (interior block, checked block, edge pixel,
// tail) computes it; which path computes it depends on the shape only, so the result does not
// depend on how rows and channels are split over threads.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessera::dnn::conv {

// One output row (fixed n, od, oh) of a channels-last (NHWC / NDHWC) forward convolution.
struct DwRowNhwc {
  const float* const* x;  // the input rows under the window, inside the image, in tap order;
                          // each points at pixel 0, channel 0 (pixel stride C)
  const float* const* w;  // their weights: tap kw of channel c at w[r][kw * C + c]
  int rows;               // number of rows (0: the window lies wholly in the padding)
  float* y;               // the output row at pixel 0, channel 0 (pixel stride C)
  std::int64_t C, IW, OW, KW, sw, dil, pw;  // along w: stride, dilation, left padding
  bool prefetch = false;  // x and y lie past the last-level cache: ask for the next block's lines
};

// One output row of one (n, c) plane of a channels-first forward convolution.
struct DwRowNchw {
  const float* const* x;  // input rows under the window at element 0
  const float* const* w;  // their weights: w[r][kw]
  int rows;
  float* y;
  std::int64_t IW, OW, KW, sw, dil, pw;
};

// Backward weights, one output row of dy against the input rows under the window:
// acc[r][kw * cs + c] += sum over ow of dy[ow * ps + c] * x[r][iw(ow, kw) * ps + c], the sum
// over ow in a fixed order. Channels-last: channels [c0, c1), pixel stride ps = C.
// Channels-first: one channel (c = 0, ps = 1). cs: the accumulators' stride between taps.
struct DwBwdRow {
  const float* const* x;
  float* const* acc;
  int rows;
  const float* dy;
  std::int64_t ps, cs, IW, OW, KW, sw, dil, pw;
};

constexpr int kDwNchwRows = 4;

struct DwKernels {
  const char* name;
  // Channels [c0, c1) of one output row.
  void (*fwd_nhwc)(const DwRowNhwc& a, std::int64_t c0, std::int64_t c1);
  // n <= kDwNchwRows output rows of one (n, c) plane whose windows cover the same kernel rows.
  void (*fwd_nchw)(const DwRowNchw* rows, int n);
  void (*bwdw_nhwc)(const DwBwdRow& a, std::int64_t c0, std::int64_t c1);
  void (*bwdw_nchw)(const DwBwdRow& a);
  // dst[j * ds + i] = src[i * ss + j] for i < rows, j < cols.
  void (*transpose)(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ss,
                    float* dst, std::int64_t ds);
  // Channels [c0, c1) of `pixels` pixels (pixel stride C in both) from src to dst with
  // non-temporal stores, which skip reading dst's lines first; dst + c0 64-byte aligned and
  // C, c0, c1 multiples of 16. Then stream_fence before the data is read. Null in the generic
  // table (its outputs are stored).
  void (*stream_pixels)(const float* src, float* dst, std::int64_t pixels, std::int64_t C,
                        std::int64_t c0, std::int64_t c1);
  void (*stream_fence)();
  // Whether outputs past the cache are streamed when the input is read in place (not staged
  // through depthwise.cpp's row ring).
  bool stream_unstaged;
};
extern const DwKernels kDwGeneric;
extern const DwKernels kDwAvx2;
extern const DwKernels kDwAvx512;

// ---- the kernels, written once ---------------------------------------------------------------
// Output columns [lo, hi) have every tap inside the input (the interior); the rest are edges.
struct DwSpan {
  std::int64_t lo, hi;
};

template <class S>
struct DwBody {
  using i64 = std::int64_t;
  using V = typename S::V;
  using M = typename S::Mask;
  static constexpr i64 kW = S::kWidth;

  static DwSpan interior(i64 IW, i64 OW, i64 KW, i64 sw, i64 dil, i64 pw) {
    i64 lo = (pw + sw - 1) / sw;  // first ow with ow*sw - pw >= 0
    if (lo > OW) lo = OW;
    const i64 last = IW - 1 + pw - (KW - 1) * dil;  // ow*sw <= last
    i64 hi = last < 0 ? 0 : last / sw + 1;
    if (hi > OW) hi = OW;
    if (hi < lo) hi = lo;
    return {lo, hi};
  }

  template <bool Tail>
  static V ld(const float* p, M m) {
    if constexpr (Tail)
      return S::load_m(p, m);
    else
      return S::load(p);
  }
  template <bool Tail>
  static void st(float* p, V v, M m) {
    if constexpr (Tail)
      S::store_m(p, v, m);
    else
      S::store(p, v);
  }

  // ---- forward, channels-last: output pixels x channel vectors in registers ----------------
  // One pixel, every tap checked (the edges).
  template <int NV, bool Tail>
  static void pixel(const DwRowNhwc& a, i64 c, M m, i64 ow) {
    V acc[NV];
    for (int v = 0; v < NV; ++v) acc[v] = S::zero();
    const i64 base = ow * a.sw - a.pw;
    for (int r = 0; r < a.rows; ++r) {
      const float* xr = a.x[r] + c;
      const float* wr = a.w[r] + c;
      for (i64 kw = 0; kw < a.KW; ++kw) {
        const i64 iw = base + kw * a.dil;
        if (iw < 0 || iw >= a.IW) continue;
        for (int v = 0; v < NV; ++v)
          acc[v] = S::fmadd(ld<Tail>(xr + iw * a.C + v * kW, m),
                            ld<Tail>(wr + kw * a.C + v * kW, m), acc[v]);
      }
    }
    for (int v = 0; v < NV; ++v) st<Tail>(a.y + ow * a.C + c + v * kW, acc[v], m);
  }

  // B pixels from ow0, kernel width K with dilation 1 and stride SW known, for the channel
  // blocks from c to cend in one call (each channel block a call: 4-14% slower on Zen 3): the
  // (B-1)*SW + K input pixels of a row are loaded once each and feed every output they touch;
  // the row's K weights stay in registers. Chk: the block reaches into the padding, so input
  // pixels outside the row are skipped (the taps they would feed are left out, as everywhere).
  template <int NV, bool Tail, int B, int K, int SW, bool Chk>
  static void block_fixed(const DwRowNhwc& a, i64 c, M m, i64 ow0, i64 cend) {
    const i64 C = a.C, iw0 = ow0 * SW - a.pw;
    const i64 o[4] = {0, C, 2 * C, 3 * C};
    for (; c < cend; c += NV * kW) {
      V acc[B][NV];
#pragma GCC unroll 16
      for (int j = 0; j < B; ++j)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[j][v] = S::zero();
      for (int r = 0; r < a.rows; ++r) {
        const float* xr = a.x[r] + iw0 * C + c;  // input pixel i of the block at xr + i * C
        const float* wr = a.w[r] + c;
        V wv[K][NV];
#pragma GCC unroll 8
        for (int kw = 0; kw < K; ++kw)
#pragma GCC unroll 2
          for (int v = 0; v < NV; ++v) wv[kw][v] = ld<Tail>(wr + kw * C + v * kW, m);
        constexpr int kSpan = (B - 1) * SW + K;
        // Input pixel i at xg + o[i % 4]: four pixels from one pointer, stepped (a register
        // add) a group at a time; a step a pixel cost an add per load (2 threads, Zen 3,
        // in-process A/B: MobileNet-V2's depthwise layers 0.64-0.97 of the time, b2_dw 0.113 ->
        // 0.107 ms, b14_dw 0.025 -> 0.016).
        const float* xg = xr;
#pragma GCC unroll 64
        for (int i = 0; i < kSpan; ++i) {
          const float* xp = xg + o[i % 4];
          if (i % 4 == 3) xg = S::step(xg, 4 * C);
          if constexpr (Chk)
            if (iw0 + i < 0 || iw0 + i >= a.IW) continue;
          V xv[NV];
#pragma GCC unroll 2
          for (int v = 0; v < NV; ++v) xv[v] = S::pin(ld<Tail>(xp + v * kW, m));
#pragma GCC unroll 8
          for (int kw = 0; kw < K; ++kw) {
            const int d = i - kw;
            if (d < 0 || d % SW != 0 || d / SW >= B) continue;
#pragma GCC unroll 2
            for (int v = 0; v < NV; ++v) acc[d / SW][v] = S::fmadd(xv[v], wv[kw][v], acc[d / SW][v]);
          }
        }
      }
#pragma GCC unroll 16
      for (int j = 0; j < B; ++j)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) st<Tail>(a.y + (ow0 + j) * C + c + v * kW, acc[j][v], m);
    }
  }

  // Pixels [ow, ow + width) (width <= B) of channel blocks [c, cend), NV vectors apart.
  template <int NV, bool Tail, int K, int SW, int B = S::kBlock>
  static void fixed_width(const DwRowNhwc& a, i64 c, M m, i64 ow, i64 width, bool chk, i64 cend) {
    if constexpr (B > 1)
      if (width < B) return fixed_width<NV, Tail, K, SW, B - 1>(a, c, m, ow, width, chk, cend);
    if (chk)
      block_fixed<NV, Tail, B, K, SW, true>(a, c, m, ow, cend);
    else
      block_fixed<NV, Tail, B, K, SW, false>(a, c, m, ow, cend);
  }

  // Pixel blocks of at most kBlock: calls f(ow, width, chk), chk when the block reaches into
  // the padding (it then checks each input pixel). With split_edges the edge pixels run as
  // blocks of their own and the interior in near-equal blocks (14 = 7 + 7); else the whole
  // row is cut into near-equal blocks. Checking costs a block about 1.8x its time at stride 2
  // (MobileNet-V2's b2_dw, AVX2), so strided rows keep the checks off their interior (1
  // thread, Zen 3, in-process A/B: b2_dw 0.161 -> 0.157 ms, b4_dw 0.066 -> 0.061, b7_dw 0.025
  // -> 0.022). Stride-1 rows are not split: their one-pixel edge blocks (9 weight loads for 9
  // FMAs a channel vector) cost more than the checks (rows of 14 or 28 up to 7% slower split,
  // 56 and 112 2-10%: b3_dw, b1_dw at mb1 and mb8, session 50).
  template <typename F>
  static void pixel_blocks(i64 OW, DwSpan s, bool split_edges, F&& f) {
    constexpr int B = S::kBlock;
    auto blocks = [&](i64 lo, i64 hi, bool chk) {  // near-equal blocks over [lo, hi)
      if (lo >= hi) return;
      const i64 nb = (hi - lo + B - 1) / B, base = (hi - lo) / nb, extra = (hi - lo) % nb;
      for (i64 k = 0, ow = lo; k < nb; ++k) {
        const i64 width = base + (k < extra ? 1 : 0);
        f(ow, width, chk || ow < s.lo || ow + width > s.hi);
        ow += width;
      }
    };
    if (!split_edges || OW <= B) return blocks(0, OW, false);
    blocks(0, s.lo, true);
    blocks(s.lo, s.hi, false);
    blocks(s.hi, OW, true);
  }

  // Channels [c0, c1) of a row of a fixed shape, each pixel block through every channel block.
  template <int K, int SW>
  static void row_fixed(const DwRowNhwc& a, i64 c0, i64 c1, DwSpan s) {
    const M none{};
    pixel_blocks(a.OW, s, SW > 1, [&](i64 ow, i64 width, bool chk) {
      // With x past the caches (a.prefetch), the next block's new input pixels asked for,
      // every line of channels [c0, c1): a block reads each row's pixels a channel vector at a
      // time, lines a pixel apart, which the hardware prefetchers do not follow (MobileNet-V2's
      // b3_dw at mb8, x and y past the LLC, Zen 3: 1 thread 5.6-5.9 -> 3.8-4.5 ms, 2 threads
      // 2.9-3.1 -> 2.1-2.2).
      if (a.prefetch) {
        const i64 pa = std::max<i64>(0, (ow + width - 1) * SW - a.pw + K);
        const i64 pb = std::min<i64>(a.IW, (ow + 2 * width - 1) * SW - a.pw + K);
        for (int r = 0; r < a.rows; ++r)
          for (i64 i = pa; i < pb; ++i)
            for (i64 cc = c0; cc < c1; cc += 64 / static_cast<i64>(sizeof(float)))
              __builtin_prefetch(a.x[r] + i * a.C + cc);
      }
      i64 c = c0;
      if constexpr (S::kMaxNv >= 2) {
        const i64 e2 = c0 + (c1 - c0) / (2 * kW) * (2 * kW);
        if (c < e2) fixed_width<2, false, K, SW>(a, c, none, ow, width, chk, e2);
        c = e2;
      }
      const i64 e1 = c + (c1 - c) / kW * kW;
      if (c < e1) fixed_width<1, false, K, SW>(a, c, none, ow, width, chk, e1);
      c = e1;
      if (c < c1) fixed_width<1, true, K, SW>(a, c, S::mask(c1 - c), ow, width, chk, c + kW);
    });
  }

  // B interior pixels, any kernel width, stride and dilation.
  template <int NV, bool Tail, int B>
  static void block_any(const DwRowNhwc& a, i64 c, M m, i64 ow0) {
    V acc[B][NV];
#pragma GCC unroll 16
    for (int j = 0; j < B; ++j)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[j][v] = S::zero();
    const i64 C = a.C, step = a.sw * C;
    for (int r = 0; r < a.rows; ++r) {
      const float* wr = a.w[r] + c;
      for (i64 kw = 0; kw < a.KW; ++kw) {
        const float* xp = a.x[r] + (ow0 * a.sw - a.pw + kw * a.dil) * C + c;
        V wv[NV];
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) wv[v] = ld<Tail>(wr + kw * C + v * kW, m);
#pragma GCC unroll 16
        for (int j = 0; j < B; ++j)
#pragma GCC unroll 2
          for (int v = 0; v < NV; ++v)
            acc[j][v] = S::fmadd(ld<Tail>(xp + j * step + v * kW, m), wv[v], acc[j][v]);
      }
    }
#pragma GCC unroll 16
    for (int j = 0; j < B; ++j)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) st<Tail>(a.y + (ow0 + j) * C + c + v * kW, acc[j][v], m);
  }

  // A row of any shape: edge pixels checked one by one, the interior in blocks of B, then
  // 8, 4, 2, 1.
  template <int NV, bool Tail>
  static void row_any(const DwRowNhwc& a, i64 c, M m, DwSpan s) {
    constexpr int B = S::kBlock / NV;
    for (i64 ow = 0; ow < s.lo; ++ow) pixel<NV, Tail>(a, c, m, ow);
    i64 ow = s.lo;
    for (; ow + B <= s.hi; ow += B) block_any<NV, Tail, B>(a, c, m, ow);
    if constexpr (B > 8)
      if (ow + 8 <= s.hi) block_any<NV, Tail, 8>(a, c, m, ow), ow += 8;
    if constexpr (B > 4)
      if (ow + 4 <= s.hi) block_any<NV, Tail, 4>(a, c, m, ow), ow += 4;
    if constexpr (B > 2)
      if (ow + 2 <= s.hi) block_any<NV, Tail, 2>(a, c, m, ow), ow += 2;
    if constexpr (B > 1)
      if (ow + 1 <= s.hi) block_any<NV, Tail, 1>(a, c, m, ow);
    for (ow = s.hi; ow < a.OW; ++ow) pixel<NV, Tail>(a, c, m, ow);
  }

  // Channels [c0, c1) of one output row. Fixed shapes (3 or 5 wide, stride 1 or 2, no
  // dilation) pixel block by pixel block, each through every channel block, so the row is read
  // and written in address order; any other shape channel block by channel block (kMaxNv
  // vectors, then single vectors, then a masked tail), each sweeping the row.
  static void fwd_nhwc(const DwRowNhwc& a, i64 c0, i64 c1) {
    const DwSpan s = interior(a.IW, a.OW, a.KW, a.sw, a.dil, a.pw);
    if (a.dil == 1 && (a.KW == 3 || a.KW == 5) && (a.sw == 1 || a.sw == 2)) {
      if (a.KW == 3) {
        if (a.sw == 1)
          row_fixed<3, 1>(a, c0, c1, s);
        else
          row_fixed<3, 2>(a, c0, c1, s);
      } else {
        if (a.sw == 1)
          row_fixed<5, 1>(a, c0, c1, s);
        else
          row_fixed<5, 2>(a, c0, c1, s);
      }
      return;
    }
    const M none{};
    i64 c = c0;
    if constexpr (S::kMaxNv >= 2)
      for (; c + 2 * kW <= c1; c += 2 * kW) row_any<2, false>(a, c, none, s);
    for (; c + kW <= c1; c += kW) row_any<1, false>(a, c, none, s);
    if (c < c1) row_any<1, true>(a, c, S::mask(c1 - c), s);
  }

  // ---- forward, channels-first: vectors along the output rows ---------------------------------
  static float pixel_scalar(const DwRowNchw& a, i64 ow) {
    float acc = 0.0f;
    const i64 base = ow * a.sw - a.pw;
    for (int r = 0; r < a.rows; ++r)
      for (i64 kw = 0; kw < a.KW; ++kw) {
        const i64 iw = base + kw * a.dil;
        if (iw < 0 || iw >= a.IW) continue;
        acc = S::fma1(a.x[r][iw], a.w[r][kw], acc);
      }
    return acc;
  }

  // R rows (alike windows) x NV vectors of interior outputs from ow0, stride SW (1 or 2); the
  // last vector masked by m when Tail (stride 1 only).
  template <int R, int NV, bool Tail, int SW>
  static void nchw_block(const DwRowNchw* rows, i64 ow0, M m) {
    V acc[R][NV];
#pragma GCC unroll 4
    for (int g = 0; g < R; ++g)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[g][v] = S::zero();
    const DwRowNchw& a = rows[0];
    for (int r = 0; r < a.rows; ++r) {
      const float* xp[R];
#pragma GCC unroll 4
      for (int g = 0; g < R; ++g) xp[g] = rows[g].x[r] + ow0 * SW - a.pw;
      for (i64 kw = 0; kw < a.KW; ++kw) {
        const V wv = S::set1(a.w[r][kw]);
        const i64 off = kw * a.dil;
#pragma GCC unroll 4
        for (int g = 0; g < R; ++g)
#pragma GCC unroll 8
          for (int v = 0; v < NV; ++v) {
            const float* p = xp[g] + off + v * kW * SW;
            V xv;
            if constexpr (SW == 2)
              xv = S::load_s2(p);
            else if (Tail && v == NV - 1)
              xv = S::load_m(p, m);
            else
              xv = S::load(p);
            acc[g][v] = S::fmadd(xv, wv, acc[g][v]);
          }
      }
    }
#pragma GCC unroll 4
    for (int g = 0; g < R; ++g)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        if (Tail && v == NV - 1)
          S::store_m(rows[g].y + ow0 + v * kW, acc[g][v], m);
        else
          S::store(rows[g].y + ow0 + v * kW, acc[g][v]);
      }
  }

  // nv (1..NV) vectors from ow0, the last masked when tail.
  template <int R, int SW, int NV = S::kNchwVecs>
  static void nchw_part(const DwRowNchw* rows, i64 ow0, int nv, bool tail, M m) {
    if constexpr (NV > 1)
      if (nv < NV) return nchw_part<R, SW, NV - 1>(rows, ow0, nv, tail, m);
    if (tail)
      nchw_block<R, NV, SW == 1, SW>(rows, ow0, m);
    else
      nchw_block<R, NV, false, SW>(rows, ow0, m);
  }

  // Stride 1: the n <= kW outputs from ow0 of R rows, one vector each, every tap's lanes
  // checked against the row (masked loads and masked fmadd, so taps outside are skipped).
  template <int R>
  static void nchw_checked(const DwRowNchw* rows, i64 ow0, i64 n) {
    const DwRowNchw& a = rows[0];
    const M lanes = n < kW ? S::mask_range(0, n) : S::mask_range(0, kW);
    V acc[R];
#pragma GCC unroll 4
    for (int g = 0; g < R; ++g) acc[g] = S::zero();
    for (int r = 0; r < a.rows; ++r)
      for (i64 kw = 0; kw < a.KW; ++kw) {
        const i64 base = ow0 - a.pw + kw * a.dil;  // input column of lane 0
        const i64 lo = base < 0 ? -base : 0, hi = a.IW - base < n ? a.IW - base : n;
        if (lo >= hi) continue;
        const M mk = S::mask_range(lo, hi);
        const V wv = S::set1(a.w[r][kw]);
#pragma GCC unroll 4
        for (int g = 0; g < R; ++g)
          acc[g] = S::fmadd_m(S::load_m(rows[g].x[r] + base, mk), wv, acc[g], mk);
      }
#pragma GCC unroll 4
    for (int g = 0; g < R; ++g) S::store_m(rows[g].y + ow0, acc[g], lanes);
  }

  // R output rows whose windows cover the same kernel rows (so the same weights).
  template <int R>
  static void nchw_rows(const DwRowNchw* rows) {
    const DwRowNchw& a = rows[0];
    const DwSpan s = interior(a.IW, a.OW, a.KW, a.sw, a.dil, a.pw);
    constexpr int NV = S::kNchwVecs;
    const M none{};
    if (a.sw == 1) {
      i64 ow = 0;
      for (; ow < s.lo; ow += kW) nchw_checked<R>(rows, ow, std::min<i64>(kW, a.OW - ow));
      if (ow < s.hi) {
        for (; ow + NV * kW <= s.hi; ow += NV * kW) nchw_block<R, NV, false, 1>(rows, ow, none);
        const i64 nv = (s.hi - ow) / kW;
        if (nv > 0) nchw_part<R, 1>(rows, ow, static_cast<int>(nv), false, none);
        ow += nv * kW;
      }
      for (; ow < a.OW; ow += kW) nchw_checked<R>(rows, ow, std::min<i64>(kW, a.OW - ow));
      return;
    }
    for (int g = 0; g < R; ++g) {
      for (i64 ow = 0; ow < s.lo; ++ow) rows[g].y[ow] = pixel_scalar(rows[g], ow);
      for (i64 ow = s.hi; ow < a.OW; ++ow) rows[g].y[ow] = pixel_scalar(rows[g], ow);
    }
    i64 ow = s.lo;
    if (a.sw == 2) {
      for (; ow + NV * kW <= s.hi; ow += NV * kW) nchw_block<R, NV, false, 2>(rows, ow, none);
      const i64 nv = (s.hi - ow) / kW;
      if (nv > 0) nchw_part<R, 2>(rows, ow, static_cast<int>(nv), false, none);
      ow += nv * kW;
    }
    for (; ow < s.hi; ++ow)
      for (int g = 0; g < R; ++g) rows[g].y[ow] = pixel_scalar(rows[g], ow);
  }

  // n <= kNchwRows output rows of one plane with alike windows.
  static void fwd_nchw(const DwRowNchw* rows, int n) {
    switch (n) {
      case 4:
        nchw_rows<4>(rows);
        break;
      case 3:
        nchw_rows<3>(rows);
        break;
      case 2:
        nchw_rows<2>(rows);
        break;
      default:
        nchw_rows<1>(rows);
        break;
    }
  }

  // ---- backward weights ------------------------------------------------------------------------
  // Output columns whose tap kw lies inside the input: [lo, hi).
  static DwSpan tap_span(const DwBwdRow& a, i64 kw) {
    const i64 off = kw * a.dil - a.pw;  // iw = ow*sw + off
    i64 lo = off >= 0 ? 0 : (-off + a.sw - 1) / a.sw;
    i64 hi = a.IW - 1 - off < 0 ? 0 : (a.IW - 1 - off) / a.sw + 1;
    if (hi > a.OW) hi = a.OW;
    if (lo > hi) lo = hi;
    return {lo, hi};
  }

  // Channels-last: four partial sums over ow (ow - lo mod 4), combined (s0 + s1) + (s2 + s3).
  template <bool Tail>
  static void bwdw_channels(const DwBwdRow& a, i64 c, M m) {
    const i64 ps = a.ps;
    for (int r = 0; r < a.rows; ++r)
      for (i64 kw = 0; kw < a.KW; ++kw) {
        const DwSpan s = tap_span(a, kw);
        if (s.lo >= s.hi) continue;
        const float* dy = a.dy + s.lo * ps + c;
        const float* x = a.x[r] + (s.lo * a.sw + kw * a.dil - a.pw) * ps + c;
        const i64 xstep = a.sw * ps, n = s.hi - s.lo;
        V s0 = S::zero(), s1 = S::zero(), s2 = S::zero(), s3 = S::zero();
        i64 i = 0;
        for (; i + 4 <= n; i += 4) {
          s0 = S::fmadd(ld<Tail>(dy + (i + 0) * ps, m), ld<Tail>(x + (i + 0) * xstep, m), s0);
          s1 = S::fmadd(ld<Tail>(dy + (i + 1) * ps, m), ld<Tail>(x + (i + 1) * xstep, m), s1);
          s2 = S::fmadd(ld<Tail>(dy + (i + 2) * ps, m), ld<Tail>(x + (i + 2) * xstep, m), s2);
          s3 = S::fmadd(ld<Tail>(dy + (i + 3) * ps, m), ld<Tail>(x + (i + 3) * xstep, m), s3);
        }
        if (i < n) s0 = S::fmadd(ld<Tail>(dy + i * ps, m), ld<Tail>(x + i * xstep, m), s0), ++i;
        if (i < n) s1 = S::fmadd(ld<Tail>(dy + i * ps, m), ld<Tail>(x + i * xstep, m), s1), ++i;
        if (i < n) s2 = S::fmadd(ld<Tail>(dy + i * ps, m), ld<Tail>(x + i * xstep, m), s2);
        float* acc = a.acc[r] + kw * a.cs + c;
        st<Tail>(acc, S::add(ld<Tail>(acc, m), S::add(S::add(s0, s1), S::add(s2, s3))), m);
      }
  }

  // Channels-last, kernel width K with dilation 1 and stride SW known: U output pixels of
  // window row r; their dy and the (U-1)*SW + K input pixels are loaded once each. Partial
  // sums acc[kw][u % 2]. Chk: the block reaches into the padding (input pixels checked).
  template <bool Tail, int K, int SW, int U, bool Chk>
  static void bwdw_block(const DwBwdRow& a, int r, i64 c, M m, i64 ow0, V (&acc)[K][2]) {
    const i64 ps = a.ps, iw0 = ow0 * SW - a.pw;
    V d[U];
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) d[u] = S::pin(ld<Tail>(a.dy + (ow0 + u) * ps + c, m));
    const float* xp = a.x[r] + iw0 * ps + c;
    constexpr int kSpan = (U - 1) * SW + K;
#pragma GCC unroll 32
    for (int i = 0; i < kSpan; ++i, xp = S::step(xp, ps)) {
      if constexpr (Chk)
        if (iw0 + i < 0 || iw0 + i >= a.IW) continue;
      const V xv = S::pin(ld<Tail>(xp, m));
#pragma GCC unroll 8
      for (int kw = 0; kw < K; ++kw) {
        const int dd = i - kw;
        if (dd < 0 || dd % SW != 0 || dd / SW >= U) continue;
        acc[kw][(dd / SW) % 2] = S::fmadd(d[dd / SW], xv, acc[kw][(dd / SW) % 2]);
      }
    }
  }

  template <bool Tail, int K, int SW, int U>
  static void bwdw_at(const DwBwdRow& a, int r, i64 c, M m, i64 ow, DwSpan s, V (&acc)[K][2]) {
    if (ow < s.lo || ow + U > s.hi)
      bwdw_block<Tail, K, SW, U, true>(a, r, c, m, ow, acc);
    else
      bwdw_block<Tail, K, SW, U, false>(a, r, c, m, ow, acc);
  }

  // Every window row of one output row, one channel vector: blocks of 4 output pixels, then
  // 2, 1; the row's sums added to acc[r].
  template <bool Tail, int K, int SW>
  static void bwdw_fixed(const DwBwdRow& a, i64 c, M m, DwSpan s) {
    for (int r = 0; r < a.rows; ++r) {
      V acc[K][2];
      for (int kw = 0; kw < K; ++kw) acc[kw][0] = acc[kw][1] = S::zero();
      i64 ow = 0;
      for (; ow + 4 <= a.OW; ow += 4) bwdw_at<Tail, K, SW, 4>(a, r, c, m, ow, s, acc);
      if (ow + 2 <= a.OW) bwdw_at<Tail, K, SW, 2>(a, r, c, m, ow, s, acc), ow += 2;
      if (ow < a.OW) bwdw_at<Tail, K, SW, 1>(a, r, c, m, ow, s, acc);
      for (int kw = 0; kw < K; ++kw) {
        float* out = a.acc[r] + kw * a.cs + c;
        st<Tail>(out, S::add(ld<Tail>(out, m), S::add(acc[kw][0], acc[kw][1])), m);
      }
    }
  }

  template <bool Tail>
  static void bwdw_vector(const DwBwdRow& a, i64 c, M m, DwSpan s) {
    if (a.dil == 1 && a.KW == 3 && a.sw == 1)
      bwdw_fixed<Tail, 3, 1>(a, c, m, s);
    else if (a.dil == 1 && a.KW == 3 && a.sw == 2)
      bwdw_fixed<Tail, 3, 2>(a, c, m, s);
    else if (a.dil == 1 && a.KW == 5 && a.sw == 1)
      bwdw_fixed<Tail, 5, 1>(a, c, m, s);
    else if (a.dil == 1 && a.KW == 5 && a.sw == 2)
      bwdw_fixed<Tail, 5, 2>(a, c, m, s);
    else
      bwdw_channels<Tail>(a, c, m);
  }

  static void bwdw_nhwc(const DwBwdRow& a, i64 c0, i64 c1) {
    const DwSpan s = interior(a.IW, a.OW, a.KW, a.sw, a.dil, a.pw);
    const M none{};
    i64 c = c0;
    for (; c + kW <= c1; c += kW) bwdw_vector<false>(a, c, none, s);
    if (c < c1) bwdw_vector<true>(a, c, S::mask(c1 - c), s);
  }

  // Channels-first: vectors along ow (stride 1 or 2), four partial vectors, then hsum; other
  // strides and the tail scalar, in order.
  static void bwdw_nchw(const DwBwdRow& a) {
    for (int r = 0; r < a.rows; ++r)
      for (i64 kw = 0; kw < a.KW; ++kw) {
        const DwSpan s = tap_span(a, kw);
        if (s.lo >= s.hi) continue;
        const float* dy = a.dy + s.lo;
        const float* x = a.x[r] + s.lo * a.sw + kw * a.dil - a.pw;
        const i64 n = s.hi - s.lo;
        V v0 = S::zero(), v1 = S::zero(), v2 = S::zero(), v3 = S::zero();
        i64 i = 0;
        if (a.sw == 1) {
          for (; i + 4 * kW <= n; i += 4 * kW) {
            v0 = S::fmadd(S::load(dy + i), S::load(x + i), v0);
            v1 = S::fmadd(S::load(dy + i + kW), S::load(x + i + kW), v1);
            v2 = S::fmadd(S::load(dy + i + 2 * kW), S::load(x + i + 2 * kW), v2);
            v3 = S::fmadd(S::load(dy + i + 3 * kW), S::load(x + i + 3 * kW), v3);
          }
          for (; i + kW <= n; i += kW) v0 = S::fmadd(S::load(dy + i), S::load(x + i), v0);
        } else if (a.sw == 2) {
          for (; i + 4 * kW <= n; i += 4 * kW) {
            v0 = S::fmadd(S::load(dy + i), S::load_s2(x + 2 * i), v0);
            v1 = S::fmadd(S::load(dy + i + kW), S::load_s2(x + 2 * (i + kW)), v1);
            v2 = S::fmadd(S::load(dy + i + 2 * kW), S::load_s2(x + 2 * (i + 2 * kW)), v2);
            v3 = S::fmadd(S::load(dy + i + 3 * kW), S::load_s2(x + 2 * (i + 3 * kW)), v3);
          }
          for (; i + kW <= n; i += kW) v0 = S::fmadd(S::load(dy + i), S::load_s2(x + 2 * i), v0);
        }
        float sum = S::hsum(S::add(S::add(v0, v1), S::add(v2, v3)));
        for (; i < n; ++i) sum = S::fma1(dy[i], x[i * a.sw], sum);
        a.acc[r][kw * a.cs] += sum;
      }
  }

  // ---- transposes -----------------------------------------------------------------------------
  static void transpose(const float* src, i64 rows, i64 cols, i64 ss, float* dst, i64 ds) {
    for (i64 i = 0; i < rows; ++i)
      for (i64 j = 0; j < cols; ++j) dst[j * ds + i] = src[i * ss + j];
  }

  using TransposeFn = void (*)(const float*, i64, i64, i64, float*, i64);
  using StreamFn = void (*)(const float*, float*, i64, i64, i64, i64);
  static constexpr DwKernels kernels(const char* name, TransposeFn t = transpose, StreamFn stream = nullptr,
                                     void (*fence)() = nullptr, bool stream_unstaged = false) {
    return {name, fwd_nhwc, fwd_nchw, bwdw_nhwc, bwdw_nchw, t, stream, fence, stream_unstaged};
  }
};

}  // namespace tessera::dnn::conv
