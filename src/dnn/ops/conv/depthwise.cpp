// Depthwise convolution: groups == C == K (one 1-channel filter per channel). Channels-last
// runs a per-ISA row kernel vectorised over channels; channels-first works plane by plane.
// Rows (NHWC) or planes (NCHW) are independent, so any thread count gives the same bits.
#include <algorithm>
#include <vector>

#include "algos.hpp"
#include "depthwise_kernels.hpp"
#include "tessera/core/cpu.hpp"

namespace tessera::dnn::conv {
namespace {

using RowFn = void (*)(const DwRow&);

struct RowKernel {
  const char* name;
  RowFn fn;
  bool (*usable)();
};
constexpr RowKernel kRowKernels[] = {
    {"dw_row_nhwc_avx512", dw_row_nhwc_avx512,
     [] { return cpu_info().usable(CpuFeature::kAvx512f); }},
    {"dw_row_nhwc_generic", dw_row_nhwc_generic, [] { return true; }},
};

const RowKernel& row_kernel() {
  for (const RowKernel& k : kRowKernels)
    if (k.usable()) return k;
  return kRowKernels[std::size(kRowKernels) - 1];
}

// Weights as [taps][C] from any strides.
std::vector<float> taps_by_channel(const Problem& p) {
  const std::int64_t T = p.ker_spatial();
  std::vector<float> w(static_cast<std::size_t>(T * p.C));
  for (std::int64_t c = 0; c < p.C; ++c) {
    std::int64_t t = 0;
    for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
      for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
        for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t)
          w[static_cast<std::size_t>(t * p.C + c)] =
              p.w[c * p.ws.n + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w];
  }
  return w;
}

}  // namespace

void dw_row_nhwc_generic(const DwRow& r) {
  for (std::int64_t ow = 0; ow < r.OW; ++ow) {
    float* y = r.y + ow * r.C;
    for (std::int64_t c = 0; c < r.C; ++c) y[c] = 0.0f;
    std::int64_t t = 0;
    for (std::int64_t kd = 0; kd < r.KD; ++kd) {
      const std::int64_t id = r.od * r.sd - r.pd + kd * r.dd;
      for (std::int64_t kh = 0; kh < r.KH; ++kh) {
        const std::int64_t ih = r.oh * r.sh - r.ph + kh * r.dh;
        for (std::int64_t kw = 0; kw < r.KW; ++kw, ++t) {
          const std::int64_t iw = ow * r.sw - r.pw + kw * r.dw;
          if (id < 0 || id >= r.ID || ih < 0 || ih >= r.IH || iw < 0 || iw >= r.IW) continue;
          const float* x = r.x + ((id * r.IH + ih) * r.IW + iw) * r.C;
          const float* w = r.w + t * r.C;
          for (std::int64_t c = 0; c < r.C; ++c) y[c] += x[c] * w[c];
        }
      }
    }
  }
}

Status depthwise_accepts(const Problem& p) {
  if (p.G != p.C || p.Cg != 1) return detail::refuse("not depthwise (groups != C)");
  if (p.Kg != 1) return detail::refuse("channel multiplier K / C = " + std::to_string(p.Kg) + " > 1");
  if (!p.x_layout || p.x_layout != p.y_layout)
    return detail::refuse("x and y must be packed alike in NCHW or NHWC");
  return Status::ok();
}

