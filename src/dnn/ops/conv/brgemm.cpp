// Channels-last forward convolution as batch-reduce GEMM (any kernel, stride, dilation,
// padding, groups) with the tile kernels of brgemm_avx512.cpp (or brgemm_avx2.cpp): the
// weights are packed into 64-channel tiles over the reduction (tap, input channel), per call
// or once by a plan; the activations are read in place. No im2col buffer.
//
// Two kinds of tile read the activations:
//   per-pixel tiles (6 pixels x 64 channels): one row pointer per (output pixel, tap), taps
//     in the padding reading a row of zeros; any problem;
//   run tiles (up to 24 x 16 .. 7 x 64): pixels evenly spaced in memory, one pointer per
//     segment; 1x1 layers (all pixels, or one output row at a time) and few-channel layers
//     whose segments span whole kernel rows (edge pixels take the per-pixel tiles).
//
// Blocking (per work item: a block of output pixels x a block of channel tiles of one group):
//   for each batch (a run of taps over a block of input channels, about 512 reduction steps,
//                   or all of up to 1024 channels of one tap)
//     for each tile of pixels                   (their input rows: L1)
//       for each channel tile: the tile kernel over the batch, accumulating after the first
//                              batch
// The batches depend on the problem only, so every output element is the same chain of
// multiply-adds for any thread count and any split into work items.
#include <algorithm>
#include <memory>

#include "algos.hpp"
#include "brgemm_kernels.hpp"
#include "depthwise_kernels.hpp"
#include "tessera/core/cpu.hpp"
#include "tessera/core/thread_pool.hpp"

