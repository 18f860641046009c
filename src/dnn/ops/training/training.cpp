// Dropout and the losses: argument checks, replay lines (TESSERA_LOG=bench), then the first
// entry of each ordered list that accepts: the per-ISA kernels of kernels.hpp on dense tensors,
// then the reference (ref.cpp), which takes any strides. Per-element work is split over threads
// freely; sums run in an order fixed by the sizes, so any thread count gives the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../eltwise/nest.hpp"
#include "kernels.hpp"
#include "ref.hpp"

namespace tessera::dnn {
namespace {

namespace tk = training_kernels;
using detail::at_element;
using detail::refuse;
using i64 = std::int64_t;
using std::to_string;
using training_ref::offsets_of;
using training_ref::Samples;

// Packed row-major: the strides of the dims larger than 1 are those of the row-major order.
bool row_major(const TensorDesc& d) {
  i64 expect = 1;
  for (int i = d.rank() - 1; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    if (d.dims[k] == 1) continue;
    if (d.strides[k] != expect) return false;
    expect *= d.dims[k];
  }
  return true;
}

Status check_float(const std::string& fn, const char* name, const TensorDesc& d, const void* p) {
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, name, d, p));
  return detail::check_float_dtype(fn, name, d);
}
Status check_out(const std::string& fn, const char* name, const TensorDesc& d, void* p,
                 std::initializer_list<std::pair<const TensorDesc*, const void*>> ins) {
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, name, d));
  for (const auto& [in, ip] : ins)
    if (in != nullptr) TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, name, d, p, "an input", *in, ip));
  return Status::ok();
}

// ---- the class-indexed losses -------------------------------------------------------------------
Result<Samples> read_samples(const std::string& fn, const ClassLossParams& p, const TensorDesc& x,
                             const void* xp, const TensorDesc& lab, const void* lp, bool x_needed) {
  if (x_needed) TESSERA_RETURN_IF_ERROR(check_float(fn, "x", x, xp));
  else TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "x", x, 2, detail::kMaxTensorRank));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "labels", lab, lp));
  if (x.rank() < 2) return invalid_argument(fn + ": x needs rank >= 2 ([N, C, ...]), got " + to_string(x.rank()));
  if (lab.dtype != DType::kI32 && lab.dtype != DType::kI64)
    return invalid_argument(fn + ": labels dtype " + std::string(dtype_name(lab.dtype)) + " must be i32 or i64");
  std::vector<i64> want = x.dims;
  want.erase(want.begin() + 1);
  if (lab.dims != want)
    return invalid_argument(fn + ": labels dims [" + detail::dims_string(lab.dims) + "] must be [" + detail::dims_string(want) + "]");
  if (p.label_smoothing < 0 || p.label_smoothing > 1 || std::isnan(p.label_smoothing))
    return invalid_argument(fn + ": label_smoothing " + std::to_string(p.label_smoothing) + " must be in [0, 1]");
  if (loss_reduction_name(p.reduction).empty()) return invalid_argument(fn + ": unknown reduction");
  Samples s;
  s.C = x.dims[1];
  // Packed labels are read in place; others through their offsets.
  const std::vector<i64> lo = row_major(lab) ? std::vector<i64>{} : offsets_of(lab);
  s.label.resize(static_cast<std::size_t>(lab.numel()));
  for (std::size_t i = 0; i < s.label.size(); ++i) {
    const i64 at = lo.empty() ? static_cast<i64>(i) : lo[i];
    const i64 v = lab.dtype == DType::kI32 ? static_cast<const std::int32_t*>(lp)[at] : static_cast<const i64*>(lp)[at];
    if (v != p.ignore_index && (v < 0 || v >= s.C))
      return invalid_argument(fn + ": label " + to_string(v) + " at position " + to_string(i) + " is outside [0, " + to_string(s.C) + ")");
    s.label[i] = v;
  }
  return s;
}
std::vector<i64> loss_dims(LossReduction r, const TensorDesc& labels) {
  return r == LossReduction::kNone ? labels.dims : std::vector<i64>{};
}
Status check_loss_out(const std::string& fn, const char* name, const TensorDesc& d, const void* ptr,
                      const std::vector<i64>& dims) {
  TESSERA_RETURN_IF_ERROR(check_float(fn, name, d, ptr));
  if (d.dims != dims)
    return invalid_argument(fn + ": " + name + " dims [" + detail::dims_string(d.dims) + "] must be [" + detail::dims_string(dims) + "]");
  return Status::ok();
}

Status check_point(const std::string& fn, const PointLossParams& p, const TensorDesc& x, const void* xp,
                   const TensorDesc& t, const void* tp) {
  if (point_loss_name(p.kind).empty()) return invalid_argument(fn + ": unknown loss kind");
  if (loss_reduction_name(p.reduction).empty()) return invalid_argument(fn + ": unknown reduction");
  if (p.kind == PointLoss::kSmoothL1 && !(p.beta > 0)) return invalid_argument(fn + ": beta " + std::to_string(p.beta) + " must be positive");
  TESSERA_RETURN_IF_ERROR(check_float(fn, "x", x, xp));
  TESSERA_RETURN_IF_ERROR(check_float(fn, "target", t, tp));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x, "target", t));
  return Status::ok();
}

