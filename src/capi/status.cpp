#include <cstring>
#include <string>
#include <string_view>

#include "capi.hpp"

namespace tessera::capi {
namespace {

thread_local std::string t_last_error;

// "sgemm: lda = 3 ..." from tsr_blas_sgemm: the C name already says which routine failed.
std::string_view strip_repeated_routine(std::string_view function, std::string_view message) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string_view::npos || colon == 0) return message;
  const std::string_view routine = message.substr(0, colon);
  if (routine.find(' ') != std::string_view::npos) return message;
  if (function.size() <= routine.size() || !function.ends_with(routine)) return message;
  return message.substr(colon + 2);
}

}  // namespace

tsr_status record(const char* function, tsr_status code, const char* message) noexcept {
  if (code == TSR_STATUS_OK) return code;
  try {
    std::string text(function);
    text += ": ";
    text += strip_repeated_routine(function, message);
    t_last_error = std::move(text);
  } catch (...) {
    // Out of memory while building the message: keep a fixed one (assigning a short
    // literal into the existing buffer does not allocate when it fits).
    t_last_error.clear();
    if (t_last_error.capacity() >= std::strlen(function)) t_last_error = function;
  }
  return code;
}

tsr_status record(const char* function, const Status& status) noexcept {
  if (status.is_ok()) return TSR_STATUS_OK;
  return record(function, static_cast<tsr_status>(status.code()), status.message().c_str());
}

}  // namespace tessera::capi

extern "C" {

TSR_API const char* tsr_last_error_message(void) {
  return tessera::capi::t_last_error.c_str();
}

TSR_API const char* tsr_status_name(tsr_status status) {
  const int v = static_cast<int>(status);
  if (v < TSR_STATUS_OK || v > TSR_STATUS_INTERNAL) return "unknown status";
  // status_code_name returns views of string literals, so data() is NUL-terminated.
  return tessera::status_code_name(static_cast<tessera::StatusCode>(v)).data();
}

}  // extern "C"
