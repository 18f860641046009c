// DNN C API, activations: elementwise kinds, PReLU and CReLU, forward and backward.
#include "dnn_capi.hpp"

namespace {

using tessera::Status;
using tessera::capi::guard;
using tessera::capi::to_cpp;
using Handle = tessera::dnn::Handle;
namespace dnn = tessera::dnn;

}  // namespace

extern "C" {

TSR_API tsr_status tsr_dnn_activation_forward(tsr_dnn_handle h, const tsr_dnn_activation* act,
                                              const tsr_tensor_desc* x_desc, const void* x,
                                              const tsr_tensor_desc* y_desc, void* y) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::Activation a, to_cpp("act", act));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::activation_forward(hh, a, xd, x, yd, y);
  });
}

TSR_API tsr_status tsr_dnn_activation_backward(tsr_dnn_handle h, const tsr_dnn_activation* act,
                                               const tsr_tensor_desc* x_desc, const void* x,
                                               const tsr_tensor_desc* dy_desc, const void* dy,
                                               const tsr_tensor_desc* dx_desc, void* dx) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::Activation a, to_cpp("act", act));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::activation_backward(hh, a, xd, x, dyd, dy, dxd, dx);
  });
}

TSR_API tsr_status tsr_dnn_prelu_forward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                         const void* x, const float* slope, int64_t slope_count,
                                         const tsr_tensor_desc* y_desc, void* y) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::prelu_forward(hh, xd, x, slope, slope_count, yd, y);
  });
}

TSR_API tsr_status tsr_dnn_prelu_backward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                          const void* x, const float* slope, int64_t slope_count,
                                          const tsr_tensor_desc* dy_desc, const void* dy,
                                          const tsr_tensor_desc* dx_desc, void* dx, float* dslope) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::prelu_backward(hh, xd, x, slope, slope_count, dyd, dy, dxd, dx, dslope);
  });
}

TSR_API tsr_status tsr_dnn_crelu_forward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                         const void* x, const tsr_tensor_desc* y_desc, void* y) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::crelu_forward(hh, xd, x, yd, y);
  });
}

TSR_API tsr_status tsr_dnn_crelu_backward(tsr_dnn_handle h, const tsr_tensor_desc* x_desc,
                                          const void* x, const tsr_tensor_desc* dy_desc,
                                          const void* dy, const tsr_tensor_desc* dx_desc,
                                          void* dx) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::crelu_backward(hh, xd, x, dyd, dy, dxd, dx);
  });
}

}  // extern "C"