namespace tessera::dnn::conv {
namespace {

constexpr std::int64_t kMaxBlockTiles = 4;  // 256 channels
constexpr std::int64_t kBatchSteps = 512;   // reduction steps per batch (over several taps)
constexpr std::int64_t kWholeChannels = 1024;
constexpr std::int64_t kRunMaxChannels = 16;  // segments over whole kernel rows below this
// Weight gradients over whole kernel rows: usable up to 32 input channels, the heuristic's
// choice up to 16, and up to 32 when strided (16 -> 16 channels, 3x3, 28x28, mb64: 1.1-1.5 ms
// against Winograd F4's 2.0-2.5; 32 -> 32 at 14x14: 1.56 against 1.36; 32 -> 64 at 14x14,
// stride 2: 0.87 against im2col's 1.19).
constexpr std::int64_t kWgradRowsMaxChannels = 32;
constexpr std::int64_t kWgradRowsPreferredChannels = 16;

// Input channels per segment: all of them up to 1024 (fewer passes over the partial sums:
// MobileNet-V2's 960-channel projections, mb1, 2-4% faster than with 3 blocks of 320), else
// near-equal blocks of <= 384.
std::int64_t channel_block(std::int64_t Cg) {
  if (Cg <= kWholeChannels) return Cg;
  const std::int64_t blocks = (Cg + 383) / 384;
  return (Cg + blocks - 1) / blocks;
}

struct Batch {
  std::int64_t c0, kc, t0, t1;  // channels [c0, c0 + kc) of taps [t0, t1)
};
std::vector<Batch> batches(std::int64_t Cg, std::int64_t T) {
  const std::int64_t cb = channel_block(Cg);
  const std::int64_t per = std::clamp<std::int64_t>(kBatchSteps / cb, 1, T);
  std::vector<Batch> v;
  for (std::int64_t c0 = 0; c0 < Cg; c0 += cb)
    for (std::int64_t t0 = 0; t0 < T; t0 += per)
      v.push_back({c0, std::min(cb, Cg - c0), t0, std::min(T, t0 + per)});
  return v;
}

// Work items: a block of pixel tiles by a block of channel tiles of one group. Blocks hold up
// to 16 pixel tiles (96 pixels) and 4 channel tiles (256 channels), near-equal in size, and get
// smaller while there are fewer than 16 items per thread.
struct Item {
  std::int64_t g, m0, m1, t0, t1;  // group, pixels [m0, m1), channel tiles [t0, t1)
};
std::vector<Item> work_items(std::int64_t M, std::int64_t unit, std::int64_t KT, std::int64_t G,
                             std::int64_t Kg, int threads) {
  const std::int64_t PT = (M + unit - 1) / unit;
  std::int64_t npb = (PT + 15) / 16, ntb = (KT + kMaxBlockTiles - 1) / kMaxBlockTiles;
  while (G * npb * ntb < 16 * threads && npb < PT) npb = std::min(PT, 2 * npb);
  while (G * npb * ntb < 16 * threads && ntb < KT) ntb = std::min(KT, 2 * ntb);
  while ((G * npb * ntb) % threads != 0 && npb < PT) ++npb;  // equal item counts per thread
  // Consecutive items share their weights (channel blocks outer) unless the activations are
  // the larger operand to re-read.
  const bool weights_outer = ntb * M <= npb * Kg;
  std::vector<Item> items;
  items.reserve(static_cast<std::size_t>(G * npb * ntb));
  for (std::int64_t g = 0; g < G; ++g)
    for (std::int64_t i = 0; i < npb * ntb; ++i) {
      const std::int64_t pb = weights_outer ? i % npb : i / ntb;
      const std::int64_t tb = weights_outer ? i / npb : i % ntb;
      items.push_back({g, std::min(M, PT * pb / npb * unit),
                       std::min(M, PT * (pb + 1) / npb * unit), KT * tb / ntb,
                       KT * (tb + 1) / ntb});
    }
  return items;
}

// Whether a problem's tiles can be run tiles (pixels evenly spaced in memory) and how.
struct RunShape {
  bool on = false;
  bool flat = false;    // 1x1, stride 1, no padding: all pixels one run (ldx = channel stride)
  bool kw_run = false;  // a segment spans a whole kernel row (KW taps x Cg channels, contiguous)
  std::int64_t ldx = 0;
  std::int64_t ow_lo = 0, ow_hi = 0;  // output columns whose kernel rows lie inside the input
};
RunShape run_shape(const Problem& p) {
  RunShape r;
  if (p.is_1x1_s1_p0()) {
    r.on = r.flat = true;
    r.ldx = p.xs.w;
    return r;
  }
  const std::int64_t KW = p.ker[2], W = p.in[2], sw = p.stride[2], pl = p.pad_b[2];
  // A layer with few channels reduces over short segments (one per tap); a whole kernel row
  // is contiguous when there is one group and no dilation along w.
  r.kw_run = KW > 1 && brgemm_kernel_rows(p);
  if (KW > 1 && !r.kw_run) return r;
  // Run tiles stop at the end of an output row; the per-pixel tiles run on into the next. For
  // full 64-channel tiles (6 pixels either way) short rows would leave tiles part empty
  // (ResNet-50's res5a_branch1, 7 pixels a row: 6 + 1).
  if (!r.kw_run && p.Kg >= kBrChannels) return r;
  r.on = true;
  r.ldx = sw * p.xs.w;
  const std::int64_t last = W - 1 - (KW - 1) * p.dil[2] + pl;  // ow * sw <= last
  r.ow_lo = std::min(p.out[2], (pl + sw - 1) / sw);
  r.ow_hi = std::max(r.ow_lo, last < 0 ? 0 : std::min(p.out[2], last / sw + 1));
  return r;
}

// Channel tiles [t0, t1) as at most two runs of one width each (one kernel call per run):
// the full 64-channel tiles below `full`, then the narrower last one.
template <typename F>
void by_width(std::int64_t t0, std::int64_t t1, std::int64_t full, F&& run) {
  const std::int64_t kf = std::min(t1, full);
  if (t0 < kf) run(t0, kf);
  if (std::max(t0, kf) < t1) run(std::max(t0, kf), t1);
}

}  // namespace

bool brgemm_kernel_rows(const Problem& p) {
  return p.Cg < kRunMaxChannels && p.G == 1 && p.dil[2] == 1 &&
         p.ker_spatial() * p.Cg <= kBatchSteps;  // one batch
}

bool brgemm_usable(const Problem& p) {
  return cpu_info().isa() >= Isa::kAvx512 && p.same_layout(Layout::kNHWC);
}

// AVX2 (16 registers: tiles of 6 pixels x 16 channels) takes every channels-last forward
// problem. Kernels above 1x1 beat im2col + GEMM on every shape measured (2 threads, Zen 3): the
// stems (few input channels, whole kernel rows: ResNet-50's conv1 at mb8 17.5-19.2 -> 13.3-14.5
// ms), ResNet-50's stride-2 3x3 layers (mb8: res3a_branch2b 15.8-16.4 -> 12.3-13.2, res4a
// 14.5-17.3 -> 11.2-13.4, res5a 15.2-15.3 -> 12.1-13.1), 5x5 64 -> 64 at 28x28 1.53 ->
// 1.04-1.09, 3x3 dilated 2 2.04-2.80 -> 1.60-1.67, 1x7 128 -> 192 at 17x17 0.86-0.88 ->
// 0.67-0.69. 1x1 layers took the GEMM where their weights passed 256 KiB and there were more
// than 64 output pixels until session 50, when the tiles (faster since sessions 45-47) beat it
// there too (in-process A/B, plans, 2 / 1 threads, ms: MobileNet-V2 mb8's head 320 -> 1280 at
// 7x7 2.50 / 4.67 -> 1.95 / 4.80, b17_project 960 -> 320 1.66-1.86 / 3.57-3.69 -> 1.26-1.38 /
// 3.30-3.38; ResNet-50's 1024 -> 256 at 14x14 mb8 6.8-7.0 / 10.8-10.9 -> 5.1-5.3 / 8.6-8.8,
// 512 -> 2048 at 7x7 mb8 5.6-5.7 / 11.9-12.4 -> 4.4 / 8.8-10.7, 2048 -> 512 at 7x7 mb32
// 27.9-28.3 / 45.9-51.8 -> 21.9-24.3 / 36.8-49.1, at 14x14 mb1 0.61 / 1.19 -> 0.53 / 1.04).
// Backward data lost on every deep layer, so it stays with the GEMM there.
bool brgemm_fwd_usable(const Problem& p) {
  return brgemm_usable(p) || (cpu_info().isa() >= Isa::kAvx2 && p.same_layout(Layout::kNHWC));
}

namespace {

// The tile kernels of the instruction set in use (AVX-512, else AVX2).
bool avx512() { return cpu_info().isa() >= Isa::kAvx512; }
void br_tile(const BrTile& t) { avx512() ? br_tile_avx512(t) : br_tile_avx2(t); }
void br_run_tile(const BrRunTile& t) { avx512() ? br_run_tile_avx512(t) : br_run_tile_avx2(t); }
int br_run_pixels(int nk) { return avx512() ? br_run_pixels_avx512(nk) : br_run_pixels_avx2(nk); }
void br_pack(const float* w, std::int64_t ldw, std::int64_t rows, std::int64_t red, float* dst) {
  avx512() ? br_pack_avx512(w, ldw, rows, red, dst) : br_pack_avx2(w, ldw, rows, red, dst);
}

std::int64_t channel_tiles(const Problem& p) { return (p.Kg + kBrChannels - 1) / kBrChannels; }
std::int64_t tile_floats(const Problem& p) { return p.ker_spatial() * p.Cg * kBrChannels; }

// Weights as [K][taps][Cg] -> per group, KT tiles of [taps * Cg][64] at dst.
void pack_tiles(Handle& h, const Problem& p, float* dst) {
  const std::int64_t red = p.ker_spatial() * p.Cg, KT = channel_tiles(p), tf = tile_floats(p);
  std::vector<float> wbuf;
  const float* W = p.w;
  if (!p.w_ohwi && !(p.ker_spatial() == 1 && p.w_oihw)) {
    wbuf.resize(static_cast<std::size_t>(p.K * red));
    pack_weights(p, true, wbuf.data());
    W = wbuf.data();
  }
  detail::parallel_for(h, 0, p.G * KT, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t g = i / KT, kt = i % KT;
      br_pack(W + (g * p.Kg + kt * kBrChannels) * red, red,
              std::min<std::int64_t>(kBrChannels, p.Kg - kt * kBrChannels), red, dst + i * tf);
    }
  });
}

}  // namespace

