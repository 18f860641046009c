// trsm, trmm, syrk, trtri (plain and batched) against the references in ref_level3.hpp:
// every side/uplo/trans/diag combination, sizes 0, 1 and around the recursion leaves
// (kTriLeaf = 32, kSyrkLeaf = 64 in src/blas/level3/level3.hpp), lda larger than needed,
// alpha/beta special values, NaN wherever the routine must not read or must overwrite,
// singular inputs, argument errors, bitwise equality across thread counts, every ISA level.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/blas.hpp>
#include <tessera/core/log.hpp>
#include <tessera/core/thread_pool.hpp>

#include "blas/ref_level3.hpp"
#include "test_util.hpp"

namespace tessera::blas {
namespace {

using ref::Dense;
using ref::wide_t;

constexpr Side kSides[] = {Side::kLeft, Side::kRight};
constexpr Uplo kUplos[] = {Uplo::kUpper, Uplo::kLower};
constexpr Op kOps[] = {Op::kNoTrans, Op::kTrans, Op::kConjTrans};
constexpr Diag kDiags[] = {Diag::kNonUnit, Diag::kUnit};

template <typename T>
T nan_value() {
  const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
  if constexpr (is_complex_v<T>)
    return T(q, q);
  else
    return q;
}
// Written where the routine must not write; compared bitwise afterwards.
template <typename T>
T sentinel() {
  return T(777);
}
// A scalar other than 0 and 1 (complex for complex types).
template <typename T>
T odd_scalar() {
  if constexpr (is_complex_v<T>)
    return T(real_t<T>(0.75), real_t<T>(-0.5));
  else
    return T(-1.25);
}

template <typename T>
const char* dtype() {
  if constexpr (std::is_same_v<T, float>)
    return "f32";
  else if constexpr (std::is_same_v<T, double>)
    return "f64";
  else if constexpr (std::is_same_v<T, cfloat>)
    return "c64";
  else
    return "c128";
}
char letter(Side s) {
  return s == Side::kLeft ? 'l' : 'r';
}
char letter(Uplo u) {
  return u == Uplo::kUpper ? 'u' : 'l';
}
char letter(Diag d) {
  return d == Diag::kUnit ? 'u' : 'n';
}

template <typename T>
std::string scalar_text(T v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Element-wise |got - want| <= tol * bound (+ a floor for exact zeros); NaN fails.
struct Checker {
  long double tol;
  int failures = 0;
  template <typename W>
  void expect(W got, W want, long double bound, std::int64_t i, std::int64_t j) {
    const long double err = ref::abs1(got - want);
    if (err <= tol * bound + std::numeric_limits<long double>::min()) return;
    if (++failures <= 3)
      ADD_FAILURE() << "element (" << i << ", " << j << "): got " << got << " want " << want
                    << " |err| " << err << " > " << tol * bound;
  }
};

// Elements [rows, ld) of every column, or everything `outside(i, j)` says, are bitwise unchanged.
template <typename T, typename Outside>
void expect_untouched(const std::vector<T>& before, const std::vector<T>& after, std::int64_t ld,
                      std::int64_t cols, Outside outside) {
  int failures = 0;
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < ld; ++i) {
      if (!outside(i, j)) continue;
      const std::size_t at = static_cast<std::size_t>(i + j * ld);
      if (std::memcmp(&before[at], &after[at], sizeof(T)) != 0 && ++failures <= 3)
        ADD_FAILURE() << "element (" << i << ", " << j << ") outside the output was written";
    }
}

enum class Routine { kTrsm, kTrmm };

struct TrxmCase {
  Routine routine;
  Side side;
  Uplo uplo;
  Op trans;
  Diag diag;
  std::int64_t m, n, lda, ldb;
};

template <typename T>
std::string repro(const TrxmCase& c, T alpha) {
  std::ostringstream s;
  s << "tessera bench blas " << (c.routine == Routine::kTrsm ? "trsm" : "trmm") << " --dtype "
    << dtype<T>() << " --m " << c.m << " --n " << c.n << " --side " << letter(c.side) << " --uplo "
    << letter(c.uplo) << " --trans " << op_name(c.trans) << " --diag " << letter(c.diag)
    << " --lda " << c.lda << " --ldb " << c.ldb << " (alpha " << scalar_text(alpha) << ")";
  return s.str();
}

template <typename T>
void run_trxm(Handle& h, const TrxmCase& c, T alpha, std::uint64_t seed) {
  SCOPED_TRACE(repro(c, alpha));
  ref::Rng g(seed);
  const bool left = c.side == Side::kLeft;
  const std::int64_t nt = left ? c.m : c.n;
  const std::vector<T> a = ref::random_triangular<T>(nt, c.lda, c.uplo, c.diag, nan_value<T>(), g);
  std::vector<T> b = ref::random_matrix<T>(c.m, c.n, c.ldb, sentinel<T>(), g);
  if (alpha == T{} && c.m > 0 && c.n > 0) b[0] = nan_value<T>();  // alpha = 0 must clear it
  const std::vector<T> b0 = b;
  const T* a_ptr = alpha == T{} ? nullptr : a.data();  // A is not read when alpha == 0
  const Status s = c.routine == Routine::kTrsm ? trsm(h, c.side, c.uplo, c.trans, c.diag, c.m, c.n,
                                                      alpha, a_ptr, c.lda, b.data(), c.ldb)
                                               : trmm(h, c.side, c.uplo, c.trans, c.diag, c.m, c.n,
                                                      alpha, a_ptr, c.lda, b.data(), c.ldb);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  expect_untouched(b0, b, c.ldb, c.n, [&](std::int64_t i, std::int64_t) { return i >= c.m; });
  if (c.m == 0 || c.n == 0) return;
  using W = wide_t<T>;
  const Dense<W> x = ref::load(b.data(), c.ldb, c.m, c.n);
  if (alpha == T{}) {
    for (W v : x.v) ASSERT_EQ(v, W(0));
    return;
  }
  const Dense<W> op_a = ref::tri_op(a.data(), c.lda, c.uplo, c.trans, c.diag, nt);
  const Dense<W> b_in = ref::load(b0.data(), c.ldb, c.m, c.n);
  const auto abs_a = ref::abs_of(op_a);
  const W wa = ref::widen(alpha);
  const long double abs_alpha = ref::abs1(wa);
  if (c.routine == Routine::kTrmm) {
    // X = alpha op(A) B: error <= c k eps |alpha| |op(A)| |B| for any summation order.
    const Dense<W> want = left ? ref::matmul(op_a, b_in) : ref::matmul(b_in, op_a);
    const auto bound =
        left ? ref::matmul(abs_a, ref::abs_of(b_in)) : ref::matmul(ref::abs_of(b_in), abs_a);
    Checker check{4 * (nt + 2) * ref::eps<T>()};
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.m; ++i)
        check.expect(x(i, j), wa * want(i, j), abs_alpha * bound(i, j), i, j);
    return;
  }
  // trsm: the residual op(A) X - alpha B, bounded by c n eps (|op(A)| |X| + |alpha B|).
  const Dense<W> ax = left ? ref::matmul(op_a, x) : ref::matmul(x, op_a);
  const auto bound = left ? ref::matmul(abs_a, ref::abs_of(x)) : ref::matmul(ref::abs_of(x), abs_a);
  Checker check{8 * (nt + 2) * ref::eps<T>()};
  for (std::int64_t j = 0; j < c.n; ++j)
    for (std::int64_t i = 0; i < c.m; ++i)
      check.expect(ax(i, j), wa * b_in(i, j), bound(i, j) + abs_alpha * ref::abs1(b_in(i, j)), i,
                   j);
}

// Every side/uplo/trans/diag combination for one (m, n), with alpha = 1 or `alpha` (in turn,
// shifted by the seed so each combination sees both across shapes); lda/ldb padded if `pad`.
template <typename T>
void sweep_trxm(Handle& h, Routine r, std::int64_t m, std::int64_t n, T alpha, bool pad,
                std::uint64_t seed) {
  for (Side side : kSides)
    for (Uplo uplo : kUplos)
      for (Op trans : kOps)
        for (Diag diag : kDiags) {
          const std::int64_t nt = side == Side::kLeft ? m : n;
          const std::int64_t lda = std::max<std::int64_t>(1, nt) + (pad ? 3 : 0);
          const std::int64_t ldb = std::max<std::int64_t>(1, m) + (pad ? 2 : 0);
          const T a = alpha == T{} || seed % 3 != 0 ? alpha : T(1);
          run_trxm<T>(h, {r, side, uplo, trans, diag, m, n, lda, ldb}, a, seed++);
        }
}

template <typename T>
class Level3 : public ::testing::Test {};
using Types = ::testing::Types<float, double, cfloat, cdouble>;
TYPED_TEST_SUITE(Level3, Types);

// (m, n) pairs: empty, tiny, and triangles of order 31, 32, 33 (leaf edges), 64, 65 (2x) and
// 130 (three levels of recursion), each on both sides.
constexpr std::int64_t kTrxmShapes[][2] = {{0, 3},  {3, 0},  {1, 1},   {2, 3},  {7, 5},
                                           {31, 4}, {4, 32}, {33, 6},  {5, 33}, {64, 3},
                                           {2, 65}, {65, 9}, {130, 6}, {4, 130}};

template <typename T>
void trxm_sweep(Routine r) {
  Handle h;
  std::uint64_t seed = 1;
  int idx = 0;
  for (const auto& mn : kTrxmShapes) {
    sweep_trxm<T>(h, r, mn[0], mn[1], odd_scalar<T>(), idx++ % 2 == 1, seed);
    seed += 1001;
  }
  sweep_trxm<T>(h, r, 5, 4, T{}, true, 7);  // alpha = 0: B zeroed, A not read
  sweep_trxm<T>(h, r, 40, 3, T{}, false, 8);
}

TYPED_TEST(Level3, TrsmSweep) {
  trxm_sweep<TypeParam>(Routine::kTrsm);
}
TYPED_TEST(Level3, TrmmSweep) {
  trxm_sweep<TypeParam>(Routine::kTrmm);
}

// The gemm updates run on every ISA path.
TYPED_TEST(Level3, TrsmTrmmEveryIsa) {
  using T = TypeParam;
  testing::for_each_isa([](Isa) {
    Handle h;
    for (Routine r : {Routine::kTrsm, Routine::kTrmm}) {
      run_trxm<T>(h, {r, Side::kLeft, Uplo::kLower, Op::kTrans, Diag::kNonUnit, 97, 20, 99, 97},
                  odd_scalar<T>(), 11);
      run_trxm<T>(h, {r, Side::kRight, Uplo::kUpper, Op::kConjTrans, Diag::kUnit, 21, 70, 70, 23},
                  T(1), 12);
    }
  });
}

// ---- syrk ------------------------------------------------------------------------------

struct SyrkCase {
  Uplo uplo;
  Op trans;
  std::int64_t n, k, lda, ldc;
};

// One A, then each (alpha, beta) pair on a fresh copy of one C.
template <typename T>
void run_syrk(Handle& h, const SyrkCase& c, const std::vector<std::pair<T, T>>& scalars,
              std::uint64_t seed) {
  ref::Rng g(seed);
  const bool notrans = c.trans == Op::kNoTrans;
  const std::int64_t rows = notrans ? c.n : c.k, cols = notrans ? c.k : c.n;
  const std::vector<T> a = ref::random_matrix<T>(rows, cols, c.lda, nan_value<T>(), g);
  using W = wide_t<T>;
  Dense<W> op_a = ref::load(a.data(), c.lda, rows, cols);
  if (!notrans) op_a = ref::transpose(op_a);
  const Dense<W> prod = ref::matmul(op_a, ref::transpose(op_a));
  const auto bound = ref::matmul(ref::abs_of(op_a), ref::transpose(ref::abs_of(op_a)));
  const bool upper = c.uplo == Uplo::kUpper;
  auto in_triangle = [&](std::int64_t i, std::int64_t j) {
    return i < c.n && (upper ? i <= j : i >= j);
  };
  const std::vector<T> c_start = ref::random_matrix<T>(c.n, c.n, c.ldc, sentinel<T>(), g);
  for (const auto& [alpha, beta] : scalars) {
    std::ostringstream trace;
    trace << "tessera bench blas syrk --dtype " << dtype<T>() << " --m " << c.n << " --n " << c.n
          << " --k " << c.k << " --uplo " << letter(c.uplo) << " --trans " << op_name(c.trans)
          << " --lda " << c.lda << " --ldc " << c.ldc << " (alpha " << scalar_text(alpha)
          << ", beta " << scalar_text(beta) << ")";
    SCOPED_TRACE(trace.str());
    std::vector<T> cm = c_start;
    if (beta == T{})  // NaN in C must not survive beta = 0
      for (std::int64_t j = 0; j < c.n; ++j)
        for (std::int64_t i = 0; i < c.n; ++i)
          if (in_triangle(i, j)) cm[static_cast<std::size_t>(i + j * c.ldc)] = nan_value<T>();
    const std::vector<T> c0 = cm;
    const Status s = syrk(h, c.uplo, c.trans, c.n, c.k, alpha, alpha == T{} ? nullptr : a.data(),
                          c.lda, beta, cm.data(), c.ldc);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    expect_untouched(c0, cm, c.ldc, c.n,
                     [&](std::int64_t i, std::int64_t j) { return !in_triangle(i, j); });
    const W wa = ref::widen(alpha), wb = ref::widen(beta);
    Checker check{4 * (c.k + 3) * ref::eps<T>()};
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.n; ++i) {
        if (!in_triangle(i, j)) continue;
        const W old = ref::widen(c0[static_cast<std::size_t>(i + j * c.ldc)]);
        const W want = wa * prod(i, j) + (beta == T{} ? W(0) : wb * old);
        const long double scale =
            ref::abs1(wa) * bound(i, j) + (beta == T{} ? 0 : ref::abs1(wb) * ref::abs1(old));
        check.expect(ref::widen(cm[static_cast<std::size_t>(i + j * c.ldc)]), want, scale, i, j);
      }
  }
}