Status same_dtype(const TensorDesc& a, const char* an, const TensorDesc& b, const char* bn) {
  if (a.dtype == b.dtype) return Status::ok();
  return refuse(std::string(an) + " is " + std::string(dtype_name(a.dtype)) + " and " + bn + " " +
                std::string(dtype_name(b.dtype)));
}

// The replay line; extra() (the op's own flags) runs only when the bench log is on.
template <typename Extra>
void log_bench(const Handle& h, const char* op, const TensorDesc& x, const char* dir, Extra&& extra) {
  TESSERA_VLOG(kBench) << "tessera bench dnn train --op " << op << " --dims " << detail::dims_x(x) << " --dtype "
                       << dtype_name(x.dtype) << " --dir " << dir << extra() << " --threads " << detail::max_threads(h);
}
std::string reduction_flag(LossReduction r) { return " --reduction " + std::string(loss_reduction_name(r)); }
std::string class_flags(const ClassLossParams& p) {
  return reduction_flag(p.reduction) + (p.label_smoothing != 0 ? " --smoothing " + std::to_string(p.label_smoothing) : "");
}

// Elementwise work over [0, n) in pieces of about this many elements per thread task.
constexpr i64 kPiece = 16384;

// ---- dropout ------------------------------------------------------------------------------------
struct DropoutFwdCall {
  float ratio;
  std::uint64_t seed, offset;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& y;
  void* yp;
  const TensorDesc& mask;
  void* maskp;
};
struct DropoutBwdCall {
  float ratio;
  const TensorDesc& mask;
  const void* maskp;
  const TensorDesc& dy;
  const void* dyp;
  const TensorDesc& dx;
  void* dxp;
};
float dropout_scale(float ratio) { return ratio < 1 ? 1.0f / (1.0f - ratio) : 0.0f; }

template <Isa kNeeds>
Status dropout_fwd_accepts(const DropoutFwdCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  if (!row_major(c.x) || !row_major(c.y) || (c.maskp != nullptr && !row_major(c.mask)))
    return refuse("x, y and mask are not all packed row-major");
  return same_dtype(c.x, "x", c.y, "y");
}
template <const tk::Kernels* kK>
Status dropout_fwd_run(Handle& h, const DropoutFwdCall& c) {
  tk::DropoutArgs a{};
  a.key[0] = static_cast<std::uint32_t>(c.seed);
  a.key[1] = static_cast<std::uint32_t>(c.seed >> 32);
  for (std::uint32_t r = 0; r < 10; ++r) {
    a.round_key[r][0] = a.key[0] + r * 0x9E3779B9u;
    a.round_key[r][1] = a.key[1] + r * 0xBB67AE85u;
  }
  a.offset[0] = static_cast<std::uint32_t>(c.offset);
  a.offset[1] = static_cast<std::uint32_t>(c.offset >> 32);
  // u = (r >> 8) 2^-24 >= ratio exactly when r >> 8 >= ceil(ratio 2^24) (ratio 2^24 is exact).
  a.threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(c.ratio) * 0x1p24));
  a.scale = dropout_scale(c.ratio);
  const int s = detail::storage_index(c.x.dtype);
  const i64 n = c.x.numel(), blocks = (n + tk::kDropoutAlign - 1) / tk::kDropoutAlign;
  const i64 eb = detail::storage_bytes(c.x.dtype);
  const bool stream = detail::stream_output(n * eb);
  auto* mask = static_cast<unsigned char*>(c.maskp);
  detail::parallel_for(h, 0, blocks, kPiece / tk::kDropoutAlign, [&](i64 b0, i64 b1) {
    const i64 first = b0 * tk::kDropoutAlign, last = std::min(n, b1 * tk::kDropoutAlign);
    kK->dropout_fwd[s](first, last - first, at_element(c.xp, first, eb), at_element(c.yp, first, eb),
                       mask != nullptr ? mask + first : nullptr, a, stream);
  });
  return Status::ok();
}
Status dropout_fwd_ref(Handle& h, const DropoutFwdCall& c) {
  training_ref::dropout_forward(h, c.ratio, c.seed, c.offset, c.x, c.xp, c.y, c.yp, c.mask, c.maskp);
  return Status::ok();
}
constexpr detail::Impl<DropoutFwdCall> kDropoutFwdImpls[] = {
    {"dropout_fwd_avx512", &dropout_fwd_accepts<Isa::kAvx512>, &dropout_fwd_run<&tk::kAvx512>},
    {"dropout_fwd_avx2", &dropout_fwd_accepts<Isa::kAvx2>, &dropout_fwd_run<&tk::kAvx2>},
    {"dropout_fwd_generic", &dropout_fwd_accepts<Isa::kGeneric>, &dropout_fwd_run<&tk::kGeneric>},
    {"dropout_fwd_ref", &detail::accepts_all<DropoutFwdCall>, &dropout_fwd_ref},
};

