// DNN C API, normalisation: batch norm (training, inference, backward), layer, group and
// instance norm forward and backward.
#include "dnn_capi.hpp"

namespace {

using tessera::Result;
using tessera::Status;
using tessera::capi::guard;
using tessera::capi::to_cpp;
using tessera::capi::to_enum;
using Handle = tessera::dnn::Handle;
namespace dnn = tessera::dnn;

Result<dnn::BatchNormMode> mode_of(tsr_dnn_batch_norm_mode mode) {
  return to_enum<dnn::BatchNormMode>("mode", "", mode, 2, "tsr_dnn_batch_norm_mode");
}

}  // namespace

extern "C" {

// ---- batch norm ----
TSR_API tsr_status tsr_dnn_batch_norm_forward_training(
    tsr_dnn_handle h, tsr_dnn_batch_norm_mode mode, const tsr_tensor_desc* x_desc, const void* x,
    const float* scale, const float* bias, double epsilon, double momentum, float* running_mean,
    float* running_var, float* saved_mean, float* saved_invstd, const tsr_tensor_desc* y_desc,
    void* y) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::BatchNormMode m, mode_of(mode));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::batch_norm_forward_training(hh, m, xd, x, scale, bias, epsilon, momentum,
                                            running_mean, running_var, saved_mean, saved_invstd, yd,
                                            y);
  });
}

TSR_API tsr_status tsr_dnn_batch_norm_forward_inference(
    tsr_dnn_handle h, tsr_dnn_batch_norm_mode mode, const tsr_tensor_desc* x_desc, const void* x,
    const float* scale, const float* bias, const float* mean, const float* var, double epsilon,
    const tsr_tensor_desc* y_desc, void* y) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::BatchNormMode m, mode_of(mode));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::batch_norm_forward_inference(hh, m, xd, x, scale, bias, mean, var, epsilon, yd, y);
  });
}

TSR_API tsr_status tsr_dnn_batch_norm_backward(tsr_dnn_handle h, tsr_dnn_batch_norm_mode mode,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const float* scale, const float* saved_mean,
                                               const float* saved_invstd,
                                               const tsr_tensor_desc* dx_desc, void* dx,
                                               float* dscale, float* dbias) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::BatchNormMode m, mode_of(mode));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::batch_norm_backward(hh, m, xd, x, dyd, dy, scale, saved_mean, saved_invstd, dxd, dx,
                                    dscale, dbias);
  });
}

// ---- layer norm ----
TSR_API tsr_status tsr_dnn_layer_norm_forward(tsr_dnn_handle h, int axis,
                                              const tsr_tensor_desc* x_desc, const void* x,
                                              const float* scale, const float* bias, double epsilon,
                                              const tsr_tensor_desc* y_desc, void* y, float* mean,
                                              float* invstd) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::layer_norm_forward(hh, axis, xd, x, scale, bias, epsilon, yd, y, mean, invstd);
  });
}

TSR_API tsr_status tsr_dnn_layer_norm_backward(tsr_dnn_handle h, int axis,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const float* scale, const float* mean,
                                               const float* invstd, const tsr_tensor_desc* dx_desc,
                                               void* dx, float* dscale, float* dbias) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::layer_norm_backward(hh, axis, xd, x, dyd, dy, scale, mean, invstd, dxd, dx, dscale,
                                    dbias);
  });
}

// ---- group norm ----
TSR_API tsr_status tsr_dnn_group_norm_forward(tsr_dnn_handle h, int64_t groups,
                                              const tsr_tensor_desc* x_desc, const void* x,
                                              const float* scale, const float* bias, double epsilon,
                                              const tsr_tensor_desc* y_desc, void* y, float* mean,
                                              float* invstd) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::group_norm_forward(hh, groups, xd, x, scale, bias, epsilon, yd, y, mean, invstd);
  });
}

TSR_API tsr_status tsr_dnn_group_norm_backward(tsr_dnn_handle h, int64_t groups,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const float* scale, const float* mean,
                                               const float* invstd, const tsr_tensor_desc* dx_desc,
                                               void* dx, float* dscale, float* dbias) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::group_norm_backward(hh, groups, xd, x, dyd, dy, scale, mean, invstd, dxd, dx,
                                    dscale, dbias);
  });
}

// ---- instance norm ----
TSR_API tsr_status tsr_dnn_instance_norm_forward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                                 const void* x, const float* scale,
                                                 const float* bias, double epsilon,
                                                 const tsr_tensor_desc* y_desc, void* y,
                                                 float* mean, float* invstd) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::instance_norm_forward(hh, xd, x, scale, bias, epsilon, yd, y, mean, invstd);
  });
}

TSR_API tsr_status tsr_dnn_instance_norm_backward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                                  const void* x, const tsr_tensor_desc* dy_desc,
                                                  const void* dy, const float* scale,
                                                  const float* mean, const float* invstd,
                                                  const tsr_tensor_desc* dx_desc, void* dx,
                                                  float* dscale, float* dbias) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::instance_norm_backward(hh, xd, x, dyd, dy, scale, mean, invstd, dxd, dx, dscale,
                                       dbias);
  });
}

}  // extern "C"