TYPED_TEST(Level3, SyrkSweep) {
  using T = TypeParam;
  Handle h;
  // n around the leaf (63, 64, 65), 2x (128, 129); k from 0 up to larger than n.
  constexpr std::int64_t kShapes[][2] = {{0, 3},  {3, 0},  {1, 1},   {2, 5},   {7, 3}, {63, 4},
                                         {64, 9}, {65, 2}, {128, 3}, {129, 5}, {9, 70}};
  // Every (alpha, beta) of {1, odd, 0} x {0, 1, 0.5} on the small shapes, three on the large.
  const T odd = odd_scalar<T>(), half(real_t<T>(0.5));
  std::vector<std::pair<T, T>> all;
  for (T alpha : {T(1), odd, T{}})
    for (T beta : {T{}, T(1), half}) all.emplace_back(alpha, beta);
  const std::vector<std::pair<T, T>> some = {{odd, T{}}, {T(1), T(1)}, {odd, half}};
  std::uint64_t seed = 1;
  int idx = 0;
  for (const auto& nk : kShapes)
    for (Uplo uplo : kUplos)
      for (Op trans : {Op::kNoTrans, Op::kTrans}) {
        const bool pad = idx++ % 2 == 1;
        const std::int64_t rows = trans == Op::kNoTrans ? nk[0] : nk[1];
        const std::int64_t lda = std::max<std::int64_t>(1, rows) + (pad ? 2 : 0);
        const std::int64_t ldc = std::max<std::int64_t>(1, nk[0]) + (pad ? 0 : 3);
        run_syrk<T>(h, {uplo, trans, nk[0], nk[1], lda, ldc}, nk[0] < 60 ? all : some, seed++);
      }
}

