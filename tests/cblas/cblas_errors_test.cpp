// Invalid CBLAS arguments: cblas_xerbla is called with the parameter's 1-based position and
// the routine name, and nothing is written. This executable defines its own cblas_xerbla,
// which replaces the library's weak one (as a program may do).
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cblas_test_util.hpp"

namespace {

struct XerblaCall {
  int p;
  std::string routine, message;
};
std::vector<XerblaCall> g_calls;

}  // namespace

extern "C" void cblas_xerbla(int p, const char* rout, const char* form, ...) {
  char buf[512];
  va_list args;
  va_start(args, form);
  std::vsnprintf(buf, sizeof buf, form, args);
  va_end(args);
  g_calls.push_back({p, rout, buf});
}

namespace cblas_test {
namespace {

// Calls `call` and expects exactly one xerbla report for (routine, p) whose message contains
// `needle`, with `out` bitwise unchanged.
template <typename V>
void expect_error(const char* routine, int p, const char* needle, std::vector<V>& out,
                  const std::function<void()>& call) {
  SCOPED_TRACE(::testing::Message() << routine << " parameter " << p);
  const std::vector<V> before = out;
  g_calls.clear();
  call();
  ASSERT_EQ(g_calls.size(), 1u);
  EXPECT_EQ(g_calls[0].p, p) << g_calls[0].message;
  EXPECT_EQ(g_calls[0].routine, routine);
  EXPECT_NE(g_calls[0].message.find(needle), std::string::npos) << g_calls[0].message;
  EXPECT_EQ(std::memcmp(before.data(), out.data(), out.size() * sizeof(V)), 0);
}

constexpr CBLAS_LAYOUT C = CblasColMajor, R = CblasRowMajor;
constexpr CBLAS_TRANSPOSE N = CblasNoTrans, T = CblasTrans;
constexpr CBLAS_UPLO U = CblasUpper;
constexpr CBLAS_DIAG D = CblasNonUnit;
constexpr CBLAS_SIDE L = CblasLeft;
constexpr auto kBadLayout = static_cast<CBLAS_LAYOUT>(100);
constexpr auto kBadTrans = static_cast<CBLAS_TRANSPOSE>(114);
constexpr auto kBadUplo = static_cast<CBLAS_UPLO>(0);
constexpr auto kBadDiag = static_cast<CBLAS_DIAG>(133);
constexpr auto kBadSide = static_cast<CBLAS_SIDE>(-1);

TEST(CblasErrors, Gemm) {
  std::vector<double> a(64, 1), b(64, 1), c(64, 2);
  auto gemm = [&](CBLAS_LAYOUT l, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                  int lda, int ldb, int ldc, const double* ap = nullptr) {
    return [=, &a, &b, &c] {
      cblas_dgemm(l, ta, tb, m, n, k, 1.0, ap ? ap : a.data(), lda, b.data(), ldb, 0.0, c.data(),
                  ldc);
    };
  };
  expect_error("cblas_dgemm", 1, "layout", c, gemm(kBadLayout, N, N, 2, 2, 2, 2, 2, 2));
  expect_error("cblas_dgemm", 2, "TransA", c, gemm(C, kBadTrans, N, 2, 2, 2, 2, 2, 2));
  expect_error("cblas_dgemm", 3, "TransB", c, gemm(C, N, kBadTrans, 2, 2, 2, 2, 2, 2));
  expect_error("cblas_dgemm", 4, "M = -1", c, gemm(C, N, N, -1, 2, 2, 2, 2, 2));
  expect_error("cblas_dgemm", 5, "N = -2", c, gemm(C, N, N, 2, -2, 2, 2, 2, 2));
  expect_error("cblas_dgemm", 6, "K = -3", c, gemm(C, N, N, 2, 2, -3, 2, 2, 2));
  // lda: column-major A (m x k, NoTrans) needs lda >= m; row-major needs lda >= k.
  expect_error("cblas_dgemm", 9, "lda = 2", c, gemm(C, N, N, 3, 2, 2, 2, 3, 3));
  gemm(R, N, N, 3, 2, 2, 2, 2, 2)();  // valid in row-major: rows of A hold k = 2
  expect_error("cblas_dgemm", 9, "row-major", c, gemm(R, N, N, 2, 2, 3, 2, 2, 2));
  expect_error("cblas_dgemm", 9, "lda", c, gemm(C, T, N, 2, 2, 3, 2, 3, 2));
  expect_error("cblas_dgemm", 11, "ldb", c, gemm(C, N, N, 2, 2, 3, 2, 2, 2));
  expect_error("cblas_dgemm", 11, "ldb", c, gemm(R, N, T, 2, 3, 2, 2, 1, 3));
  expect_error("cblas_dgemm", 14, "ldc", c, gemm(C, N, N, 3, 2, 2, 3, 2, 2));
  expect_error("cblas_dgemm", 14, "ldc", c, gemm(R, N, N, 2, 3, 2, 2, 3, 2));
  expect_error("cblas_dgemm", 8, "A is null", c, [&] {
    cblas_dgemm(C, N, N, 2, 2, 2, 1.0, nullptr, 2, b.data(), 2, 0.0, c.data(), 2);
  });
  // Complex: null alpha.
  std::vector<cfloat> zc(16, cfloat(1, 2)), za(16), zb(16);
  const cfloat one(1, 0);
  expect_error("cblas_cgemm", 7, "alpha is null", zc, [&] {
    cblas_cgemm(C, N, N, 2, 2, 2, nullptr, za.data(), 2, zb.data(), 2, &one, zc.data(), 2);
  });
  g_calls.clear();
  cblas_dgemm(C, N, N, 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 2);
  EXPECT_TRUE(g_calls.empty());
  EXPECT_EQ(c[0], 2.0);
}

TEST(CblasErrors, Level2) {
  std::vector<float> a(64, 1), x(16, 1), y(16, 3);
  auto gemv = [&](CBLAS_LAYOUT l, CBLAS_TRANSPOSE t, int m, int n, int lda, int incx, int incy) {
    return [=, &a, &x, &y] {
      cblas_sgemv(l, t, m, n, 1.0f, a.data(), lda, x.data(), incx, 0.0f, y.data(), incy);
    };
  };
  expect_error("cblas_sgemv", 1, "layout", y, gemv(kBadLayout, N, 2, 2, 2, 1, 1));
  expect_error("cblas_sgemv", 2, "TransA", y, gemv(C, kBadTrans, 2, 2, 2, 1, 1));
  expect_error("cblas_sgemv", 3, "M", y, gemv(C, N, -1, 2, 2, 1, 1));
  expect_error("cblas_sgemv", 4, "N", y, gemv(C, N, 2, -1, 2, 1, 1));
  expect_error("cblas_sgemv", 7, "lda", y, gemv(C, N, 3, 2, 2, 1, 1));
  expect_error("cblas_sgemv", 7, "row-major", y, gemv(R, N, 2, 3, 2, 1, 1));
  expect_error("cblas_sgemv", 9, "incX", y, gemv(C, N, 2, 2, 2, 0, 1));
  expect_error("cblas_sgemv", 12, "incY", y, gemv(C, N, 2, 2, 2, 1, 0));

  expect_error("cblas_sger", 2, "M", a,
               [&] { cblas_sger(C, -1, 2, 1.0f, x.data(), 1, y.data(), 1, a.data(), 2); });
  expect_error("cblas_sger", 6, "incX", a,
               [&] { cblas_sger(C, 2, 2, 1.0f, x.data(), 0, y.data(), 1, a.data(), 2); });
  expect_error("cblas_sger", 10, "lda", a,
               [&] { cblas_sger(R, 2, 3, 1.0f, x.data(), 1, y.data(), 1, a.data(), 2); });

  auto trsv = [&](CBLAS_LAYOUT l, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, int lda,
                  int incx) {
    return [=, &a, &x] { cblas_strsv(l, u, t, d, n, a.data(), lda, x.data(), incx); };
  };
  expect_error("cblas_strsv", 1, "layout", x, trsv(kBadLayout, U, N, D, 2, 2, 1));
  expect_error("cblas_strsv", 2, "Uplo", x, trsv(C, kBadUplo, N, D, 2, 2, 1));
  expect_error("cblas_strsv", 3, "TransA", x, trsv(C, U, kBadTrans, D, 2, 2, 1));
  expect_error("cblas_strsv", 4, "Diag", x, trsv(C, U, N, kBadDiag, 2, 2, 1));
  expect_error("cblas_strsv", 5, "N", x, trsv(C, U, N, D, -4, 2, 1));
  expect_error("cblas_strsv", 7, "lda", x, trsv(C, U, N, D, 3, 2, 1));
  expect_error("cblas_strsv", 9, "incX", x, trsv(C, U, N, D, 2, 2, 0));
  expect_error("cblas_strmv", 7, "lda", x,
               [&] { cblas_strmv(R, U, N, D, 3, a.data(), 2, x.data(), 1); });

  expect_error("cblas_ssymv", 2, "Uplo", y, [&] {
    cblas_ssymv(C, kBadUplo, 2, 1.0f, a.data(), 2, x.data(), 1, 0.0f, y.data(), 1);
  });
  expect_error("cblas_ssymv", 6, "lda", y,
               [&] { cblas_ssymv(C, U, 3, 1.0f, a.data(), 2, x.data(), 1, 0.0f, y.data(), 1); });
  expect_error("cblas_ssymv", 11, "incY", y,
               [&] { cblas_ssymv(C, U, 2, 1.0f, a.data(), 2, x.data(), 1, 0.0f, y.data(), 0); });
  std::vector<cdouble> za(16), zx(4), zy(4, cdouble(1, 1));
  const cdouble one(1, 0);
  expect_error("cblas_zhemv", 9, "beta is null", zy, [&] {
    cblas_zhemv(R, U, 2, &one, za.data(), 2, zx.data(), 1, nullptr, zy.data(), 1);
  });
  expect_error("cblas_zgerc", 9, "A is null", zy,
               [&] { cblas_zgerc(C, 2, 2, &one, zx.data(), 1, zy.data(), 1, nullptr, 2); });
}

TEST(CblasErrors, Level3) {
  std::vector<float> a(64, 1), b(64, 5);
  auto trsm = [&](CBLAS_LAYOUT l, CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d,
                  int m, int n, int lda, int ldb) {
    return [=, &a, &b] { cblas_strsm(l, s, u, t, d, m, n, 1.0f, a.data(), lda, b.data(), ldb); };
  };
  expect_error("cblas_strsm", 1, "layout", b, trsm(kBadLayout, L, U, N, D, 2, 2, 2, 2));
  expect_error("cblas_strsm", 2, "Side", b, trsm(C, kBadSide, U, N, D, 2, 2, 2, 2));
  expect_error("cblas_strsm", 3, "Uplo", b, trsm(C, L, kBadUplo, N, D, 2, 2, 2, 2));
  expect_error("cblas_strsm", 4, "TransA", b, trsm(C, L, U, kBadTrans, D, 2, 2, 2, 2));
  expect_error("cblas_strsm", 5, "Diag", b, trsm(C, L, U, N, kBadDiag, 2, 2, 2, 2));
  expect_error("cblas_strsm", 6, "M", b, trsm(C, L, U, N, D, -1, 2, 2, 2));
  expect_error("cblas_strsm", 7, "N", b, trsm(C, L, U, N, D, 2, -1, 2, 2));
  expect_error("cblas_strsm", 10, "lda", b, trsm(C, L, U, N, D, 3, 2, 2, 3));
  expect_error("cblas_strsm", 10, "lda", b, trsm(R, CblasRight, U, N, D, 2, 3, 2, 3));
  expect_error("cblas_strsm", 12, "ldb", b, trsm(C, L, U, N, D, 3, 2, 3, 2));
  expect_error("cblas_strsm", 12, "row-major", b, trsm(R, L, U, N, D, 2, 3, 2, 2));
  expect_error("cblas_strmm", 12, "ldb", b,
               [&] { cblas_strmm(C, L, U, N, D, 3, 2, 1.0f, a.data(), 3, b.data(), 2); });

  auto syrk = [&](CBLAS_LAYOUT l, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int n, int k, int lda, int ldc) {
    return [=, &a, &b] { cblas_ssyrk(l, u, t, n, k, 1.0f, a.data(), lda, 0.0f, b.data(), ldc); };
  };
  expect_error("cblas_ssyrk", 1, "layout", b, syrk(kBadLayout, U, N, 2, 2, 2, 2));
  expect_error("cblas_ssyrk", 2, "Uplo", b, syrk(C, kBadUplo, N, 2, 2, 2, 2));
  expect_error("cblas_ssyrk", 3, "Trans", b, syrk(C, U, kBadTrans, 2, 2, 2, 2));
  expect_error("cblas_ssyrk", 4, "N", b, syrk(C, U, N, -1, 2, 2, 2));
  expect_error("cblas_ssyrk", 5, "K", b, syrk(C, U, N, 2, -1, 2, 2));
  expect_error("cblas_ssyrk", 8, "lda", b, syrk(C, U, N, 3, 2, 2, 3));
  expect_error("cblas_ssyrk", 8, "row-major", b, syrk(R, U, N, 2, 3, 2, 2));
  expect_error("cblas_ssyrk", 11, "ldc", b, syrk(C, U, N, 3, 2, 3, 2));
  std::vector<cfloat> za(16), zc(16, cfloat(3, 4));
  const cfloat one(1, 0);
  expect_error("cblas_csyrk", 3, "Trans", zc, [&] {
    cblas_csyrk(C, U, CblasConjTrans, 2, 2, &one, za.data(), 2, &one, zc.data(), 2);
  });
}

TEST(CblasErrors, Level1) {
  std::vector<double> x(8, 1), y(8, 2);
  expect_error("cblas_daxpy", 6, "incY", y, [&] { cblas_daxpy(3, 2.0, x.data(), 1, y.data(), 0); });
  expect_error("cblas_dcopy", 5, "incY", y, [&] { cblas_dcopy(3, x.data(), 1, y.data(), 0); });
  expect_error("cblas_dswap", 3, "incX", y, [&] { cblas_dswap(3, x.data(), 0, y.data(), 1); });
  expect_error("cblas_drot", 5, "incY", y,
               [&] { cblas_drot(3, x.data(), 1, y.data(), 0, 0.6, 0.8); });
  expect_error("cblas_daxpy", 5, "Y is null", y,
               [&] { cblas_daxpy(3, 2.0, x.data(), 1, nullptr, 1); });
  std::vector<cdouble> z(4, cdouble(1, 1));
  expect_error("cblas_zdotc_sub", 6, "dotc is null", z,
               [&] { cblas_zdotc_sub(2, z.data(), 1, z.data(), 1, nullptr); });
  expect_error("cblas_zscal", 2, "alpha is null", z, [&] { cblas_zscal(2, nullptr, z.data(), 1); });
  // Quick returns are not errors: N <= 0 anywhere, incX <= 0 for asum/iamax/scal.
  g_calls.clear();
  EXPECT_EQ(cblas_ddot(-1, nullptr, 1, nullptr, 1), 0.0);
  EXPECT_EQ(cblas_dasum(3, x.data(), -1), 0.0);
  EXPECT_EQ(cblas_idamax(3, x.data(), 0), 0u);
  cblas_dscal(3, 5.0, y.data(), -1);
  cblas_daxpy(0, 2.0, nullptr, 0, nullptr, 0);
  EXPECT_TRUE(g_calls.empty());
  EXPECT_EQ(y[0], 2.0);
}

}  // namespace
}  // namespace cblas_test
