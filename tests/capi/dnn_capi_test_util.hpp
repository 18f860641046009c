// Helpers of the DNN C API tests: RAII handles with matching settings for the C and the C++
// calls, descriptor conversion written independently of the library's, NaN-filled and random
// tensors in any storage dtype, and the checks that a C call agrees with its C++ call.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/c/dnn.h>
#include <tessera/c/status.h>
#include <tessera/core/half.hpp>
#include <tessera/dnn.hpp>

namespace dnn_capi_test {

namespace dnn = tessera::dnn;
using tessera::DType;
using Bytes = std::vector<std::uint8_t>;
using i64 = std::int64_t;

class CHandle {
 public:
  explicit CHandle(int threads = 2) {
    EXPECT_EQ(tsr_dnn_create_handle(&h_), TSR_STATUS_OK);
    EXPECT_EQ(tsr_dnn_set_num_threads(h_, threads), TSR_STATUS_OK);
    EXPECT_EQ(tsr_dnn_set_use_tune_db(h_, 0), TSR_STATUS_OK);
  }
  ~CHandle() { tsr_dnn_destroy_handle(h_); }
  CHandle(const CHandle&) = delete;
  CHandle& operator=(const CHandle&) = delete;
  operator tsr_dnn_handle() const { return h_; }

 private:
  tsr_dnn_handle h_ = nullptr;
};

// The C++ handle with the same settings as CHandle.
struct CppHandle {
  dnn::Handle h;
  explicit CppHandle(int threads = 2) {
    EXPECT_TRUE(h.set_num_threads(threads).is_ok());
    h.set_use_tune_db(false);
  }
};

// Written here, independently of the library's conversion.
inline tsr_tensor_desc to_c(const dnn::TensorDesc& d) {
  tsr_tensor_desc c{};
  c.dtype = static_cast<tsr_dtype>(static_cast<int>(d.dtype));
  c.rank = d.rank();
  for (int i = 0; i < d.rank(); ++i) {
    c.dims[i] = d.dims[static_cast<std::size_t>(i)];
    c.strides[i] = d.strides[static_cast<std::size_t>(i)];
  }
  return c;
}

inline bool same_desc(const tsr_tensor_desc& c, const dnn::TensorDesc& d) {
  if (static_cast<int>(c.dtype) != static_cast<int>(d.dtype) || c.rank != d.rank()) return false;
  for (int i = 0; i < TSR_TENSOR_MAX_RANK; ++i) {
    const bool in = i < c.rank;
    if (c.dims[i] != (in ? d.dims[static_cast<std::size_t>(i)] : 0)) return false;
    if (c.strides[i] != (in ? d.strides[static_cast<std::size_t>(i)] : 0)) return false;
  }
  return true;
}

inline float load(const Bytes& b, DType t, std::size_t i) {
  if (t == DType::kF32) {
    float v;
    std::memcpy(&v, b.data() + 4 * i, 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, b.data() + 2 * i, 2);
  return t == DType::kBF16 ? tessera::bf16_bits_to_f32(bits) : tessera::f16_bits_to_f32(bits);
}

inline void store(Bytes& b, DType t, std::size_t i, float v) {
  if (t == DType::kF32) {
    std::memcpy(b.data() + 4 * i, &v, 4);
    return;
  }
  const std::uint16_t bits =
      t == DType::kBF16 ? tessera::f32_to_bf16_bits(v) : tessera::f32_to_f16_bits(v);
  std::memcpy(b.data() + 2 * i, &bits, 2);
}

inline std::size_t elements(const dnn::TensorDesc& d) {
  return static_cast<std::size_t>(std::max<i64>(d.span(), 1));
}

// Uniform in [lo, hi) over the tensor's span, in its dtype.
inline Bytes random_data(const dnn::TensorDesc& d, unsigned seed, float lo = -1.0f,
                         float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Bytes b(elements(d) * tessera::dtype_size(d.dtype));
  for (std::size_t i = 0; i < elements(d); ++i) store(b, d.dtype, i, dist(gen));
  return b;
}

inline Bytes nan_data(const dnn::TensorDesc& d) {
  Bytes b(elements(d) * tessera::dtype_size(d.dtype));
  for (std::size_t i = 0; i < elements(d); ++i) store(b, d.dtype, i, std::nanf(""));
  return b;
}

inline std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& e : v) e = dist(gen);
  return v;
}

inline std::vector<float> nan_floats(std::size_t n) {
  return std::vector<float>(n, std::nanf(""));
}

// The C call and the C++ call agree: the same code, and on failure a C message that starts
// with the C function's name and carries the C++ message.
inline ::testing::AssertionResult same_outcome(const char* c_function, tsr_status c,
                                               const tessera::Status& cpp) {
  const std::string msg = tsr_last_error_message();
  if (static_cast<int>(c) != static_cast<int>(cpp.code()))
    return ::testing::AssertionFailure()
           << "C returned " << tsr_status_name(c) << " (" << msg << "), C++ " << cpp.to_string();
  if (cpp.is_ok()) return ::testing::AssertionSuccess();
  const std::string& m = cpp.message();
  const std::size_t colon = m.find(": ");
  const std::string tail = colon == std::string::npos ? m : m.substr(colon + 2);
  if (msg.rfind(std::string(c_function) + ": ", 0) != 0 || msg.find(tail) == std::string::npos)
    return ::testing::AssertionFailure()
           << "C message \"" << msg << "\" vs C++ message \"" << m << "\"";
  return ::testing::AssertionSuccess();
}

// Bitwise equal outputs in which every element (of a packed tensor) was written.
inline ::testing::AssertionResult same_written(const Bytes& c, const Bytes& cpp, DType t) {
  if (c != cpp) return ::testing::AssertionFailure() << "C and C++ outputs differ";
  const std::size_t n = c.size() / tessera::dtype_size(t);
  for (std::size_t i = 0; i < n; ++i)
    if (std::isnan(load(c, t, i)))
      return ::testing::AssertionFailure() << "element " << i << " was not written";
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult same_written(const std::vector<float>& c,
                                               const std::vector<float>& cpp) {
  if (c.size() != cpp.size() || std::memcmp(c.data(), cpp.data(), c.size() * 4) != 0)
    return ::testing::AssertionFailure() << "C and C++ outputs differ";
  for (std::size_t i = 0; i < c.size(); ++i)
    if (std::isnan(c[i])) return ::testing::AssertionFailure() << "element " << i << " unwritten";
  return ::testing::AssertionSuccess();
}

// An expected failure: status, a message "<function>: ..." containing `needle`.
inline ::testing::AssertionResult fails(tsr_status s, tsr_status want, const std::string& function,
                                        const std::string& needle) {
  const std::string msg = tsr_last_error_message();
  if (s != want)
    return ::testing::AssertionFailure()
           << "status " << tsr_status_name(s) << " (" << msg << "), want " << tsr_status_name(want);
  if (msg.rfind(function + ": ", 0) != 0 || msg.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message \"" << msg << "\" does not start with \""
                                         << function << ": \" or lacks \"" << needle << "\"";
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult invalid(tsr_status s, const std::string& function,
                                          const std::string& needle) {
  return fails(s, TSR_STATUS_INVALID_ARGUMENT, function, needle);
}

}  // namespace dnn_capi_test
