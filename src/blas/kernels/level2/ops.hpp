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
  explicit Level2Ops(std::string_view fn) {
    if constexpr (std::is_same_v<T, float>) table_ = &kernels::level2_kernels(fn).f32;
    else if constexpr (std::is_same_v<T, double>) table_ = &kernels::level2_kernels(fn).f64;
  }
  void gemv_n(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x,
              T* y) const {
    if constexpr (is_complex_v<T>) kernels::gemv_n_generic(m, n, a, lda, x, y);
    else table_->gemv_n(m, n, a, lda, x, y);
  }
  void gemv_t(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x,
              bool conj, T* r) const {
    if constexpr (is_complex_v<T>) kernels::gemv_t_generic(m, n, a, lda, x, conj, r);
    else table_->gemv_t(m, n, a, lda, x, r);
  }
  void ger(std::int64_t m, std::int64_t n, const T* x, const T* y, T* a, std::int64_t lda) const {
    if constexpr (is_complex_v<T>) kernels::ger_generic(m, n, x, y, a, lda);
    else table_->ger(m, n, x, y, a, lda);
  }
  void sym_panel(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* xc,
                 const T* x, bool conj, T* p, T* dots) const {
    if constexpr (is_complex_v<T>) kernels::sym_panel_generic(m, n, a, lda, xc, x, conj, p, dots);
    else table_->sym_panel(m, n, a, lda, xc, x, p, dots);
  }

 private:
  const kernels::RealLevel2<T>* table_ = nullptr;
};

// Matrix elements per thread below which a level-2 loop stays on one thread.
inline constexpr std::int64_t kMatrixGrain = 1 << 16;

// y[0:m] += A x, rows split over threads (each row's sum is the same whoever computes it).
template <typename T>
void gemv_n_rows(const Handle& h, const Level2Ops<T>& ops, std::int64_t m, std::int64_t n,
                 const T* a, std::int64_t lda, const T* x, T* y) {
  const std::int64_t grain = (std::max<std::int64_t>(64, kMatrixGrain / std::max<std::int64_t>(n, 1)) + 63) / 64 * 64;
  parallel_for(h, 0, m, grain, [&](std::int64_t r0, std::int64_t r1) {
    ops.gemv_n(r1 - r0, n, a + r0, lda, x, y + r0);
  });
}

// r[0:n] = op(A)^T x, columns split over threads in groups of four (the kernels' grouping).
template <typename T>
void gemv_t_cols(const Handle& h, const Level2Ops<T>& ops, std::int64_t m, std::int64_t n,
                 const T* a, std::int64_t lda, const T* x, bool conj, T* r) {
  const std::int64_t groups = (n + 3) / 4;
  const std::int64_t grain = std::max<std::int64_t>(1, kMatrixGrain / (4 * std::max<std::int64_t>(m, 1)));
  parallel_for(h, 0, groups, grain, [&](std::int64_t g0, std::int64_t g1) {
    const std::int64_t j0 = 4 * g0, j1 = std::min(n, 4 * g1);
    ops.gemv_t(m, j1 - j0, a + j0 * lda, lda, x, conj, r + j0);
  });
}

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
