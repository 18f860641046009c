// Pooling entry points: argument checks, the ordered implementation lists, and the drivers that
// walk output rows over the thread pool and call the per-ISA row kernels (kernels.hpp).
//
// Work split: forward runs output rows in parallel (each written by one thread); backward gives
// each thread whole (n, c) planes (NCHW) or (n, channel block) slices (NHWC) of dx, which it
// accumulates from +0 in the output order of the reference (in a buffer of its own, written
// out row by row; max with indices directly in dx). Results are therefore the same bits for
// any thread count.
#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <tessera/core/cpu.hpp>

#include "../activation/dense.hpp"
#include "kernels.hpp"
#include "pool.hpp"

namespace tessera::dnn {
namespace pool {
namespace {

constexpr i64 kMaxParam = INT32_MAX;

std::string kind_name(PoolKind k) {
  switch (k) {
    case PoolKind::kMax:
      return "max";
    case PoolKind::kAvgIncludePad:
      return "avg-include-pad";
    case PoolKind::kAvgExcludePad:
      return "avg-exclude-pad";
  }
  return "?";
}

Status check_param(const std::string& fn, const char* name, const std::vector<i64>& v, int sp,
                   bool required, i64 min_value) {
  if (v.empty() && !required) return Status::ok();
  if (static_cast<int>(v.size()) != sp)
    return invalid_argument(fn + ": " + name + " has " + std::to_string(v.size()) + " values for " +
                            std::to_string(sp) + " spatial dims" +
                            (required ? "" : " (or leave it empty)"));
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] < min_value || v[i] > kMaxParam)
      return invalid_argument(fn + ": " + name + "[" + std::to_string(i) +
                              "] = " + std::to_string(v[i]) + " must be in [" +
                              std::to_string(min_value) + ", " + std::to_string(kMaxParam) + "]");
  return Status::ok();
}

// Checks x and p and computes the output size: the PyTorch rule, with ceil mode dropping a
// last window that would start in the end padding.
Result<Geom> make_geom(const std::string& fn, const PoolDesc& p, const TensorDesc& x) {
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "x", x, 3, 5));
  TESSERA_RETURN_IF_ERROR(detail::check_float_dtype(fn, "x", x));
  if (p.kind != PoolKind::kMax && p.kind != PoolKind::kAvgIncludePad &&
      p.kind != PoolKind::kAvgExcludePad)
    return invalid_argument(fn + ": unknown pooling kind " +
                            std::to_string(static_cast<int>(p.kind)));
  const int sp = x.rank() - 2;
  TESSERA_RETURN_IF_ERROR(check_param(fn, "kernel", p.kernel, sp, true, 1));
  TESSERA_RETURN_IF_ERROR(check_param(fn, "stride", p.stride, sp, false, 1));
  TESSERA_RETURN_IF_ERROR(check_param(fn, "pad_begin", p.pad_begin, sp, false, 0));
  TESSERA_RETURN_IF_ERROR(check_param(fn, "pad_end", p.pad_end, sp, false, 0));
  TESSERA_RETURN_IF_ERROR(check_param(fn, "dilation", p.dilation, sp, false, 1));
  Geom g;
  g.kind = p.kind;
  g.spatial = sp;
  g.n = x.dims[0];
  g.c = x.dims[1];
  for (int i = 0; i < sp; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const int j = 3 - sp + i;
    g.in[j] = x.dims[si + 2];
    g.k[j] = p.kernel[si];
    if (!p.stride.empty()) g.s[j] = p.stride[si];
    if (!p.pad_begin.empty()) g.pb[j] = p.pad_begin[si];
    if (!p.pad_end.empty()) g.pe[j] = p.pad_end[si];
    if (!p.dilation.empty()) g.d[j] = p.dilation[si];
    if (g.in[j] == 0)
      return invalid_argument(fn + ": x " + x.to_string() + " has an empty spatial dim " +
                              std::to_string(i));
    const i64 extent = (g.k[j] - 1) * g.d[j] + 1;
    const i64 padded = g.in[j] + g.pb[j] + g.pe[j];
    if (extent > padded)
      return invalid_argument(fn + ": kernel extent " + std::to_string(extent) +
                              " is larger than the padded input " + std::to_string(padded) +
                              " along spatial dim " + std::to_string(i));
    if (p.ceil_mode) {
      g.out[j] = (padded - extent + g.s[j] - 1) / g.s[j] + 1;
      if ((g.out[j] - 1) * g.s[j] >= g.in[j] + g.pb[j]) --g.out[j];
    } else {
      g.out[j] = (padded - extent) / g.s[j] + 1;
    }
  }
  return g;
}