void brgemm_pack(Handle& h, const Problem& p, PackedWeights& out) {
  if (!brgemm_fwd_usable(p)) return;
  pack_tiles(h, p, out.allocate(static_cast<std::size_t>(p.G * channel_tiles(p) * tile_floats(p))));
}

Status brgemm_fwd(Handle& h, const Problem& p) {
  const std::int64_t KT = channel_tiles(p), tf = tile_floats(p);
  std::unique_ptr<float[]> own;
  const float* wpk = p.w_packed;
  if (wpk == nullptr) {
    own = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(p.G * KT * tf));
    pack_tiles(h, p, own.get());
    wpk = own.get();
  }
  BrWeights wv{wpk, KT * tf, tf, p.Cg * kBrChannels, kBrChannels};
  if (!avx512()) {  // AVX2: 16-channel parts, each [tap][Cg][16] (br_pack_avx2)
    wv.tap = p.Cg * 16;
    wv.ldw = 16;
    wv.part = p.ker_spatial() * p.Cg * 16;
  }
  return brgemm_run(h, p, wv);
}

Status brgemm_run(Handle& h, const Problem& p, const BrWeights& wv) {
  const std::int64_t Cg = p.Cg, Kg = p.Kg, G = p.G, K = p.K, T = p.ker_spatial();
  const std::int64_t KT = channel_tiles(p);
  const std::int64_t M = p.N * p.out_spatial();
  // Taps: offsets along d, h, w (dilation included).
  struct Tap {
    std::int64_t d, h, w;
  };
  std::vector<Tap> taps;
  for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
    for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
      for (std::int64_t kw = 0; kw < p.ker[2]; ++kw)
        taps.push_back({kd * p.dil[0], kh * p.dil[1], kw * p.dil[2]});
  const std::vector<Batch> bat = batches(Cg, T);
  std::int64_t max_taps = 0;
  for (const Batch& b : bat) max_taps = std::max(max_taps, b.t1 - b.t0);
  static constexpr float kZeros[kWholeChannels] = {};  // the padding's row (a batch's channels fit)

  const float* res = static_cast<const float*>(p.post.residual);
  const bool fuse = p.post.act.kind == ActKind::kIdentity || p.post.act.kind == ActKind::kRelu || p.post.act.kind == ActKind::kClip;
  const std::int64_t osp = p.out_spatial(), OH = p.out[1], OW = p.out[2];
  const RunShape run = run_shape(p);
  // Pixel blocks are whole tiles: run tiles of the first channel tile's height (1x1), whole
  // output rows (the run tiles of other kernels stop at a row's end, so a block that cut a row
  // would leave extra short tiles there), else 6.
  const std::int64_t unit = !run.on  ? kBrPixels
                            : run.flat ? br_run_pixels(static_cast<int>(std::min<std::int64_t>(Kg, kBrChannels)))
                                       : OW;
  const std::vector<Item> items = work_items(M, unit, KT, G, Kg, detail::max_threads(h));
  // Each thread's share is a contiguous run of items of near-equal cost (pixels x channels:
  // a narrow last channel tile costs less than a full one); a thread that runs out takes
  // items from the back of the other's share.
  const int shares = detail::max_threads(h);
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(shares) + 1, 0);
  {
    std::vector<std::int64_t> cost(items.size() + 1, 0);
    for (std::size_t i = 0; i < items.size(); ++i)
      cost[i + 1] = cost[i] + (items[i].m1 - items[i].m0) *
                                  (std::min(Kg, items[i].t1 * kBrChannels) - items[i].t0 * kBrChannels);
    for (int s = 1; s <= shares; ++s) {  // the first item whose cost midpoint is in share s
      std::size_t i = static_cast<std::size_t>(bounds[static_cast<std::size_t>(s) - 1]);
      while (i < items.size() && (cost[i] + cost[i + 1]) * shares < 2 * cost.back() * s) ++i;
      bounds[static_cast<std::size_t>(s)] = static_cast<std::int64_t>(i);
    }
  }
  WorkShares work(bounds);

  // An output larger than a quarter of the last-level cache is streamed (non-temporal
  // stores skip reading each line before writing it), unless the post-ops run over it
  // afterwards. The cache also holds the input and the weights, and on a shared machine
  // other tenants' data: at 3/4 of it (glibc memcpy's threshold) MobileNet-V2's b3_expand at
  // mb8 (14.4 MB) ran 1.11-1.29x oneDNN's time, streamed 1.02-1.09x; b2_expand (38.5 MB)
  // 2.5-2.6 ms streamed against 3.7-4.0 stored (AVX-512, Zen 4). The AVX2 tiles, which write a
  // line as two 32-byte halves, store instead: streamed they were slower on Zen 3 (2 threads,
  // mb8: b2_expand 5.2-7.4 -> 3.3-3.9 ms stored, b3_expand 2.3-3.0 -> 1.4-2.1, ResNet-50's
  // res2a_branch2c 7.6-8.2 -> 6.1-7.5, res3a_branch2a equal).
  const std::int64_t llc = cpu_info().last_level_cache_bytes();
  const bool stream = avx512() && (!p.has_post_ops() || fuse) && K % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(p.y_out) % 64 == 0 && llc > 0 &&
                      M * K * static_cast<std::int64_t>(sizeof(float)) > llc / 4;
  detail::parallel_for(h, 0, shares, 1, [&](std::int64_t b, std::int64_t) {  // share b (run inline: share 0 takes every item)
    struct Pixel {
      const float* image;    // x at image n, group g's channel 0
      std::int64_t d, h, w;  // input coordinates of tap (0, 0, 0); may lie in the padding
    };
    std::vector<const float*> xr(static_cast<std::size_t>(max_taps * kBrPixels));
    std::vector<BrSeg> segs0(static_cast<std::size_t>(max_taps)), segs(segs0.size());
    for (std::int64_t it; (it = work.next(static_cast<int>(b))) >= 0;) {
      const auto [g, m0, m1, t0, t1] = items[static_cast<std::size_t>(it)];
      auto pixel = [&](std::int64_t m) {
        const std::int64_t n = m / osp, q = m % osp;
        const std::int64_t od = q / (OH * OW), oh = (q / OW) % OH, ow = q % OW;
        return Pixel{p.x + n * p.xs.n + g * Cg, od * p.stride[0] - p.pad_b[0],
                     oh * p.stride[1] - p.pad_b[1], ow * p.stride[2] - p.pad_b[2]};
      };
      for (std::size_t bi = 0; bi < bat.size(); ++bi) {
        const Batch& ba = bat[bi];
        const bool first = bi == 0;
        const bool fused = bi + 1 == bat.size() && fuse && p.has_post_ops();  // last batch only
        auto epilogue = [&](std::int64_t m, std::int64_t k) {
          BrEpilogue post;
          post.stream = stream && bi + 1 == bat.size();
          if (fused) {
            post.bias = p.post.bias ? p.post.bias + k : nullptr;
            post.residual = res ? res + m * K + k : nullptr;
            post.relu = p.post.act.kind == ActKind::kRelu;
            post.clip = p.post.act.kind == ActKind::kClip;
            post.lo = p.post.act.alpha;
            post.hi = p.post.act.beta;
          }
          return post;
        };
        const float* wb = wv.base + g * wv.group;  // group g's weights
        auto nk_of = [&](std::int64_t kt) {
          return static_cast<int>(std::min<std::int64_t>(kBrChannels, Kg - kt * kBrChannels));
        };
        // Pixels [m, me) through per-pixel row pointers, every tap its own segment.
        auto pixel_tiles = [&](std::int64_t m, std::int64_t me) {
          const int nseg = static_cast<int>(ba.t1 - ba.t0);
          for (; m < me; m += kBrPixels) {
            const int mp = static_cast<int>(std::min<std::int64_t>(kBrPixels, me - m));
            Pixel pix[kBrPixels];
            for (int j = 0; j < mp; ++j) pix[j] = pixel(m + j);
            for (int s = 0; s < nseg; ++s) {
              const Tap& tp = taps[static_cast<std::size_t>(ba.t0 + s)];
              for (int j = 0; j < mp; ++j) {
                const Pixel& px = pix[j];
                const std::int64_t id = px.d + tp.d, ih = px.h + tp.h, iw = px.w + tp.w;
                const bool in = id >= 0 && id < p.in[0] && ih >= 0 && ih < p.in[1] && iw >= 0 && iw < p.in[2];
                xr[static_cast<std::size_t>(s * kBrPixels + j)] =
                    in ? px.image + id * p.xs.d + ih * p.xs.h + iw * p.xs.w + ba.c0 : kZeros;
              }
            }
            for (std::int64_t kt = t0; kt < t1; ++kt) {
              const BrEpilogue post = epilogue(m, g * Kg + kt * kBrChannels);
              BrTile t{xr.data(), wb + kt * wv.tile + ba.t0 * wv.tap + ba.c0 * wv.ldw,
                       wv.tap, nseg, ba.kc, p.y_out + m * K + g * Kg + kt * kBrChannels,
                       K, mp, nk_of(kt), !first, fused || post.stream ? &post : nullptr};
              t.ldw = wv.ldw;
              t.w_part = wv.part;
              br_tile(t);
            }
          }
        };
        // Pixels [m, me) of one output row (any run of pixels when flat), interior: evenly
        // spaced operands. The full 64-channel tiles go in one call, a narrower last tile in
        // another (its tiles are taller).
        auto run_tiles = [&](std::int64_t m, std::int64_t me) {
          const Pixel px0 = run.flat ? Pixel{} : pixel(m);
          const std::int64_t tstep = run.kw_run ? p.ker[2] : 1;
          int nseg = 0;  // segments of pixel m, weights of channel tile 0
          for (std::int64_t tp = ba.t0; tp < ba.t1; tp += tstep) {
            const Tap& t = taps[static_cast<std::size_t>(tp)];
            const std::int64_t id = px0.d + t.d, ih = px0.h + t.h;
            if (!run.flat && (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1])) continue;
            const float* x = run.flat ? p.x + m * p.xs.w + g * Cg + ba.c0
                                      : px0.image + id * p.xs.d + ih * p.xs.h + px0.w * p.xs.w + ba.c0;
            segs0[static_cast<std::size_t>(nseg++)] = {x, wb + tp * wv.tap + ba.c0 * wv.ldw};
          }
          // Channel tiles [ka, kb) of one width over the whole run in one call (the kernel
          // steps through the pixels a tile's height at a time, every channel tile for each).
          auto pieces = [&](std::int64_t ka, std::int64_t kb) {
            for (int s = 0; s < nseg; ++s)
              segs[static_cast<std::size_t>(s)] = {segs0[static_cast<std::size_t>(s)].x,
                                                   segs0[static_cast<std::size_t>(s)].w + ka * wv.tile};
            const std::int64_t k = g * Kg + ka * kBrChannels;
            const BrEpilogue post = epilogue(m, k);
            BrRunTile t{segs.data(), nseg, run.kw_run ? p.ker[2] * Cg : ba.kc, run.ldx,
                        p.y_out + m * K + k, K, static_cast<int>(me - m), nk_of(ka),
                        !first, fused || post.stream ? &post : nullptr};
            t.ntiles = static_cast<int>(kb - ka);
            t.w_tile = wv.tile;
            t.ldw = wv.ldw;
            t.w_part = wv.part;
            br_run_tile(t);
          };
          by_width(t0, t1, Kg / kBrChannels, pieces);
        };
        for (std::int64_t m = m0; m < m1;) {
          std::int64_t me = m1;
          bool edge = !run.on;
          if (run.on && !run.flat) {  // stay in the output row; edge pixels read the padding
            const std::int64_t ow = m % OW, row_end = std::min(m1, m + OW - ow);
            edge = ow < run.ow_lo || ow >= run.ow_hi;
            me = ow < run.ow_lo ? std::min(row_end, m + run.ow_lo - ow)
                 : edge         ? row_end
                                : std::min(row_end, m + run.ow_hi - ow);
          }
          if (edge)
            pixel_tiles(m, me);
          else
            run_tiles(m, me);
          m = me;
        }
      }
      if (!fuse)
        apply_post_ops_nhwc(p, p.y_out + m0 * K, res ? res + m0 * K : nullptr, m1 - m0,
                            g * Kg + t0 * kBrChannels, g * Kg + std::min(Kg, t1 * kBrChannels));
    }
    if (stream) br_stream_fence();
  });
  return Status::ok();
}