template <Isa kNeeds>
Status dropout_bwd_accepts(const DropoutBwdCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  if (!detail::same_dense_layout(c.mask, c.dy) || !detail::same_dense_layout(c.dy, c.dx))
    return refuse("mask, dy and dx are not all packed alike");
  return same_dtype(c.dy, "dy", c.dx, "dx");
}
template <const tk::Kernels* kK>
Status dropout_bwd_run(Handle& h, const DropoutBwdCall& c) {
  const int s = detail::storage_index(c.dx.dtype);
  const i64 n = c.dx.numel(), eb = detail::storage_bytes(c.dx.dtype);
  const bool stream = detail::stream_output(n * eb);
  const float scale = dropout_scale(c.ratio);
  detail::parallel_for(h, 0, n, kPiece, [&](i64 i0, i64 i1) {
    kK->dropout_bwd[s](i1 - i0, static_cast<const unsigned char*>(c.maskp) + i0, at_element(c.dyp, i0, eb),
                       at_element(c.dxp, i0, eb), scale, stream);
  });
  return Status::ok();
}
Status dropout_bwd_ref(Handle& h, const DropoutBwdCall& c) {
  training_ref::dropout_backward(h, c.ratio, c.mask, c.maskp, c.dy, c.dyp, c.dx, c.dxp);
  return Status::ok();
}
constexpr detail::Impl<DropoutBwdCall> kDropoutBwdImpls[] = {
    {"dropout_bwd_avx512", &dropout_bwd_accepts<Isa::kAvx512>, &dropout_bwd_run<&tk::kAvx512>},
    {"dropout_bwd_avx2", &dropout_bwd_accepts<Isa::kAvx2>, &dropout_bwd_run<&tk::kAvx2>},
    {"dropout_bwd_generic", &dropout_bwd_accepts<Isa::kGeneric>, &dropout_bwd_run<&tk::kGeneric>},
    {"dropout_bwd_ref", &detail::accepts_all<DropoutBwdCall>, &dropout_bwd_ref},
};

// ---- softmax cross-entropy ------------------------------------------------------------------------
// dloss and dloss_p are set for the backward; out is loss (forward) or dx (backward).
struct CeCall {
  const ClassLossParams& p;
  const Samples& s;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc* dloss;
  const void* dlossp;
  const TensorDesc& out;
  void* outp;
};

// How the fast paths see x: rows (classes innermost, samples in row-major order C apart: [N, C]
// or channels-last) or columns (packed row-major with spatial dims: per n a [C, S] slice,
// classes S apart, vectorised across the S samples).
enum class CeShape { kRows, kCols };
Status ce_shape(const TensorDesc& x, CeShape* shape) {
  const i64 C = x.dims[1];
  if (C >= i64{1} << 24) return refuse("C = " + to_string(C) + " >= 2^24 (the kernels carry labels as floats)");
  bool rows = C <= 1 || x.strides[1] == 1;
  i64 expect = C;
  for (int i = x.rank() - 1; rows && i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    if (i == 1 || x.dims[k] == 1) continue;
    rows = x.strides[k] == expect;
    expect *= x.dims[k];
  }
  if (rows) {
    *shape = CeShape::kRows;
    return Status::ok();
  }
  if (row_major(x)) {
    *shape = CeShape::kCols;
    return Status::ok();
  }
  return refuse("x is neither classes-innermost rows nor packed row-major");
}

template <Isa kNeeds>
Status ce_accepts(const CeCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  CeShape shape;
  TESSERA_RETURN_IF_ERROR(ce_shape(c.x, &shape));
  if (c.dloss != nullptr) {
    if (!detail::same_dense_layout(c.x, c.out)) return refuse("x and dx are not packed alike");
    return same_dtype(c.x, "x", c.out, "dx");
  }
  return Status::ok();
}
// Rows per thread task: about kPiece scores.
i64 row_grain(i64 C) { return std::max<i64>(1, kPiece / std::max<i64>(1, C)); }

// The column path's units: (n, a run of up to kCeUnit samples of n's slice).
constexpr i64 kCeUnit = 1024;

// Splits the samples over threads by x's shape: rows(r0, r1) for samples [r0, r1), or
// cols(j0, j1, o, S) for samples [j0, j1) of slice o (samples o S + j), a run of up to kCeUnit.
template <typename Rows, typename Cols>
void ce_split(Handle& h, const CeCall& c, Rows&& rows, Cols&& cols) {
  CeShape shape = CeShape::kRows;
  (void)ce_shape(c.x, &shape);  // accepted, so ok
  const i64 n = static_cast<i64>(c.s.label.size());
  if (shape == CeShape::kRows) {
    detail::parallel_for(h, 0, n, row_grain(c.s.C), [&](i64 r0, i64 r1) { rows(r0, r1); });
    return;
  }
  const i64 N = c.x.dims[0], S = n / std::max<i64>(1, N), per = (S + kCeUnit - 1) / kCeUnit;
  detail::parallel_for(h, 0, N * per, 1, [&](i64 u0, i64 u1) {
    for (i64 u = u0; u < u1; ++u) {
      const i64 o = u / per, j0 = (u % per) * kCeUnit;
      cols(j0, std::min(S, j0 + kCeUnit), o, S);
    }
  });
}

