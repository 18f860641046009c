// CBLAS level 1 against a plain reference and against OpenBLAS: sizes 0, 1, odd and larger
// than a vector register, positive, negative and zero increments where BLAS defines them.
#include <algorithm>
#include <sstream>

#include "cblas_test_util.hpp"

namespace cblas_test {
namespace {

constexpr int kSizes[] = {0, 1, 7, 33};
struct Incs {
  int x, y;
};

template <typename... A>
std::string name(const A&... parts) {
  std::ostringstream os;
  ((os << parts << ' '), ...);
  return os.str();
}

// The routine for the precision of T (complex-only or real-only routines).
template <typename T, typename S, typename D>
auto pick2(S single, D dbl) {
  if constexpr (kSingle<T>)
    return single;
  else
    return dbl;
}

template <typename T>
std::vector<Case> dot_cases() {
  std::vector<Case> cases;
  for (int n : kSizes)
    for (Incs inc : {Incs{1, 1}, Incs{2, -3}, Incs{-1, 2}, Incs{0, 1}})
      for (bool conj : {false, true}) {
        if (conj && !kComplex<T>) continue;
        const auto x = random_vec<T>(vec_len(n, inc.x), n + 1);
        const auto y = random_vec<T>(vec_len(n, inc.y), n + 2);
        cd want = 0;
        for (int i = 0; i < n; ++i) {
          const cd xi = wide(x[vi(i, n, inc.x)]);
          want += (conj ? std::conj(xi) : xi) * wide(y[vi(i, n, inc.y)]);
        }
        auto run = [=](const CblasApi& api) -> std::vector<cd> {
          if constexpr (kComplex<T>) {
            T r(-7);
            auto fn = conj ? pick2<T>(api.cdotc_sub, api.zdotc_sub)
                           : pick2<T>(api.cdotu_sub, api.zdotu_sub);
            fn(n, x.data(), inc.x, y.data(), inc.y, &r);
            return {wide(r)};
          } else {
            return {wide(pick2<T>(api.sdot, api.ddot)(n, x.data(), inc.x, y.data(), inc.y))};
          }
        };
        cases.push_back({name(conj ? "dotc" : "dot", "n", n, "incx", inc.x, "incy", inc.y),
                         run,
                         {want},
                         double(std::max(n, 1))});
      }
  return cases;
}

template <typename T>
std::vector<Case> nrm2_asum_cases() {
  std::vector<Case> cases;
  for (int n : kSizes)
    for (int incx : {1, 3, -2, 0}) {
      const auto x = random_vec<T>(vec_len(n, incx), n + 3);
      double sq = 0, sum = 0;
      for (int i = 0; i < n; ++i) {
        const cd v = wide(x[vi(i, n, incx)]);
        sq += std::norm(v);
        sum += std::abs(v.real()) + std::abs(v.imag());
      }
      auto nrm2 = [=](const CblasApi& api) -> std::vector<cd> {
        return {double(pick<T>(api.snrm2, api.dnrm2, api.scnrm2, api.dznrm2)(n, x.data(), incx))};
      };
      auto asum = [=](const CblasApi& api) -> std::vector<cd> {
        return {double(pick<T>(api.sasum, api.dasum, api.scasum, api.dzasum)(n, x.data(), incx))};
      };
      // nrm2 walks a negative increment and repeats x[0] for a zero one (LAPACK 3.10+);
      // OpenBLAS 0.3.21 still returns 0 for incx <= 0, so those are reference-only.
      cases.push_back({name("nrm2 n", n, "incx", incx), nrm2, {std::sqrt(sq)}, 2, incx > 0});
      // OpenBLAS 0.3.21's scasum kernel miscounts a tail past 32 elements (e.g. n = 33 is off
      // by ~1%): reference-only there.
      const bool oracle_ok = !(std::is_same_v<T, cfloat> && n > 32);
      cases.push_back({name("asum n", n, "incx", incx),
                       asum,
                       {incx > 0 ? sum : 0.0},
                       double(std::max(n, 1)),
                       oracle_ok});
    }
  return cases;
}

template <typename T>
std::vector<Case> iamax_cases() {
  std::vector<Case> cases;
  for (int n : kSizes)
    for (int incx : {1, 2, -1, 0})
      for (bool ties : {false, true}) {
        auto x = random_vec<T>(vec_len(n, incx), n + 4);
        if (ties && n >= 7 && incx > 0) {  // equal extremes: the first index wins
          x[2 * incx] = x[5 * incx] = narrow<T>(cd(3, kComplex<T> ? -2 : 0));
          x[1 * incx] = x[6 * incx] = narrow<T>(cd(0.0, 0.0));
        }
        for (bool largest : {true, false}) {
          std::int64_t want = 0;
          double best = 0;
          for (int i = 0; incx > 0 && i < n; ++i) {
            const cd v = wide(x[i * incx]);
            const double a = std::abs(v.real()) + std::abs(v.imag());
            if (i == 0 || (largest ? a > best : a < best)) want = i, best = a;
          }
          auto run = [=](const CblasApi& api) -> std::vector<cd> {
            auto fn = largest ? pick<T>(api.isamax, api.idamax, api.icamax, api.izamax)
                              : pick<T>(api.isamin, api.idamin, api.icamin, api.izamin);
            return {double(fn(n, x.data(), incx))};
          };
          cases.push_back({name(largest ? "iamax" : "iamin", "n", n, "incx", incx, "ties", ties),
                           run,
                           {double(want)},
                           0});
        }
      }
  return cases;
}

template <typename T>
std::vector<Case> swap_copy_axpy_cases() {
  std::vector<Case> cases;
  const T alpha = narrow<T>(cd(0.75, -0.5));
  for (int n : kSizes)
    for (Incs inc : {Incs{1, 1}, Incs{2, -3}, Incs{-1, 2}, Incs{0, 1}}) {
      const auto x = random_vec<T>(vec_len(n, inc.x), n + 5);
      const auto y = random_vec<T>(vec_len(n, inc.y), n + 6);
      const std::string incs = name("n", n, "incx", inc.x, "incy", inc.y);
      // Outputs: x then y.
      auto both = [](const std::vector<T>& a, const std::vector<T>& b) {
        std::vector<cd> out = widen(a);
        for (const T& v : b) out.push_back(wide(v));
        return out;
      };
      std::vector<cd> wx = widen(x), wy = widen(y);
      std::vector<cd> copy_y = wy, axpy_y = wy;
      for (int i = 0; i < n; ++i) {
        const cd xi = wide(x[vi(i, n, inc.x)]);
        copy_y[vi(i, n, inc.y)] = xi;
        axpy_y[vi(i, n, inc.y)] += wide(alpha) * xi;
      }
      cases.push_back({"copy " + incs,
                       [=](const CblasApi& api) {
                         auto yy = y;
                         pick<T>(api.scopy, api.dcopy, api.ccopy, api.zcopy)(n, x.data(), inc.x,
                                                                             yy.data(), inc.y);
                         return widen(yy);
                       },
                       copy_y, 0});
      cases.push_back({"axpy " + incs,
                       [=](const CblasApi& api) {
                         auto yy = y;
                         pick<T>(api.saxpy, api.daxpy, api.caxpy, api.zaxpy)(
                             n, sc(alpha), x.data(), inc.x, yy.data(), inc.y);
                         return widen(yy);
                       },
                       axpy_y, 2});
      if (inc.x == 0) continue;  // swap writes x
      std::vector<cd> swap_x = wx, swap_y = wy;
      for (int i = 0; i < n; ++i) std::swap(swap_x[vi(i, n, inc.x)], swap_y[vi(i, n, inc.y)]);
      std::vector<cd> want = swap_x;
      want.insert(want.end(), swap_y.begin(), swap_y.end());
      cases.push_back({"swap " + incs,
                       [=](const CblasApi& api) {
                         auto xx = x, yy = y;
                         pick<T>(api.sswap, api.dswap, api.cswap, api.zswap)(n, xx.data(), inc.x,
                                                                             yy.data(), inc.y);
                         return both(xx, yy);
                       },
                       want, 0});
    }
  return cases;
}

template <typename T>
std::vector<Case> scal_rot_cases() {
  std::vector<Case> cases;
  using R = real_of<T>;
  const T alpha = narrow<T>(cd(-1.25, 0.5));
  for (int n : kSizes) {
    for (int incx : {1, 2, -1, 0}) {
      const auto x = random_vec<T>(vec_len(n, incx), n + 7);
      std::vector<cd> want = widen(x), want_real = widen(x);
      for (int i = 0; incx > 0 && i < n; ++i) {  // incx <= 0: nothing to do
        want[i * incx] *= wide(alpha);
        want_real[i * incx] *= 0.5;
      }
      const std::string incs = name("n", n, "incx", incx);
      cases.push_back({"scal " + incs,
                       [=](const CblasApi& api) {
                         auto xx = x;
                         pick<T>(api.sscal, api.dscal, api.cscal, api.zscal)(n, sc(alpha),
                                                                             xx.data(), incx);
                         return widen(xx);
                       },
                       want, 2});
      if constexpr (kComplex<T>) {
        cases.push_back({"scal_real " + incs,
                         [=](const CblasApi& api) {
                           auto xx = x;
                           pick2<T>(api.csscal, api.zdscal)(n, R(0.5), xx.data(), incx);
                           return widen(xx);
                         },
                         want_real, 0});
      }
    }
    for (Incs inc : {Incs{1, 1}, Incs{2, -3}, Incs{-1, 2}}) {
      const auto x = random_vec<T>(vec_len(n, inc.x), n + 8);
      const auto y = random_vec<T>(vec_len(n, inc.y), n + 9);
      const R c = R(0.6), s = R(0.8);
      std::vector<cd> wx = widen(x), wy = widen(y);
      for (int i = 0; i < n; ++i) {
        cd& xi = wx[vi(i, n, inc.x)];
        cd& yi = wy[vi(i, n, inc.y)];
        const cd a = xi, b = yi;
        xi = double(c) * a + double(s) * b;
        yi = double(c) * b - double(s) * a;
      }
      wx.insert(wx.end(), wy.begin(), wy.end());
      cases.push_back({name("rot n", n, "incx", inc.x, "incy", inc.y),
                       [=](const CblasApi& api) {
                         auto xx = x, yy = y;
                         pick<T>(api.srot, api.drot, api.csrot, api.zdrot)(n, xx.data(), inc.x,
                                                                           yy.data(), inc.y, c, s);
                         std::vector<cd> out = widen(xx);
                         for (const T& v : yy) out.push_back(wide(v));
                         return out;
                       },
                       wx, 2});
    }
  }
  return cases;
}

template <typename T>
class CblasLevel1 : public ::testing::Test {};
TYPED_TEST_SUITE(CblasLevel1, AllTypes);

TYPED_TEST(CblasLevel1, Dot) {
  check_cases<TypeParam>(dot_cases<TypeParam>());
}
TYPED_TEST(CblasLevel1, Nrm2Asum) {
  check_cases<TypeParam>(nrm2_asum_cases<TypeParam>());
}
TYPED_TEST(CblasLevel1, IamaxIamin) {
  check_cases<TypeParam>(iamax_cases<TypeParam>());
}
TYPED_TEST(CblasLevel1, SwapCopyAxpy) {
  check_cases<TypeParam>(swap_copy_axpy_cases<TypeParam>());
}
TYPED_TEST(CblasLevel1, ScalRot) {
  check_cases<TypeParam>(scal_rot_cases<TypeParam>());
}

template <typename T>
class CblasLevel1VsOpenBlas : public ::testing::Test {
 protected:
  void SetUp() override {
    if (openblas_api() == nullptr) GTEST_SKIP() << "OpenBLAS not installed at " << kOpenBlasPath;
  }
};
TYPED_TEST_SUITE(CblasLevel1VsOpenBlas, AllTypes);

TYPED_TEST(CblasLevel1VsOpenBlas, All) {
  using T = TypeParam;
  for (auto cases : {dot_cases<T>(), nrm2_asum_cases<T>(), iamax_cases<T>(),
                     swap_copy_axpy_cases<T>(), scal_rot_cases<T>()})
    check_cases<T>(cases, openblas_api());
}

// rotg: [c s; -conj(s) c] [a; b] = [r; 0], c real, c^2 + |s|^2 = 1; real rotg also returns
// z (in b) from which c and s can be rebuilt.
TYPED_TEST(CblasLevel1, Rotg) {
  using T = TypeParam;
  using R = real_of<T>;
  const std::pair<cd, cd> inputs[] = {{{3, 1}, {-4, 2}},    {{0, 0}, {2, -1}},
                                      {{2, 1}, {0, 0}},     {{0, 0}, {0, 0}},
                                      {{-1e-3, 0}, {5, 3}}, {{-7, -2}, {0.5, 1}}};
  for (auto [a0w, b0w] : inputs) {
    if constexpr (!kComplex<T>) a0w.imag(0), b0w.imag(0);
    const T a0 = narrow<T>(a0w), b0 = narrow<T>(b0w);
    SCOPED_TRACE(::testing::Message() << "a " << a0w << " b " << b0w);
    auto rotg = [&](const CblasApi& api, T& a, T& b, R& c, T& s) {
      a = a0, b = b0, c = -5, s = T(-5);
      if constexpr (kComplex<T>)
        pick2<T>(api.crotg, api.zrotg)(&a, &b, &c, &s);
      else
        pick2<T>(api.srotg, api.drotg)(&a, &b, &c, &s);
    };
    T a, b, s;
    R c;
    rotg(tessera_api(), a, b, c, s);
    const cd r = wide(a), sv = wide(s), a0c = wide(a0), b0c = wide(b0);
    const double scale = 1 + std::abs(a0c) + std::abs(b0c);
    EXPECT_NEAR(std::abs(double(c) * a0c + sv * b0c - r), 0, 8 * tol<T>() * scale);
    EXPECT_NEAR(std::abs(-std::conj(sv) * a0c + double(c) * b0c), 0, 8 * tol<T>() * scale);
    EXPECT_NEAR(double(c) * c + std::norm(sv), 1, 8 * tol<T>());
    EXPECT_NEAR(std::abs(r), std::sqrt(std::norm(a0c) + std::norm(b0c)), 8 * tol<T>() * scale);
    if constexpr (!kComplex<T>) {
      // z: s if |a| > |b|, else 1/c if c != 0, else 1 (and 0 when a = b = 0).
      const double z = std::abs(a0c) > std::abs(b0c) ? double(s) : c != 0 ? 1 / double(c) : 1;
      EXPECT_NEAR(double(b), a0c == 0.0 && b0c == 0.0 ? 0.0 : z, 8 * tol<T>() * std::abs(z));
    }
    if (const CblasApi* ob = openblas_api();
        ob != nullptr && (!kComplex<T> || a0w != cd(0))) {  // a = 0: conventions differ
      T a2, b2, s2;
      R c2;
      rotg(*ob, a2, b2, c2, s2);
      EXPECT_NEAR(std::abs(wide(a) - wide(a2)), 0, 8 * tol<T>() * scale);
      EXPECT_NEAR(double(c), double(c2), 8 * tol<T>());
      EXPECT_NEAR(std::abs(wide(s) - wide(s2)), 0, 8 * tol<T>());
      if constexpr (!kComplex<T>) {
        EXPECT_NEAR(double(b), double(b2), 8 * tol<T>() * scale);
      }
    }
  }
}

// sdsdot / dsdot: float inputs, double accumulation.
TEST(CblasLevel1Extended, SdsdotDsdot) {
  for (int n : kSizes)
    for (Incs inc : {Incs{1, 1}, Incs{2, -3}, Incs{0, 1}})
      for (bool cancel : {false, true}) {
        SCOPED_TRACE(name("n", n, "incx", inc.x, "incy", inc.y, "cancel", cancel));
        std::vector<float> x = random_vec<float>(vec_len(n, inc.x), 11);
        std::vector<float> y = random_vec<float>(vec_len(n, inc.y), 12);
        if (cancel && n > 2 && inc.x != 0) {  // terms that cancel: exact in double, not in float
          x[vi(0, n, inc.x)] = 1 << 24, x[vi(1, n, inc.x)] = -(1 << 24);
          y[vi(0, n, inc.y)] = y[vi(1, n, inc.y)] = 1;
        }
        double want = 0, magnitude = 0;
        for (int i = 0; i < n; ++i) {
          const double p = double(x[vi(i, n, inc.x)]) * y[vi(i, n, inc.y)];
          want += p;
          magnitude += std::abs(p);
        }
        EXPECT_NEAR(cblas_dsdot(n, x.data(), inc.x, y.data(), inc.y), want, 1e-12);
        EXPECT_EQ(cblas_sdsdot(n, 0.5f, x.data(), inc.x, y.data(), inc.y), float(0.5 + want));
        // OpenBLAS 0.3.21's dsdot kernel accumulates contiguous runs of 32 and more in single
        // precision, so it is an oracle only to float accuracy and without cancellation.
        const CblasApi* ob = openblas_api();
        if (ob == nullptr || cancel) continue;
        EXPECT_NEAR(ob->dsdot(n, x.data(), inc.x, y.data(), inc.y), want, 1e-6 * (1 + magnitude));
        EXPECT_NEAR(ob->sdsdot(n, 0.5f, x.data(), inc.x, y.data(), inc.y), float(0.5 + want),
                    1e-6 * (1 + magnitude));
      }
}

// rotm applies H given by P = {flag, h11, h21, h12, h22}.
template <typename T>
class CblasRotm : public ::testing::Test {};
TYPED_TEST_SUITE(CblasRotm, RealTypes);

TYPED_TEST(CblasRotm, RotmEveryFlag) {
  using T = TypeParam;
  auto rotm = [](const CblasApi& api) { return pick2<T>(api.srotm, api.drotm); };
  for (T flag : {T(-2), T(-1), T(0), T(1)})
    for (Incs inc : {Incs{1, 1}, Incs{2, -1}}) {
      const int n = 7;
      SCOPED_TRACE(name("flag", flag, "incx", inc.x, "incy", inc.y));
      const T p[5] = {flag, T(0.5), T(-0.25), T(1.5), T(2)};
      const T h11 = flag == 0 ? 1 : p[1], h21 = flag == 1 ? -1 : p[2];
      const T h12 = flag == 1 ? 1 : p[3], h22 = flag == 0 ? 1 : p[4];
      const auto x = random_vec<T>(vec_len(n, inc.x), 13), y = random_vec<T>(vec_len(n, inc.y), 14);
      auto xx = x, yy = y;
      rotm(tessera_api())(n, xx.data(), inc.x, yy.data(), inc.y, p);
      for (int i = 0; i < n; ++i) {
        const T a = x[vi(i, n, inc.x)], b = y[vi(i, n, inc.y)];
        const bool identity = flag == -2;
        EXPECT_NEAR(xx[vi(i, n, inc.x)], identity ? a : h11 * a + h12 * b, 4 * tol<T>());
        EXPECT_NEAR(yy[vi(i, n, inc.y)], identity ? b : h21 * a + h22 * b, 4 * tol<T>());
      }
      if (const CblasApi* ob = openblas_api()) {
        auto xo = x, yo = y;
        rotm (*ob)(n, xo.data(), inc.x, yo.data(), inc.y, p);
        for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(xx[i], xo[i], 4 * tol<T>());
        for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(yy[i], yo[i], 4 * tol<T>());
      }
    }
}

// rotmg: H zeroes the second component, and d1' x1'^2 = d1 x1^2 + d2 y1^2.
TYPED_TEST(CblasRotm, RotmgZeroesTheSecondComponent) {
  using T = TypeParam;
  auto rotmg = [](const CblasApi& api) { return pick2<T>(api.srotmg, api.drotmg); };
  const T inputs[][4] = {// d1, d2, x1, y1
                         {2, 3, 1.5, -0.5}, {1, 1, 0.1, 4},    {1e-9, 1e-9, 2, 3},
                         {1e9, 5e8, 2, 1},  {4, 1e-8, 1, 2e3}, {0.5, -2, 3, 1},
                         {1, 2, 0, 3},      {-1, 2, 1, 1},     {1, 2, 3, 0}};
  for (const auto& in : inputs) {
    SCOPED_TRACE(name("d1", in[0], "d2", in[1], "x1", in[2], "y1", in[3]));
    T d1 = in[0], d2 = in[1], x1 = in[2], p[5] = {9, 9, 9, 9, 9};
    rotmg(tessera_api())(&d1, &d2, &x1, in[3], p);
    const T flag = p[0];
    if (in[0] < 0) {  // d1 < 0: everything zeroed
      EXPECT_EQ(flag, T(-1));
      EXPECT_EQ(d1, T(0));
      EXPECT_EQ(x1, T(0));
    } else if (in[1] * in[3] == 0) {  // d2 * y1 = 0: H = I
      EXPECT_EQ(flag, T(-2));
      EXPECT_EQ(d1, in[0]);
      EXPECT_EQ(x1, in[2]);
    } else {
      const T h11 = flag == 0 ? 1 : p[1], h21 = flag == 1 ? -1 : p[2];
      const T h12 = flag == 1 ? 1 : p[3], h22 = flag == 0 ? 1 : p[4];
      const double x = in[2], y = in[3];
      const double first = h11 * x + h12 * y, second = h21 * x + h22 * y;
      EXPECT_NEAR(
          second, 0,
          16 * tol<T>() * (std::abs(x) + std::abs(y)) * (1 + std::abs(h21) + std::abs(h22)));
      EXPECT_NEAR(first, x1, 16 * tol<T>() * std::abs(first));
      const double before = in[0] * x * x + in[1] * y * y, after = d1 * first * first;
      EXPECT_NEAR(after, before, 64 * tol<T>() * std::abs(before));
    }
    if (const CblasApi* ob = openblas_api()) {
      T e1 = in[0], e2 = in[1], y1 = in[2], q[5] = {9, 9, 9, 9, 9};
      rotmg (*ob)(&e1, &e2, &y1, in[3], q);
      EXPECT_EQ(q[0], p[0]);
      EXPECT_NEAR(e1, d1, 8 * tol<T>() * std::abs(e1));
      EXPECT_NEAR(e2, d2, 8 * tol<T>() * std::abs(e2));
      EXPECT_NEAR(y1, x1, 8 * tol<T>() * std::abs(y1));
      // The entries of P that the flag defines.
      auto defined = [&](int i) {
        return p[0] == -1 || (p[0] == 0 && (i == 2 || i == 3)) || (p[0] == 1 && (i == 1 || i == 4));
      };
      for (int i = 1; i <= 4; ++i)
        if (defined(i)) {
          EXPECT_NEAR(q[i], p[i], 8 * tol<T>() * (1 + std::abs(q[i]))) << "P[" << i << "]";
        }
    }
  }
}

}  // namespace
}  // namespace cblas_test