std::vector<i64> out_dims(const Geom& g) {
  std::vector<i64> d = {g.n, g.c};
  for (int j = 3 - g.spatial; j < 3; ++j) d.push_back(g.out[j]);
  return d;
}

std::string layout_of(const TensorDesc& d) {
  const auto l = d.packed_layout();
  return l ? std::string(layout_name(*l)) : std::string("strided");
}

std::string spatial_string(const i64* v, const Geom& g) {
  std::vector<i64> s(v + 3 - g.spatial, v + 3);
  return detail::dims_string(s, 'x');
}

void log_bench(const Geom& g, const PoolDesc& p, const TensorDesc& x, const char* dir,
               bool indices) {
  TESSERA_VLOG(kBench) << "tessera bench dnn pool --kind " << kind_name(g.kind) << " --dims "
                       << detail::dims_string(x.dims, 'x') << " --layout " << layout_of(x)
                       << " --kernel " << spatial_string(g.k, g) << " --stride "
                       << spatial_string(g.s, g) << " --pad " << spatial_string(g.pb, g) << "x"
                       << spatial_string(g.pe, g)
                       << (p.dilation.empty() ? std::string()
                                              : " --dilation " + spatial_string(g.d, g))
                       << (p.ceil_mode ? " --ceil" : "") << (indices ? " --indices" : "")
                       << " --dtype " << dtype_name(x.dtype) << " --dir " << dir;
}

// ---- the fast drivers -------------------------------------------------------------------------

const PoolKernels& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return kPoolAvx512;
    case Isa::kAvx2:
      return kPoolAvx2;
    default:
      return kPoolGeneric;
  }
}

Status isa_ok(Isa need) {
  const Isa have = cpu_info().isa();
  if (have >= need) return Status::ok();
  return detail::refuse("needs " + std::string(isa_name(need)) +
                        "; the CPU (under TESSERA_MAX_ISA) allows " + std::string(isa_name(have)));
}

std::vector<float> count_w_of(const Geom& g) {
  std::vector<float> cw(static_cast<std::size_t>(g.out[2]), 1.0f);
  if (!g.is_max())
    for (i64 ow = 0; ow < g.out[2]; ++ow)
      cw[static_cast<std::size_t>(ow)] = static_cast<float>(divisor_taps(g, 2, ow));
  return cw;
}

// The input rows the windows of every output row (od, oh) cover, in window order: their offsets
// from the plane (or image) base under strides st and their spatial flat indices, and the
// average divisor factor of the D and H dims. The same for every plane, so built once a call.
struct WindowRows {
  i64 max_rows = 0;
  // offset/row_index/flat: max_rows per output row; flat is the row's index id * in_h + ih.
  std::vector<i64> count, offset, row_index, flat;
  std::vector<float> row_count;

  WindowRows(const Geom& g, const Strides5& st) : max_rows(g.k[0] * g.k[1]) {
    const i64 rows = g.out[0] * g.out[1];
    count.resize(static_cast<std::size_t>(rows));
    offset.resize(static_cast<std::size_t>(rows * max_rows));
    row_index.resize(offset.size());
    flat.resize(offset.size());
    row_count.resize(count.size());
    for (i64 od = 0; od < g.out[0]; ++od)
      for (i64 oh = 0; oh < g.out[1]; ++oh) {
        const i64 w = od * g.out[1] + oh;
        i64 dlo, dhi, hlo, hhi;
        valid_taps(g, 0, od, &dlo, &dhi);
        valid_taps(g, 1, oh, &hlo, &hhi);
        i64 n = 0;
        for (i64 kd = dlo; kd < dhi; ++kd) {
          const i64 id = od * g.s[0] - g.pb[0] + kd * g.d[0];
          for (i64 kh = hlo; kh < hhi; ++kh) {
            const i64 ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
            offset[static_cast<std::size_t>(w * max_rows + n)] = id * st.v[2] + ih * st.v[3];
            row_index[static_cast<std::size_t>(w * max_rows + n)] = (id * g.in[1] + ih) * g.in[2];
            flat[static_cast<std::size_t>(w * max_rows + n)] = id * g.in[1] + ih;
            ++n;
          }
        }
        count[static_cast<std::size_t>(w)] = n;
        row_count[static_cast<std::size_t>(w)] =
            g.is_max() ? 1.0f : static_cast<float>(divisor_taps(g, 0, od) * divisor_taps(g, 1, oh));
      }
  }
  const i64* offsets(i64 w) const { return offset.data() + w * max_rows; }
  const i64* indices(i64 w) const { return row_index.data() + w * max_rows; }
  const i64* rows(i64 w) const { return flat.data() + w * max_rows; }

