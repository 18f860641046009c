// LRN entry points: argument checks, the ordered implementation lists and the drivers of the
// across-channel kernels (within-channel LRN runs on the reference). Work is split over
// images and spatial tiles (NCHW) or pixel ranges (NHWC); every output element is computed by
// one thread from its own window, so results are the same bits for any thread count.
#include <algorithm>
#include <limits>
#include <cmath>
#include <string>
#include <vector>

#include <tessera/core/cpu.hpp>

#include "../activation/dense.hpp"
#include "kernels.hpp"
#include "lrn.hpp"

namespace tessera::dnn {
namespace lrn {
namespace {

using i64 = std::int64_t;

const LrnKernels& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return kLrnAvx512;
    case Isa::kAvx2:
      return kLrnAvx2;
    default:
      return kLrnGeneric;
  }
}

i64 spatial_size(const TensorDesc& d) {
  i64 s = 1;
  for (int i = 2; i < d.rank(); ++i) s *= d.dims[static_cast<std::size_t>(i)];
  return s;
}

// Packed NCHW with spatial extent (channel planes) or packed NHWC / no spatial extent (pixel
// rows); every tensor of the problem alike.
std::optional<Layout> common_layout(const LrnProblem& p) {
  const Layout l = spatial_size(p.x_desc) > 1 && p.x_desc.is_packed(Layout::kNCHW) ? Layout::kNCHW
                                                                                   : Layout::kNHWC;
  for (const TensorDesc* d : {&p.x_desc, &p.y_desc, p.backward ? &p.dx_desc : &p.x_desc})
    if (!d->is_packed(l)) return std::nullopt;
  return l;
}

template <Isa kIsa>
Status accepts(const LrnProblem& p) {
  const Isa have = cpu_info().isa();
  if (have < kIsa)
    return detail::refuse("needs " + std::string(isa_name(kIsa)) +
                          "; the CPU (under TESSERA_MAX_ISA) allows " +
                          std::string(isa_name(have)));
  if (p.d.mode != LrnMode::kAcrossChannels)
    return detail::refuse("within-channel LRN runs on the reference");
  if (!common_layout(p))
    return detail::refuse("needs every tensor packed alike (NCHW or NHWC); x is " +
                          p.x_desc.to_string());
  return Status::ok();
}

AcrossParams params_of(const LrnProblem& p) {
  AcrossParams a{};
  a.channels = p.x_desc.dims[1];
  a.lo = window_lo(p.d.size);
  a.hi = window_hi(p.d.size);
  a.k = static_cast<float>(p.d.k);
  a.alpha_over_n = static_cast<float>(p.d.alpha / static_cast<double>(p.d.size));
  a.beta = static_cast<float>(p.d.beta);
  // The estimates of d^-1/2 need a normal d (d >= k): a subnormal k takes powf.
  const bool normal = static_cast<float>(p.d.k) >= std::numeric_limits<float>::min();
  a.pow = p.d.beta == 0.75 && normal  ? PowKind::kThreeQuarters
          : p.d.beta == 0.5 && normal ? PowKind::kHalf
          : p.d.beta == 1.0           ? PowKind::kOne
                                      : PowKind::kGeneral;
  return a;
}

template <Isa kIsa>
Status run(Handle& h, const LrnProblem& p) {
  const LrnKernels& K = kernels_for(kIsa);
  AcrossParams a = params_of(p);
  a.stream = detail::stream_output(p.x_desc.numel() * static_cast<i64>(sizeof(float)));
  const i64 n_ = p.x_desc.dims[0], c_ = a.channels, sp = spatial_size(p.x_desc);
  const bool nchw = *common_layout(p) == Layout::kNCHW;
  detail::Staged xs = detail::stage_in(p.x_desc, p.x);
  detail::Staged dys;
  if (p.backward) dys = detail::stage_in(p.y_desc, p.dy);
  detail::StagedOut out = p.backward ? detail::stage_out(p.dx_desc, p.dx, false)
                                     : detail::stage_out(p.y_desc, p.y, false);
  const float* x = xs.data;
  const float* dy = dys.data;
  float* y = out.data;
  if (nchw) {
    const i64 tile = p.backward ? kTile : 1024;
    const i64 tiles = (sp + tile - 1) / tile;
    detail::parallel_for(h, 0, n_ * tiles, 1, [&](i64 i0, i64 i1) {
      std::vector<float> scratch(p.backward ? static_cast<std::size_t>(2 * c_ * kTile) : 0);
      for (i64 i = i0; i < i1; ++i) {
        const i64 n = i / tiles, s0 = (i % tiles) * tile, s1 = std::min(sp, s0 + tile);
        const i64 o = n * c_ * sp;
        if (p.backward)
          K.backward_nchw[static_cast<int>(a.pow)](a, x + o, dy + o, sp, s0, s1, y + o, scratch.data());
        else
          K.forward_nchw[static_cast<int>(a.pow)](a, x + o, sp, s0, s1, y + o);
      }
      if (a.stream) K.fence();
    });
  } else {
    const i64 pixels = n_ * sp;
    detail::parallel_for(h, 0, pixels, std::max<i64>(1, 16384 / c_), [&](i64 q0, i64 q1) {
      std::vector<float> scratch(static_cast<std::size_t>(6 * (c_ + a.lo + a.hi + kScratchPad)));
      const i64 o = q0 * c_;
      if (p.backward)
        K.backward_nhwc[static_cast<int>(a.pow)](a, x + o, dy + o, q1 - q0, y + o, scratch.data());
      else
        K.forward_nhwc[static_cast<int>(a.pow)](a, x + o, q1 - q0, y + o, scratch.data());
      if (a.stream) K.fence();
    });
  }
  out.commit();
  return Status::ok();
}

constexpr detail::Impl<LrnProblem> kImpls[] = {
    {"lrn_across_f32_avx512", accepts<Isa::kAvx512>, run<Isa::kAvx512>},
    {"lrn_across_f32_avx2", accepts<Isa::kAvx2>, run<Isa::kAvx2>},
    {"lrn_across_f32_generic", accepts<Isa::kGeneric>, run<Isa::kGeneric>},
    {"lrn_ref", detail::accepts_all<LrnProblem>, lrn_ref},
};

std::string layout_of(const TensorDesc& d) {
  const auto l = d.packed_layout();
  return l ? std::string(layout_name(*l)) : std::string("strided");
}

Status dispatch(Handle& h, const std::string& fn, const LrnProblem& p) {
  const char* yn = p.backward ? "dy" : "y";
  const bool across = p.d.mode == LrnMode::kAcrossChannels;
  if (p.d.mode != LrnMode::kAcrossChannels && p.d.mode != LrnMode::kWithinChannel)
    return invalid_argument(fn + ": unknown LRN mode " +
                            std::to_string(static_cast<int>(p.d.mode)));
  // Within-channel windows cover 1 to 3 spatial dims.
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "x", p.x_desc, across ? 2 : 3, across ? 8 : 5));
  TESSERA_RETURN_IF_ERROR(detail::check_float_dtype(fn, "x", p.x_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, yn, p.y_desc, 2, 8));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, yn, p.y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, yn, p.y_desc));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_desc(fn, "dx", p.dx_desc, 2, 8));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", p.x_desc, "dx", p.dx_desc));
    TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "x", p.x_desc, "dx", p.dx_desc));
  }
  if (p.d.size < 1 || p.d.size > (1 << 20))
    return invalid_argument(fn + ": size = " + std::to_string(p.d.size) + " must be in [1, 2^20]");
  if (!std::isfinite(p.d.alpha) || !std::isfinite(p.d.beta) || !std::isfinite(p.d.k) ||
      p.d.alpha < 0.0 || p.d.k <= 0.0)
    return invalid_argument(
        fn + ": alpha = " + std::to_string(p.d.alpha) + ", beta = " + std::to_string(p.d.beta) +
        ", k = " + std::to_string(p.d.k) + ": need finite values, alpha >= 0 and k > 0");
  const bool work = p.x_desc.numel() > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", p.x, work));
  if (p.backward) {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", p.dy, work));
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dx", p.dx, work));
  } else {
    TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", p.y, work));
  }
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  TESSERA_VLOG(kBench) << "tessera bench dnn norm --kind lrn --lrn-mode "
                       << (across ? "across" : "within") << " --size " << p.d.size << " --alpha "
                       << p.d.alpha << " --beta " << p.d.beta << " --k " << p.d.k << " --dims "
                       << detail::dims_string(p.x_desc.dims, 'x') << " --layout "
                       << layout_of(p.x_desc) << " --dtype " << dtype_name(p.x_desc.dtype)
                       << " --dir " << (p.backward ? "bwd" : "fwd");
  if (!work) return Status::ok();
  return detail::select_impl<LrnProblem>(fn.c_str(), kImpls, p).run(h, p);
}

}  // namespace
}  // namespace lrn

Status lrn_forward(Handle& h, const LrnDesc& d, const TensorDesc& x_desc, const void* x,
                   const TensorDesc& y_desc, void* y) {
  lrn::LrnProblem p;
  p.d = d;
  p.x_desc = x_desc;
  p.y_desc = y_desc;
  p.x = x;
  p.y = y;
  return lrn::dispatch(h, "lrn_forward", p);
}

Status lrn_backward(Handle& h, const LrnDesc& d, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                    void* dx) {
  lrn::LrnProblem p;
  p.backward = true;
  p.d = d;
  p.x_desc = x_desc;
  p.y_desc = dy_desc;
  p.dx_desc = dx_desc;
  p.x = x;
  p.dy = dy;
  p.dx = dx;
  return lrn::dispatch(h, "lrn_backward", p);
}

}  // namespace tessera::dnn
