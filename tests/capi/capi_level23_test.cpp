// C API, levels 2 and 3: every routine of every type against a plain column-major reference
// (all transposes, triangles and sides; lda larger than needed; strided and negative
// increments), plus invalid arguments (status, message, nothing written).
#include <algorithm>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <tessera/core/half.hpp>

#include "capi_test_util.hpp"

namespace {

using namespace capi_test;

template <typename C>
class CapiLevel23 : public ::testing::Test {};
TYPED_TEST_SUITE(CapiLevel23, AllTypes);

constexpr tsr_blas_op kOps[] = {TSR_BLAS_OP_N, TSR_BLAS_OP_T, TSR_BLAS_OP_C};
constexpr tsr_blas_uplo kUplos[] = {TSR_BLAS_UPLO_UPPER, TSR_BLAS_UPLO_LOWER};
constexpr tsr_blas_diag kDiags[] = {TSR_BLAS_DIAG_NON_UNIT, TSR_BLAS_DIAG_UNIT};
constexpr tsr_blas_side kSides[] = {TSR_BLAS_SIDE_LEFT, TSR_BLAS_SIDE_RIGHT};

template <typename C>
cd scalar(double re, double im) {
  return {re, kComplex<C> ? im : 0.0};
}

TYPED_TEST(CapiLevel23, Gemv) {
  using C = TypeParam;
  Handle h;
  const std::int64_t m = 5, n = 4, lda = 7;
  const std::vector<C> a = random_vec<C>(lda * n, 10);
  const std::vector<cd> aw = widen(a);
  const cd alpha = scalar<C>(0.5, 0.25), beta = scalar<C>(-1.5, 0.5);
  for (tsr_blas_op op : kOps) {
    const std::int64_t lx = op == TSR_BLAS_OP_N ? n : m, ly = op == TSR_BLAS_OP_N ? m : n;
    const std::vector<C> x = random_vec<C>(lx * 2, 11), y0 = random_vec<C>(ly, 12);
    std::vector<cd> want = widen(y0);
    for (std::int64_t i = 0; i < ly; ++i) {
      cd acc = 0;
      for (std::int64_t j = 0; j < lx; ++j) acc += op_at(aw, lda, op, i, j) * to_cd(x[j * 2]);
      want[vi(i, ly, -1)] = alpha * acc + beta * to_cd(y0[vi(i, ly, -1)]);
    }
    std::vector<C> y = y0;
    ASSERT_EQ(Api<C>::gemv(h, op, m, n, from_cd<C>(alpha), a.data(), lda, x.data(), 2,
                           from_cd<C>(beta), y.data(), -1),
              TSR_STATUS_OK)
        << tsr_last_error_message();
    expect_all_near(y, want, 4);

    // beta = 0 with NaN in y: y is overwritten, never read.
    std::vector<C> ynan(ly, from_cd<C>(std::numeric_limits<double>::quiet_NaN()));
    ASSERT_EQ(Api<C>::gemv(h, op, m, n, from_cd<C>(alpha), a.data(), lda, x.data(), 2,
                           from_cd<C>(0.0), ynan.data(), 1),
              TSR_STATUS_OK);
    for (const C& v : ynan) EXPECT_FALSE(std::isnan(to_cd(v).real()));
  }
  // lda < m: invalid, y untouched.
  const std::vector<C> x = random_vec<C>(n, 13), y0 = random_vec<C>(m, 14);
  std::vector<C> y = y0;
  EXPECT_TRUE(invalid(Api<C>::gemv(h, TSR_BLAS_OP_N, m, n, from_cd<C>(alpha), a.data(), m - 1,
                                   x.data(), 1, from_cd<C>(beta), y.data(), 1),
                      Api<C>::kPrefix, "lda"));
  EXPECT_TRUE(invalid(Api<C>::gemv(h, static_cast<tsr_blas_op>(7), m, n, from_cd<C>(alpha),
                                   a.data(), lda, x.data(), 1, from_cd<C>(beta), y.data(), 1),
                      Api<C>::kPrefix, "trans"));
  EXPECT_TRUE(invalid(Api<C>::gemv(h, TSR_BLAS_OP_N, m, n, from_cd<C>(alpha), a.data(), lda,
                                   x.data(), 0, from_cd<C>(beta), y.data(), 1),
                      Api<C>::kPrefix, "incx"));
  EXPECT_TRUE(same_bits(y, y0));
}

TYPED_TEST(CapiLevel23, GeruGerc) {
  using C = TypeParam;
  Handle h;
  const std::int64_t m = 5, n = 4, lda = 6;
  const std::vector<C> a0 = random_vec<C>(lda * n, 20), x = random_vec<C>(m, 21),
                       y = random_vec<C>(n * 2, 22);
  const cd alpha = scalar<C>(0.75, -0.5);
  for (bool conj_y : {false, true}) {
    std::vector<cd> want = widen(a0);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        const cd yj = to_cd(y[vi(j, n, -2)]);
        want[i + j * lda] += alpha * to_cd(x[i]) * (conj_y ? std::conj(yj) : yj);
      }
    std::vector<C> a = a0;
    auto fn = conj_y ? Api<C>::gerc : Api<C>::geru;
    ASSERT_EQ(fn(h, m, n, from_cd<C>(alpha), x.data(), 1, y.data(), -2, a.data(), lda),
              TSR_STATUS_OK)
        << tsr_last_error_message();
    expect_all_near(a, want);
    a = a0;
    EXPECT_TRUE(invalid(fn(h, m, n, from_cd<C>(alpha), x.data(), 1, y.data(), 1, a.data(), 4),
                        Api<C>::kPrefix, "lda"));
    EXPECT_TRUE(same_bits(a, a0));
  }
}