template <const tk::Kernels* kK>
Status ce_fwd_run(Handle& h, const CeCall& c) {
  const ClassLossParams& p = c.p;
  const i64 n = static_cast<i64>(c.s.label.size()), C = c.s.C;
  const double eps = p.label_smoothing;
  const int st = detail::storage_index(c.x.dtype);
  const i64 eb = detail::storage_bytes(c.x.dtype);
  const double W = training_ref::total_class_weight(p, C);
  // lse, the weighted sums and the per-sample losses in the handle's workspace (n doubles each).
  TESSERA_ASSIGN_OR_RETURN(void* ws, detail::workspace(h, static_cast<std::size_t>(3 * n) * sizeof(double)));
  double* const lse = static_cast<double*>(ws);
  double* const wxp = eps != 0 ? lse + n : nullptr;
  double* const per = lse + 2 * n;
  // Each sample's loss from its lse (and weighted sum), next to the kernel call that made them:
  // samples [i0, i1), sample i0's class 0 at x0, the next sample's `step` further, classes `cs`
  // apart.
  auto finish = [&](i64 i0, i64 i1, i64 x0, i64 step, i64 cs) {
    for (i64 i = i0; i < i1; ++i) {
      const i64 t = c.s.label[static_cast<std::size_t>(i)];
      per[i] = 0;
      if (t == p.ignore_index) continue;
      const i64 at = x0 + (i - i0) * step + t * cs;
      const double lpt = detail::load_f32(c.xp, c.x.dtype, at) - lse[i];
      const double smooth = eps != 0 ? wxp[i] - lse[i] * W : 0.0;
      per[i] = -(1 - eps) * training_ref::class_weight(p, t) * lpt - eps / static_cast<double>(C) * smooth;
    }
  };
  ce_split(
      h, c,
      [&](i64 r0, i64 r1) {
        kK->ce_rows_fwd[st](r1 - r0, C, at_element(c.xp, r0 * C, eb), p.weight, lse + r0,
                            wxp != nullptr ? wxp + r0 : nullptr);
        finish(r0, r1, r0 * C, C, 1);
      },
      [&](i64 j0, i64 j1, i64 o, i64 S) {
        kK->ce_cols_fwd[st](C, S, j0, j1, at_element(c.xp, o * C * S, eb), p.weight, lse + o * S,
                            wxp != nullptr ? wxp + o * S : nullptr);
        finish(o * S + j0, o * S + j1, o * C * S + j0, 1, S);
      });
  training_ref::write_loss(per, n, training_ref::weight_sum(p, c.s), p.reduction, c.out, c.outp);
  return Status::ok();
}

template <const tk::Kernels* kK>
Status ce_bwd_run(Handle& h, const CeCall& c) {
  const ClassLossParams& p = c.p;
  const i64 n = static_cast<i64>(c.s.label.size()), C = c.s.C;
  const double eps = p.label_smoothing;
  const int st = detail::storage_index(c.x.dtype);
  const i64 eb = detail::storage_bytes(c.x.dtype);
  const double W = training_ref::total_class_weight(p, C);
  const bool none = p.reduction == LossReduction::kNone;
  const std::vector<double> gv =
      none ? training_ref::sample_grads(p.reduction, *c.dloss, c.dlossp, n, 0.0) : std::vector<double>{};
  const double gs = none ? 0.0
                         : training_ref::scalar_grad(p.reduction, detail::load_f32(c.dlossp, c.dloss->dtype, 0),
                                                     training_ref::weight_sum(p, c.s));
  // Per sample: g a (a = (1 - eps) w_t + eps W / C), g eps / C, g (1 - eps) w_t, and the label
  // (-1: ignored, zeros), for up to kCeUnit samples at a time.
  struct Coef {
    float ka[kCeUnit], kb[kCeUnit], kt[kCeUnit], label[kCeUnit];
  };
  auto fill = [&](i64 i0, i64 i1, Coef& k) {
    for (i64 i = i0; i < i1; ++i) {
      const auto u = static_cast<std::size_t>(i), j = static_cast<std::size_t>(i - i0);
      const i64 t = c.s.label[u];
      k.label[j] = t == p.ignore_index ? -1.0f : static_cast<float>(t);
      k.ka[j] = k.kb[j] = k.kt[j] = 0.0f;
      if (k.label[j] < 0) continue;
      const double g = none ? gv[u] : gs, wt = training_ref::class_weight(p, t);
      k.ka[j] = static_cast<float>(g * ((1 - eps) * wt + eps / static_cast<double>(C) * W));
      k.kb[j] = static_cast<float>(g * eps / static_cast<double>(C));
      k.kt[j] = static_cast<float>(g * (1 - eps) * wt);
    }
    return tk::CeCoef{k.ka, k.kb, k.kt, k.label};
  };
  const bool stream = detail::stream_output(c.out.numel() * eb);
  ce_split(
      h, c,
      [&](i64 r0, i64 r1) {
        Coef k;
        for (i64 i0 = r0; i0 < r1; i0 += kCeUnit) {
          const i64 i1 = std::min(r1, i0 + kCeUnit);
          kK->ce_rows_bwd[st](i1 - i0, C, at_element(c.xp, i0 * C, eb), p.weight, fill(i0, i1, k),
                              at_element(c.outp, i0 * C, eb), stream);
        }
      },
      [&](i64 j0, i64 j1, i64 o, i64 S) {
        Coef k;
        kK->ce_cols_bwd[st](C, S, j0, j1, at_element(c.xp, o * C * S, eb), p.weight, fill(o * S + j0, o * S + j1, k),
                            at_element(c.outp, o * C * S, eb));
      });
  return Status::ok();
}

