// Internal helpers of the DNN C API: the handle behind tsr_dnn_handle, and the checked
// conversions of the C descriptors and enums into their C++ counterparts. Each conversion
// rejects what the C++ types cannot express (null pointers, ranks outside 0..8, enum values
// outside their range) with a message naming the parameter.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "capi.hpp"
#include "tessera/c/dnn.h"
#include "tessera/dnn.hpp"

struct tsr_dnn_handle_s {
  tessera::dnn::Handle handle;
};

namespace tessera::capi {

// guard() for calls on a DNN handle: a null handle is an invalid argument.
template <typename Fn>
tsr_status guard(const char* function, tsr_dnn_handle h, Fn&& fn) noexcept {
  if (h == nullptr) return record(function, TSR_STATUS_INVALID_ARGUMENT, "handle is null");
  return guard(function, [&] { return fn(h->handle); });
}

// An enum value of a C enum with `count` enumerators 0..count-1. The parameter is named
// `name` followed by `field` ("x_desc" "->dtype"), joined only for the message:
// "algo = 42 is not a tsr_dnn_conv_algo (0 to 8)".
Status check_enum(std::string_view name, std::string_view field, int value, int count,
                  const char* type_name);

// The C++ value of a checked C enum (the enumerators have the same values).
template <typename E, typename C>
Result<E> to_enum(std::string_view name, std::string_view field, C value, int count,
                  const char* type_name) {
  const int v = static_cast<int>(value);
  TESSERA_RETURN_IF_ERROR(check_enum(name, field, v, count, type_name));
  return static_cast<E>(v);
}

Result<dnn::TensorDesc> to_cpp(const char* name, const tsr_tensor_desc* d);
// Writes a C++ descriptor into *out (rank <= TSR_TENSOR_MAX_RANK; unused entries zeroed).
Status from_cpp(const dnn::TensorDesc& d, tsr_tensor_desc* out);

Result<dnn::Activation> to_cpp(const char* name, const tsr_dnn_activation* a);
// The activation of a struct member, its kind field named `name` + `field` ("post", "->act.kind").
Result<dnn::Activation> activation_of(std::string_view name, std::string_view field,
                                      const tsr_dnn_activation& a);
// `ref` is the tensor whose rank fixes the number of spatial dims (x, or dx for backward data);
// `ref_name` names it in messages.
Result<dnn::ConvDesc> to_cpp(const char* name, const tsr_dnn_conv_desc* c,
                             const dnn::TensorDesc& ref, const char* ref_name);
Result<dnn::PoolDesc> to_cpp(const char* name, const tsr_dnn_pool_desc* p, const dnn::TensorDesc& x,
                             const char* x_name);
Result<dnn::LrnDesc> to_cpp(const char* name, const tsr_dnn_lrn_desc* d);

// Copies s into dst[0..cap), cut to fit and NUL-terminated.
void copy_text(char* dst, std::size_t cap, std::string_view s);

}  // namespace tessera::capi