TYPED_TEST(CapiLevel23, TrmvTrsv) {
  using C = TypeParam;
  Handle h;
  const std::int64_t n = 6, lda = 8;
  const std::vector<C> a = triangular_matrix<C>(n, lda, 30);
  const std::vector<C> x0 = random_vec<C>(n * 2, 31);
  for (tsr_blas_uplo uplo : kUplos)
    for (tsr_blas_op op : kOps)
      for (tsr_blas_diag diag : kDiags) {
        SCOPED_TRACE(::testing::Message() << "uplo " << uplo << " op " << op << " diag " << diag);
        const std::vector<cd> t = triangle(widen(a), n, lda, uplo, diag);
        std::vector<cd> want = widen(x0);
        for (std::int64_t i = 0; i < n; ++i) {
          cd acc = 0;
          for (std::int64_t j = 0; j < n; ++j) acc += op_at(t, n, op, i, j) * to_cd(x0[j * 2]);
          want[i * 2] = acc;
        }
        std::vector<C> x = x0;
        ASSERT_EQ(Api<C>::trmv(h, uplo, op, diag, n, a.data(), lda, x.data(), 2), TSR_STATUS_OK)
            << tsr_last_error_message();
        expect_all_near(x, want, 4);
        // trsv undoes trmv.
        ASSERT_EQ(Api<C>::trsv(h, uplo, op, diag, n, a.data(), lda, x.data(), 2), TSR_STATUS_OK)
            << tsr_last_error_message();
        expect_all_near(x, widen(x0), 16);
      }
  std::vector<C> x = x0;
  EXPECT_TRUE(invalid(Api<C>::trsv(h, static_cast<tsr_blas_uplo>(3), TSR_BLAS_OP_N,
                                   TSR_BLAS_DIAG_UNIT, n, a.data(), lda, x.data(), 1),
                      Api<C>::kPrefix, "uplo"));
  EXPECT_TRUE(invalid(Api<C>::trmv(h, TSR_BLAS_UPLO_LOWER, TSR_BLAS_OP_N,
                                   static_cast<tsr_blas_diag>(-1), n, a.data(), lda, x.data(), 1),
                      Api<C>::kPrefix, "diag"));
  EXPECT_TRUE(same_bits(x, x0));
}