TYPED_TEST(Level3, SyrkEveryIsa) {
  using T = TypeParam;
  testing::for_each_isa([](Isa) {
    Handle h;
    run_syrk<T>(h, {Uplo::kLower, Op::kNoTrans, 150, 33, 151, 152}, {{odd_scalar<T>(), T{}}}, 3);
    run_syrk<T>(h, {Uplo::kUpper, Op::kTrans, 100, 40, 41, 100}, {{T(1), odd_scalar<T>()}}, 4);
  });
}

// For real types trans = c means t (bitwise the same); complex syrk refuses it.
TYPED_TEST(Level3, SyrkConjTrans) {
  using T = TypeParam;
  Handle h;
  ref::Rng g(5);
  const std::int64_t n = 70, k = 9;
  const std::vector<T> a = ref::random_matrix<T>(k, n, k, T{}, g);
  std::vector<T> c1 = ref::random_matrix<T>(n, n, n, T{}, g), c2 = c1;
  const Status s =
      syrk(h, Uplo::kUpper, Op::kConjTrans, n, k, T(2), a.data(), k, T(1), c1.data(), n);
  if constexpr (is_complex_v<T>) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("trans"), std::string::npos) << s.message();
    EXPECT_EQ(c1, c2);
  } else {
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    ASSERT_TRUE(
        syrk(h, Uplo::kUpper, Op::kTrans, n, k, T(2), a.data(), k, T(1), c2.data(), n).is_ok());
    EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(T)), 0);
  }
}