Status ce_ref(Handle& h, const CeCall& c) {
  if (c.dloss != nullptr)
    training_ref::softmax_cross_entropy_backward(h, c.p, c.s, c.x, c.xp, *c.dloss, c.dlossp, c.out, c.outp);
  else
    training_ref::softmax_cross_entropy_forward(h, c.p, c.s, c.x, c.xp, c.out, c.outp);
  return Status::ok();
}
constexpr detail::Impl<CeCall> kCeFwdImpls[] = {
    {"softmax_ce_fwd_avx512", &ce_accepts<Isa::kAvx512>, &ce_fwd_run<&tk::kAvx512>},
    {"softmax_ce_fwd_avx2", &ce_accepts<Isa::kAvx2>, &ce_fwd_run<&tk::kAvx2>},
    {"softmax_ce_fwd_generic", &ce_accepts<Isa::kGeneric>, &ce_fwd_run<&tk::kGeneric>},
    {"softmax_ce_ref", &detail::accepts_all<CeCall>, &ce_ref},
};
constexpr detail::Impl<CeCall> kCeBwdImpls[] = {
    {"softmax_ce_bwd_avx512", &ce_accepts<Isa::kAvx512>, &ce_bwd_run<&tk::kAvx512>},
    {"softmax_ce_bwd_avx2", &ce_accepts<Isa::kAvx2>, &ce_bwd_run<&tk::kAvx2>},
    {"softmax_ce_bwd_generic", &ce_accepts<Isa::kGeneric>, &ce_bwd_run<&tk::kGeneric>},
    {"softmax_ce_ref", &detail::accepts_all<CeCall>, &ce_ref},
};

// ---- nll's backward: dx zeroed, then one value per sample ---------------------------------------
struct NllBwdCall {
  const ClassLossParams& p;
  const Samples& s;
  const TensorDesc& dloss;
  const void* dlossp;
  const TensorDesc& dx;
  void* dxp;
};
Status nll_dense_accepts(const NllBwdCall& c) {
  return detail::is_dense(c.dx) ? Status::ok() : refuse("dx is not dense");
}
Status nll_dense_run(Handle& h, const NllBwdCall& c) {
  const i64 bytes = c.dx.numel() * static_cast<i64>(dtype_size(c.dx.dtype));
  detail::parallel_for(h, 0, bytes, 1 << 18, [&](i64 b0, i64 b1) {
    std::memset(static_cast<char*>(c.dxp) + b0, 0, static_cast<std::size_t>(b1 - b0));
  });
  training_ref::nll_loss_scatter(c.p, c.s, c.dloss, c.dlossp, c.dx, c.dxp);
  return Status::ok();
}
Status nll_ref(Handle&, const NllBwdCall& c) {
  for (i64 o : offsets_of(c.dx)) detail::store_f32(c.dxp, c.dx.dtype, o, 0.0f);
  training_ref::nll_loss_scatter(c.p, c.s, c.dloss, c.dlossp, c.dx, c.dxp);
  return Status::ok();
}
constexpr detail::Impl<NllBwdCall> kNllBwdImpls[] = {
    {"nll_bwd_dense", &nll_dense_accepts, &nll_dense_run},
    {"nll_bwd_ref", &detail::accepts_all<NllBwdCall>, &nll_ref},
};

// ---- pointwise losses -------------------------------------------------------------------------------
// g and gp are set for the backward; out is loss (forward) or dx (backward).
struct PointCall {
  const PointLossParams& p;
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& t;
  const void* tp;
  const TensorDesc* g;
  const void* gp;
  const TensorDesc& out;
  void* outp;
};

template <Isa kNeeds>
Status point_accepts(const PointCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::isa_allows(kNeeds));
  if (!detail::same_dense_layout(c.x, c.t)) return refuse("x and target are not packed alike");
  TESSERA_RETURN_IF_ERROR(same_dtype(c.x, "x", c.t, "target"));
  const bool none = c.p.reduction == LossReduction::kNone;
  if (c.g != nullptr || none) {  // an x-shaped output: dx, or the loss per element
    if (!detail::same_dense_layout(c.x, c.out)) return refuse("x and the output are not packed alike");
    TESSERA_RETURN_IF_ERROR(same_dtype(c.x, "x", c.out, "the output"));
  }
  if (c.g != nullptr && none) {
    if (!detail::same_dense_layout(c.x, *c.g)) return refuse("x and dloss are not packed alike");
    TESSERA_RETURN_IF_ERROR(same_dtype(c.x, "x", *c.g, "dloss"));
  }
  return Status::ok();
}

