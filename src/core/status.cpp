#include <cstdio>
#include <cstdlib>

#include <tessera/core/status.hpp>

namespace tessera {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kOutOfMemory:
      return "out of memory";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kParseError:
      return "parse error";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown status";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string s(status_code_name(code_));
  if (!message_.empty()) s += ": " + message_;
  return s;
}

Status Status::with_context(std::string_view context) const {
  if (is_ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

void Status::throw_if_error() const {
  if (!is_ok()) throw Error(*this);
}

void assert_fail(const char* condition, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "tessera: internal assertion failed at %s:%d: %s (%s)\n", file, line,
               condition, msg ? msg : "");
  std::fflush(stderr);
  std::abort();
}

}  // namespace tessera
