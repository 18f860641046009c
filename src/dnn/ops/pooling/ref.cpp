// Reference pooling: one window at a time over logical indices, any strides, f32/bf16/f16
// through load_f32/store_f32. Windows are scanned in row-major tap order; max keeps the first
// maximum (NaN counts as the largest value, the first NaN wins); average sums in f32 in that
// order and divides by the tap count; backward accumulates in f32 and stores once.
#include <limits>
#include <vector>

#include "pool.hpp"

namespace tessera::dnn::pool {

using detail::load_f32;
using detail::store_f32;

namespace {

struct Window {
  float value = 0.0f;  // max or average
  i64 index = -1;      // max: spatial flat index of the chosen element, -1 if none
  i64 count = 0;       // average: divisor
};

// One window of the (n, c) plane of x (a pointer to its first element, strides st).
Window pool_window(const Geom& g, const void* x, DType t, const Strides5& st, i64 od, i64 oh,
                   i64 ow) {
  Window w;
  float m = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
  bool any = false;
  const i64 o[3] = {od, oh, ow};
  for (i64 kd = 0; kd < g.k[0]; ++kd)
    for (i64 kh = 0; kh < g.k[1]; ++kh)
      for (i64 kw = 0; kw < g.k[2]; ++kw) {
        const i64 tap[3] = {kd, kh, kw};
        i64 pos[3];
        bool inside = true, in_padded = true;
        for (int i = 0; i < 3; ++i) {
          pos[i] = o[i] * g.s[i] - g.pb[i] + tap[i] * g.d[i];
          inside = inside && pos[i] >= 0 && pos[i] < g.in[i];
          in_padded = in_padded && pos[i] < g.in[i] + g.pe[i];
        }
        if (g.kind == PoolKind::kAvgIncludePad && in_padded) ++w.count;
        if (!inside) continue;
        const float v = load_f32(x, t, pos[0] * st.v[2] + pos[1] * st.v[3] + pos[2] * st.v[4]);
        if (g.kind == PoolKind::kMax) {
          if (!any || v > m || (v != v && m == m)) {
            m = v;
            w.index = (pos[0] * g.in[1] + pos[1]) * g.in[2] + pos[2];
          }
        } else {
          sum += v;
          if (g.kind == PoolKind::kAvgExcludePad) ++w.count;
        }
        any = true;
      }
  if (g.kind == PoolKind::kMax)
    w.value = m;
  else
    w.value = w.count > 0 ? sum / static_cast<float>(w.count) : 0.0f;
  return w;
}

}  // namespace

Status forward_ref(Handle&, const FwdProblem& p) {
  const Geom& g = p.g;
  const Strides5 xs = strides5(p.x_desc), ys = strides5(p.y_desc);
  for (i64 n = 0; n < g.n; ++n)
    for (i64 c = 0; c < g.c; ++c) {
      const i64 xbase = n * xs.v[0] + c * xs.v[1];
      const void* plane =
          static_cast<const char*>(p.x) + xbase * static_cast<i64>(dtype_size(p.x_desc.dtype));
      for (i64 od = 0; od < g.out[0]; ++od)
        for (i64 oh = 0; oh < g.out[1]; ++oh)
          for (i64 ow = 0; ow < g.out[2]; ++ow) {
            const Window w = pool_window(g, plane, p.x_desc.dtype, xs, od, oh, ow);
            const i64 yo = n * ys.v[0] + c * ys.v[1] + od * ys.v[2] + oh * ys.v[3] + ow * ys.v[4];
            store_f32(p.y, p.y_desc.dtype, yo, w.value);
            if (p.indices != nullptr) p.indices[yo] = w.index;
          }
    }
  return Status::ok();
}

Status backward_ref(Handle&, const BwdProblem& p) {
  const Geom& g = p.g;
  const Strides5 xs = strides5(p.x_desc), dys = strides5(p.dy_desc), dxs = strides5(p.dx_desc);
  const i64 plane = g.in_plane();
  std::vector<float> acc(static_cast<std::size_t>(plane));
  for (i64 n = 0; n < g.n; ++n)
    for (i64 c = 0; c < g.c; ++c) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      const void* xplane = nullptr;
      if (p.x != nullptr)
        xplane = static_cast<const char*>(p.x) +
                 (n * xs.v[0] + c * xs.v[1]) * static_cast<i64>(dtype_size(p.x_desc.dtype));
      for (i64 od = 0; od < g.out[0]; ++od)
        for (i64 oh = 0; oh < g.out[1]; ++oh)
          for (i64 ow = 0; ow < g.out[2]; ++ow) {
            const i64 yo =
                n * dys.v[0] + c * dys.v[1] + od * dys.v[2] + oh * dys.v[3] + ow * dys.v[4];
            const float dy = load_f32(p.dy, p.dy_desc.dtype, yo);
            if (g.is_max()) {
              const i64 index = p.indices != nullptr
                                    ? p.indices[yo]
                                    : pool_window(g, xplane, p.x_desc.dtype, xs, od, oh, ow).index;
              if (index >= 0) acc[static_cast<std::size_t>(index)] += dy;
              continue;
            }
            i64 lo[3], hi[3];
            const i64 o[3] = {od, oh, ow};
            i64 count = 1;
            for (int i = 0; i < 3; ++i) {
              valid_taps(g, i, o[i], &lo[i], &hi[i]);
              count *= divisor_taps(g, i, o[i]);
            }
            if (count == 0) continue;
            const float grad = dy / static_cast<float>(count);
            for (i64 kd = lo[0]; kd < hi[0]; ++kd)
              for (i64 kh = lo[1]; kh < hi[1]; ++kh)
                for (i64 kw = lo[2]; kw < hi[2]; ++kw) {
                  const i64 id = od * g.s[0] - g.pb[0] + kd * g.d[0];
                  const i64 ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
                  const i64 iw = ow * g.s[2] - g.pb[2] + kw * g.d[2];
                  acc[static_cast<std::size_t>((id * g.in[1] + ih) * g.in[2] + iw)] += grad;
                }
          }
      for (i64 id = 0; id < g.in[0]; ++id)
        for (i64 ih = 0; ih < g.in[1]; ++ih)
          for (i64 iw = 0; iw < g.in[2]; ++iw) {
            const i64 xo =
                n * dxs.v[0] + c * dxs.v[1] + id * dxs.v[2] + ih * dxs.v[3] + iw * dxs.v[4];
            store_f32(p.dx, p.dx_desc.dtype, xo,
                      acc[static_cast<std::size_t>((id * g.in[1] + ih) * g.in[2] + iw)]);
          }
    }
  return Status::ok();
}

}  // namespace tessera::dnn::pool
