// GEMM-based convolution: im2col + GEMM (any kernel, stride, dilation, padding, groups) and
// 1x1 convolution as a plain GEMM. x and y must be packed alike (NCHW or NHWC); weights of
// any layout are repacked into the order the GEMM wants when they are not already in it.
//
// Work is cut into chunks of output pixels whose size depends only on the problem, and every
// output element is produced by one GEMM over its whole reduction, so results do not depend
// on the thread count. Many chunks run in parallel (one single-threaded GEMM each); few chunks
// run one after another with a multi-threaded GEMM.
#include <algorithm>
#include <cstring>

#include "algos.hpp"
#include "tessera/core/cpu.hpp"
#include "tessera/core/thread_pool.hpp"

namespace tessera::dnn::conv {
namespace {

constexpr std::size_t kColBudgetBytes = std::size_t{1} << 20;  // about one L2 of im2col rows

std::int64_t taps(const Problem& p) { return p.ker_spatial(); }

// Output pixels per chunk for a reduction of `red` floats per pixel: about kColBudgetBytes of
// rows, at least 256 pixels, and a chunk count that is a multiple of 4 when there is more than
// one (so 2 or 4 threads get equal shares; 7 chunks on 2 threads would idle one thread for a
// seventh of the time). Depends on the problem only, never on the thread count.
std::int64_t chunk_pixels(std::int64_t red, std::int64_t total) {
  total = std::max<std::int64_t>(total, 1);
  std::int64_t mb = static_cast<std::int64_t>(kColBudgetBytes / sizeof(float)) /
                    std::max<std::int64_t>(red, 1);
  mb = std::max<std::int64_t>(mb, 256);
  if (mb >= total) return total;
  const std::int64_t chunks = (total + mb - 1) / mb;
  const std::int64_t balanced = (chunks + 3) / 4 * 4;
  mb = std::max<std::int64_t>((total + balanced - 1) / balanced, 64);
  return (mb + 15) / 16 * 16;
}

// The BLAS handle for a GEMM issued from this thread: the caller's outside parallel regions;
// inside one, a per-thread handle (a blas::Handle, with its workspace, is not thread-safe, and
// GEMMs there run single-threaded anyway).
blas::Handle& gemm_handle(Handle& h) {
  if (!ThreadPool::in_parallel_region()) return h.blas();
  thread_local blas::Handle local;
  return local;
}

// Runs fn(chunk) for chunk in [0, n): in parallel when there are enough chunks to keep every
// thread busy, else in order on this thread (GEMMs inside then use the threads themselves).
Status for_chunks(Handle& h, std::int64_t n, const std::function<Status(std::int64_t)>& fn) {
  const int threads = detail::max_threads(h);
  if (threads <= 1 || n < 2 * threads) {
    for (std::int64_t i = 0; i < n; ++i) TESSERA_RETURN_IF_ERROR(fn(i));
    return Status::ok();
  }
  std::vector<Status> st(static_cast<std::size_t>(n));
  detail::parallel_for(h, 0, n, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) st[static_cast<std::size_t>(i)] = fn(i);
  });
  for (auto& s : st) TESSERA_RETURN_IF_ERROR(s);
  return Status::ok();
}

// Weight gradients summed over `chunks` chunks of pixels: fn(i, dst, beta) runs the GEMM of
// chunk i into dst. With few weights and several chunks, chunk i goes to partial sum i % 4
// (each partial takes its chunks in order, one thread per partial, single-threaded GEMMs)
// and the partials are added in a fixed order at the end; otherwise the chunks run in order
// into dw, each GEMM using every thread. Either way the bits depend on the problem only.
constexpr std::int64_t kPartials = 4;
constexpr std::size_t kPartialMaxBytes = std::size_t{4} << 20;
Status accumulate_chunks(Handle& h, std::int64_t chunks, std::int64_t elems, float* dw,
                         const std::function<Status(std::int64_t, float*, float)>& fn) {
  if (chunks < kPartials ||
      static_cast<std::size_t>(elems) * sizeof(float) > kPartialMaxBytes) {
    for (std::int64_t i = 0; i < chunks; ++i)
      TESSERA_RETURN_IF_ERROR(fn(i, dw, i == 0 ? 0.0f : 1.0f));
    return Status::ok();
  }
  std::vector<float> part(static_cast<std::size_t>((kPartials - 1) * elems));
  std::vector<Status> st(kPartials);
  detail::parallel_for(h, 0, kPartials, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t q = b; q < e; ++q) {
      float* dst = q == 0 ? dw : part.data() + (q - 1) * elems;
      for (std::int64_t i = q; i < chunks && st[q].is_ok(); i += kPartials)
        st[q] = fn(i, dst, i == q ? 0.0f : 1.0f);
    }
  });
  for (const Status& s : st) TESSERA_RETURN_IF_ERROR(s);
  detail::parallel_for(h, 0, elems, 4096, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      float v = dw[i];
      for (std::int64_t q = 1; q < kPartials; ++q) v += part[(q - 1) * elems + i];
      dw[i] = v;
    }
  });
  return Status::ok();
}