// symv (symmetric, every type) and hemv (Hermitian, complex): only the uplo triangle is read.
TYPED_TEST(CapiLevel23, SymvHemv) {
  using C = TypeParam;
  Handle h;
  const std::int64_t n = 5, lda = 6;
  const std::vector<C> a = random_vec<C>(lda * n, 40);
  const std::vector<C> x = random_vec<C>(n, 41), y0 = random_vec<C>(n * 2, 42);
  const std::vector<cd> aw = widen(a);
  const cd alpha = scalar<C>(1.25, 0.5), beta = scalar<C>(0.5, -0.25);
  for (bool hermitian : {false, true}) {
    if (hermitian && !kComplex<C>) continue;
    for (tsr_blas_uplo uplo : kUplos) {
      std::vector<cd> want = widen(y0);
      for (std::int64_t i = 0; i < n; ++i) {
        cd acc = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const bool stored = uplo == TSR_BLAS_UPLO_UPPER ? i <= j : i >= j;
          cd v = stored ? aw[i + j * lda] : aw[j + i * lda];
          if (hermitian && !stored) v = std::conj(v);
          if (hermitian && i == j) v = v.real();
          acc += v * to_cd(x[j]);
        }
        want[i * 2] = alpha * acc + beta * to_cd(y0[i * 2]);
      }
      std::vector<C> y = y0;
      tsr_status s = TSR_STATUS_INTERNAL;
      if constexpr (kComplex<C>) {
        s = (hermitian ? Api<C>::hemv : Api<C>::symv)(h, uplo, n, from_cd<C>(alpha), a.data(), lda,
                                                      x.data(), 1, from_cd<C>(beta), y.data(), 2);
      } else {
        s = Api<C>::symv(h, uplo, n, from_cd<C>(alpha), a.data(), lda, x.data(), 1,
                         from_cd<C>(beta), y.data(), 2);
      }
      ASSERT_EQ(s, TSR_STATUS_OK) << tsr_last_error_message();
      expect_all_near(y, want, 4);
    }
  }
  std::vector<C> y = y0;
  EXPECT_TRUE(invalid(Api<C>::symv(h, TSR_BLAS_UPLO_UPPER, n, from_cd<C>(alpha), a.data(), lda,
                                   x.data(), 1, from_cd<C>(beta), nullptr, 1),
                      Api<C>::kPrefix, "y is null"));
  EXPECT_TRUE(same_bits(y, y0));
}

// C = alpha * op(A) * op(B) + beta * C, column-major.
template <typename C>
std::vector<cd> ref_gemm(tsr_blas_op ta, tsr_blas_op tb, std::int64_t m, std::int64_t n,
                         std::int64_t k, cd alpha, const C* a, std::int64_t lda, const C* b,
                         std::int64_t ldb, cd beta, const C* c, std::int64_t ldc) {
  std::vector<cd> out(ldc * n);
  for (std::int64_t i = 0; i < ldc * n; ++i) out[i] = to_cd(c[i]);
  auto at = [&](const C* p, std::int64_t ld, tsr_blas_op op, std::int64_t i, std::int64_t j) {
    const cd v = op == TSR_BLAS_OP_N ? to_cd(p[i + j * ld]) : to_cd(p[j + i * ld]);
    return op == TSR_BLAS_OP_C ? std::conj(v) : v;
  };
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      cd acc = 0;
      for (std::int64_t p = 0; p < k; ++p) acc += at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
      out[i + j * ldc] = alpha * acc + beta * out[i + j * ldc];
    }
  return out;
}

TYPED_TEST(CapiLevel23, GemmAllTransposes) {
  using C = TypeParam;
  Handle h;
  const std::int64_t m = 5, n = 4, k = 3, lda = 7, ldb = 6, ldc = 8;
  const cd alpha = scalar<C>(0.5, 1.0), beta = scalar<C>(-0.75, 0.25);
  for (tsr_blas_op ta : kOps)
    for (tsr_blas_op tb : kOps) {
      const std::vector<C> a = random_vec<C>(lda * std::max(m, k), 50);
      const std::vector<C> b = random_vec<C>(ldb * std::max(n, k), 51);
      const std::vector<C> c0 = random_vec<C>(ldc * n, 52);
      const std::vector<cd> want =
          ref_gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c0.data(), ldc);
      std::vector<C> c = c0;
      ASSERT_EQ(Api<C>::gemm(h, ta, tb, m, n, k, from_cd<C>(alpha), a.data(), lda, b.data(), ldb,
                             from_cd<C>(beta), c.data(), ldc),
                TSR_STATUS_OK)
          << tsr_last_error_message();
      expect_all_near(c, want, 4);
    }
  const std::vector<C> a = random_vec<C>(lda * k, 53), b = random_vec<C>(ldb * n, 54),
                       c0 = random_vec<C>(ldc * n, 55);
  std::vector<C> c = c0;
  EXPECT_TRUE(invalid(Api<C>::gemm(h, TSR_BLAS_OP_N, TSR_BLAS_OP_N, m, n, k, from_cd<C>(alpha),
                                   a.data(), m - 1, b.data(), ldb, from_cd<C>(beta), c.data(), ldc),
                      Api<C>::kPrefix, "lda"));
  EXPECT_TRUE(invalid(
      Api<C>::gemm(h, TSR_BLAS_OP_N, static_cast<tsr_blas_op>(9), m, n, k, from_cd<C>(alpha),
                   a.data(), lda, b.data(), ldb, from_cd<C>(beta), c.data(), ldc),
      Api<C>::kPrefix, "transb"));
  EXPECT_TRUE(
      invalid(Api<C>::gemm(nullptr, TSR_BLAS_OP_N, TSR_BLAS_OP_N, m, n, k, from_cd<C>(alpha),
                           a.data(), lda, b.data(), ldb, from_cd<C>(beta), c.data(), ldc),
              Api<C>::kPrefix, "handle is null"));
  EXPECT_TRUE(same_bits(c, c0));
}

