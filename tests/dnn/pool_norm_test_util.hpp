// Helpers of the pooling, norm and LRN tests: host tensors of any dtype and strides filled and
// read in logical (row-major over the logical dims) order, layouts the reference must take,
// comparisons, and the dispatch/bench log lines of a call.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/core/cpu.hpp>
#include <tessera/core/dtype.hpp>
#include <tessera/core/half.hpp>
#include <tessera/core/log.hpp>
#include <tessera/dnn.hpp>

namespace tessera::dnn::testing {

using std::int64_t;

inline float quiet_nan() {
  return std::numeric_limits<float>::quiet_NaN();
}

// A host tensor: storage spanning its strides, every element (gaps included) initialised.
struct Buf {
  TensorDesc desc;
  std::vector<unsigned char> bytes;
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
};

inline float load(const Buf& b, int64_t i) {
  const unsigned char* p = b.bytes.data();
  switch (b.desc.dtype) {
    case DType::kBF16:
      return bf16_bits_to_f32(reinterpret_cast<const std::uint16_t*>(p)[i]);
    case DType::kF16:
      return f16_bits_to_f32(reinterpret_cast<const std::uint16_t*>(p)[i]);
    default:
      return reinterpret_cast<const float*>(p)[i];
  }
}
inline void store(Buf& b, int64_t i, float v) {
  unsigned char* p = b.bytes.data();
  switch (b.desc.dtype) {
    case DType::kBF16:
      reinterpret_cast<std::uint16_t*>(p)[i] = f32_to_bf16_bits(v);
      break;
    case DType::kF16:
      reinterpret_cast<std::uint16_t*>(p)[i] = f32_to_f16_bits(v);
      break;
    default:
      reinterpret_cast<float*>(p)[i] = v;
      break;
  }
}

// Calls f(offset) for every logical element in row-major order of the logical dims.
template <typename F>
void for_each_offset(const TensorDesc& d, F&& f) {
  if (d.numel() == 0) return;
  std::vector<int64_t> idx(d.dims.size(), 0);
  for (;;) {
    int64_t off = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * d.strides[i];
    f(off);
    int i = d.rank() - 1;
    for (; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      if (++idx[k] < d.dims[k]) break;
      idx[k] = 0;
    }
    if (i < 0) return;
  }
}

// A tensor of desc d with every element of its span set to `fill`.
inline Buf make_buf(const TensorDesc& d, float fill = quiet_nan()) {
  Buf b;
  b.desc = d;
  const int64_t span = std::max<int64_t>(d.span(), 1);
  b.bytes.resize(static_cast<std::size_t>(span) * dtype_size(d.dtype));
  for (int64_t i = 0; i < span; ++i) store(b, i, fill);
  return b;
}

inline std::vector<float> get(const Buf& b) {
  std::vector<float> v;
  for_each_offset(b.desc, [&](int64_t o) { v.push_back(load(b, o)); });
  return v;
}
inline void set(Buf& b, const std::vector<float>& v) {
  std::size_t i = 0;
  for_each_offset(b.desc, [&](int64_t o) { store(b, o, v[i++]); });
}
inline Buf make_buf(const TensorDesc& d, const std::vector<float>& values, float fill) {
  Buf b = make_buf(d, fill);
  set(b, values);
  return b;
}

// Row-major strides over dims padded by one and doubled: packed in no layout, so every call on
// such tensors runs the reference implementation.
inline TensorDesc strided(DType t, const std::vector<int64_t>& dims) {
  TensorDesc d;
  d.dtype = t;
  d.dims = dims;
  d.strides.assign(dims.size(), 0);
  int64_t s = 2;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    d.strides[static_cast<std::size_t>(i)] = s;
    s *= dims[static_cast<std::size_t>(i)] + 1;
  }
  return d;
}

inline std::vector<float> random_values(std::size_t n, std::mt19937_64& g, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

// Values representable in dtype t (so the same input reaches every path unchanged).
inline std::vector<float> rounded(std::vector<float> v, DType t) {
  for (float& x : v) {
    if (t == DType::kBF16) x = bf16_bits_to_f32(f32_to_bf16_bits(x));
    if (t == DType::kF16) x = f16_bits_to_f32(f32_to_f16_bits(x));
  }
  return v;
}

inline bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  std::uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// Every element identical (NaN matches NaN), reporting the first difference.
inline ::testing::AssertionResult identical(const std::vector<float>& a,
                                            const std::vector<float>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

// |a - b| <= atol + rtol * |b| everywhere (and no NaN on either side).
inline ::testing::AssertionResult close(const std::vector<float>& a, const std::vector<float>& b,
                                        double atol, double rtol) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= atol + rtol * std::fabs(static_cast<double>(b[i]))))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs " << b[i] << " (difference " << d << ")";
  }
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult close(const float* a, const float* b, std::size_t n, double atol,
                                        double rtol) {
  return close(std::vector<float>(a, a + n), std::vector<float>(b, b + n), atol, rtol);
}

// The stderr lines a call writes with the given log category enabled.
inline std::string log_of(log::Category c, const std::function<void()>& f) {
  const std::uint32_t saved = log::enabled_mask();
  log::set_enabled_mask(static_cast<std::uint32_t>(c));
  ::testing::internal::CaptureStderr();
  f();
  const std::string out = ::testing::internal::GetCapturedStderr();
  log::set_enabled_mask(saved);
  return out;
}

}  // namespace tessera::dnn::testing