// Pixels per chunk for weight gradients: the reduction of each GEMM is the chunk's pixels and
// every chunk reads and writes all of dW, so chunks get at least 512 pixels (dW traffic then
// stays small next to the multiply-adds: 512 x 512 x 3 x 3 at 7x7, mb8, ran 2.5x oneDNN's
// time with four chunks of 98 pixels).
std::int64_t bw_chunk_pixels(std::int64_t red, std::int64_t total) {
  return chunk_pixels(std::min<std::int64_t>(red, 512), total);
}
// Decomposes a flat output pixel index within one image.
struct Pix {
  std::int64_t d, h, w;
};
inline Pix pix_of(const Problem& p, std::int64_t q) {
  const std::int64_t ow = q % p.out[2];
  const std::int64_t t = q / p.out[2];
  return {t / p.out[1], t % p.out[1], ow};
}

// NHWC im2col of pixels [m0, m1) (flat over n and spatial) for group g:
// col[(m - m0) * taps*Cg + t*Cg + c].
void im2col_nhwc(const Problem& p, std::int64_t g, std::int64_t m0, std::int64_t m1, float* col) {
  const std::int64_t Cg = p.Cg, T = taps(p), osp = p.out_spatial();
  const bool whole_rows = p.G == 1 && p.dil[2] == 1 && p.xs.w == p.C;
  for (std::int64_t m = m0; m < m1; ++m) {
    const std::int64_t n = m / osp;
    const Pix o = pix_of(p, m % osp);
    float* row = col + (m - m0) * T * Cg;
    std::int64_t t = 0;
    for (std::int64_t kd = 0; kd < p.ker[0]; ++kd) {
      const std::int64_t id = o.d * p.stride[0] - p.pad_b[0] + kd * p.dil[0];
      for (std::int64_t kh = 0; kh < p.ker[1]; ++kh) {
        const std::int64_t ih = o.h * p.stride[1] - p.pad_b[1] + kh * p.dil[1];
        const std::int64_t iw0 = o.w * p.stride[2] - p.pad_b[2];
        if (whole_rows && id >= 0 && id < p.in[0] && ih >= 0 && ih < p.in[1] && iw0 >= 0 &&
            iw0 + p.ker[2] <= p.in[2]) {
          // The kw taps of an unsplit, undilated row are one contiguous run of the input
          // (one copy instead of KW: conv1's 7 x 3 channels are 84 bytes, not 7 x 12).
          std::memcpy(row + t * Cg, p.x + n * p.xs.n + id * p.xs.d + ih * p.xs.h + iw0 * p.xs.w,
                      static_cast<std::size_t>(p.ker[2] * Cg) * sizeof(float));
          t += p.ker[2];
          continue;
        }
        for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t) {
          const std::int64_t iw = o.w * p.stride[2] - p.pad_b[2] + kw * p.dil[2];
          float* dst = row + t * Cg;
          if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 || iw >= p.in[2]) {
            std::memset(dst, 0, static_cast<std::size_t>(Cg) * sizeof(float));
          } else {
            const float* src =
                p.x + n * p.xs.n + g * Cg + id * p.xs.d + ih * p.xs.h + iw * p.xs.w;
            std::memcpy(dst, src, static_cast<std::size_t>(Cg) * sizeof(float));
          }
        }
      }
    }
  }
}

// NCHW im2col of image n, pixels [q0, q1) of the output plane, group g:
// col[(c*taps + t) * (q1 - q0) + (q - q0)].
void im2col_nchw(const Problem& p, std::int64_t n, std::int64_t g, std::int64_t q0,
                 std::int64_t q1, float* col) {
  const std::int64_t T = taps(p), mb = q1 - q0;
  for (std::int64_t c = 0; c < p.Cg; ++c) {
    const float* xc = p.x + n * p.xs.n + (g * p.Cg + c) * p.xs.c;
    std::int64_t t = 0;
    for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
      for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
        for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t) {
          float* dst = col + (c * T + t) * mb;
          std::int64_t q = q0;
          while (q < q1) {
            const Pix o = pix_of(p, q);
            const std::int64_t run = std::min(q1 - q, p.out[2] - o.w);  // rest of this row
            const std::int64_t id = o.d * p.stride[0] - p.pad_b[0] + kd * p.dil[0];
            const std::int64_t ih = o.h * p.stride[1] - p.pad_b[1] + kh * p.dil[1];
            float* out = dst + (q - q0);
            if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1]) {
              std::memset(out, 0, static_cast<std::size_t>(run) * sizeof(float));
            } else {
              const float* src = xc + id * p.xs.d + ih * p.xs.h;
              const std::int64_t s = p.stride[2], off = kw * p.dil[2] - p.pad_b[2];
              for (std::int64_t j = 0; j < run; ++j) {
                const std::int64_t iw = (o.w + j) * s + off;
                out[j] = (iw >= 0 && iw < p.in[2]) ? src[iw] : 0.0f;
              }
            }
            q += run;
          }
        }
  }
}