tk::PointArgs point_args(const PointLossParams& p) { return {p.beta, p.pos_weight}; }

template <const tk::Kernels* kK>
Status point_fwd_run(Handle& h, const PointCall& c) {
  const int st = detail::storage_index(c.x.dtype), k = static_cast<int>(c.p.kind);
  const i64 n = c.x.numel(), eb = detail::storage_bytes(c.x.dtype);
  const tk::PointArgs a = point_args(c.p);
  if (c.p.reduction == LossReduction::kNone) {
    const bool stream = detail::stream_output(n * eb);
    detail::parallel_for(h, 0, n, kPiece, [&](i64 i0, i64 i1) {
      kK->point_fwd[k][st](i1 - i0, at_element(c.xp, i0, eb), at_element(c.tp, i0, eb), at_element(c.outp, i0, eb), a,
                           stream);
    });
    return Status::ok();
  }
  // One sum per unit of kUnitElements (units fixed by n alone), then the units in order.
  std::vector<double> part(static_cast<std::size_t>(detail::units_per_segment(n)), 0.0);
  detail::for_each_unit(h, 1, n, [&](i64 u, i64, i64 b, i64 e) {
    part[static_cast<std::size_t>(u)] =
        kK->point_fwd[k][st](e - b, at_element(c.xp, b, eb), at_element(c.tp, b, eb), nullptr, a, false);
  });
  double sum = 0;
  for (double v : part) sum += v;
  if (c.p.reduction == LossReduction::kMean) sum = training_ref::scalar_grad(LossReduction::kMean, sum, static_cast<double>(n));
  detail::store_f32(c.outp, c.out.dtype, 0, static_cast<float>(sum));
  return Status::ok();
}

template <const tk::Kernels* kK>
Status point_bwd_run(Handle& h, const PointCall& c) {
  const int st = detail::storage_index(c.x.dtype), k = static_cast<int>(c.p.kind);
  const i64 n = c.x.numel(), eb = detail::storage_bytes(c.x.dtype);
  const tk::PointArgs a = point_args(c.p);
  const bool none = c.p.reduction == LossReduction::kNone;
  const float gs = none ? 0.0f
                        : static_cast<float>(training_ref::scalar_grad(c.p.reduction, detail::load_f32(c.gp, c.g->dtype, 0),
                                                                       static_cast<double>(n)));
  const bool stream = detail::stream_output(n * eb);
  detail::parallel_for(h, 0, n, kPiece, [&](i64 i0, i64 i1) {
    kK->point_bwd[k][st](i1 - i0, at_element(c.xp, i0, eb), at_element(c.tp, i0, eb),
                         none ? at_element(c.gp, i0, eb) : nullptr, gs, at_element(c.outp, i0, eb), a, stream);
  });
  return Status::ok();
}

Status point_ref(Handle& h, const PointCall& c) {
  if (c.g != nullptr)
    training_ref::point_loss_backward(h, c.p, c.x, c.xp, c.t, c.tp, *c.g, c.gp, c.out, c.outp);
  else
    training_ref::point_loss_forward(h, c.p, c.x, c.xp, c.t, c.tp, c.out, c.outp);
  return Status::ok();
}
constexpr detail::Impl<PointCall> kPointFwdImpls[] = {
    {"point_loss_fwd_avx512", &point_accepts<Isa::kAvx512>, &point_fwd_run<&tk::kAvx512>},
    {"point_loss_fwd_avx2", &point_accepts<Isa::kAvx2>, &point_fwd_run<&tk::kAvx2>},
    {"point_loss_fwd_generic", &point_accepts<Isa::kGeneric>, &point_fwd_run<&tk::kGeneric>},
    {"point_loss_ref", &detail::accepts_all<PointCall>, &point_ref},
};
constexpr detail::Impl<PointCall> kPointBwdImpls[] = {
    {"point_loss_bwd_avx512", &point_accepts<Isa::kAvx512>, &point_bwd_run<&tk::kAvx512>},
    {"point_loss_bwd_avx2", &point_accepts<Isa::kAvx2>, &point_bwd_run<&tk::kAvx2>},
    {"point_loss_bwd_generic", &point_accepts<Isa::kGeneric>, &point_bwd_run<&tk::kGeneric>},
    {"point_loss_ref", &detail::accepts_all<PointCall>, &point_ref},
};

}  // namespace