TYPED_TEST(CapiLevel23, GemmBatchedAndStrided) {
  using C = TypeParam;
  Handle h;
  const std::int64_t m = 4, n = 3, k = 5, lda = 5, ldb = 6, ldc = 4, batch = 3;
  const cd alpha = scalar<C>(1.5, -0.5), beta = scalar<C>(0.5, 0.5);
  // Strided: A shared by every problem (stride 0), C with a gap between matrices. B is
  // transposed: n x k stored, k columns of ldb.
  const std::int64_t stride_b = ldb * k, stride_c = ldc * n + 3;
  const std::vector<C> a = random_vec<C>(lda * k, 60), b = random_vec<C>(stride_b * batch, 61);
  const std::vector<C> c0 = random_vec<C>(stride_c * batch, 62);
  std::vector<cd> want = widen(c0);
  for (std::int64_t i = 0; i < batch; ++i) {
    const std::vector<cd> w =
        ref_gemm(TSR_BLAS_OP_N, TSR_BLAS_OP_T, m, n, k, alpha, a.data(), lda,
                 b.data() + i * stride_b, ldb, beta, c0.data() + i * stride_c, ldc);
    std::copy(w.begin(), w.end(), want.begin() + i * stride_c);
  }
  std::vector<C> c = c0;
  ASSERT_EQ(Api<C>::gemm_strided_batched(
                h, TSR_BLAS_OP_N, TSR_BLAS_OP_T, m, n, k, from_cd<C>(alpha), a.data(), lda, 0,
                b.data(), ldb, stride_b, from_cd<C>(beta), c.data(), ldc, stride_c, batch),
            TSR_STATUS_OK)
      << tsr_last_error_message();
  expect_all_near(c, want, 4);

  // The same problems through pointer arrays.
  c = c0;
  std::vector<const C*> ap(batch, a.data()), bp;
  std::vector<C*> cp;
  for (std::int64_t i = 0; i < batch; ++i) {
    bp.push_back(b.data() + i * stride_b);
    cp.push_back(c.data() + i * stride_c);
  }
  ASSERT_EQ(
      Api<C>::gemm_batched(h, TSR_BLAS_OP_N, TSR_BLAS_OP_T, m, n, k, from_cd<C>(alpha), ap.data(),
                           lda, bp.data(), ldb, from_cd<C>(beta), cp.data(), ldc, batch),
      TSR_STATUS_OK)
      << tsr_last_error_message();
  expect_all_near(c, want, 4);

  c = c0;
  EXPECT_TRUE(invalid(
      Api<C>::gemm_batched(h, TSR_BLAS_OP_N, TSR_BLAS_OP_T, m, n, k, from_cd<C>(alpha), ap.data(),
                           lda, bp.data(), ldb, from_cd<C>(beta), cp.data(), ldc, -1),
      Api<C>::kPrefix, "batch_count"));
  EXPECT_TRUE(same_bits(c, c0));
}