  // The rows of window w + 1 that window w does not reach (windows move down), of the image
  // at xb, each len floats, added to ahead / ahead_len (PoolFwdRow) from n on; the new count.
  i64 next_rows(i64 w, const float* xb, i64 len, const float** ahead, i64* ahead_len,
                i64 n) const {
    if (w + 1 >= static_cast<i64>(count.size())) return n;
    const i64 cw = count[static_cast<std::size_t>(w)];
    const i64 last = cw > 0 ? rows(w)[cw - 1] : -1;
    for (i64 i = 0; i < count[static_cast<std::size_t>(w + 1)]; ++i)
      if (rows(w + 1)[i] > last) {
        ahead[n] = xb + offsets(w + 1)[i];
        ahead_len[n++] = len;
      }
    return n;
  }
};

// The innermost dim's geometry with its tap ranges (per output position, the taps inside the
// input) and the interior where every tap is inside; `taps` holds the ranges.
RowGeom row_geom(const Geom& g, bool nhwc, std::vector<i64>& taps) {
  const i64 ow_n = g.out[2];
  taps.resize(static_cast<std::size_t>(2 * ow_n));
  i64 first = ow_n, last = 0;
  for (i64 ow = 0; ow < ow_n; ++ow) {
    i64 lo, hi;
    valid_taps(g, 2, ow, &lo, &hi);
    taps[static_cast<std::size_t>(ow)] = lo;
    taps[static_cast<std::size_t>(ow_n + ow)] = hi;
    if (lo == 0 && hi == g.k[2]) {
      first = std::min(first, ow);
      last = ow + 1;
    }
  }
  // Windows start at increasing positions, so the full ones form one range.
  if (last < first) last = first;
  return {g.in[2],        g.out[2],
          g.k[2],         g.s[2],
          g.d[2],         g.pb[2],
          nhwc ? g.c : 1, nhwc ? g.c : 1,
          taps.data(),    taps.data() + ow_n,
          first,          last};
}

// Whether PoolKernels::max_k3s2_planes applies: 2-D max pooling 3x3, stride 2, dilation 1,
// begin padding 0 or 1, packed NCHW (x and `out`: y or dy), every window holding an input
// element (so no output is -inf for want of one).
bool k3s2_planes(const Geom& g, const TensorDesc& x_desc, const TensorDesc& out_desc) {
  if (!g.is_max() || g.in[0] != 1 || g.k[0] != 1) return false;
  if (!x_desc.is_packed(Layout::kNCHW) || !out_desc.is_packed(Layout::kNCHW)) return false;
  for (int i = 1; i < 3; ++i)
    if (g.k[i] != 3 || g.s[i] != 2 || g.d[i] != 1 || g.pb[i] < 0 || g.pb[i] > 1 ||
        (g.out[i] - 1) * 2 - g.pb[i] > g.in[i] - 1)
      return false;
  return g.out[2] <= kMaxPlaneW && g.out[0] == 1;
}

