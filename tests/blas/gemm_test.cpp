// gemm against a plain reference: every type, transpose pair, ISA level, tile/block edge,
// alpha/beta special value; batched variants; low precision; thread-count invariance;
// argument errors; OpenBLAS as an extra oracle where installed.
#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <tuple>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/blas.hpp>
#include <tessera/core/thread_pool.hpp>

#include "../../src/blas/gemm/engine.hpp"
#include "test_util.hpp"

namespace tessera::blas {
namespace {

using testing::for_each_isa;

template <typename T>
using R = real_t<T>;

template <typename T>
const char* letter() {
  if constexpr (std::is_same_v<T, float>) return "s";
  else if constexpr (std::is_same_v<T, double>) return "d";
  else if constexpr (std::is_same_v<T, cfloat>) return "c";
  else return "z";
}

template <typename T>
T rand_val(std::mt19937& g) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  if constexpr (is_complex_v<T>) return T(R<T>(d(g)), R<T>(d(g)));
  else return T(d(g));
}

template <typename T>
std::vector<T> rand_vec(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = rand_val<T>(g);
  return v;
}

template <typename T>
std::complex<double> widen(T v) {
  if constexpr (is_complex_v<T>) return {double(v.real()), double(v.imag())};
  else return {double(v), 0.0};
}

template <typename T>
std::complex<double> op_at(const T* x, Op op, std::int64_t ld, std::int64_t r, std::int64_t c) {
  if (op == Op::kNoTrans) return widen(x[r + c * ld]);
  auto v = widen(x[c + r * ld]);
  return op == Op::kConjTrans ? std::conj(v) : v;
}

// Reference C = alpha*op(A)*op(B) + beta*C in double; also returns an error bound per element.
template <typename T>
void ref_gemm(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
              const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta,
              std::vector<T>& c, std::int64_t ldc, std::vector<double>& bound) {
  const double eps = std::numeric_limits<R<T>>::epsilon();
  bound.assign(c.size(), 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      std::complex<double> acc = 0;
      double mag = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        auto x = op_at(a, ta, lda, i, p) * op_at(b, tb, ldb, p, j);
        acc += x;
        mag += std::abs(x);
      }
      auto& cv = c[i + j * ldc];
      std::complex<double> out = widen(alpha) * acc;
      double cmag = 0;
      if (beta != T(0)) {
        out += widen(beta) * widen(cv);
        cmag = std::abs(widen(beta)) * std::abs(widen(cv));
      }
      bound[i + j * ldc] = 4.0 * (k + 2) * eps * (std::abs(widen(alpha)) * mag + cmag) + 1e-30;
      if constexpr (is_complex_v<T>) cv = T(R<T>(out.real()), R<T>(out.imag()));
      else cv = T(out.real());
    }
}

template <typename T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want,
                  const std::vector<double>& bound, std::int64_t m, std::int64_t n,
                  std::int64_t ldc, const std::string& what) {
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < ldc; ++i) {
      const std::size_t idx = static_cast<std::size_t>(i + j * ldc);
      if (i >= m) {  // padding rows between columns must be untouched
        ASSERT_EQ(widen(got[idx]), widen(want[idx])) << what << " wrote padding at " << i << "," << j;
        continue;
      }
      const double err = std::abs(widen(got[idx]) - widen(want[idx]));
      ASSERT_TRUE(err <= bound[idx]) << what << " at (" << i << "," << j << "): got "
                                     << widen(got[idx]) << " want " << widen(want[idx])
                                     << " err " << err << " bound " << bound[idx];
    }
}

template <typename T>
void check_one(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
               T beta, std::int64_t pad, bool nan_c, unsigned seed) {
  const std::int64_t ar = ta == Op::kNoTrans ? m : k, ac = ta == Op::kNoTrans ? k : m;
  const std::int64_t br = tb == Op::kNoTrans ? k : n, bc = tb == Op::kNoTrans ? n : k;
  const std::int64_t lda = std::max<std::int64_t>(1, ar) + pad;
  const std::int64_t ldb = std::max<std::int64_t>(1, br) + pad;
  const std::int64_t ldc = std::max<std::int64_t>(1, m) + pad;
  auto a = rand_vec<T>(static_cast<std::size_t>(lda * std::max<std::int64_t>(ac, 1)), seed);
  auto b = rand_vec<T>(static_cast<std::size_t>(ldb * std::max<std::int64_t>(bc, 1)), seed + 1);
  auto c = rand_vec<T>(static_cast<std::size_t>(ldc * std::max<std::int64_t>(n, 1)), seed + 2);
  if (nan_c)
    for (auto& x : c) x = T(std::numeric_limits<R<T>>::quiet_NaN());
  auto want = c;
  std::vector<double> bound;
  ref_gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, want, ldc, bound);
  Status s = gemm<T>(h, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  if (nan_c) {  // padding keeps its NaN; compare the matrix only
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = m; i < ldc; ++i) c[i + j * ldc] = want[i + j * ldc] = T(0);
  }
  std::ostringstream what;
  what << letter<T>() << "gemm " << op_name(ta) << op_name(tb) << " m=" << m << " n=" << n
       << " k=" << k << " pad=" << pad;
  expect_close(c, want, bound, m, n, ldc, what.str());
}

