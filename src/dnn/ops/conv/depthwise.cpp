// Depthwise convolution: groups == C == K (one 1-channel filter per channel).
//
// Forward, channels-last: work items are (output row, channel chunk); the per-ISA kernel
// (depthwise_kernels.hpp) keeps pixel x channel blocks in registers, loads each input pixel
// of a block once for all the kw taps it feeds, and checks bounds only in blocks that reach
// into the padding. Channels-first: items are (n, block of 16 channels), transposed to
// channels-last in scratch and run through the same kernel (planes too large for the
// scratch, and one-lane generic kernels, vectorise along output rows instead).
// Backward weights: items are (channel chunk, fixed block of output rows), each summing into
// its own partial buffer; the partials are added in block order. Every output element is
// computed by one item in a fixed order, so any thread count gives the same bits.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "../activation/dense.hpp"
#include "algos.hpp"
#include "depthwise_kernels.hpp"
#include "tessera/core/cpu.hpp"

namespace tessera::dnn::conv {
namespace {

using i64 = std::int64_t;

const DwKernels& dw_kernels() {
  const Isa isa = cpu_info().isa();
  if (isa >= Isa::kAvx512) return kDwAvx512;
  if (isa >= Isa::kAvx2) return kDwAvx2;
  return kDwGeneric;
}

// Depthwise weights packed as [C][taps] (either packed layout; a dim of one tap may have any
// stride).
bool packed_taps(const Problem& p) {
  return p.ws.n == p.ker_spatial() && (p.ker[0] == 1 || p.ws.d == p.ker[1] * p.ker[2]) &&
         (p.ker[1] == 1 || p.ws.h == p.ker[2]) && (p.ker[2] == 1 || p.ws.w == 1);
}

// Weights as [taps][C] (64-byte aligned, so vector loads of 16 channels do not split cache
// lines when C is a multiple of 16); taps row-major over (kd, kh, kw). Packed depthwise
// weights are [C][taps] in either layout (one input channel per filter), a transpose.
void pack_taps(const Problem& p, const DwKernels& k, float* w) {
  const i64 T = p.ker_spatial(), C = p.C;
  if (packed_taps(p)) {
    k.transpose(p.w, C, T, T, w, C);
    return;
  }
  for (i64 c = 0; c < C; ++c) {
    i64 t = 0;
    for (i64 kd = 0; kd < p.ker[0]; ++kd)
      for (i64 kh = 0; kh < p.ker[1]; ++kh)
        for (i64 kw = 0; kw < p.ker[2]; ++kw, ++t)
          w[t * C + c] = p.w[c * p.ws.n + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w];
  }
}
// The (kd, kh) kernel rows of output row (od, oh) that lie inside the input, in tap order:
// calls f(id, ih, kd * KH + kh) for each.
template <typename F>
void window_rows(const Problem& p, i64 od, i64 oh, F&& f) {
  for (i64 kd = 0; kd < p.ker[0]; ++kd) {
    const i64 id = od * p.stride[0] - p.pad_b[0] + kd * p.dil[0];
    if (id < 0 || id >= p.in[0]) continue;
    for (i64 kh = 0; kh < p.ker[1]; ++kh) {
      const i64 ih = oh * p.stride[1] - p.pad_b[1] + kh * p.dil[1];
      if (ih < 0 || ih >= p.in[1]) continue;
      f(id, ih, kd * p.ker[1] + kh);
    }
  }
}

// Channel chunks (multiples of 32 channels, two AVX-512 vectors) so that rows x chunks gives
// the thread pool enough items even for small images (7x7 at batch 1). Depends on the shape
// only.
i64 channel_chunk(i64 C, i64 rows, i64 min_items) {
  const i64 blocks = (C + 31) / 32;
  const i64 chunks = std::min(blocks, std::max<i64>(1, (min_items + rows - 1) / rows));
  const i64 per = (blocks + chunks - 1) / chunks;
  return std::min(C, per * 32);
}

// Pointer lists of the window rows: on the stack for kernels of up to 32 rows.
template <typename T>
class RowList {
 public:
  explicit RowList(i64 n) {
    if (n > kInline) heap_.resize(static_cast<std::size_t>(n));
  }
  T* data() { return heap_.empty() ? inline_ : heap_.data(); }

