// Level-2 kernels in plain C++ (the fallback without AVX2, and complex types everywhere).
#include "generic.hpp"

#include <complex>

#include "../level1/driver.hpp"
#include "kernels.hpp"

namespace tessera::blas::kernels {

using detail::cmul;
using detail::conj_if;

template <typename T>
void gemv_n_generic(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x,
                    T* y) {
  for (std::int64_t j = 0; j < n; ++j) {
    const T* col = a + j * lda;
    for (std::int64_t i = 0; i < m; ++i) y[i] += cmul(col[i], x[j]);
  }
}

template <typename T>
void gemv_t_generic(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x,
                    bool conj, T* r) {
  for (std::int64_t j = 0; j < n; ++j) {
    const T* col = a + j * lda;
    T s{};
    for (std::int64_t i = 0; i < m; ++i) s += cmul(conj_if(col[i], conj), x[i]);
    r[j] = s;
  }
}

template <typename T>
void ger_generic(std::int64_t m, std::int64_t n, const T* x, const T* y, T* a, std::int64_t lda) {
  for (std::int64_t j = 0; j < n; ++j) {
    T* col = a + j * lda;
    for (std::int64_t i = 0; i < m; ++i) col[i] += cmul(x[i], y[j]);
  }
}

template <typename T>
void sym_panel_generic(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* xc,
                       const T* x, bool conj, T* p, T* dots) {
  for (std::int64_t j = 0; j < n; ++j) {
    const T* col = a + j * lda;
    T s{};
    for (std::int64_t i = 0; i < m; ++i) {
      p[i] += cmul(col[i], xc[j]);
      s += cmul(conj_if(col[i], conj), x[i]);
    }
    dots[j] = s;
  }
}

#define TESSERA_LEVEL2_GENERIC(T)                                                                  \
  template void gemv_n_generic<T>(std::int64_t, std::int64_t, const T*, std::int64_t, const T*,    \
                                  T*);                                                             \
  template void gemv_t_generic<T>(std::int64_t, std::int64_t, const T*, std::int64_t, const T*,    \
                                  bool, T*);                                                       \
  template void ger_generic<T>(std::int64_t, std::int64_t, const T*, const T*, T*, std::int64_t);  \
  template void sym_panel_generic<T>(std::int64_t, std::int64_t, const T*, std::int64_t, const T*, \
                                     const T*, bool, T*, T*);
TESSERA_LEVEL2_GENERIC(float)
TESSERA_LEVEL2_GENERIC(double)
TESSERA_LEVEL2_GENERIC(std::complex<float>)
TESSERA_LEVEL2_GENERIC(std::complex<double>)
#undef TESSERA_LEVEL2_GENERIC

namespace {

template <typename T>
void gemv_t_real(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x, T* r) {
  gemv_t_generic(m, n, a, lda, x, false, r);
}
template <typename T>
void sym_panel_real(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* xc,
                    const T* x, T* p, T* dots) {
  sym_panel_generic(m, n, a, lda, xc, x, false, p, dots);
}
template <typename T>
constexpr RealLevel2<T> real_table() {
  return {gemv_n_generic<T>, gemv_t_real<T>, ger_generic<T>, sym_panel_real<T>};
}

// The complex entries over interleaved reals.
template <typename R>
using C = std::complex<R>;
template <typename R>
void complex_gemv_n(std::int64_t m, std::int64_t n, const R* a, std::int64_t lda, const R* x,
                    R* y) {
  gemv_n_generic(m, n, reinterpret_cast<const C<R>*>(a), lda, reinterpret_cast<const C<R>*>(x),
                 reinterpret_cast<C<R>*>(y));
}
template <typename R>
void complex_gemv_t(std::int64_t m, std::int64_t n, const R* a, std::int64_t lda, const R* x,
                    bool conj, R* r) {
  gemv_t_generic(m, n, reinterpret_cast<const C<R>*>(a), lda, reinterpret_cast<const C<R>*>(x),
                 conj, reinterpret_cast<C<R>*>(r));
}
template <typename R>
void complex_ger(std::int64_t m, std::int64_t n, const R* x, const R* y, R* a, std::int64_t lda) {
  ger_generic(m, n, reinterpret_cast<const C<R>*>(x), reinterpret_cast<const C<R>*>(y),
              reinterpret_cast<C<R>*>(a), lda);
}
template <typename R>
constexpr ComplexLevel2<R> complex_table() {
  return {complex_gemv_n<R>, complex_gemv_t<R>, complex_ger<R>};
}

}  // namespace

extern const Level2Kernels kLevel2Generic = {"generic", real_table<float>(), real_table<double>(),
                                             complex_table<float>(), complex_table<double>()};

}  // namespace tessera::blas::kernels