TYPED_TEST(CapiLevel23, TrsmTrmm) {
  using C = TypeParam;
  Handle h;
  const std::int64_t m = 5, n = 4, ldb = 6;
  const cd alpha = scalar<C>(0.75, 0.25);
  for (tsr_blas_side side : kSides)
    for (tsr_blas_uplo uplo : kUplos)
      for (tsr_blas_op op : kOps)
        for (tsr_blas_diag diag : kDiags) {
          SCOPED_TRACE(::testing::Message()
                       << "side " << side << " uplo " << uplo << " op " << op << " diag " << diag);
          const std::int64_t ka = side == TSR_BLAS_SIDE_LEFT ? m : n, lda = ka + 2;
          const std::vector<C> a = triangular_matrix<C>(ka, lda, 70);
          const std::vector<cd> t = triangle(widen(a), ka, lda, uplo, diag);
          const std::vector<C> b0 = random_vec<C>(ldb * n, 71);
          // trmm: B = alpha * op(T) * B (left) or alpha * B * op(T) (right).
          std::vector<cd> want = widen(b0);
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < m; ++i) {
              cd acc = 0;
              if (side == TSR_BLAS_SIDE_LEFT)
                for (std::int64_t p = 0; p < m; ++p)
                  acc += op_at(t, m, op, i, p) * to_cd(b0[p + j * ldb]);
              else
                for (std::int64_t p = 0; p < n; ++p)
                  acc += to_cd(b0[i + p * ldb]) * op_at(t, n, op, p, j);
              want[i + j * ldb] = alpha * acc;
            }
          std::vector<C> b = b0;
          ASSERT_EQ(Api<C>::trmm(h, side, uplo, op, diag, m, n, from_cd<C>(alpha), a.data(), lda,
                                 b.data(), ldb),
                    TSR_STATUS_OK)
              << tsr_last_error_message();
          expect_all_near(b, want, 4);
          // trsm with alpha = 1 undoes trmm with alpha = 1.
          b = b0;
          ASSERT_EQ(Api<C>::trmm(h, side, uplo, op, diag, m, n, from_cd<C>(1.0), a.data(), lda,
                                 b.data(), ldb),
                    TSR_STATUS_OK);
          ASSERT_EQ(Api<C>::trsm(h, side, uplo, op, diag, m, n, from_cd<C>(1.0), a.data(), lda,
                                 b.data(), ldb),
                    TSR_STATUS_OK)
              << tsr_last_error_message();
          expect_all_near(b, widen(b0), 16);
        }
  const std::vector<C> a = triangular_matrix<C>(m, m, 72), b0 = random_vec<C>(ldb * n, 73);
  std::vector<C> b = b0;
  EXPECT_TRUE(
      invalid(Api<C>::trsm(h, static_cast<tsr_blas_side>(2), TSR_BLAS_UPLO_UPPER, TSR_BLAS_OP_N,
                           TSR_BLAS_DIAG_UNIT, m, n, from_cd<C>(alpha), a.data(), m, b.data(), ldb),
              Api<C>::kPrefix, "side"));
  EXPECT_TRUE(invalid(
      Api<C>::trmm(h, TSR_BLAS_SIDE_LEFT, TSR_BLAS_UPLO_UPPER, TSR_BLAS_OP_N, TSR_BLAS_DIAG_UNIT, m,
                   n, from_cd<C>(alpha), a.data(), m, b.data(), m - 1),
      Api<C>::kPrefix, "ldb"));
  EXPECT_TRUE(same_bits(b, b0));
}