Status brgemm_bwd_data_flipped(Handle& h, const Problem& p, const Problem& q) {
  const std::int64_t T = p.ker_spatial();
  std::vector<float> dense;
  const float* W = p.w;  // dense OHWI: W[k][t][c]
  if (!p.w_ohwi) {
    dense.resize(static_cast<std::size_t>(p.K * T * p.Cg));
    pack_weights(p, true, dense.data());
    W = dense.data();
  }
  // q's reduction channel is p's k (rows T * Cg apart), its output channel p's c, its tap t
  // p's tap T - 1 - t.
  return brgemm_run(h, q, BrWeights{W + (T - 1) * p.Cg, p.Kg * T * p.Cg, kBrChannels, -p.Cg, T * p.Cg});
}

// ---- backward data of 1x1 convolutions ---------------------------------------------------
// dx[pixel][c] = sum over k of dy[pixel][k] W[k][c]: run tiles over dy's pixels (operands read
// in place, pixel stride K) against W's rows read in place (row stride Cg, no packing: the
// plain GEMM packed all of W per call, 4 MB for ResNet-50's res5 layers). A stride s puts dy
// pixel (oh, ow) at dx pixel (s*oh, s*ow): runs stay in one output row and store every s-th
// dx pixel; the pixels between are zeroed first. One reduction over all of Kg per output
// element, in k order: the same result for any thread count.

