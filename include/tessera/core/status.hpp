// Status, Result<T> and Error: the error model of every tessera layer.
//
// Expected failures (bad argument, unsupported configuration, out of memory, malformed file)
// are values: functions return `Status` or `Result<T>`. The public C++ API turns them into
// `tessera::Error` exceptions with `value_or_throw()` / `throw_if_error()`. TESSERA_ASSERT is
// only for programmer bugs: it prints the failed condition and aborts.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tessera {

// Stable numeric values: the C API exposes them as tsr_status.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // a caller passed a value outside the contract
  kUnsupported = 2,      // valid request this build/device/implementation cannot serve
  kOutOfMemory = 3,
  kNotFound = 4,     // file, key, device or backend that does not exist
  kParseError = 5,   // malformed input file or text
  kIoError = 6,      // the operating system refused a read or write
  kUnavailable = 7,  // a resource exists but cannot be used now (busy, driver missing)
  kInternal = 8,     // a bug in tessera surfaced as a value (never expected)
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid argument: lda (3) < m (4)"
  std::string to_string() const;
  // Prefixes the message with where the failure happened: "reading x.npy: ...".
  Status with_context(std::string_view context) const;
  // Throws tessera::Error when not ok.
  void throw_if_error() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status unsupported(std::string m) {
  return {StatusCode::kUnsupported, std::move(m)};
}
inline Status out_of_memory(std::string m) {
  return {StatusCode::kOutOfMemory, std::move(m)};
}
inline Status not_found(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status parse_error(std::string m) {
  return {StatusCode::kParseError, std::move(m)};
}
inline Status io_error(std::string m) {
  return {StatusCode::kIoError, std::move(m)};
}
inline Status unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status internal_error(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

// The exception of the public C++ API; carries the same code as the Status it came from.
class Error : public std::runtime_error {
 public:
  explicit Error(const Status& status)
      : std::runtime_error(status.to_string()), code_(status.code()), message_(status.message()) {}
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  Status status() const { return Status(code_, message_); }

 private:
  StatusCode code_;
  std::string message_;
};

[[noreturn]] void assert_fail(const char* condition, const char* file, int line, const char* msg);

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {
    if (std::get<Status>(state_).is_ok())
      assert_fail("!status.is_ok()", __FILE__, __LINE__, "Result built from an ok Status");
  }

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return is_ok(); }

  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(state_);
  }
  // Precondition: is_ok(). Checked: a bug otherwise.
  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->checked(); }
  T& operator*() & { return checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->checked(); }
  T&& operator*() && { return std::move(checked()); }

  T value_or_throw() && {
    if (!is_ok()) throw Error(std::get<Status>(state_));
    return std::move(std::get<T>(state_));
  }

 private:
  T& checked() {
    if (!is_ok())
      assert_fail("is_ok()", __FILE__, __LINE__, std::get<Status>(state_).to_string().c_str());
    return std::get<T>(state_);
  }
  std::variant<T, Status> state_;
};

}  // namespace tessera

// For programmer bugs only: an expected failure is a Status.
#define TESSERA_ASSERT(cond, msg)                             \
  do {                                                        \
    if (!(cond)) [[unlikely]]                                 \
      ::tessera::assert_fail(#cond, __FILE__, __LINE__, msg); \
  } while (0)

#define TESSERA_CONCAT_INNER(a, b) a##b
#define TESSERA_CONCAT(a, b) TESSERA_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function when `expr` is not ok.
#define TESSERA_RETURN_IF_ERROR(expr)                     \
  do {                                                    \
    ::tessera::Status tessera_status_ = (expr);           \
    if (!tessera_status_.is_ok()) return tessera_status_; \
  } while (0)

// `TESSERA_ASSIGN_OR_RETURN(auto x, make_x());` declares x from a Result or returns its Status.
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr) \
  TESSERA_ASSIGN_OR_RETURN_IMPL(TESSERA_CONCAT(tessera_result_, __LINE__), lhs, expr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.is_ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