// ---- trtri -----------------------------------------------------------------------------

// Checks that a_inv (as left by trtri) inverts a0: |A * inv(A) - I| <= c n eps |A| |inv(A)|
// in the 1-norm, and that nothing outside the triangle was written.
template <typename T>
void check_inverse(const std::vector<T>& a0, const std::vector<T>& a_inv, Uplo uplo, Diag diag,
                   std::int64_t n, std::int64_t lda) {
  const bool upper = uplo == Uplo::kUpper;
  expect_untouched(a0, a_inv, lda, n, [&](std::int64_t i, std::int64_t j) {
    return i >= n || (upper ? i > j : i < j) || (i == j && diag == Diag::kUnit);
  });
  if (n == 0) return;
  using W = wide_t<T>;
  const Dense<W> t = ref::triangle(ref::load(a0.data(), lda, n, n), uplo, diag);
  const Dense<W> inv = ref::triangle(ref::load(a_inv.data(), lda, n, n), uplo, diag);
  const Dense<W> prod = ref::matmul(t, inv);
  const long double tol = 4 * n * ref::eps<T>() * ref::norm1(t) * ref::norm1(inv);
  Checker check{tol};
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) check.expect(prod(i, j), W(i == j ? 1 : 0), 1, i, j);
}

template <typename T>
void run_trtri(Handle& h, Uplo uplo, Diag diag, std::int64_t n, std::int64_t lda,
               std::uint64_t seed) {
  std::ostringstream trace;
  trace << "tessera bench blas trtri --dtype " << dtype<T>() << " --m " << n << " --n " << n
        << " --uplo " << letter(uplo) << " --diag " << letter(diag) << " --lda " << lda;
  SCOPED_TRACE(trace.str());
  ref::Rng g(seed);
  std::vector<T> a = ref::random_triangular<T>(n, lda, uplo, diag, nan_value<T>(), g);
  const std::vector<T> a0 = a;
  const Status s = trtri(h, uplo, diag, n, a.data(), lda);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  check_inverse(a0, a, uplo, diag, n, lda);
}