bool brgemm_bwd_data_1x1_usable(const Problem& p) {
  for (int i = 0; i < 3; ++i)
    if (p.ker[i] != 1 || p.pad_b[i] != 0 || p.pad_e[i] != 0) return false;
  // Whole 16-float vectors of every weight row: Cg a multiple of 16.
  return brgemm_usable(p) && p.Cg % 16 == 0;
}

Status brgemm_bwd_data_1x1(Handle& h, const Problem& p) {
  const std::int64_t Cg = p.Cg, Kg = p.Kg, G = p.G, C = p.C, K = p.K;
  std::vector<float> wbuf;
  const float* W = p.w;  // [K][Cg] (for 1x1 both dense layouts are)
  if (!p.w_ohwi && !p.w_oihw) {
    wbuf.resize(static_cast<std::size_t>(K * Cg));
    pack_weights(p, true, wbuf.data());
    W = wbuf.data();
  }
  const std::int64_t OD = p.out[0], OH = p.out[1], OW = p.out[2];
  const std::int64_t sd = p.stride[0], sh = p.stride[1], sw = p.stride[2];
  const bool flat = sd == 1 && sh == 1 && sw == 1;
  const std::int64_t ID = p.in[0], IH = p.in[1], IW = p.in[2];
  if (!flat) {  // dx pixels no dy pixel lands on: zero
    detail::parallel_for(h, 0, p.N * ID * IH, 16, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r) {
        const std::int64_t n = r / (ID * IH), id = (r / IH) % ID, ih = r % IH;
        float* row = p.x_out + n * p.xs.n + id * p.xs.d + ih * p.xs.h;
        const bool hit = id % sd == 0 && ih % sh == 0;
        for (std::int64_t iw = 0; iw < IW; ++iw)
          if (!hit || iw % sw != 0) std::fill_n(row + iw * p.xs.w, C, 0.0f);
      }
    });
  }
  const std::int64_t M = p.N * OD * OH * OW, KT = (Cg + kBrChannels - 1) / kBrChannels;
  const std::int64_t unit = br_run_pixels(static_cast<int>(std::min<std::int64_t>(Cg, kBrChannels)));
  const std::vector<Item> items = work_items(M, unit, KT, G, Cg, detail::max_threads(h));
  const int shares = detail::max_threads(h);
  WorkShares work(static_cast<std::int64_t>(items.size()), shares);
  detail::parallel_for(h, 0, shares, 1, [&](std::int64_t b, std::int64_t) {
    for (std::int64_t it; (it = work.next(static_cast<int>(b))) >= 0;) {
      const auto [g, m0, m1, t0, t1] = items[static_cast<std::size_t>(it)];
      for (std::int64_t m = m0; m < m1;) {
        const std::int64_t me = flat ? m1 : std::min(m1, m + OW - m % OW);  // one dy row
        const std::int64_t n = m / (OD * OH * OW), q = m % (OD * OH * OW);
        const std::int64_t od = q / (OH * OW), oh = (q / OW) % OH, ow = q % OW;
        float* dx = flat ? p.x_out + m * p.xs.w
                         : p.x_out + n * p.xs.n + od * sd * p.xs.d + oh * sh * p.xs.h + ow * sw * p.xs.w;
        const BrSeg seg{p.y_in + m * p.ys.w + g * Kg, W + g * Kg * Cg};
        auto pieces = [&](std::int64_t ka, std::int64_t kb) {
          BrSeg sg = seg;
          sg.w += ka * kBrChannels;
          BrRunTile t{&sg, 1, Kg, p.ys.w, dx + g * Cg + ka * kBrChannels, sw * p.xs.w,
                      static_cast<int>(me - m),
                      static_cast<int>(std::min<std::int64_t>(kBrChannels, Cg - ka * kBrChannels)),
                      false, nullptr};
          t.ntiles = static_cast<int>(kb - ka);
          t.w_tile = kBrChannels;
          t.ldw = Cg;
          br_run_tile(t);
        };
        by_width(t0, t1, Cg / kBrChannels, pieces);
        m = me;
      }
    }
  });
  return Status::ok();
}