// ---- the entry points ---------------------------------------------------------------------------
Status dropout_forward(Handle& h, float ratio, std::uint64_t seed, std::uint64_t offset, const TensorDesc& x_desc,
                       const void* x, const TensorDesc& y_desc, void* y, const TensorDesc& mask_desc, void* mask) {
  const std::string fn = "dropout_forward";
  if (!(ratio >= 0 && ratio <= 1)) return invalid_argument(fn + ": ratio " + std::to_string(ratio) + " must be in [0, 1]");
  TESSERA_RETURN_IF_ERROR(check_float(fn, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(check_float(fn, "y", y_desc, y));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "y", y_desc, y, {{&x_desc, x}}));
  if (mask != nullptr) {
    TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "mask", mask_desc, mask));
    if (mask_desc.dtype != DType::kBool) return invalid_argument(fn + ": mask dtype must be bool");
    TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "mask", mask_desc));
    TESSERA_RETURN_IF_ERROR(check_out(fn, "mask", mask_desc, mask, {{&x_desc, x}, {&y_desc, y}}));
  }
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "dropout_forward"));
  log_bench(h, "dropout", x_desc, "fwd", [&] { return " --ratio " + std::to_string(ratio); });
  if (x_desc.numel() == 0) return Status::ok();
  const DropoutFwdCall c{ratio, seed, offset, x_desc, x, y_desc, y, mask_desc, mask};
  return detail::run_first_accepting(h, "dropout_forward", kDropoutFwdImpls, c);
}

Status dropout_backward(Handle& h, float ratio, const TensorDesc& mask_desc, const void* mask, const TensorDesc& dy_desc,
                        const void* dy, const TensorDesc& dx_desc, void* dx) {
  const std::string fn = "dropout_backward";
  if (!(ratio >= 0 && ratio <= 1)) return invalid_argument(fn + ": ratio " + std::to_string(ratio) + " must be in [0, 1]");
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "mask", mask_desc, mask));
  if (mask_desc.dtype != DType::kBool) return invalid_argument(fn + ": mask dtype must be bool");
  TESSERA_RETURN_IF_ERROR(check_float(fn, "dy", dy_desc, dy));
  TESSERA_RETURN_IF_ERROR(check_float(fn, "dx", dx_desc, dx));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "mask", mask_desc, "dy", dy_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "dy", dy_desc, "dx", dx_desc));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "dx", dx_desc, dx, {{&dy_desc, dy}, {&mask_desc, mask}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "dropout_backward"));
  log_bench(h, "dropout", dy_desc, "bwd", [&] { return " --ratio " + std::to_string(ratio); });
  if (dx_desc.numel() == 0) return Status::ok();
  const DropoutBwdCall c{ratio, mask_desc, mask, dy_desc, dy, dx_desc, dx};
  return detail::run_first_accepting(h, "dropout_backward", kDropoutBwdImpls, c);
}

Status softmax_cross_entropy_forward(Handle& h, const ClassLossParams& p, const TensorDesc& x_desc, const void* x,
                                     const TensorDesc& labels_desc, const void* labels, const TensorDesc& loss_desc,
                                     void* loss) {
  const std::string fn = "softmax_cross_entropy_forward";
  TESSERA_ASSIGN_OR_RETURN(Samples s, read_samples(fn, p, x_desc, x, labels_desc, labels, true));
  TESSERA_RETURN_IF_ERROR(check_loss_out(fn, "loss", loss_desc, loss, loss_dims(p.reduction, labels_desc)));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "loss", loss_desc, loss, {{&x_desc, x}, {&labels_desc, labels}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "softmax_cross_entropy_forward"));
  log_bench(h, "softmax_ce", x_desc, "fwd", [&] { return class_flags(p); });
  const CeCall c{p, s, x_desc, x, nullptr, nullptr, loss_desc, loss};
  return detail::run_first_accepting(h, "softmax_cross_entropy_forward", kCeFwdImpls, c);
}

Status softmax_cross_entropy_backward(Handle& h, const ClassLossParams& p, const TensorDesc& x_desc, const void* x,
                                      const TensorDesc& labels_desc, const void* labels, const TensorDesc& dloss_desc,
                                      const void* dloss, const TensorDesc& dx_desc, void* dx) {
  const std::string fn = "softmax_cross_entropy_backward";
  TESSERA_ASSIGN_OR_RETURN(Samples s, read_samples(fn, p, x_desc, x, labels_desc, labels, true));
  TESSERA_RETURN_IF_ERROR(check_loss_out(fn, "dloss", dloss_desc, dloss, loss_dims(p.reduction, labels_desc)));
  TESSERA_RETURN_IF_ERROR(check_float(fn, "dx", dx_desc, dx));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "dx", dx_desc));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "dx", dx_desc, dx, {{&x_desc, x}, {&labels_desc, labels}, {&dloss_desc, dloss}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "softmax_cross_entropy_backward"));
  log_bench(h, "softmax_ce", x_desc, "bwd", [&] { return class_flags(p); });
  if (dx_desc.numel() == 0) return Status::ok();
  const CeCall c{p, s, x_desc, x, &dloss_desc, dloss, dx_desc, dx};
  return detail::run_first_accepting(h, "softmax_cross_entropy_backward", kCeBwdImpls, c);
}

