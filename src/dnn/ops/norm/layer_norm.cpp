// Layer norm entry points and fast driver. Rows are the leading indices (dims [0, axis)), each
// normalised over its contiguous block of K elements: packed NCHW (row-major) data for any
// axis, or packed NHWC data with axis <= 1, whose blocks hold the normalised elements in another
// order (the parameters are then gathered into memory order and the gradients scattered back).
//
// Row statistics: moments around the row's first element in f32, flushed to f64 every
// kRowFlush elements. Backward: short rows one at a time, in fixed blocks with their own f32
// dscale/dbias partials combined in f64 in block order; long rows in fixed column chunks (see
// run). Either way the same bits for any thread count.
#include <algorithm>

#include "../activation/dense.hpp"
#include "../movement/kernels.hpp"
#include "norm.hpp"

namespace tessera::dnn {
namespace norm {
namespace {

// Backward rows longer than this go in chunks of this many elements (whole flush blocks);
// their dscale/dbias sums go in f32 over kLnRows rows at a time.
constexpr i64 kLnChunk = 4 * kRowFlush;
constexpr i64 kLnRows = 64;

// Packed NHWC with axis 0 or 1: block position (n, s, c) holds the logical (parameter) element
// (n, c, s), so the parameters are transposed into memory order and the gradients back.
// lead == 0 when the two orders agree (row-major data).
struct BlockPerm {
  i64 lead = 0, c = 0, s = 0;
};

BlockPerm block_perm(const LnProblem& p) {
  BlockPerm b;
  if (p.x_desc.is_packed(Layout::kNCHW)) return b;
  b.lead = p.axis == 0 ? p.x_desc.dims[0] : 1;
  b.c = p.x_desc.dims[1];
  b.s = spatial_size(p.x_desc);
  return b;
}

// dst[(n * cols + j) * rows + i] = src[(n * rows + i) * cols + j] for n < lead: 64 x 64 tiles
// over the threads, each by the data-movement kernels' tile transpose.
template <Isa kIsa>
void transpose(Handle& h, const float* src, float* dst, i64 lead, i64 rows, i64 cols) {
  const move_kernels::Kernels& mk = kIsa == Isa::kAvx512 ? move_kernels::kAvx512
                                    : kIsa == Isa::kAvx2 ? move_kernels::kAvx2
                                                         : move_kernels::kGeneric;
  constexpr i64 kT = 64;
  const i64 ti = (rows + kT - 1) / kT, tj = (cols + kT - 1) / kT;
  detail::parallel_for(h, 0, lead * ti * tj, 4, [&](i64 t0, i64 t1) {
    for (i64 t = t0; t < t1; ++t) {
      const i64 n = t / (ti * tj), i0 = t / tj % ti * kT, j0 = t % tj * kT;
      const float* sn = src + n * rows * cols;
      float* dn = dst + n * rows * cols;
      mk.transpose[2](std::min(kT, rows - i0), std::min(kT, cols - j0), sn + i0 * cols + j0,
                      cols, dn + j0 * rows + i0, rows);
    }
  });
}

std::optional<Layout> block_layout(const LnProblem& p) {
  std::optional<Layout> l;
  if (p.x_desc.is_packed(Layout::kNCHW))
    l = Layout::kNCHW;
  else if (p.x_desc.rank() >= 3 && p.axis <= 1 && p.x_desc.is_packed(Layout::kNHWC))
    l = Layout::kNHWC;
  return l;
}

template <Isa kIsa>
Status accepts(const LnProblem& p) {
  TESSERA_RETURN_IF_ERROR(isa_ok(kIsa));
  const auto l = block_layout(p);
  if (!l)
    return detail::refuse(
        "needs the normalised dims contiguous (packed NCHW, or NHWC with axis "
        "<= 1); x is " +
        p.x_desc.to_string() + ", axis " + std::to_string(p.axis));
  if (!p.y_desc.is_packed(*l) || (p.backward && !p.dx_desc.is_packed(*l)))
    return detail::refuse("needs every tensor packed like x (" + std::string(layout_name(*l)) +
                          ")");
  return Status::ok();
}

template <Isa kIsa>
Status run(Handle& h, const LnProblem& p) {
  const NormKernels& K = kernels_for(kIsa);
  const TensorDesc& xd = p.x_desc;
  i64 rows = 1, k = 1;
  for (int i = 0; i < xd.rank(); ++i)
    (i < p.axis ? rows : k) *= xd.dims[static_cast<std::size_t>(i)];
  const BlockPerm perm = block_perm(p);
  const bool grads = p.backward && (p.dscale != nullptr || p.dbias != nullptr);
  const bool long_rows = p.backward && k > kLnChunk;
  const bool wide = rows > kLnRows;  // long rows' gradient sums need f64 accumulators too
  // Short rows go in fixed blocks of rows with their own gradient partials. Rows per block:
  // at least 8 (the partials stay within a quarter of the tensor), at most 64 (f32 partial
  // sums stay accurate), about 16 blocks for small row counts.
  const i64 rpb = std::clamp<i64>((rows + 15) / 16, 8, 64);
  const i64 blocks = (rows + rpb - 1) / rpb;
  // Workspace, in slots of k floats: the parameters in block order (NHWC: 2), the gradients in
  // block order (NHWC backward: 2), then the gradient sums: short rows' partials (2 per
  // block) or long rows' f32 (2) and f64 (4) accumulators.
  const i64 nperm = perm.lead != 0 ? (grads ? 4 : 2) : 0;
  const i64 nacc = !grads ? 0 : !long_rows ? 2 * blocks : wide ? 6 : 2;
  TESSERA_ASSIGN_OR_RETURN(
      void* ws, detail::workspace(h, static_cast<std::size_t>((nperm + nacc) * k) * sizeof(float)));
  float* wsf = static_cast<float*>(ws);
  auto gather = [&](const float* v, float* buf) -> const float* {
    if (perm.lead == 0 || v == nullptr) return v;
    transpose<kIsa>(h, v, buf, perm.lead, perm.c, perm.s);
    return buf;
  };
  const float* scale = gather(p.scale, wsf);
  const float* bias = gather(p.bias, wsf + k);
  detail::Staged xs = detail::stage_in(xd, p.x);
  const bool stream = detail::stream_output(xd.numel() * static_cast<i64>(sizeof(float)));
  if (!p.backward) {
    detail::StagedOut ys = detail::stage_out(p.y_desc, p.y, false);
    const float* x = xs.data;
    float* y = ys.data;
    detail::parallel_for(h, 0, rows, std::max<i64>(1, 16384 / k), [&](i64 r0, i64 r1) {
      // Row r is normalised in the same pass that reduces row r + 1.
      double s[2] = {0.0, 0.0};
      K.row_moments(x + r0 * k, k, x[r0 * k], s);
      for (i64 r = r0; r < r1; ++r) {
        const float* xr = x + r * k;
        double mean, var;
        moments_to_stats(xr[0], s[0], s[1], static_cast<double>(k), &mean, &var);
        const double invstd = inv_std(var, p.epsilon);
        double next[2] = {0.0, 0.0};
        K.ln_forward(xr, k, xr[0], static_cast<float>(-(mean - xr[0]) * invstd),
                     static_cast<float>(invstd), scale, bias, y + r * k,
                     r + 1 < r1 ? xr + k : nullptr, next, stream);
        s[0] = next[0];
        s[1] = next[1];
        if (p.mean_out != nullptr) p.mean_out[r] = static_cast<float>(mean);
        if (p.invstd_out != nullptr) p.invstd_out[r] = static_cast<float>(invstd);
      }
      if (stream) K.fence();
    });
    ys.commit();
    return Status::ok();
  }
  detail::Staged dys = detail::stage_in(p.y_desc, p.dy);
  detail::StagedOut dxs = detail::stage_out(p.dx_desc, p.dx, false);
  const float* x = xs.data;
  const float* dy = dys.data;
  float* dx = dxs.data;
  // Gradients in block order: NHWC blocks go to the workspace first, then to parameter order.
  float* gs = perm.lead != 0 && p.dscale != nullptr ? wsf + 2 * k : p.dscale;
  float* gb = perm.lead != 0 && p.dbias != nullptr ? wsf + 3 * k : p.dbias;
  const double kk = static_cast<double>(k);
  // dx = g * invstd + xhat * c1 + c0 from the row's sum(g) and sum(g * xhat).
  auto coefficients = [&](i64 r, double s1, double s2, float* c0, float* c1) {
    const double inv = p.invstd[r];
    *c0 = static_cast<float>(-inv * (s1 / kk));
    *c1 = static_cast<float>(-inv * (s2 / kk));
  };
  if (!long_rows) {
    // Short rows, one at a time (its dx right after its sums, while it is in L1), in fixed
    // blocks of rows, each with its own f32 dscale/dbias partials (in the workspace).
    float* part = wsf + nperm * k;
    detail::parallel_for(h, 0, blocks, 1, [&](i64 b0, i64 b1) {
      for (i64 b = b0; b < b1; ++b) {
        float* ds = grads ? part + b * 2 * k : nullptr;
        if (ds != nullptr) std::fill(ds, ds + 2 * k, 0.0f);
        for (i64 r = b * rpb; r < std::min(rows, (b + 1) * rpb); ++r) {
          double s[2] = {0.0, 0.0};
          float c0, c1;
          K.ln_bwd_reduce(x + r * k, dy + r * k, k, p.mean[r], p.invstd[r], scale, ds,
                          ds != nullptr ? ds + k : nullptr, s, nullptr, nullptr);
          coefficients(r, s[0], s[1], &c0, &c1);
          K.ln_bwd_dx(x + r * k, dy + r * k, k, p.mean[r], p.invstd[r], scale, c0, c1,
                      dx + r * k, stream, nullptr, nullptr);
        }
      }
      if (stream) K.fence();
    });
    if (grads)  // block partials combined in block order, in f64
      detail::parallel_for(h, 0, k, 4096, [&](i64 m0, i64 m1) {
        for (i64 m = m0; m < m1; ++m) {
          double s1 = 0.0, s2 = 0.0;
          for (i64 b = 0; b < blocks; ++b) {
            s1 += part[static_cast<std::size_t>(b * 2 * k + m)];
            s2 += part[static_cast<std::size_t>(b * 2 * k + k + m)];
          }
          if (gs != nullptr) gs[m] = static_cast<float>(s1);
          if (gb != nullptr) gb[m] = static_cast<float>(s2);
        }
      });
  } else {
    // Long rows go in groups of rows (about 4 MiB of x and dy: one row when rows are very
    // long), each row split into chunks of kLnChunk columns, the chunks shared out over the
    // threads the same way at every step. Step s reduces group s and writes the dx of group
    // s - 1, which that thread read in step s - 1 and which is still in the L3: x and dy
    // come from memory once. dscale/dbias accumulate in f32 over kLnRows rows at a time,
    // then f64 (in the handle's workspace); each row's sums are kept per chunk and added in
    // chunk order. Nothing depends on the thread count.
    const i64 chunks = (k + kLnChunk - 1) / kLnChunk;
    const i64 group = std::max<i64>(1, (i64{1} << 19) / k);
    const i64 groups = (rows + group - 1) / group;
    float* acc32 = wsf + nperm * k;  // an even number of slots: 8-byte aligned after it
    double* acc64 = wide ? reinterpret_cast<double*>(acc32 + 2 * k) : nullptr;
    std::vector<double> rs(static_cast<std::size_t>(chunks * rows * 2), 0.0);
    std::vector<float> cs(static_cast<std::size_t>(2 * rows));
    auto piece = [&](i64 r, i64 j) { return r * k + j; };
    for (i64 st = 0; st <= groups; ++st) {
      const i64 r0 = st * group, r1 = std::min(rows, r0 + group);  // reduced this step
      const i64 d0 = r0 - group, d1 = std::min(rows, r0);          // their dx this step
      detail::parallel_for(h, 0, chunks, 1, [&](i64 q0, i64 q1) {
        // The pieces of chunk q in order: dx of rows [max(d0, 0), d1), then the reductions of
        // rows [r0, r1); each prefetches the next piece of this thread's sequence.
        const i64 dlo = std::max<i64>(d0, 0), nd = d1 - dlo, nr = r1 - r0;
        auto ahead = [&](i64 q, i64 idx) -> i64 {  // offset of the piece after (q, idx), or -1
          if (++idx == nd + nr) {
            if (++q == q1) return -1;
            idx = 0;
          }
          return piece(idx < nd ? dlo + idx : r0 + idx - nd, q * kLnChunk);
        };
        for (i64 q = q0; q < q1; ++q) {
          const i64 j = q * kLnChunk, n = std::min(kLnChunk, k - j);
          float* ds = acc32 + j;
          float* db = acc32 + k + j;
          for (i64 r = dlo; r < d1; ++r) {
            const i64 o = ahead(q, r - dlo);
            K.ln_bwd_dx(x + piece(r, j), dy + piece(r, j), n, p.mean[r], p.invstd[r], scale + j,
                        cs[static_cast<std::size_t>(2 * r)],
                        cs[static_cast<std::size_t>(2 * r + 1)], dx + piece(r, j), stream,
                        o < 0 ? nullptr : x + o, o < 0 ? nullptr : dy + o);
          }
          for (i64 r = r0; r < r1; ++r) {
            if (grads && r % kLnRows == 0) {  // flush the f32 sums of the last kLnRows rows
              if (r > 0 && wide)
                for (i64 i = 0; i < n; ++i) {
                  acc64[j + i] += ds[i];
                  acc64[k + j + i] += db[i];
                }
              if (r == 0 && wide) {
                std::fill(acc64 + j, acc64 + j + n, 0.0);
                std::fill(acc64 + k + j, acc64 + k + j + n, 0.0);
              }
              std::fill(ds, ds + n, 0.0f);
              std::fill(db, db + n, 0.0f);
            }
            const i64 o = ahead(q, nd + r - r0);
            K.ln_bwd_reduce(x + piece(r, j), dy + piece(r, j), n, p.mean[r], p.invstd[r],
                            scale + j, grads ? ds : nullptr, grads ? db : nullptr,
                            rs.data() + (q * rows + r) * 2, o < 0 ? nullptr : x + o,
                            o < 0 ? nullptr : dy + o);
          }
          if (grads && r1 == rows && r0 < r1)  // the last rows: the gradients are complete
            for (i64 i = 0; i < n; ++i) {
              const double vs = wide ? acc64[j + i] + ds[i] : ds[i];
              const double vb = wide ? acc64[k + j + i] + db[i] : db[i];
              if (gs != nullptr) gs[j + i] = static_cast<float>(vs);
              if (gb != nullptr) gb[j + i] = static_cast<float>(vb);
            }
        }
        if (stream) K.fence();
      });
      for (i64 r = r0; r < r1; ++r) {
        double s1 = 0.0, s2 = 0.0;
        for (i64 q = 0; q < chunks; ++q) {
          s1 += rs[static_cast<std::size_t>((q * rows + r) * 2)];
          s2 += rs[static_cast<std::size_t>((q * rows + r) * 2 + 1)];
        }
        coefficients(r, s1, s2, &cs[static_cast<std::size_t>(2 * r)],
                     &cs[static_cast<std::size_t>(2 * r + 1)]);
      }
    }
  }
  if (perm.lead != 0) {
    if (p.dscale != nullptr) transpose<kIsa>(h, gs, p.dscale, perm.lead, perm.s, perm.c);
    if (p.dbias != nullptr) transpose<kIsa>(h, gb, p.dbias, perm.lead, perm.s, perm.c);
  }
  dxs.commit();
  return Status::ok();
}

constexpr detail::Impl<LnProblem> kImpls[] = {
    {"layer_norm_f32_avx512", accepts<Isa::kAvx512>, run<Isa::kAvx512>},
    {"layer_norm_f32_avx2", accepts<Isa::kAvx2>, run<Isa::kAvx2>},
    {"layer_norm_f32_generic", accepts<Isa::kGeneric>, run<Isa::kGeneric>},
    {"layer_norm_ref", detail::accepts_all<LnProblem>, layer_norm_ref},
};

Status check(const std::string& fn, LnProblem& p) {
  const char* yn = p.backward ? "dy" : "y";
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "x", p.x_desc, 1, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_float_dtype(fn, "x", p.x_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, yn, p.y_desc, 1, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, yn, p.y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, yn, p.y_desc));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "dx", p.dx_desc, 1, 8));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, "dx", p.dx_desc));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, "dx", p.dx_desc));
  }
  const int r = p.x_desc.rank();
  if (p.axis < -r || p.axis >= r)
    return invalid_argument(fn + ": axis " + std::to_string(p.axis) + " is outside [" +
                            std::to_string(-r) + ", " + std::to_string(r) + ") for x " +
                            p.x_desc.to_string());
  if (p.axis < 0) p.axis += r;
  const bool work = p.x_desc.numel() > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", p.x, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "scale", p.scale, work));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", p.dy, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dx", p.dx, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "mean", p.mean, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "invstd", p.invstd, work));
  } else {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", p.y, work));
    TESSERA_RETURN_IF_ERROR(check_epsilon(fn, p.epsilon));
  }
  TESSERA_VLOG(kBench) << "tessera bench dnn norm --kind layer --axis " << p.axis << " --dims "
                       << detail::dims_string(p.x_desc.dims, 'x') << " --layout "
                       << layout_of(p.x_desc) << " --dtype " << dtype_name(p.x_desc.dtype)
                       << " --dir " << (p.backward ? "bwd" : "fwd")
                       << (p.backward ? std::string() : " --eps " + std::to_string(p.epsilon));
  return Status::ok();
}