// Small blocking so that modest sizes cross MC, KC and NC boundaries (and the packed engine
// runs even where the small-matrix path would take the call).
struct SmallBlocking {
  SmallBlocking() {
    engine::set_small_path_enabled(false);
    engine::Blocking b;
    b.mc = 64;
    b.kc = 24;
    b.nc = 48;
    engine::set_blocking_override(&b);
  }
  ~SmallBlocking() {
    engine::set_blocking_override(nullptr);
    engine::set_small_path_enabled(true);
  }
};

template <typename T>
void sweep(bool small_blocking) {
  Handle h;
  const Op ops[] = {Op::kNoTrans, Op::kTrans, Op::kConjTrans};
  // Tile edges of every kernel (MR 32/16/8/4, NR 12/6/4) and block edges of SmallBlocking.
  const std::int64_t sizes[] = {1, 7, 12, 13, 33, 65};
  const std::int64_t ks[] = {1, 23, 25, 49};
  unsigned seed = 1;
  for_each_isa([&](Isa) {
    std::unique_ptr<SmallBlocking> sb;
    if (small_blocking) sb = std::make_unique<SmallBlocking>();
    for (Op ta : ops)
      for (Op tb : ops) {
        if (!is_complex_v<T> && (ta == Op::kConjTrans || tb == Op::kConjTrans)) continue;
        for (std::int64_t m : sizes)
          for (std::int64_t n : sizes) {
            std::int64_t k = ks[(m + n) % 4];
            check_one<T>(h, ta, tb, m, n, k, T(R<T>(1.5)), T(R<T>(0.5)), (m + n) % 3, false,
                         seed++);
          }
      }
  });
}

TEST(Gemm, SweepF32) { sweep<float>(false); }
TEST(Gemm, SweepF64) { sweep<double>(false); }
TEST(Gemm, SweepC64) { sweep<cfloat>(false); }
TEST(Gemm, SweepC128) { sweep<cdouble>(false); }
TEST(Gemm, BlockEdgesF32) { sweep<float>(true); }
TEST(Gemm, BlockEdgesF64) { sweep<double>(true); }
TEST(Gemm, BlockEdgesC128) { sweep<cdouble>(true); }

template <typename T>
void special_scalars() {
  Handle h;
  for_each_isa([&](Isa) {
    const T scalars[][2] = {{T(1), T(0)}, {T(0), T(R<T>(2))}, {T(0), T(0)}, {T(1), T(1)},
                            {T(R<T>(-2)), T(R<T>(0.25))}};
    for (auto& ab : scalars) {
      check_one<T>(h, Op::kNoTrans, Op::kTrans, 37, 29, 31, ab[0], ab[1], 2, false, 7);
      if (ab[1] == T(0))  // beta = 0 never reads C: NaN there must not show
        check_one<T>(h, Op::kTrans, Op::kNoTrans, 37, 29, 31, ab[0], ab[1], 1, true, 8);
    }
    if constexpr (is_complex_v<T>)
      check_one<T>(h, Op::kConjTrans, Op::kNoTrans, 35, 26, 19, T(R<T>(0.5), R<T>(-1)),
                   T(R<T>(0.25), R<T>(2)), 1, false, 9);
  });
}

TEST(Gemm, SpecialScalarsF32) { special_scalars<float>(); }
TEST(Gemm, SpecialScalarsF64) { special_scalars<double>(); }
TEST(Gemm, SpecialScalarsC64) { special_scalars<cfloat>(); }
TEST(Gemm, SpecialScalarsC128) { special_scalars<cdouble>(); }

