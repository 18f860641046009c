// Element types of tensors.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <tessera/core/half.hpp>

namespace tessera {

enum class DType : std::uint8_t {
  kBool,
  kI8,
  kU8,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,   // complex<float>
  kC128,  // complex<double>
  // The rest of ONNX's integer types (after the others, so existing numbers stay): storage,
  // casts and the executor's integer ops; the dnn primitives compute on the types above.
  kI16,
  kU16,
  kU32,
  kU64,
  // ONNX's 8-bit floats (tessera/core/float8.hpp): storage and casts; ops compute on them
  // through f32.
  kF8E4M3FN,
  kF8E4M3FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  // ONNX's sub-byte types and the e8m0 scale format, held one element per byte (ml_dtypes'
  // layout): i4 and i2 as sign-extended i8 values, u4 and u2 as u8 values, f4e2m1 as its 4-bit
  // code, f8e8m0 as its exponent byte. ONNX files pack the sub-byte ones (graph::Constant keeps
  // them packed); storage and casts only, ops compute on them through wider types.
  kI4,
  kU4,
  kI2,
  kU2,
  kF4E2M1,
  kF8E8M0,
};

inline constexpr DType kAllDTypes[] = {DType::kBool, DType::kI8,  DType::kU8,   DType::kI32,
                                       DType::kI64,  DType::kF16, DType::kBF16, DType::kF32,
                                       DType::kF64,  DType::kC64, DType::kC128, DType::kI16,
                                       DType::kU16,  DType::kU32, DType::kU64, DType::kF8E4M3FN,
                                       DType::kF8E4M3FNUZ, DType::kF8E5M2, DType::kF8E5M2FNUZ, DType::kI4,
                                       DType::kU4, DType::kI2, DType::kU2, DType::kF4E2M1, DType::kF8E8M0};

std::size_t dtype_size(DType t);
// Short names used everywhere (CLI, logs, npy errors): bool i8 u8 i32 i64 f16 bf16 f32 f64 c64
// c128 i16 u16 u32 u64 f8e4m3fn f8e4m3fnuz f8e5m2 f8e5m2fnuz i4 u4 i2 u2 f4e2m1 f8e8m0.
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
bool is_floating(DType t);  // f16 bf16 f32 f64
bool is_complex(DType t);
bool is_integer(DType t);  // i8 u8 i16 u16 i32 u32 i64 u64 i4 u4 i2 u2 (bool is not)
// The 8-, 6- and 4-bit float formats (float8.hpp), which is_floating leaves out.
bool is_small_float(DType t);

// The DType of a C++ element type: dtype_of<float>() == DType::kF32.
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}
template <>
constexpr DType dtype_of<std::int8_t>() {
  return DType::kI8;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::kU8;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::kI32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::kI64;
}
template <>
constexpr DType dtype_of<f16>() {
  return DType::kF16;
}
template <>
constexpr DType dtype_of<bf16>() {
  return DType::kBF16;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::kF32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kF64;
}
template <>
constexpr DType dtype_of<std::complex<float>>() {
  return DType::kC64;
}
template <>
constexpr DType dtype_of<std::complex<double>>() {
  return DType::kC128;
}
template <>
constexpr DType dtype_of<std::int16_t>() {
  return DType::kI16;
}
template <>
constexpr DType dtype_of<std::uint16_t>() {
  return DType::kU16;
}
template <>
constexpr DType dtype_of<std::uint32_t>() {
  return DType::kU32;
}
template <>
constexpr DType dtype_of<std::uint64_t>() {
  return DType::kU64;
}

}  // namespace tessera
