// Winograd kernels in plain C++ (one float per "vector"): the fallback on CPUs without AVX2,
// and the readable statement of what the ISA files compute.
#include <cmath>
#include <cstdint>

#include "winograd_kernels.hpp"

namespace tessera::dnn::conv {
namespace {

struct S {
  using V = float;
  static constexpr std::int64_t kWidth = 1;
  static V zero() { return 0.0f; }
  static V set1(float a) { return a; }
  static V load(const float* p) { return *p; }
  static void store(float* p, V v) { *p = v; }
  static V load_n(const float* p, std::int64_t) { return *p; }  // never called: n < 1
  static void store_n(float* p, V v, std::int64_t) { *p = v; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V fmadd(V a, V b, V c) { return a * b + c; }
  static V relu(V v) { return v > 0.0f ? v : 0.0f; }
  static V leaky(V v, float a) { return v > 0.0f ? v : a * v; }
  static V clip(V v, float lo, float hi) { return std::fmin(std::fmax(v, lo), hi); }
};
constexpr int kMr = 4;
constexpr int kNv = 16;

#include "winograd_body.inc"

void transpose(i64 rows, i64 cols, const float* src, i64 ss, float* dst, i64 ds) {
  for (i64 i = 0; i < rows; ++i)
    for (i64 j = 0; j < cols; ++j) dst[j * ds + i] = src[i * ss + j];
}

}  // namespace

const WinoKernels kWinoGeneric = {
    "generic",
    {input_tile<F2>, input_tile<F4>},
    {output_tile<F2>, output_tile<F4>},
    {weights_tile<F2>, weights_tile<F4>},
    gemm,
    transpose,
    {grad_tile<F2>, grad_tile<F4>},
    {wgrad_tile<F2>, wgrad_tile<F4>},
    gemm_at,
};

}  // namespace tessera::dnn::conv
