// C API, level 1: every routine of every type against a plain reference, with strided and
// negative increments, plus invalid arguments (status, message, nothing written).
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include <tessera/core/half.hpp>

#include "capi_test_util.hpp"

namespace {

using namespace capi_test;

template <typename C>
class CapiLevel1 : public ::testing::Test {};
TYPED_TEST_SUITE(CapiLevel1, AllTypes);

// The first index of the largest (smallest) |re| + |im|.
template <typename C>
std::int64_t ref_iamax(const std::vector<C>& x, std::int64_t n, std::int64_t inc, bool max) {
  std::int64_t best = 0;
  double best_v = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const cd v = to_cd(x[i * inc]);
    const double a = std::abs(v.real()) + std::abs(v.imag());
    if (i == 0 || (max ? a > best_v : a < best_v)) best = i, best_v = a;
  }
  return best;
}

TYPED_TEST(CapiLevel1, IamaxIaminAsumNrm2) {
  using C = TypeParam;
  using R = real_of<C>;
  using A = Api<C>;
  Handle h;
  const std::int64_t n = 9, inc = 2;
  const std::vector<C> x = random_vec<C>(n * inc, 1);

  std::int64_t index = -1;
  ASSERT_EQ(A::iamax(h, n, x.data(), inc, &index), TSR_STATUS_OK) << tsr_last_error_message();
  EXPECT_EQ(index, ref_iamax(x, n, inc, true));
  ASSERT_EQ(A::iamin(h, n, x.data(), inc, &index), TSR_STATUS_OK) << tsr_last_error_message();
  EXPECT_EQ(index, ref_iamax(x, n, inc, false));
  ASSERT_EQ(A::iamax(h, 0, x.data(), inc, &index), TSR_STATUS_OK);
  EXPECT_EQ(index, 0);

  double asum = 0, sq = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const cd v = to_cd(x[i * inc]);
    asum += std::abs(v.real()) + std::abs(v.imag());
    sq += std::norm(v);
  }
  R result = -1;
  ASSERT_EQ(A::asum(h, n, x.data(), inc, &result), TSR_STATUS_OK) << tsr_last_error_message();
  EXPECT_TRUE(near<C>(from_cd<C>(result), asum));
  ASSERT_EQ(A::nrm2(h, n, x.data(), inc, &result), TSR_STATUS_OK) << tsr_last_error_message();
  EXPECT_TRUE(near<C>(from_cd<C>(result), std::sqrt(sq)));

  // scasum, dznrm2, ...: the names start with "tsr_blas_" only.
  EXPECT_TRUE(invalid(A::asum(h, n, x.data(), inc, nullptr), "tsr_blas_", "result is null"));
  EXPECT_TRUE(invalid(A::nrm2(nullptr, n, x.data(), inc, &result), "tsr_blas_", "handle is null"));
  EXPECT_EQ(A::iamax(h, -1, x.data(), inc, &index), TSR_STATUS_INVALID_ARGUMENT);
}