TYPED_TEST(Level3, TrtriSweep) {
  using T = TypeParam;
  Handle h;
  std::uint64_t seed = 1;
  int idx = 0;
  for (std::int64_t n : {0, 1, 2, 5, 31, 32, 33, 64, 65, 130})
    for (Uplo uplo : kUplos)
      for (Diag diag : kDiags) {
        const std::int64_t lda = std::max<std::int64_t>(1, n) + (idx++ % 2 == 1 ? 3 : 0);
        run_trtri<T>(h, uplo, diag, n, lda, seed++);
      }
}

TYPED_TEST(Level3, TrtriEveryIsa) {
  using T = TypeParam;
  testing::for_each_isa([](Isa) {
    Handle h;
    run_trtri<T>(h, Uplo::kUpper, Diag::kNonUnit, 150, 151, 21);
    run_trtri<T>(h, Uplo::kLower, Diag::kUnit, 97, 97, 22);
  });
}

TYPED_TEST(Level3, TrtriSingular) {
  using T = TypeParam;
  Handle h;
  ref::Rng g(9);
  const std::int64_t n = 70, lda = 72;
  for (Uplo uplo : kUplos) {
    std::vector<T> a = ref::random_triangular<T>(n, lda, uplo, Diag::kNonUnit, T{}, g);
    a[45 + 45 * lda] = T{};
    a[60 + 60 * lda] = T{};
    const std::vector<T> a0 = a;
    const Status s = trtri(h, uplo, Diag::kNonUnit, n, a.data(), lda);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("diagonal element 45 "), std::string::npos) << s.message();
    EXPECT_EQ(std::memcmp(a.data(), a0.data(), a.size() * sizeof(T)), 0);
    // A unit matrix does not read its diagonal: the zeros do not matter.
    ASSERT_TRUE(trtri(h, uplo, Diag::kUnit, n, a.data(), lda).is_ok());
    check_inverse(a0, a, uplo, Diag::kUnit, n, lda);
  }
}

// Matrices of a batch in one buffer at `stride`, each well-conditioned, padding NaN.
template <typename T>
std::vector<T> random_batch(Uplo uplo, Diag diag, std::int64_t n, std::int64_t lda,
                            std::int64_t stride, std::int64_t batch, ref::Rng& g) {
  std::vector<T> all(static_cast<std::size_t>(std::max<std::int64_t>(1, stride * batch)),
                     nan_value<T>());
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::vector<T> a = ref::random_triangular<T>(n, lda, uplo, diag, nan_value<T>(), g);
    std::copy(a.begin(), a.begin() + lda * n, all.begin() + b * stride);
  }
  return all;
}

template <typename T>
std::vector<T> slice(const std::vector<T>& all, std::int64_t offset, std::int64_t len) {
  return {all.begin() + offset, all.begin() + offset + len};
}

TYPED_TEST(Level3, TrtriBatched) {
  using T = TypeParam;
  Handle h;
  ref::Rng g(31);
  for (Uplo uplo : kUplos)
    for (Diag diag : kDiags)
      for (std::int64_t n : {1, 7, 33, 70}) {
        const std::int64_t lda = n + 1, stride = lda * n + 5, batch = 5;
        SCOPED_TRACE("n = " + std::to_string(n));
        std::vector<T> all = random_batch<T>(uplo, diag, n, lda, stride, batch, g);
        const std::vector<T> all0 = all;
        ASSERT_TRUE(
            trtri_strided_batched(h, uplo, diag, n, all.data(), lda, stride, batch).is_ok());
        // The array-of-pointers form on a copy, matrices in reverse order.
        std::vector<T> copy = all0;
        std::vector<T*> ptrs;
        for (std::int64_t b = batch - 1; b >= 0; --b) ptrs.push_back(copy.data() + b * stride);
        ASSERT_TRUE(trtri_batched(h, uplo, diag, n, ptrs.data(), lda, batch).is_ok());
        EXPECT_EQ(std::memcmp(all.data(), copy.data(), all.size() * sizeof(T)), 0);
        for (std::int64_t b = 0; b < batch; ++b)
          check_inverse(slice(all0, b * stride, lda * n), slice(all, b * stride, lda * n), uplo,
                        diag, n, lda);
        // Gaps between matrices are not touched.
        for (std::int64_t b = 0; b < batch; ++b)
          for (std::int64_t i = lda * n; i < stride; ++i)
            ASSERT_TRUE(std::isnan(std::abs(all[static_cast<std::size_t>(b * stride + i)])));
      }
}

