// Helpers of the activation and softmax tests: host tensors of any dtype and strides, NaN
// prefill, logical-order access, tolerance checks, and capture of the dispatch log.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/core/cpu.hpp>
#include <tessera/core/log.hpp>
#include <tessera/dnn.hpp>

#include "../../src/dnn/common.hpp"
#include "../../src/dnn/ops/activation/ref.hpp"

namespace tessera::dnn::act_test {

using i64 = std::int64_t;

inline i64 dtype_bytes(DType t) {
  return t == DType::kF32 ? 4 : 2;
}

// Storage for a descriptor (its span, plus `slack` elements) that tests read in logical order.
struct HostTensor {
  TensorDesc desc;
  std::vector<std::uint8_t> bytes;

  explicit HostTensor(TensorDesc d, i64 slack = 0) : desc(std::move(d)) {
    bytes.assign(static_cast<std::size_t>((desc.span() + slack) * dtype_bytes(desc.dtype)), 0);
  }
  void* data() { return bytes.empty() ? nullptr : bytes.data(); }
  const void* data() const { return bytes.empty() ? nullptr : bytes.data(); }
  i64 storage_elems() const { return static_cast<i64>(bytes.size()) / dtype_bytes(desc.dtype); }

  // Every storage element (gaps included) set to a quiet NaN.
  void fill_nan() {
    for (i64 i = 0; i < storage_elems(); ++i)
      detail::store_f32(bytes.data(), desc.dtype, i, std::nanf(""));
  }
  // Logical elements in row-major order.
  std::vector<float> values() const {
    std::vector<float> v;
    v.reserve(static_cast<std::size_t>(desc.numel()));
    ref::for_each_index(desc.dims, [&](const i64* idx) {
      v.push_back(detail::load_f32(bytes.data(), desc.dtype, detail::offset_of(desc, idx)));
    });
    return v;
  }
  void set_values(const std::vector<float>& v) {
    std::size_t k = 0;
    ref::for_each_index(desc.dims, [&](const i64* idx) {
      detail::store_f32(bytes.data(), desc.dtype, detail::offset_of(desc, idx), v[k++]);
    });
  }
  void fill_uniform(std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<std::size_t>(desc.numel()));
    for (float& e : v) e = dist(rng);
    set_values(v);
  }
};

// A packed descriptor, or one with gaps: every dim's stride padded by `pad` elements.
inline TensorDesc padded_desc(DType t, std::vector<i64> dims, i64 pad) {
  TensorDesc d;
  d.dtype = t;
  d.dims = std::move(dims);
  d.strides.assign(d.dims.size(), 1);
  i64 s = 1;
  for (int i = d.rank() - 1; i >= 0; --i) {
    d.strides[static_cast<std::size_t>(i)] = s;
    s *= d.dims[static_cast<std::size_t>(i)] + pad;
  }
  return d;
}

// Bitwise equality of the logical elements of two tensors with equal dims.
inline bool same_bits(const HostTensor& a, const HostTensor& b) {
  if (a.desc.dims != b.desc.dims || a.desc.dtype != b.desc.dtype) return false;
  const i64 eb = dtype_bytes(a.desc.dtype);
  bool same = true;
  ref::for_each_index(a.desc.dims, [&](const i64* idx) {
    const i64 oa = detail::offset_of(a.desc, idx), ob = detail::offset_of(b.desc, idx);
    if (std::memcmp(a.bytes.data() + oa * eb, b.bytes.data() + ob * eb,
                    static_cast<std::size_t>(eb)) != 0)
      same = false;
  });
  return same;
}

// One unit in the last place of the storage type at v (f32, bf16 or f16).
inline double storage_ulp(DType t, double v) {
  const int bits = t == DType::kF32 ? 24 : (t == DType::kBF16 ? 8 : 11);
  const double min_normal = t == DType::kF16 ? 6.103515625e-05 : 1.1754943508222875e-38;
  const double a = std::max(std::fabs(v), min_normal);
  return std::ldexp(1.0, std::ilogb(a) - (bits - 1));
}

// |got - want| <= rtol*|want| + atol (+ one storage ulp of want for bf16/f16, where the two
// f32 results may round to neighbouring values); NaN must match NaN, infinities exactly.
inline ::testing::AssertionResult close(DType t, double got, double want, double rtol,
                                        double atol) {
  if (std::isnan(want) || std::isnan(got)) {
    if (std::isnan(want) && std::isnan(got)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << want;
  }
  if (std::isinf(want) || std::isinf(got)) {
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << want;
  }
  double tol = rtol * std::fabs(want) + atol;
  if (t != DType::kF32) tol += storage_ulp(t, want);
  if (std::fabs(got - want) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (diff "
                                       << std::fabs(got - want) << " > tol " << tol << ")";
}

// Collects the dispatch log (the implementation chosen) of the calls made while alive.
class DispatchLog {
 public:
  DispatchLog() : saved_(log::enabled_mask()) {
    log::set_enabled_mask(saved_ | static_cast<std::uint32_t>(log::Category::kDispatch));
    ::testing::internal::CaptureStderr();
  }
  ~DispatchLog() {
    if (!done_) finish();
  }
  std::string finish() {
    done_ = true;
    std::string s = ::testing::internal::GetCapturedStderr();
    log::set_enabled_mask(saved_);
    return s;
  }

 private:
  std::uint32_t saved_;
  bool done_ = false;
};

inline void expect_ok(const Status& s) {
  ASSERT_TRUE(s.is_ok()) << s.to_string();
}

// The call fails with `code`, names `needle` in its message, and writes nothing to `out`
// (pre-filled with NaN).
template <typename Call>
void expect_rejected(StatusCode code, const std::string& needle, HostTensor& out, Call&& call) {
  out.fill_nan();
  const std::vector<std::uint8_t> before = out.bytes;
  const Status s = call();
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  EXPECT_EQ(out.bytes, before) << "output written by a rejected call: " << s.message();
}

inline std::vector<DType> float_dtypes() {
  return {DType::kF32, DType::kBF16, DType::kF16};
}

// The fast-path name for the ISA level under test ("..._avx512", "..._avx2", "..._generic").
inline std::string isa_suffix(Isa isa) {
  std::string s = "_";
  s += isa_name(isa);
  return s;
}

}  // namespace tessera::dnn::act_test