TYPED_TEST(CapiLevel1, AxpyCopySwapScal) {
  using C = TypeParam;
  using A = Api<C>;
  Handle h;
  const std::int64_t n = 7;
  const std::vector<C> x = random_vec<C>(n * 2, 2);
  const std::vector<C> y0 = random_vec<C>(n * 3, 3);
  const cd alpha(0.75, kComplex<C> ? -0.5 : 0.0);

  // axpy with incx = 2, incy = -3.
  std::vector<C> y = y0;
  std::vector<cd> want = widen(y0);
  for (std::int64_t i = 0; i < n; ++i) want[vi(i, n, -3)] += alpha * to_cd(x[vi(i, n, 2)]);
  ASSERT_EQ(A::axpy(h, n, from_cd<C>(alpha), x.data(), 2, y.data(), -3), TSR_STATUS_OK)
      << tsr_last_error_message();
  expect_all_near(y, want);

  // copy with incy = 3: the elements in between stay.
  y = y0;
  want = widen(y0);
  for (std::int64_t i = 0; i < n; ++i) want[i * 3] = to_cd(x[i * 2]);
  ASSERT_EQ(A::copy(h, n, x.data(), 2, y.data(), 3), TSR_STATUS_OK) << tsr_last_error_message();
  expect_all_near(y, want, 0);

  // swap with incx = -2, incy = 3.
  std::vector<C> xs = x;
  y = y0;
  std::vector<cd> want_x = widen(x), want_y = widen(y0);
  for (std::int64_t i = 0; i < n; ++i) std::swap(want_x[vi(i, n, -2)], want_y[i * 3]);
  ASSERT_EQ(A::swap(h, n, xs.data(), -2, y.data(), 3), TSR_STATUS_OK) << tsr_last_error_message();
  expect_all_near(xs, want_x, 0);
  expect_all_near(y, want_y, 0);

  // scal with incx = 2; csscal/zdscal for complex.
  xs = x;
  want_x = widen(x);
  for (std::int64_t i = 0; i < n; ++i) want_x[i * 2] *= alpha;
  ASSERT_EQ(A::scal(h, n, from_cd<C>(alpha), xs.data(), 2), TSR_STATUS_OK)
      << tsr_last_error_message();
  expect_all_near(xs, want_x);
  if constexpr (kComplex<C>) {
    xs = x;
    want_x = widen(x);
    for (std::int64_t i = 0; i < n; ++i) want_x[i * 2] *= 1.5;
    ASSERT_EQ(A::scal_real(h, n, 1.5, xs.data(), 2), TSR_STATUS_OK) << tsr_last_error_message();
    expect_all_near(xs, want_x);
  }

  // Invalid: nothing written.
  y = y0;
  EXPECT_TRUE(
      invalid(A::axpy(h, -1, from_cd<C>(alpha), x.data(), 1, y.data(), 1), A::kPrefix, "n = -1"));
  EXPECT_TRUE(invalid(A::copy(h, n, x.data(), 1, nullptr, 1), A::kPrefix, "y is null"));
  EXPECT_TRUE(invalid(A::swap(nullptr, n, xs.data(), 1, y.data(), 1), A::kPrefix, "handle"));
  EXPECT_TRUE(same_bits(y, y0));
}

TYPED_TEST(CapiLevel1, DotAndRot) {
  using C = TypeParam;
  using R = real_of<C>;
  using A = Api<C>;
  Handle h;
  const std::int64_t n = 11;
  const std::vector<C> x = random_vec<C>(n, 4);
  const std::vector<C> y = random_vec<C>(n * 2, 5);

  cd dotu = 0, dotc = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    dotu += to_cd(x[i]) * to_cd(y[vi(i, n, -2)]);
    dotc += std::conj(to_cd(x[i])) * to_cd(y[vi(i, n, -2)]);
  }
  C result{};
  ASSERT_EQ(A::dot(h, n, x.data(), 1, y.data(), -2, &result), TSR_STATUS_OK)
      << tsr_last_error_message();
  EXPECT_TRUE(near(result, dotu, n));
  if constexpr (kComplex<C>) {
    ASSERT_EQ(A::dotc(h, n, x.data(), 1, y.data(), -2, &result), TSR_STATUS_OK)
        << tsr_last_error_message();
    EXPECT_TRUE(near(result, dotc, n));
    EXPECT_TRUE(invalid(A::dotc(h, n, x.data(), 1, y.data(), 1, nullptr), A::kPrefix, "result"));
  }
  EXPECT_TRUE(invalid(A::dot(h, n, x.data(), 1, y.data(), 1, nullptr), A::kPrefix, "result"));

  // rot: (x, y) = (c x + s y, c y - s x).
  const R c = R(0.6), s = R(0.8);
  std::vector<C> xr = x, yr = y;
  std::vector<cd> want_x = widen(x), want_y = widen(y);
  for (std::int64_t i = 0; i < n; ++i) {
    const cd xv = to_cd(x[i]), yv = to_cd(y[i * 2]);
    want_x[i] = double(c) * xv + double(s) * yv;
    want_y[i * 2] = double(c) * yv - double(s) * xv;
  }
  ASSERT_EQ(A::rot(h, n, xr.data(), 1, yr.data(), 2, c, s), TSR_STATUS_OK)
      << tsr_last_error_message();
  expect_all_near(xr, want_x);
  expect_all_near(yr, want_y);
}

