// Plan execution: a multi-dimensional transform is one pass per dimension, last dimension
// first. A pass runs the dimension's 1-D transform on every line along it (each index of the
// other dimensions and of the batch): lines with unit strides are transformed where they lie;
// strided lines (the columns of a row-major array) are gathered a block of neighbouring lines
// at a time into a buffer where the 1-D transform runs on all of them at once, interleaved,
// and are scattered back. Lines are independent, so splitting them over threads changes no
// result bit.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <new>

#include "plan_impl.hpp"
#include "tessera/core/thread_pool.hpp"

namespace tessera::fft {
namespace detail {
namespace {

struct Dim {
  std::int64_t len, s, d;  // length, source stride, destination stride
};
struct Geom {
  std::int64_t n = 0;        // length along the pass's dimension
  std::int64_t sj = 1, dj = 1;  // strides along it
  std::vector<Dim> others;   // the other dimensions and the batch
};

// Per-thread work space, 64-byte aligned: whole-vector loads from a misaligned buffer would
// each straddle two cache lines.
template <typename R>
cx<R>* scratch(std::int64_t n) {
  struct Free {
    void operator()(cx<R>* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  thread_local std::unique_ptr<cx<R>[], Free> buf;
  thread_local std::int64_t size = 0;
  if (size < n) {
    buf.reset();
    size = 0;
    buf.reset(static_cast<cx<R>*>(::operator new[](static_cast<std::size_t>(n) * sizeof(cx<R>), std::align_val_t{64})));
    size = n;
  }
  return buf.get();
}

void parallel_items(int threads, std::int64_t items,
                    const std::function<void(std::int64_t, std::int64_t)>& fn) {
  ThreadPool& pool = thread_pool();
  const int t = threads > 0 ? std::min(threads, pool.num_threads()) : pool.num_threads();
  if (t <= 1 || items <= 1 || ThreadPool::in_parallel_region()) {
    fn(0, items);
    return;
  }
  pool.parallel_for(0, items, (items + t - 1) / t, fn);
}

// The items of a pass: every index of the other dimensions, except that dimension `f` (if
// >= 0) goes in blocks of B. offsets() gives an item's first source and destination offsets
// and its block size.
struct Items {
  const Geom& g;
  int f = -1;
  std::int64_t B = 1, nblk = 1, count = 1;
  Items(const Geom& geom, int fast, std::int64_t block) : g(geom), f(fast), B(block) {
    for (int i = 0; i < static_cast<int>(g.others.size()); ++i) {
      if (i == f)
        nblk = (g.others[static_cast<std::size_t>(i)].len + B - 1) / B;
      else
        count *= g.others[static_cast<std::size_t>(i)].len;
    }
    count *= nblk;
  }
  void offsets(std::int64_t item, std::int64_t& so, std::int64_t& dof, std::int64_t& nb) const {
    std::int64_t idx = item / nblk, blk = item % nblk;
    so = 0, dof = 0, nb = 1;
    for (int i = static_cast<int>(g.others.size()) - 1; i >= 0; --i) {
      const Dim& d = g.others[static_cast<std::size_t>(i)];
      if (i == f) {
        so += blk * B * d.s;
        dof += blk * B * d.d;
        nb = std::min(B, d.len - blk * B);
        continue;
      }
      const std::int64_t k = idx % d.len;
      idx /= d.len;
      so += k * d.s;
      dof += k * d.d;
    }
  }
};

template <typename R>
inline cx<R> scaled(cx<R> a, R c) {
  return {a.real() * c, a.imag() * c};
}

template <typename R>
void c2c_pass(int threads, const Fft1d<R>& f, const cx<R>* src, cx<R>* dst, const Geom& g, R scale) {
  const std::int64_t n = g.n;
  const bool scale_on = scale != R(1);
  // The other dimension with the smallest destination stride carries the blocks.
  int fast = -1;
  for (int i = 0; i < static_cast<int>(g.others.size()); ++i) {
    const Dim& d = g.others[static_cast<std::size_t>(i)];
    if (d.len > 1 && (fast < 0 || d.d < g.others[static_cast<std::size_t>(fast)].d)) fast = i;
  }
  const bool lines = (g.sj == 1 && g.dj == 1) || fast < 0;
  const std::int64_t W = f.kernels().lanes;
  const std::int64_t B = lines ? 1 : std::clamp<std::int64_t>(16384 / std::max<std::int64_t>(n, 1), 2 * W, 64);
  const Items items(g, lines ? -1 : fast, B);
  const std::int64_t sf = lines ? 0 : g.others[static_cast<std::size_t>(fast)].s;
  const std::int64_t df = lines ? 0 : g.others[static_cast<std::size_t>(fast)].d;
  parallel_items(threads, items.count, [&](std::int64_t i0, std::int64_t i1) {
    cx<R>* buf = scratch<R>(B * n + f.scratch_size(B));
    cx<R>* es = buf + B * n;
    for (std::int64_t it = i0; it < i1; ++it) {
      std::int64_t so, dof, nb;
      items.offsets(it, so, dof, nb);
      const cx<R>* x = src + so;
      cx<R>* y = dst + dof;
      if (lines) {
        if (g.sj == 1 && g.dj == 1) {
          f.run(x, y, es, 1);
          if (scale_on) f.kernels().scale(y, y, n, scale);
          continue;
        }
        for (std::int64_t i = 0; i < n; ++i) buf[i] = x[i * g.sj];
        f.run(buf, buf, es, 1);
        for (std::int64_t i = 0; i < n; ++i) y[i * g.dj] = scale_on ? scaled(buf[i], scale) : buf[i];
        continue;
      }
      for (std::int64_t i = 0; i < n; ++i) {
        const cx<R>* xi = x + i * g.sj;
        cx<R>* bi = buf + i * nb;
        if (sf == 1)
          std::memcpy(static_cast<void*>(bi), xi, static_cast<std::size_t>(nb) * sizeof(cx<R>));
        else
          for (std::int64_t b = 0; b < nb; ++b) bi[b] = xi[b * sf];
      }
      f.run(buf, buf, es, nb);
      for (std::int64_t i = 0; i < n; ++i) {
        const cx<R>* bi = buf + i * nb;
        cx<R>* yi = y + i * g.dj;
        if (scale_on) {
          for (std::int64_t b = 0; b < nb; ++b) yi[b * df] = scaled(bi[b], scale);
        } else if (df == 1) {
          std::memcpy(static_cast<void*>(yi), bi, static_cast<std::size_t>(nb) * sizeof(cx<R>));
        } else {
          for (std::int64_t b = 0; b < nb; ++b) yi[b * df] = bi[b];
        }
      }
    }
  });
}

// Runs fn(source offset, destination offset, line buffer of n + 2, engine scratch) on every
// line of a pass (one line per item), the lines split over threads. The scratch starts on a
// 64-byte boundary.
template <typename R, typename Fn>
void for_each_line(int threads, const Fft1d<R>& f, const Geom& g, Fn&& fn) {
  const Items items(g, -1, 1);
  constexpr std::int64_t kLine = 64 / sizeof(cx<R>);
  const std::int64_t line = (g.n + 2 + kLine - 1) / kLine * kLine;
  parallel_items(threads, items.count, [&](std::int64_t i0, std::int64_t i1) {
    cx<R>* buf = scratch<R>(line + f.scratch_size(1));
    for (std::int64_t it = i0; it < i1; ++it) {
      std::int64_t so, dof, nb;
      items.offsets(it, so, dof, nb);
      fn(so, dof, buf, buf + line);
    }
  });
}

// Real to half-spectrum along lines of n reals (strides in reals in, complex out).
template <typename R>
void r2c_pass(int threads, const Engines<R>& E, const R* src, cx<R>* dst, const Geom& g, R scale) {
  const Fft1d<R>& f = *E.dims.back();
  const std::int64_t n = g.n, h = n / 2;
  const bool even = n % 2 == 0;
  for_each_line(threads, f, g, [&](std::int64_t so, std::int64_t dof, cx<R>* buf, cx<R>* es) {
    const R* x = src + so;
    cx<R>* y = dst + dof;
    if (!even) {
      for (std::int64_t i = 0; i < n; ++i) buf[i] = {x[i * g.sj], R(0)};
      f.run(buf, buf, es, 1);
      for (std::int64_t k = 0; k <= h; ++k) y[k * g.dj] = scaled(buf[k], scale);
      return;
    }
    // z_j = x_2j + i x_2j+1, Z = FFT_h(z); X_k = E_k + w^k O_k with E = (Z_k + conj Z_h-k) / 2
    // and O = (Z_k - conj Z_h-k) / 2i.
    if (g.sj == 1) {
      f.run(reinterpret_cast<const cx<R>*>(x), buf, es, 1);
    } else {
      for (std::int64_t j = 0; j < h; ++j) buf[j] = {x[2 * j * g.sj], x[(2 * j + 1) * g.sj]};
      f.run(buf, buf, es, 1);
    }
    // Contiguous output takes the spectrum where it lies; strided goes through buf[h ... 2h].
    cx<R>* out = g.dj == 1 ? y : buf + h;
    f.kernels().r2c_post(buf, out, h, E.real_tw.data(), R(0.5) * scale);
    if (g.dj != 1)
      for (std::int64_t k = 0; k <= h; ++k) y[k * g.dj] = out[k];
  });
}

// Half-spectrum to real along lines (strides in complex in, reals out). The imaginary parts
// of X_0 and (n even) X_n/2 are ignored, as a Hermitian spectrum has none.
template <typename R>
void c2r_pass(int threads, const Engines<R>& E, const cx<R>* src, R* dst, const Geom& g, R scale) {
  const Fft1d<R>& f = *E.dims.back();
  const std::int64_t n = g.n, h = n / 2;
  const bool even = n % 2 == 0;
  for_each_line(threads, f, g, [&](std::int64_t so, std::int64_t dof, cx<R>* buf, cx<R>* es) {
    const cx<R>* x = src + so;
    R* y = dst + dof;
    if (!even) {
      buf[0] = {x[0].real(), R(0)};
      for (std::int64_t k = 1; k <= h; ++k) {
        buf[k] = x[k * g.sj];
        buf[n - k] = std::conj(buf[k]);
      }
      f.run(buf, buf, es, 1);
      for (std::int64_t j = 0; j < n; ++j) y[j * g.dj] = buf[j].real() * scale;
      return;
    }
    // E'_k = X_k + conj X_h-k, O'_k = (X_k - conj X_h-k) w^-k, Z'_k = E' + i O';
    // IFFT_h(Z') = n (x_2j + i x_2j+1).
    // Contiguous input is read where it lies; strided is gathered into buf[h ... 2h] first.
    const cx<R>* in = x;
    if (g.sj != 1) {
      for (std::int64_t k = 0; k <= h; ++k) buf[h + k] = x[k * g.sj];
      in = buf + h;
    }
    f.kernels().c2r_pre(in, buf, h, E.real_tw.data());
    f.run(buf, buf, es, 1);
    if (g.dj == 1) {  // x_2j, x_2j+1 are the parts of a complex number, in place
      f.kernels().scale(buf, reinterpret_cast<cx<R>*>(y), h, scale);
      return;
    }
    for (std::int64_t j = 0; j < h; ++j) {
      y[2 * j * g.dj] = buf[j].real() * scale;
      y[(2 * j + 1) * g.dj] = buf[j].imag() * scale;
    }
  });
}

// The geometry of the pass along dimension j: lengths `len`, source and destination
// layouts (strides per dimension, batch distance).
Geom geometry(int j, const std::vector<std::int64_t>& len, std::int64_t batch,
              const std::vector<std::int64_t>& ss, std::int64_t sd,
              const std::vector<std::int64_t>& ds, std::int64_t dd) {
  Geom g;
  g.n = len[static_cast<std::size_t>(j)];
  g.sj = ss[static_cast<std::size_t>(j)];
  g.dj = ds[static_cast<std::size_t>(j)];
  g.others.push_back({batch, sd, dd});
  for (int k = 0; k < static_cast<int>(len.size()); ++k)
    if (k != j)
      g.others.push_back({len[static_cast<std::size_t>(k)], ss[static_cast<std::size_t>(k)],
                          ds[static_cast<std::size_t>(k)]});
  return g;
}

}  // namespace
}  // namespace detail

template <typename R>
Status Plan::Impl::run(const void* vin, void* vout) const {
  using detail::cx;
  const detail::Engines<R>& E = engines<R>();
  const int d = rank;
  const std::int64_t batch = desc.batch;
  const R scale = static_cast<R>(desc.scale);
  if (desc.kind == Kind::kC2C && d == 1 && batch == 1 && in.stride[0] == 1 && out.stride[0] == 1) {
    // One contiguous line: no geometry, no threads.
    const detail::Fft1d<R>& f = *E.dims[0];
    cx<R>* y = static_cast<cx<R>*>(vout);
    const std::int64_t ns = f.scratch_size(1);  // 0 for a codelet: no thread-local lookup
    f.run(static_cast<const cx<R>*>(vin), y, ns > 0 ? detail::scratch<R>(ns) : nullptr, 1);
    if (scale != R(1)) f.kernels().scale(y, y, f.n(), scale);
    return Status::ok();
  }
  std::vector<std::int64_t> len = clen;
  switch (desc.kind) {
    case Kind::kC2C: {
      const cx<R>* src = static_cast<const cx<R>*>(vin);
      cx<R>* dst = static_cast<cx<R>*>(vout);
      bool first = true;
      for (int j = d - 1; j >= 0; --j) {
        const detail::Geom g = detail::geometry(j, len, batch, first ? in.stride : out.stride,
                                                first ? in.dist : out.dist, out.stride, out.dist);
        detail::c2c_pass<R>(threads, *E.dims[static_cast<std::size_t>(j)], src, dst, g,
                            j == 0 ? scale : R(1));
        src = dst;
        first = false;
      }
      return Status::ok();
    }
    case Kind::kR2C: {
      cx<R>* dst = static_cast<cx<R>*>(vout);
      std::vector<std::int64_t> rl = len;
      rl.back() = desc.lengths.back();
      detail::r2c_pass<R>(threads, E, static_cast<const R*>(vin), dst,
                          detail::geometry(d - 1, rl, batch, in.stride, in.dist, out.stride, out.dist),
                          d == 1 ? scale : R(1));
      for (int j = d - 2; j >= 0; --j)
        detail::c2c_pass<R>(threads, *E.dims[static_cast<std::size_t>(j)], dst, dst,
                            detail::geometry(j, len, batch, out.stride, out.dist, out.stride, out.dist),
                            j == 0 ? scale : R(1));
      return Status::ok();
    }
    case Kind::kC2R: {
      const cx<R>* src = static_cast<const cx<R>*>(vin);
      std::vector<std::int64_t> tst = in.stride;
      std::int64_t tdist = in.dist;
      std::vector<cx<R>> tmp;
      if (d > 1) {  // the other dimensions first, into a packed copy (the input stays intact)
        std::int64_t total = batch;
        for (std::int64_t l : len) total *= l;
        tmp.resize(static_cast<std::size_t>(total));
        std::int64_t st = 1;
        for (int k = d - 1; k >= 0; --k) tst[static_cast<std::size_t>(k)] = st, st *= len[static_cast<std::size_t>(k)];
        tdist = st;
        bool first = true;
        for (int j = d - 2; j >= 0; --j) {
          const detail::Geom g = detail::geometry(j, len, batch, first ? in.stride : tst,
                                                  first ? in.dist : tdist, tst, tdist);
          detail::c2c_pass<R>(threads, *E.dims[static_cast<std::size_t>(j)], first ? src : tmp.data(),
                              tmp.data(), g, R(1));
          first = false;
        }
        src = tmp.data();
      }
      std::vector<std::int64_t> rl = len;
      rl.back() = desc.lengths.back();
      detail::c2r_pass<R>(threads, E, src, static_cast<R*>(vout),
                          detail::geometry(d - 1, rl, batch, tst, tdist, out.stride, out.dist), scale);
      return Status::ok();
    }
  }
  return internal_error("fft: unknown kind");
}

template Status Plan::Impl::run<float>(const void*, void*) const;
template Status Plan::Impl::run<double>(const void*, void*) const;

}  // namespace tessera::fft
