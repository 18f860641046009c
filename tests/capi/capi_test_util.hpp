// Helpers for the C API tests: conversions between the C types and std::complex<double>,
// random data, tolerances, an RAII handle, the per-type function tables, and plain
// column-major references.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/c/blas.h>

namespace capi_test {

using cd = std::complex<double>;

template <typename C>
inline constexpr bool kComplex =
    std::is_same_v<C, tsr_float_complex> || std::is_same_v<C, tsr_double_complex>;
template <typename C>
inline constexpr bool kSingle = std::is_same_v<C, float> || std::is_same_v<C, tsr_float_complex>;

inline cd to_cd(float v) {
  return v;
}
inline cd to_cd(double v) {
  return v;
}
inline cd to_cd(tsr_float_complex v) {
  return {v.re, v.im};
}
inline cd to_cd(tsr_double_complex v) {
  return {v.re, v.im};
}

template <typename C>
C from_cd(cd v) {
  if constexpr (std::is_same_v<C, float>)
    return static_cast<float>(v.real());
  else if constexpr (std::is_same_v<C, double>)
    return v.real();
  else if constexpr (std::is_same_v<C, tsr_float_complex>)
    return {static_cast<float>(v.real()), static_cast<float>(v.imag())};
  else
    return {v.real(), v.imag()};
}

// The real type of results such as asum and nrm2.
template <typename C>
using real_of = std::conditional_t<kSingle<C>, float, double>;

template <typename C>
double tol() {
  return kSingle<C> ? 2e-5 : 1e-12;
}

// Uniform in [-1, 1] (both parts for complex), deterministic per seed.
template <typename C>
std::vector<C> random_vec(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<C> v(n);
  for (auto& x : v) {
    const double re = dist(gen);
    const double im = kComplex<C> ? dist(gen) : 0.0;
    x = from_cd<C>({re, im});
  }
  return v;
}

// |got - want| <= tol * scale * (1 + |want|).
template <typename C>
::testing::AssertionResult near(C got, cd want, double scale = 1) {
  const cd g = to_cd(got);
  const double err = std::abs(g - want);
  if (err <= tol<C>() * scale * (1 + std::abs(want))) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got (" << g.real() << ", " << g.imag() << ") want ("
                                       << want.real() << ", " << want.imag() << ")";
}

template <typename C>
void expect_all_near(const std::vector<C>& got, const std::vector<cd>& want, double scale = 1) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(near(got[i], want[i], scale)) << i;
}

template <typename C>
std::vector<cd> widen(const std::vector<C>& v) {
  std::vector<cd> out;
  for (const C& x : v) out.push_back(to_cd(x));
  return out;
}

template <typename C>
bool same_bits(const std::vector<C>& a, const std::vector<C>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(C)) == 0;
}

// BLAS vector indexing: a negative increment walks the storage from its far end.
inline std::int64_t vi(std::int64_t i, std::int64_t n, std::int64_t inc) {
  return inc >= 0 ? i * inc : (n - 1 - i) * -inc;
}

// op(A)(i, j) of a column-major A.
inline cd op_at(const std::vector<cd>& a, std::int64_t lda, tsr_blas_op op, std::int64_t i,
                std::int64_t j) {
  if (op == TSR_BLAS_OP_N) return a[i + j * lda];
  const cd v = a[j + i * lda];
  return op == TSR_BLAS_OP_C ? std::conj(v) : v;
}

// The triangular matrix (uplo, diag) stored in A as a full n x n column-major matrix.
inline std::vector<cd> triangle(const std::vector<cd>& a, std::int64_t n, std::int64_t lda,
                                tsr_blas_uplo uplo, tsr_blas_diag diag) {
  std::vector<cd> t(n * n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const bool in = uplo == TSR_BLAS_UPLO_UPPER ? i <= j : i >= j;
      if (i == j)
        t[i + j * n] = diag == TSR_BLAS_DIAG_UNIT ? cd(1) : a[i + j * lda];
      else if (in)
        t[i + j * n] = a[i + j * lda];
    }
  return t;
}