// The same, split over threads when called outside a parallel region (pure copies: the
// result does not depend on the split).
void im2col_nhwc_par(Handle& h, const Problem& p, std::int64_t g, std::int64_t m0,
                     std::int64_t m1, float* col) {
  const std::int64_t red = taps(p) * p.Cg;
  detail::parallel_for(h, m0, m1, 64, [&](std::int64_t a, std::int64_t b) {
    im2col_nhwc(p, g, a, b, col + (a - m0) * red);
  });
}

// Weights as the GEMM wants them: a pointer to [K][taps*Cg] (channels inner) or
// [K][Cg*taps] (channels outer), repacked into scratch `buf` when the caller's layout differs.
const float* gemm_weights(const Problem& p, bool channels_inner, std::vector<float>& buf) {
  if (channels_inner ? p.w_ohwi : p.w_oihw) return p.w;
  buf.resize(static_cast<std::size_t>(p.K * p.Cg * taps(p)));
  pack_weights(p, channels_inner, buf.data());
  return buf.data();
}

// Channels-last forward GEMMs with many pixels want A = the weights of group g as a
// column-major Kg x red matrix (no transpose, which the GEMM runs faster; the transpose costs
// one pass over the weights, so it pays only with enough pixels, kTransposeMinPixels):
// wt[(g * red + r) * Kg + k] = W[g*Kg + k][r], r over (taps, Cg) with channels inner.
constexpr std::int64_t kTransposeMinPixels = 1024;
std::vector<float> weights_kg_inner(const Problem& p) {
  std::vector<float> dense;
  const float* W = gemm_weights(p, true, dense);
  const std::int64_t red = taps(p) * p.Cg;
  std::vector<float> wt(static_cast<std::size_t>(p.K * red));
  constexpr std::int64_t kTile = 16;  // transpose in tiles so reads and writes stay in cache
  for (std::int64_t g = 0; g < p.G; ++g)
    for (std::int64_t k0 = 0; k0 < p.Kg; k0 += kTile)
      for (std::int64_t r0 = 0; r0 < red; r0 += kTile)
        for (std::int64_t r = r0; r < std::min(red, r0 + kTile); ++r)
          for (std::int64_t k = k0; k < std::min(p.Kg, k0 + kTile); ++k)
            wt[static_cast<std::size_t>((g * red + r) * p.Kg + k)] = W[(g * p.Kg + k) * red + r];
  return wt;
}

const float* residual_of(const Problem& p) { return static_cast<const float*>(p.post.residual); }

}  // namespace

// 64-byte aligned: BLAS kernels peel loops to the alignment of their operands, so a scratch
// operand must sit at the same alignment on every thread for results not to depend on which
// thread ran a chunk.
float* thread_scratch(std::size_t n) {
  constexpr std::size_t kAlign = 64 / sizeof(float);
  thread_local std::vector<float> buf;
  if (buf.size() < n + kAlign) buf.resize(n + kAlign);
  const auto addr = reinterpret_cast<std::uintptr_t>(buf.data());
  return buf.data() + (kAlign - addr / sizeof(float) % kAlign) % kAlign;
}

void pack_weights(const Problem& p, bool channels_inner, float* dst) {
  const std::int64_t T = taps(p);
  for (std::int64_t k = 0; k < p.K; ++k)
    for (std::int64_t c = 0; c < p.Cg; ++c) {
      std::int64_t t = 0;
      for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
        for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
          for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t) {
            const float v = p.w[k * p.ws.n + c * p.ws.c + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w];
            dst[channels_inner ? (k * T + t) * p.Cg + c : (k * p.Cg + c) * T + t] = v;
          }
    }
}

void bias_grad(const Problem& p) {
  if (p.dbias == nullptr) return;
  const std::int64_t osp = p.out_spatial();
  std::vector<double> acc(static_cast<std::size_t>(p.K), 0.0);
  for (std::int64_t n = 0; n < p.N; ++n)
    for (std::int64_t q = 0; q < osp; ++q) {
      const Pix o = pix_of(p, q);
      const float* dy = p.y_in + n * p.ys.n + o.d * p.ys.d + o.h * p.ys.h + o.w * p.ys.w;
      for (std::int64_t k = 0; k < p.K; ++k)
        acc[static_cast<std::size_t>(k)] += dy[k * p.ys.c];
    }
  for (std::int64_t k = 0; k < p.K; ++k) p.dbias[k] = static_cast<float>(acc[static_cast<std::size_t>(k)]);
}

// ---- im2col + GEMM --------------------------------------------------------------------------
// Every algorithm here sees only non-empty problems: the lists send problems with a zero
// dimension to the reference (impls.cpp, nonempty<>).

Status im2col_accepts(const Problem& p) {
  if (!p.x_layout || p.x_layout != p.y_layout)
    return detail::refuse("x and y must be packed alike in NCHW or NHWC");
  return Status::ok();
}

