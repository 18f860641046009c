// Level-1 kernels on contiguous (unit-stride) vectors: one table per instruction set, chosen
// at run time from an ordered list (list.cpp). The drivers (src/blas/level1.cpp) validate
// arguments, split work into fixed blocks and threads, and handle strided vectors themselves.
//
// ISA files include only this header: it declares data and function pointers, no inline
// code, so nothing compiled with wide-vector flags can leak into generic objects.
// f16/bf16 are passed as their raw 16-bit patterns, complex vectors as interleaved reals.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera::blas::kernels {

// Reductions see one block of at most a few ten thousand elements at a time; the drivers
// combine block results in order, so sums never depend on the thread count.
template <typename T>  // float, double
struct RealLevel1 {
  T (*dot)(std::int64_t n, const T* x, const T* y);
  void (*axpy)(std::int64_t n, T alpha, const T* x, T* y);  // y += alpha * x
  void (*scal)(std::int64_t n, T alpha, T* x);              // x = alpha * x
  void (*rot)(std::int64_t n, T* x, T* y, T c, T s);        // (x, y) = (cx + sy, cy - sx)
  T (*asum)(std::int64_t n, const T* x);
  // Sum of x_i^2 accumulated in double, and the largest |x_i| (NaN ignored, 0 if none).
  double (*sumsq)(std::int64_t n, const T* x, T* max_abs);
  // First index of the largest / smallest |x_i| with NaNs skipped, its value in *value;
  // -1 when every element is NaN (or n == 0). n <= 2^24 (the drivers pass one block).
  std::int64_t (*iamax)(std::int64_t n, const T* x, T* value);
  std::int64_t (*iamin)(std::int64_t n, const T* x, T* value);
};

template <typename R>  // complex<R> as interleaved (re, im) pairs; n counts complex elements
struct ComplexLevel1 {
  // result[0..1] = sum x_i * y_i, or sum conj(x_i) * y_i when conj_x.
  void (*dot)(std::int64_t n, const R* x, const R* y, bool conj_x, R* result);
  void (*axpy)(std::int64_t n, R alpha_re, R alpha_im, const R* x, R* y);
  void (*scal)(std::int64_t n, R alpha_re, R alpha_im, R* x);
};

// f16 and bf16: f32 scalars, f32 accumulation, results rounded to nearest even.
struct HalfLevel1 {
  float (*dot)(std::int64_t n, const std::uint16_t* x, const std::uint16_t* y);
  void (*axpy)(std::int64_t n, float alpha, const std::uint16_t* x, std::uint16_t* y);
  void (*scal)(std::int64_t n, float alpha, std::uint16_t* x);
};

struct Level1Kernels {
  const char* name;  // "avx512", "avx2", "generic"
  // memcpy with non-temporal stores, for copies far larger than the caches (the destination
  // skips the read-for-ownership and does not evict the cache). x and y do not overlap.
  void (*copy_stream)(std::int64_t bytes, const void* x, void* y);
  RealLevel1<float> f32;
  RealLevel1<double> f64;
  ComplexLevel1<float> c64;
  ComplexLevel1<double> c128;
  HalfLevel1 f16;
  HalfLevel1 bf16;
};

extern const Level1Kernels kLevel1Generic;  // generic.cpp: plain C++
extern const Level1Kernels kLevel1Avx2;     // avx2.cpp: AVX2 + FMA + F16C
extern const Level1Kernels kLevel1Avx512;   // avx512.cpp: AVX-512 F/BW/DQ/VL

// The first table in the ordered list (avx512, avx2, generic) that cpu_info().isa() allows;
// logs the choice under TESSERA_VERBOSE=dispatch as "<fn>: chose <name>".
const Level1Kernels& level1_kernels(std::string_view fn);

}  // namespace tessera::blas::kernels