TEST(Gemm, ZeroSizesTouchNothing) {
  Handle h;
  std::vector<float> c(16, 3.0f);
  for (auto [m, n, k] : {std::tuple{0, 4, 4}, std::tuple{4, 0, 4}}) {
    ASSERT_TRUE(gemm<float>(h, Op::kNoTrans, Op::kNoTrans, m, n, k, 1.0f, nullptr, 4, nullptr, 4,
                            0.0f, c.data(), 4).is_ok());
    for (float v : c) EXPECT_EQ(v, 3.0f);
  }
  // k = 0 scales C by beta; null A and B are fine then.
  ASSERT_TRUE(gemm<float>(h, Op::kNoTrans, Op::kNoTrans, 4, 4, 0, 1.0f, nullptr, 4, nullptr, 1,
                          2.0f, c.data(), 4).is_ok());
  for (float v : c) EXPECT_EQ(v, 6.0f);
}

TEST(Gemm, LargeAcrossDefaultBlocks) {
  Handle h;
  for_each_isa([&](Isa) {
    check_one<float>(h, Op::kNoTrans, Op::kNoTrans, 300, 530, 700, 1.0f, 0.0f, 3, false, 11);
    check_one<double>(h, Op::kTrans, Op::kTrans, 130, 200, 400, -1.0, 1.0, 0, false, 12);
  });
}

// Results are bitwise identical for any thread count.
template <typename T>
void thread_invariance(std::int64_t m, std::int64_t n, std::int64_t k) {
  auto a = rand_vec<T>(static_cast<std::size_t>(m * k), 21);
  auto b = rand_vec<T>(static_cast<std::size_t>(k * n), 22);
  std::vector<std::vector<T>> results;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Handle h;
    std::vector<T> c(static_cast<std::size_t>(m * n), T(1));
    ASSERT_TRUE(gemm<T>(h, Op::kNoTrans, Op::kTrans, m, n, k, T(1), a.data(), m, b.data(), n,
                        T(R<T>(0.5)), c.data(), m).is_ok());
    results.push_back(std::move(c));
  }
  set_num_threads(default_num_threads());
  for (std::size_t i = 1; i < results.size(); ++i)
    ASSERT_EQ(0, std::memcmp(results[0].data(), results[i].data(), results[0].size() * sizeof(T)))
        << "thread count changed the result";
}

TEST(Gemm, BitwiseIdenticalForAnyThreadCount) {
  thread_invariance<float>(517, 389, 700);  // splits M
  thread_invariance<float>(20, 1500, 300);  // small M: splits N
  thread_invariance<cdouble>(150, 130, 90);
}

TEST(Gemm, InvalidArgumentsWriteNothing) {
  Handle h;
  std::vector<float> a(64, 1), b(64, 1), c(64, 5);
  auto call = [&](Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                  std::int64_t ldb, std::int64_t ldc, const float* pa = nullptr) {
    return gemm<float>(h, ta, tb, m, n, k, 1.0f, pa ? pa : a.data(), lda, b.data(), ldb, 0.0f,
                       c.data(), ldc);
  };
  struct Case {
    Status s;
    const char* needle;
  } cases[] = {
      {call(Op::kNoTrans, Op::kNoTrans, -1, 2, 2, 2, 2, 2), "m = -1"},
      {call(Op::kNoTrans, Op::kNoTrans, 2, -2, 2, 2, 2, 2), "n = -2"},
      {call(Op::kNoTrans, Op::kNoTrans, 2, 2, -3, 2, 2, 2), "k = -3"},
      {call(Op::kNoTrans, Op::kNoTrans, 4, 2, 2, 3, 2, 4), "lda = 3"},
      {call(Op::kTrans, Op::kNoTrans, 4, 2, 5, 4, 5, 4), "lda = 4"},
      {call(Op::kNoTrans, Op::kTrans, 2, 4, 2, 2, 3, 2), "ldb = 3"},
      {call(Op::kNoTrans, Op::kNoTrans, 4, 2, 2, 4, 2, 0), "ldc = 0"},
      {call(static_cast<Op>(7), Op::kNoTrans, 2, 2, 2, 2, 2, 2), "transa = 7"},
      {gemm<float>(h, Op::kNoTrans, Op::kNoTrans, 2, 2, 2, 1.0f, nullptr, 2, b.data(), 2, 0.0f,
                   c.data(), 2), "a is null"},
  };
  for (auto& cs : cases) {
    EXPECT_EQ(cs.s.code(), StatusCode::kInvalidArgument) << cs.needle;
    EXPECT_NE(cs.s.message().find(cs.needle), std::string::npos) << cs.s.message();
    EXPECT_NE(cs.s.message().find("sgemm"), std::string::npos) << cs.s.message();
  }
  for (float v : c) EXPECT_EQ(v, 5.0f);
}