Status run_forward(Handle& h, const FwdProblem& p, const PoolKernels& K, Layout layout) {
  const Geom& g = p.g;
  const bool nhwc = layout == Layout::kNHWC;
  detail::Staged xs = detail::stage_in(p.x_desc, p.x);
  detail::StagedOut ys = detail::stage_out(p.y_desc, p.y, false);
  // NHWC indices past the last-level cache go out with non-temporal stores (no read for
  // ownership): 6.1-6.6 -> 5.5-5.9 ms at 1 thread on [32,64,112,112] 3x3 stride 2. Channels a
  // multiple of 8 keep every streamed vector on whole cache lines; NCHW rows would mix
  // streamed and plain stores in one line (4.9 -> 11.5 ms), so they never stream.
  const bool stream_idx = p.indices != nullptr && nhwc && g.c % 8 == 0 &&
                          detail::stream_output(p.y_desc.span() * 8);
  if (!nhwc && k3s2_planes(g, p.x_desc, p.y_desc)) {
    // Whole planes: each input row's taps are shuffled out once, not once per output row.
    const i64 planes = g.n * g.c, in_plane = g.in[1] * g.in[2], out_plane = g.out[1] * g.out[2];
    const float* x_end = xs.data + p.x_desc.span();
    detail::parallel_for(h, 0, planes, std::max<i64>(1, 65536 / in_plane), [&](i64 a, i64 b) {
      K.max_k3s2_planes(xs.data + a * in_plane, b - a, g.in[1], g.in[2], g.pb[1], g.pb[2],
                        g.out[1], g.out[2], ys.data + a * out_plane,
                        p.indices != nullptr ? p.indices + a * out_plane : nullptr, xs.data,
                        x_end);
    });
    ys.commit();
    return Status::ok();
  }
  const Strides5 xst = strides5(p.x_desc), yst = strides5(p.y_desc);
  const std::vector<float> count_w = count_w_of(g);
  const WindowRows win(g, xst);
  std::vector<i64> taps;
  const RowGeom rg = row_geom(g, nhwc, taps);
  const i64 rows_per_plane = g.out[0] * g.out[1];
  const i64 total = (nhwc ? g.n : g.n * g.c) * rows_per_plane;
  const i64 row_work = g.out[2] * (nhwc ? g.c : 1) * g.k[0] * g.k[1] * g.k[2];
  const i64 grain = std::max<i64>(1, 32768 / std::max<i64>(row_work, 1));
  // NCHW windows that do not overlap down the plane read each row once, a stream cut into
  // short rows the hardware prefetcher follows late: they prefetch the rows two windows ahead
  // (max 2x2 stride 2 on [32,64,112,112]: 9.8 -> 6.3 ms). Overlapping ones reread rows and lost
  // by it (average 3x3 stride 2: 6.5 -> 7.1 ms).
  const bool prefetch_rows = !nhwc && g.s[1] >= (g.k[1] - 1) * g.d[1] + 1 &&
                             g.s[0] >= (g.k[0] - 1) * g.d[0] + 1;
  detail::parallel_for(h, 0, total, grain, [&](i64 begin, i64 end) {
    std::vector<const float*> rows(static_cast<std::size_t>(win.max_rows)), ahead(rows.size());
    std::vector<i64> ahead_len(rows.size());
    PoolFwdRow row{};
    row.op = g.is_max() ? RowOp::kMax : RowOp::kAvg;
    row.g = rg;
    row.rows = rows.data();
    row.x_end = xs.data + p.x_desc.span();
    row.count_w = count_w.data();
    for (i64 r = begin; r < end; ++r) {
      const i64 plane = r / rows_per_plane, w = r % rows_per_plane;
      const i64 od = w / g.out[1], oh = w % g.out[1];
      const i64 n = nhwc ? plane : plane / g.c, c = nhwc ? 0 : plane % g.c;
      const float* xb = xs.data + n * xst.v[0] + c * xst.v[1];
      const i64* off = win.offsets(w);
      row.nrows = win.count[static_cast<std::size_t>(w)];
      row.row_index = win.indices(w);
      row.row_count = win.row_count[static_cast<std::size_t>(w)];
      for (i64 i = 0; i < row.nrows; ++i) rows[static_cast<std::size_t>(i)] = xb + off[i];
      if (prefetch_rows && w + 2 < rows_per_plane) {  // the rows two windows ahead
        const i64* later = win.offsets(w + 2);
        for (i64 i = 0; i < win.count[static_cast<std::size_t>(w + 2)]; ++i)
          for (i64 e = 0; e < g.in[2]; e += 16) __builtin_prefetch(xb + later[i] + e);
      }
      const i64 yo = n * yst.v[0] + c * yst.v[1] + od * yst.v[2] + oh * yst.v[3];
      row.y = ys.data + yo;
      row.indices = p.indices != nullptr ? p.indices + yo : nullptr;
      // NHWC: the next window's new rows prefetched along the way.
      row.ahead = ahead.data();
      row.ahead_len = ahead_len.data();
      row.n_ahead = nhwc && r + 1 < end ? win.next_rows(w, xb, g.in[2] * xst.v[4], ahead.data(), ahead_len.data(), 0) : 0;
      row.stream_indices = stream_idx;
      if (nhwc)
        K.forward_nhwc(row);
      else
        K.forward_nchw(row);
    }
    if (stream_idx) K.fence();
  });
  ys.commit();
  return Status::ok();
}

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
// in output order, at the indices (the forward's, or for 3x3 stride 2 windows those found
// again by max_k3s2_planes) into a zeroed per-thread buffer, which then goes out whole
// (streamed past the last-level cache): dx is written once and never read.
constexpr i64 kPlaneBuffer = 1 << 17;

