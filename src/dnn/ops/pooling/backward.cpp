// Pooling backward drivers. Each thread owns whole (n, c) planes (NCHW) or (n, channel block)
// slices (NHWC) of dx and adds every gradient from +0 in the reference's output order, so
// results are the same bits for any thread count. Where the windows allow, dx is gathered: each
// dx row is computed once from the windows covering it (max: their winners; average: their
// divided gradients) and written once, streamed past the last-level cache; otherwise rows are
// accumulated in a per-thread ring (or slice) and written out whole.
#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "../activation/dense.hpp"
#include "drivers.hpp"

namespace tessera::dnn::pool {
namespace {

// NHWC backward slices: (n, channel block) pairs, blocks of a multiple of 16 channels, enough
// of them to feed every thread (the split never changes results: each dx element belongs to
// one slice and receives its gradients in output order).
i64 channel_block(const Handle& h, const Geom& g) {
  const i64 threads = detail::max_threads(h);
  const i64 per_image =
      std::clamp<i64>((2 * threads + g.n - 1) / std::max<i64>(g.n, 1), 1, (g.c + 15) / 16);
  const i64 cb = (g.c + per_image - 1) / per_image;
  return std::min(g.c, (cb + 15) / 16 * 16);
}

// Max backward by NCHW planes of at most kPlaneBuffer elements: each plane's gradients added,
// in output order, at the indices (the forward's, or those found again by planes_nchw) into a
// zeroed per-thread buffer, which then goes out whole (streamed past the last-level cache): dx
// is written once and never read.
constexpr i64 kPlaneBuffer = 1 << 17;

// Whether PoolKernels::max_cols_nchw applies: 2-D windows taking two columns in turn (max 2x2
// stride 2 without W padding, 3x3 stride 2 with W padding 0 or 1), dilation 1.
bool cols_apply(const Geom& g) {
  return g.in[0] == 1 && g.k[0] == 1 && g.d[1] == 1 && g.d[2] == 1 && g.s[2] == 2 &&
         ((g.k[2] == 2 && g.pb[2] == 0) || (g.k[2] == 3 && g.pb[2] <= 1));
}

Status run_backward_planes(Handle& h, const BwdProblem& p, const PoolKernels& K,
                           bool try_cols = true) {
  const Geom& g = p.g;
  const bool recompute = p.indices == nullptr;
  detail::Staged dys = detail::stage_in(p.dy_desc, p.dy);
  detail::Staged xs;
  if (recompute) xs = detail::stage_in(p.x_desc, p.x);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const i64 plane = g.in_plane(), out_plane = g.out_plane();
  const float* const x_end = recompute ? xs.data + p.x_desc.span() : nullptr;
  const bool stream = detail::stream_output(
      p.dx_desc.numel() * static_cast<i64>(dtype_size(p.dx_desc.dtype)));
  // Indices are found for kBatch planes in one call: x streams in as in the forward.
  constexpr i64 kBatch = 4;
  // Windows taking two columns in turn (max 2x2 stride 2, 3x3 stride 2 padding 0 or 1): the winners
  // as int32 codes (found again, or the forward's indices narrowed, each checked to lie in its
  // window's box), then each dx row straight from them, no scatter and no zeroing
  // (PoolColsPlane). An index outside its window's box sends the call to the scatter.
  bool cols = try_cols && cols_apply(g);
  const i64 codes_stride = (g.out[2] + (g.in[2] + 1) / 2 + 32 + 15) / 16 * 16;
  std::vector<i64> col_min(static_cast<std::size_t>(g.out[2])), col_max(col_min.size());
  std::optional<WindowRows> win;
  if (cols && !recompute) {
    win.emplace(g, strides5(p.dx_desc));
    for (i64 ow = 0; ow < g.out[2]; ++ow) {  // each window's columns inside the input
      const i64 start = ow * 2 - g.pb[2];
      col_min[static_cast<std::size_t>(ow)] = std::max<i64>(start, 0);
      col_max[static_cast<std::size_t>(ow)] = std::min(start + g.k[2], g.in[2]) - 1;
      if (col_max[static_cast<std::size_t>(ow)] < col_min[static_cast<std::size_t>(ow)])
        cols = false;  // only -1 fits such a window: scatter
    }
  }
  std::atomic<bool> scatter{false};
  detail::parallel_for(h, 0, g.n * g.c, 1, [&](i64 begin, i64 end) {
    std::vector<float> buf(static_cast<std::size_t>(cols ? g.in[2] + 48 : plane + 16));
    float* const base = buf.data() + (16 - reinterpret_cast<std::uintptr_t>(buf.data()) / 4 % 16) % 16;
    // Codes rows after a lead of -1 (read from column -1).
    std::vector<std::int32_t> codes_buf(
        cols ? static_cast<std::size_t>(g.out[1] * codes_stride + 16) : 0, -1);
    std::int32_t* const codes = codes_buf.data() + (cols ? 16 : 0);
    std::vector<std::int64_t> found(recompute && !cols ? static_cast<std::size_t>(kBatch * out_plane) : 0);
    std::vector<float> y(found.size());
    for (i64 item = begin; item < end && !scatter.load(std::memory_order_relaxed); ++item) {
      const float* dy = dys.data + item * out_plane;
      const std::int64_t* idx = nullptr;
      if (cols) {
        if (recompute) {  // y is not written when codes are asked for
          PoolPlanes args = planes_args(g, xs.data + item * plane, 1, base, nullptr, xs.data,
                                        x_end, false, nullptr, nullptr);
          args.codes = codes;
          args.codes_stride = codes_stride;
          K.planes_nchw(args);
        } else {
          for (i64 o = 0; o < g.out[1]; ++o)
            if (!K.codes_from_indices_nchw({p.indices + item * out_plane + o * g.out[2], 1,
                                            g.out[2], 1, codes + o * codes_stride, 1,
                                            win->indices(o),
                                            win->count[static_cast<std::size_t>(o)],
                                            col_min.data(), col_max.data(), nullptr, 0})) {
              scatter.store(true, std::memory_order_relaxed);
              if (stream) K.fence();  // before the scatter writes the same dx
              return;
            }
        }
        // The next plane's dy (and indices) prefetched meanwhile.
        const bool more = item + 1 < end;
        K.max_cols_nchw({g.in[1], g.in[2], g.out[1], g.out[2], g.k[1], g.k[2], g.s[1], g.pb[1],
                         g.pb[2], codes, codes_stride, dy,
                         {reinterpret_cast<const char*>(dy + out_plane),
                          reinterpret_cast<const char*>(recompute ? nullptr
                                                                  : p.indices + (item + 1) * out_plane)},
                         {more ? out_plane * 4 : 0, more && !recompute ? out_plane * 8 : 0},
                         dxs.data + item * plane, base, stream});
        continue;
      }
      if (recompute) {
        const i64 k = (item - begin) % kBatch;
        if (k == 0)
          K.planes_nchw(planes_args(g, xs.data + item * plane, std::min(kBatch, end - item),
                                    y.data(), found.data(), xs.data, x_end, false, nullptr,
                                    nullptr));
        idx = found.data() + k * out_plane;
      } else {
        idx = p.indices + item * out_plane;
      }
      std::memset(base, 0, static_cast<std::size_t>(plane) * sizeof(float));
      for (i64 o = 0; o < out_plane; ++o)
        if (idx[o] >= 0) base[idx[o]] += dy[o];
      K.put_row(dxs.data + item * plane, 1, base, 1, plane, 1, stream);
    }
    if (stream) K.fence();
  });
  if (scatter.load()) return run_backward_planes(h, p, K, false);
  dxs.commit();
  return Status::ok();
}

// Max backward with the forward's indices otherwise: each thread zeroes its slices of dx and
// adds every gradient at its index, in output order.
Status run_backward_indices(Handle& h, const BwdProblem& p, Layout layout) {
  const Geom& g = p.g;
  const bool nhwc = layout == Layout::kNHWC;
  detail::Staged dys = detail::stage_in(p.dy_desc, p.dy);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const Strides5 dyst = strides5(p.dy_desc), dxst = strides5(p.dx_desc);
  const i64 cb = nhwc ? channel_block(h, g) : 1;
  const i64 blocks = nhwc ? (g.c + cb - 1) / cb : g.c;
  const i64 plane = g.in_plane(), px = nhwc ? g.c : 1;
  detail::parallel_for(h, 0, g.n * blocks, 1, [&](i64 begin, i64 end) {
    for (i64 item = begin; item < end; ++item) {
      const i64 n = item / blocks, blk = item % blocks;
      const i64 c0 = nhwc ? blk * cb : blk, nc = nhwc ? std::min(g.c, c0 + cb) - c0 : 1;
      float* dxb = dxs.data + n * dxst.v[0] + c0 * dxst.v[1];
      for (i64 q = 0; q < (nhwc ? plane : 1); ++q)
        std::memset(dxb + q * px, 0, static_cast<std::size_t>(nhwc ? nc : plane) * sizeof(float));
      for (i64 od = 0; od < g.out[0]; ++od)
        for (i64 oh = 0; oh < g.out[1]; ++oh) {
          const i64 yo = n * dyst.v[0] + c0 * dyst.v[1] + od * dyst.v[2] + oh * dyst.v[3];
          const float* dy = dys.data + yo;
          const std::int64_t* idx = p.indices + yo;
          for (i64 ow = 0; ow < g.out[2]; ++ow)
            for (i64 c = 0; c < nc; ++c) {
              const std::int64_t i = idx[ow * px + c];
              if (i >= 0) dxb[i * px + c] += dy[ow * px + c];
            }
        }
    }
  });
  dxs.commit();
  return Status::ok();
}

// Average backward by packed NCHW planes (2-D, dilation 1): PoolKernels::avg_planes_nchw, each
// dx row gathered from the divided gradients of the windows covering it and written once.
bool avg_planes_apply(const Geom& g, const TensorDesc& dy, const TensorDesc& dx) {
  return !g.is_max() && g.in[0] == 1 && g.out[0] == 1 && g.d[1] == 1 && g.d[2] == 1 &&
         dy.is_packed(Layout::kNCHW) && dx.is_packed(Layout::kNCHW);
}

Status run_backward_avg_planes(Handle& h, const BwdProblem& p, const PoolKernels& K) {
  const Geom& g = p.g;
  detail::Staged dys = detail::stage_in(p.dy_desc, p.dy);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const std::vector<float> count_w = count_w_of(g);
  std::vector<float> row_count(static_cast<std::size_t>(g.out[1]));
  for (i64 oh = 0; oh < g.out[1]; ++oh)
    row_count[static_cast<std::size_t>(oh)] = static_cast<float>(divisor_taps(g, 1, oh));
  std::vector<i64> taps;
  const RowGeom rg = row_geom(g, false, taps);
  constexpr i64 kV = kAvgPlaneVector;
  const i64 lead = (g.k[2] + 1 + kV - 1) / kV * kV;
  const i64 stride = (lead + std::max(g.out[2], g.in[2] + g.pb[2] + 2 * kV + 1) + g.k[2] + kV - 1) / kV * kV;
  const i64 in_plane = g.in_plane(), out_plane = g.out_plane();
  const bool stream = detail::stream_output(
      p.dx_desc.numel() * static_cast<i64>(dtype_size(p.dx_desc.dtype)));
  detail::parallel_for(h, 0, g.n * g.c, std::max<i64>(1, 65536 / in_plane), [&](i64 a, i64 b) {
    std::vector<float> buf(static_cast<std::size_t>(g.out[1] * stride + kV));
    float* const base = buf.data() + (kV - reinterpret_cast<std::uintptr_t>(buf.data()) / 4 % kV) % kV;
    for (i64 plane = a; plane < b; ++plane)
      K.avg_planes_nchw({rg, g.in[1], g.out[1], g.k[1], g.s[1], g.pb[1],
                         dys.data + plane * out_plane, row_count.data(), count_w.data(),
                         base + lead, stride, dxs.data + plane * in_plane, stream});
    if (stream) K.fence();
  });
  dxs.commit();
  return Status::ok();
}

// Backward, 2-D NHWC, max or average with dilation 1: per (n, channel block) slice, a ring
// holds what the output rows one dx row can take gradients from need:
//  - max: each row's winners (int32), found as the forward finds its indices, or narrowed from
//    the forward's indices;
//  - average: each row's gradients divided by their windows' divisors.
// Each dx row is gathered once all of its windows are known: every pixel sums, in output
// order, the gradients of the windows covering it (max: that it won), and is written once
// (streamed past the last-level cache). dx is never read, and the windows' taps are not
// revisited. Indices outside their window's box (not from a forward) are scattered by
// run_backward_indices instead.
bool nhwc_gather_applies(const Geom& g) {
  return g.in[0] == 1 && g.out[0] == 1 && g.in_plane() <= INT32_MAX &&
         (g.is_max() || (g.d[1] == 1 && g.d[2] == 1));
}

Status run_backward_nhwc_gather(Handle& h, const BwdProblem& p, const PoolKernels& K) {
  const Geom& g = p.g;
  const bool max = g.is_max(), given = p.indices != nullptr;
  detail::Staged dys = detail::stage_in(p.dy_desc, p.dy);
  detail::Staged xs;
  if (max && !given) xs = detail::stage_in(p.x_desc, p.x);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const std::vector<float> count_w = count_w_of(g);
  const Strides5 xst = strides5(p.x_desc), dyst = strides5(p.dy_desc), dxst = strides5(p.dx_desc);
  const i64 cb = channel_block(h, g), blocks = (g.c + cb - 1) / cb;
  const i64 in_h = g.in[1], in_w = g.in[2], oh_n = g.out[1], ow_n = g.out[2];
  const WindowRows x_win(g, xst);
  std::vector<i64> taps;
  const RowGeom full_rg = row_geom(g, true, taps);
  // The output rows (columns) whose windows reach input row (column) i: [lo, hi).
  // Window o starts at o * s - pb and ends (k - 1) * d later; i + pb >= 0.
  auto cover = [&](int dim, i64 i, i64 n_out) {
    const i64 reach = i + g.pb[dim] - (g.k[dim] - 1) * g.d[dim];
    const i64 lo = reach <= 0 ? 0 : (reach + g.s[dim] - 1) / g.s[dim];
    const i64 hi = std::min(n_out, (i + g.pb[dim]) / g.s[dim] + 1);
    return std::array<i64, 2>{lo, std::max(lo, hi)};
  };
  std::vector<i64> col_lo(static_cast<std::size_t>(in_w)), col_hi(col_lo.size());
  for (i64 iw = 0; iw < in_w; ++iw) {
    const auto [lo, hi] = cover(2, iw, ow_n);
    col_lo[static_cast<std::size_t>(iw)] = lo;
    col_hi[static_cast<std::size_t>(iw)] = hi;
  }
  // Each window's columns inside the input, [col_min, col_max] (empty: col_max < col_min).
  std::vector<i64> col_min(static_cast<std::size_t>(ow_n)), col_max(col_min.size());
  for (i64 ow = 0; ow < ow_n; ++ow) {
    const i64 lo = full_rg.tap_lo[ow], hi = full_rg.tap_hi[ow], start = ow * g.s[2] - g.pb[2];
    col_min[static_cast<std::size_t>(ow)] = lo < hi ? start + lo * g.d[2] : 0;
    col_max[static_cast<std::size_t>(ow)] = lo < hi ? start + (hi - 1) * g.d[2] : -1;
  }
  std::atomic<bool> scatter{false};
  const i64 depth = (g.k[1] - 1) * g.d[1] / g.s[1] + 1;  // output rows reaching one dx row
  const i64 codes_ps = (cb + 15) / 16 * 16, ring_row = ow_n * codes_ps;
  const bool stream = detail::stream_output(
      p.dx_desc.numel() * static_cast<i64>(dtype_size(p.dx_desc.dtype)));
  detail::parallel_for(h, 0, g.n * blocks, 1, [&](i64 begin, i64 end) {
    std::vector<std::int32_t> ring(max ? static_cast<std::size_t>(depth * ring_row) : 0);
    std::vector<float> scaled(max ? 0 : static_cast<std::size_t>(depth * ring_row));
    std::vector<const float*> x_rows(static_cast<std::size_t>(x_win.max_rows)), dy_rows(static_cast<std::size_t>(depth));
    std::vector<const std::int32_t*> code_rows(dy_rows.size());
    std::vector<const float*> ahead(x_rows.size() + 1);
    std::vector<i64> ahead_len(ahead.size());
    for (i64 item = begin; item < end && !scatter.load(std::memory_order_relaxed); ++item) {
      const i64 n = item / blocks, c0 = item % blocks * cb, nc = std::min(g.c, c0 + cb) - c0;
      const float* const xb = !max || given ? nullptr : xs.data + n * xst.v[0] + c0 * xst.v[1];
      const float* const dyb = dys.data + n * dyst.v[0] + c0 * dyst.v[1];
      float* const dxb = dxs.data + n * dxst.v[0] + c0 * dxst.v[1];
      PoolFwdRow win{};
      win.op = RowOp::kMax;
      win.g = full_rg;
      win.g.channels = nc;
      win.rows = x_rows.data();
      win.x_end = xb != nullptr ? xs.data + p.x_desc.span() : nullptr;
      win.codes_ps = codes_ps;
      auto emit = [&](i64 ih) {
        const auto [lo, hi] = cover(1, ih, oh_n);
        float* const dx = dxb + ih * dxst.v[3];
        if (lo == hi) return K.put_row(dx, dxst.v[4], nullptr, 0, in_w, nc, stream);
        for (i64 r = lo; r < hi; ++r) {
          const auto i = static_cast<std::size_t>(r - lo);
          dy_rows[i] = max ? dyb + r * dyst.v[3] : scaled.data() + r % depth * ring_row;
          code_rows[i] = max ? ring.data() + r % depth * ring_row : nullptr;
        }
        K.gather_nhwc({in_w, nc, max ? dyst.v[4] : codes_ps, dxst.v[4], codes_ps, ih * in_w,
                       hi - lo, dy_rows.data(), max ? code_rows.data() : nullptr, col_lo.data(),
                       col_hi.data(), dx, stream});
      };
      // Output row oh's winners, found in x, with the next window's new rows and this row's
      // gradients prefetched meanwhile.
      auto find_codes = [&](i64 oh) {
        const i64* off = x_win.offsets(oh);
        win.nrows = x_win.count[static_cast<std::size_t>(oh)];
        win.row_index = x_win.indices(oh);
        for (i64 i = 0; i < win.nrows; ++i) x_rows[static_cast<std::size_t>(i)] = xb + off[i];
        win.codes = ring.data() + oh % depth * ring_row;
        win.ahead = ahead.data();
        win.ahead_len = ahead_len.data();
        ahead[0] = dyb + oh * dyst.v[3];
        ahead_len[0] = ow_n * dyst.v[4];
        win.n_ahead = x_win.next_rows(oh, xb, in_w * xst.v[4], ahead.data(), ahead_len.data(), 1);
        K.forward_nhwc(win);
      };
      i64 next = 0;  // dx rows below it are written
      for (i64 oh = 0; oh < oh_n; ++oh) {
        if (!max) {
          K.avg_scale_nhwc(dyb + oh * dyst.v[3], dyst.v[4], ow_n, nc,
                           x_win.row_count[static_cast<std::size_t>(oh)], count_w.data(),
                           scaled.data() + oh % depth * ring_row, codes_ps,
                           oh + 1 < oh_n ? dyb + (oh + 1) * dyst.v[3] : nullptr,
                           oh + 1 < oh_n ? ow_n * dyst.v[4] : 0);
        } else if (given) {
          if (!K.codes_from_indices({p.indices + n * dyst.v[0] + c0 * dyst.v[1] + oh * dyst.v[3],
                                     dyst.v[4], ow_n, nc, ring.data() + oh % depth * ring_row,
                                     codes_ps, x_win.indices(oh),
                                     x_win.count[static_cast<std::size_t>(oh)], col_min.data(),
                                     col_max.data(), dyb + oh * dyst.v[3], ow_n * dyst.v[4]})) {
            scatter.store(true, std::memory_order_relaxed);
            if (stream) K.fence();  // before the scatter writes the same dx
            return;
          }
        } else {
          find_codes(oh);
        }
        // Rows above the next window's first row take nothing from later windows.
        const i64 done = oh + 1 == oh_n ? in_h : std::clamp<i64>((oh + 1) * g.s[1] - g.pb[1], 0, in_h);
        for (; next < done; ++next) emit(next);
      }
      for (; next < in_h; ++next) emit(next);
    }
    if (stream) K.fence();
  });
  if (scatter.load()) return run_backward_indices(h, p, Layout::kNHWC);
  dxs.commit();
  return Status::ok();
}

// Global pooling backward over packed NCHW planes: average writes every element of plane q as
// +0 + dy[q] / size (the reference's sum over the one window covering it); max writes +0 + dy[q]
// at the plane's winner (the forward's index, or the first maximum found again in x) and +0
// elsewhere. A chunk of planes at a time is built in an L1 stage and written by put_row
// (streamed past the last-level cache). The planes kernel had summed the window's 49 taps for
// each element of a 7x7 plane (average [256,2048,7,7]: 75-79 ms at 1 thread, 1.3x oneDNN's
// time), the row kernels had set up a window per plane (max: 345 ms, 13x).
Status run_backward_global(Handle& h, const BwdProblem& p, const PoolKernels& K) {
  const Geom& g = p.g;
  const bool max = g.is_max(), recompute = max && p.indices == nullptr;
  detail::Staged dys = detail::stage_in(p.dy_desc, p.dy);
  detail::Staged xs;
  if (recompute) xs = detail::stage_in(p.x_desc, p.x);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const i64 n = g.in_plane();
  const float size = static_cast<float>(n);
  const bool stream = detail::stream_output(p.dx_desc.numel() * static_cast<i64>(dtype_size(p.dx_desc.dtype)));
  constexpr i64 kStage = 4096;  // floats
  detail::parallel_for(h, 0, g.n * g.c, std::max<i64>(1, 65536 / n), [&](i64 a, i64 b) {
    std::vector<float> stage(static_cast<std::size_t>(std::min(kStage, (b - a) * n)));
    std::vector<std::int64_t> found(static_cast<std::size_t>(recompute ? b - a : 0));
    if (recompute) K.global_max_nchw(xs.data + a * n, b - a, n, nullptr, found.data());
    const std::int64_t* win = recompute ? found.data() - a : p.indices;  // win[q]: plane q's winner
    // Plane r's elements [o, o + len) into the stage at s.
    auto fill = [&](i64 r, i64 o, i64 len, float* s) {
      if (!max) {
        std::fill_n(s, len, 0.0f + dys.data[r] / size);
        return;
      }
      std::fill_n(s, len, 0.0f);
      const std::int64_t w = win[r];
      if (w >= o && w < o + len) s[w - o] = 0.0f + dys.data[r];
    };
    const i64 len = std::min<i64>(n, static_cast<i64>(stage.size()));
    if (n <= len) {  // whole planes, as many as the stage holds
      const i64 per = static_cast<i64>(stage.size()) / n;
      for (i64 q = a; q < b; q += per) {
        const i64 e = std::min(b, q + per);
        for (i64 r = q; r < e; ++r) fill(r, 0, n, stage.data() + (r - q) * n);
        K.put_row(dxs.data + q * n, 1, stage.data(), 1, (e - q) * n, 1, stream);
      }
    } else {  // planes larger than the stage, piece by piece
      for (i64 r = a; r < b; ++r)
        for (i64 o = 0; o < n; o += len) {
          const i64 l = std::min(len, n - o);
          fill(r, o, l, stage.data());
          K.put_row(dxs.data + r * n + o, 1, stage.data(), 1, l, 1, stream);
        }
    }
    if (stream) K.fence();
  });
  dxs.commit();
  return Status::ok();
}

}  // namespace

// Average and max backward. Each (n, channel block) slice of dx is accumulated in a per-thread
// buffer and then written out whole rows at a time (streamed past the last-level cache), so dx
// is written once and never read: the rows go through a ring as deep as the windows are tall
// when windows only move down (in_d == out_d == 1), else the buffer holds the whole slice.
Status run_backward(Handle& h, const BwdProblem& p, const PoolKernels& K, Layout layout) {
  const Geom& g = p.g;
  if (layout == Layout::kNCHW && global_window(g) && p.dy_desc.is_packed(Layout::kNCHW) &&
      p.dx_desc.is_packed(Layout::kNCHW) && (!g.is_max() || p.indices != nullptr || p.x_desc.is_packed(Layout::kNCHW)))
    return run_backward_global(h, p, K);
  if (layout == Layout::kNCHW && g.is_max() && g.in_plane() <= kPlaneBuffer &&
      (p.indices != nullptr ? p.dy_desc.is_packed(Layout::kNCHW)
                            : planes_apply(g, p.x_desc, p.dy_desc)))
    return run_backward_planes(h, p, K);
  if (layout == Layout::kNHWC && nhwc_gather_applies(g)) return run_backward_nhwc_gather(h, p, K);
  if (layout == Layout::kNCHW && avg_planes_apply(g, p.dy_desc, p.dx_desc))
    return run_backward_avg_planes(h, p, K);
  if (g.is_max() && p.indices != nullptr) return run_backward_indices(h, p, layout);
  const bool nhwc = layout == Layout::kNHWC, max = g.is_max();
  detail::Staged dys = detail::stage_in(p.dy_desc, p.dy);
  detail::Staged xs;
  if (max) xs = detail::stage_in(p.x_desc, p.x);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const Strides5 xst = max ? strides5(p.x_desc) : Strides5{};
  const Strides5 dyst = strides5(p.dy_desc), dxst = strides5(p.dx_desc);
  const std::vector<float> count_w = count_w_of(g);
  const i64 cb = nhwc ? channel_block(h, g) : 1;
  const i64 blocks = nhwc ? (g.c + cb - 1) / cb : g.c;
  const i64 in_rows = g.in[0] * g.in[1], in_w = g.in[2], ow_n = g.out[2];
  const i64 px = nhwc ? g.c : 1;
  const WindowRows dx_win(g, dxst);
  const WindowRows x_win(g, xst);  // max only
  std::vector<i64> taps;
  const RowGeom full_rg = row_geom(g, nhwc, taps);
  const bool ring = g.in[0] == 1 && g.out[0] == 1;
  const float* const x_end = max ? xs.data + p.x_desc.span() : nullptr;
  // Buffer rows hold in_w pixels of up to cb channels, padded by two vectors (the NCHW kernels
  // run past a row's end) and to whole cache lines.
  constexpr i64 kPad = 32;
  const i64 depth = ring ? std::min((g.k[1] - 1) * g.d[1] + 1, in_rows) : in_rows;
  auto row_len_of = [&](i64 nc) { return (in_w * nc + kPad + 15) / 16 * 16; };
  // The per-tap gradient arrays of the NCHW kernels and their zero padding (kernels.hpp).
  const i64 tap_lead = (g.k[2] - 1) * g.d[2] + 2;
  const i64 tap_stride = tap_lead + std::max(ow_n, in_w + g.pb[2] + 2 * kPad + 1);
  const bool stream = detail::stream_output(
      p.dx_desc.numel() * static_cast<i64>(dtype_size(p.dx_desc.dtype)));
  detail::parallel_for(h, 0, g.n * blocks, 1, [&](i64 begin, i64 end) {
    std::vector<float> buf(static_cast<std::size_t>(depth * row_len_of(cb) + kPad + 16));
    float* const base = buf.data() + (16 - reinterpret_cast<std::uintptr_t>(buf.data()) / 4 % 16) % 16;
    std::vector<float*> dx_rows(static_cast<std::size_t>(dx_win.max_rows));
    std::vector<const float*> x_rows(dx_rows.size());
    std::vector<float> scratch(
        nhwc ? 0 : static_cast<std::size_t>(dx_win.max_rows * g.k[2] * tap_stride + tap_lead));
    for (i64 item = begin; item < end; ++item) {
      const i64 n = item / blocks, blk = item % blocks;
      const i64 c0 = nhwc ? blk * cb : blk, nc = nhwc ? std::min(g.c, c0 + cb) - c0 : 1;
      float* const dxb = dxs.data + n * dxst.v[0] + c0 * dxst.v[1];
      const float* const xb = max ? xs.data + n * xst.v[0] + c0 * xst.v[1] : nullptr;
      const i64 row_len = row_len_of(nc);
      auto slot = [&](i64 row) { return base + (ring ? row % depth : row) * row_len; };
      auto put = [&](i64 row, const float* from) {
        K.put_row(dxb + row * in_w * px, px, from, nc, in_w, nc, stream);
      };
      RowGeom rg = full_rg;
      rg.channels = nc;
      i64 flushed = 0, next = 0;  // rows below flushed are in dx, [flushed, next) in the buffer
      if (!ring) {
        std::memset(base, 0, static_cast<std::size_t>(depth * row_len) * sizeof(float));
        next = in_rows;
      }
      for (i64 w = 0; w < g.out[0] * g.out[1]; ++w) {
        const i64 nrows = dx_win.count[static_cast<std::size_t>(w)];
        if (nrows == 0) continue;
        const i64* rows = dx_win.rows(w);
        if (ring) {
          // Windows start at increasing rows (their first valid row need not: dilation), so
          // rows above this one's start are complete.
          const i64 start = std::min(w * g.s[1] - g.pb[1], in_rows);
          for (; flushed < start; ++flushed) put(flushed, flushed < next ? slot(flushed) : nullptr);
          next = std::max(next, flushed);
          for (; next <= rows[nrows - 1]; ++next)
            std::memset(slot(next), 0, static_cast<std::size_t>(row_len) * sizeof(float));
        }
        for (i64 i = 0; i < nrows; ++i) dx_rows[static_cast<std::size_t>(i)] = slot(rows[i]);
        if (max) {
          const i64* off = x_win.offsets(w);
          for (i64 i = 0; i < nrows; ++i) x_rows[static_cast<std::size_t>(i)] = xb + off[i];
          if (!nhwc && w + 2 < g.out[0] * g.out[1]) {
            const i64* ahead = x_win.offsets(w + 2);
            for (i64 i = 0; i < x_win.count[static_cast<std::size_t>(w + 2)]; ++i)
              for (i64 e = 0; e < in_w; e += 16) __builtin_prefetch(xb + ahead[i] + e);
          }
        }
        const i64 od = w / g.out[1], oh = w % g.out[1];
        const PoolBwdRow row{rg,
                             nc,
                             dx_rows.data(),
                             x_rows.data(),
                             x_end,
                             nrows,
                             dx_win.row_count[static_cast<std::size_t>(w)],
                             count_w.data(),
                             dys.data + n * dyst.v[0] + c0 * dyst.v[1] + od * dyst.v[2] +
                                 oh * dyst.v[3],
                             scratch.data(),
                             tap_lead,
                             tap_stride};
        if (max)
          (nhwc ? K.max_backward_nhwc : K.max_backward_nchw)(row);
        else
          (nhwc ? K.avg_backward_nhwc : K.avg_backward_nchw)(row);
      }
      for (; flushed < in_rows; ++flushed) put(flushed, flushed < next ? slot(flushed) : nullptr);
    }
    if (stream) K.fence();
  });
  dxs.commit();
  return Status::ok();
}

}  // namespace tessera::dnn::pool