TYPED_TEST(Level3, TrtriBatchedSingular) {
  using T = TypeParam;
  Handle h;
  ref::Rng g(41);
  const std::int64_t n = 40, lda = 40, stride = 1700, batch = 6;
  std::vector<T> all = random_batch<T>(Uplo::kLower, Diag::kNonUnit, n, lda, stride, batch, g);
  all[static_cast<std::size_t>(4 * stride + 39 + 39 * lda)] = T{};  // matrix 4, pivot 39
  all[static_cast<std::size_t>(2 * stride + 7 + 7 * lda)] = T{};    // matrix 2, pivot 7
  const std::vector<T> all0 = all;
  Status s =
      trtri_strided_batched(h, Uplo::kLower, Diag::kNonUnit, n, all.data(), lda, stride, batch);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("matrix 2 "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("diagonal element 7 "), std::string::npos) << s.message();
  EXPECT_EQ(std::memcmp(all.data(), all0.data(), all.size() * sizeof(T)), 0);
  std::vector<T*> ptrs;
  for (std::int64_t b = 0; b < batch; ++b) ptrs.push_back(all.data() + b * stride);
  std::swap(ptrs[2], ptrs[5]);  // matrix 4 now comes first
  s = trtri_batched(h, Uplo::kLower, Diag::kNonUnit, n, ptrs.data(), lda, batch);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("matrix 4 "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("diagonal element 39 "), std::string::npos) << s.message();
  EXPECT_EQ(std::memcmp(all.data(), all0.data(), all.size() * sizeof(T)), 0);
}

// ---- threads, argument errors, bench lines -------------------------------------------

// Runs fn(handle) with 1, 2 and 3 threads (pool of 4) and expects bitwise equal outputs.
template <typename T, typename Fn>
void expect_same_for_thread_counts(const std::vector<T>& input, Fn fn) {
  set_num_threads(4);
  std::vector<std::vector<T>> results;
  for (int threads : {1, 2, 3}) {
    Handle h;
    ASSERT_TRUE(h.set_num_threads(threads).is_ok());
    std::vector<T> data = input;
    fn(h, data.data());
    results.push_back(std::move(data));
  }
  set_num_threads(0);
  for (std::size_t r = 1; r < results.size(); ++r)
    EXPECT_EQ(std::memcmp(results[0].data(), results[r].data(), input.size() * sizeof(T)), 0)
        << "threads = " << r + 1;
}

TYPED_TEST(Level3, SameBitsForAnyThreadCount) {
  using T = TypeParam;
  ref::Rng g(77);
  const std::int64_t m = 64, n = 200;
  const std::vector<T> a = ref::random_triangular<T>(n, n, Uplo::kLower, Diag::kNonUnit, T{}, g);
  const std::vector<T> b = ref::random_matrix<T>(n, n, n, T{}, g);
  const T alpha = odd_scalar<T>();
  auto ok = [](Status s) { ASSERT_TRUE(s.is_ok()) << s.to_string(); };
  // One leaf (order 32) over enough columns / rows that it is split over the threads.
  const std::int64_t wide = 1600;
  const std::vector<T> panel = ref::random_matrix<T>(32, wide, 32, T{}, g);
  expect_same_for_thread_counts(panel, [&](Handle& h, T* x) {
    ok(trsm(h, Side::kLeft, Uplo::kLower, Op::kTrans, Diag::kNonUnit, 32, wide, alpha, a.data(), n,
            x, 32));
  });
  expect_same_for_thread_counts(panel, [&](Handle& h, T* x) {
    ok(trmm(h, Side::kRight, Uplo::kLower, Op::kNoTrans, Diag::kNonUnit, wide, 20, alpha, a.data(),
            n, x, wide));
  });
  // Left with many columns (leaves split over columns), right with many rows.
  expect_same_for_thread_counts(b, [&](Handle& h, T* x) {
    ok(trsm(h, Side::kLeft, Uplo::kLower, Op::kConjTrans, Diag::kNonUnit, m, n, alpha, a.data(), n,
            x, n));
  });
  expect_same_for_thread_counts(b, [&](Handle& h, T* x) {
    ok(trsm(h, Side::kRight, Uplo::kLower, Op::kNoTrans, Diag::kUnit, n, m, alpha, a.data(), n, x,
            n));
  });
  expect_same_for_thread_counts(b, [&](Handle& h, T* x) {
    ok(trmm(h, Side::kRight, Uplo::kLower, Op::kTrans, Diag::kNonUnit, n, m, alpha, a.data(), n, x,
            n));
  });
  expect_same_for_thread_counts(b, [&](Handle& h, T* x) {
    ok(syrk(h, Uplo::kUpper, Op::kNoTrans, n, m, alpha, a.data(), n, T(1), x, n));
  });
  expect_same_for_thread_counts(
      a, [&](Handle& h, T* x) { ok(trtri(h, Uplo::kLower, Diag::kNonUnit, n, x, n)); });
  const std::int64_t bn = 40, batch = 8;
  const std::vector<T> many =
      random_batch<T>(Uplo::kUpper, Diag::kNonUnit, bn, bn, bn * bn, batch, g);
  expect_same_for_thread_counts(many, [&](Handle& h, T* x) {
    ok(trtri_strided_batched(h, Uplo::kUpper, Diag::kNonUnit, bn, x, bn, bn * bn, batch));
  });
}