// A triangular test matrix with a dominant diagonal (well conditioned for solves).
template <typename C>
std::vector<C> triangular_matrix(std::int64_t n, std::int64_t lda, unsigned seed) {
  std::vector<C> a = random_vec<C>(lda * n, seed);
  for (std::int64_t i = 0; i < n; ++i) {
    const cd d = to_cd(a[i + i * lda]);
    a[i + i * lda] = from_cd<C>(d + cd(d.real() >= 0 ? 3.0 : -3.0));
    for (std::int64_t j = 0; j < n; ++j)
      if (i != j) a[i + j * lda] = from_cd<C>(to_cd(a[i + j * lda]) * 0.25);
  }
  return a;
}

// An owned handle.
class Handle {
 public:
  Handle() { EXPECT_EQ(tsr_blas_create_handle(&h_), TSR_STATUS_OK); }
  ~Handle() { tsr_blas_destroy_handle(h_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator tsr_blas_handle() const { return h_; }

 private:
  tsr_blas_handle h_ = nullptr;
};

// Checks an invalid-argument failure and its message: it starts with `prefix` (the function
// name, or the start of it such as "tsr_blas_s") and contains `needle`.
inline ::testing::AssertionResult invalid(tsr_status s, const std::string& prefix,
                                          const std::string& needle) {
  const std::string msg = tsr_last_error_message();
  if (s != TSR_STATUS_INVALID_ARGUMENT)
    return ::testing::AssertionFailure() << "status " << tsr_status_name(s) << " (" << msg << ")";
  if (msg.rfind(prefix, 0) != 0 || msg.find(": ") == std::string::npos ||
      msg.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message \"" << msg << "\" does not start with \""
                                         << prefix << "\" or lacks \"" << needle << "\"";
  return ::testing::AssertionSuccess();
}

// ---- The C functions of one type, for typed tests ----------------------------------------

template <typename C>
struct Api;

template <>
struct Api<float> {
  static constexpr const char* kPrefix = "tsr_blas_s";
  static constexpr auto iamax = tsr_blas_isamax, iamin = tsr_blas_isamin;
  static constexpr auto asum = tsr_blas_sasum, nrm2 = tsr_blas_snrm2;
  static constexpr auto axpy = tsr_blas_saxpy, copy = tsr_blas_scopy, swap = tsr_blas_sswap;
  static constexpr auto dot = tsr_blas_sdot, scal = tsr_blas_sscal, rot = tsr_blas_srot;
  static constexpr auto rotg = tsr_blas_srotg;
  static constexpr auto gemv = tsr_blas_sgemv, geru = tsr_blas_sger, gerc = tsr_blas_sger;
  static constexpr auto trmv = tsr_blas_strmv, trsv = tsr_blas_strsv, symv = tsr_blas_ssymv;
  static constexpr auto gemm = tsr_blas_sgemm, gemm_batched = tsr_blas_sgemm_batched;
  static constexpr auto gemm_strided_batched = tsr_blas_sgemm_strided_batched;
  static constexpr auto trsm = tsr_blas_strsm, trmm = tsr_blas_strmm, syrk = tsr_blas_ssyrk;
  static constexpr auto trtri = tsr_blas_strtri, trtri_batched = tsr_blas_strtri_batched;
  static constexpr auto trtri_strided_batched = tsr_blas_strtri_strided_batched;
};

template <>
struct Api<double> {
  static constexpr const char* kPrefix = "tsr_blas_d";
  static constexpr auto iamax = tsr_blas_idamax, iamin = tsr_blas_idamin;
  static constexpr auto asum = tsr_blas_dasum, nrm2 = tsr_blas_dnrm2;
  static constexpr auto axpy = tsr_blas_daxpy, copy = tsr_blas_dcopy, swap = tsr_blas_dswap;
  static constexpr auto dot = tsr_blas_ddot, scal = tsr_blas_dscal, rot = tsr_blas_drot;
  static constexpr auto rotg = tsr_blas_drotg;
  static constexpr auto gemv = tsr_blas_dgemv, geru = tsr_blas_dger, gerc = tsr_blas_dger;
  static constexpr auto trmv = tsr_blas_dtrmv, trsv = tsr_blas_dtrsv, symv = tsr_blas_dsymv;
  static constexpr auto gemm = tsr_blas_dgemm, gemm_batched = tsr_blas_dgemm_batched;
  static constexpr auto gemm_strided_batched = tsr_blas_dgemm_strided_batched;
  static constexpr auto trsm = tsr_blas_dtrsm, trmm = tsr_blas_dtrmm, syrk = tsr_blas_dsyrk;
  static constexpr auto trtri = tsr_blas_dtrtri, trtri_batched = tsr_blas_dtrtri_batched;
  static constexpr auto trtri_strided_batched = tsr_blas_dtrtri_strided_batched;
};

template <>
struct Api<tsr_float_complex> {
  static constexpr const char* kPrefix = "tsr_blas_c";
  static constexpr auto iamax = tsr_blas_icamax, iamin = tsr_blas_icamin;
  static constexpr auto asum = tsr_blas_scasum, nrm2 = tsr_blas_scnrm2;
  static constexpr auto axpy = tsr_blas_caxpy, copy = tsr_blas_ccopy, swap = tsr_blas_cswap;
  static constexpr auto dot = tsr_blas_cdotu, dotc = tsr_blas_cdotc, scal = tsr_blas_cscal;
  static constexpr auto scal_real = tsr_blas_csscal, rot = tsr_blas_csrot;
  static constexpr auto rotg = tsr_blas_crotg;
  static constexpr auto gemv = tsr_blas_cgemv, geru = tsr_blas_cgeru, gerc = tsr_blas_cgerc;
  static constexpr auto trmv = tsr_blas_ctrmv, trsv = tsr_blas_ctrsv, symv = tsr_blas_csymv;
  static constexpr auto hemv = tsr_blas_chemv;
  static constexpr auto gemm = tsr_blas_cgemm, gemm_batched = tsr_blas_cgemm_batched;
  static constexpr auto gemm_strided_batched = tsr_blas_cgemm_strided_batched;
  static constexpr auto trsm = tsr_blas_ctrsm, trmm = tsr_blas_ctrmm, syrk = tsr_blas_csyrk;
  static constexpr auto trtri = tsr_blas_ctrtri, trtri_batched = tsr_blas_ctrtri_batched;
  static constexpr auto trtri_strided_batched = tsr_blas_ctrtri_strided_batched;
};

template <>
struct Api<tsr_double_complex> {
  static constexpr const char* kPrefix = "tsr_blas_z";
  static constexpr auto iamax = tsr_blas_izamax, iamin = tsr_blas_izamin;
  static constexpr auto asum = tsr_blas_dzasum, nrm2 = tsr_blas_dznrm2;
  static constexpr auto axpy = tsr_blas_zaxpy, copy = tsr_blas_zcopy, swap = tsr_blas_zswap;
  static constexpr auto dot = tsr_blas_zdotu, dotc = tsr_blas_zdotc, scal = tsr_blas_zscal;
  static constexpr auto scal_real = tsr_blas_zdscal, rot = tsr_blas_zdrot;
  static constexpr auto rotg = tsr_blas_zrotg;
  static constexpr auto gemv = tsr_blas_zgemv, geru = tsr_blas_zgeru, gerc = tsr_blas_zgerc;
  static constexpr auto trmv = tsr_blas_ztrmv, trsv = tsr_blas_ztrsv, symv = tsr_blas_zsymv;
  static constexpr auto hemv = tsr_blas_zhemv;
  static constexpr auto gemm = tsr_blas_zgemm, gemm_batched = tsr_blas_zgemm_batched;
  static constexpr auto gemm_strided_batched = tsr_blas_zgemm_strided_batched;
  static constexpr auto trsm = tsr_blas_ztrsm, trmm = tsr_blas_ztrmm, syrk = tsr_blas_zsyrk;
  static constexpr auto trtri = tsr_blas_ztrtri, trtri_batched = tsr_blas_ztrtri_batched;
  static constexpr auto trtri_strided_batched = tsr_blas_ztrtri_strided_batched;
};

using AllTypes = ::testing::Types<float, double, tsr_float_complex, tsr_double_complex>;

}  // namespace capi_test
