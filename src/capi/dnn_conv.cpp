// DNN C API, convolution: output shape, forward (post-ops), backward data and weights, and the
// immediate-mode choice and Find mode.
#include <algorithm>

#include "dnn_capi.hpp"

namespace {

using tessera::Result;
using tessera::Status;
using tessera::capi::check_result;
using tessera::capi::copy_text;
using tessera::capi::guard;
using tessera::capi::to_cpp;
using tessera::capi::to_enum;
using Handle = tessera::dnn::Handle;
namespace dnn = tessera::dnn;

constexpr int kAlgoCount = TSR_DNN_CONV_ALGO_REFERENCE + 1;
constexpr int kDirCount = TSR_DNN_CONV_BACKWARD_WEIGHTS + 1;

Result<dnn::ConvAlgo> algo_of(tsr_dnn_conv_algo algo) {
  return to_enum<dnn::ConvAlgo>("algo", "", algo, kAlgoCount, "tsr_dnn_conv_algo");
}

// The converted arguments shared by choose and find: dir, the descriptor and three tensors
// (x_desc is dx for backward data; w_desc is dw for backward weights; y_desc is dy backward).
struct Problem {
  dnn::ConvDir dir = dnn::ConvDir::kForward;
  dnn::ConvDesc conv;
  dnn::TensorDesc x, w, y;
};

Result<Problem> problem_of(tsr_dnn_conv_dir dir, const tsr_dnn_conv_desc* conv,
                           const tsr_tensor_desc* x_desc, const tsr_tensor_desc* w_desc,
                           const tsr_tensor_desc* y_desc) {
  Problem p;
  TESSERA_ASSIGN_OR_RETURN(p.dir,
                           (to_enum<dnn::ConvDir>("dir", "", dir, kDirCount, "tsr_dnn_conv_dir")));
  TESSERA_ASSIGN_OR_RETURN(p.x, to_cpp("x_desc", x_desc));
  TESSERA_ASSIGN_OR_RETURN(p.w, to_cpp("w_desc", w_desc));
  TESSERA_ASSIGN_OR_RETURN(p.y, to_cpp("y_desc", y_desc));
  TESSERA_ASSIGN_OR_RETURN(p.conv, to_cpp("conv", conv, p.x, "x_desc"));
  return p;
}

Result<dnn::PostOps> post_of(const tsr_dnn_post_ops* post) {
  dnn::PostOps po;
  if (post != nullptr) {
    TESSERA_ASSIGN_OR_RETURN(po.act, tessera::capi::activation_of("post", "->act.kind", post->act));
    po.bias = post->bias;
    po.residual = post->residual;
  }
  return po;
}

}  // namespace

struct tsr_dnn_conv_plan_s {
  dnn::ConvForwardPlan plan;
};

extern "C" {

TSR_API tsr_status tsr_dnn_conv_output_desc(const tsr_dnn_conv_desc* conv,
                                            const tsr_tensor_desc* x_desc,
                                            const tsr_tensor_desc* w_desc,
                                            tsr_tensor_desc* y_desc) {
  return guard(__func__, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc x, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc w, to_cpp("w_desc", w_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvDesc c, to_cpp("conv", conv, x, "x_desc"));
    TESSERA_RETURN_IF_ERROR(check_result(y_desc, "y_desc"));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc y, dnn::conv_output_desc(c, x, w));
    return tessera::capi::from_cpp(y, y_desc);
  });
}

TSR_API tsr_status tsr_dnn_conv_forward(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                        const tsr_tensor_desc* x_desc, const void* x,
                                        const tsr_tensor_desc* w_desc, const void* w,
                                        const tsr_tensor_desc* y_desc, void* y,
                                        const tsr_dnn_post_ops* post, tsr_dnn_conv_algo algo) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc wd, to_cpp("w_desc", w_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvDesc c, to_cpp("conv", conv, xd, "x_desc"));
    TESSERA_ASSIGN_OR_RETURN(dnn::PostOps po, post_of(post));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvAlgo a, algo_of(algo));
    return dnn::conv_forward(hh, c, xd, x, wd, w, yd, y, po, a);
  });
}

TSR_API tsr_status tsr_dnn_conv_plan_create(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                            const tsr_tensor_desc* x_desc,
                                            const tsr_tensor_desc* w_desc, const void* w,
                                            const tsr_tensor_desc* y_desc, tsr_dnn_conv_algo algo,
                                            tsr_dnn_conv_plan* plan) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(plan, "plan"));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc wd, to_cpp("w_desc", w_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvDesc c, to_cpp("conv", conv, xd, "x_desc"));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvAlgo a, algo_of(algo));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvForwardPlan made,
                             dnn::ConvForwardPlan::create(hh, c, xd, wd, w, yd, a));
    *plan = new tsr_dnn_conv_plan_s{std::move(made)};
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_conv_plan_run(tsr_dnn_handle h, tsr_dnn_conv_plan plan, const void* x,
                                         void* y, const tsr_dnn_post_ops* post) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    if (plan == nullptr) return tessera::invalid_argument("plan is null");
    TESSERA_ASSIGN_OR_RETURN(dnn::PostOps po, post_of(post));
    return plan->plan.run(hh, x, y, po);
  });
}

