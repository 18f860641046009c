// Depthwise convolution kernels in plain C++ (one float per "vector"): the fallback on CPUs
// without AVX2, and the readable statement of what the ISA files compute. The kernels
// themselves are DwBody in depthwise_kernels.hpp.
#include <cstdint>

#include "depthwise_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

struct S {
  using V = float;
  using Mask = int;  // never used: one lane has no partial vectors
  static constexpr std::int64_t kWidth = 1;
  static constexpr int kMaxNv = 1;
  static constexpr int kBlock = 8;
  static constexpr int kNchwVecs = 1;
  static V zero() { return 0.0f; }
  static V set1(float a) { return a; }
  static V load(const float* p) { return *p; }
  static void store(float* p, V v) { *p = v; }
  static Mask mask(std::int64_t) { return 0; }
  static V load_m(const float* p, Mask) { return *p; }
  static void store_m(float* p, V v, Mask) { *p = v; }
  static V load_s2(const float* p) { return *p; }
  static V pin(V v) { return v; }
  static const float* step(const float* p, std::int64_t n) { return p + n; }
  static Mask mask_range(std::int64_t, std::int64_t) { return 1; }  // [0, 1): the one lane
  static V fmadd_m(V a, V b, V c, Mask) { return a * b + c; }
  static V fmadd(V a, V b, V c) { return a * b + c; }
  static V add(V a, V b) { return a + b; }
  static float hsum(V v) { return v; }
  static float fma1(float a, float b, float c) { return a * b + c; }
};

}  // namespace

const DwKernels kDwGeneric = DwBody<S>::kernels("generic");

}  // namespace tessera::dnn::conv
