// Internal helpers of libtessera_cblas.so: the per-thread BLAS handle, argument checks that
// report through cblas_xerbla with CBLAS parameter positions, and the conversions used to
// map row-major calls onto tessera's column-major routines.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "tessera/blas.hpp"

// Only the cblas_* functions are exported from the library (built with hidden visibility).
#pragma GCC visibility push(default)
#include "tessera/cblas/cblas.h"
#pragma GCC visibility pop

namespace tessera::cblas {

// One handle per calling thread (a Handle is not thread-safe); default settings.
blas::Handle& thread_handle();

// Argument checks for one call of `routine` ("cblas_sgemm"). Each returns true when the value
// is valid; otherwise it calls cblas_xerbla(p, routine, ...) with the parameter's 1-based
// position p and a message, and returns false. Use as `if (!a.size(4, "M", M) || ...) return;`
class Args {
 public:
  explicit Args(const char* routine) : routine_(routine) {}

  bool layout(int p, CBLAS_LAYOUT v) const noexcept;
  bool trans(int p, const char* name, CBLAS_TRANSPOSE v) const noexcept;
  // NoTrans or Trans only (complex syrk).
  bool trans_no_conj(int p, const char* name, CBLAS_TRANSPOSE v) const noexcept;
  bool uplo(int p, CBLAS_UPLO v) const noexcept;
  bool diag(int p, CBLAS_DIAG v) const noexcept;
  bool side(int p, CBLAS_SIDE v) const noexcept;
  bool size(int p, const char* name, int v) const noexcept;
  // Leading dimension of a rows x cols matrix stored in `layout`: at least max(1, rows) in
  // column-major order, max(1, cols) in row-major order.
  bool ld(int p, const char* name, int v, CBLAS_LAYOUT layout, const char* rows_name, int rows,
          const char* cols_name, int cols) const noexcept;
  bool inc(int p, const char* name, int v) const noexcept;
  // `needed`: the routine will read or write through the pointer.
  bool ptr(int p, const char* name, const void* v, bool needed) const noexcept;

  // Runs fn(handle), a tessera call returning Status. A failure (possible only for reasons
  // the checks above cannot see, such as running out of memory) is reported with p = 0.
  template <typename Fn>
  bool run(Fn&& fn) const noexcept {
    try {
      const Status status = fn(thread_handle());
      if (status.is_ok()) return true;
      return fail(0, status.to_string().c_str());
    } catch (const std::bad_alloc&) {
      return fail(0, "out of memory");
    } catch (const std::exception& e) {
      return fail(0, e.what());
    } catch (...) {
      return fail(0, "unknown exception");
    }
  }

  // Reports through cblas_xerbla; returns false.
  bool fail(int p, const char* message) const noexcept;

 private:
  const char* routine_;
};

inline bool row_major(CBLAS_LAYOUT layout) {
  return static_cast<int>(layout) == CblasRowMajor;
}
inline int value(CBLAS_TRANSPOSE t) {
  return static_cast<int>(t);
}

// A valid CBLAS_TRANSPOSE as tessera's Op.
inline blas::Op op(CBLAS_TRANSPOSE t) {
  switch (value(t)) {
    case CblasTrans:
      return blas::Op::kTrans;
    case CblasConjTrans:
      return blas::Op::kConjTrans;
    default:
      return blas::Op::kNoTrans;
  }
}
// A valid CBLAS_UPLO as tessera's Uplo; `flip` swaps upper and lower (the triangle of the
// transposed matrix that a row-major array is in column-major order).
inline blas::Uplo uplo(CBLAS_UPLO u, bool flip) {
  const bool upper = static_cast<int>(u) == CblasUpper;
  return upper != flip ? blas::Uplo::kUpper : blas::Uplo::kLower;
}
inline blas::Diag diag(CBLAS_DIAG d) {
  return static_cast<int>(d) == CblasUnit ? blas::Diag::kUnit : blas::Diag::kNonUnit;
}
inline blas::Side side(CBLAS_SIDE s, bool flip) {
  const bool left = static_cast<int>(s) == CblasLeft;
  return left != flip ? blas::Side::kLeft : blas::Side::kRight;
}

// A complex scalar passed as `const void*`.
template <typename T>
T load(const void* p) {
  T v;
  std::memcpy(static_cast<void*>(&v), p, sizeof(T));
  return v;
}
template <typename T>
const T* as(const void* p) {
  return static_cast<const T*>(p);
}
template <typename T>
T* as(void* p) {
  return static_cast<T*>(p);
}

// Conjugates the n elements of a strided vector in place (the same elements for inc and
// -inc). Exact, so applying it twice restores the vector.
template <typename R>
void conj_vector(std::int64_t n, std::complex<R>* x, std::int64_t inc) {
  const std::int64_t step = inc < 0 ? -inc : inc;
  for (std::int64_t i = 0; i < n; ++i) x[i * step] = std::conj(x[i * step]);
}

}  // namespace tessera::cblas
