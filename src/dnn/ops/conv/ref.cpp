// The reference convolution: direct loops over any strides, f64 accumulation, one fixed
// summation order. Obviously correct rather than fast; every algorithm is tested against it.
#include "../activation/act_scalar.hpp"
#include "problem.hpp"

namespace tessera::dnn::conv {
namespace {

inline std::int64_t xoff(const Problem& p, std::int64_t n, std::int64_t c, std::int64_t d,
                         std::int64_t h, std::int64_t w) {
  return n * p.xs.n + c * p.xs.c + d * p.xs.d + h * p.xs.h + w * p.xs.w;
}
inline std::int64_t woff(const Problem& p, std::int64_t k, std::int64_t c, std::int64_t d,
                         std::int64_t h, std::int64_t w) {
  return k * p.ws.n + c * p.ws.c + d * p.ws.d + h * p.ws.h + w * p.ws.w;
}
inline std::int64_t yoff(const Problem& p, std::int64_t n, std::int64_t k, std::int64_t d,
                         std::int64_t h, std::int64_t w) {
  return n * p.ys.n + k * p.ys.c + d * p.ys.d + h * p.ys.h + w * p.ys.w;
}

// Input coordinate of output position o and kernel tap t in spatial dim i (may be outside).
inline std::int64_t in_coord(const Problem& p, int i, std::int64_t o, std::int64_t t) {
  return o * p.stride[i] - p.pad_b[i] + t * p.dil[i];
}

void forward(const Problem& p) {
  const auto& r = p;
  const float* res = static_cast<const float*>(p.post.residual);
  for (std::int64_t n = 0; n < p.N; ++n)
    for (std::int64_t k = 0; k < p.K; ++k) {
      const std::int64_t g = k / p.Kg;
      for (std::int64_t od = 0; od < p.out[0]; ++od)
        for (std::int64_t oh = 0; oh < p.out[1]; ++oh)
          for (std::int64_t ow = 0; ow < p.out[2]; ++ow) {
            double acc = 0.0;
            for (std::int64_t c = 0; c < p.Cg; ++c)
              for (std::int64_t kd = 0; kd < p.ker[0]; ++kd) {
                const std::int64_t id = in_coord(r, 0, od, kd);
                if (id < 0 || id >= p.in[0]) continue;
                for (std::int64_t kh = 0; kh < p.ker[1]; ++kh) {
                  const std::int64_t ih = in_coord(r, 1, oh, kh);
                  if (ih < 0 || ih >= p.in[1]) continue;
                  for (std::int64_t kw = 0; kw < p.ker[2]; ++kw) {
                    const std::int64_t iw = in_coord(r, 2, ow, kw);
                    if (iw < 0 || iw >= p.in[2]) continue;
                    acc += static_cast<double>(p.x[xoff(p, n, g * p.Cg + c, id, ih, iw)]) *
                           static_cast<double>(p.w[woff(p, k, c, kd, kh, kw)]);
                  }
                }
              }
            const std::int64_t yo = yoff(p, n, k, od, oh, ow);
            float v = static_cast<float>(acc);
            if (p.post.bias) v += p.post.bias[k];
            if (res) v += res[yo];
            p.y_out[yo] = act::forward(p.post.act, v);
          }
    }
}

void backward_data(const Problem& p) {
  for (std::int64_t n = 0; n < p.N; ++n)
    for (std::int64_t ci = 0; ci < p.C; ++ci) {
      const std::int64_t g = ci / p.Cg, c = ci % p.Cg;
      for (std::int64_t id = 0; id < p.in[0]; ++id)
        for (std::int64_t ih = 0; ih < p.in[1]; ++ih)
          for (std::int64_t iw = 0; iw < p.in[2]; ++iw) {
            double acc = 0.0;
            for (std::int64_t kk = 0; kk < p.Kg; ++kk) {
              const std::int64_t k = g * p.Kg + kk;
              for (std::int64_t kd = 0; kd < p.ker[0]; ++kd) {
                const std::int64_t td = id + p.pad_b[0] - kd * p.dil[0];
                if (td < 0 || td % p.stride[0] != 0 || td / p.stride[0] >= p.out[0]) continue;
                for (std::int64_t kh = 0; kh < p.ker[1]; ++kh) {
                  const std::int64_t th = ih + p.pad_b[1] - kh * p.dil[1];
                  if (th < 0 || th % p.stride[1] != 0 || th / p.stride[1] >= p.out[1]) continue;
                  for (std::int64_t kw = 0; kw < p.ker[2]; ++kw) {
                    const std::int64_t tw = iw + p.pad_b[2] - kw * p.dil[2];
                    if (tw < 0 || tw % p.stride[2] != 0 || tw / p.stride[2] >= p.out[2]) continue;
                    acc += static_cast<double>(p.y_in[yoff(p, n, k, td / p.stride[0],
                                                           th / p.stride[1], tw / p.stride[2])]) *
                           static_cast<double>(p.w[woff(p, k, c, kd, kh, kw)]);
                  }
                }
              }
            }
            p.x_out[xoff(p, n, ci, id, ih, iw)] = static_cast<float>(acc);
          }
    }
}

void backward_weights(const Problem& p) {
  for (std::int64_t k = 0; k < p.K; ++k) {
    const std::int64_t g = k / p.Kg;
    for (std::int64_t c = 0; c < p.Cg; ++c)
      for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
        for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
          for (std::int64_t kw = 0; kw < p.ker[2]; ++kw) {
            double acc = 0.0;
            for (std::int64_t n = 0; n < p.N; ++n)
              for (std::int64_t od = 0; od < p.out[0]; ++od) {
                const std::int64_t id = in_coord(p, 0, od, kd);
                if (id < 0 || id >= p.in[0]) continue;
                for (std::int64_t oh = 0; oh < p.out[1]; ++oh) {
                  const std::int64_t ih = in_coord(p, 1, oh, kh);
                  if (ih < 0 || ih >= p.in[1]) continue;
                  for (std::int64_t ow = 0; ow < p.out[2]; ++ow) {
                    const std::int64_t iw = in_coord(p, 2, ow, kw);
                    if (iw < 0 || iw >= p.in[2]) continue;
                    acc += static_cast<double>(p.y_in[yoff(p, n, k, od, oh, ow)]) *
                           static_cast<double>(p.x[xoff(p, n, g * p.Cg + c, id, ih, iw)]);
                  }
                }
              }
            p.w_out[woff(p, k, c, kd, kh, kw)] = static_cast<float>(acc);
          }
    if (p.dbias) {
      double acc = 0.0;
      for (std::int64_t n = 0; n < p.N; ++n)
        for (std::int64_t od = 0; od < p.out[0]; ++od)
          for (std::int64_t oh = 0; oh < p.out[1]; ++oh)
            for (std::int64_t ow = 0; ow < p.out[2]; ++ow)
              acc += static_cast<double>(p.y_in[yoff(p, n, k, od, oh, ow)]);
      p.dbias[k] = static_cast<float>(acc);
    }
  }
}

}  // namespace

Status reference(const Problem& p) {
  switch (p.dir) {
    case ConvDir::kForward: forward(p); break;
    case ConvDir::kBackwardData: backward_data(p); break;
    case ConvDir::kBackwardWeights: backward_weights(p); break;
  }
  return Status::ok();
}

}  // namespace tessera::dnn::conv
