// What the level-2 drivers (src/blas/level2*.cpp) build on: one interface over the chosen ISA
// table (float, double) and the generic templates (complex), the thread splits that keep every
// output element's arithmetic independent of the thread count, and scratch vectors.
#pragma once

#include <string_view>

#include "../level1/driver.hpp"
#include "generic.hpp"
#include "kernels.hpp"

namespace tessera::blas::detail {

template <typename T>
class Level2Ops {
 public:
  using R = real_t<T>;
  explicit Level2Ops(std::string_view fn) {
    const kernels::Level2Kernels& k = kernels::level2_kernels(fn);
    if constexpr (std::is_same_v<T, float>)
      table_ = &k.f32;
    else if constexpr (std::is_same_v<T, double>)
      table_ = &k.f64;
    else if constexpr (std::is_same_v<T, cfloat>)
      table_ = &k.c64;
    else
      table_ = &k.c128;
  }
  void gemv_n(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x,
              T* y) const {
    table_->gemv_n(m, n, reals(a), lda, reals(x), reals(y));
  }
  void gemv_t(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x, bool conj,
              T* r) const {
    if constexpr (is_complex_v<T>)
      table_->gemv_t(m, n, reals(a), lda, reals(x), conj, reals(r));
    else
      table_->gemv_t(m, n, a, lda, x, r);
  }
  void ger(std::int64_t m, std::int64_t n, const T* x, const T* y, T* a, std::int64_t lda) const {
    table_->ger(m, n, reals(x), reals(y), reals(a), lda);
  }
  void sym_panel(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* xc,
                 const T* x, bool conj, T* p, T* dots) const {
    if constexpr (is_complex_v<T>)
      kernels::sym_panel_generic(m, n, a, lda, xc, x, conj, p, dots);
    else
      table_->sym_panel(m, n, a, lda, xc, x, p, dots);
  }

 private:
  static const R* reals(const T* p) { return reinterpret_cast<const R*>(p); }
  static R* reals(T* p) { return reinterpret_cast<R*>(p); }
  using Table =
      std::conditional_t<is_complex_v<T>, kernels::ComplexLevel2<R>, kernels::RealLevel2<R>>;
  const Table* table_ = nullptr;
};

// Matrix elements per thread below which a level-2 loop stays on one thread.
inline constexpr std::int64_t kMatrixGrain = 1 << 16;

// Room for `count` elements of T, rounded up to whole 64-byte lines (to carve several scratch
// vectors out of one workspace block).
template <typename T>
constexpr std::int64_t padded(std::int64_t count) {
  constexpr std::int64_t per_line = 64 / sizeof(T) > 0 ? 64 / sizeof(T) : 1;
  return (count + per_line - 1) / per_line * per_line;
}

template <typename T>
Result<T*> scratch(Handle& h, std::int64_t count) {
  TESSERA_ASSIGN_OR_RETURN(void* p, workspace(h, static_cast<std::size_t>(count) * sizeof(T)));
  return static_cast<T*>(p);
}

// y = beta * y over a strided vector; beta == 0 writes zeros (NaN in y does not survive).
template <typename T>
void scale_vector(std::int64_t n, T beta, T* y, std::int64_t incy) {
  if (beta == T(1)) return;
  for (std::int64_t i = 0; i < n; ++i) {
    T& v = y[vec_index(i, n, incy)];
    v = beta == T(0) ? T(0) : cmul(beta, v);
  }
}

}  // namespace tessera::blas::detail
