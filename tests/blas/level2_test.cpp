// Level-2 BLAS against the plain reference in ref_level12.hpp: every type, ISA level,
// transpose/uplo/diag, sizes around the vector widths, the column groups, gemv's row passes,
// trmv/trsv's blocks and symv's parts; lda larger than needed; positive and negative
// increments; alpha/beta special values (beta = 0 over NaN); the unused triangle filled with
// NaN. Exact on small-integer data (trsv too: integer solutions with a diagonal of +-1),
// within rounding bounds on random data; the same bits for any thread count; argument errors;
// the replay line; OpenBLAS as an extra oracle where installed.
#include <cmath>
#include <limits>
#include <string>

#include <dlfcn.h>
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

template <typename T>
double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}
template <typename T>
bool is_nan(T v) {
  if constexpr (is_complex_v<T>)
    return std::isnan(v.real()) || std::isnan(v.imag());
  else
    return std::isnan(v);
}
template <typename T>
T nan_value() {
  const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
  if constexpr (is_complex_v<T>)
    return T(q, q);
  else
    return q;
}
// Equal element by element, NaN matching NaN (the gaps of strided vectors may hold NaN).
template <typename T>
::testing::AssertionResult same(const std::vector<T>& got, const std::vector<T>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!(got[i] == want[i] || (is_nan(got[i]) && is_nan(want[i]))))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << ::testing::PrintToString(got[i]) << ", want "
             << ::testing::PrintToString(want[i]);
  return ::testing::AssertionSuccess();
}

struct IncPair {
  int64_t x, y;
};
const IncPair kIncPairs[] = {{1, 1}, {2, -1}, {-3, 2}};

template <typename T>
struct AlphaBeta {
  T alpha, beta;
  bool nan_y;  // y starts as NaN (only with beta == 0)
};
template <typename T>
std::vector<AlphaBeta<T>> alpha_betas() {
  const T a = ref::make<T>(2, -1), b = ref::make<T>(-1, 3);
  return {{a, b, false},       {T(1), T(0), true},   {a, T(0), true},   {T(0), b, false},
          {T(0), T(1), false}, {T(-1), T(1), false}, {T(0), T(0), true}};
}

// Every ISA level, except for complex symv/hemv whose panels are the same generic C++ at every
// level (so once).
template <typename T, typename Fn>
void for_each_level(Fn&& fn) {
  if constexpr (is_complex_v<T>)
    fn(cpu_info().isa());
  else
    for_each_isa(fn);
}

std::string shape(const char* what, int64_t m, int64_t n) {
  return std::string(what) + " m = " + std::to_string(m) + " n = " + std::to_string(n);
}

template <typename T>
class Level2 : public ::testing::Test {};
using Types = ::testing::Types<float, double, cfloat, cdouble>;
TYPED_TEST_SUITE(Level2, Types);

TYPED_TEST(Level2, GemvExactOnIntegers) {
  using T = TypeParam;
  Handle h;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int64_t m : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33})
    for (int64_t n : {0, 1, 3, 4, 5, 8, 9}) shapes.push_back({m, n});
  // Past gemv's row pass (8 KiB of y), past a thread chunk, wide and short.
  for (auto s : {std::pair<int64_t, int64_t>{1025, 3}, {2049, 5}, {3, 2049}, {130, 66}})
    shapes.push_back(s);
  for_each_isa([&](Isa) {
    std::mt19937_64 g(11);
    for (auto [m, n] : shapes)
      for (Op op : {Op::kNoTrans, Op::kTrans, Op::kConjTrans})
        for (IncPair inc : kIncPairs)
          for (const AlphaBeta<T>& ab : alpha_betas<T>()) {
            // Every alpha/beta with unit increments, the general pair with the others.
            if ((inc.x != 1 || inc.y != 1) && ab.beta != alpha_betas<T>()[0].beta) continue;
            if ((m > 64 || n > 64) && (inc.x != 1 || ab.beta != alpha_betas<T>()[0].beta)) continue;
            SCOPED_TRACE(shape("gemv", m, n) + " trans = " + std::string(op_name(op)) +
                         " incx = " + std::to_string(inc.x) + " incy = " + std::to_string(inc.y));
            const int64_t lda = std::max<int64_t>(1, m) + 3;
            const int64_t lenx = op == Op::kNoTrans ? n : m, leny = op == Op::kNoTrans ? m : n;
            const auto a = ref::vec<T>(lda * std::max<int64_t>(n, 1), g, true);
            const auto x = ref::vec<T>(ref::span(lenx, inc.x), g, true);
            // y behind a few leading elements: the kernels peel a head up to alignment.
            const int64_t lead = (m + 2 * n) % 5;
            auto y = ref::vec<T>(lead + ref::span(leny, inc.y), g, true);
            if (ab.nan_y)
              for (T& v : y) v = nan_value<T>();
            auto want = y;
            ref::gemv(op, m, n, ab.alpha, a.data(), lda, x.data(), inc.x, ab.beta,
                      want.data() + lead, inc.y);
            ASSERT_TRUE(gemv(h, op, m, n, ab.alpha, a.data(), lda, x.data(), inc.x, ab.beta,
                             y.data() + lead, inc.y)
                            .is_ok());
            ASSERT_TRUE(same(y, want));
          }
  });
}

