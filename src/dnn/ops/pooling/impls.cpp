// Pooling entry points: argument checks, the ordered implementation lists, the shared driver
// helpers (drivers.hpp) and the forward driver, which walks output rows over the thread pool
// (each written by one thread) and calls the per-ISA row kernels (kernels.hpp). The backward
// drivers are in backward.cpp. Results are the same bits for any thread count.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <tessera/core/cpu.hpp>

#include "../activation/dense.hpp"
#include "drivers.hpp"

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

}  // namespace

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

std::vector<float> count_w_of(const Geom& g) {
  std::vector<float> cw(static_cast<std::size_t>(g.out[2]), 1.0f);
  if (!g.is_max())
    for (i64 ow = 0; ow < g.out[2]; ++ow)
      cw[static_cast<std::size_t>(ow)] = static_cast<float>(divisor_taps(g, 2, ow));
  return cw;
}

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

// Whether PoolKernels::planes_nchw applies: 2-D pooling with dilation 1, a window at most
// kMaxPlaneK tall and wide (average: kMaxAvgPlaneK, at least 2 wide, stride 1; or 3x3 stride 2
// with begin padding at most 1), stride 1 or 2 along W, begin padding smaller than the window,
// packed NCHW (x and `out`: y or dy), every window holding an input element (so no output is
// -inf or 0 for want of one).
bool planes_apply(const Geom& g, const TensorDesc& x_desc, const TensorDesc& out_desc) {
  if (g.in[0] != 1 || g.k[0] != 1) return false;
  if (!x_desc.is_packed(Layout::kNCHW) || !out_desc.is_packed(Layout::kNCHW)) return false;
  const i64 kmax = g.is_max() ? kMaxPlaneK : kMaxAvgPlaneK;
  for (int i = 1; i < 3; ++i)
    if (g.k[i] > kmax || g.d[i] != 1 || g.pb[i] >= g.k[i] ||
        (g.out[i] - 1) * g.s[i] - g.pb[i] > g.in[i] - 1)
      return false;
  // Average stores each row's taps, which pays only when every row serves k_h output rows
  // (3x3 stride 1 on [1,16,112,112]: 0.091 -> 0.073 ms; stride 2: 0.046 -> 0.054); 3x3 stride
  // 2 takes its taps straight from x instead (avg_k3_planes_t).
  const bool avg_k3s2 = g.k[1] == 3 && g.k[2] == 3 && g.s[1] == 2 && g.s[2] == 2 && g.pb[1] <= 1 && g.pb[2] <= 1;
  if (!g.is_max() && !avg_k3s2 && (g.k[2] < 2 || g.s[1] != 1 || g.s[2] != 1)) return false;
  return (g.s[2] == 1 || g.s[2] == 2) && g.out[2] <= kMaxPlaneW && g.out[0] == 1;
}

PoolPlanes planes_args(const Geom& g, const float* x, i64 planes, float* y,
                       std::int64_t* indices, const float* x_begin, const float* x_end,
                       bool stream, const float* count_h, const float* count_w) {
  return {x,        planes,   g.in[1], g.in[2], g.k[1],  g.k[2],  g.s[1],
          g.s[2],   g.pb[1],  g.pb[2], g.out[1], g.out[2], y,      indices,
          x_begin,  x_end,    stream,  count_h,  count_w};
}

