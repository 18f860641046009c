// CBLAS level 2 in both layouts against a plain reference and against OpenBLAS: every
// transpose (row-major ConjTrans included), triangle and diagonal kind; sizes 0, 1, odd and
// larger than a register tile; lda larger than needed; negative increments; beta = 0 with
// NaN already in y.
#include <limits>
#include <sstream>

#include "cblas_test_util.hpp"

namespace cblas_test {
namespace {

constexpr CBLAS_TRANSPOSE kOps[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
constexpr CBLAS_UPLO kUplos[] = {CblasUpper, CblasLower};
constexpr CBLAS_DIAG kDiags[] = {CblasNonUnit, CblasUnit};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename... A>
std::string name(const A&... parts) {
  std::ostringstream os;
  ((os << parts << ' '), ...);
  return os.str();
}

inline CBLAS_LAYOUT layout(bool row) {
  return row ? CblasRowMajor : CblasColMajor;
}

template <typename T>
std::vector<Case> gemv_cases() {
  std::vector<Case> cases;
  const std::pair<int, int> shapes[] = {{0, 3}, {3, 0}, {1, 1}, {5, 4}, {17, 9}};
  for (bool row : {false, true})
    for (CBLAS_TRANSPOSE op : kOps)
      for (auto [m, n] : shapes)
        for (auto [incx, incy] : {std::pair{1, 1}, std::pair{2, -1}})
          for (bool beta_zero : {false, true}) {
            const int lda = (row ? n : m) + 3;
            const int lx = op == CblasNoTrans ? n : m, ly = op == CblasNoTrans ? m : n;
            const auto a = random_vec<T>(mat_len(row, lda, m, n), 20 + m);
            const auto x = random_vec<T>(vec_len(lx, incx), 21 + n);
            auto y = random_vec<T>(vec_len(ly, incy), 22);
            if (beta_zero) y.assign(y.size(), narrow<T>(cd(kNaN, kNaN)));
            const T alpha = narrow<T>(cd(0.5, 1.5)),
                    beta = narrow<T>(beta_zero ? cd(0) : cd(-1, 0.5));
            const Dense opa = apply_op(load(a, row, lda, m, n), op);
            std::vector<cd> want = widen(y);
            for (int i = 0; i < ly && lx > 0; ++i) {  // BLAS: y untouched when m or n is 0
              cd acc = 0;
              for (int j = 0; j < lx; ++j) acc += opa(i, j) * wide(x[vi(j, lx, incx)]);
              cd& yi = want[vi(i, ly, incy)];
              yi = wide(alpha) * acc + (beta_zero ? cd(0) : wide(beta) * yi);
            }
            cases.push_back({name("gemv", layout_name(row), "op", op, "m", m, "n", n, "incx", incx,
                                  "incy", incy, "beta0", beta_zero),
                             [=](const CblasApi& api) {
                               auto yy = y;
                               pick<T>(api.sgemv, api.dgemv, api.cgemv, api.zgemv)(
                                   layout(row), op, m, n, sc(alpha), a.data(), lda, x.data(), incx,
                                   sc(beta), yy.data(), incy);
                               return widen(yy);
                             },
                             want, double(std::max(lx, 1)) * 2});
          }
  return cases;
}

template <typename T>
std::vector<Case> ger_cases() {
  std::vector<Case> cases;
  const std::pair<int, int> shapes[] = {{0, 3}, {3, 0}, {1, 1}, {5, 4}, {17, 9}};
  for (bool row : {false, true})
    for (bool conj : {false, true})
      for (auto [m, n] : shapes)
        for (auto [incx, incy] : {std::pair{1, 1}, std::pair{-2, 3}}) {
          if (conj && !kComplex<T>) continue;
          const int lda = (row ? n : m) + 2;
          const auto a = random_vec<T>(mat_len(row, lda, m, n), 30 + m);
          const auto x = random_vec<T>(vec_len(m, incx), 31);
          const auto y = random_vec<T>(vec_len(n, incy), 32);
          const T alpha = narrow<T>(cd(-0.75, 0.25));
          std::vector<cd> want = widen(a);
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
              const cd yj = wide(y[vi(j, n, incy)]);
              want[mi(row, lda, i, j)] +=
                  wide(alpha) * wide(x[vi(i, m, incx)]) * (conj ? std::conj(yj) : yj);
            }
          cases.push_back(
              {name(conj ? "gerc" : "geru", layout_name(row), "m", m, "n", n, "incx", incx, "incy",
                    incy),
               [=](const CblasApi& api) {
                 auto aa = a;
                 if constexpr (kComplex<T>) {
                   auto fn = conj ? pick<T>(0, 0, api.cgerc, api.zgerc)
                                  : pick<T>(0, 0, api.cgeru, api.zgeru);
                   fn(layout(row), m, n, sc(alpha), x.data(), incx, y.data(), incy, aa.data(), lda);
                 } else {
                   pick<T>(api.sger, api.dger, 0, 0)(layout(row), m, n, alpha, x.data(), incx,
                                                     y.data(), incy, aa.data(), lda);
                 }
                 return widen(aa);
               },
               want, 2});
        }
  return cases;
}

template <typename T>
std::vector<Case> trmv_trsv_cases() {
  std::vector<Case> cases;
  for (bool row : {false, true})
    for (CBLAS_UPLO uplo : kUplos)
      for (CBLAS_TRANSPOSE op : kOps)
        for (CBLAS_DIAG diag : kDiags)
          for (int n : {0, 1, 4, 13})
            for (int incx : {1, -2}) {
              const int lda = n + 2;
              const auto a = triangular_buffer<T>(row, lda, n, 40 + n);
              const auto x = random_vec<T>(vec_len(n, incx), 41);
              const Dense t = apply_op(triangle(load(a, row, lda, n, n), uplo, diag), op);
              std::vector<cd> xv(n);
              for (int i = 0; i < n; ++i) xv[i] = wide(x[vi(i, n, incx)]);
              std::vector<cd> want_mv = widen(x), want_sv = widen(x);
              const std::vector<cd> solved = solve_triangular(t, xv);
              for (int i = 0; i < n; ++i) {
                cd acc = 0;
                for (int j = 0; j < n; ++j) acc += t(i, j) * xv[j];
                want_mv[vi(i, n, incx)] = acc;
                want_sv[vi(i, n, incx)] = solved[i];
              }
              const std::string what = name(layout_name(row), "uplo", uplo, "op", op, "diag", diag,
                                            "n", n, "incx", incx);
              cases.push_back({"trmv " + what,
                               [=](const CblasApi& api) {
                                 auto xx = x;
                                 pick<T>(api.strmv, api.dtrmv, api.ctrmv, api.ztrmv)(
                                     layout(row), uplo, op, diag, n, a.data(), lda, xx.data(),
                                     incx);
                                 return widen(xx);
                               },
                               want_mv, double(n + 1)});
              cases.push_back({"trsv " + what,
                               [=](const CblasApi& api) {
                                 auto xx = x;
                                 pick<T>(api.strsv, api.dtrsv, api.ctrsv, api.ztrsv)(
                                     layout(row), uplo, op, diag, n, a.data(), lda, xx.data(),
                                     incx);
                                 return widen(xx);
                               },
                               want_sv, 4.0 * (n + 1)});
            }
  return cases;
}

// ssymv/dsymv (real) and chemv/zhemv (complex): only the uplo triangle is read; hemv ignores
// the imaginary part of the diagonal.
template <typename T>
std::vector<Case> symv_hemv_cases() {
  std::vector<Case> cases;
  for (bool row : {false, true})
    for (CBLAS_UPLO uplo : kUplos)
      for (int n : {0, 1, 5, 13})
        for (auto [incx, incy] : {std::pair{1, 1}, std::pair{2, -3}})
          for (bool beta_zero : {false, true}) {
            const int lda = n + 1;
            const auto a = random_vec<T>(mat_len(row, lda, n, n), 50 + n);
            const auto x = random_vec<T>(vec_len(n, incx), 51);
            auto y = random_vec<T>(vec_len(n, incy), 52);
            if (beta_zero) y.assign(y.size(), narrow<T>(cd(kNaN, kNaN)));
            const T alpha = narrow<T>(cd(1.25, -0.5)),
                    beta = narrow<T>(beta_zero ? cd(0) : cd(0.5, 2));
            const Dense stored = load(a, row, lda, n, n);
            std::vector<cd> want = widen(y);
            for (int i = 0; i < n; ++i) {
              cd acc = 0;
              for (int j = 0; j < n; ++j) {
                const bool in = uplo == CblasUpper ? i <= j : i >= j;
                cd v = in ? stored(i, j) : stored(j, i);
                if (kComplex<T> && !in) v = std::conj(v);
                if (kComplex<T> && i == j) v = v.real();
                acc += v * wide(x[vi(j, n, incx)]);
              }
              cd& yi = want[vi(i, n, incy)];
              yi = wide(alpha) * acc + (beta_zero ? cd(0) : wide(beta) * yi);
            }
            cases.push_back({name(kComplex<T> ? "hemv" : "symv", layout_name(row), "uplo", uplo,
                                  "n", n, "incx", incx, "incy", incy, "beta0", beta_zero),
                             [=](const CblasApi& api) {
                               auto yy = y;
                               pick<T>(api.ssymv, api.dsymv, api.chemv, api.zhemv)(
                                   layout(row), uplo, n, sc(alpha), a.data(), lda, x.data(), incx,
                                   sc(beta), yy.data(), incy);
                               return widen(yy);
                             },
                             want, 2.0 * (n + 1)});
          }
  return cases;
}

template <typename T>
class CblasLevel2 : public ::testing::Test {};
TYPED_TEST_SUITE(CblasLevel2, AllTypes);

TYPED_TEST(CblasLevel2, Gemv) {
  check_cases<TypeParam>(gemv_cases<TypeParam>());
}
TYPED_TEST(CblasLevel2, Ger) {
  check_cases<TypeParam>(ger_cases<TypeParam>());
}
TYPED_TEST(CblasLevel2, TrmvTrsv) {
  check_cases<TypeParam>(trmv_trsv_cases<TypeParam>());
}
TYPED_TEST(CblasLevel2, SymvHemv) {
  check_cases<TypeParam>(symv_hemv_cases<TypeParam>());
}

template <typename T>
class CblasLevel2VsOpenBlas : public ::testing::Test {
 protected:
  void SetUp() override {
    if (openblas_api() == nullptr) GTEST_SKIP() << "OpenBLAS not installed at " << kOpenBlasPath;
  }
};
TYPED_TEST_SUITE(CblasLevel2VsOpenBlas, AllTypes);

TYPED_TEST(CblasLevel2VsOpenBlas, All) {
  using T = TypeParam;
  for (auto cases : {gemv_cases<T>(), ger_cases<T>(), trmv_trsv_cases<T>(), symv_hemv_cases<T>()})
    check_cases<T>(cases, openblas_api());
}

}  // namespace
}  // namespace cblas_test
