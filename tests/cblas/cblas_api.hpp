// The CBLAS routines of libtessera_cblas.so as a table of function pointers, filled either
// with the functions this test links (tessera) or with the same names looked up in OpenBLAS
// (opened at run time, never linked), so one test body runs against both.
#pragma once

#include <complex>
#include <cstdlib>
#include <string>
#include <vector>

#include <cblas.h>
#include <dlfcn.h>

// Every routine libtessera_cblas.so exports, by name without the cblas_ prefix.
// clang-format off
#define TESSERA_CBLAS_ROUTINES(X)                                                               \
  X(sdsdot) X(dsdot) X(sdot) X(ddot) X(cdotu_sub) X(cdotc_sub) X(zdotu_sub) X(zdotc_sub)         \
  X(snrm2) X(sasum) X(dnrm2) X(dasum) X(scnrm2) X(scasum) X(dznrm2) X(dzasum)                  \
  X(isamax) X(idamax) X(icamax) X(izamax) X(isamin) X(idamin) X(icamin) X(izamin)              \
  X(sswap) X(scopy) X(saxpy) X(dswap) X(dcopy) X(daxpy) X(cswap) X(ccopy) X(caxpy) X(zswap)    \
  X(zcopy) X(zaxpy) X(srotg) X(drotg) X(crotg) X(zrotg) X(srotmg) X(drotmg) X(srot) X(drot)    \
  X(csrot) X(zdrot) X(srotm) X(drotm) X(sscal) X(dscal) X(cscal) X(zscal) X(csscal) X(zdscal)  \
  X(sgemv) X(dgemv) X(cgemv) X(zgemv) X(sger) X(dger) X(cgeru) X(cgerc) X(zgeru) X(zgerc)      \
  X(strmv) X(dtrmv) X(ctrmv) X(ztrmv) X(strsv) X(dtrsv) X(ctrsv) X(ztrsv) X(ssymv) X(dsymv)    \
  X(chemv) X(zhemv) X(sgemm) X(dgemm) X(cgemm) X(zgemm) X(ssyrk) X(dsyrk) X(csyrk) X(zsyrk)    \
  X(strmm) X(dtrmm) X(ctrmm) X(ztrmm) X(strsm) X(dtrsm) X(ctrsm) X(ztrsm)
// clang-format on

namespace cblas_test {

struct CblasApi {
  const char* name;
#define TESSERA_CBLAS_FIELD(f) decltype(&cblas_##f) f = nullptr;
  TESSERA_CBLAS_ROUTINES(TESSERA_CBLAS_FIELD)
#undef TESSERA_CBLAS_FIELD
};

inline std::vector<std::string> routine_names() {
  std::vector<std::string> names;
#define TESSERA_CBLAS_NAME(f) names.push_back("cblas_" #f);
  TESSERA_CBLAS_ROUTINES(TESSERA_CBLAS_NAME)
#undef TESSERA_CBLAS_NAME
  return names;
}

inline const CblasApi& tessera_api() {
  static const CblasApi api = [] {
    CblasApi a{"tessera"};
#define TESSERA_CBLAS_SET(f) a.f = &cblas_##f;
    TESSERA_CBLAS_ROUTINES(TESSERA_CBLAS_SET)
#undef TESSERA_CBLAS_SET
    return a;
  }();
  return api;
}

inline const char* kOpenBlasPath = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0";

// OpenBLAS's routines of the same names, or nullptr when it is not installed (or lacks one).
// One OpenBLAS thread: the oracle needs no speed.
inline const CblasApi* openblas_api() {
  static const CblasApi* api = []() -> const CblasApi* {
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    void* lib = dlopen(kOpenBlasPath, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    static CblasApi a{"openblas"};
    bool complete = true;
#define TESSERA_CBLAS_LOOKUP(f)                                          \
  a.f = reinterpret_cast<decltype(&cblas_##f)>(dlsym(lib, "cblas_" #f)); \
  complete = complete && a.f != nullptr;
    TESSERA_CBLAS_ROUTINES(TESSERA_CBLAS_LOOKUP)
#undef TESSERA_CBLAS_LOOKUP
    return complete ? &a : nullptr;
  }();
  return api;
}

}  // namespace cblas_test