TSR_API tsr_status tsr_dnn_conv_plan_algo(tsr_dnn_conv_plan plan, tsr_dnn_conv_algo* algo) {
  return guard(__func__, [&]() -> Status {
    if (plan == nullptr) return tessera::invalid_argument("plan is null");
    TESSERA_RETURN_IF_ERROR(check_result(algo, "algo"));
    *algo = static_cast<tsr_dnn_conv_algo>(static_cast<int>(plan->plan.algo()));
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_conv_plan_destroy(tsr_dnn_conv_plan plan) {
  delete plan;
  return TSR_STATUS_OK;
}

TSR_API tsr_status tsr_dnn_conv_backward_data(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                              const tsr_tensor_desc* w_desc, const void* w,
                                              const tsr_tensor_desc* dy_desc, const void* dy,
                                              const tsr_tensor_desc* dx_desc, void* dx,
                                              tsr_dnn_conv_algo algo) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc wd, to_cpp("w_desc", w_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvDesc c, to_cpp("conv", conv, dxd, "dx_desc"));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvAlgo a, algo_of(algo));
    return dnn::conv_backward_data(hh, c, wd, w, dyd, dy, dxd, dx, a);
  });
}

TSR_API tsr_status tsr_dnn_conv_backward_weights(tsr_dnn_handle h, const tsr_dnn_conv_desc* conv,
                                                 const tsr_tensor_desc* x_desc, const void* x,
                                                 const tsr_tensor_desc* dy_desc, const void* dy,
                                                 const tsr_tensor_desc* dw_desc, void* dw,
                                                 float* dbias, tsr_dnn_conv_algo algo) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dwd, to_cpp("dw_desc", dw_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvDesc c, to_cpp("conv", conv, xd, "x_desc"));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvAlgo a, algo_of(algo));
    return dnn::conv_backward_weights(hh, c, xd, x, dyd, dy, dwd, dw, dbias, a);
  });
}

TSR_API tsr_status tsr_dnn_choose_convolution(tsr_dnn_handle h, tsr_dnn_conv_dir dir,
                                              const tsr_dnn_conv_desc* conv,
                                              const tsr_tensor_desc* x_desc,
                                              const tsr_tensor_desc* w_desc,
                                              const tsr_tensor_desc* y_desc,
                                              tsr_dnn_conv_choice* choice) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(Problem p, problem_of(dir, conv, x_desc, w_desc, y_desc));
    TESSERA_RETURN_IF_ERROR(check_result(choice, "choice"));
    TESSERA_ASSIGN_OR_RETURN(dnn::ConvChoice c,
                             dnn::choose_convolution(hh, p.dir, p.conv, p.x, p.w, p.y));
    tsr_dnn_conv_choice out{};
    out.algo = static_cast<tsr_dnn_conv_algo>(static_cast<int>(c.algo));
    copy_text(out.impl, sizeof out.impl, c.impl);
    copy_text(out.source, sizeof out.source, c.source);
    *choice = out;
    return Status::ok();
  });
}

TSR_API tsr_status
tsr_dnn_find_convolution(tsr_dnn_handle h, tsr_dnn_conv_dir dir, const tsr_dnn_conv_desc* conv,
                         const tsr_tensor_desc* x_desc, const tsr_tensor_desc* w_desc,
                         const tsr_tensor_desc* y_desc, const tsr_dnn_find_options* options,
                         tsr_dnn_conv_candidate* candidates, int32_t capacity, int32_t* count) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(Problem p, problem_of(dir, conv, x_desc, w_desc, y_desc));
    if (capacity < 0)
      return tessera::invalid_argument("capacity = " + std::to_string(capacity) + " must be >= 0");
    if (capacity > 0) TESSERA_RETURN_IF_ERROR(check_result(candidates, "candidates"));
    TESSERA_RETURN_IF_ERROR(check_result(count, "count"));
    dnn::FindOptions o;
    if (options != nullptr) {
      o.min_seconds_per_algo = options->min_seconds_per_algo;
      o.min_samples = options->min_samples;
      o.record = options->record != 0;
      o.include_reference = options->include_reference != 0;
    }
    TESSERA_ASSIGN_OR_RETURN(std::vector<dnn::ConvCandidate> found,
                             dnn::find_convolution(hh, p.dir, p.conv, p.x, p.w, p.y, o));
    const auto n = std::min<std::size_t>(found.size(), static_cast<std::size_t>(capacity));
    for (std::size_t i = 0; i < n; ++i) {
      const dnn::ConvCandidate& f = found[i];
      tsr_dnn_conv_candidate c{};
      c.algo = static_cast<tsr_dnn_conv_algo>(static_cast<int>(f.algo));
      c.accepted = f.accepted ? 1 : 0;
      copy_text(c.impl, sizeof c.impl, f.impl);
      copy_text(c.reason, sizeof c.reason, f.reason);
      c.median_us = f.median_us;
      c.spread_us = f.spread_us;
      c.samples = f.samples;
      candidates[i] = c;
    }
    *count = static_cast<int32_t>(n);
    return Status::ok();
  });
}

}  // extern "C"