Status im2col_fwd(Handle& h, const Problem& p) {
  const std::int64_t T = taps(p), red = T * p.Cg, osp = p.out_spatial();
  std::vector<float> wbuf;
  const bool nhwc = p.x_layout == Layout::kNHWC;
  const float* W = nhwc ? nullptr : gemm_weights(p, false, wbuf);  // NHWC: set below
  const float* res = residual_of(p);
  if (nhwc) {
    const std::int64_t M = p.N * osp, mb = chunk_pixels(red, M);
    const bool nn = M >= kTransposeMinPixels;
    const std::vector<float> wt = nn ? weights_kg_inner(p) : std::vector<float>{};
    if (!nn) W = gemm_weights(p, true, wbuf);
    const std::int64_t chunks = (M + mb - 1) / mb;
    return for_chunks(h, chunks, [&](std::int64_t ci) -> Status {
      const std::int64_t m0 = ci * mb, m1 = std::min(M, m0 + mb);
      float* col = thread_scratch(static_cast<std::size_t>((m1 - m0) * red));
      for (std::int64_t g = 0; g < p.G; ++g) {
        im2col_nhwc_par(h, p, g, m0, m1, col);
        TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
            gemm_handle(h), nn ? blas::Op::kNoTrans : blas::Op::kTrans, blas::Op::kNoTrans,
            p.Kg, m1 - m0, red, 1.0f, nn ? wt.data() + g * p.Kg * red : W + g * p.Kg * red,
            nn ? p.Kg : red, col, red, 0.0f, p.y_out + m0 * p.K + g * p.Kg, p.K));
      }
      if (p.has_post_ops()) apply_post_ops_nhwc(p, p.y_out + m0 * p.K, res ? res + m0 * p.K : nullptr, m1 - m0);
      return Status::ok();
    });
  }
  const std::int64_t mb = chunk_pixels(red, osp);
  const std::int64_t per_image = (osp + mb - 1) / mb;
  return for_chunks(h, p.N * per_image, [&](std::int64_t ci) -> Status {
    const std::int64_t n = ci / per_image;
    const std::int64_t q0 = (ci % per_image) * mb, q1 = std::min(osp, q0 + mb);
    float* col = thread_scratch(static_cast<std::size_t>((q1 - q0) * red));
    float* yn = p.y_out + n * p.ys.n;
    for (std::int64_t g = 0; g < p.G; ++g) {
      im2col_nchw(p, n, g, q0, q1, col);
      TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
          gemm_handle(h), blas::Op::kNoTrans, blas::Op::kNoTrans, q1 - q0, p.Kg, red, 1.0f, col,
          q1 - q0, W + g * p.Kg * red, red, 0.0f, yn + g * p.Kg * osp + q0, osp));
    }
    if (p.has_post_ops())
      apply_post_ops_nchw(p, yn + q0, res ? res + n * p.ys.n + q0 : nullptr, 0, p.K, q1 - q0, osp);
    return Status::ok();
  });
}

Status im2col_bwd_weights(Handle& h, const Problem& p) {
  const std::int64_t T = taps(p), red = T * p.Cg, osp = p.out_spatial();
  const bool nhwc = p.x_layout == Layout::kNHWC;
  // dW accumulates over chunks (beta = 1 after the first) into a dense [K][red] matrix in
  // the order the GEMM produces; copied out when the caller's layout differs.
  const bool direct_out = nhwc ? p.w_ohwi : p.w_oihw;
  std::vector<float> tmp;
  float* dW = p.w_out;
  if (!direct_out) {
    tmp.assign(static_cast<std::size_t>(p.K * red), 0.0f);
    dW = tmp.data();
  }
  if (nhwc) {
    const std::int64_t M = p.N * osp, mb = bw_chunk_pixels(red, M);
    const Status acc = accumulate_chunks(
        h, (M + mb - 1) / mb, p.K * red, dW, [&](std::int64_t ci, float* dst, float beta) {
          const std::int64_t m0 = ci * mb, m1 = std::min(M, m0 + mb);
          float* col = thread_scratch(static_cast<std::size_t>((m1 - m0) * red));
          for (std::int64_t g = 0; g < p.G; ++g) {
            im2col_nhwc_par(h, p, g, m0, m1, col);
            TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
                gemm_handle(h), blas::Op::kNoTrans, blas::Op::kTrans, red, p.Kg, m1 - m0, 1.0f,
                col, red, p.y_in + m0 * p.K + g * p.Kg, p.K, beta, dst + g * p.Kg * red, red));
          }
          return Status::ok();
        });
    if (!acc.is_ok()) return acc;
  } else {
    const std::int64_t mb = bw_chunk_pixels(red, osp), per_image = (osp + mb - 1) / mb;
    const Status acc = accumulate_chunks(
        h, p.N * per_image, p.K * red, dW, [&](std::int64_t ci, float* dst, float beta) {
          const std::int64_t n = ci / per_image;
          const std::int64_t q0 = (ci % per_image) * mb, q1 = std::min(osp, q0 + mb);
          float* col = thread_scratch(static_cast<std::size_t>((q1 - q0) * red));
          for (std::int64_t g = 0; g < p.G; ++g) {
            im2col_nchw(p, n, g, q0, q1, col);
            TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
                gemm_handle(h), blas::Op::kTrans, blas::Op::kNoTrans, red, p.Kg, q1 - q0, 1.0f,
                col, q1 - q0, p.y_in + n * p.ys.n + g * p.Kg * osp + q0, osp, beta,
                dst + g * p.Kg * red, red));
          }
          return Status::ok();
        });
    if (!acc.is_ok()) return acc;
  }
  if (!direct_out) {
    // Scatter the dense matrix into the caller's strides.
    for (std::int64_t k = 0; k < p.K; ++k)
      for (std::int64_t c = 0; c < p.Cg; ++c) {
        std::int64_t t = 0;
        for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
          for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
            for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t)
              p.w_out[k * p.ws.n + c * p.ws.c + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w] =
                  dW[nhwc ? (k * T + t) * p.Cg + c : (k * p.Cg + c) * T + t];
      }
  }
  bias_grad(p);
  return Status::ok();
}

