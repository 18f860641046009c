// C API, BLAS level 1: one extern "C" function per routine and type over tessera::blas.
#include "capi.hpp"

namespace {

using tessera::Status;
using tessera::capi::check_result;
using tessera::capi::cpp;
using tessera::capi::cpp_t;
using tessera::capi::guard;
using tessera::capi::val;
using Handle = tessera::blas::Handle;
namespace blas = tessera::blas;

template <typename C>
tsr_status iamax_c(const char* fn, tsr_blas_handle h, int64_t n, const C* x, int64_t incx,
                   int64_t* result) {
  return guard(fn, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(result));
    return blas::iamax<cpp_t<C>>(hh, n, cpp(x), incx, result);
  });
}

template <typename C>
tsr_status iamin_c(const char* fn, tsr_blas_handle h, int64_t n, const C* x, int64_t incx,
                   int64_t* result) {
  return guard(fn, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(result));
    return blas::iamin<cpp_t<C>>(hh, n, cpp(x), incx, result);
  });
}

template <typename C, typename R>
tsr_status asum_c(const char* fn, tsr_blas_handle h, int64_t n, const C* x, int64_t incx,
                  R* result) {
  return guard(fn, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(result));
    return blas::asum<cpp_t<C>>(hh, n, cpp(x), incx, result);
  });
}

template <typename C, typename R>
tsr_status nrm2_c(const char* fn, tsr_blas_handle h, int64_t n, const C* x, int64_t incx,
                  R* result) {
  return guard(fn, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(result));
    return blas::nrm2<cpp_t<C>>(hh, n, cpp(x), incx, result);
  });
}

template <typename C, typename S>
tsr_status axpy_c(const char* fn, tsr_blas_handle h, int64_t n, S alpha, const C* x, int64_t incx,
                  C* y, int64_t incy) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::axpy<cpp_t<C>>(hh, n, val(alpha), cpp(x), incx, cpp(y), incy);
  });
}

template <typename C>
tsr_status copy_c(const char* fn, tsr_blas_handle h, int64_t n, const C* x, int64_t incx, C* y,
                  int64_t incy) {
  return guard(fn, h,
               [&](Handle& hh) { return blas::copy<cpp_t<C>>(hh, n, cpp(x), incx, cpp(y), incy); });
}

template <typename C, typename R>
tsr_status dot_c(const char* fn, tsr_blas_handle h, int64_t n, const C* x, int64_t incx, const C* y,
                 int64_t incy, R* result) {
  return guard(fn, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(result));
    return blas::dot<cpp_t<C>>(hh, n, cpp(x), incx, cpp(y), incy, cpp(result));
  });
}

template <typename C>
tsr_status dotc_c(const char* fn, tsr_blas_handle h, int64_t n, const C* x, int64_t incx,
                  const C* y, int64_t incy, C* result) {
  return guard(fn, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(result));
    return blas::dotc<cpp_t<C>>(hh, n, cpp(x), incx, cpp(y), incy, cpp(result));
  });
}

template <typename C, typename S>
tsr_status scal_c(const char* fn, tsr_blas_handle h, int64_t n, S alpha, C* x, int64_t incx) {
  return guard(fn, h,
               [&](Handle& hh) { return blas::scal<cpp_t<C>>(hh, n, val(alpha), cpp(x), incx); });
}

template <typename C, typename R>
tsr_status scal_real_c(const char* fn, tsr_blas_handle h, int64_t n, R alpha, C* x, int64_t incx) {
  return guard(fn, h,
               [&](Handle& hh) { return blas::scal_real<cpp_t<C>>(hh, n, alpha, cpp(x), incx); });
}

template <typename C>
tsr_status swap_c(const char* fn, tsr_blas_handle h, int64_t n, C* x, int64_t incx, C* y,
                  int64_t incy) {
  return guard(fn, h,
               [&](Handle& hh) { return blas::swap<cpp_t<C>>(hh, n, cpp(x), incx, cpp(y), incy); });
}

