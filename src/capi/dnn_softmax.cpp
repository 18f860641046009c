// DNN C API, softmax and log-softmax over one axis, forward and backward.
#include "dnn_capi.hpp"

namespace {

using tessera::Result;
using tessera::Status;
using tessera::capi::guard;
using tessera::capi::to_cpp;
using tessera::capi::to_enum;
using Handle = tessera::dnn::Handle;
namespace dnn = tessera::dnn;

Result<dnn::SoftmaxMode> mode_of(tsr_dnn_softmax_mode mode) {
  return to_enum<dnn::SoftmaxMode>("mode", "", mode, 2, "tsr_dnn_softmax_mode");
}

}  // namespace

extern "C" {

TSR_API tsr_status tsr_dnn_softmax_forward(tsr_dnn_handle h, tsr_dnn_softmax_mode mode, int axis,
                                           const tsr_tensor_desc* x_desc, const void* x,
                                           const tsr_tensor_desc* y_desc, void* y) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::SoftmaxMode m, mode_of(mode));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::softmax_forward(hh, m, axis, xd, x, yd, y);
  });
}

TSR_API tsr_status tsr_dnn_softmax_backward(tsr_dnn_handle h, tsr_dnn_softmax_mode mode, int axis,
                                            const tsr_tensor_desc* y_desc, const void* y,
                                            const tsr_tensor_desc* dy_desc, const void* dy,
                                            const tsr_tensor_desc* dx_desc, void* dx) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::SoftmaxMode m, mode_of(mode));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::softmax_backward(hh, m, axis, yd, y, dyd, dy, dxd, dx);
  });
}

}  // extern "C"