namespace {

// Channels-last, one group, 2-D, no dilation along w: per image (images in parallel when
// there are enough, as below), chunks of whole output rows, each a GEMM into the column
// buffer and then, in parallel over the dx rows the chunk reaches when the images are not, a
// gather: dx row ih takes, for each output row oh of the chunk (ascending) whose kernel row
// kh = ih + ph - oh sh lies in the kernel, and each output pixel ow (ascending), the kernel
// row's KW x C values as one contiguous add into dx pixels ow sw - pw ... (clipped at the row's
// ends). Every dx element receives its contributions in output-pixel order, as the scatter
// below does: the same bits, for any thread count.
Status col2im_rows(Handle& h, const Problem& p, const float* W, std::int64_t mb) {
  const std::int64_t C = p.C, K = p.K, red = taps(p) * C;
  const std::int64_t IH = p.in[1], IW = p.in[2], OH = p.out[1], OW = p.out[2];
  const std::int64_t KH = p.ker[1], KW = p.ker[2], sh = p.stride[1], sw = p.stride[2];
  const std::int64_t ph = p.pad_b[1], pw = p.pad_b[2], dh = p.dil[1];
  const std::int64_t rows_per = std::max<std::int64_t>(1, mb / std::max<std::int64_t>(OW, 1));
  auto image = [&](std::int64_t n) -> Status {
    float* dx = p.x_out + n * p.xs.n;
    const float* dy = p.y_in + n * p.ys.n;
    float* col = thread_scratch(static_cast<std::size_t>(rows_per * OW * red));
    detail::parallel_for(h, 0, IH, 1, [&](std::int64_t b, std::int64_t e) { std::fill(dx + b * IW * C, dx + e * IW * C, 0.0f); });
    for (std::int64_t oh0 = 0; oh0 < OH; oh0 += rows_per) {
      const std::int64_t oh1 = std::min(OH, oh0 + rows_per), q0 = oh0 * OW;
      // col[q][t*C + c] = sum_k dy[q][k] * W[k][t*C + c]
      TESSERA_RETURN_IF_ERROR(blas::gemm<float>(gemm_handle(h), blas::Op::kNoTrans, blas::Op::kNoTrans, red,
                                                (oh1 - oh0) * OW, K, 1.0f, W, red, dy + q0 * K, K, 0.0f, col, red));
      const std::int64_t ih0 = std::max<std::int64_t>(0, oh0 * sh - ph);
      const std::int64_t ih1 = std::min(IH, (oh1 - 1) * sh - ph + (KH - 1) * dh + 1);
      // (inline when the images already run in parallel)
      detail::parallel_for(h, ih0, ih1, 1, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t ih = b; ih < e; ++ih) {
          float* dxr = dx + ih * IW * C;
          for (std::int64_t oh = oh0; oh < oh1; ++oh) {
            const std::int64_t kd = ih - (oh * sh - ph);  // kh * dh
            if (kd < 0 || kd % dh != 0 || kd / dh >= KH) continue;
            const float* cr = col + (oh - oh0) * OW * red + kd / dh * KW * C;
            for (std::int64_t ow = 0; ow < OW; ++ow, cr += red) {
              const std::int64_t iw0 = ow * sw - pw;
              const std::int64_t lo = std::max<std::int64_t>(0, -iw0) * C;
              const std::int64_t hi = std::min(KW, IW - iw0) * C;
              float* d = dxr + iw0 * C;
              for (std::int64_t i = lo; i < hi; ++i) d[i] += cr[i];
            }
          }
        }
      });
    }
    return Status::ok();
  };
  return for_chunks(h, p.N, image);  // images in order when too few to share
}

}  // namespace

