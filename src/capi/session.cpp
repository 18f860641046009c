// The C API of sessions (include/tessera/c/session.h) over tessera::exec::Session.
#include <string>
#include <vector>

#include "capi.hpp"
#include "dnn_capi.hpp"
#include "tessera/c/session.h"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/session.hpp"

struct tsr_session_s {
  tessera::exec::Session session;
  tessera::dnn::Handle h;  // for copying inputs in
  std::vector<tessera::exec::NamedTensor> outputs;  // of the last successful run
  bool ran = false;
};

namespace tessera::capi {
namespace {

template <typename Fn>
tsr_status with_session(const char* fn, tsr_session s, Fn&& body) noexcept {
  if (s == nullptr) return record(fn, TSR_STATUS_INVALID_ARGUMENT, "session is null");
  return guard(fn, [&] { return body(*s); });
}

Status index_in(int32_t i, std::size_t count, const char* what) {
  if (i >= 0 && static_cast<std::size_t>(i) < count) return Status::ok();
  return invalid_argument(std::string(what) + " " + std::to_string(i) + " is out of range (the model has " + std::to_string(count) + ")");
}

}  // namespace
}  // namespace tessera::capi

using namespace tessera;

extern "C" {

tsr_status tsr_session_open(const char* model_path, int32_t threads, tsr_session* session) {
  if (session != nullptr) *session = nullptr;
  return capi::guard("tsr_session_open", [&]() -> Status {
    if (model_path == nullptr) return invalid_argument("model_path is null");
    if (session == nullptr) return invalid_argument("session is null");
    exec::SessionOptions options;
    options.threads = threads;
    TESSERA_ASSIGN_OR_RETURN(exec::Session s, exec::Session::open(model_path, options));
    *session = new tsr_session_s{std::move(s), {}, {}, false};
    return Status::ok();
  });
}

tsr_status tsr_session_destroy(tsr_session session) {
  delete session;
  return TSR_STATUS_OK;
}

tsr_status tsr_session_input_count(tsr_session session, int32_t* count) {
  return capi::with_session("tsr_session_input_count", session, [&](tsr_session_s& s) -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_result(count, "count"));
    *count = static_cast<int32_t>(s.session.inputs().size());
    return Status::ok();
  });
}

tsr_status tsr_session_output_count(tsr_session session, int32_t* count) {
  return capi::with_session("tsr_session_output_count", session, [&](tsr_session_s& s) -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_result(count, "count"));
    *count = static_cast<int32_t>(s.session.outputs().size());
    return Status::ok();
  });
}

tsr_status tsr_session_input_name(tsr_session session, int32_t i, const char** name) {
  return capi::with_session("tsr_session_input_name", session, [&](tsr_session_s& s) -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_result(name, "name"));
    TESSERA_RETURN_IF_ERROR(capi::index_in(i, s.session.inputs().size(), "input"));
    *name = s.session.inputs()[static_cast<std::size_t>(i)].name.c_str();
    return Status::ok();
  });
}

tsr_status tsr_session_output_name(tsr_session session, int32_t i, const char** name) {
  return capi::with_session("tsr_session_output_name", session, [&](tsr_session_s& s) -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_result(name, "name"));
    TESSERA_RETURN_IF_ERROR(capi::index_in(i, s.session.outputs().size(), "output"));
    *name = s.session.outputs()[static_cast<std::size_t>(i)].name.c_str();
    return Status::ok();
  });
}

tsr_status tsr_session_run(tsr_session session, int32_t n, const char* const* names, const tsr_tensor_desc* descs,
                           const void* const* data) {
  return capi::with_session("tsr_session_run", session, [&](tsr_session_s& s) -> Status {
    if (n < 0) return invalid_argument("n = " + std::to_string(n) + " is negative");
    if (n > 0 && (names == nullptr || descs == nullptr || data == nullptr)) return invalid_argument("names, descs or data is null");
    std::vector<exec::NamedTensor> inputs;
    for (int32_t k = 0; k < n; ++k) {
      const std::string what = "input " + std::to_string(k);
      if (names[k] == nullptr) return invalid_argument(what + ": its name is null");
      TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc d, capi::to_cpp(("descs[" + std::to_string(k) + "]").c_str(), &descs[k]));
      if (data[k] == nullptr && d.numel() > 0) return invalid_argument(what + " ('" + names[k] + "'): data is null");
      TESSERA_ASSIGN_OR_RETURN(Shape shape, Shape::make(d.dims));
      TESSERA_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(shape, d.dtype));
      if (d.numel() > 0) TESSERA_RETURN_IF_ERROR(dnn::cast(s.h, d, data[k], dnn::TensorDesc{t.dtype(), t.shape().dims(), t.strides()}, t.data()));
      inputs.push_back({names[k], std::move(t)});
    }
    TESSERA_ASSIGN_OR_RETURN(s.outputs, s.session.run(inputs));
    s.ran = true;
    return Status::ok();
  });
}

tsr_status tsr_session_output(tsr_session session, int32_t i, tsr_tensor_desc* desc, const void** data) {
  return capi::with_session("tsr_session_output", session, [&](tsr_session_s& s) -> Status {
    TESSERA_RETURN_IF_ERROR(capi::check_result(desc, "desc"));
    TESSERA_RETURN_IF_ERROR(capi::check_result(data, "data"));
    if (!s.ran) return invalid_argument("the session has not run yet");
    TESSERA_RETURN_IF_ERROR(capi::index_in(i, s.outputs.size(), "output"));
    const Tensor& t = s.outputs[static_cast<std::size_t>(i)].tensor;
    TESSERA_RETURN_IF_ERROR(capi::from_cpp(dnn::TensorDesc{t.dtype(), t.shape().dims(), t.strides()}, desc));
    *data = t.data();
    return Status::ok();
  });
}

}  // extern "C"