Status depthwise_fwd(Handle& h, const Problem& p) {
  const std::vector<float> w = taps_by_channel(p);
  const float* res = static_cast<const float*>(p.post.residual);
  const std::int64_t osp = p.out_spatial(), isp = p.in_spatial();
  if (p.x_layout == Layout::kNHWC) {
    const RowFn fn = row_kernel().fn;
    TESSERA_VLOG(kDispatch) << "conv depthwise: row kernel " << row_kernel().name;
    const std::int64_t rows = p.N * p.out[0] * p.out[1];
    detail::parallel_for(h, 0, rows, 4, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t n = r / (p.out[0] * p.out[1]);
        const std::int64_t od = (r / p.out[1]) % p.out[0], oh = r % p.out[1];
        DwRow a{p.x + n * p.xs.n, w.data(), p.y_out + r * p.out[2] * p.C, p.C, p.in[0], p.in[1],
                p.in[2], p.out[2], p.ker[0], p.ker[1], p.ker[2], p.stride[0], p.stride[1],
                p.stride[2], p.dil[0], p.dil[1], p.dil[2], p.pad_b[0], p.pad_b[1], p.pad_b[2],
                od, oh};
        fn(a);
        if (p.has_post_ops())
          apply_post_ops_nhwc(p, a.y, res ? res + r * p.out[2] * p.C : nullptr, p.out[2]);
      }
    });
    return Status::ok();
  }
  // NCHW: one (n, c) plane at a time; inner loops run along output rows.
  detail::parallel_for(h, 0, p.N * p.C, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t nc = b; nc < e; ++nc) {
      const std::int64_t c = nc % p.C;
      const float* x = p.x + nc * isp;
      float* y = p.y_out + nc * osp;
      std::fill(y, y + osp, 0.0f);
      std::int64_t t = 0;
      for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
        for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
          for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t) {
            const float wv = w[static_cast<std::size_t>(t * p.C + c)];
            // Output columns whose input column is inside: iw = ow*s - pad + kw*dil in [0, IW).
            const std::int64_t off = kw * p.dil[2] - p.pad_b[2], s = p.stride[2];
            std::int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
            std::int64_t hi = p.in[2] - 1 - off < 0 ? -1 : (p.in[2] - 1 - off) / s;
            hi = std::min(hi, p.out[2] - 1);
            if (lo > hi) continue;
            for (std::int64_t od = 0; od < p.out[0]; ++od) {
              const std::int64_t id = od * p.stride[0] - p.pad_b[0] + kd * p.dil[0];
              if (id < 0 || id >= p.in[0]) continue;
              for (std::int64_t oh = 0; oh < p.out[1]; ++oh) {
                const std::int64_t ih = oh * p.stride[1] - p.pad_b[1] + kh * p.dil[1];
                if (ih < 0 || ih >= p.in[1]) continue;
                const float* xr = x + (id * p.in[1] + ih) * p.in[2] + off;
                float* yr = y + (od * p.out[1] + oh) * p.out[2];
                if (s == 1) {
                  for (std::int64_t ow = lo; ow <= hi; ++ow) yr[ow] += wv * xr[ow];
                } else {
                  for (std::int64_t ow = lo; ow <= hi; ++ow) yr[ow] += wv * xr[ow * s];
                }
              }
            }
          }
      if (p.has_post_ops())
        apply_post_ops_nchw(p, y, res ? res + nc * osp : nullptr, c, c + 1, osp, osp);
    }
  });
  return Status::ok();
}

// dw[c][t] = sum over n and output positions of dy * x, each channel owned by one thread and
// summed in a fixed order.
Status depthwise_bwd_weights(Handle& h, const Problem& p) {
  const std::int64_t T = p.ker_spatial(), osp = p.out_spatial();
  const bool nhwc = p.x_layout == Layout::kNHWC;
  const std::int64_t cb = nhwc ? 16 : 1;
  std::vector<float> acc(static_cast<std::size_t>(T * p.C), 0.0f);  // [t][C]
  detail::parallel_for(h, 0, (p.C + cb - 1) / cb, 1, [&](std::int64_t b, std::int64_t e) {
    const std::int64_t c0 = b * cb, c1 = std::min(p.C, e * cb);
    for (std::int64_t n = 0; n < p.N; ++n)
      for (std::int64_t q = 0; q < osp; ++q) {
        const std::int64_t od = q / (p.out[1] * p.out[2]), oh = (q / p.out[2]) % p.out[1],
                           ow = q % p.out[2];
        std::int64_t t = 0;
        for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
          for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
            for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t) {
              const std::int64_t id = od * p.stride[0] - p.pad_b[0] + kd * p.dil[0];
              const std::int64_t ih = oh * p.stride[1] - p.pad_b[1] + kh * p.dil[1];
              const std::int64_t iw = ow * p.stride[2] - p.pad_b[2] + kw * p.dil[2];
              if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 || iw >= p.in[2])
                continue;
              const float* x = p.x + n * p.xs.n + id * p.xs.d + ih * p.xs.h + iw * p.xs.w;
              const float* dy = p.y_in + n * p.ys.n + od * p.ys.d + oh * p.ys.h + ow * p.ys.w;
              float* a = acc.data() + t * p.C;
              if (nhwc) {
                for (std::int64_t c = c0; c < c1; ++c) a[c] += dy[c] * x[c];
              } else {
                for (std::int64_t c = c0; c < c1; ++c) a[c] += dy[c * p.ys.c] * x[c * p.xs.c];
              }
            }
      }
  });
  for (std::int64_t c = 0; c < p.C; ++c) {
    std::int64_t t = 0;
    for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
      for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
        for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t)
          p.w_out[c * p.ws.n + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w] =
              acc[static_cast<std::size_t>(t * p.C + c)];
  }
  bias_grad(p);
  return Status::ok();
}

}  // namespace tessera::dnn::conv