// GEMM into a column buffer, then scatter-add (col2im) into dx. Images are independent
// (parallel over n); within an image chunks run in order, so every dx element receives its
// contributions in a fixed order.
Status im2col_bwd_data(Handle& h, const Problem& p) {
  const std::int64_t T = taps(p), red = T * p.Cg, osp = p.out_spatial();
  const bool nhwc = p.x_layout == Layout::kNHWC;
  std::vector<float> wbuf;
  const float* W = gemm_weights(p, nhwc, wbuf);
  const std::int64_t mb = chunk_pixels(red, osp);
  const std::int64_t isp = p.in_spatial();
  if (nhwc && p.G == 1 && p.ker[0] == 1 && p.in[0] == 1 && p.xs.w == p.C && p.xs.h == p.in[2] * p.C && p.dil[2] == 1)
    return col2im_rows(h, p, W, mb);
  auto one_image = [&](std::int64_t n) -> Status {
    float* dx = p.x_out + n * p.xs.n;
    for (std::int64_t i = 0; i < p.C * isp; ++i) dx[i] = 0.0f;  // packed: one contiguous block
    float* col = thread_scratch(static_cast<std::size_t>(mb * red));
    for (std::int64_t q0 = 0; q0 < osp; q0 += mb) {
      const std::int64_t q1 = std::min(osp, q0 + mb), w = q1 - q0;
      for (std::int64_t g = 0; g < p.G; ++g) {
        if (nhwc) {
          // col[q][t*Cg + c] = sum_k dy[q][g*Kg + k] * W[g*Kg + k][t*Cg + c]
          TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
              gemm_handle(h), blas::Op::kNoTrans, blas::Op::kNoTrans, red, w, p.Kg, 1.0f,
              W + g * p.Kg * red, red, p.y_in + (n * osp + q0) * p.K + g * p.Kg, p.K, 0.0f, col,
              red));
        } else {
          // col[c*T + t][q] = sum_k W[g*Kg + k][c*T + t] * dy[g*Kg + k][q]
          TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
              gemm_handle(h), blas::Op::kNoTrans, blas::Op::kTrans, w, red, p.Kg, 1.0f,
              p.y_in + n * p.ys.n + g * p.Kg * osp + q0, osp, W + g * p.Kg * red, red, 0.0f, col,
              w));
        }
        for (std::int64_t q = q0; q < q1; ++q) {
          const Pix o = pix_of(p, q);
          std::int64_t t = 0;
          for (std::int64_t kd = 0; kd < p.ker[0]; ++kd) {
            const std::int64_t id = o.d * p.stride[0] - p.pad_b[0] + kd * p.dil[0];
            for (std::int64_t kh = 0; kh < p.ker[1]; ++kh) {
              const std::int64_t ih = o.h * p.stride[1] - p.pad_b[1] + kh * p.dil[1];
              for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t) {
                const std::int64_t iw = o.w * p.stride[2] - p.pad_b[2] + kw * p.dil[2];
                if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 ||
                    iw >= p.in[2])
                  continue;
                const std::int64_t base = id * p.xs.d + ih * p.xs.h + iw * p.xs.w;
                if (nhwc) {
                  float* d = dx + base + g * p.Cg;
                  const float* s = col + (q - q0) * red + t * p.Cg;
                  for (std::int64_t c = 0; c < p.Cg; ++c) d[c] += s[c];
                } else {
                  for (std::int64_t c = 0; c < p.Cg; ++c)
                    dx[base + (g * p.Cg + c) * p.xs.c] += col[(c * T + t) * w + (q - q0)];
                }
              }
            }
          }
        }
      }
    }
    return Status::ok();
  };
  return for_chunks(h, p.N, one_image);  // images in order when too few to share
}

// ---- 1x1 as GEMM ----------------------------------------------------------------------------

Status gemm1x1_accepts(const Problem& p) {
  if (!p.is_1x1_s1_p0()) return detail::refuse("needs a 1x1 kernel, stride 1, no padding");
  return im2col_accepts(p);
}

Status gemm1x1_bwd_data_accepts(const Problem& p) {
  if (brgemm_bwd_data_1x1_usable(p)) return Status::ok();
  return gemm1x1_accepts(p);
}

// Packed channels-first 1x1 layers run on the tiles through channels-last copies
// (channels_last_fwd) when an image has at most kTilesMaxPlane output pixels (the GEMM per
// image then has few columns) and the multiply-adds per element of x and y, Cg Kg / (Cg +
// Kg), reach kTilesMinDepth (below it the two transposes cost more than the tiles gain). 2
// threads, Zen 3, ResNet-50 NCHW, ratio to oneDNN at mb1 / mb8 as GEMM (or im2col, strided)
// -> tiles: res5a_branch2c 1.65 / 1.94 -> 1.07 / 1.27, res5b_branch2a 1.48 / 1.78 -> 1.17 /
// 1.23, res4b_branch2a 1.78 / 1.51 -> 1.30 / 1.54, res5a_branch1 (stride 2) 1.55 / 2.06 ->
// 1.16 / 1.28; with 784 pixels the GEMM won (res4a_branch2a 1.07 / 1.26 against 1.54 / 1.54),
// and so did it with fewer channels (res2a_branch2a through the tiles 7.19 / 2.81).
constexpr std::int64_t kTilesMaxPlane = 256, kTilesMinDepth = 128;
bool gemm1x1_via_tiles(const Problem& p) {
  return cpu_info().isa() >= Isa::kAvx2 && p.same_layout(Layout::kNCHW) &&
         p.out_spatial() <= kTilesMaxPlane && p.Cg * p.Kg >= kTilesMinDepth * (p.Cg + p.Kg);
}

