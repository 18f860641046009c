// Winograd backward-weights, F(2x2,3x3) and F(4x4,3x3): the gradient of the forward
// Y = A^T [(G g G^T) . (B^T d B)] A with respect to g is
//   dg = G^T [ sum over tiles of (A dy A^T) . (B^T d B) ] G,
// so per transform position the sum over tiles is one GEMM, dU[k][c] = sum_t D[t][k] V[t][c],
// reducing over every output tile of every image (docs/dnn_winograd.md).
//
// The tiles are taken in blocks small enough for their transforms to stay in the last-level
// cache. Per block, the threads first split its tiles: each stages the input rows and the
// output-gradient rows of its tile-row segments (stage_strip) and transforms them into V
// and D: per transform position, V as panels of 32 input channels [panel][tile][32] and D as
// groups of 16 output channels [group][tile][16], so that each GEMM streams both operands
// front to back.
// Then they split the items, (group, panel of 32 input channels, block of kKBlock output
// channels): an item runs its alpha^2 GEMMs over the block's tiles into its dU (accumulating
// after the first block) and, after the last block, transforms dU into the caller's dW.
//
// Every dW element comes from alpha^2 sums, each one chain of multiply-adds over the tiles in
// order, so the result does not depend on the thread count or on how the work is cut.
#include <algorithm>
#include <cstring>

#include "tessera/core/cpu.hpp"
#include "winograd_common.hpp"

namespace tessera::dnn::conv {
namespace {

using namespace wino;

constexpr i64 kKBlock = 64;               // output channels per item (rows of its GEMMs)
constexpr i64 kMaxBlockTiles = 512;       // tiles per block
constexpr i64 kMinBudget = i64{4} << 20;  // bytes of V + D per block, when the cache is unknown

struct Plan {
  const Problem& p;
  const WinoKernels& k;
  int f;                  // 0: F(2x2,3x3), 1: F(4x4,3x3)
  i64 m, a, npos;         // output tile, input tile (alpha), transform positions
  i64 th, tw, tiles;      // tile rows and columns per image, tiles of all images
  i64 cpw, kgp;           // per-group channel widths of V (multiple of 32) and D (of 16)
  i64 tb, nblocks;        // tiles per block, blocks
  i64 v_pos, d_pos;       // position strides of V and D (panels tb x 32, groups tb x 16)
  i64 npanels, nkb;       // input-channel panels and output-channel blocks per group
  i64 m_pos, m_floats;    // dU of one item: position stride, size
  bool nhwc;
  i64 xs_floats, ds_floats;  // staging strips of one thread