template <typename T>
void batched() {
  Handle h;
  const std::int64_t m = 19, n = 14, k = 23, batch = 5;
  const std::int64_t sa = m * k + 3, sb = k * n + 1, sc = m * n + 2;
  auto a = rand_vec<T>(static_cast<std::size_t>(sa * batch), 31);
  auto b = rand_vec<T>(static_cast<std::size_t>(sb * batch), 32);
  auto c = rand_vec<T>(static_cast<std::size_t>(sc * batch), 33);
  auto c2 = c;
  const T alpha = T(R<T>(0.75)), beta = T(R<T>(-0.5));
  ASSERT_TRUE(gemm_strided_batched<T>(h, Op::kNoTrans, Op::kNoTrans, m, n, k, alpha, a.data(), m,
                                      sa, b.data(), k, sb, beta, c.data(), m, sc, batch).is_ok());
  std::vector<const T*> pa, pb;
  std::vector<T*> pc;
  for (std::int64_t i = 0; i < batch; ++i) {
    pa.push_back(a.data() + i * sa);
    pb.push_back(b.data() + i * sb);
    pc.push_back(c2.data() + i * sc);
  }
  ASSERT_TRUE(gemm_batched<T>(h, Op::kNoTrans, Op::kNoTrans, m, n, k, alpha, pa.data(), m,
                              pb.data(), k, beta, pc.data(), m, batch).is_ok());
  auto want = rand_vec<T>(static_cast<std::size_t>(sc * batch), 33);
  for (std::int64_t i = 0; i < batch; ++i) {
    std::vector<T> wi(want.begin() + i * sc, want.begin() + i * sc + m * n);
    std::vector<double> bound;
    ref_gemm(Op::kNoTrans, Op::kNoTrans, m, n, k, alpha, a.data() + i * sa, m, b.data() + i * sb,
             k, beta, wi, m, bound);
    std::vector<T> gi(c.begin() + i * sc, c.begin() + i * sc + m * n);
    std::vector<T> gi2(c2.begin() + i * sc, c2.begin() + i * sc + m * n);
    expect_close(gi, wi, bound, m, n, m, "strided batch " + std::to_string(i));
    expect_close(gi2, wi, bound, m, n, m, "pointer batch " + std::to_string(i));
    // The gap between matrices of C is untouched.
    EXPECT_EQ(widen(c[i * sc + m * n]), widen(want[i * sc + m * n]));
  }
}

TEST(GemmBatched, F32) { batched<float>(); }
TEST(GemmBatched, C128) { batched<cdouble>(); }