Status gemm1x1_fwd_accepts(const Problem& p) {
  for (int i = 0; i < 3; ++i)
    if (p.ker[i] != 1 || p.pad_b[i] != 0 || p.pad_e[i] != 0)
      return detail::refuse("needs a 1x1 kernel and no padding");
  const bool strided = p.stride[0] != 1 || p.stride[1] != 1 || p.stride[2] != 1;
  if (strided && !p.same_layout(Layout::kNHWC) && !gemm1x1_via_tiles(p))
    return detail::refuse("stride > 1 needs channels-last x and y, or channels-first with at most " +
                          std::to_string(kTilesMaxPlane) + " output pixels an image and deep channels (AVX2 and up)");
  return im2col_accepts(p);
}

void gemm1x1_pack(Handle& h, const Problem& p, PackedWeights& out) {
  if (gemm1x1_via_tiles(p)) channels_last_pack(h, p, out);
  else brgemm_pack(h, p, out);
}

Status gemm1x1_fwd(Handle& h, const Problem& p) {
  if (brgemm_fwd_usable(p)) return brgemm_fwd(h, p);
  if (gemm1x1_via_tiles(p)) return channels_last_fwd(h, p);
  const std::int64_t osp = p.out_spatial();
  std::vector<float> wbuf;
  const float* res = residual_of(p);
  const float* W = gemm_weights(p, true, wbuf);  // [K][Cg] either way for 1x1
  if (p.x_layout == Layout::kNHWC) {
    const std::int64_t M = p.N * osp, mb = chunk_pixels(std::max(p.Cg, p.K), M);
    const bool nn = M >= kTransposeMinPixels;
    const std::vector<float> wt = nn ? weights_kg_inner(p) : std::vector<float>{};
    const std::int64_t chunks = (M + mb - 1) / mb;
    const bool strided = !p.is_1x1_s1_p0();
    return for_chunks(h, chunks, [&](std::int64_t ci) -> Status {
      const std::int64_t m0 = ci * mb, m1 = std::min(M, m0 + mb);
      for (std::int64_t g = 0; g < p.G; ++g) {
        const float* x = p.x + m0 * p.C + g * p.Cg;
        std::int64_t ldx = p.C;
        if (strided) {  // the chunk's input pixels of group g, gathered into rows of Cg
          float* rows = thread_scratch(static_cast<std::size_t>((m1 - m0) * p.Cg));
          im2col_nhwc_par(h, p, g, m0, m1, rows);
          x = rows, ldx = p.Cg;
        }
        TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
            gemm_handle(h), nn ? blas::Op::kNoTrans : blas::Op::kTrans, blas::Op::kNoTrans,
            p.Kg, m1 - m0, p.Cg, 1.0f, nn ? wt.data() + g * p.Kg * p.Cg : W + g * p.Kg * p.Cg,
            nn ? p.Kg : p.Cg, x, ldx, 0.0f, p.y_out + m0 * p.K + g * p.Kg, p.K));
      }
      if (p.has_post_ops()) apply_post_ops_nhwc(p, p.y_out + m0 * p.K, res ? res + m0 * p.K : nullptr, m1 - m0);
      return Status::ok();
    });
  }
  const std::int64_t mb = chunk_pixels(std::max(p.Cg, p.K), osp);
  const std::int64_t per_image = (osp + mb - 1) / mb;
  return for_chunks(h, p.N * per_image, [&](std::int64_t ci) -> Status {
    const std::int64_t n = ci / per_image;
    const std::int64_t q0 = (ci % per_image) * mb, q1 = std::min(osp, q0 + mb);
    float* yn = p.y_out + n * p.ys.n;
    for (std::int64_t g = 0; g < p.G; ++g)
      TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
          gemm_handle(h), blas::Op::kNoTrans, blas::Op::kNoTrans, q1 - q0, p.Kg, p.Cg, 1.0f,
          p.x + n * p.xs.n + g * p.Cg * osp + q0, osp, W + g * p.Kg * p.Cg, p.Cg, 0.0f,
          yn + g * p.Kg * osp + q0, osp));
    if (p.has_post_ops())
      apply_post_ops_nchw(p, yn + q0, res ? res + n * p.ys.n + q0 : nullptr, 0, p.K, q1 - q0, osp);
    return Status::ok();
  });
}