// ---- backward data of strided convolutions ------------------------------------------------
// dx pixel (ih, iw) takes dy pixel ((ih + ph - kh) / sh, (iw + pw - kw) / sw) through tap (kh, kw)
// where both divide evenly. Along a dx row the pixels of one phase (iw mod sw) share their taps,
// and for each tap they step through a dy row one pixel at a time: so a (dx row, phase) is one
// run of tiles whose segments are its taps, dy read in place (pixel stride K), dx written every
// sw-th pixel, the weights read in place from W[k][t][c] (row stride T * C; no flip, no packing).
// Pixels near the row ends, where a tap falls outside dy, run alone with the taps they have;
// a pixel no tap reaches is zeroed. Each dx element is one chain over its taps (kh, kw
// ascending), k in order per tap, on a path that depends on the shape only: the same bits for
// any thread count. (im2col + GEMM + col2im ran these layers at 1.2-1.5x oneDNN's time.)

bool brgemm_bwd_data_strided_usable(const Problem& p) {
  return brgemm_usable(p) && p.G == 1 && p.Cg % 16 == 0 && p.ker[0] == 1 && p.stride[0] == 1 &&
         p.dil[0] == 1 && p.dil[1] == 1 && p.dil[2] == 1 && (p.stride[1] > 1 || p.stride[2] > 1);
}

