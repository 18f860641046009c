// Forward convolution plans: the algorithm chosen and the weights copied (f32) and packed
// once; each run stages x and y like conv_forward and runs the chosen implementation on the
// plan's weights.
#include "impls.hpp"

namespace tessera::dnn {

struct ConvForwardPlan::State {
  conv::Problem p;  // pointers unset; w_desc describes `w` (f32, the caller's strides)
  // p without its descriptors (the algorithms read the normalised fields only): an f32 run
  // copies this one, so a call allocates nothing before the algorithm does.
  conv::Problem bare;
  const conv::Algo* algo = nullptr;
  std::string impl;
  std::vector<float> w;       // the caller's weights, f32, over w_desc's span
  conv::PackedWeights packed;  // algo->pack's layout (empty: the algorithm reads w)
};

Result<ConvForwardPlan> ConvForwardPlan::create(Handle& h, const ConvDesc& c,
                                                const TensorDesc& x_desc,
                                                const TensorDesc& w_desc, const void* w,
                                                const TensorDesc& y_desc, ConvAlgo algo) {
  const std::string fn = "ConvForwardPlan::create";
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "ConvForwardPlan::create"));
  TESSERA_ASSIGN_OR_RETURN(conv::Problem p, conv::make_problem(fn, ConvDir::kForward, c, x_desc,
                                                               w_desc, y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "w", w, w_desc.numel() > 0));
  auto s = std::make_shared<State>();
  p.planned = true;
  TESSERA_ASSIGN_OR_RETURN(s->algo, conv::select(h, p, algo, nullptr));
  s->impl = s->algo->impl.name;
  const detail::Staged staged = detail::stage_in(w_desc, w);
  s->w.assign(staged.data, staged.data + w_desc.span());
  p.w_desc.dtype = DType::kF32;  // what run() hands to the staging: the f32 copy
  if (s->algo->pack != nullptr) {
    conv::Problem q = p;
    q.w = s->w.data();
    s->algo->pack(h, q, s->packed);
  }
  s->bare = p;
  s->bare.conv = {};
  s->bare.x_desc = s->bare.w_desc = s->bare.y_desc = {};
  s->p = std::move(p);
  return ConvForwardPlan(std::move(s));
}

Status ConvForwardPlan::run(Handle& h, const void* x, void* y, const PostOps& post) const {
  static constexpr const char* kFn = "ConvForwardPlan::run";
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, kFn));
  const conv::Problem& p = s_->p;
  if (p.dtype == DType::kF32 && (post.residual == nullptr || post.residual != y)) {
    // Nothing to stage: run on the caller's memory (small layers run in microseconds, and
    // the general path's descriptor copies cost a tenth of that).
    if (x == nullptr || y == nullptr) {  // (check_ptr builds strings: only on the way to an error)
      const bool need = p.y_desc.numel() > 0;
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(kFn, "x", x, need && p.x_desc.numel() > 0));
      TESSERA_RETURN_IF_ERROR(detail::check_ptr(kFn, "y", y, need));
    }
    conv::Problem q = s_->bare;
    q.x = static_cast<const float*>(x);
    q.w = s_->w.data();
    q.y_out = static_cast<float*>(y);
    q.post = post;
    q.w_packed = s_->packed.data();
    Status st = s_->algo->impl.run(h, q);
    return st.is_ok() ? st : st.with_context(kFn);
  }
  TESSERA_ASSIGN_OR_RETURN(auto pr, conv::prepare(kFn, p, x, s_->w.data(), y, post, nullptr));
  pr->p.w_packed = s_->packed.data();
  TESSERA_RETURN_IF_ERROR(s_->algo->impl.run(h, pr->p).with_context(kFn));
  pr->commit();
  return Status::ok();
}

ConvAlgo ConvForwardPlan::algo() const { return s_->algo->algo; }
const std::string& ConvForwardPlan::impl() const { return s_->impl; }
std::size_t ConvForwardPlan::packed_bytes() const { return s_->packed.size() * sizeof(float); }

}  // namespace tessera::dnn
