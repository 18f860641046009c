// Winograd convolution F(2x2,3x3) and F(4x4,3x3) (2-D, 3x3, stride 1, dilation 1, any
// padding, groups; x and y packed alike in NHWC or NCHW). See docs/dnn_winograd.md.
//
// The output tiles (m x m pixels, flat over image, tile row, tile column) are cut into items of
// `tb` tiles and, when there are too few of those for the threads, ranges of output-channel
// panels. An item stages the input rows of each of its tile-row segments into a zero-padded
// channels-inner strip (a copy for NHWC, a transpose for NCHW) and transforms its tiles into V
// (alpha^2 positions x tiles x channels). Then, per panel of 32 output channels and per block
// of 64 input channels, it transforms that block of filters (U = G g G^T, small enough to stay
// in L2), runs one small GEMM per position accumulating into M (a register-blocked kernel), and
// finishes the panel with the output transform and the post-ops (NHWC: straight into y; NCHW:
// into a strip transposed into y). Transformed filters never go to memory: an item redoes the
// filter transforms it needs, which costs a few tiles' worth of GEMM per item.
//
// Every output element is computed by one item as one chain of multiply-adds in a fixed order,
// so results do not depend on the thread count or on how items are cut.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "../activation/act_scalar.hpp"
#include "algos.hpp"
#include "tessera/core/cpu.hpp"
#include "winograd_common.hpp"

namespace tessera::dnn::conv {
namespace wino {

constexpr i64 kMinChannels = 8;  // per group, input and output

const WinoKernels& kernels() {
  const Isa isa = cpu_info().isa();
  if (isa >= Isa::kAvx512) return kWinoAvx512;
  if (isa >= Isa::kAvx2) return kWinoAvx2;
  return kWinoGeneric;
}

void stage_strip(const WinoKernels& k, const Plane& src, i64 h0, i64 w0, i64 rows, i64 sw, i64 cp,
                 float* strip) {
  const i64 C = src.channels, rs = odd_lines(sw * cp);
  const i64 lo = std::clamp<i64>(-w0, 0, sw), hi = std::clamp<i64>(src.w - w0, lo, sw);
  for (i64 r = 0; r < rows; ++r) {
    float* row = strip + r * rs;
    const i64 ih = h0 + r;
    if (ih < 0 || ih >= src.h || lo == hi) {
      std::memset(row, 0, static_cast<std::size_t>(sw * cp) * sizeof(float));
      continue;
    }
    const float* from = src.base + ih * src.s.h + (w0 + lo) * src.s.w;
    if (!src.nhwc) {
      std::memset(row, 0, static_cast<std::size_t>(sw * cp) * sizeof(float));
      k.transpose(C, hi - lo, from, src.s.c, row + lo * cp, cp);
      continue;
    }
    std::memset(row, 0, static_cast<std::size_t>(lo * cp) * sizeof(float));
    std::memset(row + hi * cp, 0, static_cast<std::size_t>((sw - hi) * cp) * sizeof(float));
    if (C == cp && src.s.w == cp) {
      std::memcpy(row + lo * cp, from, static_cast<std::size_t>((hi - lo) * cp) * sizeof(float));
    } else {
      for (i64 c = lo; c < hi; ++c) {
        std::memcpy(row + c * cp, from + (c - lo) * src.s.w, static_cast<std::size_t>(C) * sizeof(float));
        std::memset(row + c * cp + C, 0, static_cast<std::size_t>(cp - C) * sizeof(float));
      }
    }
  }
}

Status shape_accepts(const Problem& p, int variant) {
  if (p.spatial_rank != 2)
    return detail::refuse("needs a 2-D convolution, got " + std::to_string(p.spatial_rank) + "-D");
  if (p.ker[1] != 3 || p.ker[2] != 3)
    return detail::refuse("needs a 3x3 kernel, got " + std::to_string(p.ker[1]) + "x" +
                          std::to_string(p.ker[2]));
  if (p.stride[1] != 1 || p.stride[2] != 1) return detail::refuse("needs stride 1");
  if (p.dil[1] != 1 || p.dil[2] != 1) return detail::refuse("needs dilation 1");
  if (p.Cg < kMinChannels || p.Kg < kMinChannels)
    return detail::refuse("fewer than " + std::to_string(kMinChannels) +
                          " input or output channels per group (transform overhead dominates)");
  if (!p.x_layout || p.x_layout != p.y_layout)
    return detail::refuse("x and y must be packed alike in NCHW or NHWC");
  // Output tiles that are mostly padding (e.g. F(4x4,3x3) on a 2x2 or one-row output) need
  // as many multiplications as the direct method, plus the transforms.
  const i64 m = variant == 0 ? 2 : 4, a = m + 2;
  if (a * a * ceil_div(p.out[1], m) * ceil_div(p.out[2], m) >= 9 * p.out[1] * p.out[2])
    return detail::refuse("output " + std::to_string(p.out[1]) + "x" + std::to_string(p.out[2]) +
                          " is too small for " + std::to_string(m) + "x" + std::to_string(m) +
                          " tiles (no fewer multiplications than direct)");
  return Status::ok();
}

}  // namespace wino

namespace {

using namespace wino;

constexpr i64 kVBudgetBytes = i64{1} << 20;    // transformed input of one item (about L2)
constexpr i64 kMinTiles = 32, kMaxTiles = 64;  // tiles per item
constexpr i64 kMinSplitTiles = 48;             // tiles per item when splitting for threads
constexpr i64 kBlockC = 64;                    // input channels per filter-transform block

struct Plan {
  const Problem& p;
  const WinoKernels& k;
  int f;                    // 0: F(2x2,3x3), 1: F(4x4,3x3)
  i64 m, a, npos;           // output tile, input tile (alpha), transform positions (alpha^2)
  i64 th, tw, tiles;        // tile rows and columns per image; tiles per group (all images)
  i64 cp, vs, kgp;          // padded Cg, V row stride, padded Kg
  i64 tb, ntb;              // tiles per item (at most), tile blocks
  i64 kr, nkr;              // output channels per item (a multiple of kWinoPanel), ranges
  i64 u_pos, v_pos, m_pos;  // position strides of U, V and M
  bool nhwc;
  WinoAct act = WinoAct::kNone;
  bool scalar_act = false;  // NHWC: an activation the output kernel does not apply
  i64 g_floats, u_floats, v_floats, m_floats, s_floats, ys_floats;  // scratch of an item

