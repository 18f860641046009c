// FFT convolution (forward and backward-weights; backward-data reaches it through the flipped
// forward problem). Convolution in tessera is cross-correlation,
//   y[n][k][o] = sum_c sum_t x[n][c][o + t - pad] w[k][c][t],
// which is a pointwise product of spectra: with X = FFT(zero-padded x) and W = FFT(w placed at
// the origin), both of a size F >= the padded input along every spatial dim,
//   Y[n][k] = sum_c X[n][c] * conj(W[k][c]),   y = IFFT(Y) cropped to the outputs,
// and no circular wrap reaches an output because o + t < padded input <= F. Backward-weights
// is the same correlation of x with dy: dW[k][c] = sum_n X[n][c] * conj(DY[n][k]), cropped to
// the taps. Real transforms (r2c / c2r) halve the spectra along the last dim.
//
// Cost: one transform per input plane, per filter plane and per output plane, plus
// N K Cg spectrum bins of complex multiply-adds: independent of the kernel size, so it wins
// for large kernels where direct and GEMM methods pay taps x channels.
#include <algorithm>
#include <complex>
#include <map>
#include <mutex>

#include "algos.hpp"
#include "tessera/fft.hpp"

namespace tessera::dnn::conv {
namespace {

using cf = std::complex<float>;

// The smallest 2^a 3^b 5^c >= n (even when n > 1: the real transforms take the half-length
// complex path).
std::int64_t fft_size(std::int64_t n) {
  std::int64_t best = 2;  // a power of two >= n bounds the search (and every product below)
  while (best < n) best *= 2;
  for (std::int64_t a = 1; a < best; a *= 2)
    for (std::int64_t b = a; b < best; b *= 3)
      for (std::int64_t c = b; c < best; c *= 5)
        if (c >= n) {
          if (n <= 1 || c % 2 == 0) best = std::min(best, c);
          break;
        }
  return best;
}

// The transform shape of a problem: spatial dims [d0, 3) of the normalised problem.
struct Shape {
  int d0 = 0;
  std::array<std::int64_t, 3> F{1, 1, 1};
  std::int64_t real = 1, bins = 1;  // real points per plane, complex bins per spectrum
};

Shape shape_of(const Problem& p) {
  Shape s;
  s.d0 = 3 - p.spatial_rank;
  for (int i = s.d0; i < 3; ++i) {
    s.F[static_cast<std::size_t>(i)] = fft_size(p.in[static_cast<std::size_t>(i)] + p.pad_b[static_cast<std::size_t>(i)] +
                                                p.pad_e[static_cast<std::size_t>(i)]);
    s.real *= s.F[static_cast<std::size_t>(i)];
  }
  s.bins = s.real / s.F[2] * (s.F[2] / 2 + 1);
  return s;
}

// The forward (r2c) and scaled inverse (c2r) plans of a shape. Plans are immutable and
// thread-safe: one pair per shape for the process.
struct Transforms {
  const fft::Plan* r2c;
  const fft::Plan* c2r;
};

Result<Transforms> transforms_for(const Shape& s) {
  static std::mutex mu;
  static std::map<std::pair<std::array<std::int64_t, 3>, int>, fft::Plan> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto get = [&](fft::Kind kind) -> Result<const fft::Plan*> {
    const auto key = std::make_pair(s.F, static_cast<int>(kind));
    auto it = cache.find(key);
    if (it == cache.end()) {
      fft::PlanDesc d;
      d.kind = kind;
      d.lengths.assign(s.F.begin() + s.d0, s.F.end());
      if (kind == fft::Kind::kC2R) {
        d.direction = fft::Direction::kInverse;
        d.scale = 1.0 / static_cast<double>(s.real);
      }
      fft::PlanOptions o;
      o.threads = 1;  // the convolution runs planes in parallel
      TESSERA_ASSIGN_OR_RETURN(fft::Plan plan, fft::Plan::create(d, o));
      it = cache.emplace(key, std::move(plan)).first;
    }
    return &it->second;
  };
  TESSERA_ASSIGN_OR_RETURN(const fft::Plan* r2c, get(fft::Kind::kR2C));
  TESSERA_ASSIGN_OR_RETURN(const fft::Plan* c2r, get(fft::Kind::kC2R));
  return Transforms{r2c, c2r};
}

// Element offset of spatial point (d, h, w) under strides st.
inline std::int64_t at(const Strides5& st, std::int64_t d, std::int64_t h, std::int64_t w) {
  return d * st.d + h * st.h + w * st.w;
}

// Spectra of the rows x cols planes src + r st.n + c st.c (extents ext), each placed at
// offset `off` of a zeroed F-sized real buffer and transformed into out[(r cols + c) bins];
// planes in parallel.
void spectra(Handle& h, const Shape& s, const fft::Plan& r2c, const float* src, const Strides5& st,
             const std::array<std::int64_t, 3>& ext, const std::array<std::int64_t, 3>& off,
             std::int64_t rows, std::int64_t cols, cf* out) {
  detail::parallel_for(h, 0, rows * cols, 1, [&](std::int64_t b, std::int64_t e) {
    float* buf = thread_scratch(static_cast<std::size_t>(s.real));
    for (std::int64_t i = b; i < e; ++i) {
      const float* plane = src + (i / cols) * st.n + (i % cols) * st.c;
      std::fill(buf, buf + s.real, 0.0f);
      for (std::int64_t d = 0; d < ext[0]; ++d)
        for (std::int64_t hh = 0; hh < ext[1]; ++hh) {
          float* row = buf + ((d + off[0]) * s.F[1] + hh + off[1]) * s.F[2] + off[2];
          const float* in = plane + at(st, d, hh, 0);
          for (std::int64_t w = 0; w < ext[2]; ++w) row[w] = in[w * st.w];
        }
      (void)r2c.execute(buf, out + i * s.bins);
    }
  });
}

// The leading ext corner of an F-sized real plane, written to dst (strides st).
void crop(const Shape& s, const float* buf, float* dst, const Strides5& st,
          const std::array<std::int64_t, 3>& ext) {
  for (std::int64_t d = 0; d < ext[0]; ++d)
    for (std::int64_t hh = 0; hh < ext[1]; ++hh) {
      const float* row = buf + (d * s.F[1] + hh) * s.F[2];
      float* out = dst + at(st, d, hh, 0);
      for (std::int64_t w = 0; w < ext[2]; ++w) out[w * st.w] = row[w];
    }
}

// acc[b] = (first ? 0 : acc[b]) + a[b] * conj(c[b]) over the bins, in real arithmetic the
// compiler vectorises.
void mac_conj(const cf* a, const cf* c, cf* acc, std::int64_t bins, bool first) {
  const float* A = reinterpret_cast<const float*>(a);
  const float* C = reinterpret_cast<const float*>(c);
  float* Y = reinterpret_cast<float*>(acc);
  if (first) {
    for (std::int64_t b = 0; b < 2 * bins; b += 2) {
      Y[b] = A[b] * C[b] + A[b + 1] * C[b + 1];
      Y[b + 1] = A[b + 1] * C[b] - A[b] * C[b + 1];
    }
    return;
  }
  for (std::int64_t b = 0; b < 2 * bins; b += 2) {
    Y[b] += A[b] * C[b] + A[b + 1] * C[b + 1];
    Y[b + 1] += A[b + 1] * C[b] - A[b] * C[b + 1];
  }
}

}  // namespace

Status fft_accepts(const Problem& p) {
  if (!p.x_layout || p.x_layout != p.y_layout)
    return detail::refuse("x and y must be packed alike in NCHW or NHWC");
  for (int i = 0; i < 3; ++i) {
    if (p.stride[static_cast<std::size_t>(i)] != 1) return detail::refuse("stride > 1 (an FFT computes every output)");
    if (p.dil[static_cast<std::size_t>(i)] != 1) return detail::refuse("dilation > 1");
  }
  const Shape s = shape_of(p);
  // Spectra of every input plane and every filter plane stay resident.
  const double bytes = 8.0 * static_cast<double>(s.bins) * static_cast<double>(p.N * p.C + p.K * p.Cg);
  if (bytes > 2.0e9) return detail::refuse("spectra would need more than 2 GB");
  return Status::ok();
}

Status fft_prefers(const Problem& p) {
  // Measured (docs/performance.md, 2026-11-21/22, 32 -> 32 channels at 56x56, 2 threads).
  // Per call (filter spectra computed every time): the channels-last direct convolution
  // beats the FFT at every kernel size up to 15x15 (2-4x); in NCHW im2col ties it at 11x11
  // and is 1.7x slower at 15x15. Planned (filter spectra once): NCHW 7x7 2.0 ms against
  // im2col's 3.4; NHWC 7x7 1.8 against direct's 1.7, 11x11 2.2 against 4.3.
  const bool nhwc = p.x_layout != Layout::kNCHW;
  if (p.planned) {
    if (p.ker_spatial() < (nhwc ? 100 : 49))
      return detail::refuse(nhwc ? "planned, channels-last, fewer than 100 taps: the direct convolution is faster"
                                 : "planned, fewer than 49 taps: im2col + GEMM is faster");
    return Status::ok();
  }
  if (nhwc) return detail::refuse("channels-last, filter spectra per call: the direct convolution is faster");
  if (p.ker_spatial() < 121) return detail::refuse("fewer than 121 taps: im2col + GEMM is faster");
  return Status::ok();
}

void fft_pack(Handle& h, const Problem& p, PackedWeights& out) {
  const Shape s = shape_of(p);
  auto t = transforms_for(s);
  if (!t.is_ok()) return;  // (the run reports it)
  float* dst = out.allocate(static_cast<std::size_t>(2 * p.K * p.Cg * s.bins));
  spectra(h, s, *t->r2c, p.w, p.ws, p.ker, {0, 0, 0}, p.K, p.Cg, reinterpret_cast<cf*>(dst));
}

Status fft_fwd(Handle& h, const Problem& p) {
  const Shape s = shape_of(p);
  TESSERA_ASSIGN_OR_RETURN(const Transforms t, transforms_for(s));
  const fft::Plan &r2c = *t.r2c, &c2r = *t.c2r;
  const std::size_t bins = static_cast<std::size_t>(s.bins);
  std::vector<cf> xs(static_cast<std::size_t>(p.N * p.C) * bins), wown;
  // Filter spectra [k][c] (a plan's, from fft_pack, or computed here), input spectra [n][c].
  const cf* ws = reinterpret_cast<const cf*>(p.w_packed);
  if (ws == nullptr) {
    wown.resize(static_cast<std::size_t>(p.K * p.Cg) * bins);
    spectra(h, s, r2c, p.w, p.ws, p.ker, {0, 0, 0}, p.K, p.Cg, wown.data());
    ws = wown.data();
  }
  spectra(h, s, r2c, p.x, p.xs, p.in, p.pad_b, p.N, p.C, xs.data());
  // Output planes: products summed over the group's channels, inverse transform, crop.
  const std::int64_t osp = p.out_spatial();
  detail::parallel_for(h, 0, p.N * p.K, 1, [&](std::int64_t b, std::int64_t e) {
    float* buf = thread_scratch(static_cast<std::size_t>(s.real + 2 * s.bins));
    cf* acc = reinterpret_cast<cf*>(buf + s.real);
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t n = i / p.K, k = i % p.K, g = k / p.Kg;
      for (std::int64_t c = 0; c < p.Cg; ++c)
        mac_conj(xs.data() + (n * p.C + g * p.Cg + c) * s.bins, ws + (k * p.Cg + c) * s.bins, acc,
                 s.bins, c == 0);
      (void)c2r.execute(acc, buf);
      crop(s, buf, p.y_out + n * p.ys.n + k * p.ys.c, p.ys, p.out);
    }
  });
  if (p.has_post_ops()) {
    const float* res = static_cast<const float*>(p.post.residual);
    const bool nhwc = p.x_layout == Layout::kNHWC;
    detail::parallel_for(h, 0, p.N, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t n = b; n < e; ++n) {
        float* y = p.y_out + n * p.ys.n;
        const float* r = res ? res + n * p.ys.n : nullptr;
        if (nhwc)
          apply_post_ops_nhwc(p, y, r, osp);
        else
          apply_post_ops_nchw(p, y, r, 0, p.K, osp, osp);
      }
    });
  }
  return Status::ok();
}