// Each bad argument: kInvalidArgument naming the parameter, and nothing written.
TYPED_TEST(Level3, InvalidArguments) {
  using T = TypeParam;
  Handle h;
  std::vector<T> a(400, T(1)), b(400, T(3));
  const std::vector<T> a0 = a, b0 = b;
  T* pa = a.data();
  T* pb = b.data();
  const auto bad_side = static_cast<Side>(2);
  const auto bad_uplo = static_cast<Uplo>(-1);
  const auto bad_op = static_cast<Op>(3);
  const auto bad_diag = static_cast<Diag>(5);
  const auto L = Side::kLeft, R = Side::kRight;
  const auto U = Uplo::kUpper;
  const auto N = Op::kNoTrans;
  const auto D = Diag::kNonUnit;
  auto expect_invalid = [&](Status s, const char* name) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << name;
    EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
    EXPECT_EQ(a, a0);
    EXPECT_EQ(b, b0);
  };
  for (auto* fn : {&trsm<T>, &trmm<T>}) {
    expect_invalid(fn(h, bad_side, U, N, D, 4, 4, T(1), pa, 4, pb, 4), "side");
    expect_invalid(fn(h, L, bad_uplo, N, D, 4, 4, T(1), pa, 4, pb, 4), "uplo");
    expect_invalid(fn(h, L, U, bad_op, D, 4, 4, T(1), pa, 4, pb, 4), "transa");
    expect_invalid(fn(h, L, U, N, bad_diag, 4, 4, T(1), pa, 4, pb, 4), "diag");
    expect_invalid(fn(h, L, U, N, D, -1, 4, T(1), pa, 4, pb, 4), "m = -1");
    expect_invalid(fn(h, L, U, N, D, 4, -2, T(1), pa, 4, pb, 4), "n = -2");
    expect_invalid(fn(h, L, U, N, D, 5, 3, T(1), pa, 4, pb, 5), "lda");
    expect_invalid(fn(h, R, U, N, D, 3, 5, T(1), pa, 4, pb, 3), "lda");
    expect_invalid(fn(h, R, U, N, D, 3, 5, T(1), pa, 5, pb, 2), "ldb");
    expect_invalid(fn(h, L, U, N, D, 3, 5, T(1), nullptr, 5, pb, 3), "a is null");
    expect_invalid(fn(h, L, U, N, D, 3, 5, T(0), pa, 5, nullptr, 3), "b is null");
  }
  expect_invalid(syrk(h, bad_uplo, N, 4, 4, T(1), pa, 4, T(0), pb, 4), "uplo");
  expect_invalid(syrk(h, U, bad_op, 4, 4, T(1), pa, 4, T(0), pb, 4), "trans");
  expect_invalid(syrk(h, U, N, -3, 4, T(1), pa, 4, T(0), pb, 4), "n = -3");
  expect_invalid(syrk(h, U, N, 4, -4, T(1), pa, 4, T(0), pb, 4), "k = -4");
  expect_invalid(syrk(h, U, N, 6, 2, T(1), pa, 5, T(0), pb, 6), "lda");
  expect_invalid(syrk(h, U, Op::kTrans, 2, 6, T(1), pa, 5, T(0), pb, 2), "lda");
  expect_invalid(syrk(h, U, N, 6, 2, T(1), pa, 6, T(0), pb, 5), "ldc");
  expect_invalid(syrk<T>(h, U, N, 6, 2, T(1), nullptr, 6, T(0), pb, 6), "a is null");
  expect_invalid(syrk<T>(h, U, N, 6, 0, T(1), pa, 6, T(0), nullptr, 6), "c is null");

  expect_invalid(trtri(h, bad_uplo, D, 4, pa, 4), "uplo");
  expect_invalid(trtri(h, U, bad_diag, 4, pa, 4), "diag");
  expect_invalid(trtri(h, U, D, -1, pa, 4), "n = -1");
  expect_invalid(trtri(h, U, D, 5, pa, 4), "lda");
  expect_invalid(trtri(h, U, D, 5, static_cast<T*>(nullptr), 5), "a is null");
  T* ptrs[3] = {pa, pa + 100, nullptr};
  expect_invalid(trtri_batched(h, U, D, 4, ptrs, 4, 3), "a[2] is null");
  expect_invalid(trtri_batched(h, U, D, 4, ptrs, 4, -1), "batch_count");
  expect_invalid(trtri_batched(h, U, D, 4, ptrs, 3, 2), "lda");
  expect_invalid(trtri_batched(h, U, D, 4, static_cast<T* const*>(nullptr), 4, 2), "a is null");
  expect_invalid(trtri_strided_batched(h, U, D, 4, pa, 4, 15, 2), "stride_a = 15");
  expect_invalid(trtri_strided_batched(h, U, bad_diag, 4, pa, 4, 16, 2), "diag");
  expect_invalid(trtri_strided_batched(h, U, D, 4, pa, 4, 16, -2), "batch_count");
  expect_invalid(trtri_strided_batched(h, U, D, 4, static_cast<T*>(nullptr), 4, 16, 2),
                 "a is null");
  // Not errors: empty problems, nulls where nothing is read, one matrix with any stride.
  EXPECT_TRUE(trsm(h, L, U, N, D, 0, 5, T(1), static_cast<const T*>(nullptr), 1,
                   static_cast<T*>(nullptr), 1)
                  .is_ok());
  EXPECT_TRUE(syrk(h, U, N, 0, 5, T(1), static_cast<const T*>(nullptr), 1, T(0),
                   static_cast<T*>(nullptr), 1)
                  .is_ok());
  EXPECT_TRUE(trtri_batched(h, U, D, 4, static_cast<T* const*>(nullptr), 4, 0).is_ok());
  EXPECT_TRUE(trtri_strided_batched(h, U, Diag::kUnit, 4, pb, 4, 0, 1).is_ok());
}

