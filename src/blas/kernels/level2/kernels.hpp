// Level-2 kernels on contiguous vectors and one column-major panel, one table per instruction
// set, chosen at run time from an ordered list (list.cpp). The drivers (src/blas/level2*.cpp)
// validate arguments, pack strided vectors, apply alpha/beta and split rows or columns over
// threads; these kernels only see dense panels. Complex symv/hemv panels use the generic
// templates in generic.hpp. No inline code here: ISA files include this header.
//
// Determinism: every output element is computed by one call in an order fixed by the problem,
// never by the thread split (gemv_n: y_i gets one fused multiply-add per column j, in order,
// whatever rows are around it; gemv_t / sym_panel: column j's sum depends on m, on the
// alignment of its group's first column and on j's place in its group of four or eight, and
// the drivers split columns on group boundaries).
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera::blas::kernels {

template <typename T>  // float, double
struct RealLevel2 {
  // y[0:m] += A x, A m x n with leading dimension lda (alpha is folded into x by the caller).
  void (*gemv_n)(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x, T* y);
  // r[j] = sum_i A(i, j) x_i for j in [0, n).
  void (*gemv_t)(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x, T* r);
  // A(:, j) += x * y_j (alpha is folded into y).
  void (*ger)(std::int64_t m, std::int64_t n, const T* x, const T* y, T* a, std::int64_t lda);
  // One off-diagonal panel of a symmetric matrix, read once: p[0:m] += A xc and
  // dots[j] = sum_i A(i, j) x_i.
  void (*sym_panel)(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* xc,
                    const T* x, T* p, T* dots);
};

template <typename R>  // complex<R> as interleaved reals; sizes and lda count complex elements
struct ComplexLevel2 {
  void (*gemv_n)(std::int64_t m, std::int64_t n, const R* a, std::int64_t lda, const R* x, R* y);
  // r[j] = sum_i A(i, j) x_i, or conj(A(i, j)) x_i when conj.
  void (*gemv_t)(std::int64_t m, std::int64_t n, const R* a, std::int64_t lda, const R* x,
                 bool conj, R* r);
  void (*ger)(std::int64_t m, std::int64_t n, const R* x, const R* y, R* a, std::int64_t lda);
};

struct Level2Kernels {
  const char* name;
  RealLevel2<float> f32;
  RealLevel2<double> f64;
  ComplexLevel2<float> c64;
  ComplexLevel2<double> c128;
};

extern const Level2Kernels kLevel2Generic;  // generic.cpp
extern const Level2Kernels kLevel2Avx2;     // avx2.cpp
extern const Level2Kernels kLevel2Avx512;   // avx512.cpp

// The first table in the ordered list (avx512, avx2, generic) that cpu_info().isa() allows.
const Level2Kernels& level2_kernels(std::string_view fn);

}  // namespace tessera::blas::kernels