TYPED_TEST(Level2, GerExactOnIntegers) {
  using T = TypeParam;
  Handle h;
  for_each_isa([&](Isa) {
    std::mt19937_64 g(12);
    for (int64_t m : {0, 1, 3, 4, 8, 9, 16, 17, 33, 300})
      for (int64_t n : {0, 1, 2, 5, 70})
        for (IncPair inc : kIncPairs)
          for (bool conj : {false, true}) {
            SCOPED_TRACE(shape(conj ? "gerc" : "geru", m, n) + " incx = " + std::to_string(inc.x) +
                         " incy = " + std::to_string(inc.y));
            const int64_t lda = std::max<int64_t>(1, m) + 2;
            const auto x = ref::vec<T>(ref::span(m, inc.x), g, true);
            const auto y = ref::vec<T>(ref::span(n, inc.y), g, true);
            auto a = ref::vec<T>(lda * std::max<int64_t>(n, 1), g, true);
            const T alpha = alpha_betas<T>()[0].alpha;
            auto want = a;
            ref::ger(m, n, alpha, x.data(), inc.x, y.data(), inc.y, want.data(), lda, conj);
            const Status s =
                conj ? gerc(h, m, n, alpha, x.data(), inc.x, y.data(), inc.y, a.data(), lda)
                     : ger(h, m, n, alpha, x.data(), inc.x, y.data(), inc.y, a.data(), lda);
            ASSERT_TRUE(s.is_ok());
            ASSERT_TRUE(same(a, want));
          }
  });
}

// An n x n triangular matrix with lda = n + 2: integers (or uniform values) in the triangle,
// NaN everywhere else, and NaN on the diagonal when it is implicitly unit, so reading any
// element the routine must not read shows up in the result. `diag_pm1`: a diagonal of +-1.
template <typename T>
std::vector<T> triangle(int64_t n, int64_t lda, Uplo uplo, Diag diag, std::mt19937_64& g,
                        bool integers, bool diag_pm1) {
  std::vector<T> a(lda * std::max<int64_t>(n, 1), nan_value<T>());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      T& v = a[i + j * lda];
      if (i == j) {
        if (diag == Diag::kUnit) continue;
        v = diag_pm1 ? T(g() % 2 ? 1 : -1) : T(real_t<T>(2)) + ref::uniform<T>(g);
      } else if (uplo == Uplo::kUpper ? i < j : i > j) {
        v = integers ? ref::small_int<T>(g) : ref::uniform<T>(g);
        if (!integers) v = v / real_t<T>(std::sqrt(double(n)));
      }
    }
  return a;
}

// Around the block of 128 columns.
const int64_t kTriSizes[] = {0, 1, 2, 3, 4, 5, 8, 17, 127, 128, 129, 257};

