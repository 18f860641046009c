// DNN C API, pooling: output shape, forward (optional indices) and backward.
#include "dnn_capi.hpp"

namespace {

using tessera::Status;
using tessera::capi::check_result;
using tessera::capi::guard;
using tessera::capi::to_cpp;
using Handle = tessera::dnn::Handle;
namespace dnn = tessera::dnn;

}  // namespace

extern "C" {

TSR_API tsr_status tsr_dnn_pooling_output_desc(const tsr_dnn_pool_desc* pool,
                                               const tsr_tensor_desc* x_desc,
                                               tsr_tensor_desc* y_desc) {
  return guard(__func__, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc x, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::PoolDesc p, to_cpp("pool", pool, x, "x_desc"));
    TESSERA_RETURN_IF_ERROR(check_result(y_desc, "y_desc"));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc y, dnn::pooling_output_desc(p, x));
    return tessera::capi::from_cpp(y, y_desc);
  });
}

TSR_API tsr_status tsr_dnn_pooling_forward(tsr_dnn_handle h, const tsr_dnn_pool_desc* pool,
                                           const tsr_tensor_desc* x_desc, const void* x,
                                           const tsr_tensor_desc* y_desc, void* y,
                                           int64_t* indices) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, to_cpp("y_desc", y_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::PoolDesc p, to_cpp("pool", pool, xd, "x_desc"));
    return dnn::pooling_forward(hh, p, xd, x, yd, y, indices);
  });
}

TSR_API tsr_status tsr_dnn_pooling_backward(tsr_dnn_handle h, const tsr_dnn_pool_desc* pool,
                                            const tsr_tensor_desc* x_desc, const void* x,
                                            const int64_t* indices, const tsr_tensor_desc* dy_desc,
                                            const void* dy, const tsr_tensor_desc* dx_desc,
                                            void* dx) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc xd, to_cpp("x_desc", x_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dyd, to_cpp("dy_desc", dy_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc dxd, to_cpp("dx_desc", dx_desc));
    TESSERA_ASSIGN_OR_RETURN(dnn::PoolDesc p, to_cpp("pool", pool, xd, "x_desc"));
    return dnn::pooling_backward(hh, p, xd, x, indices, dyd, dy, dxd, dx);
  });
}

}  // extern "C"