  Plan(const Problem& prob, const WinoKernels& kern, int variant, int threads)
      : p(prob), k(kern), f(variant) {
    m = f == 0 ? 2 : 4;
    a = m + 2;
    npos = a * a;
    th = ceil_div(p.out[1], m);
    tw = ceil_div(p.out[2], m);
    tiles = p.N * th * tw;
    cp = round_up(p.Cg, kWinoPad);
    vs = odd_lines(cp);
    kgp = round_up(p.Kg, kWinoPad);
    nhwc = p.x_layout == Layout::kNHWC;
    // Tile blocks of at most kMaxTiles (fewer when V would outgrow its budget). The pool
    // splits the items into `threads` contiguous ranges, so with few items their count is
    // made a multiple of the threads: more tile blocks while each keeps kMinSplitTiles (every
    // item transforms all its filters), else ranges of output channels (each redoes its input
    // transforms, cheap next to its GEMMs).
    const i64 cap = std::clamp(kVBudgetBytes / (npos * vs * 4), kMinTiles, kMaxTiles);
    const i64 t = threads, panels = ceil_div(p.Kg, kWinoPanel);
    ntb = ceil_div(tiles, cap);
    nkr = 1;
    if (t > 1 && p.G * ntb < 8 * t && p.G * ntb % t != 0) {
      i64 more = ntb;
      while (p.G * more % t != 0 && tiles / (more + 1) >= kMinSplitTiles) ++more;
      if (p.G * more % t == 0)
        ntb = more;
      else
        nkr = std::min(panels, t / std::gcd(p.G * ntb, t));
    }
    tb = ceil_div(tiles, ntb);
    kr = ceil_div(panels, nkr) * kWinoPanel;
    nkr = ceil_div(p.Kg, kr);
    u_pos = odd_lines(kBlockC * kWinoPanel);
    v_pos = odd_lines(tb * vs);
    m_pos = odd_lines(tb * kWinoPanel);
    g_floats = 9 * p.Cg * kWinoPanel;
    u_floats = npos * u_pos;
    v_floats = npos * v_pos;
    m_floats = npos * m_pos;
    s_floats = a * odd_lines((tw * m + 2) * cp);
    ys_floats = nhwc ? 0 : m * tw * m * kWinoPanel;
    switch (p.post.act.kind) {
      case ActKind::kIdentity:
        break;
      case ActKind::kRelu:
        act = WinoAct::kRelu;
        break;
      case ActKind::kLeakyRelu:
        act = WinoAct::kLeakyRelu;
        break;
      case ActKind::kClip:
        act = WinoAct::kClip;
        break;
      default:
        scalar_act = true;
        break;
    }
  }
  i64 items() const { return p.G * ntb * nkr; }
  i64 scratch_floats() const {  // a multiple of 16: slices stay 64-byte aligned
    return round_up(g_floats + u_floats + v_floats + m_floats + s_floats + ys_floats, 16);
  }
};

// ---- filters --------------------------------------------------------------------------------

// The filters of output channels [k0, k0 + kn) of group g as g9[r][j] (rows of kWinoPanel,
// zero from kn to width), r the filter element's position in a caller's row: c * 9 + tap for
// OIHW and other strides, tap * Cg + c for OHWI. Each filter row is read front to back.
struct Filters {
  i64 c_rows, tap_rows;  // rows of g9 between consecutive input channels and taps
};
Filters gather_filters(const Plan& pl, i64 g, i64 k0, i64 kn, i64 width, float* g9) {
  const Problem& p = pl.p;
  constexpr i64 ld = kWinoPanel;
  const i64 rows = 9 * p.Cg;
  const float* w = p.w + (g * p.Kg + k0) * p.ws.n;
  Filters f{9, 1};
  if (p.w_oihw || p.w_ohwi) {
    pl.k.transpose(kn, rows, w, p.ws.n, g9, ld);
    if (p.w_ohwi) f = {1, p.Cg};
  } else {
    for (i64 k = 0; k < kn; ++k)
      for (i64 c = 0; c < p.Cg; ++c)
        for (i64 t = 0; t < 9; ++t)
          g9[(c * 9 + t) * ld + k] =
              w[k * p.ws.n + c * p.ws.c + (t / 3) * p.ws.h + (t % 3) * p.ws.w];
  }
  if (width > kn)
    for (i64 r = 0; r < rows; ++r)
      std::memset(g9 + r * ld + kn, 0, static_cast<std::size_t>(width - kn) * sizeof(float));
  return f;
}

// ---- one item -------------------------------------------------------------------------------

// A run of tiles within one tile row: image n, tile row ti, tile columns [j0, j1); its first
// tile is tile `t` of the item.
struct Segment {
  i64 n, ti, j0, j1, t;
};

template <typename Fn>
void for_each_segment(const Plan& pl, i64 t0, i64 t1, Fn&& fn) {
  for (i64 t = t0; t < t1;) {
    const i64 n = t / (pl.th * pl.tw), r = t % (pl.th * pl.tw);
    const i64 ti = r / pl.tw, j0 = r % pl.tw, j1 = std::min(pl.tw, j0 + (t1 - t));
    fn(Segment{n, ti, j0, j1, t - t0});
    t += j1 - j0;
  }
}

// The input rows of a segment as a zero-padded strip [a][sw][cp], sw = (j1 - j0) * m + 2.
void stage_input(const Plan& pl, i64 g, const Segment& s, float* strip) {
  const Problem& p = pl.p;
  const Plane x{p.x + s.n * p.xs.n + g * p.Cg * p.xs.c, p.xs, p.in[1], p.in[2], p.Cg, pl.nhwc};
  stage_strip(pl.k, x, s.ti * pl.m - p.pad_b[1], s.j0 * pl.m - p.pad_b[2], pl.a,
              (s.j1 - s.j0) * pl.m + 2, pl.cp, strip);
}

struct Scratch {
  float *g9, *u, *v, *m, *strip, *ys;
};

// The transformed filters of input channels [c0, c1) for the panel gathered in g9: U[q] at
// u + q * u_pos, rows (c - c0) of `width`.
void transform_block(const Plan& pl, const Filters& fl, const float* g9, i64 c0, i64 c1, i64 width,
                     float* u) {
  for (i64 c = c0; c < c1; ++c)
    pl.k.weights[pl.f](g9 + c * fl.c_rows * kWinoPanel, fl.tap_rows * kWinoPanel, width,
                       u + (c - c0) * width, pl.u_pos);
}

// A plan's transformed filters: per group, panel and block of input channels, one U as the
// items build it (the layout depends on the variant and the problem, not on the threads).
i64 panels(const Plan& pl) { return ceil_div(pl.kgp, kWinoPanel); }
i64 c_blocks(const Problem& p) { return ceil_div(p.Cg, kBlockC); }
const float* packed_u(const Plan& pl, i64 g, i64 k0, i64 c0) {
  return pl.p.w_packed + ((g * panels(pl) + k0 / kWinoPanel) * c_blocks(pl.p) + c0 / kBlockC) * pl.u_floats;
}

// M = V U for output channels [k0, k0 + width) of group g and every tile of the item, the
// filters transformed one block of input channels at a time (or taken from a plan).
void gemm_panel(const Plan& pl, i64 g, i64 T, i64 k0, i64 width, const Scratch& sc) {
  const Problem& p = pl.p;
  Filters fl{};
  if (p.w_packed == nullptr) fl = gather_filters(pl, g, k0, std::min(kWinoPanel, p.Kg - k0), width, sc.g9);
  for (i64 c0 = 0; c0 < p.Cg; c0 += kBlockC) {
    const i64 c1 = std::min(p.Cg, c0 + kBlockC);
    const float* u = sc.u;
    if (p.w_packed != nullptr)
      u = packed_u(pl, g, k0, c0);
    else
      transform_block(pl, fl, sc.g9, c0, c1, width, sc.u);
    for (i64 q = 0; q < pl.npos; ++q)
      pl.k.gemm(T, c1 - c0, sc.v + q * pl.v_pos + c0, pl.vs, u + q * pl.u_pos, width,
                sc.m + q * pl.m_pos, kWinoPanel, c0 > 0);
  }
}

void output_nhwc(const Plan& pl, i64 g, const Segment& s, i64 kb, i64 ke, const Scratch& sc) {
  const Problem& p = pl.p;
  const float* res = static_cast<const float*>(p.post.residual);
  const i64 kn = ke - kb, k0 = g * p.Kg + kb;
  for (i64 j = s.j0; j < s.j1; ++j) {
    const i64 oh0 = s.ti * pl.m, ow0 = j * pl.m;
    const i64 off = s.n * p.ys.n + oh0 * p.ys.h + ow0 * p.ys.w + k0;
    WinoOut o{p.y_out + off,
              res ? res + off : nullptr,
              p.post.bias ? p.post.bias + k0 : nullptr,
              p.ys.h,
              p.ys.w,
              static_cast<int>(std::min(pl.m, p.out[1] - oh0)),
              static_cast<int>(std::min(pl.m, p.out[2] - ow0)),
              pl.act,
              p.post.act.alpha,
              p.post.act.beta};
    pl.k.output[pl.f](sc.m + (s.t + j - s.j0) * kWinoPanel, pl.m_pos, kn, o);
    if (pl.scalar_act)
      for (int r = 0; r < o.rows; ++r)
        for (int c = 0; c < o.cols; ++c) {
          float* y = o.y + r * o.row_stride + c * o.pixel_stride;
          for (i64 kk = 0; kk < kn; ++kk) y[kk] = act::forward(p.post.act, y[kk]);
        }
  }
}

void output_nchw(const Plan& pl, i64 g, const Segment& s, i64 kb, i64 ke, const Scratch& sc) {
  const Problem& p = pl.p;
  const i64 segc = (s.j1 - s.j0) * pl.m, kn = ke - kb, k0 = g * p.Kg + kb;
  for (i64 j = s.j0; j < s.j1; ++j) {
    const int m = static_cast<int>(pl.m);
    WinoOut o{sc.ys + (j - s.j0) * pl.m * kWinoPanel,
              nullptr,
              nullptr,
              segc * kWinoPanel,
              kWinoPanel,
              m,
              m,
              WinoAct::kNone,
              0.0f,
              0.0f};
    pl.k.output[pl.f](sc.m + (s.t + j - s.j0) * kWinoPanel, pl.m_pos, kn, o);
  }
  const float* res = static_cast<const float*>(p.post.residual);
  const i64 oh0 = s.ti * pl.m, ow0 = s.j0 * pl.m;
  const i64 rows = std::min(pl.m, p.out[1] - oh0), cols = std::min(segc, p.out[2] - ow0);
  for (i64 r = 0; r < rows; ++r) {
    const i64 off = s.n * p.ys.n + k0 * p.ys.c + (oh0 + r) * p.ys.h + ow0 * p.ys.w;
    pl.k.transpose(cols, kn, sc.ys + r * segc * kWinoPanel, kWinoPanel, p.y_out + off, p.ys.c);
    if (p.has_post_ops())
      apply_post_ops_nchw(p, p.y_out + off, res ? res + off : nullptr, k0, k0 + kn, cols, p.ys.c);
  }
}

void run_item(const Plan& pl, i64 item, float* scratch) {
  const Problem& p = pl.p;
  const i64 g = item / (pl.ntb * pl.nkr), rest = item % (pl.ntb * pl.nkr);
  const i64 b = rest / pl.nkr;
  const i64 t0 = b * pl.tiles / pl.ntb, t1 = (b + 1) * pl.tiles / pl.ntb;
  const i64 k0 = rest % pl.nkr * pl.kr, k1 = std::min(p.Kg, k0 + pl.kr);
  Scratch sc;
  sc.g9 = scratch;
  sc.u = sc.g9 + pl.g_floats;
  sc.v = sc.u + pl.u_floats;
  sc.m = sc.v + pl.v_floats;
  sc.strip = sc.m + pl.m_floats;
  sc.ys = sc.strip + pl.s_floats;
  for_each_segment(pl, t0, t1, [&](const Segment& s) {
    stage_input(pl, g, s, sc.strip);
    const i64 row = odd_lines(((s.j1 - s.j0) * pl.m + 2) * pl.cp);
    for (i64 j = s.j0; j < s.j1; ++j)
      pl.k.input[pl.f](sc.strip + (j - s.j0) * pl.m * pl.cp, pl.cp, row, pl.cp,
                       sc.v + (s.t + j - s.j0) * pl.vs, pl.v_pos);
  });
  for (i64 kb = k0; kb < k1; kb += kWinoPanel) {
    const i64 ke = std::min(k1, kb + kWinoPanel);
    gemm_panel(pl, g, t1 - t0, kb, std::min(kWinoPanel, pl.kgp - kb), sc);
    for_each_segment(pl, t0, t1, [&](const Segment& s) {
      if (pl.nhwc)
        output_nhwc(pl, g, s, kb, ke, sc);
      else
        output_nchw(pl, g, s, kb, ke, sc);
    });
  }
}

Status accepts(const Problem& p, int variant) {
  if (p.dir != ConvDir::kForward) return detail::refuse("forward only");
  return shape_accepts(p, variant);
}

Status run(Handle& h, const Problem& p, int variant) {
  TESSERA_RETURN_IF_ERROR(accepts(p, variant));
  const int threads = detail::max_threads(h);
  const Plan pl(p, kernels(), variant, threads);
  TESSERA_VLOG(kDispatch) << "conv winograd f" << pl.m << "x3: " << pl.k.isa << " kernels, "
                          << pl.items() << " items (" << pl.ntb << " tile blocks x " << pl.nkr
                          << " channel ranges x " << p.G << " groups)";
  // Consecutive items in `slots` runs (as many as threads), each with its own scratch slice of
  // the handle's workspace.
  const i64 items = pl.items(), slots = std::min<i64>(threads, items);
  const i64 per = pl.scratch_floats();
  TESSERA_ASSIGN_OR_RETURN(
      void* ws, detail::workspace(h, static_cast<std::size_t>(slots * per) * sizeof(float)));
  float* scratch = static_cast<float*>(ws);
  detail::parallel_for(h, 0, slots, 1, [&](i64 b, i64 e) {
    for (i64 s = b; s < e; ++s)
      for (i64 i = s * items / slots; i < (s + 1) * items / slots; ++i)
        run_item(pl, i, scratch + s * per);
  });
  return Status::ok();
}

void pack(Handle& h, const Problem& p, int variant, PackedWeights& out) {
  if (!accepts(p, variant).is_ok()) return;
  const Plan pl(p, kernels(), variant, 1);
  const i64 np = panels(pl), nc = c_blocks(p), floats = p.G * np * nc * pl.u_floats;
  // Every item reads all of its U: transformed filters larger than half the last-level cache
  // come from memory each time, slower than transforming them per item into L1 (ResNet-50's
  // res5b_branch2b, 38 MB of U: 5.1 ms at mb8 against 4.0 per call; res4b_branch2b, 9.5 MB:
  // 3.6 against 4.3).
  const i64 llc = cpu_info().last_level_cache_bytes();
  if (llc <= 0 || floats * static_cast<i64>(sizeof(float)) > llc / 2) return;
  float* u = out.allocate(static_cast<std::size_t>(floats));
  detail::parallel_for(h, 0, p.G * np, 1, [&](i64 b, i64 e) {
    std::vector<float> g9(static_cast<std::size_t>(pl.g_floats));
    for (i64 i = b; i < e; ++i) {
      const i64 g = i / np, k0 = i % np * kWinoPanel, width = std::min(kWinoPanel, pl.kgp - k0);
      const Filters fl = gather_filters(pl, g, k0, std::min(kWinoPanel, p.Kg - k0), width, g9.data());
      for (i64 c0 = 0; c0 < p.Cg; c0 += kBlockC)
        transform_block(pl, fl, g9.data(), c0, std::min(p.Cg, c0 + kBlockC), width,
                        u + (i * nc + c0 / kBlockC) * pl.u_floats);
    }
  });
}

}  // namespace

Status winograd_f2x3_accepts(const Problem& p) {
  return accepts(p, 0);
}
Status winograd_f4x3_accepts(const Problem& p) {
  return accepts(p, 1);
}
Status winograd_f2x3_fwd(Handle& h, const Problem& p) {
  return run(h, p, 0);
}
Status winograd_f4x3_fwd(Handle& h, const Problem& p) {
  return run(h, p, 1);
}
// With few output pixels each filter's transform costs about as much as its share of the
// multiplications: ResNet-50's res5b_branch2b at mb1 (7x7 x 512 channels) ran 1.25-1.30x
// oneDNN's time on F(4x4,3x3) and 1.36x on F(2x2,3x3), against 1.18x on direct.
constexpr i64 kMinPreferredPixels = 128;
Status winograd_prefers(const Problem& p) {
  const i64 pixels = p.N * p.out[1] * p.out[2];
  if (pixels < kMinPreferredPixels)
    return detail::refuse(std::to_string(pixels) + " output pixels (< " + std::to_string(kMinPreferredPixels) +
                          "): the filter transforms cost as much as the multiplications");
  return Status::ok();
}
void winograd_f2x3_pack(Handle& h, const Problem& p, PackedWeights& out) { pack(h, p, 0, out); }
void winograd_f4x3_pack(Handle& h, const Problem& p, PackedWeights& out) { pack(h, p, 1, out); }

}  // namespace tessera::dnn::conv
