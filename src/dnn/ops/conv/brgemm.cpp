// Pointwise forward convolution (1x1 kernel, no padding, any stride), channels-last, with the
// AVX-512 tile kernel of pointwise_avx512.cpp: the weights are packed once per call into
// 64-channel tiles; the activations are read in place, one row pointer per output pixel.
//
// Blocking (per work item: a block of output pixels x a block of channel tiles of one group):
//   for each reduction block of kc input channels      (kc x 256 packed weights: L2)
//     for each tile of 6 pixels                        (6 input rows x kc: L1)
//       for each 64-channel tile: the 6 x 64 tile kernel, accumulating after the first block
// The reduction blocks depend on the problem only, so every output element is the same chain
// of multiply-adds for any thread count and any split into work items.
#include <algorithm>
#include <memory>

#include "algos.hpp"
#include "pointwise_kernels.hpp"
#include "tessera/core/cpu.hpp"

namespace tessera::dnn::conv {
namespace {

constexpr std::int64_t kMaxBlockPixels = 96;
constexpr std::int64_t kMaxBlockTiles = 4;  // 256 channels

// Input channels per reduction block: all of them up to 512, else near-equal blocks of <= 384.
std::int64_t reduction_block(std::int64_t Cg) {
  if (Cg <= 512) return Cg;
  const std::int64_t blocks = (Cg + 383) / 384;
  return (Cg + blocks - 1) / blocks;
}

// Work items: a block of pixel tiles by a block of channel tiles of one group. Blocks hold up
// to 16 pixel tiles (96 pixels) and 4 channel tiles (256 channels), near-equal in size, and get
// smaller while there are fewer than 16 items per thread.
struct Item {
  std::int64_t g, m0, m1, t0, t1;  // group, pixels [m0, m1), channel tiles [t0, t1)
};
std::vector<Item> work_items(std::int64_t M, std::int64_t KT, std::int64_t G, std::int64_t Kg,
                             int threads) {
  const std::int64_t PT = (M + kPwPixels - 1) / kPwPixels;
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
      items.push_back({g, std::min(M, PT * pb / npb * kPwPixels),
                       std::min(M, PT * (pb + 1) / npb * kPwPixels), KT * tb / ntb,
                       KT * (tb + 1) / ntb});
    }
  return items;
}

}  // namespace

bool pointwise_usable(const Problem& p) {
  return cpu_info().isa() >= Isa::kAvx512 && p.same_layout(Layout::kNHWC) && p.ker_spatial() == 1;
}

Status pointwise_fwd(Handle& h, const Problem& p) {
  const std::int64_t Cg = p.Cg, Kg = p.Kg, G = p.G, K = p.K;
  const std::int64_t KT = (Kg + kPwChannels - 1) / kPwChannels;
  const std::int64_t M = p.N * p.out_spatial();
  const std::int64_t tile_floats = Cg * kPwChannels;

  // Weights [K][Cg] (1x1: both packed weight layouts) -> per group, KT tiles of [Cg][64].
  std::vector<float> wbuf;
  const float* W = p.w;
  if (!p.w_oihw && !p.w_ohwi) {
    wbuf.resize(static_cast<std::size_t>(K * Cg));
    pack_weights(p, true, wbuf.data());
    W = wbuf.data();
  }
  const auto wp = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(G * KT * tile_floats));
  detail::parallel_for(h, 0, G * KT, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t g = i / KT, kt = i % KT;
      const std::int64_t k0 = g * Kg + kt * kPwChannels;
      pw_pack_avx512(W + k0 * Cg, Cg, std::min<std::int64_t>(kPwChannels, Kg - kt * kPwChannels),
                     Cg, wp.get() + i * tile_floats);
    }
  });

  const float* res = static_cast<const float*>(p.post.residual);
  const bool fuse = p.post.act.kind == ActKind::kIdentity || p.post.act.kind == ActKind::kRelu;
  const std::int64_t KC = reduction_block(Cg);
  const std::int64_t osp = p.out_spatial(), OH = p.out[1], OW = p.out[2];
  const std::vector<Item> items = work_items(M, KT, G, Kg, detail::max_threads(h));
  // Each thread takes a contiguous run of items of near-equal cost (pixels x channel tiles).
  std::vector<std::int64_t> cost(items.size() + 1, 0);
  for (std::size_t i = 0; i < items.size(); ++i)
    cost[i + 1] = cost[i] + (items[i].m1 - items[i].m0) * (items[i].t1 - items[i].t0);
  const int shares = detail::max_threads(h);
  auto first_item = [&](std::int64_t share) {  // the first item whose cost midpoint is in share
    const std::int64_t target = cost.back() * share;
    std::size_t i = 0;
    while (i < items.size() && (cost[i] + cost[i + 1]) * shares < 2 * target) ++i;
    return i;
  };

  detail::parallel_for(h, 0, shares, 1, [&](std::int64_t b, std::int64_t e) {
    const float* rows[kMaxBlockPixels];
    for (std::size_t it = first_item(b); it < first_item(e); ++it) {
      const auto [g, m0, m1, t0, t1] = items[it];
      for (std::int64_t m = m0; m < m1; ++m) {
        const std::int64_t n = m / osp, q = m % osp;
        const std::int64_t od = q / (OH * OW), oh = (q / OW) % OH, ow = q % OW;
        rows[m - m0] = p.x + n * p.xs.n + od * p.stride[0] * p.xs.d + oh * p.stride[1] * p.xs.h +
                       ow * p.stride[2] * p.xs.w + g * Cg;
      }
      for (std::int64_t c0 = 0; c0 < Cg; c0 += KC) {
        const std::int64_t kc = std::min(KC, Cg - c0);
        const bool last = c0 + kc == Cg;
        for (std::int64_t m = m0; m < m1; m += kPwPixels) {
          const float* xr[kPwPixels];
          const int mp = static_cast<int>(std::min<std::int64_t>(kPwPixels, m1 - m));
          for (int j = 0; j < mp; ++j) xr[j] = rows[m - m0 + j] + c0;
          for (std::int64_t kt = t0; kt < t1; ++kt) {
            const std::int64_t k = g * Kg + kt * kPwChannels;
            PwEpilogue post;
            if (last && fuse && p.has_post_ops()) {
              post.bias = p.post.bias ? p.post.bias + k : nullptr;
              post.residual = res ? res + m * K + k : nullptr;
              post.relu = p.post.act.kind == ActKind::kRelu;
            }
            PwTile t{xr,
                     wp.get() + (g * KT + kt) * tile_floats + c0 * kPwChannels,
                     p.y_out + m * K + k,
                     K,
                     kc,
                     mp,
                     static_cast<int>(std::min<std::int64_t>(kPwChannels, Kg - kt * kPwChannels)),
                     c0 > 0,
                     last && fuse && p.has_post_ops() ? &post : nullptr};
            pw_tile_avx512(t);
          }
        }
      }
      if (!fuse)
        apply_post_ops_nhwc(p, p.y_out + m0 * K, res ? res + m0 * K : nullptr, m1 - m0,
                            g * Kg + t0 * kPwChannels, g * Kg + std::min(Kg, t1 * kPwChannels));
    }
  });
  return Status::ok();
}

}  // namespace tessera::dnn::conv
