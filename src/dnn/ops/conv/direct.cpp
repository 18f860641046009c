// Direct convolution, channels-last: the input is padded once per call (so no tap ever
// leaves it), the weights are packed into blocks of 32 output channels ([block][taps][Cg][32],
// zero-filled past K), and the microkernel computes strips of 12 output pixels x 32 channels.
// Each output element comes from one strip in a fixed order: results do not depend on threads.
#include <algorithm>
#include <cstring>

#include "../activation/act_scalar.hpp"
#include "algos.hpp"
#include "direct_kernels.hpp"
#include "tessera/core/cpu.hpp"

namespace tessera::dnn::conv {
namespace {

constexpr int kBlockK = 32;

}  // namespace

Status direct_accepts(const Problem& p) {
  if (!cpu_info().usable(CpuFeature::kAvx512f)) return detail::refuse("needs AVX-512");
  if (!p.same_layout(Layout::kNHWC)) return detail::refuse("needs x and y packed NHWC");
  if (p.is_1x1_s1_p0()) return detail::refuse("1x1 stride 1: a plain GEMM is the better fit");
  if (p.Kg < 8) return detail::refuse("fewer than 8 output channels per group");
  return Status::ok();
}

Status direct_prefers(const Problem& p) {
  if (p.ker_spatial() == 1) return detail::refuse("1x1 kernel: im2col + GEMM measured faster");
  if (p.Cg * p.ker_spatial() > 1152)
    return detail::refuse("reduction Cg*taps = " + std::to_string(p.Cg * p.ker_spatial()) +
                          " > 1152: im2col + GEMM blocks it better");
  return Status::ok();
}

Status direct_fwd(Handle& h, const Problem& p) {
  const std::int64_t C = p.C, K = p.K, Cg = p.Cg, Kg = p.Kg, T = p.ker_spatial();
  const std::int64_t PD = p.in[0] + p.pad_b[0] + p.pad_e[0];
  const std::int64_t PH = p.in[1] + p.pad_b[1] + p.pad_e[1];
  const std::int64_t PW = p.in[2] + p.pad_b[2] + p.pad_e[2];
  const bool padded = PD != p.in[0] || PH != p.in[1] || PW != p.in[2];
  // Pixel stride of the (copied) input: a multiple of 512 bytes would put the 12 pixels of a
  // strip into two L1 sets, so such channel counts get 16 floats of slack.
  const std::int64_t CS = (C * 4) % 512 == 0 ? C + 16 : C;
  // Padded copy of x (when there is padding or the pixel stride changes).
  std::vector<float> xpad;
  const float* X = p.x;
  if (padded || CS != C) {
    xpad.assign(static_cast<std::size_t>(p.N * PD * PH * PW * CS), 0.0f);
    detail::parallel_for(h, 0, p.N * p.in[0] * p.in[1], 8, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r) {
        const std::int64_t n = r / (p.in[0] * p.in[1]), d = (r / p.in[1]) % p.in[0],
                           hh = r % p.in[1];
        const float* src = p.x + n * p.xs.n + d * p.xs.d + hh * p.xs.h;
        float* dst = xpad.data() +
                     (((n * PD + d + p.pad_b[0]) * PH + hh + p.pad_b[1]) * PW + p.pad_b[2]) * CS;
        for (std::int64_t w = 0; w < p.in[2]; ++w)
          std::memcpy(dst + w * CS, src + w * C, static_cast<std::size_t>(C) * sizeof(float));
      }
    });
    X = xpad.data();
  }
  // Packed weights: [g][kb][c block][t][c within block][32].
  const std::int64_t KB = (Kg + kBlockK - 1) / kBlockK;
  std::vector<float> wp(static_cast<std::size_t>(p.G * KB * T * Cg * kBlockK), 0.0f);
  for (std::int64_t g = 0; g < p.G; ++g)
    for (std::int64_t kk = 0; kk < Kg; ++kk) {
      const std::int64_t k = g * Kg + kk, kb = kk / kBlockK, lane = kk % kBlockK;
      float* blk = wp.data() + (g * KB + kb) * T * Cg * kBlockK;
      for (std::int64_t c0 = 0; c0 < Cg; c0 += kDirectBlockC) {
        const std::int64_t cn = std::min(kDirectBlockC, Cg - c0);
        std::int64_t t = 0;
        for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
          for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
            for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t)
              for (std::int64_t c = 0; c < cn; ++c)
                blk[((c0 * T) + t * cn + c) * kBlockK + lane] =
                    p.w[k * p.ws.n + (c0 + c) * p.ws.c + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w];
      }
    }
  // Strips: with stride 1 along w, a strip runs over the flattened (h, w) positions of one
  // output plane on the padded width, so one strip can span row ends (the few positions
  // past OW are computed and dropped); with a larger stride, strips stay within a row.
  const bool flat = p.stride[1] == 1 && p.stride[2] == 1;
  const std::int64_t plane_v = flat ? (p.out[1] - 1) * PW + p.out[2] : 0;
  const std::int64_t per_row = (p.out[2] + kDirectMaxPixels - 1) / kDirectMaxPixels;
  const std::int64_t per_plane =
      flat ? (plane_v + kDirectMaxPixels - 1) / kDirectMaxPixels : p.out[1] * per_row;
  const std::int64_t planes = p.N * p.out[0];
  const std::int64_t items = planes * per_plane * p.G * KB;
  const float* res = static_cast<const float*>(p.post.residual);
  const bool post = p.has_post_ops();
  // Work item: one strip x one block of 32 output channels; each output element belongs to
  // exactly one item.
  detail::parallel_for(h, 0, items, 4, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t it = b; it < e; ++it) {
      // Strips fastest, so consecutive items reuse one block of packed weights from cache.
      const std::int64_t s = it % per_plane, kb = (it / per_plane) % KB;
      const std::int64_t g = (it / (per_plane * KB)) % p.G, plane = it / (per_plane * KB * p.G);
      const std::int64_t n = plane / p.out[0], od = plane % p.out[0];
      DirectStrip st;
      const float* xplane = X + (n * PD + od * p.stride[0]) * PH * PW * CS;
      std::int64_t yoff[kDirectMaxPixels];
      int mb = 0;
      if (flat) {
        const std::int64_t v0 = s * kDirectMaxPixels;
        mb = static_cast<int>(std::min<std::int64_t>(kDirectMaxPixels, plane_v - v0));
        st.x = xplane + v0 * CS;
        for (int j = 0; j < mb; ++j) {
          const std::int64_t v = v0 + j, oh = v / PW, ow = v % PW;
          yoff[j] = ow < p.out[2] ? ((plane * p.out[1] + oh) * p.out[2] + ow) * K : -1;
        }
      } else {
        const std::int64_t oh = s / per_row, ow0 = (s % per_row) * kDirectMaxPixels;
        mb = static_cast<int>(std::min<std::int64_t>(kDirectMaxPixels, p.out[2] - ow0));
        st.x = xplane + (oh * p.stride[1] * PW + ow0 * p.stride[2]) * CS;
        for (int j = 0; j < mb; ++j) yoff[j] = ((plane * p.out[1] + oh) * p.out[2] + ow0 + j) * K;
      }
      const std::int64_t k0 = g * Kg + kb * kBlockK;
      for (int j = 0; j < mb; ++j) st.y[j] = yoff[j] < 0 ? nullptr : p.y_out + yoff[j] + k0;
      st.x += g * Cg;
      st.w = wp.data() + (g * KB + kb) * T * Cg * kBlockK;
      st.Cg = Cg;
      st.x_pix = p.stride[2] * CS;
      st.kd = p.ker[0], st.kh = p.ker[1], st.kw = p.ker[2];
      st.x_td = p.dil[0] * PH * PW * CS;
      st.x_th = p.dil[1] * PW * CS;
      st.x_tw = p.dil[2] * CS;
      st.nk = static_cast<int>(std::min<std::int64_t>(kBlockK, Kg - kb * kBlockK));
      st.mb = mb;
      direct_strip_avx512(st);
      if (!post) continue;
      for (int j = 0; j < mb; ++j) {
        if (yoff[j] < 0) continue;
        float* y = p.y_out + yoff[j] + k0;
        const float* r = res ? res + yoff[j] + k0 : nullptr;
        for (int k = 0; k < st.nk; ++k) {
          float v = y[k];
          if (p.post.bias) v += p.post.bias[k0 + k];
          if (r) v += r[k];
          y[k] = act::forward(p.post.act, v);
        }
      }
    }
  });
  return Status::ok();
}

}  // namespace tessera::dnn::conv