 private:
  static constexpr i64 kInline = 32;
  T inline_[kInline] = {};
  std::vector<T> heap_;
};

// 64-byte aligned thread-local scratch of at least n floats (kept between calls); `which`
// picks one of two independent buffers.
float* aligned_scratch(std::size_t n, int which = 0) {
  thread_local std::vector<float> bufs[2];
  std::vector<float>& buf = bufs[which];
  if (buf.size() < n + 16) buf.resize(n + 16);
  const auto addr = reinterpret_cast<std::uintptr_t>(buf.data());
  return buf.data() + ((64 - addr % 64) % 64) / sizeof(float);
}

// Channels-last input rows copied into a thread's ring of kernel-rows slots: row (n, id, ih)
// goes to slot (id % KD) * KH + ih % KH, so consecutive output rows find the rows they share
// with the previous one still there, and each input row is copied once per thread.
class RowRing {
 public:
  RowRing(const Problem& p, i64 row_floats)
      : p_(p), floats_(row_floats), held_(static_cast<std::size_t>(p.ker[0] * p.ker[1]), -1) {
    mem_ = aligned_scratch(held_.size() * static_cast<std::size_t>(row_floats), 1);
  }
  // Points x[0..nr) (rows (ids[i], ihs[i]) of image n) at their copies, copying the rows not
  // held. Rows that would share a slot (dilated or 3-D windows) are left where they are.
  void stage(i64 n, const i64* ids, const i64* ihs, int nr, const float** x) {
    i64 slot[32];
    if (nr > 32) return;
    for (int r = 0; r < nr; ++r) {
      slot[r] = ids[r] % p_.ker[0] * p_.ker[1] + ihs[r] % p_.ker[1];
      for (int q = 0; q < r; ++q)
        if (slot[q] == slot[r]) return;
    }
    for (int r = 0; r < nr; ++r) {
      const i64 key = (n * p_.in[0] + ids[r]) * p_.in[1] + ihs[r];
      float* dst = mem_ + slot[r] * floats_;
      i64& held = held_[static_cast<std::size_t>(slot[r])];
      if (held != key) {
        std::copy(x[r], x[r] + floats_, dst);
        held = key;
      }
      x[r] = dst;
    }
  }