template <typename C, typename R>
tsr_status rot_c(const char* fn, tsr_blas_handle h, int64_t n, C* x, int64_t incx, C* y,
                 int64_t incy, R c, R s) {
  return guard(fn, h, [&](Handle& hh) {
    return blas::rot<cpp_t<C>>(hh, n, cpp(x), incx, cpp(y), incy, c, s);
  });
}

template <typename C, typename R>
tsr_status rotg_c(const char* fn, C* a, C* b, R* c, C* s) {
  return guard(fn, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(a, "a"));
    TESSERA_RETURN_IF_ERROR(check_result(b, "b"));
    TESSERA_RETURN_IF_ERROR(check_result(c, "c"));
    TESSERA_RETURN_IF_ERROR(check_result(s, "s"));
    return blas::rotg<cpp_t<C>>(cpp(a), cpp(b), c, cpp(s));
  });
}

using cf = tsr_float_complex;
using cd = tsr_double_complex;

}  // namespace

extern "C" {

// ---- iamax / iamin ----
TSR_API tsr_status tsr_blas_isamax(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                   int64_t* result) {
  return iamax_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_idamax(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                   int64_t* result) {
  return iamax_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_icamax(tsr_blas_handle h, int64_t n, const cf* x, int64_t incx,
                                   int64_t* result) {
  return iamax_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_izamax(tsr_blas_handle h, int64_t n, const cd* x, int64_t incx,
                                   int64_t* result) {
  return iamax_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_isamin(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                   int64_t* result) {
  return iamin_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_idamin(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                   int64_t* result) {
  return iamin_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_icamin(tsr_blas_handle h, int64_t n, const cf* x, int64_t incx,
                                   int64_t* result) {
  return iamin_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_izamin(tsr_blas_handle h, int64_t n, const cd* x, int64_t incx,
                                   int64_t* result) {
  return iamin_c(__func__, h, n, x, incx, result);
}

// ---- asum ----
TSR_API tsr_status tsr_blas_sasum(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                  float* result) {
  return asum_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_dasum(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                  double* result) {
  return asum_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_scasum(tsr_blas_handle h, int64_t n, const cf* x, int64_t incx,
                                   float* result) {
  return asum_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_dzasum(tsr_blas_handle h, int64_t n, const cd* x, int64_t incx,
                                   double* result) {
  return asum_c(__func__, h, n, x, incx, result);
}

// ---- axpy ----
TSR_API tsr_status tsr_blas_saxpy(tsr_blas_handle h, int64_t n, float alpha, const float* x,
                                  int64_t incx, float* y, int64_t incy) {
  return axpy_c(__func__, h, n, alpha, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_daxpy(tsr_blas_handle h, int64_t n, double alpha, const double* x,
                                  int64_t incx, double* y, int64_t incy) {
  return axpy_c(__func__, h, n, alpha, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_caxpy(tsr_blas_handle h, int64_t n, cf alpha, const cf* x, int64_t incx,
                                  cf* y, int64_t incy) {
  return axpy_c(__func__, h, n, alpha, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_zaxpy(tsr_blas_handle h, int64_t n, cd alpha, const cd* x, int64_t incx,
                                  cd* y, int64_t incy) {
  return axpy_c(__func__, h, n, alpha, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_haxpy(tsr_blas_handle h, int64_t n, float alpha, const tsr_half* x,
                                  int64_t incx, tsr_half* y, int64_t incy) {
  return axpy_c(__func__, h, n, alpha, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_bfaxpy(tsr_blas_handle h, int64_t n, float alpha, const tsr_bfloat16* x,
                                   int64_t incx, tsr_bfloat16* y, int64_t incy) {
  return axpy_c(__func__, h, n, alpha, x, incx, y, incy);
}

// ---- copy ----
TSR_API tsr_status tsr_blas_scopy(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                  float* y, int64_t incy) {
  return copy_c(__func__, h, n, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_dcopy(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                  double* y, int64_t incy) {
  return copy_c(__func__, h, n, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_ccopy(tsr_blas_handle h, int64_t n, const cf* x, int64_t incx, cf* y,
                                  int64_t incy) {
  return copy_c(__func__, h, n, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_zcopy(tsr_blas_handle h, int64_t n, const cd* x, int64_t incx, cd* y,
                                  int64_t incy) {
  return copy_c(__func__, h, n, x, incx, y, incy);
}

// ---- dot ----
TSR_API tsr_status tsr_blas_sdot(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                 const float* y, int64_t incy, float* result) {
  return dot_c(__func__, h, n, x, incx, y, incy, result);
}
TSR_API tsr_status tsr_blas_ddot(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                 const double* y, int64_t incy, double* result) {
  return dot_c(__func__, h, n, x, incx, y, incy, result);
}
TSR_API tsr_status tsr_blas_hdot(tsr_blas_handle h, int64_t n, const tsr_half* x, int64_t incx,
                                 const tsr_half* y, int64_t incy, float* result) {
  return dot_c(__func__, h, n, x, incx, y, incy, result);
}
TSR_API tsr_status tsr_blas_bfdot(tsr_blas_handle h, int64_t n, const tsr_bfloat16* x, int64_t incx,
                                  const tsr_bfloat16* y, int64_t incy, float* result) {
  return dot_c(__func__, h, n, x, incx, y, incy, result);
}
TSR_API tsr_status tsr_blas_cdotu(tsr_blas_handle h, int64_t n, const cf* x, int64_t incx,
                                  const cf* y, int64_t incy, cf* result) {
  return dot_c(__func__, h, n, x, incx, y, incy, result);
}
TSR_API tsr_status tsr_blas_zdotu(tsr_blas_handle h, int64_t n, const cd* x, int64_t incx,
                                  const cd* y, int64_t incy, cd* result) {
  return dot_c(__func__, h, n, x, incx, y, incy, result);
}
TSR_API tsr_status tsr_blas_cdotc(tsr_blas_handle h, int64_t n, const cf* x, int64_t incx,
                                  const cf* y, int64_t incy, cf* result) {
  return dotc_c(__func__, h, n, x, incx, y, incy, result);
}
TSR_API tsr_status tsr_blas_zdotc(tsr_blas_handle h, int64_t n, const cd* x, int64_t incx,
                                  const cd* y, int64_t incy, cd* result) {
  return dotc_c(__func__, h, n, x, incx, y, incy, result);
}

// ---- nrm2 ----
TSR_API tsr_status tsr_blas_snrm2(tsr_blas_handle h, int64_t n, const float* x, int64_t incx,
                                  float* result) {
  return nrm2_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_dnrm2(tsr_blas_handle h, int64_t n, const double* x, int64_t incx,
                                  double* result) {
  return nrm2_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_scnrm2(tsr_blas_handle h, int64_t n, const cf* x, int64_t incx,
                                   float* result) {
  return nrm2_c(__func__, h, n, x, incx, result);
}
TSR_API tsr_status tsr_blas_dznrm2(tsr_blas_handle h, int64_t n, const cd* x, int64_t incx,
                                   double* result) {
  return nrm2_c(__func__, h, n, x, incx, result);
}

// ---- scal ----
TSR_API tsr_status tsr_blas_sscal(tsr_blas_handle h, int64_t n, float alpha, float* x,
                                  int64_t incx) {
  return scal_c(__func__, h, n, alpha, x, incx);
}
TSR_API tsr_status tsr_blas_dscal(tsr_blas_handle h, int64_t n, double alpha, double* x,
                                  int64_t incx) {
  return scal_c(__func__, h, n, alpha, x, incx);
}
TSR_API tsr_status tsr_blas_cscal(tsr_blas_handle h, int64_t n, cf alpha, cf* x, int64_t incx) {
  return scal_c(__func__, h, n, alpha, x, incx);
}
TSR_API tsr_status tsr_blas_zscal(tsr_blas_handle h, int64_t n, cd alpha, cd* x, int64_t incx) {
  return scal_c(__func__, h, n, alpha, x, incx);
}
TSR_API tsr_status tsr_blas_hscal(tsr_blas_handle h, int64_t n, float alpha, tsr_half* x,
                                  int64_t incx) {
  return scal_c(__func__, h, n, alpha, x, incx);
}
TSR_API tsr_status tsr_blas_bfscal(tsr_blas_handle h, int64_t n, float alpha, tsr_bfloat16* x,
                                   int64_t incx) {
  return scal_c(__func__, h, n, alpha, x, incx);
}
TSR_API tsr_status tsr_blas_csscal(tsr_blas_handle h, int64_t n, float alpha, cf* x, int64_t incx) {
  return scal_real_c(__func__, h, n, alpha, x, incx);
}
TSR_API tsr_status tsr_blas_zdscal(tsr_blas_handle h, int64_t n, double alpha, cd* x,
                                   int64_t incx) {
  return scal_real_c(__func__, h, n, alpha, x, incx);
}

// ---- swap ----
TSR_API tsr_status tsr_blas_sswap(tsr_blas_handle h, int64_t n, float* x, int64_t incx, float* y,
                                  int64_t incy) {
  return swap_c(__func__, h, n, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_dswap(tsr_blas_handle h, int64_t n, double* x, int64_t incx, double* y,
                                  int64_t incy) {
  return swap_c(__func__, h, n, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_cswap(tsr_blas_handle h, int64_t n, cf* x, int64_t incx, cf* y,
                                  int64_t incy) {
  return swap_c(__func__, h, n, x, incx, y, incy);
}
TSR_API tsr_status tsr_blas_zswap(tsr_blas_handle h, int64_t n, cd* x, int64_t incx, cd* y,
                                  int64_t incy) {
  return swap_c(__func__, h, n, x, incx, y, incy);
}

// ---- rot / rotg ----
TSR_API tsr_status tsr_blas_srot(tsr_blas_handle h, int64_t n, float* x, int64_t incx, float* y,
                                 int64_t incy, float c, float s) {
  return rot_c(__func__, h, n, x, incx, y, incy, c, s);
}
TSR_API tsr_status tsr_blas_drot(tsr_blas_handle h, int64_t n, double* x, int64_t incx, double* y,
                                 int64_t incy, double c, double s) {
  return rot_c(__func__, h, n, x, incx, y, incy, c, s);
}
TSR_API tsr_status tsr_blas_csrot(tsr_blas_handle h, int64_t n, cf* x, int64_t incx, cf* y,
                                  int64_t incy, float c, float s) {
  return rot_c(__func__, h, n, x, incx, y, incy, c, s);
}
TSR_API tsr_status tsr_blas_zdrot(tsr_blas_handle h, int64_t n, cd* x, int64_t incx, cd* y,
                                  int64_t incy, double c, double s) {
  return rot_c(__func__, h, n, x, incx, y, incy, c, s);
}
TSR_API tsr_status tsr_blas_srotg(float* a, float* b, float* c, float* s) {
  return rotg_c(__func__, a, b, c, s);
}
TSR_API tsr_status tsr_blas_drotg(double* a, double* b, double* c, double* s) {
  return rotg_c(__func__, a, b, c, s);
}
TSR_API tsr_status tsr_blas_crotg(cf* a, cf* b, float* c, cf* s) {
  return rotg_c(__func__, a, b, c, s);
}
TSR_API tsr_status tsr_blas_zrotg(cd* a, cd* b, double* c, cd* s) {
  return rotg_c(__func__, a, b, c, s);
}

}  // extern "C"
