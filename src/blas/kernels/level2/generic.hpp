// Plain C++ level-2 kernels for every type: the generic table's float/double entries and the
// only implementation for complex types. Same contracts as RealLevel2 in kernels.hpp, with a
// conjugation flag for complex: gemv_t and sym_panel's dots use conj(A(i, j)) when `conj`.
#pragma once

#include <cstdint>

namespace tessera::blas::kernels {

template <typename T>
void gemv_n_generic(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x, T* y);
template <typename T>
void gemv_t_generic(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* x,
                    bool conj, T* r);
template <typename T>
void ger_generic(std::int64_t m, std::int64_t n, const T* x, const T* y, T* a, std::int64_t lda);
template <typename T>
void sym_panel_generic(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, const T* xc,
                       const T* x, bool conj, T* p, T* dots);

}  // namespace tessera::blas::kernels