Status nll_loss_forward(Handle& h, const ClassLossParams& p, const TensorDesc& x_desc, const void* x,
                        const TensorDesc& labels_desc, const void* labels, const TensorDesc& loss_desc, void* loss) {
  const std::string fn = "nll_loss_forward";
  TESSERA_ASSIGN_OR_RETURN(Samples s, read_samples(fn, p, x_desc, x, labels_desc, labels, true));
  TESSERA_RETURN_IF_ERROR(check_loss_out(fn, "loss", loss_desc, loss, loss_dims(p.reduction, labels_desc)));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "loss", loss_desc, loss, {{&x_desc, x}, {&labels_desc, labels}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "nll_loss_forward"));
  log_bench(h, "nll", x_desc, "fwd", [&] { return reduction_flag(p.reduction); });
  // One score per sample: the reference's loop is all there is to it.
  const auto x0 = training_ref::class0_offsets(x_desc);
  std::vector<double> per(s.label.size(), 0.0);
  for (std::size_t i = 0; i < per.size(); ++i) {
    const i64 t = s.label[i];
    if (t != p.ignore_index) per[i] = -training_ref::class_weight(p, t) * detail::load_f32(x, x_desc.dtype, x0[i] + t * x_desc.strides[1]);
  }
  training_ref::write_loss(per.data(), static_cast<i64>(per.size()), training_ref::weight_sum(p, s), p.reduction, loss_desc, loss);
  return Status::ok();
}

Status nll_loss_backward(Handle& h, const ClassLossParams& p, const TensorDesc& x_desc, const TensorDesc& labels_desc,
                         const void* labels, const TensorDesc& dloss_desc, const void* dloss, const TensorDesc& dx_desc,
                         void* dx) {
  const std::string fn = "nll_loss_backward";
  TESSERA_ASSIGN_OR_RETURN(Samples s, read_samples(fn, p, x_desc, nullptr, labels_desc, labels, false));
  TESSERA_RETURN_IF_ERROR(check_loss_out(fn, "dloss", dloss_desc, dloss, loss_dims(p.reduction, labels_desc)));
  TESSERA_RETURN_IF_ERROR(check_float(fn, "dx", dx_desc, dx));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "dx", dx_desc));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "dx", dx_desc, dx, {{&labels_desc, labels}, {&dloss_desc, dloss}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "nll_loss_backward"));
  log_bench(h, "nll", dx_desc, "bwd", [&] { return reduction_flag(p.reduction); });
  const NllBwdCall c{p, s, dloss_desc, dloss, dx_desc, dx};
  return detail::run_first_accepting(h, "nll_loss_backward", kNllBwdImpls, c);
}

Status point_loss_forward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& target_desc, const void* target, const TensorDesc& loss_desc, void* loss) {
  const std::string fn = "point_loss_forward " + std::string(point_loss_name(p.kind));
  TESSERA_RETURN_IF_ERROR(check_point(fn, p, x_desc, x, target_desc, target));
  TESSERA_RETURN_IF_ERROR(check_loss_out(fn, "loss", loss_desc, loss, p.reduction == LossReduction::kNone ? x_desc.dims : std::vector<i64>{}));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "loss", loss_desc, loss, {{&x_desc, x}, {&target_desc, target}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "point_loss_forward"));
  log_bench(h, point_loss_name(p.kind).data(), x_desc, "fwd", [&] { return reduction_flag(p.reduction); });
  const PointCall c{p, x_desc, x, target_desc, target, nullptr, nullptr, loss_desc, loss};
  return detail::run_first_accepting(h, "point_loss_forward", kPointFwdImpls, c);
}

Status point_loss_backward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc, const void* x,
                           const TensorDesc& target_desc, const void* target, const TensorDesc& dloss_desc,
                           const void* dloss, const TensorDesc& dx_desc, void* dx) {
  const std::string fn = "point_loss_backward " + std::string(point_loss_name(p.kind));
  TESSERA_RETURN_IF_ERROR(check_point(fn, p, x_desc, x, target_desc, target));
  TESSERA_RETURN_IF_ERROR(check_loss_out(fn, "dloss", dloss_desc, dloss, p.reduction == LossReduction::kNone ? x_desc.dims : std::vector<i64>{}));
  TESSERA_RETURN_IF_ERROR(check_float(fn, "dx", dx_desc, dx));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "dx", dx_desc));
  TESSERA_RETURN_IF_ERROR(check_out(fn, "dx", dx_desc, dx, {{&x_desc, x}, {&target_desc, target}, {&dloss_desc, dloss}}));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "point_loss_backward"));
  log_bench(h, point_loss_name(p.kind).data(), x_desc, "bwd", [&] { return reduction_flag(p.reduction); });
  if (dx_desc.numel() == 0) return Status::ok();
  const PointCall c{p, x_desc, x, target_desc, target, &dloss_desc, dloss, dx_desc, dx};
  return detail::run_first_accepting(h, "point_loss_backward", kPointBwdImpls, c);
}

}  // namespace tessera::dnn