 private:
  const Problem& p_;
  i64 floats_;
  float* mem_;
  std::vector<i64> held_;
};

// Items are (output row, channel chunk); rows run in memory order, chunks of one row
// consecutively, so the rows a thread takes are contiguous.
// x and y together past half the last-level cache (detail::stream_output's threshold over
// twice their bytes, so TESSERA_STREAM_BYTES=0 takes these paths in the tests): pixels of more
// than two cache lines are read from copies of the input rows in a per-thread ring in L2
// (RowRing), else the kernel asks for its next input lines with software prefetches. The
// kernel reads a row's pixels a channel vector at a time, lines a pixel apart, a pattern the
// hardware prefetchers follow late; a row copied whole is one sequential read. 32 channels
// (two lines a pixel) ran faster unstaged (MobileNet-V2's b1_dw at mb8: 2.1 -> 2.7 ms at 1
// thread on Zen 3), 48 gained a little, 96 and 144 most (b2_dw, b3_dw: docs/performance.md,
// session 50).
// An output of at least a quarter of the last-level cache is streamed, as the batch-reduce
// tiles' (brgemm.cpp): each row's chunk goes to a thread-local row first, takes its post-ops
// there, and is copied out with non-temporal stores (on AVX2 only when the input is staged:
// see DwKernels::stream_unstaged).
void fwd_nhwc(Handle& h, const Problem& p, const DwKernels& k, const float* w) {
  const float* res = static_cast<const float*>(p.post.residual);
  const i64 C = p.C, OD = p.out[0], OH = p.out[1], OW = p.out[2], IH = p.in[1], IW = p.in[2];
  const i64 rows = p.N * OD * OH;
  const i64 chunk = channel_chunk(C, rows, 24), nch = (C + chunk - 1) / chunk;
  const i64 win = p.ker[0] * p.ker[1];  // window rows, at most
  const i64 kw_c = p.ker[2] * C;        // floats per kernel row of weights
  constexpr i64 kF = sizeof(float);
  const i64 x_floats = p.N * p.in[0] * IH * IW * C, y_floats = rows * OW * C;
  const bool past_llc = detail::stream_output(2 * (x_floats + y_floats) * kF);
  const i64 l2 = cpu_info().cache_bytes(2);
  const bool staged = past_llc && C * kF > 128 && win <= 32 && l2 > 0 && win * IW * C * kF <= l2 / 2;
  const bool stream = k.stream_pixels != nullptr && (staged || k.stream_unstaged) && C % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(p.y_out) % 64 == 0 &&
                      detail::stream_output(4 * y_floats * kF);
  detail::parallel_for(h, 0, rows * nch, 1, [&](i64 b, i64 e) {
    RowList<const float*> xr(win), wr(win);
    i64 ids[32], ihs[32];
    float* row_buf = stream ? aligned_scratch(static_cast<std::size_t>(OW * C)) : nullptr;
    std::optional<RowRing> ring;
    if (staged) ring.emplace(p, IW * C);
    for (i64 it = b; it < e;) {
      const i64 row = it / nch;
      const i64 n = row / (OD * OH), od = (row / OH) % OD, oh = row % OH;
      const float* xn = p.x + n * p.xs.n;
      int nr = 0;
      window_rows(p, od, oh, [&](i64 id, i64 ih, i64 krow) {
        xr.data()[nr] = xn + (id * IH + ih) * IW * C;
        wr.data()[nr] = w + krow * kw_c;
        if (staged) ids[nr] = id, ihs[nr] = ih;
        ++nr;
      });
      if (staged) ring->stage(n, ids, ihs, nr, xr.data());
      float* y = p.y_out + row * OW * C;
      float* yk = stream ? row_buf : y;
      const DwRowNhwc a{xr.data(), wr.data(), nr,          yk,       C,          IW,
                        OW,        p.ker[2],  p.stride[2], p.dil[2], p.pad_b[2], past_llc && !staged};
      for (i64 ci = it % nch; ci < nch && it < e; ++ci, ++it) {  // this row's chunks in range
        const i64 c0 = ci * chunk, c1 = std::min(C, c0 + chunk);
        k.fwd_nhwc(a, c0, c1);
        if (p.has_post_ops()) apply_post_ops_nhwc(p, yk, res ? res + row * OW * C : nullptr, OW, c0, c1);
        if (stream) k.stream_pixels(yk, y, OW, C, c0, c1);
      }
    }
    if (stream) k.stream_fence();
  });
}

// Items are (n, c) planes; within a plane, runs of up to kDwNchwRows consecutive output rows
// whose windows cover the same kernel rows go to the kernel together.
void fwd_nchw(Handle& h, const Problem& p, const DwKernels& k, const float* w) {
  const float* res = static_cast<const float*>(p.post.residual);
  const i64 C = p.C, OD = p.out[0], OH = p.out[1], OW = p.out[2], IH = p.in[1], IW = p.in[2];
  const i64 osp = p.out_spatial(), isp = p.in_spatial(), T = p.ker_spatial();
  const i64 win = p.ker[0] * p.ker[1];
  detail::parallel_for(h, 0, p.N * C, 1, [&](i64 b, i64 e) {
    RowList<const float*> xr(kDwNchwRows * win), wr(win);
    std::vector<float> wc(static_cast<std::size_t>(T));
    DwRowNchw rows[kDwNchwRows];
    for (i64 nc = b; nc < e; ++nc) {
      const i64 c = nc % C;
      for (i64 t = 0; t < T; ++t) wc[static_cast<std::size_t>(t)] = w[t * C + c];
      const float* x = p.x + nc * isp;
      float* y = p.y_out + nc * osp;
      for (i64 od = 0; od < OD; ++od) {
        int n = 0, nr0 = -1;
        i64 first0 = -1;
        auto flush = [&] {
          if (n > 0) k.fwd_nchw(rows, n);
          n = 0;
        };
        for (i64 oh = 0; oh < OH; ++oh) {
          int nr = 0;
          i64 first = -1;
          window_rows(p, od, oh, [&](i64, i64, i64 krow) {
            if (nr++ == 0) first = krow;
          });
          if (n == kDwNchwRows || (n > 0 && (nr != nr0 || first != first0))) flush();
          const float** xs = xr.data() + n * win;
          int r = 0;
          window_rows(p, od, oh, [&](i64 id, i64 ih, i64 krow) {
            xs[r] = x + (id * IH + ih) * IW;
            wr.data()[r] = wc.data() + krow * p.ker[2];  // alike for every row of the run
            ++r;
          });
          rows[n] = DwRowNchw{xs,       wr.data(), nr,       y + (od * OH + oh) * OW,
                              IW,       OW,        p.ker[2], p.stride[2],
                              p.dil[2], p.pad_b[2]};
          nr0 = nr;
          first0 = first;
          ++n;
        }
        flush();
      }
      if (p.has_post_ops())
        apply_post_ops_nchw(p, y, res ? res + nc * osp : nullptr, c, c + 1, osp, osp);
    }
  });
}

// Channels-first with vectors across channels: items are (n, block of 16 channels); the
// block's input planes are transposed to channels-last [pixel][16] in scratch, run through
// the channels-last kernel, and the result transposed back (faster than vectors along rows
// even for 112 x 112 planes; planes up to 2 MiB of scratch per thread). Not for one-lane
// (generic) kernels.
constexpr i64 kNchwBlock = 16;
constexpr i64 kBandBytes = 96 << 10;  // a band's transposed input rows

bool nchw_blocked_fits(const Problem& p) {
  const i64 isp = p.in_spatial(), osp = p.out_spatial();
  return cpu_info().isa() >= Isa::kAvx2 && (isp + osp) * kNchwBlock <= (1 << 19);
}

void fwd_nchw_blocked(Handle& h, const Problem& p, const DwKernels& k, const float* w) {
  constexpr i64 CB = kNchwBlock;
  const float* res = static_cast<const float*>(p.post.residual);
  const i64 C = p.C, OD = p.out[0], OH = p.out[1], OW = p.out[2], IH = p.in[1], IW = p.in[2];
  const i64 osp = p.out_spatial(), isp = p.in_spatial(), T = p.ker_spatial();
  const i64 win = p.ker[0] * p.ker[1], nb = (C + CB - 1) / CB;
  // Bands of output rows (2-D problems): only the input rows a band's windows read are
  // transposed (about kBandBytes of them), so the band's scratch stays in L2 (whole planes of
  // 112 x 112 had taken 1 MB). 2 threads, Zen 3, MobileNet-V2 mb1 NCHW, in-process: b2_dw
  // 0.33-0.37 -> 0.26 ms, b1_dw 0.215-0.224 -> 0.193-0.197; 56x56 and smaller the same.
  const i64 sh = p.stride[1], ext_h = (p.ker[1] - 1) * p.dil[1];
  const bool planar = p.in[0] == 1 && p.ker[0] == 1 && OD == 1;
  i64 band = OH;
  if (planar) {
    const i64 rows_in = std::max<i64>(1, (kBandBytes / static_cast<i64>(sizeof(float))) / (IW * CB));
    band = std::clamp<i64>((rows_in - ext_h - 1) / sh + 1, 1, OH);
  }
  const i64 band_in = planar ? std::min(IH, (band - 1) * sh + ext_h + 1) : IH;
  const i64 xt_n = planar ? band_in * IW : isp, yt_n = planar ? band * OW : osp;
  detail::parallel_for(h, 0, p.N * nb, 1, [&](i64 b, i64 e) {
    float* xt = aligned_scratch(static_cast<std::size_t>((xt_n + yt_n + T) * CB));
    float* yt = xt + xt_n * CB;  // [band pixels][CB]
    float* wt = yt + yt_n * CB;  // [T][CB]
    RowList<const float*> xr(win), wr(win);
    for (i64 it = b; it < e; ++it) {
      const i64 n = it / nb, c0 = (it % nb) * CB, nc = std::min(CB, C - c0);
      const float* xn = p.x + (n * C + c0) * isp;
      float* y = p.y_out + (n * C + c0) * osp;
      for (i64 t = 0; t < T; ++t)
        for (i64 c = 0; c < nc; ++c) wt[t * CB + c] = w[t * C + c0 + c];
      for (i64 oh0 = 0; oh0 < OH; oh0 += band) {
        const i64 oh1 = std::min(OH, oh0 + band);
        // Input rows [lo, hi) of the band (the whole image for 3-D problems).
        i64 lo = 0, hi = IH * p.in[0];
        if (planar) {
          lo = std::clamp<i64>(oh0 * sh - p.pad_b[1], 0, IH);
          hi = std::clamp<i64>((oh1 - 1) * sh - p.pad_b[1] + ext_h + 1, lo, IH);
        }
        if (hi > lo) k.transpose(xn + lo * IW, nc, (hi - lo) * IW, isp, xt, CB);
        for (i64 od = 0; od < OD; ++od)
          for (i64 oh = oh0; oh < oh1; ++oh) {
            int nr = 0;
            window_rows(p, od, oh, [&](i64 id, i64 ih, i64 krow) {
              xr.data()[nr] = xt + (id * IH + ih - lo) * IW * CB;
              wr.data()[nr] = wt + krow * p.ker[2] * CB;
              ++nr;
            });
            const DwRowNhwc a{xr.data(),   wr.data(), nr,        yt + (od * OH + oh - oh0) * OW * CB,
                              CB,          IW,        OW,        p.ker[2],
                              p.stride[2], p.dil[2],  p.pad_b[2]};
            k.fwd_nhwc(a, 0, nc);
          }
        const i64 pix0 = planar ? oh0 * OW : 0, pixels = planar ? (oh1 - oh0) * OW : osp;
        k.transpose(yt, pixels, nc, CB, y + pix0, osp);
      }
      if (p.has_post_ops())
        apply_post_ops_nchw(p, y, res ? res + (n * C + c0) * osp : nullptr, c0, c0 + nc, osp, osp);
    }
  });
}

}  // namespace

Status depthwise_accepts(const Problem& p) {
  if (p.G != p.C || p.Cg != 1) return detail::refuse("not depthwise (groups != C)");
  if (p.Kg != 1)
    return detail::refuse("channel multiplier K / C = " + std::to_string(p.Kg) + " > 1");
  if (!p.x_layout || p.x_layout != p.y_layout)
    return detail::refuse("x and y must be packed alike in NCHW or NHWC");
  return Status::ok();
}

Status depthwise_fwd(Handle& h, const Problem& p) {
  const DwKernels& k = dw_kernels();
  TESSERA_VLOG(kDispatch) << "conv depthwise: kernels dw_" << k.name;
  PackedWeights own;
  const float* w = p.w_packed;
  if (w == nullptr) {
    pack_taps(p, k, own.allocate(static_cast<std::size_t>(p.ker_spatial() * p.C)));
    w = own.data();
  }
  if (p.x_layout == Layout::kNHWC)
    fwd_nhwc(h, p, k, w);
  else if (nchw_blocked_fits(p))
    fwd_nchw_blocked(h, p, k, w);
  else
    fwd_nchw(h, p, k, w);
  return Status::ok();
}

void depthwise_pack(Handle&, const Problem& p, PackedWeights& out) {
  pack_taps(p, dw_kernels(), out.allocate(static_cast<std::size_t>(p.ker_spatial() * p.C)));
}

// dw[c][t] = sum over n and output positions of dy * x. Items are (channel chunk, block of
// output rows); each sums its rows in order into its own [taps][C] partial, and the partials
// are added in block order, so the result is the same for any thread count.
Status depthwise_bwd_weights(Handle& h, const Problem& p) {
  const DwKernels& k = dw_kernels();
  const i64 C = p.C, T = p.ker_spatial(), KW = p.ker[2];
  const i64 OD = p.out[0], OH = p.out[1], OW = p.out[2], IH = p.in[1], IW = p.in[2];
  const i64 isp = p.in_spatial(), osp = p.out_spatial(), win = p.ker[0] * p.ker[1];
  const bool nhwc = p.x_layout == Layout::kNHWC;
  std::vector<float> part;  // [block][t][C]; the sum lands in block 0
  i64 nblk = 1;
  if (!nhwc && nchw_blocked_fits(p)) {
    // Channels-first through the channels-last kernel: items are blocks of 16 channels; each
    // transposes x and dy image by image and sums every image's rows in order.
    constexpr i64 CB = kNchwBlock;
    part.assign(static_cast<std::size_t>(T * C), 0.0f);
    detail::parallel_for(h, 0, (C + CB - 1) / CB, 1, [&](i64 b, i64 e) {
      float* xt = aligned_scratch(static_cast<std::size_t>((isp + osp + T) * CB));
      float* dyt = xt + isp * CB;   // [osp][CB]
      float* acc = dyt + osp * CB;  // [T][CB]
      RowList<const float*> xr(win);
      RowList<float*> ar(win);
      for (i64 cb = b; cb < e; ++cb) {
        const i64 c0 = cb * CB, nc = std::min(CB, C - c0);
        std::fill(acc, acc + T * CB, 0.0f);
        for (i64 n = 0; n < p.N; ++n) {
          k.transpose(p.x + (n * C + c0) * isp, nc, isp, isp, xt, CB);
          k.transpose(p.y_in + (n * C + c0) * osp, nc, osp, osp, dyt, CB);
          for (i64 od = 0; od < OD; ++od)
            for (i64 oh = 0; oh < OH; ++oh) {
              int nr = 0;
              window_rows(p, od, oh, [&](i64 id, i64 ih, i64 krow) {
                xr.data()[nr] = xt + (id * IH + ih) * IW * CB;
                ar.data()[nr] = acc + krow * KW * CB;
                ++nr;
              });
              const DwBwdRow a{xr.data(), ar.data(),   nr,       dyt + (od * OH + oh) * OW * CB,
                               CB,        CB,          IW,       OW,
                               KW,        p.stride[2], p.dil[2], p.pad_b[2]};
              k.bwdw_nhwc(a, 0, nc);
            }
        }
        for (i64 t = 0; t < T; ++t)
          std::copy(acc + t * CB, acc + t * CB + nc, part.data() + t * C + c0);
      }
    });
  } else {
    const i64 rows = p.N * OD * OH;
    // Channels-last: all channels per item (rows are read in address order), up to 16 row
    // blocks of at least 2 rows. Channels-first: one channel per item, row blocks so that
    // there are at least 16 items, each block at least 4 rows.
    const i64 chunk = nhwc ? C : 1, nch = (C + chunk - 1) / chunk;
    nblk = nhwc ? std::max<i64>(1, std::min<i64>((rows + 1) / 2, 16))
                : std::max<i64>(1, std::min((rows + 3) / 4, (16 + nch - 1) / nch));
    const i64 per = (rows + nblk - 1) / nblk;
    nblk = (rows + per - 1) / per;
    part.assign(static_cast<std::size_t>(nblk * T * C), 0.0f);
    detail::parallel_for(h, 0, nch * nblk, 1, [&](i64 b, i64 e) {
      RowList<const float*> xr(win);
      RowList<float*> ar(win);
      for (i64 it = b; it < e; ++it) {
        const i64 blk = it % nblk, c0 = (it / nblk) * chunk, c1 = std::min(C, c0 + chunk);
        float* acc = part.data() + blk * T * C;
        for (i64 row = blk * per; row < std::min(rows, (blk + 1) * per); ++row) {
          const i64 n = row / (OD * OH), od = (row / OH) % OD, oh = row % OH;
          // Channels-last: one call covers [c0, c1); channels-first: the chunk is channel c0.
          const float* xn = nhwc ? p.x + n * p.xs.n : p.x + (n * C + c0) * isp;
          int nr = 0;
          window_rows(p, od, oh, [&](i64 id, i64 ih, i64 krow) {
            const i64 off = (id * IH + ih) * IW;
            xr.data()[nr] = nhwc ? xn + off * C : xn + off;
            ar.data()[nr] = acc + krow * KW * C + (nhwc ? 0 : c0);
            ++nr;
          });
          if (nhwc) {
            const DwBwdRow a{xr.data(), ar.data(), nr, p.y_in + row * OW * C, C,        C,
                             IW,        OW,        KW, p.stride[2],           p.dil[2], p.pad_b[2]};
            k.bwdw_nhwc(a, c0, c1);
          } else {
            const DwBwdRow a{
                xr.data(), ar.data(),   nr,       p.y_in + (n * C + c0) * osp + (od * OH + oh) * OW,
                1,         C,           IW,       OW,
                KW,        p.stride[2], p.dil[2], p.pad_b[2]};
            k.bwdw_nchw(a);
          }
        }
      }
    });
  }
  // Block partials added in block order, then [taps][C] -> dw.
  float* sum = part.data();
  for (i64 blk = 1; blk < nblk; ++blk) {
    const float* pb = part.data() + blk * T * C;
    for (i64 i = 0; i < T * C; ++i) sum[i] += pb[i];
  }
  if (packed_taps(p)) {
    k.transpose(sum, T, C, C, p.w_out, T);
  } else {
    for (i64 c = 0; c < C; ++c) {
      i64 t = 0;
      for (i64 kd = 0; kd < p.ker[0]; ++kd)
        for (i64 kh = 0; kh < p.ker[1]; ++kh)
          for (i64 kw = 0; kw < KW; ++kw, ++t)
            p.w_out[c * p.ws.n + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w] = sum[t * C + c];
    }
  }
  bias_grad(p);
  return Status::ok();
}

}  // namespace tessera::dnn::conv