Status brgemm_bwd_data_strided(Handle& h, const Problem& p) {
  const std::int64_t C = p.C, K = p.K, T = p.ker_spatial();
  std::vector<float> dense;
  const float* W = p.w;  // dense OHWI: W[k][t][c]
  if (!p.w_ohwi) {
    dense.resize(static_cast<std::size_t>(K * T * C));
    pack_weights(p, true, dense.data());
    W = dense.data();
  }
  const std::int64_t IH = p.in[1], IW = p.in[2], OH = p.out[1], OW = p.out[2], KH = p.ker[1], KW = p.ker[2];
  const std::int64_t sh = p.stride[1], sw = p.stride[2], ph = p.pad_b[1], pw = p.pad_b[2];
  const std::int64_t full = C / kBrChannels, KT = (C + kBrChannels - 1) / kBrChannels;
  auto divides = [](std::int64_t a, std::int64_t s) { return ((a % s) + s) % s == 0; };
  // Items: a group of channel tiles (weights of at most about half the L2, at least one tile)
  // by a block of dx rows, groups outer, so a thread's consecutive items reuse the weights
  // from its cache (one row at a time over all tiles streamed 9.4 MB of res5a's weights per row).
  const std::int64_t rows = p.N * IH;
  const std::int64_t tile_bytes = kBrChannels * T * K * static_cast<std::int64_t>(sizeof(float));
  const std::int64_t per_group = std::clamp<std::int64_t>((std::int64_t{512} << 10) / tile_bytes, 1, KT);
  const std::int64_t ngroups = (KT + per_group - 1) / per_group;
  const std::int64_t nrb = std::min(rows, std::max<std::int64_t>(1, (4 * detail::max_threads(h) + ngroups - 1) / ngroups));
  struct Tap {
    const float* dy;  // dy at the tap's dy row, pixel `off` (pixel 0 of the phase's run)
    const float* w;   // the tap's weights at channel 0
    std::int64_t off;
  };
  // dx row r (image n, row ih) for channel tiles [ta, tb).
  auto dx_row = [&](std::int64_t r, std::int64_t ta, std::int64_t tb, std::vector<Tap>& taps, std::vector<BrSeg>& segs,
                    std::vector<BrSeg>& seg1) {
    const std::int64_t n = r / IH, ih = r % IH;
    float* dxrow = p.x_out + n * p.xs.n + ih * p.xs.h;
    const float* dyimg = p.y_in + n * p.ys.n;
    for (std::int64_t phase = 0; phase < std::min(sw, IW); ++phase) {
      const std::int64_t npix = (IW - phase + sw - 1) / sw;  // dx pixels iw = phase + sw * j
      int nt = 0;
      std::int64_t jlo = 0, jhi = npix;  // pixels every tap reaches: ow = j + off in [0, OW)
      for (std::int64_t kh = 0; kh < KH; ++kh) {
        if (!divides(ih + ph - kh, sh)) continue;
        const std::int64_t oh = (ih + ph - kh) / sh;
        if (oh < 0 || oh >= OH) continue;
        for (std::int64_t kw = 0; kw < KW; ++kw) {
          if (!divides(phase + pw - kw, sw)) continue;
          const std::int64_t off = (phase + pw - kw) / sw;
          taps[static_cast<std::size_t>(nt++)] = {dyimg + oh * p.ys.h + off * p.ys.w, W + (kh * KW + kw) * C, off};
          jlo = std::max(jlo, -off);
          jhi = std::min(jhi, OW - off);
        }
      }
      // Pixels [j0, j1) with the taps in `use` (nseg of them) as one run.
      auto run = [&](std::int64_t j0, std::int64_t j1, const BrSeg* use, int nseg) {
        float* dx = dxrow + (phase + sw * j0) * p.xs.w;
        if (nseg == 0) {
          const std::int64_t c0 = ta * kBrChannels, c1 = std::min(C, tb * kBrChannels);
          for (std::int64_t j = j0; j < j1; ++j) std::fill_n(dx + (j - j0) * sw * p.xs.w + c0, c1 - c0, 0.0f);
          return;
        }
        by_width(ta, tb, full, [&](std::int64_t ka, std::int64_t kb) {
          for (int s = 0; s < nseg; ++s)
            seg1[static_cast<std::size_t>(s)] = {use[s].x + j0 * p.ys.w, use[s].w + ka * kBrChannels};
          BrRunTile t{seg1.data(), nseg, K, p.ys.w, dx + ka * kBrChannels, sw * p.xs.w, static_cast<int>(j1 - j0),
                      static_cast<int>(std::min<std::int64_t>(kBrChannels, C - ka * kBrChannels)), false, nullptr};
          t.ntiles = static_cast<int>(kb - ka);
          t.w_tile = kBrChannels;
          t.ldw = T * C;
          br_run_tile(t);
        });
      };
      // The edge pixels one at a time, each with the taps that reach it.
      auto edge = [&](std::int64_t j) {
        int ns = 0;
        for (int s = 0; s < nt; ++s) {
          const Tap& tp = taps[static_cast<std::size_t>(s)];
          if (j + tp.off >= 0 && j + tp.off < OW) segs[static_cast<std::size_t>(ns++)] = {tp.dy, tp.w};
        }
        run(j, j + 1, segs.data(), ns);
      };
      if (jhi < jlo) jhi = jlo = npix;  // no interior: every pixel is an edge
      for (std::int64_t j = 0; j < std::min(jlo, npix); ++j) edge(j);
      if (jlo < jhi) {
        for (int s = 0; s < nt; ++s)
          segs[static_cast<std::size_t>(s)] = {taps[static_cast<std::size_t>(s)].dy, taps[static_cast<std::size_t>(s)].w};
        run(jlo, jhi, segs.data(), nt);
      }
      for (std::int64_t j = std::max(jhi, jlo); j < npix; ++j) edge(j);
    }
  };
  detail::parallel_for(h, 0, ngroups * nrb, 1, [&](std::int64_t b, std::int64_t e) {
    std::vector<Tap> taps(static_cast<std::size_t>(KH * KW));
    std::vector<BrSeg> segs(taps.size()), seg1(taps.size());
    for (std::int64_t item = b; item < e; ++item) {
      const std::int64_t ta = item / nrb * per_group, tb = std::min(KT, ta + per_group), rb = item % nrb;
      for (std::int64_t r = rows * rb / nrb; r < rows * (rb + 1) / nrb; ++r) dx_row(r, ta, tb, taps, segs, seg1);
    }
  });
  return Status::ok();
}

// ---- weight gradients of few-channel layers over whole kernel rows --------------------------
// dW[k][r] = sum over output pixels p of dy[p][k] x[p's window][r], with r = (kd, kh, kw, c).
// Per kernel row (kd, kh) the KW x C values r of one output pixel are contiguous in a padded
// copy of x, so a run tile's rows are those r (operand j at q + j) against dy's rows (64
// channels per vector step) over a reduction that walks the output pixels of an output row
// (x stepping by stride x C, dy by K); each output row is one segment. Output rows are cut
// into blocks that depend on the problem only, each summed into its own partial, and the
// partials are added in block order: the same bits for any thread count. (im2col + GEMM built
// a 147-wide column matrix for ResNet-50's conv1 and ran at 1.4-1.6x oneDNN's time.)

bool brgemm_wgrad_rows_usable(const Problem& p) {
  const bool layouts = p.same_layout(Layout::kNHWC) || p.same_layout(Layout::kNCHW);
  return cpu_info().isa() >= Isa::kAvx512 && layouts && p.G == 1 && p.Cg <= kWgradRowsMaxChannels &&
         p.dil[2] == 1 && p.K % 16 == 0;
}
bool brgemm_wgrad_rows_preferred(const Problem& p) {
  const bool strided = p.stride[0] > 1 || p.stride[1] > 1 || p.stride[2] > 1;  // no Winograd, no FFT
  return p.Cg <= kWgradRowsPreferredChannels || strided;
}