TYPED_TEST(CapiLevel1, Rotg) {
  using C = TypeParam;
  using R = real_of<C>;
  using A = Api<C>;
  const cd a0(3.0, kComplex<C> ? 1.0 : 0.0), b0(-4.0, kComplex<C> ? 2.0 : 0.0);
  C a = from_cd<C>(a0), b = from_cd<C>(b0), s{};
  R c = -2;
  ASSERT_EQ(A::rotg(&a, &b, &c, &s), TSR_STATUS_OK) << tsr_last_error_message();
  // [c s; -conj(s) c] * [a; b] = [r; 0] with c real and c^2 + |s|^2 = 1.
  const cd sv = to_cd(s), r = to_cd(a);
  EXPECT_TRUE(near<C>(from_cd<C>(double(c) * a0 + sv * b0), r));
  EXPECT_TRUE(near<C>(from_cd<C>(-std::conj(sv) * a0 + double(c) * b0), 0.0));
  EXPECT_TRUE(near<C>(from_cd<C>(double(c) * c + std::norm(sv)), 1.0));
  EXPECT_TRUE(near<C>(from_cd<C>(std::abs(r)), std::sqrt(std::norm(a0) + std::norm(b0))));
  EXPECT_TRUE(invalid(A::rotg(&a, &b, nullptr, &s), A::kPrefix, "c is null"));
}

// f16 / bf16 axpy, dot and scal: f32 scalars, f32 accumulation.
template <typename H, typename CH>
void half_level1(tsr_status (*axpy)(tsr_blas_handle, int64_t, float, const CH*, int64_t, CH*,
                                    int64_t),
                 tsr_status (*dot)(tsr_blas_handle, int64_t, const CH*, int64_t, const CH*, int64_t,
                                   float*),
                 tsr_status (*scal)(tsr_blas_handle, int64_t, float, CH*, int64_t)) {
  Handle h;
  const std::int64_t n = 19;
  std::vector<CH> x(n), y(n);
  for (std::int64_t i = 0; i < n; ++i) {  // values exact in both formats
    x[i].bits = H(0.25f * float(i % 7) - 0.5f).bits;
    y[i].bits = H(0.125f * float(i % 5)).bits;
  }
  auto f = [](CH v) { return float(H::from_bits(v.bits)); };

  double want_dot = 0;
  for (std::int64_t i = 0; i < n; ++i) want_dot += double(f(x[i])) * f(y[i]);
  float result = -1;
  ASSERT_EQ(dot(h, n, x.data(), 1, y.data(), 1, &result), TSR_STATUS_OK)
      << tsr_last_error_message();
  EXPECT_NEAR(result, want_dot, 1e-5);

  std::vector<CH> y2 = y;
  ASSERT_EQ(axpy(h, n, 2.0f, x.data(), 1, y2.data(), 1), TSR_STATUS_OK) << tsr_last_error_message();
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(f(y2[i]), f(y[i]) + 2.0f * f(x[i])) << i;

  std::vector<CH> x2 = x;
  ASSERT_EQ(scal(h, n, -0.5f, x2.data(), 1), TSR_STATUS_OK) << tsr_last_error_message();
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(f(x2[i]), -0.5f * f(x[i])) << i;

  EXPECT_EQ(dot(h, -1, x.data(), 1, y.data(), 1, &result), TSR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(scal(nullptr, n, 1.0f, x2.data(), 1), TSR_STATUS_INVALID_ARGUMENT);
}

TEST(CapiLevel1Half, F16) {
  half_level1<tessera::f16, tsr_half>(tsr_blas_haxpy, tsr_blas_hdot, tsr_blas_hscal);
}
TEST(CapiLevel1Half, Bf16) {
  half_level1<tessera::bf16, tsr_bfloat16>(tsr_blas_bfaxpy, tsr_blas_bfdot, tsr_blas_bfscal);
}

}  // namespace
