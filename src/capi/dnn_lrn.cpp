// DNN C API, local response normalisation (across and within channels), forward and backward.
#include "dnn_capi.hpp"

namespace {

using tessera::Status;
using tessera::capi::guard;
using tessera::capi::to_cpp;
using Handle = tessera::dnn::Handle;
namespace dnn = tessera::dnn;

}  // namespace

extern "C" {

TSR_API tsr_status tsr_dnn_lrn_forward(tsr_dnn_handle h, const tsr_dnn_lrn_desc* lrn,
                                       const tsr_tensor_desc* x_desc, const void* x,
                                       const tsr_tensor_desc* y_desc, void* y) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::LrnDesc d, to_cpp("lrn", lrn));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    return dnn::lrn_forward(hh, d, xd, x, yd, y);
  });
}

TSR_API tsr_status tsr_dnn_lrn_backward(tsr_dnn_handle h, const tsr_dnn_lrn_desc* lrn,
                                        const tsr_tensor_desc* x_desc, const void* x,
                                        const tsr_tensor_desc* dy_desc, const void* dy,
                                        const tsr_tensor_desc* dx_desc, void* dx) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::LrnDesc d, to_cpp("lrn", lrn));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    return dnn::lrn_backward(hh, d, xd, x, dyd, dy, dxd, dx);
  });
}

}  // extern "C"