TEST(Level3Log, BenchLinesReplayEachCall) {
  Handle h;
  ASSERT_TRUE(h.set_num_threads(1).is_ok());
  std::vector<double> a(64, 1.0), b(64, 1.0);
  const std::uint32_t saved = log::enabled_mask();
  log::set_enabled_mask(static_cast<std::uint32_t>(log::Category::kBench));
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(trsm(h, Side::kRight, Uplo::kLower, Op::kTrans, Diag::kUnit, 3, 4, 2.0, a.data(), 5,
                   b.data(), 6)
                  .is_ok());
  EXPECT_TRUE(syrk(h, Uplo::kUpper, Op::kTrans, 3, 2, 1.0, a.data(), 4, 0.0, b.data(), 5).is_ok());
  std::vector<double*> ptrs = {a.data(), a.data() + 16};
  EXPECT_TRUE(trtri_batched(h, Uplo::kLower, Diag::kUnit, 2, ptrs.data(), 3, 2).is_ok());
  std::vector<cfloat> ca(4, cfloat(1)), cb(4, cfloat(1));
  EXPECT_TRUE(trmm(h, Side::kLeft, Uplo::kUpper, Op::kConjTrans, Diag::kNonUnit, 2, 2,
                   cfloat(0.5f, -1.0f), ca.data(), 2, cb.data(), 2)
                  .is_ok());
  EXPECT_TRUE(trtri(h, Uplo::kUpper, Diag::kNonUnit, 2, ca.data(), 2).is_ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  log::set_enabled_mask(saved);
  for (const char* line :
       {"tessera bench blas trsm --dtype f64 --m 3 --n 4 --side r --uplo l --trans t --diag u "
        "--lda 5 --ldb 6 --alpha 2 --threads 1\n",
        "tessera bench blas syrk --dtype f64 --m 3 --n 3 --k 2 --uplo u --trans t --lda 4 "
        "--ldc 5 --alpha 1 --beta 0 --threads 1\n",
        "tessera bench blas trtri_batched --dtype f64 --m 2 --n 2 --uplo l --diag u --lda 3 "
        "--batch 2 --threads 1\n",
        "tessera bench blas trmm --dtype c64 --m 2 --n 2 --side l --uplo u --trans c --diag n "
        "--lda 2 --ldb 2 --alpha 0.5,-1 --threads 1\n",
        "tessera bench blas trtri --dtype c64 --m 2 --n 2 --uplo u --diag n --lda 2 "
        "--threads 1\n"})
    EXPECT_NE(err.find(line), std::string::npos) << "missing: " << line << "in:\n" << err;
}

}  // namespace
}  // namespace tessera::blas
