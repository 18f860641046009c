// Host tensors for the tensor-operation tests: any layout (packed, dims reversed in memory,
// gaps between elements), random fills with the special values of each dtype, element access
// and an element-by-element comparison that also checks the gaps were left alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

namespace tessera::dnn::tensor_test {

using i64 = std::int64_t;

constexpr DType kTypes[] = {DType::kBool, DType::kI8,   DType::kU8,  DType::kI32, DType::kI64,
                            DType::kF16,  DType::kBF16, DType::kF32, DType::kF64};
// ONNX's other integer types: storage and casts only (the executor widens them to compute).
constexpr DType kStorageTypes[] = {DType::kI16, DType::kU16, DType::kU32, DType::kU64};

// A host tensor: dims, strides (packed row-major, dims reversed in memory, or with gaps) and
// storage covering its span.
struct T {
  TensorDesc d;
  std::vector<unsigned char> mem;
  void* p() { return mem.data(); }
  const void* p() const { return mem.data(); }
};
enum class Lay { kPacked, kReversed, kGaps };
inline T make(DType t, std::vector<i64> dims, Lay lay = Lay::kPacked) {
  T x;
  x.d.dtype = t;
  x.d.dims = dims;
  x.d.strides.assign(dims.size(), 0);
  i64 s = 1;
  const int r = static_cast<int>(dims.size());
  for (int k = 0; k < r; ++k) {
    const int i = lay == Lay::kReversed ? k : r - 1 - k;
    x.d.strides[static_cast<std::size_t>(i)] = s;
    s *= std::max<i64>(1, dims[static_cast<std::size_t>(i)]) + (lay == Lay::kGaps ? 1 : 0);
  }
  x.mem.assign(static_cast<std::size_t>(std::max<i64>(1, x.d.span())) * dtype_size(t), 0xA5);
  return x;
}

// Random values for every element of the span: small integers with 0 and the extremes; floats
// with NaN, infinities, -0 and zeros mixed in (unless `plain`).
inline void fill(T& x, std::mt19937& rng, bool plain = false) {
  const i64 n = static_cast<i64>(x.mem.size() / dtype_size(x.d.dtype));
  std::uniform_int_distribution<int> small(-9, 9), pick(0, 40);
  std::uniform_real_distribution<double> real(-4.0, 4.0);
  for (i64 i = 0; i < n; ++i) {
    const int k = pick(rng);
    double v = real(rng);
    if (!plain && k == 0) v = std::numeric_limits<double>::quiet_NaN();
    if (!plain && k == 1) v = std::numeric_limits<double>::infinity();
    if (!plain && k == 2) v = -std::numeric_limits<double>::infinity();
    if (!plain && k == 3) v = -0.0;
    if (k == 4) v = 0.0;
    int iv = k == 4 ? 0 : small(rng);
    void* at = x.mem.data() + static_cast<std::size_t>(i) * dtype_size(x.d.dtype);
    switch (x.d.dtype) {
      case DType::kBool: *static_cast<unsigned char*>(at) = static_cast<unsigned char>(k & 1); break;
      case DType::kI8: *static_cast<std::int8_t*>(at) = static_cast<std::int8_t>(k == 5 ? -128 : k == 6 ? 127 : k == 7 ? -1 : iv); break;
      case DType::kU8: *static_cast<std::uint8_t*>(at) = static_cast<std::uint8_t>(k == 5 ? 255 : iv + 9); break;
      case DType::kI32: *static_cast<std::int32_t*>(at) = k == 5 ? INT32_MIN : k == 6 ? INT32_MAX : k == 7 ? -1 : iv; break;
      case DType::kI64: *static_cast<std::int64_t*>(at) = k == 5 ? INT64_MIN : k == 6 ? INT64_MAX : k == 7 ? -1 : iv; break;
      case DType::kF16: *static_cast<std::uint16_t*>(at) = f32_to_f16_bits(static_cast<float>(v)); break;
      case DType::kBF16: *static_cast<std::uint16_t*>(at) = f32_to_bf16_bits(static_cast<float>(v)); break;
      case DType::kF32: *static_cast<float*>(at) = static_cast<float>(v); break;
      case DType::kF64: *static_cast<double*>(at) = v; break;
      case DType::kI16: *static_cast<std::int16_t*>(at) = static_cast<std::int16_t>(k == 5 ? INT16_MIN : k == 6 ? INT16_MAX : iv); break;
      case DType::kU16: *static_cast<std::uint16_t*>(at) = static_cast<std::uint16_t>(k == 5 ? UINT16_MAX : iv + 9); break;
      case DType::kU32: *static_cast<std::uint32_t*>(at) = k == 5 ? UINT32_MAX : static_cast<std::uint32_t>(iv + 9); break;
      case DType::kU64: *static_cast<std::uint64_t*>(at) = k == 5 ? UINT64_MAX : k == 6 ? (std::uint64_t{1} << 63) + 1 : static_cast<std::uint64_t>(iv + 9); break;
      default: break;
    }
  }
}

inline double value(const T& x, i64 off) {
  const void* b = x.mem.data() + static_cast<std::size_t>(off) * dtype_size(x.d.dtype);
  switch (x.d.dtype) {
    case DType::kBool: return *static_cast<const unsigned char*>(b);
    case DType::kI8: return *static_cast<const std::int8_t*>(b);
    case DType::kU8: return *static_cast<const std::uint8_t*>(b);
    case DType::kI32: return *static_cast<const std::int32_t*>(b);
    case DType::kI64: return static_cast<double>(*static_cast<const std::int64_t*>(b));
    case DType::kF16: return f16_bits_to_f32(*static_cast<const std::uint16_t*>(b));
    case DType::kBF16: return bf16_bits_to_f32(*static_cast<const std::uint16_t*>(b));
    case DType::kF32: return *static_cast<const float*>(b);
    case DType::kF64: return *static_cast<const double*>(b);
    default: return 0;
  }
}

// Offsets of every element of a desc, row-major over its dims.
inline std::vector<i64> offsets(const TensorDesc& d) {
  std::vector<i64> out;
  if (d.numel() == 0) return out;
  std::vector<i64> idx(d.dims.size(), 0);
  while (true) {
    i64 o = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) o += idx[i] * d.strides[i];
    out.push_back(o);
    int i = static_cast<int>(idx.size()) - 1;
    for (; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      if (++idx[k] < d.dims[k]) break;
      idx[k] = 0;
    }
    if (i < 0) return out;
  }
}