  Plan(const Problem& prob, const WinoKernels& kern, int variant)
      : p(prob), k(kern), f(variant) {
    m = f == 0 ? 2 : 4;
    a = m + 2;
    npos = a * a;
    th = ceil_div(p.out[1], m);
    tw = ceil_div(p.out[2], m);
    tiles = p.N * th * tw;
    // A panel reads 32 columns of V: whole panels inside each group's zero-padded width.
    cpw = round_up(p.Cg, kWinoPanel);
    kgp = round_up(p.Kg, kWinoPad);
    const i64 llc = cpu_info().last_level_cache_bytes();
    const i64 budget = std::max(kMinBudget, llc / 2);
    const i64 per_tile = npos * p.G * (cpw + kgp) * static_cast<i64>(sizeof(float));
    const i64 cap = std::clamp<i64>(budget / per_tile, 1, kMaxBlockTiles);
    nblocks = ceil_div(tiles, cap);
    tb = ceil_div(tiles, nblocks);
    v_pos = odd_lines(tb * p.G * cpw);
    d_pos = odd_lines(tb * p.G * kgp);
    npanels = cpw / kWinoPanel;
    nkb = ceil_div(p.Kg, kKBlock);
    m_pos = odd_lines(kKBlock * kWinoPanel);
    m_floats = npos * m_pos;
    nhwc = p.x_layout == Layout::kNHWC;
    xs_floats = a * odd_lines((tw * m + 2) * cpw);
    ds_floats = m * odd_lines(tw * m * kgp);
  }
  i64 items() const { return p.G * npanels * nkb; }
};

// The tiles [t0, t1) of the whole problem (flat over image, tile row, tile column) in runs
// within one tile row: image n, tile row ti, tile columns [j0, j1).
template <typename Fn>
void for_each_run(const Plan& pl, i64 t0, i64 t1, Fn&& fn) {
  for (i64 t = t0; t < t1;) {
    const i64 n = t / (pl.th * pl.tw), r = t % (pl.th * pl.tw);
    const i64 ti = r / pl.tw, j0 = r % pl.tw, j1 = std::min(pl.tw, j0 + (t1 - t));
    fn(t, n, ti, j0, j1);
    t += j1 - j0;
  }
}

// V and D of tiles [t0, t1), stored as rows t - b0 of the block.
void transform_tiles(const Plan& pl, i64 b0, i64 t0, i64 t1, float* v, float* d, float* xs,
                     float* ds) {
  const Problem& p = pl.p;
  for_each_run(pl, t0, t1, [&](i64 t, i64 n, i64 ti, i64 j0, i64 j1) {
    const i64 nj = j1 - j0, xrow = odd_lines((nj * pl.m + 2) * pl.cpw),
              drow = odd_lines(nj * pl.m * pl.kgp);
    for (i64 g = 0; g < p.G; ++g) {
      const Plane x{p.x + n * p.xs.n + g * p.Cg * p.xs.c, p.xs, p.in[1], p.in[2], p.Cg, pl.nhwc};
      stage_strip(pl.k, x, ti * pl.m - p.pad_b[1], j0 * pl.m - p.pad_b[2], pl.a, nj * pl.m + 2,
                  pl.cpw, xs);
      const Plane dy{p.y_in + n * p.ys.n + g * p.Kg * p.ys.c, p.ys, p.out[1], p.out[2], p.Kg, pl.nhwc};
      stage_strip(pl.k, dy, ti * pl.m, j0 * pl.m, pl.m, nj * pl.m, pl.kgp, ds);
      for (i64 j = 0; j < nj; ++j) {
        const i64 row = t - b0 + j;
        for (i64 c = 0; c < pl.cpw; c += kWinoPanel)
          pl.k.input[pl.f](xs + j * pl.m * pl.cpw + c, pl.cpw, xrow, kWinoPanel,
                           v + ((g * pl.cpw + c) / kWinoPanel * pl.tb + row) * kWinoPanel, pl.v_pos);
        for (i64 k = 0; k < pl.kgp; k += kWinoPad)
          pl.k.grad[pl.f](ds + j * pl.m * pl.kgp + k, pl.kgp, drow, kWinoPad,
                          d + ((g * pl.kgp + k) / kWinoPad * pl.tb + row) * kWinoPad, pl.d_pos);
      }
    }
  });
}

// dW of output channels [k0, k0 + kn) and input channels [c0, c0 + 32) of group g from dU.
void write_dw(const Plan& pl, i64 g, i64 k0, i64 kn, i64 c0, const float* du) {
  const Problem& p = pl.p;
  const i64 cn = std::min(kWinoPanel, p.Cg - c0);
  float taps[9 * kWinoPanel];
  for (i64 kk = 0; kk < kn; ++kk) {
    pl.k.wgrad[pl.f](du + kk * kWinoPanel, pl.m_pos, kWinoPanel, taps, kWinoPanel);
    float* w = p.w_out + (g * p.Kg + k0 + kk) * p.ws.n + c0 * p.ws.c;
    for (i64 t = 0; t < 9; ++t) {
      float* wt = w + (t / 3) * p.ws.h + (t % 3) * p.ws.w;
      for (i64 c = 0; c < cn; ++c) wt[c * p.ws.c] = taps[t * kWinoPanel + c];
    }
  }
}

void run_item(const Plan& pl, i64 item, i64 block, i64 nt, const float* v, const float* d, float* du) {
  const Problem& p = pl.p;
  const i64 g = item / (pl.npanels * pl.nkb), rest = item % (pl.npanels * pl.nkb);
  const i64 c0 = rest / pl.nkb * kWinoPanel, k0 = rest % pl.nkb * kKBlock;
  const i64 kn = std::min(kKBlock, p.Kg - k0);
  const float* vp = v + (g * pl.cpw + c0) / kWinoPanel * pl.tb * kWinoPanel;
  for (i64 q = 0; q < pl.npos; ++q)
    for (i64 r = 0; r < kn; r += kWinoPad)
      pl.k.gemm_at(std::min(kWinoPad, kn - r), nt,
                   d + q * pl.d_pos + (g * pl.kgp + k0 + r) / kWinoPad * pl.tb * kWinoPad, kWinoPad,
                   vp + q * pl.v_pos, kWinoPanel, kWinoPanel, du + q * pl.m_pos + r * kWinoPanel,
                   kWinoPanel, block > 0);
  if (block == pl.nblocks - 1) write_dw(pl, g, k0, kn, c0, du);
}

Status accepts(const Problem& p, int variant) {
  if (p.dir != ConvDir::kBackwardWeights) return detail::refuse("backward-weights only");
  return shape_accepts(p, variant);
}

Status run(Handle& h, const Problem& p, int variant) {
  TESSERA_RETURN_IF_ERROR(accepts(p, variant));
  const Plan pl(p, kernels(), variant);
  const i64 threads = detail::max_threads(h), items = pl.items();
  TESSERA_VLOG(kDispatch) << "conv bwd-weights winograd f" << pl.m << "x3: " << pl.k.isa
                          << " kernels, " << pl.nblocks << " blocks of " << pl.tb << " tiles, "
                          << items << " items";
  // Workspace: V and D of one block; dU of every item when the reduction spans blocks (else
  // each thread's dU is reused item after item); per thread the staging strips.
  const bool shared_du = pl.nblocks > 1;
  const i64 vd = round_up(pl.npos * (pl.v_pos + pl.d_pos), 16);
  const i64 du_all = shared_du ? items * pl.m_floats : 0;
  const i64 per = round_up(pl.xs_floats + pl.ds_floats + (shared_du ? 0 : pl.m_floats), 16);
  TESSERA_ASSIGN_OR_RETURN(void* ws, detail::workspace(h, static_cast<std::size_t>(vd + du_all + threads * per) * sizeof(float)));
  float* v = static_cast<float*>(ws);
  float* d = v + pl.npos * pl.v_pos;
  float* du = v + vd;
  float* thread_base = du + du_all;
  for (i64 b = 0; b < pl.nblocks; ++b) {
    const i64 b0 = b * pl.tb, b1 = std::min(pl.tiles, b0 + pl.tb);
    const i64 tslots = std::min(threads, b1 - b0);
    detail::parallel_for(h, 0, tslots, 1, [&](i64 s0, i64 s1) {
      for (i64 s = s0; s < s1; ++s) {
        float* xs = thread_base + s * per;
        transform_tiles(pl, b0, b0 + s * (b1 - b0) / tslots, b0 + (s + 1) * (b1 - b0) / tslots, v,
                        d, xs, xs + pl.xs_floats);
      }
    });
    const i64 islots = std::min(threads, items);
    detail::parallel_for(h, 0, islots, 1, [&](i64 s0, i64 s1) {
      for (i64 s = s0; s < s1; ++s)
        for (i64 i = s * items / islots; i < (s + 1) * items / islots; ++i)
          run_item(pl, i, b, b1 - b0, v, d,
                   shared_du ? du + i * pl.m_floats : thread_base + s * per + pl.xs_floats + pl.ds_floats);
    });
  }
  bias_grad(p);
  return Status::ok();
}

}  // namespace

Status winograd_f2x3_bwd_weights_accepts(const Problem& p) {
  return accepts(p, 0);
}
Status winograd_f4x3_bwd_weights_accepts(const Problem& p) {
  return accepts(p, 1);
}
Status winograd_f2x3_bwd_weights(Handle& h, const Problem& p) {
  return run(h, p, 0);
}
Status winograd_f4x3_bwd_weights(Handle& h, const Problem& p) {
  return run(h, p, 1);
}

}  // namespace tessera::dnn::conv
