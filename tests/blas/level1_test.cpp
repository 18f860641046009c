// Level-1 BLAS against the plain reference in ref_level12.hpp: every type and ISA level, sizes
// around the vector widths, the reduction blocks and the thread chunks, positive, negative and
// zero increments. Exact on small-integer data (any indexing slip shows), within rounding
// bounds on random data; the same bits for any thread count; reference BLAS's quirks (NaN in
// iamax, incx <= 0); nrm2 on huge and tiny values; rotg; f16/bf16; argument errors; the
// replay and dispatch log lines.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include <tessera/blas.hpp>
#include <tessera/core/log.hpp>
#include <tessera/core/thread_pool.hpp>

#include "ref_level12.hpp"
#include "test_util.hpp"

namespace tessera::blas {
namespace {

using std::int64_t;
using testing::for_each_isa;

const int64_t kSizes[] = {0,  1,  2,  3,  4,  5,  7,   8,   9,   15,  16,  17,
                          31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000};
const int64_t kIncs[] = {1, 2, -1, -3};
// Across the reduction blocks (16384 elements) and the per-thread chunks (32768).
const int64_t kLarge[] = {16383, 16385, 70001};

struct IncPair {
  int64_t x, y;
};
const IncPair kIncPairs[] = {{1, 1}, {2, 3}, {-1, -1}, {-2, 1}, {1, -3}};

// A strided vector behind 0..7 leading elements, so the kernels see every alignment (their
// peeled heads) and x and y misaligned against each other.
template <typename T>
struct Vec {
  Vec(int64_t n_, int64_t inc_, std::mt19937_64& g, bool integers)
      : n(n_),
        inc(inc_),
        lead(static_cast<int64_t>(g() % 8)),
        data(ref::vec<T>(lead + ref::span(n_, inc_), g, integers)) {}
  T* p() { return data.data() + lead; }
  int64_t n, inc, lead;
  std::vector<T> data;
};

template <typename T>
double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

template <typename T>
class Level1 : public ::testing::Test {};
using Types = ::testing::Types<float, double, cfloat, cdouble>;
TYPED_TEST_SUITE(Level1, Types);

TYPED_TEST(Level1, ReductionsExactOnIntegers) {
  using T = TypeParam;
  using R = real_t<T>;
  Handle h;
  for_each_isa([&](Isa) {
    std::mt19937_64 g(1);
    auto check = [&](int64_t n, IncPair inc) {
      SCOPED_TRACE("n = " + std::to_string(n) + " incx = " + std::to_string(inc.x) +
                   " incy = " + std::to_string(inc.y));
      Vec<T> x(n, inc.x, g, true), y(n, inc.y, g, true);
      R rs = -1;
      ASSERT_TRUE(asum(h, n, x.p(), inc.x, &rs).is_ok());
      EXPECT_EQ(rs, ref::asum(n, x.p(), inc.x));
      T d = T(-1);
      ASSERT_TRUE(dot(h, n, x.p(), inc.x, y.p(), inc.y, &d).is_ok());
      EXPECT_EQ(d, ref::dot(n, x.p(), inc.x, y.p(), inc.y, false));
      if constexpr (is_complex_v<T>) {
        ASSERT_TRUE(dotc(h, n, x.p(), inc.x, y.p(), inc.y, &d).is_ok());
        EXPECT_EQ(d, ref::dot(n, x.p(), inc.x, y.p(), inc.y, true));
      }
      ASSERT_TRUE(nrm2(h, n, x.p(), inc.x, &rs).is_ok());
      const long double want = ref::nrm2(n, x.p(), inc.x);
      EXPECT_NEAR(rs, want, 2 * eps<T>() * want);
      int64_t idx = -1;
      ASSERT_TRUE(iamax(h, n, x.p(), inc.x, &idx).is_ok());
      EXPECT_EQ(idx, (ref::iext<T, true>(n, x.p(), inc.x)));
      ASSERT_TRUE(iamin(h, n, x.p(), inc.x, &idx).is_ok());
      EXPECT_EQ(idx, (ref::iext<T, false>(n, x.p(), inc.x)));
    };
    for (int64_t n : kSizes)
      for (IncPair inc : kIncPairs) check(n, inc);
    for (int64_t n : kLarge) {
      check(n, {1, 1});
      check(n, {-2, 3});
    }
  });
}

TYPED_TEST(Level1, UpdatesExactOnIntegers) {
  using T = TypeParam;
  using R = real_t<T>;
  Handle h;
  const T alpha = ref::make<T>(-3, 2);
  for_each_isa([&](Isa) {
    std::mt19937_64 g(2);
    auto check = [&](int64_t n, IncPair inc) {
      SCOPED_TRACE("n = " + std::to_string(n) + " incx = " + std::to_string(inc.x) +
                   " incy = " + std::to_string(inc.y));
      Vec<T> x(n, inc.x, g, true), y(n, inc.y, g, true);
      {  // axpy
        auto want = y.data;
        ref::axpy(n, alpha, x.p(), inc.x, want.data() + y.lead, inc.y);
        auto got = y.data;
        ASSERT_TRUE(axpy(h, n, alpha, x.p(), inc.x, got.data() + y.lead, inc.y).is_ok());
        EXPECT_EQ(got, want);
      }
      {  // copy
        auto want = y.data;
        for (int64_t i = 0; i < n; ++i)
          want[y.lead + ref::at(i, n, inc.y)] = x.p()[ref::at(i, n, inc.x)];
        auto got = y.data;
        ASSERT_TRUE(copy(h, n, x.p(), inc.x, got.data() + y.lead, inc.y).is_ok());
        EXPECT_EQ(got, want);
      }
      {  // swap
        auto wx = x.data, wy = y.data, gx = x.data, gy = y.data;
        for (int64_t i = 0; i < n; ++i)
          std::swap(wx[x.lead + ref::at(i, n, inc.x)], wy[y.lead + ref::at(i, n, inc.y)]);
        ASSERT_TRUE(swap(h, n, gx.data() + x.lead, inc.x, gy.data() + y.lead, inc.y).is_ok());
        EXPECT_EQ(gx, wx);
        EXPECT_EQ(gy, wy);
      }
      {  // rot with integer c and s keeps everything exact
        auto wx = x.data, wy = y.data, gx = x.data, gy = y.data;
        ref::rot(n, wx.data() + x.lead, inc.x, wy.data() + y.lead, inc.y, R(2), R(-3));
        ASSERT_TRUE(
            rot(h, n, gx.data() + x.lead, inc.x, gy.data() + y.lead, inc.y, R(2), R(-3)).is_ok());
        EXPECT_EQ(gx, wx);
        EXPECT_EQ(gy, wy);
      }
      if (inc.x > 0) {  // scal and scal_real (reference BLAS ignores incx < 0)
        auto want = x.data, got = x.data;
        for (int64_t i = 0; i < n; ++i) want[x.lead + i * inc.x] *= alpha;
        ASSERT_TRUE(scal(h, n, alpha, got.data() + x.lead, inc.x).is_ok());
        EXPECT_EQ(got, want);
        want = x.data;
        got = x.data;
        for (int64_t i = 0; i < n; ++i) want[x.lead + i * inc.x] *= R(-2);
        ASSERT_TRUE(scal_real(h, n, R(-2), got.data() + x.lead, inc.x).is_ok());
        EXPECT_EQ(got, want);
      }
    };
    for (int64_t n : kSizes)
      for (IncPair inc : kIncPairs) check(n, inc);
    check(kLarge[2], {1, 1});
    check(kLarge[2], {-1, 2});
  });
}

TYPED_TEST(Level1, RandomDataWithinRounding) {
  using T = TypeParam;
  using R = real_t<T>;
  Handle h;
  for_each_isa([&](Isa) {
    std::mt19937_64 g(3);
    for (int64_t n : {1, 17, 1000, 70001}) {
      SCOPED_TRACE("n = " + std::to_string(n));
      Vec<T> x(n, 1, g, false), y(n, 1, g, false);
      // Each result within 4 sqrt(n) eps of the sum of its terms' magnitudes.
      const double bound = 4 * std::sqrt(double(n)) * eps<T>();
      double mag = 0;
      for (int64_t i = 0; i < n; ++i) mag += std::abs(x.p()[i]) * std::abs(y.p()[i]);
      T d;
      ASSERT_TRUE(dot(h, n, x.p(), 1, y.p(), 1, &d).is_ok());
      EXPECT_LE(std::abs(d - ref::dot(n, x.p(), 1, y.p(), 1, false)), bound * mag);
      R s;
      ASSERT_TRUE(asum(h, n, x.p(), 1, &s).is_ok());
      const R want_s = ref::asum(n, x.p(), 1);
      EXPECT_LE(std::abs(s - want_s), bound * want_s);
      ASSERT_TRUE(nrm2(h, n, x.p(), 1, &s).is_ok());
      const long double want_n = ref::nrm2(n, x.p(), 1);
      EXPECT_LE(std::abs(s - want_n), bound * want_n);
      const T alpha = T(R(0.7));
      auto want = y.data, got = y.data;
      ref::axpy(n, alpha, x.p(), 1, want.data(), 1);
      ASSERT_TRUE(axpy(h, n, alpha, x.p(), 1, got.data(), 1).is_ok());
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(std::abs(got[i] - want[i]), 0, 8 * eps<T>());
    }
  });
}

TYPED_TEST(Level1, ZeroAndNegativeIncrementsFollowReference) {
  using T = TypeParam;
  using R = real_t<T>;
  Handle h;
  std::mt19937_64 g(4);
  const int64_t n = 37;
  Vec<T> x(n, 2, g, true), y(n, 1, g, true);
  int64_t idx = -5;
  R r = -1;
  // asum, iamax, iamin: reference BLAS returns 0 for incx <= 0.
  for (int64_t inc : {0, -1}) {
    ASSERT_TRUE(asum(h, n, x.p(), inc, &r).is_ok());
    EXPECT_EQ(r, 0);
    ASSERT_TRUE(iamax(h, n, x.p(), inc, &idx).is_ok());
    EXPECT_EQ(idx, 0);
    ASSERT_TRUE(iamin(h, n, x.p(), inc, &idx).is_ok());
    EXPECT_EQ(idx, 0);
  }
  // scal: incx < 0 leaves x alone; incx == 0 is an error (x is written).
  auto before = x.data;
  ASSERT_TRUE(scal(h, n, T(R(3)), x.p(), -2).is_ok());
  EXPECT_EQ(x.data, before);
  EXPECT_EQ(scal(h, n, T(R(3)), x.p(), 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scal_real(h, n, R(3), x.p(), 0).code(), StatusCode::kInvalidArgument);
  // nrm2 walks a negative increment from the far end and repeats x[0] for incx == 0.
  ASSERT_TRUE(nrm2(h, n, x.p(), -2, &r).is_ok());
  EXPECT_NEAR(r, ref::nrm2(n, x.p(), 2), 4 * eps<T>() * r);
  ASSERT_TRUE(nrm2(h, n, x.p(), 0, &r).is_ok());
  EXPECT_NEAR(r, std::sqrt(double(n)) * std::abs(x.p()[0]), 4 * eps<T>() * (r + 1));
  // A zero increment on a read-only vector repeats its first element.
  T d;
  ASSERT_TRUE(dot(h, n, x.p(), 0, y.p(), -1, &d).is_ok());
  EXPECT_EQ(d, ref::dot(n, x.p(), 0, y.p(), -1, false));
  ASSERT_TRUE(dot(h, n, x.p(), 2, y.p(), 0, &d).is_ok());
  EXPECT_EQ(d, ref::dot(n, x.p(), 2, y.p(), 0, false));
  auto want = y.data, got = y.data;
  ref::axpy(n, T(R(2)), x.p(), 0, want.data(), -1);
  ASSERT_TRUE(axpy(h, n, T(R(2)), x.p(), 0, got.data(), -1).is_ok());
  EXPECT_EQ(got, want);
  ASSERT_TRUE(copy(h, n, x.p(), 0, got.data(), 1).is_ok());
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[i], x.p()[0]);
  // ... and on a written one it is an error.
  EXPECT_EQ(axpy(h, n, T(R(2)), x.p(), 1, y.p(), 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(copy(h, n, x.p(), 1, y.p(), 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(swap(h, n, x.p(), 0, y.p(), 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(rot(h, n, x.p(), 1, y.p(), 0, R(1), R(0)).code(), StatusCode::kInvalidArgument);
}

TYPED_TEST(Level1, SameBitsForAnyThreadCount) {
  using T = TypeParam;
  using R = real_t<T>;
  set_num_threads(4);
  std::mt19937_64 g(5);
  const int64_t n = 150001;
  Vec<T> x(n, 1, g, false), y(n, 1, g, false);
  struct Out {
    T d, dc;
    R s, nrm;
    int64_t imax, imin;
    std::vector<T> ax, sc;
  };
  auto run = [&](int threads, int64_t inc) {
    Handle h;
    EXPECT_TRUE(h.set_num_threads(threads).is_ok());
    const int64_t m = n / (inc < 0 ? -inc : inc);
    Out o;
    EXPECT_TRUE(dot(h, m, x.p(), inc, y.p(), inc, &o.d).is_ok());
    o.dc = o.d;
    if constexpr (is_complex_v<T>) {
      EXPECT_TRUE(dotc(h, m, x.p(), inc, y.p(), inc, &o.dc).is_ok());
    }
    EXPECT_TRUE(asum(h, m, x.p(), inc, &o.s).is_ok());
    EXPECT_TRUE(nrm2(h, m, x.p(), inc, &o.nrm).is_ok());
    EXPECT_TRUE(iamax(h, m, x.p(), inc, &o.imax).is_ok());
    EXPECT_TRUE(iamin(h, m, x.p(), inc, &o.imin).is_ok());
    o.ax = y.data;
    EXPECT_TRUE(axpy(h, m, T(R(0.3)), x.p(), inc, o.ax.data(), inc).is_ok());
    o.sc = x.data;
    EXPECT_TRUE(scal(h, m, T(R(0.3)), o.sc.data(), inc).is_ok());
    return o;
  };
  for_each_isa([&](Isa) {
    for (int64_t inc : {1, -2}) {
      const Out one = run(1, inc);
      for (int threads : {3, 4}) {
        SCOPED_TRACE("threads = " + std::to_string(threads) + " inc = " + std::to_string(inc));
        const Out o = run(threads, inc);
        EXPECT_EQ(o.d, one.d);
        EXPECT_EQ(o.dc, one.dc);
        EXPECT_EQ(o.s, one.s);
        EXPECT_EQ(o.nrm, one.nrm);
        EXPECT_EQ(o.imax, one.imax);
        EXPECT_EQ(o.imin, one.imin);
        EXPECT_EQ(o.ax, one.ax);
        EXPECT_EQ(o.sc, one.sc);
      }
    }
  });
  set_num_threads(0);
}

// Copies of half the last-level cache and more go through non-temporal stores.
TEST(Level1Copy, LargeCopiesStreamPastTheCache) {
  const std::int64_t l3 = cpu_info().cache_bytes(3);
  const int64_t n = (l3 > 0 ? l3 / 2 : 16 << 20) / 4 + 37;
  std::vector<float> x(n + 3), y(n + 5, -1.0f);
  for (int64_t i = 0; i < n + 3; ++i) x[i] = float(i % 1000);
  Handle h;
  for_each_isa([&](Isa) {
    for (int64_t offset : {0, 1, 3}) {  // the stores start after an unaligned head
      std::fill(y.begin(), y.end(), -1.0f);
      ASSERT_TRUE(copy(h, n, x.data() + 1, 1, y.data() + offset, 1).is_ok());
      for (int64_t i = 0; i < n + 5; ++i) {
        const bool inside = i >= offset && i < offset + n;
        ASSERT_EQ(y[i], inside ? x[i - offset + 1] : -1.0f) << i;
      }
    }
  });
}

template <typename T>
class Level1Real : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Level1Real, RealTypes);

TYPED_TEST(Level1Real, IamaxSkipsNaNLikeReference) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  Handle h;
  for_each_isa([&](Isa) {
    for (int64_t n : {5, 17, 40000}) {
      for (int64_t lead : {0, 1, 3}) {  // the vector kernels peel a head up to alignment
        SCOPED_TRACE("n = " + std::to_string(n) + " lead = " + std::to_string(lead));
        std::vector<T> buf(lead + n, T(1));
        T* x = buf.data() + lead;
        int64_t i = -1;
        x[0] = nan;  // a NaN first is never replaced
        x[n - 1] = 5;
        ASSERT_TRUE(iamax(h, n, x, 1, &i).is_ok());
        EXPECT_EQ(i, 0);
        ASSERT_TRUE(iamin(h, n, x, 1, &i).is_ok());
        EXPECT_EQ(i, 0);
        // Elsewhere NaNs are skipped, also at the start of a later block.
        x[0] = 2;
        for (int64_t k = 1; k < n; k += 16384) x[k] = nan;
        x[n - 1] = -5;
        ASSERT_TRUE(iamax(h, n, x, 1, &i).is_ok());
        EXPECT_EQ(i, n - 1);
        x[n / 2 + 1] = T(0.5);
        ASSERT_TRUE(iamin(h, n, x, 1, &i).is_ok());
        EXPECT_EQ(i, n / 2 + 1);
        // Infinity is a value like any other; ties go to the first.
        x[n / 2] = -inf;
        x[n - 1] = inf;
        ASSERT_TRUE(iamax(h, n, x, 1, &i).is_ok());
        EXPECT_EQ(i, n / 2);
        std::vector<T> all_nan(n, nan);
        all_nan[0] = 3;
        ASSERT_TRUE(iamin(h, n, all_nan.data(), 1, &i).is_ok());
        EXPECT_EQ(i, 0);
      }
    }
  });
}

TYPED_TEST(Level1, Nrm2NeitherOverflowsNorUnderflows) {
  using T = TypeParam;
  using R = real_t<T>;
  const R big = std::is_same_v<R, float> ? R(1e33) : R(1e300);     // the norm still fits
  const R tiny = std::is_same_v<R, float> ? R(1e-40) : R(1e-310);  // subnormal
  const R inf = std::numeric_limits<R>::infinity(), nan = std::numeric_limits<R>::quiet_NaN();
  Handle h;
  for_each_isa([&](Isa) {
    for (int64_t n : {1, 7, 1000, 40000}) {
      for (int64_t inc : {1, -2}) {
        SCOPED_TRACE("n = " + std::to_string(n) + " inc = " + std::to_string(inc));
        auto norm_of = [&](auto fill) {
          std::vector<T> x(ref::span(n, inc));
          for (int64_t i = 0; i < n; ++i) x[ref::at(i, n, inc)] = fill(i);
          R r = -1;
          EXPECT_TRUE(nrm2(h, n, x.data(), inc, &r).is_ok());
          return std::pair<R, long double>(r, ref::nrm2(n, x.data(), inc));
        };
        auto expect_close = [&](std::pair<R, long double> p) {
          EXPECT_TRUE(std::isfinite(p.first));
          EXPECT_NEAR(p.first / p.second, 1.0L, (8 + 2 * std::sqrt(double(n))) * eps<T>());
        };
        expect_close(norm_of([&](int64_t i) { return T(big * R(1 + i % 3)); }));
        expect_close(norm_of([&](int64_t i) { return T(tiny * R(1 + i % 3)); }));
        // Mixed scales, and a block of tiny values after a block of ordinary ones.
        expect_close(norm_of([&](int64_t i) { return T(i % 2 ? big : tiny); }));
        expect_close(norm_of([&](int64_t i) { return T(i < n / 2 ? R(1) : tiny); }));
        expect_close(norm_of([&](int64_t i) { return T(i % 5 ? tiny : R(1e-20)); }));
        EXPECT_EQ(norm_of([&](int64_t i) { return T(i == n / 2 ? inf : R(1)); }).first, inf);
        EXPECT_TRUE(
            std::isnan(norm_of([&](int64_t i) { return T(i == n / 2 ? nan : big); }).first));
        EXPECT_TRUE(std::isnan(norm_of([&](int64_t i) {
                                 return T(i == 0 ? nan : i == n - 1 ? inf : R(1));
                               }).first));
        EXPECT_EQ(norm_of([&](int64_t) { return T(0); }).first, 0);
      }
    }
  });
}

template <typename T>
class Level1Rotg : public ::testing::Test {};
TYPED_TEST_SUITE(Level1Rotg, Types);

TYPED_TEST(Level1Rotg, ZeroesTheSecondComponent) {
  using T = TypeParam;
  using R = real_t<T>;
  std::mt19937_64 g(6);
  const R huge = std::numeric_limits<R>::max() / 8, small = std::numeric_limits<R>::min() * 4;
  std::vector<std::pair<T, T>> cases = {
      {T(3), T(4)},        {T(-3), T(4)},      {T(4), T(-3)},        {T(1), T(0)},
      {T(0), T(2)},        {T(huge), T(huge)}, {T(small), T(small)}, {T(huge), T(small)},
      {T(small), T(huge)}, {T(0), T(0)}};
  if constexpr (is_complex_v<T>) {
    cases.push_back({T(1, 2), T(-3, 1)});
    cases.push_back({T(0, 0), T(huge, -huge)});
    cases.push_back({T(small, 0), T(huge, 1)});
    cases.push_back({T(huge, huge), T(small, -small)});
  }
  for (int k = 0; k < 50; ++k) cases.push_back({ref::uniform<T>(g), ref::uniform<T>(g)});
  for (auto [a0, b0] : cases) {
    SCOPED_TRACE(::testing::PrintToString(a0) + ", " + ::testing::PrintToString(b0));
    T a = a0, b = b0, s;
    R c;
    ASSERT_TRUE(rotg(&a, &b, &c, &s).is_ok());
    const T r = a;
    ASSERT_TRUE(std::isfinite(std::abs(r)));
    const R scale = std::max(std::abs(a0), std::abs(b0));
    // [c s; -conj(s) c] [a; b] = [r; 0] with c real, c^2 + |s|^2 = 1, computed on scaled
    // copies so nothing overflows here either.
    const R sc = scale > 0 ? scale : R(1);
    const T as = a0 / sc, bs = b0 / sc;
    EXPECT_NEAR(c * c + std::norm(s), 1, 8 * eps<T>());
    EXPECT_NEAR(std::abs(c * as + s * bs - r / sc), 0, 8 * eps<T>());
    EXPECT_NEAR(std::abs(-ref::conj_if(s, true) * as + c * bs), 0, 8 * eps<T>());
    if constexpr (is_complex_v<T>) {
      EXPECT_EQ(b, b0);  // b is not changed
      if (a0 != T(0)) {  // r has the direction of a
        EXPECT_NEAR(std::abs(r / std::abs(r) - a0 / std::abs(a0)), 0, 8 * eps<T>());
      }
    } else {
      // z reconstructs c and s: |z| < 1 means s = z, otherwise c = 1/z (or c = 0 when z = 1
      // after a == 0).
      if (b0 == T(0)) {
        EXPECT_EQ(b, T(0));
      } else if (std::abs(a0) > std::abs(b0)) {
        EXPECT_EQ(b, s);
      } else if (c != 0) {
        EXPECT_NEAR(b * c, 1, 4 * eps<T>());
      } else {
        EXPECT_EQ(b, T(1));
      }
      // The sign of r follows the larger of a and b.
      const T big_one = std::abs(a0) > std::abs(b0) ? a0 : b0;
      if (big_one != T(0)) {
        EXPECT_EQ(std::signbit(r), std::signbit(big_one));
      }
    }
  }
  T a = T(1), b = T(1), s;
  R c;
  EXPECT_EQ(rotg<T>(nullptr, &b, &c, &s).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(rotg<T>(&a, &b, nullptr, &s).code(), StatusCode::kInvalidArgument);
}

template <typename T>
class Level1Half : public ::testing::Test {};
using HalfTypes = ::testing::Types<f16, bf16>;
TYPED_TEST_SUITE(Level1Half, HalfTypes);

TYPED_TEST(Level1Half, AxpyScalDotMatchFloatReference) {
  using H = TypeParam;
  Handle h;
  for_each_isa([&](Isa) {
    std::mt19937_64 g(7);
    std::uniform_int_distribution<int> d(-16, 16);
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 33, 64, 100, 1000, 20001}) {
      for (IncPair inc : {IncPair{1, 1}, IncPair{2, -1}, IncPair{0, 3}}) {
        SCOPED_TRACE("n = " + std::to_string(n) + " incx = " + std::to_string(inc.x) +
                     " incy = " + std::to_string(inc.y));
        // Halves of small integers: every product and sum below is exact in f32, and the
        // rounding to the 16-bit type (bf16 has 8 significant bits) happens once.
        std::vector<H> x(ref::span(n, inc.x)), y(ref::span(n, inc.y));
        for (H& v : x) v = H(d(g) * 0.5f);
        for (H& v : y) v = H(float(d(g) * 3));
        float want_dot = 0;
        std::vector<H> want_axpy = y;
        for (int64_t i = 0; i < n; ++i) {
          const float xi = float(x[ref::at(i, n, inc.x)]);
          H& yi = want_axpy[ref::at(i, n, inc.y)];
          want_dot += xi * float(y[ref::at(i, n, inc.y)]);
          yi = H(float(yi) + 1.5f * xi);
        }
        float got_dot = -1;
        ASSERT_TRUE(dot(h, n, x.data(), inc.x, y.data(), inc.y, &got_dot).is_ok());
        EXPECT_EQ(got_dot, want_dot);
        std::vector<H> got = y;
        ASSERT_TRUE(axpy(h, n, 1.5f, x.data(), inc.x, got.data(), inc.y).is_ok());
        for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].bits, want_axpy[i].bits) << i;
        if (inc.y > 0) {
          got = y;
          ASSERT_TRUE(scal(h, n, -0.75f, got.data(), inc.y).is_ok());
          for (std::size_t i = 0; i < got.size(); ++i) {
            const bool touched = i % inc.y == 0 && int64_t(i / inc.y) < n;
            ASSERT_EQ(got[i].bits, touched ? H(-0.75f * float(y[i])).bits : y[i].bits) << i;
          }
        }
      }
    }
    // Rounding to nearest even, overflow to infinity and NaN payloads as the scalar conversion.
    std::vector<H> y = {H(1.0f), H(65504.0f), H(-3.0f), H(std::numeric_limits<float>::quiet_NaN())};
    std::vector<H> x(4, H(1.0f));
    std::vector<H> want = y;
    for (H& v : want) v = H(float(v) + 1.0e-3f * 1.0f);
    ASSERT_TRUE(axpy(h, 4, 1.0e-3f, x.data(), 1, y.data(), 1).is_ok());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i].bits, want[i].bits) << i;
  });
}

TEST(Level1Args, InvalidArgumentsNameTheParameterAndWriteNothing) {
  Handle h;
  std::vector<float> x(8, 1.0f), y(8, 2.0f);
  const std::vector<float> y0 = y;
  float r = 42;
  int64_t idx = 42;
  auto expect_invalid = [&](Status s, const char* what) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
    EXPECT_EQ(y, y0);
    EXPECT_EQ(r, 42);
    EXPECT_EQ(idx, 42);
  };
  expect_invalid(asum(h, -1, x.data(), 1, &r), "n = -1");
  expect_invalid(asum<float>(h, 4, nullptr, 1, &r), "x is null");
  expect_invalid(asum<float>(h, 4, x.data(), 1, nullptr), "result is null");
  expect_invalid(nrm2(h, -2, x.data(), 1, &r), "n = -2");
  expect_invalid(iamax(h, -1, x.data(), 1, &idx), "n = -1");
  expect_invalid(iamin<float>(h, 3, x.data(), 1, nullptr), "result is null");
  expect_invalid(dot(h, -1, x.data(), 1, y.data(), 1, &r), "n = -1");
  expect_invalid(dot<float>(h, 2, x.data(), 1, nullptr, 1, &r), "y is null");
  expect_invalid(axpy(h, 4, 2.0f, x.data(), 1, y.data(), 0), "incy must not be 0");
  expect_invalid(axpy<float>(h, 4, 2.0f, nullptr, 1, y.data(), 1), "x is null");
  expect_invalid(copy(h, -3, x.data(), 1, y.data(), 1), "n = -3");
  expect_invalid(scal(h, 4, 2.0f, y.data(), 0), "incx must not be 0");
  expect_invalid(swap(h, 4, x.data(), 1, y.data(), 0), "incy must not be 0");
  expect_invalid(rot(h, 4, x.data(), 0, y.data(), 1, 1.0f, 0.0f), "incx must not be 0");
  cfloat c(42, 0);
  std::vector<cfloat> cx(4);
  EXPECT_EQ(dotc<cfloat>(h, 4, cx.data(), 1, nullptr, 1, &c).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c, cfloat(42, 0));
  // Sizes of zero need no pointers.
  EXPECT_TRUE(axpy<float>(h, 0, 2.0f, nullptr, 1, nullptr, 1).is_ok());
  EXPECT_TRUE(asum<float>(h, 0, nullptr, 1, &r).is_ok());
  EXPECT_EQ(r, 0);
}

TEST(Level1Log, ReplayAndDispatchLines) {
  const std::uint32_t saved = log::enabled_mask();
  Handle h;
  ASSERT_TRUE(h.set_num_threads(1).is_ok());
  std::vector<double> x(10, 1.0), y(20, 1.0);
  const std::vector<float> xf(3, 1.0f);
  log::set_enabled_mask(static_cast<std::uint32_t>(log::Category::kBench));
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(axpy(h, 5, 2.0, x.data(), 1, y.data(), -2).is_ok());
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("tessera bench blas axpy --dtype f64 --n 5 --incx 1 --incy -2 --threads 1\n"),
            std::string::npos)
      << out;
  log::set_enabled_mask(static_cast<std::uint32_t>(log::Category::kDispatch));
  for_each_isa([&](Isa isa) {
    ::testing::internal::CaptureStderr();
    float r;
    ASSERT_TRUE(nrm2(h, 3, xf.data(), 1, &r).is_ok());
    out = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(out.find("snrm2: chose " + std::string(isa_name(isa))), std::string::npos) << out;
  });
  log::set_enabled_mask(saved);
}

}  // namespace
}  // namespace tessera::blas