TYPED_TEST(CapiLevel23, Syrk) {
  using C = TypeParam;
  Handle h;
  const std::int64_t n = 5, k = 3, lda = 6, ldc = 7;
  const cd alpha = scalar<C>(0.5, 0.5), beta = scalar<C>(1.5, -0.5);
  const std::vector<C> a = random_vec<C>(lda * n, 80), c0 = random_vec<C>(ldc * n, 81);
  for (tsr_blas_uplo uplo : kUplos)
    for (tsr_blas_op op : {TSR_BLAS_OP_N, TSR_BLAS_OP_T}) {
      // C = alpha * op(A) * op(A)^T + beta * C on the uplo triangle; the other is untouched.
      const tsr_blas_op other = op == TSR_BLAS_OP_N ? TSR_BLAS_OP_T : TSR_BLAS_OP_N;
      std::vector<cd> want =
          ref_gemm(op, other, n, n, k, alpha, a.data(), lda, a.data(), lda, beta, c0.data(), ldc);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          if (uplo == TSR_BLAS_UPLO_UPPER ? i > j : i < j)
            want[i + j * ldc] = to_cd(c0[i + j * ldc]);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = n; i < ldc; ++i) want[i + j * ldc] = to_cd(c0[i + j * ldc]);
      std::vector<C> c = c0;
      ASSERT_EQ(Api<C>::syrk(h, uplo, op, n, k, from_cd<C>(alpha), a.data(), lda, from_cd<C>(beta),
                             c.data(), ldc),
                TSR_STATUS_OK)
          << tsr_last_error_message();
      expect_all_near(c, want, 4);
    }
  std::vector<C> c = c0;
  EXPECT_TRUE(invalid(Api<C>::syrk(h, TSR_BLAS_UPLO_UPPER, TSR_BLAS_OP_N, -2, k, from_cd<C>(alpha),
                                   a.data(), lda, from_cd<C>(beta), c.data(), ldc),
                      Api<C>::kPrefix, "-2"));
  EXPECT_TRUE(same_bits(c, c0));
}

TYPED_TEST(CapiLevel23, TrtriSingleBatchedStrided) {
  using C = TypeParam;
  Handle h;
  const std::int64_t n = 5, lda = 7, batch = 2, stride = lda * n + 1;
  for (tsr_blas_uplo uplo : kUplos)
    for (tsr_blas_diag diag : kDiags) {
      SCOPED_TRACE(::testing::Message() << "uplo " << uplo << " diag " << diag);
      std::vector<C> a0 = random_vec<C>(stride * batch, 89);
      for (std::int64_t i = 0; i < batch; ++i) {
        const std::vector<C> t = triangular_matrix<C>(n, lda, 90 + i);
        std::copy(t.begin(), t.end(), a0.begin() + i * stride);
      }
      // Checks T * inv(T) = I and that nothing outside the referenced triangle changed.
      auto check = [&](const C* orig, const C* inv) {
        std::vector<cd> o(lda * n), v(lda * n);
        for (std::int64_t i = 0; i < lda * n; ++i) o[i] = to_cd(orig[i]), v[i] = to_cd(inv[i]);
        const std::vector<cd> t = triangle(o, n, lda, uplo, diag),
                              ti = triangle(v, n, lda, uplo, diag);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < n; ++i) {
            cd acc = 0;
            for (std::int64_t p = 0; p < n; ++p) acc += t[i + p * n] * ti[p + j * n];
            EXPECT_TRUE(near<C>(from_cd<C>(acc), i == j ? 1.0 : 0.0, 8)) << i << "," << j;
            const bool strict = uplo == TSR_BLAS_UPLO_UPPER ? i < j : i > j;
            const bool written = strict || (i == j && diag == TSR_BLAS_DIAG_NON_UNIT);
            if (!written) {
              EXPECT_EQ(std::memcmp(&orig[i + j * lda], &inv[i + j * lda], sizeof(C)), 0);
            }
          }
      };
      std::vector<C> a = a0;
      ASSERT_EQ(Api<C>::trtri(h, uplo, diag, n, a.data(), lda), TSR_STATUS_OK)
          << tsr_last_error_message();
      check(a0.data(), a.data());

      a = a0;
      ASSERT_EQ(Api<C>::trtri_strided_batched(h, uplo, diag, n, a.data(), lda, stride, batch),
                TSR_STATUS_OK)
          << tsr_last_error_message();
      for (std::int64_t i = 0; i < batch; ++i) check(a0.data() + i * stride, a.data() + i * stride);

      a = a0;
      std::vector<C*> ptrs = {a.data(), a.data() + stride};
      ASSERT_EQ(Api<C>::trtri_batched(h, uplo, diag, n, ptrs.data(), lda, batch), TSR_STATUS_OK)
          << tsr_last_error_message();
      for (std::int64_t i = 0; i < batch; ++i) check(a0.data() + i * stride, a.data() + i * stride);
    }
  // A zero pivot: invalid, A untouched.
  std::vector<C> a = triangular_matrix<C>(n, lda, 91);
  a[2 + 2 * lda] = from_cd<C>(0.0);
  const std::vector<C> a0 = a;
  EXPECT_TRUE(
      invalid(Api<C>::trtri(h, TSR_BLAS_UPLO_UPPER, TSR_BLAS_DIAG_NON_UNIT, n, a.data(), lda),
              Api<C>::kPrefix, "singular"));
  EXPECT_TRUE(same_bits(a, a0));
  EXPECT_TRUE(invalid(Api<C>::trtri(h, TSR_BLAS_UPLO_UPPER, TSR_BLAS_DIAG_NON_UNIT, n, a.data(), 2),
                      Api<C>::kPrefix, "lda"));
  EXPECT_TRUE(same_bits(a, a0));
}