namespace {

Status isa_ok(Isa need) {
  const Isa have = cpu_info().isa();
  if (have >= need) return Status::ok();
  return detail::refuse("needs " + std::string(isa_name(need)) +
                        "; the CPU (under TESSERA_MAX_ISA) allows " + std::string(isa_name(have)));
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
  // NHWC stride-1 outputs past the last-level cache likewise (forward_nhwc_s1's whole lines):
  // [32,64,112,112] 3x3 max 22.7-26.6 -> 17.3-17.7 ms at 1 thread, 13.5-17.0 -> 9.3-10.8 at 2.
  const bool stream_y = nhwc && g.c % 16 == 0 && p.y_desc.is_packed(Layout::kNHWC) &&
                        reinterpret_cast<std::uintptr_t>(ys.data) % 64 == 0 &&
                        detail::stream_output(p.y_desc.span() * 4);
  if (!nhwc && global_window(g) && p.x_desc.is_packed(Layout::kNCHW) && p.y_desc.is_packed(Layout::kNCHW)) {
    // The window is the whole input: each output reduces its plane in order, W planes at a
    // time. The row kernels took an output row's setup for every output: average over
    // [256,2048,7,7] ran at 50 ms at 1 thread (1.4x oneDNN's time), max at 99. NHWC stays on
    // its row kernel, which already reduces each block of channels over the pixels in
    // registers (an average kernel of its own measured the same).
    const i64 n = g.in_plane();
    const float div = static_cast<float>(n);  // the reference's divisor
    detail::parallel_for(h, 0, g.n * g.c, std::max<i64>(64, 65536 / n), [&](i64 a, i64 b) {
      if (g.is_max())
        K.global_max_nchw(xs.data + a * n, b - a, n, ys.data + a, p.indices != nullptr ? p.indices + a : nullptr);
      else
        K.global_avg_nchw(xs.data + a * n, b - a, n, div, ys.data + a);
    });
    ys.commit();
    return Status::ok();
  }
  if (!nhwc && planes_apply(g, p.x_desc, p.y_desc)) {
    // Whole planes: each input row's window maxima are found once, not once per output row.
    const i64 planes = g.n * g.c, in_plane = g.in[1] * g.in[2], out_plane = g.out[1] * g.out[2];
    const float* x_end = xs.data + p.x_desc.span();
    const bool stream = detail::stream_output(p.y_desc.span() * 4);
    // Average divisors: the row factor (D and H dims) per output row, the column factor.
    const std::vector<float> count_w = count_w_of(g);
    const WindowRows win(g, strides5(p.x_desc));
    detail::parallel_for(h, 0, planes, std::max<i64>(1, 65536 / in_plane), [&](i64 a, i64 b) {
      K.planes_nchw(planes_args(g, xs.data + a * in_plane, b - a, ys.data + a * out_plane,
                                p.indices != nullptr ? p.indices + a * out_plane : nullptr,
                                xs.data, x_end, stream,
                                g.is_max() ? nullptr : win.row_count.data(),
                                g.is_max() ? nullptr : count_w.data()));
      if (stream) K.fence();
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
  // NCHW windows that move down by more than a row read x in short pieces of a stream the
  // hardware prefetcher follows late: each output row prefetches, spread along its blocks, the
  // new rows of the window about 8 KiB of them ahead (the next planes' windows past a plane's
  // end; packed planes are consecutive). Average 3x3 stride 2 on [32,64,112,112]: 6.6-7.2 ->
  // 5.5-5.8 ms at 1 thread, 2x2: 6.2 -> 3.9. Stride 1 lost by it (11.5-12.2 -> 12.8-13.6).
  i64 pf_windows = 0;
  if (!nhwc && g.s[1] >= 2) {
    i64 new_rows = 0;
    std::vector<const float*> rows(static_cast<std::size_t>(win.max_rows));
    std::vector<i64> lens(rows.size());
    for (i64 w = 0; w < rows_per_plane; ++w)
      new_rows = std::max(new_rows, win.next_rows(w - 1, xs.data, 0, rows.data(), lens.data(), 0));
    pf_windows = 8192 / std::max<i64>(1, new_rows * g.in[2] * 4) + 1;
  }
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
      const i64 yo = n * yst.v[0] + c * yst.v[1] + od * yst.v[2] + oh * yst.v[3];
      row.y = ys.data + yo;
      row.indices = p.indices != nullptr ? p.indices + yo : nullptr;
      // NHWC: the next window's new rows prefetched along the way.
      row.ahead = ahead.data();
      row.ahead_len = ahead_len.data();
      if (nhwc) {
        row.n_ahead = r + 1 < end ? win.next_rows(w, xb, g.in[2] * xst.v[4], ahead.data(),
                                                  ahead_len.data(), 0)
                                  : 0;
      } else if (pf_windows > 0) {
        const i64 later = w + pf_windows;
        row.n_ahead = win.next_rows(later % rows_per_plane - 1,
                                    xb + later / rows_per_plane * xst.v[1], g.in[2],
                                    ahead.data(), ahead_len.data(), 0);
      }
      row.stream_indices = stream_idx;
      row.stream_y = stream_y;
      if (nhwc)
        K.forward_nhwc(row);
      else
        K.forward_nchw(row);
    }
    if (stream_idx || stream_y) K.fence();
  });
  ys.commit();
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