// dx = dy * W with the weights as stored (no flip, no repack for dense weights): per group,
// NHWC dx^T[Cg x pixels] = W^T[Cg x Kg] * dy^T[Kg x pixels], NCHW dx[pixels x Cg] =
// dy[pixels x Kg] * W[Kg x Cg]. Chunks of pixels as in the forward pass.
Status gemm1x1_bwd_data(Handle& h, const Problem& p) {
  if (brgemm_bwd_data_1x1_usable(p)) return brgemm_bwd_data_1x1(h, p);
  const std::int64_t osp = p.out_spatial();
  std::vector<float> wbuf;
  const float* W = gemm_weights(p, true, wbuf);  // [K][Cg]
  if (p.x_layout == Layout::kNHWC) {
    const std::int64_t M = p.N * osp, mb = chunk_pixels(std::max(p.Cg, p.K), M);
    return for_chunks(h, (M + mb - 1) / mb, [&](std::int64_t ci) -> Status {
      const std::int64_t m0 = ci * mb, m1 = std::min(M, m0 + mb);
      for (std::int64_t g = 0; g < p.G; ++g)
        TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
            gemm_handle(h), blas::Op::kNoTrans, blas::Op::kNoTrans, p.Cg, m1 - m0, p.Kg, 1.0f,
            W + g * p.Kg * p.Cg, p.Cg, p.y_in + m0 * p.K + g * p.Kg, p.K, 0.0f,
            p.x_out + m0 * p.C + g * p.Cg, p.C));
      return Status::ok();
    });
  }
  const std::int64_t mb = chunk_pixels(std::max(p.Cg, p.K), osp);
  const std::int64_t per_image = (osp + mb - 1) / mb;
  return for_chunks(h, p.N * per_image, [&](std::int64_t ci) -> Status {
    const std::int64_t n = ci / per_image;
    const std::int64_t q0 = (ci % per_image) * mb, q1 = std::min(osp, q0 + mb);
    for (std::int64_t g = 0; g < p.G; ++g)
      TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
          gemm_handle(h), blas::Op::kNoTrans, blas::Op::kTrans, q1 - q0, p.Cg, p.Kg, 1.0f,
          p.y_in + n * p.ys.n + g * p.Kg * osp + q0, osp, W + g * p.Kg * p.Cg, p.Cg, 0.0f,
          p.x_out + n * p.xs.n + g * p.Cg * osp + q0, osp));
    return Status::ok();
  });
}

Status gemm1x1_bwd_weights(Handle& h, const Problem& p) {
  const std::int64_t osp = p.out_spatial();
  const bool dense = p.w_ohwi;  // [K][Cg] (for 1x1 the two weight layouts coincide)
  std::vector<float> tmp;
  float* dW = p.w_out;
  if (!dense) {
    tmp.assign(static_cast<std::size_t>(p.K * p.Cg), 0.0f);
    dW = tmp.data();
  }
  if (p.x_layout == Layout::kNHWC) {
    // Pixels in chunks: GEMMs with a long reduction and a small result run better as a
    // sequence of shorter ones (or as partial sums over threads, accumulate_chunks).
    const std::int64_t M = p.N * osp, mb = bw_chunk_pixels(p.Cg, M);
    const Status acc = accumulate_chunks(
        h, (M + mb - 1) / mb, p.K * p.Cg, dW, [&](std::int64_t ci, float* dst, float beta) {
          const std::int64_t m0 = ci * mb, m1 = std::min(M, m0 + mb);
          for (std::int64_t g = 0; g < p.G; ++g)
            TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
                gemm_handle(h), blas::Op::kNoTrans, blas::Op::kTrans, p.Cg, p.Kg, m1 - m0, 1.0f,
                p.x + m0 * p.C + g * p.Cg, p.C, p.y_in + m0 * p.K + g * p.Kg, p.K, beta,
                dst + g * p.Kg * p.Cg, p.Cg));
          return Status::ok();
        });
    if (!acc.is_ok()) return acc;
  } else {
    const Status acc = accumulate_chunks(
        h, p.N, p.K * p.Cg, dW, [&](std::int64_t n, float* dst, float beta) {
          for (std::int64_t g = 0; g < p.G; ++g)
            TESSERA_RETURN_IF_ERROR(blas::gemm<float>(
                gemm_handle(h), blas::Op::kTrans, blas::Op::kNoTrans, p.Cg, p.Kg, osp, 1.0f,
                p.x + n * p.xs.n + g * p.Cg * osp, osp, p.y_in + n * p.ys.n + g * p.Kg * osp,
                osp, beta, dst + g * p.Kg * p.Cg, p.Cg));
          return Status::ok();
        });
    if (!acc.is_ok()) return acc;
  }
  if (!dense)
    for (std::int64_t k = 0; k < p.K; ++k)
      for (std::int64_t c = 0; c < p.Cg; ++c)
        p.w_out[k * p.ws.n + c * p.ws.c] = dW[k * p.Cg + c];
  bias_grad(p);
  return Status::ok();
}

}  // namespace tessera::dnn::conv
