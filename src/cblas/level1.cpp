// CBLAS level 1 over tessera::blas. Quick returns follow the reference BLAS: nothing happens
// (and a result is 0) for N <= 0, and for incX <= 0 in i?amax, ?asum and ?scal. ?nrm2 walks a
// negative increment from the far end and repeats x[0] for a zero one (LAPACK 3.10+). A zero
// increment on a vector the routine writes (Y of axpy/copy, X and Y of swap/rot) is rejected
// through cblas_xerbla; on a vector it only reads it repeats element 0.
#include "common.hpp"

namespace {

using tessera::blas::Handle;
using tessera::cblas::Args;
using tessera::cblas::as;
using tessera::cblas::load;
namespace blas = tessera::blas;
using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

template <typename T, bool kMax>
CBLAS_INDEX iamax_impl(const char* rout, int n, const T* x, int incx) {
  if (n <= 0 || incx <= 0) return 0;
  Args a(rout);
  if (!a.ptr(2, "X", x, true)) return 0;
  std::int64_t index = 0;
  a.run([&](Handle& h) {
    return kMax ? blas::iamax<T>(h, n, x, incx, &index) : blas::iamin<T>(h, n, x, incx, &index);
  });
  return static_cast<CBLAS_INDEX>(index);
}

template <typename T>
blas::real_t<T> asum_impl(const char* rout, int n, const T* x, int incx) {
  blas::real_t<T> result = 0;
  if (n <= 0 || incx <= 0) return result;
  Args a(rout);
  if (!a.ptr(2, "X", x, true)) return result;
  a.run([&](Handle& h) { return blas::asum<T>(h, n, x, incx, &result); });
  return result;
}

template <typename T>
blas::real_t<T> nrm2_impl(const char* rout, int n, const T* x, int incx) {
  blas::real_t<T> result = 0;
  if (n <= 0) return result;
  Args a(rout);
  if (!a.ptr(2, "X", x, true)) return result;
  a.run([&](Handle& h) { return blas::nrm2<T>(h, n, x, incx, &result); });
  return result;
}

template <typename T>
T dot_impl(const char* rout, int n, const T* x, int incx, const T* y, int incy) {
  T result{};
  if (n <= 0) return result;
  Args a(rout);
  if (!a.ptr(2, "X", x, true) || !a.ptr(4, "Y", y, true)) return result;
  a.run([&](Handle& h) { return blas::dot<T>(h, n, x, incx, y, incy, &result); });
  return result;
}

// The complex dots return through a pointer (the 6th parameter); 0 when N <= 0.
template <typename T, bool kConj>
void dot_sub_impl(const char* rout, int n, const void* xv, int incx, const void* yv, int incy,
                  void* out) {
  Args a(rout);
  if (!a.ptr(6, kConj ? "dotc" : "dotu", out, true)) return;
  T result{};
  if (n > 0) {
    const T* x = as<T>(xv);
    const T* y = as<T>(yv);
    if (!a.ptr(2, "X", x, true) || !a.ptr(4, "Y", y, true)) return;
    const bool ok = a.run([&](Handle& h) {
      return kConj ? blas::dotc<T>(h, n, x, incx, y, incy, &result)
                   : blas::dot<T>(h, n, x, incx, y, incy, &result);
    });
    if (!ok) return;
  }
  std::memcpy(out, static_cast<const void*>(&result), sizeof(T));
}

template <typename T>
void swap_impl(const char* rout, int n, T* x, int incx, T* y, int incy) {
  if (n <= 0) return;
  Args a(rout);
  if (!a.inc(3, "incX", incx) || !a.inc(5, "incY", incy) || !a.ptr(2, "X", x, true) ||
      !a.ptr(4, "Y", y, true))
    return;
  a.run([&](Handle& h) { return blas::swap<T>(h, n, x, incx, y, incy); });
}

template <typename T>
void copy_impl(const char* rout, int n, const T* x, int incx, T* y, int incy) {
  if (n <= 0) return;
  Args a(rout);
  if (!a.inc(5, "incY", incy) || !a.ptr(2, "X", x, true) || !a.ptr(4, "Y", y, true)) return;
  a.run([&](Handle& h) { return blas::copy<T>(h, n, x, incx, y, incy); });
}

template <typename T>
void axpy_impl(const char* rout, int n, T alpha, const T* x, int incx, T* y, int incy) {
  if (n <= 0) return;
  Args a(rout);
  if (!a.inc(6, "incY", incy) || !a.ptr(3, "X", x, true) || !a.ptr(5, "Y", y, true)) return;
  a.run([&](Handle& h) { return blas::axpy<T>(h, n, alpha, x, incx, y, incy); });
}

template <typename T, typename S>
void scal_impl(const char* rout, int n, S alpha, T* x, int incx) {
  if (n <= 0 || incx <= 0) return;
  Args a(rout);
  if (!a.ptr(3, "X", x, true)) return;
  a.run([&](Handle& h) {
    if constexpr (std::is_same_v<S, T>)
      return blas::scal<T>(h, n, alpha, x, incx);
    else
      return blas::scal_real<T>(h, n, alpha, x, incx);
  });
}

template <typename T>
void rot_impl(const char* rout, int n, T* x, int incx, T* y, int incy, blas::real_t<T> c,
              blas::real_t<T> s) {
  if (n <= 0) return;
  Args a(rout);
  if (!a.inc(3, "incX", incx) || !a.inc(5, "incY", incy) || !a.ptr(2, "X", x, true) ||
      !a.ptr(4, "Y", y, true))
    return;
  a.run([&](Handle& h) { return blas::rot<T>(h, n, x, incx, y, incy, c, s); });
}

template <typename T>
void rotg_impl(const char* rout, T* ap, T* bp, blas::real_t<T>* c, T* s) {
  Args a(rout);
  if (!a.ptr(1, "a", ap, true) || !a.ptr(2, "b", bp, true) || !a.ptr(3, "c", c, true) ||
      !a.ptr(4, "s", s, true))
    return;
  a.run([&](Handle&) { return blas::rotg<T>(ap, bp, c, s); });
}

}  // namespace

