#include <tessera/core/dtype.hpp>
#include <tessera/core/status.hpp>

namespace tessera {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kI8:
    case DType::kU8:
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
    case DType::kI4:
    case DType::kU4:
    case DType::kI2:
    case DType::kU2:
    case DType::kF4E2M1:
    case DType::kF8E8M0:
      return 1;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
    case DType::kU16:
      return 2;
    case DType::kI32:
    case DType::kF32:
    case DType::kU32:
      return 4;
    case DType::kI64:
    case DType::kF64:
    case DType::kC64:
    case DType::kU64:
      return 8;
    case DType::kC128:
      return 16;
  }
  TESSERA_ASSERT(false, "unknown DType");
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kBool:
      return "bool";
    case DType::kI8:
      return "i8";
    case DType::kU8:
      return "u8";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kC64:
      return "c64";
    case DType::kC128:
      return "c128";
    case DType::kI16:
      return "i16";
    case DType::kU16:
      return "u16";
    case DType::kU32:
      return "u32";
    case DType::kU64:
      return "u64";
    case DType::kF8E4M3FN:
      return "f8e4m3fn";
    case DType::kF8E4M3FNUZ:
      return "f8e4m3fnuz";
    case DType::kF8E5M2:
      return "f8e5m2";
    case DType::kF8E5M2FNUZ:
      return "f8e5m2fnuz";
    case DType::kI4:
      return "i4";
    case DType::kU4:
      return "u4";
    case DType::kI2:
      return "i2";
    case DType::kU2:
      return "u2";
    case DType::kF4E2M1:
      return "f4e2m1";
    case DType::kF8E8M0:
      return "f8e8m0";
  }
  TESSERA_ASSERT(false, "unknown DType");
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

bool is_floating(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}
bool is_complex(DType t) {
  return t == DType::kC64 || t == DType::kC128;
}
bool is_integer(DType t) {
  return t == DType::kI8 || t == DType::kU8 || t == DType::kI32 || t == DType::kI64 || t == DType::kI16 ||
         t == DType::kU16 || t == DType::kU32 || t == DType::kU64 || t == DType::kI4 || t == DType::kU4 ||
         t == DType::kI2 || t == DType::kU2;
}
bool is_small_float(DType t) {
  return t == DType::kF8E4M3FN || t == DType::kF8E4M3FNUZ || t == DType::kF8E5M2 || t == DType::kF8E5M2FNUZ ||
         t == DType::kF4E2M1 || t == DType::kF8E8M0;
}

}  // namespace tessera