Status fft_bwd_weights(Handle& h, const Problem& p) {
  const Shape s = shape_of(p);
  TESSERA_ASSIGN_OR_RETURN(const Transforms t, transforms_for(s));
  const fft::Plan &r2c = *t.r2c, &c2r = *t.c2r;
  const std::size_t bins = static_cast<std::size_t>(s.bins);
  std::vector<cf> xs(static_cast<std::size_t>(p.N * p.C) * bins), ds(static_cast<std::size_t>(p.N * p.K) * bins);
  const std::array<std::int64_t, 3> zero{0, 0, 0};
  spectra(h, s, r2c, p.x, p.xs, p.in, p.pad_b, p.N, p.C, xs.data());
  // dy at the origin: dW[t] = sum_o x[o + t - pad] dy[o] is the correlation of x with dy.
  spectra(h, s, r2c, p.y_in, p.ys, p.out, zero, p.N, p.K, ds.data());
  detail::parallel_for(h, 0, p.K * p.Cg, 1, [&](std::int64_t b, std::int64_t e) {
    float* buf = thread_scratch(static_cast<std::size_t>(s.real + 2 * s.bins));
    cf* acc = reinterpret_cast<cf*>(buf + s.real);
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t k = i / p.Cg, c = i % p.Cg, g = k / p.Kg;
      for (std::int64_t n = 0; n < p.N; ++n)
        mac_conj(xs.data() + (n * p.C + g * p.Cg + c) * s.bins, ds.data() + (n * p.K + k) * s.bins, acc,
                 s.bins, n == 0);
      (void)c2r.execute(acc, buf);
      crop(s, buf, p.w_out + k * p.ws.n + c * p.ws.c, p.ws, p.ker);
    }
  });
  if (p.dbias) bias_grad(p);
  return Status::ok();
}

}  // namespace tessera::dnn::conv