// got equals want element by element (NaN equals NaN; otherwise bit patterns, or within
// `ulps` units in the last place of the dtype) and bytes outside the elements are untouched.
inline void expect_same(const T& got, const T& want, const std::string& what, double ulps = 0, double atol = 0) {
  ASSERT_EQ(got.mem.size(), want.mem.size());
  const std::size_t b = dtype_size(got.d.dtype);
  int bad = 0;
  for (i64 o : offsets(got.d)) {
    const double g = value(got, o), w = value(want, o);
    const bool same_bits = std::memcmp(got.mem.data() + o * static_cast<i64>(b), want.mem.data() + o * static_cast<i64>(b), b) == 0;
    bool ok = same_bits || (std::isnan(g) && std::isnan(w));
    if (!ok && ulps > 0 && std::isfinite(w)) {
      const double eps = got.d.dtype == DType::kF16 ? 0x1p-10 : got.d.dtype == DType::kBF16 ? 0x1p-7
                         : got.d.dtype == DType::kF32 ? 0x1p-23 : 0x1p-52;
      const double unit = std::max(std::ldexp(eps, std::ilogb(w == 0 ? 1e-300 : w)), static_cast<double>(std::numeric_limits<float>::denorm_min()));
      ok = std::fabs(g - w) <= ulps * unit + atol;
    }
    if (!ok && ++bad <= 5) ADD_FAILURE() << what << ": element at offset " << o << " got " << g << " want " << w;
  }
  // The gaps of a strided output are never written.
  std::vector<bool> is_elem(got.mem.size() / b, false);
  for (i64 o : offsets(got.d)) is_elem[static_cast<std::size_t>(o)] = true;
  for (std::size_t e = 0; e < is_elem.size(); ++e)
    if (!is_elem[e])
      for (std::size_t k = 0; k < b; ++k)
        if (got.mem[e * b + k] != 0xA5) {
          ADD_FAILURE() << what << ": byte outside the output's elements written at element " << e;
          return;
        }
}

using Idx = std::vector<i64>;

// The expected output in y's layout: element yi is x's element map(yi) (or `fill`'s bytes
// where map returns false); the gaps keep the 0xA5 pattern.
using Map = std::function<bool(const Idx& yi, Idx& xi)>;
inline T expected(const T& x, const TensorDesc& yd, const Map& map, const void* fill_bytes = nullptr) {
  T want;
  want.d = yd;
  want.mem.assign(static_cast<std::size_t>(std::max<i64>(1, yd.span())) * dtype_size(yd.dtype), 0xA5);
  if (yd.numel() == 0) return want;
  const std::size_t b = dtype_size(yd.dtype);
  Idx yi(yd.dims.size(), 0), xi(x.d.dims.size(), 0);
  while (true) {
    i64 yo = 0;
    for (std::size_t i = 0; i < yi.size(); ++i) yo += yi[i] * yd.strides[i];
    unsigned char* dst = want.mem.data() + static_cast<std::size_t>(yo) * b;
    if (map(yi, xi)) {
      i64 xo = 0;
      for (std::size_t i = 0; i < xi.size(); ++i) xo += xi[i] * x.d.strides[i];
      std::memcpy(dst, x.mem.data() + static_cast<std::size_t>(xo) * b, b);
    } else {
      std::memcpy(dst, fill_bytes, b);
    }
    int i = static_cast<int>(yi.size()) - 1;
    for (; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      if (++yi[k] < yd.dims[k]) break;
      yi[k] = 0;
    }
    if (i < 0) return want;
  }
}

}  // namespace tessera::dnn::tensor_test