Status run_backward_planes(Handle& h, const BwdProblem& p, const PoolKernels& K) {
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
  detail::parallel_for(h, 0, g.n * g.c, 1, [&](i64 begin, i64 end) {
    std::vector<float> buf(static_cast<std::size_t>(plane + 16));
    float* const base = buf.data() + (16 - reinterpret_cast<std::uintptr_t>(buf.data()) / 4 % 16) % 16;
    std::vector<std::int64_t> found(recompute ? static_cast<std::size_t>(kBatch * out_plane) : 0);
    std::vector<float> y(found.size());
    for (i64 item = begin; item < end; ++item) {
      const float* dy = dys.data + item * out_plane;
      const std::int64_t* idx = nullptr;
      if (recompute) {
        const i64 k = (item - begin) % kBatch;
        if (k == 0)
          K.max_k3s2_planes(xs.data + item * plane, std::min(kBatch, end - item), g.in[1],
                            g.in[2], g.pb[1], g.pb[2], g.out[1], g.out[2], y.data(),
                            found.data(), xs.data, x_end);
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
  dxs.commit();
  return Status::ok();
}

Status run_backward_indices(Handle& h, const BwdProblem& p, Layout layout);

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

// Average and max backward. Each (n, channel block) slice of dx is accumulated in a per-thread
// buffer and then written out whole rows at a time (streamed past the last-level cache), so dx
// is written once and never read: the rows go through a ring as deep as the windows are tall
// when windows only move down (in_d == out_d == 1), else the buffer holds the whole slice.
Status run_backward(Handle& h, const BwdProblem& p, const PoolKernels& K, Layout layout) {
  const Geom& g = p.g;
  if (layout == Layout::kNCHW && g.is_max() && g.in_plane() <= kPlaneBuffer &&
      (p.indices != nullptr ? p.dy_desc.is_packed(Layout::kNCHW)
                            : k3s2_planes(g, p.x_desc, p.dy_desc)))
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

template <Layout L>
Status packed_ok(const char* what, const TensorDesc& d) {
  if (d.is_packed(L)) return Status::ok();
  return detail::refuse("needs packed " + std::string(layout_name(L)) + " tensors; " + what +
                        " is " + d.to_string());
}

// Single-channel data is packed both ways; the NCHW kernels vectorise it over positions.
template <Layout L>
Status channels_ok(const Geom& g) {
  if (L == Layout::kNHWC && g.c == 1)
    return detail::refuse("one channel: the NCHW kernel vectorises over positions");
  return Status::ok();
}

template <Layout L, Isa kIsa>
Status accepts_forward(const FwdProblem& p) {
  TESSERA_RETURN_IF_ERROR(isa_ok(kIsa));
  TESSERA_RETURN_IF_ERROR(channels_ok<L>(p.g));
  TESSERA_RETURN_IF_ERROR(packed_ok<L>("x", p.x_desc));
  TESSERA_RETURN_IF_ERROR(packed_ok<L>("y", p.y_desc));
  if (p.indices != nullptr && p.g.in_plane() > INT32_MAX)
    return detail::refuse("indices of planes over 2^31 elements");
  return Status::ok();
}

template <Layout L, Isa kIsa>
Status run_forward_on(Handle& h, const FwdProblem& p) {
  return run_forward(h, p, kernels_for(kIsa), L);
}

template <Layout L, Isa kIsa>
Status accepts_backward(const BwdProblem& p) {
  TESSERA_RETURN_IF_ERROR(isa_ok(kIsa));
  TESSERA_RETURN_IF_ERROR(channels_ok<L>(p.g));
  TESSERA_RETURN_IF_ERROR(packed_ok<L>("dy", p.dy_desc));
  TESSERA_RETURN_IF_ERROR(packed_ok<L>("dx", p.dx_desc));
  if (p.g.is_max() && p.indices == nullptr) {
    TESSERA_RETURN_IF_ERROR(packed_ok<L>("x", p.x_desc));
    if (p.g.in_plane() > INT32_MAX) return detail::refuse("indices of planes over 2^31 elements");
  }
  return Status::ok();
}

template <Layout L, Isa kIsa>
Status run_backward_on(Handle& h, const BwdProblem& p) {
  return run_backward(h, p, kernels_for(kIsa), L);
}

constexpr Layout kNHWC = Layout::kNHWC, kNCHW = Layout::kNCHW;
constexpr Isa k512 = Isa::kAvx512, k2 = Isa::kAvx2, kGen = Isa::kGeneric;

constexpr detail::Impl<FwdProblem> kForwardImpls[] = {
    {"pool_fwd_f32_nhwc_avx512", accepts_forward<kNHWC, k512>, run_forward_on<kNHWC, k512>},
    {"pool_fwd_f32_nhwc_avx2", accepts_forward<kNHWC, k2>, run_forward_on<kNHWC, k2>},
    {"pool_fwd_f32_nhwc_generic", accepts_forward<kNHWC, kGen>, run_forward_on<kNHWC, kGen>},
    {"pool_fwd_f32_nchw_avx512", accepts_forward<kNCHW, k512>, run_forward_on<kNCHW, k512>},
    {"pool_fwd_f32_nchw_avx2", accepts_forward<kNCHW, k2>, run_forward_on<kNCHW, k2>},
    {"pool_fwd_f32_nchw_generic", accepts_forward<kNCHW, kGen>, run_forward_on<kNCHW, kGen>},
    {"pool_fwd_ref", detail::accepts_all<FwdProblem>, forward_ref},
};

constexpr detail::Impl<BwdProblem> kBackwardImpls[] = {
    {"pool_bwd_f32_nhwc_avx512", accepts_backward<kNHWC, k512>, run_backward_on<kNHWC, k512>},
    {"pool_bwd_f32_nhwc_avx2", accepts_backward<kNHWC, k2>, run_backward_on<kNHWC, k2>},
    {"pool_bwd_f32_nhwc_generic", accepts_backward<kNHWC, kGen>, run_backward_on<kNHWC, kGen>},
    {"pool_bwd_f32_nchw_avx512", accepts_backward<kNCHW, k512>, run_backward_on<kNCHW, k512>},
    {"pool_bwd_f32_nchw_avx2", accepts_backward<kNCHW, k2>, run_backward_on<kNCHW, k2>},
    {"pool_bwd_f32_nchw_generic", accepts_backward<kNCHW, kGen>, run_backward_on<kNCHW, kGen>},
    {"pool_bwd_ref", detail::accepts_all<BwdProblem>, backward_ref},
};

// Every index must name an element of its input plane (or be -1: a window with no input).
// Dense indices are checked in memory order over the threads; the walk by coordinates names
// the first bad one.
Status check_indices(Handle& h, const std::string& fn, const Geom& g, const TensorDesc& dy,
                     const std::int64_t* indices) {
  const Strides5 st = strides5(dy);
  const i64 plane = g.in_plane();
  if (dy.span() == dy.numel() &&
      std::all_of(dy.strides.begin(), dy.strides.end(), [](i64 v) { return v >= 0; })) {
    std::atomic<bool> bad{false};
    const PoolKernels& K = kernels_for(cpu_info().isa());
    detail::parallel_for(h, 0, dy.numel(), 1 << 16, [&](i64 a, i64 b) {
      if (!K.indices_in_range(indices + a, b - a, plane)) bad.store(true, std::memory_order_relaxed);
    });
    if (!bad.load()) return Status::ok();
  }
  for (i64 n = 0; n < g.n; ++n)
    for (i64 c = 0; c < g.c; ++c)
      for (i64 od = 0; od < g.out[0]; ++od)
        for (i64 oh = 0; oh < g.out[1]; ++oh) {
          const std::int64_t* row =
              indices + n * st.v[0] + c * st.v[1] + od * st.v[2] + oh * st.v[3];
          for (i64 ow = 0; ow < g.out[2]; ++ow) {
            const std::int64_t i = row[ow * st.v[4]];
            if (i < -1 || i >= plane)
              return invalid_argument(fn + ": indices hold " + std::to_string(i) + " at output (" +
                                      std::to_string(n) + ", " + std::to_string(c) +
                                      ", ...); an index must lie in [0, " + std::to_string(plane) +
                                      ") (or be -1)");
          }
        }
  return Status::ok();
}

}  // namespace
}  // namespace pool

using pool::Geom;
using pool::i64;

PoolDesc PoolDesc::global(PoolKind kind, const TensorDesc& x) {
  PoolDesc p;
  p.kind = kind;
  if (x.rank() > 2) p.kernel.assign(x.dims.begin() + 2, x.dims.end());
  return p;
}

Result<TensorDesc> pooling_output_desc(const PoolDesc& p, const TensorDesc& x) {
  TESSERA_ASSIGN_OR_RETURN(Geom g, pool::make_geom("pooling_output_desc", p, x));
  const Layout l =
      x.is_packed(Layout::kNHWC) && !x.is_packed(Layout::kNCHW) ? Layout::kNHWC : Layout::kNCHW;
  return TensorDesc::make(x.dtype, pool::out_dims(g), l);
}

Status pooling_forward(Handle& h, const PoolDesc& p, const TensorDesc& x_desc, const void* x,
                       const TensorDesc& y_desc, void* y, std::int64_t* indices) {
  const std::string fn = "pooling_forward";
  TESSERA_ASSIGN_OR_RETURN(Geom g, pool::make_geom(fn, p, x_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "y", y_desc, 3, 5));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x_desc, "y", y_desc));
  const TensorDesc expect = TensorDesc::make(x_desc.dtype, pool::out_dims(g));
  if (y_desc.dims != expect.dims)
    return invalid_argument(fn + ": y dims [" + detail::dims_string(y_desc.dims) +
                            "] differ from the pooled dims [" + detail::dims_string(expect.dims) +
                            "] of x " + x_desc.to_string());
  if (indices != nullptr && !g.is_max())
    return invalid_argument(fn + ": indices are for max pooling only");
  const bool work = y_desc.numel() > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", y, work));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  pool::log_bench(g, p, x_desc, "fwd", indices != nullptr);
  if (!work) return Status::ok();
  const pool::FwdProblem prob{g, x_desc, y_desc, x, y, indices};
  return detail::select_impl<pool::FwdProblem>("pooling_forward", pool::kForwardImpls, prob)
      .run(h, prob);
}

Status pooling_backward(Handle& h, const PoolDesc& p, const TensorDesc& x_desc, const void* x,
                        const std::int64_t* indices, const TensorDesc& dy_desc, const void* dy,
                        const TensorDesc& dx_desc, void* dx) {
  const std::string fn = "pooling_backward";
  TESSERA_ASSIGN_OR_RETURN(Geom g, pool::make_geom(fn, p, x_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "dy", dy_desc, 3, 5));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "dx", dx_desc, 3, 5));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x_desc, "dy", dy_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", x_desc, "dx", dx_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "dx", dx_desc));
  const TensorDesc expect = TensorDesc::make(x_desc.dtype, pool::out_dims(g));
  if (dy_desc.dims != expect.dims)
    return invalid_argument(fn + ": dy dims [" + detail::dims_string(dy_desc.dims) +
                            "] differ from the pooled dims [" + detail::dims_string(expect.dims) +
                            "] of x " + x_desc.to_string());
  const bool work = dx_desc.numel() > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", dy, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dx", dx, work));
  if (g.is_max()) {
    if (work && x == nullptr && indices == nullptr)
      return invalid_argument(fn + ": max pooling backward needs x or the forward indices");
  } else if (indices != nullptr) {
    return invalid_argument(fn + ": indices are for max pooling only");
  }
  if (g.is_max() && indices != nullptr && work)
    TESSERA_RETURN_IF_ERROR(pool::check_indices(h, fn, g, dy_desc, indices));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  pool::log_bench(g, p, x_desc, "bwd", indices != nullptr);
  if (!work) return Status::ok();
  const pool::BwdProblem prob{
      g, x_desc, dy_desc, dx_desc, g.is_max() && indices == nullptr ? x : nullptr, indices, dy, dx};
  return detail::select_impl<pool::BwdProblem>("pooling_backward", pool::kBackwardImpls, prob)
      .run(h, prob);
}

}  // namespace tessera::dnn