TYPED_TEST(Level2, TrmvAndTrsvExactOnIntegers) {
  using T = TypeParam;
  Handle h;
  for_each_isa([&](Isa) {
    std::mt19937_64 g(13);
    for (int64_t n : kTriSizes)
      for (Uplo uplo : {Uplo::kUpper, Uplo::kLower})
        for (Op op : {Op::kNoTrans, Op::kTrans, Op::kConjTrans})
          for (Diag diag : {Diag::kNonUnit, Diag::kUnit})
            for (int64_t inc : {1, -2, 3}) {
              if (n > 64 && inc != 1) continue;  // strided packing is the same at every size
              SCOPED_TRACE(shape("trmv/trsv", n, n) + " uplo = " + std::to_string(int(uplo)) +
                           " trans = " + std::string(op_name(op)) + " diag = " +
                           std::to_string(int(diag)) + " incx = " + std::to_string(inc));
              const int64_t lda = n + 2;
              const auto a = triangle<T>(n, lda, uplo, diag, g, true, true);
              const auto x = ref::vec<T>(ref::span(n, inc), g, true);
              // trmv: b = op(A) x, exact.
              auto b = x, want = x;
              ref::trmv(uplo, op, diag, n, a.data(), lda, want.data(), inc);
              ASSERT_TRUE(trmv(h, uplo, op, diag, n, a.data(), lda, b.data(), inc).is_ok());
              ASSERT_TRUE(same(b, want));
              // trsv: with a diagonal of +-1 every step of the solve is an integer, so it
              // must give x back exactly.
              ASSERT_TRUE(trsv(h, uplo, op, diag, n, a.data(), lda, b.data(), inc).is_ok());
              ASSERT_TRUE(same(b, x));
            }
  });
}

TYPED_TEST(Level2, TrsvRandomWithinRounding) {
  using T = TypeParam;
  Handle h;
  for_each_isa([&](Isa) {
    std::mt19937_64 g(14);
    for (int64_t n : {1, 33, 129, 200})
      for (Uplo uplo : {Uplo::kUpper, Uplo::kLower})
        for (Op op : {Op::kNoTrans, Op::kTrans, Op::kConjTrans}) {
          SCOPED_TRACE(shape("trsv", n, n) + " uplo = " + std::to_string(int(uplo)) +
                       " trans = " + std::string(op_name(op)));
          const auto a = triangle<T>(n, n, uplo, Diag::kNonUnit, g, false, false);
          const auto b = ref::vec<T>(n, g, false);
          auto want = b, got = b;
          ref::trsv(uplo, op, Diag::kNonUnit, n, a.data(), n, want.data(), 1);
          ASSERT_TRUE(trsv(h, uplo, op, Diag::kNonUnit, n, a.data(), n, got.data(), 1).is_ok());
          double scale = 0;
          for (const T& v : want) scale = std::max<double>(scale, std::abs(v));
          for (int64_t i = 0; i < n; ++i)
            ASSERT_LE(std::abs(got[i] - want[i]), 16 * std::sqrt(double(n)) * eps<T>() * scale)
                << i;
        }
  });
}

// A symmetric (or Hermitian) matrix stored in one triangle; NaN in the other, and NaN in the
// imaginary part of the diagonal for hemv, which must not be read.
template <typename T>
std::vector<T> sym_matrix(int64_t n, int64_t lda, Uplo uplo, bool herm, std::mt19937_64& g,
                          bool integers) {
  std::vector<T> a(lda * std::max<int64_t>(n, 1), nan_value<T>());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      if (i == j || (uplo == Uplo::kUpper ? i < j : i > j)) {
        T v = integers ? ref::small_int<T>(g) : ref::uniform<T>(g);
        if constexpr (is_complex_v<T>)
          if (herm && i == j) v = T(v.real(), std::numeric_limits<real_t<T>>::quiet_NaN());
        a[i + j * lda] = v;
      }
  return a;
}

TYPED_TEST(Level2, SymvAndHemvExactOnIntegers) {
  using T = TypeParam;
  Handle h;
  for_each_level<T>([&](Isa) {
    std::mt19937_64 g(15);
    // Around the column groups (4) and the parts symv splits columns into (128 columns each).
    for (int64_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 17, 127, 128, 129, 257, 300})
      for (Uplo uplo : {Uplo::kUpper, Uplo::kLower})
        for (bool herm : {false, true}) {
          if (herm && !is_complex_v<T>) continue;
          for (IncPair inc : kIncPairs)
            for (const AlphaBeta<T>& ab : alpha_betas<T>()) {
              // Every alpha/beta with unit increments, the general pair with the others;
              // large sizes once per uplo.
              if ((inc.x != 1 || n > 64) && ab.beta != alpha_betas<T>()[0].beta) continue;
              if (n > 64 && inc.x != 1) continue;
              SCOPED_TRACE(shape(herm ? "hemv" : "symv", n, n) +
                           " uplo = " + std::to_string(int(uplo)) +
                           " incx = " + std::to_string(inc.x) + " incy = " + std::to_string(inc.y));
              const int64_t lda = n + 1;
              const auto a = sym_matrix<T>(n, lda, uplo, herm, g, true);
              const auto x = ref::vec<T>(ref::span(n, inc.x), g, true);
              auto y = ref::vec<T>(ref::span(n, inc.y), g, true);
              if (ab.nan_y)
                for (T& v : y) v = nan_value<T>();
              auto want = y;
              ref::symv(uplo, n, ab.alpha, a.data(), lda, x.data(), inc.x, ab.beta, want.data(),
                        inc.y, herm);
              Status s;
              if constexpr (is_complex_v<T>)
                s = herm ? hemv(h, uplo, n, ab.alpha, a.data(), lda, x.data(), inc.x, ab.beta,
                                y.data(), inc.y)
                         : symv(h, uplo, n, ab.alpha, a.data(), lda, x.data(), inc.x, ab.beta,
                                y.data(), inc.y);
              else
                s = symv(h, uplo, n, ab.alpha, a.data(), lda, x.data(), inc.x, ab.beta, y.data(),
                         inc.y);
              ASSERT_TRUE(s.is_ok());
              ASSERT_TRUE(same(y, want));
            }
        }
  });
}