TEST(GemmBatched, Errors) {
  Handle h;
  std::vector<float> a(16), b(16), c(16, 2.0f);
  Status s = gemm_strided_batched<float>(h, Op::kNoTrans, Op::kNoTrans, 2, 2, 2, 1.0f, a.data(),
                                         2, 4, b.data(), 2, 4, 0.0f, c.data(), 2, 3, 2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("stride_c"), std::string::npos) << s.message();
  s = gemm_strided_batched<float>(h, Op::kNoTrans, Op::kNoTrans, 2, 2, 2, 1.0f, a.data(), 2, 4,
                                  b.data(), 2, 4, 0.0f, c.data(), 2, 4, -1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  const float* pa[2] = {a.data(), nullptr};
  const float* pb[2] = {b.data(), b.data()};
  float* pc[2] = {c.data(), c.data() + 4};
  s = gemm_batched<float>(h, Op::kNoTrans, Op::kNoTrans, 2, 2, 2, 1.0f, pa, 2, pb, 2, 0.0f, pc, 2, 2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[1]"), std::string::npos) << s.message();
  for (float v : c) EXPECT_EQ(v, 2.0f);
}

// ---- low precision ------------------------------------------------------------------------

template <typename H>
void half_gemm_check(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float beta,
                     bool nan_c) {
  Handle h;
  auto af = rand_vec<float>(static_cast<std::size_t>(m * k), 41);
  auto bf = rand_vec<float>(static_cast<std::size_t>(k * n), 42);
  std::vector<H> a(af.size()), b(bf.size());
  for (std::size_t i = 0; i < af.size(); ++i) a[i] = H(af[i]), af[i] = float(a[i]);
  for (std::size_t i = 0; i < bf.size(); ++i) b[i] = H(bf[i]), bf[i] = float(b[i]);
  const std::int64_t lda = ta == Op::kNoTrans ? m : k, ldb = tb == Op::kNoTrans ? k : n;
  auto c = rand_vec<float>(static_cast<std::size_t>(m * n), 43);
  if (nan_c) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
  auto want = c;
  std::vector<double> bound;
  ref_gemm<float>(ta, tb, m, n, k, 1.25f, af.data(), lda, bf.data(), ldb, beta, want, m, bound);
  Status s;
  if constexpr (std::is_same_v<H, bf16>)
    s = gemm_bf16(h, ta, tb, m, n, k, 1.25f, a.data(), lda, b.data(), ldb, beta, c.data(), m);
  else
    s = gemm_f16(h, ta, tb, m, n, k, 1.25f, a.data(), lda, b.data(), ldb, beta, c.data(), m);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  expect_close(c, want, bound, m, n, m, "half gemm");
}

TEST(GemmLowPrecision, Bf16AndF16) {
  for_each_isa([&](Isa) {
    for (Op ta : {Op::kNoTrans, Op::kTrans})
      for (Op tb : {Op::kNoTrans, Op::kTrans})
        for (auto [m, n, k] : {std::tuple{33, 13, 7}, std::tuple{64, 24, 64}, std::tuple{1, 1, 1},
                               std::tuple{70, 50, 301}}) {
          half_gemm_check<bf16>(ta, tb, m, n, k, 0.5f, false);
          half_gemm_check<f16>(ta, tb, m, n, k, 0.0f, true);
        }
  });
}

TEST(GemmLowPrecision, U8S8S32Exact) {
  Handle h;
  for_each_isa([&](Isa) {
    for (Op ta : {Op::kNoTrans, Op::kTrans})
      for (Op tb : {Op::kNoTrans, Op::kTrans, Op::kConjTrans})
        for (auto [m, n, k] : {std::tuple{33, 13, 7}, std::tuple{64, 24, 64},
                               std::tuple{1, 1, 1}, std::tuple{45, 37, 403}}) {
          std::mt19937 g(static_cast<unsigned>(m * 131 + n * 7 + k));
          std::vector<std::uint8_t> a(static_cast<std::size_t>(m * k));
          std::vector<std::int8_t> b(static_cast<std::size_t>(k * n));
          for (auto& v : a) v = static_cast<std::uint8_t>(g());  // full range, incl. 255
          for (auto& v : b) v = static_cast<std::int8_t>(g());   // incl. -128
          std::vector<std::int32_t> c(static_cast<std::size_t>(m * n));
          for (auto& v : c) v = static_cast<std::int32_t>(g() % 1000);
          auto want = c;
          const std::int64_t lda = ta == Op::kNoTrans ? m : k, ldb = tb == Op::kNoTrans ? k : n;
          const std::int32_t alpha = 3, beta = -2;
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < m; ++i) {
              std::int64_t acc = 0;
              for (std::int64_t p = 0; p < k; ++p) {
                std::int64_t av = ta == Op::kNoTrans ? a[i + p * lda] : a[p + i * lda];
                std::int64_t bv = tb == Op::kNoTrans ? b[p + j * ldb] : b[j + p * ldb];
                acc += av * bv;
              }
              want[i + j * m] = static_cast<std::int32_t>(alpha * acc + beta * want[i + j * m]);
            }
          ASSERT_TRUE(gemm_u8s8s32(h, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                                   c.data(), m).is_ok());
          ASSERT_EQ(c, want) << "m=" << m << " n=" << n << " k=" << k;
        }
  });
}

// ---- OpenBLAS as an extra oracle -------------------------------------------------------------

TEST(GemmOracle, MatchesOpenBlas) {
  void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", RTLD_NOW);
  if (!lib) GTEST_SKIP() << "OpenBLAS not installed: extra oracle skipped";
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                         int, float, float*, int);
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
  ASSERT_NE(sgemm, nullptr);
  Handle h;
  for (auto [m, n, k] : {std::tuple{100, 77, 300}, std::tuple{513, 129, 65}}) {
    auto a = rand_vec<float>(static_cast<std::size_t>(m * k), 51);
    auto b = rand_vec<float>(static_cast<std::size_t>(k * n), 52);
    std::vector<float> c(static_cast<std::size_t>(m * n)), o(c.size());
    ASSERT_TRUE(gemm<float>(h, Op::kNoTrans, Op::kTrans, m, n, k, 1.0f, a.data(), m, b.data(), n,
                            0.0f, c.data(), m).is_ok());
    sgemm(102, 111, 112, m, n, k, 1.0f, a.data(), m, b.data(), n, 0.0f, o.data(), m);
    for (std::size_t i = 0; i < c.size(); ++i)
      ASSERT_NEAR(c[i], o[i], 1e-5f * k) << "element " << i;
  }
  dlclose(lib);
}

TEST(Gemm, DescribeNamesKernelAndBlocking) {
  std::string d = describe_gemm("f32", 256, 256, 256);
  EXPECT_NE(d.find("gemm_f32_"), std::string::npos) << d;
  EXPECT_NE(d.find("kc="), std::string::npos) << d;
}

}  // namespace
}  // namespace tessera::blas
