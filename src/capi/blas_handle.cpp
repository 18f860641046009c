// tsr_blas_handle: creation, destruction and settings.
#include "capi.hpp"

using tessera::Status;
using tessera::capi::check_result;
using tessera::capi::guard;
using Handle = tessera::blas::Handle;

extern "C" {

TSR_API tsr_status tsr_blas_create_handle(tsr_blas_handle* handle) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(handle, "handle"));
    *handle = new tsr_blas_handle_s();
    return Status::ok();
  });
}

TSR_API tsr_status tsr_blas_destroy_handle(tsr_blas_handle handle) {
  delete handle;
  return TSR_STATUS_OK;
}

TSR_API tsr_status tsr_blas_set_num_threads(tsr_blas_handle h, int num_threads) {
  return guard(__func__, h, [&](Handle& hh) { return hh.set_num_threads(num_threads); });
}

TSR_API tsr_status tsr_blas_get_num_threads(tsr_blas_handle h, int* num_threads) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(num_threads, "num_threads"));
    *num_threads = hh.num_threads();
    return Status::ok();
  });
}

TSR_API tsr_status tsr_blas_set_determinism(tsr_blas_handle h, tsr_blas_determinism mode) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    const int v = static_cast<int>(mode);
    if (v != TSR_BLAS_DETERMINISM_BITWISE && v != TSR_BLAS_DETERMINISM_ANY)
      return tessera::invalid_argument("mode = " + std::to_string(v) +
                                       " is not 0 (bitwise) or 1 (any)");
    hh.set_determinism(static_cast<tessera::blas::Determinism>(v));
    return Status::ok();
  });
}

TSR_API tsr_status tsr_blas_get_determinism(tsr_blas_handle h, tsr_blas_determinism* mode) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(mode, "mode"));
    *mode = static_cast<tsr_blas_determinism>(static_cast<int>(hh.determinism()));
    return Status::ok();
  });
}

TSR_API tsr_status tsr_blas_set_workspace(tsr_blas_handle h, void* ptr, size_t bytes) {
  return guard(__func__, h, [&](Handle& hh) { return hh.set_workspace(ptr, bytes); });
}

TSR_API tsr_status tsr_blas_get_workspace_size(tsr_blas_handle h, size_t* bytes) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(bytes, "bytes"));
    *bytes = hh.workspace_bytes();
    return Status::ok();
  });
}

}  // extern "C"