TYPED_TEST(Level2, RandomDataWithinRounding) {
  using T = TypeParam;
  Handle h;
  for_each_isa([&](Isa) {
    std::mt19937_64 g(16);
    const int64_t m = 301, n = 203;
    const auto a = ref::vec<T>(m * n, g, false);
    const auto x = ref::vec<T>(std::max(m, n), g, false);
    for (Op op : {Op::kNoTrans, Op::kTrans, Op::kConjTrans}) {
      const int64_t len = op == Op::kNoTrans ? m : n, k = op == Op::kNoTrans ? n : m;
      const auto y0 = ref::vec<T>(len, g, false);
      auto want = y0, got = y0;
      const T alpha = T(real_t<T>(0.7)), beta = T(real_t<T>(-0.4));
      ref::gemv(op, m, n, alpha, a.data(), m, x.data(), 1, beta, want.data(), 1);
      ASSERT_TRUE(gemv(h, op, m, n, alpha, a.data(), m, x.data(), 1, beta, got.data(), 1).is_ok());
      for (int64_t i = 0; i < len; ++i)
        ASSERT_LE(std::abs(got[i] - want[i]), 4 * std::sqrt(double(k)) * eps<T>() * k) << i;
    }
    const auto s = sym_matrix<T>(n, n, Uplo::kLower, false, g, false);
    const auto y0 = ref::vec<T>(n, g, false);
    auto want = y0, got = y0;
    ref::symv(Uplo::kLower, n, T(1), s.data(), n, x.data(), 1, T(1), want.data(), 1, false);
    ASSERT_TRUE(
        symv(h, Uplo::kLower, n, T(1), s.data(), n, x.data(), 1, T(1), got.data(), 1).is_ok());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_LE(std::abs(got[i] - want[i]), 4 * std::sqrt(double(n)) * eps<T>() * n) << i;
  });
}

TYPED_TEST(Level2, SameBitsForAnyThreadCount) {
  using T = TypeParam;
  set_num_threads(4);
  std::mt19937_64 g(17);
  // Large enough for several row chunks, column groups, symv parts and trsv blocks.
  const int64_t m = 515, n = 389, lda = 521;
  const auto a = ref::vec<T>(lda * std::max(m, n), g, false);
  const auto x = ref::vec<T>(2 * std::max(m, n), g, false);
  const auto y0 = ref::vec<T>(2 * std::max(m, n), g, false);
  const auto tri = triangle<T>(n, lda, Uplo::kLower, Diag::kNonUnit, g, false, false);
  const T alpha = T(real_t<T>(0.7)), beta = T(real_t<T>(-0.4));
  auto run = [&](int threads) {
    Handle h;
    EXPECT_TRUE(h.set_num_threads(threads).is_ok());
    std::vector<std::vector<T>> out;
    for (Op op : {Op::kNoTrans, Op::kConjTrans}) {
      auto y = y0;
      EXPECT_TRUE(gemv(h, op, m, n, alpha, a.data(), lda, x.data(), 1, beta, y.data(), -2).is_ok());
      out.push_back(y);
      auto t = x;
      EXPECT_TRUE(
          trmv(h, Uplo::kLower, op, Diag::kNonUnit, n, tri.data(), lda, t.data(), 1).is_ok());
      out.push_back(t);
      t = x;
      EXPECT_TRUE(
          trsv(h, Uplo::kLower, op, Diag::kNonUnit, n, tri.data(), lda, t.data(), 2).is_ok());
      out.push_back(t);
    }
    auto b = a;
    EXPECT_TRUE(gerc(h, m, n, alpha, x.data(), 1, y0.data(), 1, b.data(), lda).is_ok());
    out.push_back(b);
    for (Uplo uplo : {Uplo::kUpper, Uplo::kLower}) {
      auto y = y0;
      EXPECT_TRUE(symv(h, uplo, n, alpha, a.data(), lda, x.data(), 1, beta, y.data(), 1).is_ok());
      out.push_back(y);
    }
    return out;
  };
  for_each_isa([&](Isa) {
    const auto one = run(1);
    for (int threads : {2, 3, 4}) {
      SCOPED_TRACE("threads = " + std::to_string(threads));
      const auto o = run(threads);
      ASSERT_EQ(o.size(), one.size());
      for (std::size_t i = 0; i < o.size(); ++i) EXPECT_TRUE(same(o[i], one[i])) << "output " << i;
    }
  });
  set_num_threads(0);
}