Status brgemm_wgrad_rows(Handle& h, const Problem& p) {
  const std::int64_t C = p.C, K = p.K;
  const std::int64_t KD = p.ker[0], KH = p.ker[1], KW = p.ker[2];
  const std::int64_t OD = p.out[0], OH = p.out[1], OW = p.out[2];
  const std::int64_t ID = p.in[0], IH = p.in[1], IW = p.in[2], Wp = IW + p.pad_b[2] + p.pad_e[2];
  const std::int64_t L = KW * C, R = KD * KH * L;  // r per kernel row, r in all
  const std::int64_t OP = OD * OH * OW;
  const bool dy_first = p.y_layout == Layout::kNCHW;
  // Blocks of output rows, each with its own partial [R][K].
  const std::int64_t rows = p.N * OD * OH;
  const std::int64_t B = std::max<std::int64_t>(4, (rows + 63) / 64), nblk = (rows + B - 1) / B;
  // The handle's workspace (kept between calls): x padded, dy channels-last (when it is
  // channels-first), the partials; each 64-byte aligned.
  auto lines = [](std::int64_t n) { return (n + 15) / 16 * 16; };
  const std::int64_t nx = lines(p.N * ID * IH * Wp * C), ndy = dy_first ? lines(p.N * OP * K) : 0;
  TESSERA_ASSIGN_OR_RETURN(void* ws, detail::workspace(h, static_cast<std::size_t>(nx + ndy + nblk * R * K) *
                                                              sizeof(float)));
  float* const xp = static_cast<float*>(ws);
  float* const part = xp + nx + ndy;
  // x zero-padded along w, packed [n][d][h][w][c]; kernel rows above, below, in front of or
  // behind the input add nothing and are left out of the segments.
  const bool dense = p.xs.c == 1 && p.xs.w == C;
  detail::parallel_for(h, 0, p.N * ID * IH, 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t n = i / (ID * IH), d = (i / IH) % ID, hh = i % IH;
      float* row = xp + i * Wp * C;
      const float* src = p.x + n * p.xs.n + d * p.xs.d + hh * p.xs.h;
      std::fill_n(row, p.pad_b[2] * C, 0.0f);
      std::fill_n(row + (p.pad_b[2] + IW) * C, p.pad_e[2] * C, 0.0f);
      float* mid = row + p.pad_b[2] * C;
      if (dense)
        std::copy_n(src, IW * C, mid);
      else  // channels-first: the row's [C][IW] (channel stride xs.c) transposed
        kDwAvx512.transpose(src, C, IW, p.xs.c, mid, C);
    }
  });
  // dy channels-last: channels-first [n][K][pixels] planes transposed.
  const float* dy = p.y_in;
  Strides5 ys = p.ys;
  if (dy_first) {
    float* const dyt = xp + nx;
    constexpr std::int64_t kPix = 256;  // pixels per transpose item
    const std::int64_t per = (OP + kPix - 1) / kPix;
    detail::parallel_for(h, 0, p.N * per, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        const std::int64_t n = i / per, q0 = (i % per) * kPix, q1 = std::min(OP, q0 + kPix);
        kDwAvx512.transpose(p.y_in + n * p.ys.n + q0, K, q1 - q0, p.ys.c, dyt + (n * OP + q0) * K, K);
      }
    });
    dy = dyt;
    ys = {OP * K, 1, OH * OW * K, OW * K, K};
  }
  const int shares = detail::max_threads(h);
  WorkShares work(nblk, shares);
  detail::parallel_for(h, 0, shares, 1, [&](std::int64_t sh, std::int64_t) {
    std::vector<BrSeg> segs(static_cast<std::size_t>(B)), sg(segs.size());
    for (std::int64_t blk; (blk = work.next(static_cast<int>(sh))) >= 0;) {
      const std::int64_t r0 = blk * B, r1 = std::min(rows, r0 + B);
      float* out = part + blk * R * K;
      for (std::int64_t kd = 0; kd < KD; ++kd)
        for (std::int64_t kh = 0; kh < KH; ++kh) {
          std::int64_t nseg = 0;  // one segment per output row whose kernel row is inside x
          for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t n = r / (OD * OH), od = (r / OH) % OD, oh = r % OH;
            const std::int64_t d = od * p.stride[0] + kd * p.dil[0] - p.pad_b[0];
            const std::int64_t hh = oh * p.stride[1] + kh * p.dil[1] - p.pad_b[1];
            if (d < 0 || d >= ID || hh < 0 || hh >= IH) continue;
            segs[static_cast<std::size_t>(nseg++)] = {xp + ((n * ID + d) * IH + hh) * Wp * C,
                                                      dy + n * ys.n + od * ys.d + oh * ys.h};
          }
          float* dst = out + ((kd * KH + kh) * L) * K;
          if (nseg == 0) {  // (every row in the padding: a zero gradient)
            for (std::int64_t j = 0; j < L; ++j) std::fill_n(dst + j * K, K, 0.0f);
            continue;
          }
          auto pieces = [&](std::int64_t ka, std::int64_t kb) {
            for (std::int64_t i = 0; i < nseg; ++i)
              sg[static_cast<std::size_t>(i)] = {segs[static_cast<std::size_t>(i)].x,
                                                 segs[static_cast<std::size_t>(i)].w + ka * kBrChannels};
            BrRunTile t{sg.data(), static_cast<int>(nseg), OW, 1, dst + ka * kBrChannels, K, static_cast<int>(L),
                        static_cast<int>(std::min<std::int64_t>(kBrChannels, K - ka * kBrChannels)), false, nullptr};
            t.ntiles = static_cast<int>(kb - ka);
            t.w_tile = kBrChannels;
            t.ldw = ys.w;
            t.xstep = p.stride[2] * C;
            br_run_tile(t);
          };
          by_width(0, (K + kBrChannels - 1) / kBrChannels, K / kBrChannels, pieces);
        }
    }
  });
  // dW = the partials added in block order, written in the caller's layout.
  detail::parallel_for(h, 0, R, 8, [&](std::int64_t b, std::int64_t e) {
    std::vector<float> acc(static_cast<std::size_t>(K));
    for (std::int64_t r = b; r < e; ++r) {
      std::copy_n(part + r * K, K, acc.data());
      for (std::int64_t blk = 1; blk < nblk; ++blk) {
        const float* q = part + (blk * R + r) * K;
        for (std::int64_t k = 0; k < K; ++k) acc[static_cast<std::size_t>(k)] += q[k];
      }
      const std::int64_t kd = r / (KH * L), kh = (r / L) % KH, kw = (r % L) / C, c = r % C;
      float* dw = p.w_out + c * p.ws.c + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w;
      for (std::int64_t k = 0; k < K; ++k) dw[k * p.ws.n] = acc[static_cast<std::size_t>(k)];
    }
  });
  bias_grad(p);
  return Status::ok();
}

}  // namespace tessera::dnn::conv
