// Public convolution entry points: validate, stage, choose, run, log.
#include <cstring>
#include <sstream>

#include "impls.hpp"

namespace tessera::dnn {
namespace conv {
namespace {

std::string spatial(const std::array<std::int64_t, 3>& v, int sr) {
  std::string s;
  for (int i = 3 - sr; i < 3; ++i) {
    if (!s.empty()) s += "x";
    s += std::to_string(v[static_cast<std::size_t>(i)]);
  }
  return s;
}

// One replayable bench command per call (TESSERA_VERBOSE=bench).
void log_bench(const Problem& p, ConvAlgo algo) {
  TESSERA_VLOG(kBench) << "tessera bench dnn conv --dir " << dir_name(p.dir) << " --dtype "
                       << dtype_name(p.dtype) << " --layout "
                       << layout_name(p.x_layout.value_or(Layout::kNCHW)) << " --mb " << p.N
                       << " --ic " << p.C << " --oc " << p.K << " --in "
                       << spatial(p.in, p.spatial_rank) << " --kernel "
                       << spatial(p.ker, p.spatial_rank) << " --stride "
                       << spatial(p.stride, p.spatial_rank) << " --dilation "
                       << spatial(p.dil, p.spatial_rank) << " --pad-begin "
                       << spatial(p.pad_b, p.spatial_rank) << " --pad-end "
                       << spatial(p.pad_e, p.spatial_rank) << " --groups " << p.G << " --algo "
                       << algo_name(algo);
}

Status run(Handle& h, const std::string& fn, Prepared& pr, ConvAlgo algo) {
  TESSERA_ASSIGN_OR_RETURN(const Algo* a, select(h, pr.p, algo, nullptr));
  log_bench(pr.p, algo);
  TESSERA_RETURN_IF_ERROR(a->impl.run(h, pr.p).with_context(fn));
  pr.commit();
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Prepared>> prepare(const std::string& fn, Problem p, const void* a,
                                          const void* b, void* c, const PostOps& post,
                                          float* dbias) {
  auto pr = std::make_unique<Prepared>();
  switch (p.dir) {
    case ConvDir::kForward: {
      const bool need = p.y_desc.numel() > 0;
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", a, need && p.x_desc.numel() > 0));
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "w", b, need && p.w_desc.numel() > 0));
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", c, need));
      pr->x = detail::stage_in(p.x_desc, a);
      pr->w = detail::stage_in(p.w_desc, b);
      pr->out = detail::stage_out(p.y_desc, c, false);
      p.x = pr->x.data;
      p.w = pr->w.data;
      p.y_out = pr->out.data;
      p.post = post;
      if (post.residual != nullptr) {
        if (post.residual == c) {
          // Aliases y: keep a copy, the algorithms overwrite y before they add it.
          pr->residual.desc = p.y_desc;
          pr->residual.desc.dtype = DType::kF32;
          pr->residual.storage.resize(static_cast<std::size_t>(p.y_desc.span()));
          if (p.dtype == DType::kF32) {
            std::memcpy(pr->residual.storage.data(), c, pr->residual.storage.size() * 4);
          } else {
            detail::Staged tmp = detail::stage_in(p.y_desc, c);
            pr->residual.storage = std::move(tmp.storage);
          }
          pr->residual.data = pr->residual.storage.data();
        } else {
          pr->residual = detail::stage_in(p.y_desc, post.residual);
        }
        p.post.residual = pr->residual.data;
      }
      break;
    }
    case ConvDir::kBackwardData: {
      const bool need = p.x_desc.numel() > 0;
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "w", a, need && p.w_desc.numel() > 0));
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", b, need && p.y_desc.numel() > 0));
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dx", c, need));
      pr->w = detail::stage_in(p.w_desc, a);
      pr->y_in = detail::stage_in(p.y_desc, b);
      pr->out = detail::stage_out(p.x_desc, c, false);
      p.w = pr->w.data;
      p.y_in = pr->y_in.data;
      p.x_out = pr->out.data;
      break;
    }
    case ConvDir::kBackwardWeights: {
      const bool need = p.w_desc.numel() > 0;
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", a, need && p.x_desc.numel() > 0));
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dy", b, (need || dbias) && p.y_desc.numel() > 0));
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "dw", c, need));
      pr->x = detail::stage_in(p.x_desc, a);
      pr->y_in = detail::stage_in(p.y_desc, b);
      pr->out = detail::stage_out(p.w_desc, c, false);
      p.x = pr->x.data;
      p.y_in = pr->y_in.data;
      p.w_out = pr->out.data;
      p.dbias = dbias;
      break;
    }
  }
  pr->p = std::move(p);
  return pr;
}

}  // namespace conv

Status conv_forward(Handle& h, const ConvDesc& c, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& w_desc, const void* w, const TensorDesc& y_desc, void* y,
                    const PostOps& post, ConvAlgo algo) {
  const std::string fn = "conv_forward";
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "conv_forward"));
  TESSERA_ASSIGN_OR_RETURN(conv::Problem p,
                           conv::make_problem(fn, ConvDir::kForward, c, x_desc, w_desc, y_desc));
  TESSERA_ASSIGN_OR_RETURN(auto pr, conv::prepare(fn, std::move(p), x, w, y, post, nullptr));
  return conv::run(h, fn, *pr, algo);
}

Status conv_backward_data(Handle& h, const ConvDesc& c, const TensorDesc& w_desc, const void* w,
                          const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                          void* dx, ConvAlgo algo) {
  const std::string fn = "conv_backward_data";
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "conv_backward_data"));
  TESSERA_ASSIGN_OR_RETURN(
      conv::Problem p,
      conv::make_problem(fn, ConvDir::kBackwardData, c, dx_desc, w_desc, dy_desc));
  TESSERA_ASSIGN_OR_RETURN(auto pr, conv::prepare(fn, std::move(p), w, dy, dx, {}, nullptr));
  return conv::run(h, fn, *pr, algo);
}

Status conv_backward_weights(Handle& h, const ConvDesc& c, const TensorDesc& x_desc,
                             const void* x, const TensorDesc& dy_desc, const void* dy,
                             const TensorDesc& dw_desc, void* dw, float* dbias, ConvAlgo algo) {
  const std::string fn = "conv_backward_weights";
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "conv_backward_weights"));
  TESSERA_ASSIGN_OR_RETURN(
      conv::Problem p,
      conv::make_problem(fn, ConvDir::kBackwardWeights, c, x_desc, dw_desc, dy_desc));
  TESSERA_ASSIGN_OR_RETURN(auto pr, conv::prepare(fn, std::move(p), x, dy, dw, {}, dbias));
  return conv::run(h, fn, *pr, algo);
}

Result<ConvChoice> choose_convolution(Handle& h, ConvDir dir, const ConvDesc& c,
                                      const TensorDesc& x_desc, const TensorDesc& w_desc,
                                      const TensorDesc& y_desc) {
  TESSERA_ASSIGN_OR_RETURN(conv::Problem p,
                           conv::make_problem("choose_convolution", dir, c, x_desc, w_desc, y_desc));
  std::string source;
  TESSERA_ASSIGN_OR_RETURN(const conv::Algo* a, conv::select(h, p, ConvAlgo::kAuto, &source));
  return ConvChoice{a->algo, a->impl.name, source};
}

}  // namespace tessera::dnn