Status dispatch(Handle& h, const std::string& fn, LnProblem& p) {
  TESSERA_RETURN_IF_ERROR(check(fn, p));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  if (p.x_desc.numel() == 0) {
    // Gradients of parameters no element uses are zero.
    if (p.backward) {
      i64 k = 1;
      for (int i = p.axis; i < p.x_desc.rank(); ++i)
        k *= p.x_desc.dims[static_cast<std::size_t>(i)];
      for (i64 j = 0; j < k; ++j) {
        if (p.dscale != nullptr) p.dscale[j] = 0.0f;
        if (p.dbias != nullptr) p.dbias[j] = 0.0f;
      }
    }
    return Status::ok();
  }
  return detail::select_impl<LnProblem>(fn.c_str(), kImpls, p).run(h, p);
}

}  // namespace
}  // namespace norm

Status layer_norm_forward(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                          const float* scale, const float* bias, double epsilon,
                          const TensorDesc& y_desc, void* y, float* mean, float* invstd) {
  norm::LnProblem p;
  p.axis = axis;
  p.x_desc = x_desc;
  p.y_desc = y_desc;
  p.x = x;
  p.y = y;
  p.scale = scale;
  p.bias = bias;
  p.epsilon = epsilon;
  p.mean_out = mean;
  p.invstd_out = invstd;
  return norm::dispatch(h, "layer_norm_forward", p);
}

Status layer_norm_backward(Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                           const TensorDesc& dy_desc, const void* dy, const float* scale,
                           const float* mean, const float* invstd, const TensorDesc& dx_desc,
                           void* dx, float* dscale, float* dbias) {
  norm::LnProblem p;
  p.backward = true;
  p.axis = axis;
  p.x_desc = x_desc;
  p.y_desc = dy_desc;
  p.dx_desc = dx_desc;
  p.x = x;
  p.dy = dy;
  p.dx = dx;
  p.scale = scale;
  p.mean = mean;
  p.invstd = invstd;
  p.dscale = dscale;
  p.dbias = dbias;
  return norm::dispatch(h, "layer_norm_backward", p);
}

}  // namespace tessera::dnn
