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
  // Work item: a group of up to kGroup strips of one plane x a run of 32-channel blocks. Inside
  // an item the blocks are the outer loop, so one block of packed weights serves every strip
  // of the group and the group's input stays in cache across the blocks. Items are many
  // enough for every thread (the block runs split K when there are few strips); each output
  // element still comes from one kernel call over its whole reduction, so the split does
  // not change the bits.
  constexpr std::int64_t kGroup = 4;
  const std::int64_t groups_pp = (per_plane + kGroup - 1) / kGroup;
  const std::int64_t spatial_items = planes * groups_pp * p.G;
  const std::int64_t want = 8 * detail::max_threads(h);
  const std::int64_t kb_split =
      std::clamp<std::int64_t>((want + spatial_items - 1) / spatial_items, 1, KB);
  const std::int64_t kb_run = (KB + kb_split - 1) / kb_split;
  const std::int64_t items = spatial_items * kb_split;
  const float* res = static_cast<const float*>(p.post.residual);
  const bool post = p.has_post_ops();
  detail::parallel_for(h, 0, items, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t it = b; it < e; ++it) {
      const std::int64_t ks = it % kb_split, sg = (it / kb_split) % groups_pp;
      const std::int64_t g = (it / (kb_split * groups_pp)) % p.G;
      const std::int64_t plane = it / (kb_split * groups_pp * p.G);
      const std::int64_t n = plane / p.out[0], od = plane % p.out[0];
      const float* xplane = X + (n * PD + od * p.stride[0]) * PH * PW * CS + g * Cg;
      const std::int64_t s0 = sg * kGroup, s1 = std::min(per_plane, s0 + kGroup);
      // Per strip: input start, pixel count and output offsets (-1: a position past OW).
      DirectStrip st[kGroup];
      std::int64_t yoff[kGroup][kDirectMaxPixels];
      for (std::int64_t s = s0; s < s1; ++s) {
        DirectStrip& d = st[s - s0];
        std::int64_t* yo = yoff[s - s0];
        if (flat) {
          const std::int64_t v0 = s * kDirectMaxPixels;
          d.mb = static_cast<int>(std::min<std::int64_t>(kDirectMaxPixels, plane_v - v0));
          d.x = xplane + v0 * CS;
          std::int64_t oh = v0 / PW, ow = v0 % PW;
          for (int j = 0; j < d.mb; ++j) {
            yo[j] = ow < p.out[2] ? ((plane * p.out[1] + oh) * p.out[2] + ow) * K : -1;
            if (++ow == PW) ow = 0, ++oh;
          }
        } else {
          // Strips of near-equal length (28 = 10 + 9 + 9, not 12 + 12 + 4: a short strip
          // runs at a fraction of the kernel's speed).
          const std::int64_t oh = s / per_row, sr = s % per_row;
          const std::int64_t ow0 = sr * p.out[2] / per_row;
          d.mb = static_cast<int>((sr + 1) * p.out[2] / per_row - ow0);
          d.x = xplane + (oh * p.stride[1] * PW + ow0 * p.stride[2]) * CS;
          for (int j = 0; j < d.mb; ++j) yo[j] = ((plane * p.out[1] + oh) * p.out[2] + ow0 + j) * K;
        }
        d.Cg = Cg;
        d.x_pix = p.stride[2] * CS;
        d.kd = p.ker[0], d.kh = p.ker[1], d.kw = p.ker[2];
        d.x_td = p.dil[0] * PH * PW * CS;
        d.x_th = p.dil[1] * PW * CS;
        d.x_tw = p.dil[2] * CS;
      }
      const std::int64_t kb1 = std::min(KB, (ks + 1) * kb_run);
      for (std::int64_t kb = ks * kb_run; kb < kb1; ++kb) {
        const std::int64_t k0 = g * Kg + kb * kBlockK;
        const int nk = static_cast<int>(std::min<std::int64_t>(kBlockK, Kg - kb * kBlockK));
        const float* wblk = wp.data() + (g * KB + kb) * T * Cg * kBlockK;
        for (std::int64_t s = s0; s < s1; ++s) {
          DirectStrip& d = st[s - s0];
          const std::int64_t* yo = yoff[s - s0];
          for (int j = 0; j < d.mb; ++j) d.y[j] = yo[j] < 0 ? nullptr : p.y_out + yo[j] + k0;
          d.w = wblk;
          d.nk = nk;
          direct_strip_avx512(d);
          if (!post) continue;
          for (int j = 0; j < d.mb; ++j) {
            if (yo[j] < 0) continue;
            float* y = d.y[j];
            const float* r = res ? res + yo[j] + k0 : nullptr;
            for (int k = 0; k < nk; ++k) {
              float v = y[k];
              if (p.post.bias) v += p.post.bias[k0 + k];
              if (r) v += r[k];
              y[k] = act::forward(p.post.act, v);
            }
          }
        }
      }
    }
  });
  return Status::ok();
}

}  // namespace tessera::dnn::conv