TEST(Level2Args, InvalidArgumentsNameTheParameterAndWriteNothing) {
  Handle h;
  std::vector<double> a(64, 1.0), x(8, 1.0), y(8, 2.0);
  const std::vector<double> a0 = a, x0 = x, y0 = y;
  auto expect_invalid = [&](Status s, const char* what) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
    EXPECT_EQ(a, a0);
    EXPECT_EQ(x, x0);
    EXPECT_EQ(y, y0);
  };
  const Op bad_op = static_cast<Op>(7);
  expect_invalid(gemv(h, bad_op, 3, 3, 1.0, a.data(), 3, x.data(), 1, 0.0, y.data(), 1), "trans");
  expect_invalid(gemv(h, Op::kNoTrans, -1, 3, 1.0, a.data(), 3, x.data(), 1, 0.0, y.data(), 1),
                 "dgemv: m = -1");
  expect_invalid(gemv(h, Op::kTrans, 4, 3, 1.0, a.data(), 3, x.data(), 1, 0.0, y.data(), 1),
                 "lda = 3 must be >= max(1, m) = 4");
  expect_invalid(gemv(h, Op::kNoTrans, 3, 3, 1.0, a.data(), 3, x.data(), 0, 0.0, y.data(), 1),
                 "incx must not be 0");
  expect_invalid(
      gemv<double>(h, Op::kNoTrans, 3, 3, 1.0, nullptr, 3, x.data(), 1, 0.0, y.data(), 1),
      "a is null");
  expect_invalid(ger(h, 3, 3, 1.0, x.data(), 1, y.data(), 1, a.data(), 2), "lda = 2");
  expect_invalid(gerc(h, 3, -3, 1.0, x.data(), 1, y.data(), 1, a.data(), 3), "n = -3");
  expect_invalid(
      trmv(h, static_cast<Uplo>(2), Op::kNoTrans, Diag::kUnit, 3, a.data(), 3, x.data(), 1),
      "uplo");
  expect_invalid(
      trsv(h, Uplo::kLower, Op::kNoTrans, static_cast<Diag>(5), 3, a.data(), 3, x.data(), 1),
      "diag");
  expect_invalid(trsv(h, Uplo::kLower, Op::kNoTrans, Diag::kUnit, 3, a.data(), 3, x.data(), 0),
                 "incx must not be 0");
  expect_invalid(symv(h, Uplo::kUpper, 4, 1.0, a.data(), 3, x.data(), 1, 0.0, y.data(), 1),
                 "lda = 3 must be >= max(1, n) = 4");
  std::vector<cdouble> ca(16), cx(4), cy(4, cdouble(5, 5));
  EXPECT_EQ(
      hemv(h, Uplo::kUpper, 4, cdouble(1), ca.data(), 4, cx.data(), 1, cdouble(0), cy.data(), 0)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(cy, std::vector<cdouble>(4, cdouble(5, 5)));
  // Empty problems need no pointers.
  EXPECT_TRUE(
      gemv<double>(h, Op::kNoTrans, 0, 5, 1.0, nullptr, 1, nullptr, 1, 0.0, nullptr, 1).is_ok());
  EXPECT_TRUE(
      trsv<double>(h, Uplo::kLower, Op::kTrans, Diag::kUnit, 0, nullptr, 1, nullptr, 1).is_ok());
}