extern "C" {

// ---- dot ----
float cblas_sdot(const int N, const float* X, const int incX, const float* Y, const int incY) {
  return dot_impl("cblas_sdot", N, X, incX, Y, incY);
}
double cblas_ddot(const int N, const double* X, const int incX, const double* Y, const int incY) {
  return dot_impl("cblas_ddot", N, X, incX, Y, incY);
}
void cblas_cdotu_sub(const int N, const void* X, const int incX, const void* Y, const int incY,
                     void* dotu) {
  dot_sub_impl<cfloat, false>("cblas_cdotu_sub", N, X, incX, Y, incY, dotu);
}
void cblas_cdotc_sub(const int N, const void* X, const int incX, const void* Y, const int incY,
                     void* dotc) {
  dot_sub_impl<cfloat, true>("cblas_cdotc_sub", N, X, incX, Y, incY, dotc);
}
void cblas_zdotu_sub(const int N, const void* X, const int incX, const void* Y, const int incY,
                     void* dotu) {
  dot_sub_impl<cdouble, false>("cblas_zdotu_sub", N, X, incX, Y, incY, dotu);
}
void cblas_zdotc_sub(const int N, const void* X, const int incX, const void* Y, const int incY,
                     void* dotc) {
  dot_sub_impl<cdouble, true>("cblas_zdotc_sub", N, X, incX, Y, incY, dotc);
}

// ---- nrm2 / asum ----
float cblas_snrm2(const int N, const float* X, const int incX) {
  return nrm2_impl("cblas_snrm2", N, X, incX);
}
double cblas_dnrm2(const int N, const double* X, const int incX) {
  return nrm2_impl("cblas_dnrm2", N, X, incX);
}
float cblas_scnrm2(const int N, const void* X, const int incX) {
  return nrm2_impl("cblas_scnrm2", N, as<cfloat>(X), incX);
}
double cblas_dznrm2(const int N, const void* X, const int incX) {
  return nrm2_impl("cblas_dznrm2", N, as<cdouble>(X), incX);
}
float cblas_sasum(const int N, const float* X, const int incX) {
  return asum_impl("cblas_sasum", N, X, incX);
}
double cblas_dasum(const int N, const double* X, const int incX) {
  return asum_impl("cblas_dasum", N, X, incX);
}
float cblas_scasum(const int N, const void* X, const int incX) {
  return asum_impl("cblas_scasum", N, as<cfloat>(X), incX);
}
double cblas_dzasum(const int N, const void* X, const int incX) {
  return asum_impl("cblas_dzasum", N, as<cdouble>(X), incX);
}

// ---- i?amax / i?amin ----
CBLAS_INDEX cblas_isamax(const int N, const float* X, const int incX) {
  return iamax_impl<float, true>("cblas_isamax", N, X, incX);
}
CBLAS_INDEX cblas_idamax(const int N, const double* X, const int incX) {
  return iamax_impl<double, true>("cblas_idamax", N, X, incX);
}
CBLAS_INDEX cblas_icamax(const int N, const void* X, const int incX) {
  return iamax_impl<cfloat, true>("cblas_icamax", N, as<cfloat>(X), incX);
}
CBLAS_INDEX cblas_izamax(const int N, const void* X, const int incX) {
  return iamax_impl<cdouble, true>("cblas_izamax", N, as<cdouble>(X), incX);
}
CBLAS_INDEX cblas_isamin(const int N, const float* X, const int incX) {
  return iamax_impl<float, false>("cblas_isamin", N, X, incX);
}
CBLAS_INDEX cblas_idamin(const int N, const double* X, const int incX) {
  return iamax_impl<double, false>("cblas_idamin", N, X, incX);
}
CBLAS_INDEX cblas_icamin(const int N, const void* X, const int incX) {
  return iamax_impl<cfloat, false>("cblas_icamin", N, as<cfloat>(X), incX);
}
CBLAS_INDEX cblas_izamin(const int N, const void* X, const int incX) {
  return iamax_impl<cdouble, false>("cblas_izamin", N, as<cdouble>(X), incX);
}

// ---- swap / copy / axpy ----
void cblas_sswap(const int N, float* X, const int incX, float* Y, const int incY) {
  swap_impl("cblas_sswap", N, X, incX, Y, incY);
}
void cblas_dswap(const int N, double* X, const int incX, double* Y, const int incY) {
  swap_impl("cblas_dswap", N, X, incX, Y, incY);
}
void cblas_cswap(const int N, void* X, const int incX, void* Y, const int incY) {
  swap_impl("cblas_cswap", N, as<cfloat>(X), incX, as<cfloat>(Y), incY);
}
void cblas_zswap(const int N, void* X, const int incX, void* Y, const int incY) {
  swap_impl("cblas_zswap", N, as<cdouble>(X), incX, as<cdouble>(Y), incY);
}
void cblas_scopy(const int N, const float* X, const int incX, float* Y, const int incY) {
  copy_impl("cblas_scopy", N, X, incX, Y, incY);
}
void cblas_dcopy(const int N, const double* X, const int incX, double* Y, const int incY) {
  copy_impl("cblas_dcopy", N, X, incX, Y, incY);
}
void cblas_ccopy(const int N, const void* X, const int incX, void* Y, const int incY) {
  copy_impl("cblas_ccopy", N, as<cfloat>(X), incX, as<cfloat>(Y), incY);
}
void cblas_zcopy(const int N, const void* X, const int incX, void* Y, const int incY) {
  copy_impl("cblas_zcopy", N, as<cdouble>(X), incX, as<cdouble>(Y), incY);
}
void cblas_saxpy(const int N, const float alpha, const float* X, const int incX, float* Y,
                 const int incY) {
  axpy_impl("cblas_saxpy", N, alpha, X, incX, Y, incY);
}
void cblas_daxpy(const int N, const double alpha, const double* X, const int incX, double* Y,
                 const int incY) {
  axpy_impl("cblas_daxpy", N, alpha, X, incX, Y, incY);
}
void cblas_caxpy(const int N, const void* alpha, const void* X, const int incX, void* Y,
                 const int incY) {
  if (N <= 0) return;
  if (!Args("cblas_caxpy").ptr(2, "alpha", alpha, true)) return;
  axpy_impl("cblas_caxpy", N, load<cfloat>(alpha), as<cfloat>(X), incX, as<cfloat>(Y), incY);
}
void cblas_zaxpy(const int N, const void* alpha, const void* X, const int incX, void* Y,
                 const int incY) {
  if (N <= 0) return;
  if (!Args("cblas_zaxpy").ptr(2, "alpha", alpha, true)) return;
  axpy_impl("cblas_zaxpy", N, load<cdouble>(alpha), as<cdouble>(X), incX, as<cdouble>(Y), incY);
}

// ---- scal ----
void cblas_sscal(const int N, const float alpha, float* X, const int incX) {
  scal_impl("cblas_sscal", N, alpha, X, incX);
}
void cblas_dscal(const int N, const double alpha, double* X, const int incX) {
  scal_impl("cblas_dscal", N, alpha, X, incX);
}
void cblas_cscal(const int N, const void* alpha, void* X, const int incX) {
  if (N <= 0 || incX <= 0) return;
  if (!Args("cblas_cscal").ptr(2, "alpha", alpha, true)) return;
  scal_impl("cblas_cscal", N, load<cfloat>(alpha), as<cfloat>(X), incX);
}
void cblas_zscal(const int N, const void* alpha, void* X, const int incX) {
  if (N <= 0 || incX <= 0) return;
  if (!Args("cblas_zscal").ptr(2, "alpha", alpha, true)) return;
  scal_impl("cblas_zscal", N, load<cdouble>(alpha), as<cdouble>(X), incX);
}
void cblas_csscal(const int N, const float alpha, void* X, const int incX) {
  scal_impl("cblas_csscal", N, alpha, as<cfloat>(X), incX);
}
void cblas_zdscal(const int N, const double alpha, void* X, const int incX) {
  scal_impl("cblas_zdscal", N, alpha, as<cdouble>(X), incX);
}

// ---- rot / rotg ----
void cblas_srot(const int N, float* X, const int incX, float* Y, const int incY, const float c,
                const float s) {
  rot_impl("cblas_srot", N, X, incX, Y, incY, c, s);
}
void cblas_drot(const int N, double* X, const int incX, double* Y, const int incY, const double c,
                const double s) {
  rot_impl("cblas_drot", N, X, incX, Y, incY, c, s);
}
void cblas_csrot(const int N, void* X, const int incX, void* Y, const int incY, const float c,
                 const float s) {
  rot_impl("cblas_csrot", N, as<cfloat>(X), incX, as<cfloat>(Y), incY, c, s);
}
void cblas_zdrot(const int N, void* X, const int incX, void* Y, const int incY, const double c,
                 const double s) {
  rot_impl("cblas_zdrot", N, as<cdouble>(X), incX, as<cdouble>(Y), incY, c, s);
}
void cblas_srotg(float* a, float* b, float* c, float* s) {
  rotg_impl("cblas_srotg", a, b, c, s);
}
void cblas_drotg(double* a, double* b, double* c, double* s) {
  rotg_impl("cblas_drotg", a, b, c, s);
}
void cblas_crotg(void* a, void* b, float* c, void* s) {
  rotg_impl("cblas_crotg", as<cfloat>(a), as<cfloat>(b), c, as<cfloat>(s));
}
void cblas_zrotg(void* a, void* b, double* c, void* s) {
  rotg_impl("cblas_zrotg", as<cdouble>(a), as<cdouble>(b), c, as<cdouble>(s));
}

}  // extern "C"
