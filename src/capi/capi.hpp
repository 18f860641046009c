// Internal helpers of the C API: the handle behind tsr_blas_handle, the thread-local error
// message, the guard that keeps exceptions from crossing the C boundary, and conversions
// between the C types and the C++ ones.
#pragma once

#include <complex>
#include <exception>
#include <new>
#include <string>

#include "tessera/blas.hpp"
#include "tessera/c/blas.h"
#include "tessera/c/status.h"

struct tsr_blas_handle_s {
  tessera::blas::Handle handle;
};

namespace tessera::capi {

static_assert(static_cast<int>(StatusCode::kOk) == TSR_STATUS_OK);
static_assert(static_cast<int>(StatusCode::kInvalidArgument) == TSR_STATUS_INVALID_ARGUMENT);
static_assert(static_cast<int>(StatusCode::kUnsupported) == TSR_STATUS_UNSUPPORTED);
static_assert(static_cast<int>(StatusCode::kOutOfMemory) == TSR_STATUS_OUT_OF_MEMORY);
static_assert(static_cast<int>(StatusCode::kNotFound) == TSR_STATUS_NOT_FOUND);
static_assert(static_cast<int>(StatusCode::kParseError) == TSR_STATUS_PARSE_ERROR);
static_assert(static_cast<int>(StatusCode::kIoError) == TSR_STATUS_IO_ERROR);
static_assert(static_cast<int>(StatusCode::kUnavailable) == TSR_STATUS_UNAVAILABLE);
static_assert(static_cast<int>(StatusCode::kInternal) == TSR_STATUS_INTERNAL);

// Records a failed status's message for tsr_last_error_message(), as "<function>: <message>"
// (a leading "sgemm: " that repeats the end of the function name is dropped). Returns the
// code. Never throws: if the message cannot be stored, a fixed one is kept instead.
tsr_status record(const char* function, const Status& status) noexcept;
tsr_status record(const char* function, tsr_status code, const char* message) noexcept;

// Runs fn (returning a Status) and turns both its Status and any exception it throws into a
// tsr_status with a recorded message.
template <typename Fn>
tsr_status guard(const char* function, Fn&& fn) noexcept {
  try {
    return record(function, fn());
  } catch (const Error& e) {
    return record(function, static_cast<tsr_status>(e.code()), e.message().c_str());
  } catch (const std::bad_alloc&) {
    return record(function, TSR_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return record(function, TSR_STATUS_INTERNAL, e.what());
  } catch (...) {
    return record(function, TSR_STATUS_INTERNAL, "unknown exception");
  }
}

// guard() for calls on a BLAS handle: a null handle is an invalid argument.
template <typename Fn>
tsr_status guard(const char* function, tsr_blas_handle h, Fn&& fn) noexcept {
  if (h == nullptr) return record(function, TSR_STATUS_INVALID_ARGUMENT, "handle is null");
  return guard(function, [&] { return fn(h->handle); });
}

// Output pointers the C++ API writes without checking (scalar results).
inline Status check_result(const void* p, const char* name = "result") {
  if (p != nullptr) return Status::ok();
  return invalid_argument(std::string(name) + " is null");
}

// ---- C types -> C++ types -------------------------------------------------------------

template <typename C>
struct cpp_type {
  using type = C;
};
template <>
struct cpp_type<tsr_float_complex> {
  using type = std::complex<float>;
};
template <>
struct cpp_type<tsr_double_complex> {
  using type = std::complex<double>;
};
template <>
struct cpp_type<tsr_half> {
  using type = f16;
};
template <>
struct cpp_type<tsr_bfloat16> {
  using type = bf16;
};
template <typename C>
using cpp_t = typename cpp_type<C>::type;

static_assert(sizeof(tsr_float_complex) == sizeof(std::complex<float>) &&
              alignof(tsr_float_complex) == alignof(std::complex<float>));
static_assert(sizeof(tsr_double_complex) == sizeof(std::complex<double>) &&
              alignof(tsr_double_complex) == alignof(std::complex<double>));
static_assert(sizeof(tsr_half) == sizeof(f16) && alignof(tsr_half) == alignof(f16));
static_assert(sizeof(tsr_bfloat16) == sizeof(bf16) && alignof(tsr_bfloat16) == alignof(bf16));

// Arrays: the C and C++ element types have the same size, alignment and representation.
template <typename C>
cpp_t<C>* cpp(C* p) {
  return reinterpret_cast<cpp_t<C>*>(p);
}
template <typename C>
const cpp_t<C>* cpp(const C* p) {
  return reinterpret_cast<const cpp_t<C>*>(p);
}
template <typename C>
const cpp_t<C>* const* cpp(const C* const* p) {
  return reinterpret_cast<const cpp_t<C>* const*>(p);
}
template <typename C>
cpp_t<C>* const* cpp(C* const* p) {
  return reinterpret_cast<cpp_t<C>* const*>(p);
}

// Scalars passed by value.
inline float val(float v) {
  return v;
}
inline double val(double v) {
  return v;
}
inline std::complex<float> val(tsr_float_complex v) {
  return {v.re, v.im};
}
inline std::complex<double> val(tsr_double_complex v) {
  return {v.re, v.im};
}

// Enums are passed on as their integer values; the C++ routines reject values outside the
// range with a message naming the parameter.
inline blas::Op op(tsr_blas_op v) {
  return static_cast<blas::Op>(static_cast<int>(v));
}
inline blas::Uplo uplo(tsr_blas_uplo v) {
  return static_cast<blas::Uplo>(static_cast<int>(v));
}
inline blas::Diag diag(tsr_blas_diag v) {
  return static_cast<blas::Diag>(static_cast<int>(v));
}
inline blas::Side side(tsr_blas_side v) {
  return static_cast<blas::Side>(static_cast<int>(v));
}

}  // namespace tessera::capi