TEST(Level2Log, ReplayLines) {
  const std::uint32_t saved = log::enabled_mask();
  Handle h;
  ASSERT_TRUE(h.set_num_threads(1).is_ok());
  std::vector<cfloat> a(20), x(4), y(8);
  log::set_enabled_mask(static_cast<std::uint32_t>(log::Category::kBench));
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(
      gemv(h, Op::kConjTrans, 4, 3, cfloat(1), a.data(), 5, x.data(), 1, cfloat(0), y.data(), -2)
          .is_ok());
  ASSERT_TRUE(trsv(h, Uplo::kUpper, Op::kTrans, Diag::kUnit, 4, a.data(), 4, x.data(), 1).is_ok());
  const std::string out = ::testing::internal::GetCapturedStderr();
  log::set_enabled_mask(saved);
  EXPECT_NE(out.find("tessera bench blas gemv --dtype c64 --n 3 --m 4 --trans c --incx 1 "
                     "--incy -2 --lda 5 --threads 1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("tessera bench blas trsv --dtype c64 --n 4 --trans t --uplo u --diag u "
                     "--incx 1 --lda 4 --threads 1\n"),
            std::string::npos)
      << out;
}

// OpenBLAS, opened at run time where installed, as a second oracle on random data.
TEST(Level2OpenBlas, AgreesOnRandomData) {
  void* lib =
      dlopen("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) GTEST_SKIP() << "OpenBLAS not installed";
  using Gemv = void (*)(int, int, int, int, double, const double*, int, const double*, int, double,
                        double*, int);
  using Symv =
      void (*)(int, int, int, double, const double*, int, const double*, int, double, double*, int);
  using Trsv = void (*)(int, int, int, int, int, const float*, int, float*, int);
  using Nrm2 = double (*)(int, const double*, int);
  auto gemv_ob = reinterpret_cast<Gemv>(dlsym(lib, "cblas_dgemv"));
  auto symv_ob = reinterpret_cast<Symv>(dlsym(lib, "cblas_dsymv"));
  auto trsv_ob = reinterpret_cast<Trsv>(dlsym(lib, "cblas_strsv"));
  auto nrm2_ob = reinterpret_cast<Nrm2>(dlsym(lib, "cblas_dnrm2"));
  ASSERT_TRUE(gemv_ob && symv_ob && trsv_ob && nrm2_ob);
  constexpr int kColMajor = 102, kNoTrans = 111, kTrans = 112, kUpper = 121, kNonUnit = 131;
  Handle h;
  std::mt19937_64 g(18);
  const int m = 257, n = 190;
  const auto a = ref::vec<double>(m * n, g, false);
  const auto x = ref::vec<double>(m, g, false);
  const auto y0 = ref::vec<double>(2 * m, g, false);
  auto ours = y0, theirs = y0;
  ASSERT_TRUE(
      gemv(h, Op::kTrans, m, n, 0.5, a.data(), m, x.data(), -1, 2.0, ours.data(), 1).is_ok());
  gemv_ob(kColMajor, kTrans, m, n, 0.5, a.data(), m, x.data(), -1, 2.0, theirs.data(), 1);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(ours[i], theirs[i], 1e-12) << i;
  ours = theirs = y0;
  ASSERT_TRUE(symv(h, Uplo::kUpper, n, 0.5, a.data(), m, x.data(), 1, 0.0, ours.data(), 2).is_ok());
  symv_ob(kColMajor, kUpper, n, 0.5, a.data(), m, x.data(), 1, 0.0, theirs.data(), 2);
  for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_NEAR(ours[i], theirs[i], 1e-12) << i;
  const auto t = triangle<float>(n, n, Uplo::kUpper, Diag::kNonUnit, g, false, false);
  std::vector<float> b(n, 1.0f), c(n, 1.0f);
  ASSERT_TRUE(
      trsv(h, Uplo::kUpper, Op::kNoTrans, Diag::kNonUnit, n, t.data(), n, b.data(), 1).is_ok());
  trsv_ob(kColMajor, kUpper, kNoTrans, kNonUnit, n, t.data(), n, c.data(), 1);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(b[i], c[i], 1e-5) << i;
  const std::vector<double> huge(100, 1e300);
  double r = 0;
  ASSERT_TRUE(nrm2(h, 100, huge.data(), 1, &r).is_ok());
  EXPECT_NEAR(r / nrm2_ob(100, huge.data(), 1), 1.0, 1e-14);
  dlclose(lib);
}

}  // namespace
}  // namespace tessera::blas