// ---- Mixed precision and integer gemm ----------------------------------------------------

template <typename H, typename CH>
void half_gemm(tsr_status (*fn)(tsr_blas_handle, tsr_blas_op, tsr_blas_op, int64_t, int64_t,
                                int64_t, float, const CH*, int64_t, const CH*, int64_t, float,
                                float*, int64_t)) {
  Handle h;
  const std::int64_t m = 3, n = 4, k = 5;
  std::vector<CH> a(m * k), b(k * n);  // small multiples of 1/4: exact in both formats
  for (std::size_t i = 0; i < a.size(); ++i) a[i].bits = H(0.25f * float(int(i % 7) - 3)).bits;
  for (std::size_t i = 0; i < b.size(); ++i) b[i].bits = H(0.5f * float(int(i % 5) - 2)).bits;
  auto f = [](CH v) { return float(H::from_bits(v.bits)); };
  for (tsr_blas_op ta : {TSR_BLAS_OP_N, TSR_BLAS_OP_T}) {
    const std::int64_t lda = ta == TSR_BLAS_OP_N ? m : k;
    std::vector<float> c(m * n, 1.0f);
    ASSERT_EQ(
        fn(h, ta, TSR_BLAS_OP_N, m, n, k, 2.0f, a.data(), lda, b.data(), k, 0.5f, c.data(), m),
        TSR_STATUS_OK)
        << tsr_last_error_message();
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        float acc = 0;
        for (std::int64_t p = 0; p < k; ++p)
          acc += f(ta == TSR_BLAS_OP_N ? a[i + p * m] : a[p + i * k]) * f(b[p + j * k]);
        EXPECT_EQ(c[i + j * m], 2.0f * acc + 0.5f) << i << "," << j;
      }
  }
  std::vector<float> c(m * n, 1.0f);
  EXPECT_EQ(fn(h, TSR_BLAS_OP_N, TSR_BLAS_OP_N, m, n, k, 1.0f, a.data(), m - 1, b.data(), k, 0.0f,
               c.data(), m),
            TSR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(c, std::vector<float>(m * n, 1.0f));
}

TEST(CapiGemmLowPrecision, Bf16) {
  half_gemm<tessera::bf16, tsr_bfloat16>(tsr_blas_gemm_bf16);
}
TEST(CapiGemmLowPrecision, F16) {
  half_gemm<tessera::f16, tsr_half>(tsr_blas_gemm_f16);
}

TEST(CapiGemmLowPrecision, U8S8S32) {
  Handle h;
  const std::int64_t m = 4, n = 3, k = 6;
  std::vector<uint8_t> a(m * k);
  std::vector<int8_t> b(k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(37 * i + 200);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(53 * i - 128);
  std::vector<int32_t> c(m * n, 7);
  ASSERT_EQ(tsr_blas_gemm_u8s8s32(h, TSR_BLAS_OP_N, TSR_BLAS_OP_N, m, n, k, 3, a.data(), m,
                                  b.data(), k, -2, c.data(), m),
            TSR_STATUS_OK)
      << tsr_last_error_message();
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      int64_t acc = 0;
      for (std::int64_t p = 0; p < k; ++p) acc += int64_t(a[i + p * m]) * b[p + j * k];
      EXPECT_EQ(c[i + j * m], static_cast<int32_t>(3 * acc - 14)) << i << "," << j;
    }
  std::vector<int32_t> c0 = c;
  EXPECT_TRUE(invalid(tsr_blas_gemm_u8s8s32(h, TSR_BLAS_OP_N, TSR_BLAS_OP_N, m, n, k, 1, a.data(),
                                            m, b.data(), k, 0, c.data(), m - 1),
                      "tsr_blas_gemm_u8s8s32: ", "ldc"));
  EXPECT_EQ(c, c0);
}

}  // namespace
