// CBLAS level 3 in both layouts against a plain reference and against OpenBLAS: every
// transpose pair, side, triangle and diagonal kind; sizes 0, 1, odd and larger than a
// microkernel tile; lda/ldb/ldc larger than needed; beta = 0 with NaN already in C.
#include <limits>
#include <sstream>

#include "cblas_test_util.hpp"

namespace cblas_test {
namespace {

constexpr CBLAS_TRANSPOSE kOps[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
constexpr CBLAS_UPLO kUplos[] = {CblasUpper, CblasLower};
constexpr CBLAS_DIAG kDiags[] = {CblasNonUnit, CblasUnit};
constexpr CBLAS_SIDE kSides[] = {CblasLeft, CblasRight};
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
std::vector<Case> gemm_cases() {
  std::vector<Case> cases;
  struct Shape {
    int m, n, k;
  };
  const Shape shapes[] = {{0, 2, 2}, {2, 0, 2}, {2, 2, 0}, {1, 1, 1}, {5, 4, 3}, {37, 29, 19}};
  for (bool row : {false, true})
    for (CBLAS_TRANSPOSE ta : kOps)
      for (CBLAS_TRANSPOSE tb : kOps)
        for (Shape s : shapes)
          for (bool beta_zero : {false, true}) {
            const auto [m, n, k] = s;
            // Stored shapes: A is m x k (NoTrans) or k x m; B is k x n or n x k.
            const int ar = ta == CblasNoTrans ? m : k, ac = ta == CblasNoTrans ? k : m;
            const int br = tb == CblasNoTrans ? k : n, bc = tb == CblasNoTrans ? n : k;
            const int lda = (row ? ac : ar) + 1, ldb = (row ? bc : br) + 2, ldc = (row ? n : m) + 3;
            const auto a = random_vec<T>(mat_len(row, lda, ar, ac), 60 + m);
            const auto b = random_vec<T>(mat_len(row, ldb, br, bc), 61 + n);
            auto c = random_vec<T>(mat_len(row, ldc, m, n), 62 + k);
            if (beta_zero) c.assign(c.size(), narrow<T>(cd(kNaN, kNaN)));
            const T alpha = narrow<T>(cd(0.75, -1.25));
            const T beta = narrow<T>(beta_zero ? cd(0) : cd(-0.5, 0.25));
            const Dense p = multiply(apply_op(load(a, row, lda, ar, ac), ta),
                                     apply_op(load(b, row, ldb, br, bc), tb));
            std::vector<cd> want = widen(c);
            for (int i = 0; i < m; ++i)
              for (int j = 0; j < n; ++j) {
                cd& cij = want[mi(row, ldc, i, j)];
                cij = wide(alpha) * p(i, j) + (beta_zero ? cd(0) : wide(beta) * cij);
              }
            cases.push_back({name("gemm", layout_name(row), "ta", ta, "tb", tb, "m", m, "n", n, "k",
                                  k, "beta0", beta_zero),
                             [=](const CblasApi& api) {
                               auto cc = c;
                               pick<T>(api.sgemm, api.dgemm, api.cgemm, api.zgemm)(
                                   layout(row), ta, tb, m, n, k, sc(alpha), a.data(), lda, b.data(),
                                   ldb, sc(beta), cc.data(), ldc);
                               return widen(cc);
                             },
                             want, 2.0 * (k + 1)});
          }
  return cases;
}

// trmm and trsm: B (m x n) = alpha * op(T) * B, alpha * B * op(T), or the same with op(T)^-1.
template <typename T>
std::vector<Case> trmm_trsm_cases() {
  std::vector<Case> cases;
  const std::pair<int, int> shapes[] = {{0, 3}, {3, 0}, {1, 1}, {5, 4}, {13, 7}};
  for (bool row : {false, true})
    for (CBLAS_SIDE side : kSides)
      for (CBLAS_UPLO uplo : kUplos)
        for (CBLAS_TRANSPOSE op : kOps)
          for (CBLAS_DIAG diag : kDiags)
            for (auto [m, n] : shapes) {
              const bool left = side == CblasLeft;
              const int ka = left ? m : n, lda = ka + 2, ldb = (row ? n : m) + 1;
              const auto a = triangular_buffer<T>(row, lda, ka, 70 + ka);
              const auto b = random_vec<T>(mat_len(row, ldb, m, n), 71 + m);
              const T alpha = narrow<T>(cd(-1.5, 0.5));
              const Dense t = apply_op(triangle(load(a, row, lda, ka, ka), uplo, diag), op);
              const Dense bd = load(b, row, ldb, m, n);
              const Dense prod = left ? multiply(t, bd) : multiply(bd, t);
              // Solve: left op(T) X = alpha B per column; right X op(T) = alpha B per row,
              // i.e. op(T)^T x^T = alpha b^T.
              Dense solved(m, n);
              if (left) {
                for (int j = 0; j < n; ++j) {
                  std::vector<cd> col(m);
                  for (int i = 0; i < m; ++i) col[i] = wide(alpha) * bd(i, j);
                  col = solve_triangular(t, col);
                  for (int i = 0; i < m; ++i) solved(i, j) = col[i];
                }
              } else {
                const Dense tt = apply_op(t, CblasTrans);
                for (int i = 0; i < m; ++i) {
                  std::vector<cd> r(n);
                  for (int j = 0; j < n; ++j) r[j] = wide(alpha) * bd(i, j);
                  r = solve_triangular(tt, r);
                  for (int j = 0; j < n; ++j) solved(i, j) = r[j];
                }
              }
              std::vector<cd> want_mm = widen(b), want_sm = widen(b);
              for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                  want_mm[mi(row, ldb, i, j)] = wide(alpha) * prod(i, j);
                  want_sm[mi(row, ldb, i, j)] = solved(i, j);
                }
              const std::string what = name(layout_name(row), "side", side, "uplo", uplo, "op", op,
                                            "diag", diag, "m", m, "n", n);
              cases.push_back({"trmm " + what,
                               [=](const CblasApi& api) {
                                 auto bb = b;
                                 pick<T>(api.strmm, api.dtrmm, api.ctrmm, api.ztrmm)(
                                     layout(row), side, uplo, op, diag, m, n, sc(alpha), a.data(),
                                     lda, bb.data(), ldb);
                                 return widen(bb);
                               },
                               want_mm, 2.0 * (ka + 1)});
              cases.push_back({"trsm " + what,
                               [=](const CblasApi& api) {
                                 auto bb = b;
                                 pick<T>(api.strsm, api.dtrsm, api.ctrsm, api.ztrsm)(
                                     layout(row), side, uplo, op, diag, m, n, sc(alpha), a.data(),
                                     lda, bb.data(), ldb);
                                 return widen(bb);
                               },
                               want_sm, 8.0 * (ka + 1)});
            }
  return cases;
}

// syrk: C = alpha * op(A) * op(A)^T + beta * C on the uplo triangle (A^T, not A^H, for
// complex); the other triangle is untouched. Real syrk accepts ConjTrans as Trans.
template <typename T>
std::vector<Case> syrk_cases() {
  std::vector<Case> cases;
  const std::pair<int, int> shapes[] = {{0, 3}, {4, 0}, {1, 1}, {5, 3}, {29, 17}};
  for (bool row : {false, true})
    for (CBLAS_UPLO uplo : kUplos)
      for (CBLAS_TRANSPOSE op : kOps)
        for (auto [n, k] : shapes)
          for (bool beta_zero : {false, true}) {
            if (kComplex<T> && op == CblasConjTrans) continue;
            const bool nt = op == CblasNoTrans;
            const int ar = nt ? n : k, ac = nt ? k : n;
            const int lda = (row ? ac : ar) + 2, ldc = n + 1;
            const auto a = random_vec<T>(mat_len(row, lda, ar, ac), 80 + n);
            auto c = random_vec<T>(mat_len(row, ldc, n, n), 81 + k);
            if (beta_zero) {  // NaN in the triangle that is written; the other must stay
              for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j)
                  if (uplo == CblasUpper ? i <= j : i >= j)
                    c[mi(row, ldc, i, j)] = narrow<T>(cd(kNaN, kNaN));
            }
            const T alpha = narrow<T>(cd(0.5, 0.75)),
                    beta = narrow<T>(beta_zero ? cd(0) : cd(1.5, -1));
            const Dense ad = apply_op(load(a, row, lda, ar, ac), nt ? CblasNoTrans : CblasTrans);
            const Dense p = multiply(ad, apply_op(ad, CblasTrans));
            std::vector<cd> want = widen(c);
            for (int i = 0; i < n; ++i)
              for (int j = 0; j < n; ++j) {
                if (uplo == CblasUpper ? i > j : i < j) continue;
                cd& cij = want[mi(row, ldc, i, j)];
                cij = wide(alpha) * p(i, j) + (beta_zero ? cd(0) : wide(beta) * cij);
              }
            cases.push_back({name("syrk", layout_name(row), "uplo", uplo, "op", op, "n", n, "k", k,
                                  "beta0", beta_zero),
                             [=](const CblasApi& api) {
                               auto cc = c;
                               pick<T>(api.ssyrk, api.dsyrk, api.csyrk, api.zsyrk)(
                                   layout(row), uplo, op, n, k, sc(alpha), a.data(), lda, sc(beta),
                                   cc.data(), ldc);
                               return widen(cc);
                             },
                             want, 2.0 * (k + 1)});
          }
  return cases;
}

template <typename T>
class CblasLevel3 : public ::testing::Test {};
TYPED_TEST_SUITE(CblasLevel3, AllTypes);

TYPED_TEST(CblasLevel3, Gemm) {
  check_cases<TypeParam>(gemm_cases<TypeParam>());
}
TYPED_TEST(CblasLevel3, TrmmTrsm) {
  check_cases<TypeParam>(trmm_trsm_cases<TypeParam>());
}
TYPED_TEST(CblasLevel3, Syrk) {
  check_cases<TypeParam>(syrk_cases<TypeParam>());
}

template <typename T>
class CblasLevel3VsOpenBlas : public ::testing::Test {
 protected:
  void SetUp() override {
    if (openblas_api() == nullptr) GTEST_SKIP() << "OpenBLAS not installed at " << kOpenBlasPath;
  }
};
TYPED_TEST_SUITE(CblasLevel3VsOpenBlas, AllTypes);

TYPED_TEST(CblasLevel3VsOpenBlas, All) {
  using T = TypeParam;
  for (auto cases : {gemm_cases<T>(), trmm_trsm_cases<T>(), syrk_cases<T>()})
    check_cases<T>(cases, openblas_api());
}

}  // namespace
}  // namespace cblas_test
