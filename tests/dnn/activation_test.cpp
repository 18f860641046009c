// Elementwise activations: every fast path against the reference (all kinds, every ISA via
// TESSERA_MAX_ISA, f32/bf16/f16, vector-width edges, layouts, NaN-prefilled outputs), the
// accuracy of the vector math, thread-count independence, strided and in-place use,
// non-temporal stores, finite-difference checks of every backward pass, bad arguments and
// the replay line.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/core/cpu.hpp>
#include <tessera/dnn.hpp>

#include "../../src/dnn/ops/activation/kernels.hpp"
#include "activation_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using act_test::close;
using act_test::expect_ok;
using act_test::expect_rejected;
using act_test::HostTensor;
using act_test::i64;
using testing::for_each_isa;

constexpr ActKind kAllKinds[] = {ActKind::kIdentity, ActKind::kRelu,        ActKind::kLeakyRelu,
                                 ActKind::kElu,      ActKind::kSelu,        ActKind::kCelu,
                                 ActKind::kSigmoid,  ActKind::kHardSigmoid, ActKind::kTanh,
                                 ActKind::kGeluErf,  ActKind::kGeluTanh,    ActKind::kSilu,
                                 ActKind::kMish,     ActKind::kSoftplus,    ActKind::kSoftsign,
                                 ActKind::kClip,     ActKind::kHardSwish,   ActKind::kAbs};

// The accuracy contract of the vectorised kinds against the scalar definitions (f32 values):
// |fast - reference| <= kRtol*|reference| + kAtol*(1 + |x|). The absolute term covers the
// kinds that cancel (1 + erf, 1 + tanh for negative x; 1 - tanh^2) in both versions.
constexpr double kFwdRtol = 6e-7, kFwdAtol = 2e-7;
constexpr double kBwdRtol = 1e-6, kBwdAtol = 1e-6;

// Compares two value lists elementwise, reporting the first few failures with context.
void expect_close_values(DType t, const std::vector<float>& x, const std::vector<float>& got,
                         const std::vector<float>& want, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int failures = 0;
  for (std::size_t i = 0; i < got.size() && failures < 5; ++i) {
    const double xa = i < x.size() ? std::fabs(x[i]) : 0.0;
    auto r = close(t, got[i], want[i], rtol, atol * (1.0 + xa));
    if (!r) {
      ADD_FAILURE() << what << " element " << i << " x=" << (i < x.size() ? x[i] : 0.0f) << ": "
                    << r.message();
      ++failures;
    }
  }
}

std::string case_name(const Activation& a, DType t, const TensorDesc& d) {
  return std::string(act_name(a.kind)) + " alpha=" + std::to_string(a.alpha) +
         " beta=" + std::to_string(a.beta) + " " + d.to_string() + " dtype " +
         std::string(dtype_name(t));
}

// ---- the vector math ------------------------------------------------------------------------

// Error in units of the f32 ulp at the correctly rounded result.
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : 1e30;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0.0 : 1e30;
  return std::fabs(got - want) / act_test::storage_ulp(DType::kF32, want);
}

struct MathCase {
  act_kernels::Math fn;
  const char* name;
  double (*exact)(double);
  float lo, hi;
  double max_ulp;
};

double exact_sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double exact_log1p(double x) {
  return std::log1p(x);
}

TEST(VectorMath, AccuracyBounds) {
  std::vector<const act_kernels::Kernels*> tables;
  if (cpu_info().has(CpuFeature::kAvx512f) && cpu_info().has(CpuFeature::kAvx512bw) &&
      cpu_info().has(CpuFeature::kAvx512dq) && cpu_info().has(CpuFeature::kAvx512vl))
    tables.push_back(&act_kernels::kAvx512);
  if (cpu_info().has(CpuFeature::kAvx2) && cpu_info().has(CpuFeature::kFma))
    tables.push_back(&act_kernels::kAvx2);
  if (tables.empty()) GTEST_SKIP() << "no vector ISA on this CPU";
  const MathCase cases[] = {
      {act_kernels::kMathExp, "exp", [](double x) { return std::exp(x); }, -103.9f, 88.72f, 2.0},
      // Softmax's e^(x - max); [-1, 0] is sampled more densely below.
      {act_kernels::kMathExpLe0, "exp_le0", [](double x) { return std::exp(x); }, -103.9f, 0.0f, 3.0},
      {act_kernels::kMathExpm1, "expm1", [](double x) { return std::expm1(x); }, -88.0f, 88.0f,
       2.0},
      {act_kernels::kMathTanh, "tanh", [](double x) { return std::tanh(x); }, -12.0f, 12.0f, 3.0},
      {act_kernels::kMathErf, "erf", [](double x) { return std::erf(x); }, -6.0f, 6.0f, 6.0},
      {act_kernels::kMathSigmoid, "sigmoid", &exact_sigmoid, -103.0f, 104.0f, 3.0},
      {act_kernels::kMathLog1p01, "log1p", &exact_log1p, 0.0f, 1.0f, 2.0},
  };
  const int n = 200001;
  std::vector<float> x(n), y(n);
  for (const auto* t : tables) {
    SCOPED_TRACE(t->isa);
    for (const MathCase& c : cases) {
      for (int i = 0; i < n; ++i) x[i] = c.lo + (c.hi - c.lo) * static_cast<float>(i) / (n - 1);
      t->math[c.fn](n, x.data(), y.data());
      double worst = 0.0;
      float at = 0.0f;
      for (int i = 0; i < n; ++i) {
        const double e = ulp_error(y[i], c.exact(x[i]));
        if (e > worst) worst = e, at = x[i];
      }
      EXPECT_LE(worst, c.max_ulp) << c.name << " worst at x=" << at;
    }
    // Small arguments keep their relative accuracy (no cancellation near 0).
    for (int i = 0; i < n; ++i)
      x[i] = std::ldexp(1.0f + static_cast<float>(i % 1000) / 1000.0f, -(i % 120)) *
             (i % 2 ? -1.0f : 1.0f);
    for (auto [fn, exact, bound] :
         {std::tuple{act_kernels::kMathExpm1, +[](double v) { return std::expm1(v); }, 2.0},
          std::tuple{act_kernels::kMathTanh, +[](double v) { return std::tanh(v); }, 3.0},
          std::tuple{act_kernels::kMathErf, +[](double v) { return std::erf(v); }, 3.0}}) {
      t->math[fn](n, x.data(), y.data());
      double worst = 0.0;
      for (int i = 0; i < n; ++i) worst = std::max(worst, ulp_error(y[i], exact(x[i])));
      EXPECT_LE(worst, bound) << "small arguments of math fn " << fn;
    }
    // log s for s >= 1, log-spaced up to 1e30.
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(std::pow(10.0, 30.0 * i / (n - 1)));
    t->math[act_kernels::kMathLogGe1](n, x.data(), y.data());
    double worst = 0.0;
    for (int i = 0; i < n; ++i)
      worst = std::max(worst, ulp_error(y[i], std::log(static_cast<double>(x[i]))));
    EXPECT_LE(worst, 2.0) << "log_ge1";
    // Limits and special values.
    const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
    const std::vector<float> sx = {-inf, -200.0f, -104.0f, 88.8f, 100.0f, inf, nan};
    std::vector<float> sy(sx.size());
    t->math[act_kernels::kMathExp](static_cast<i64>(sx.size()), sx.data(), sy.data());
    EXPECT_EQ(sy[0], 0.0f);
    EXPECT_EQ(sy[1], 0.0f);
    EXPECT_EQ(sy[2], 0.0f);
    EXPECT_EQ(sy[3], inf);
    EXPECT_EQ(sy[4], inf);
    EXPECT_EQ(sy[5], inf);
    EXPECT_TRUE(std::isnan(sy[6]));
    // exp_le0: every 61st f32 of [-1, -0] (the reduced range and its neighbours), and its limits.
    {
      std::vector<float> ax, ay;
      for (std::uint32_t b = 0x80000000u; b <= 0xbf800000u; b += 61) ax.push_back(std::bit_cast<float>(b));
      ay.resize(ax.size());
      t->math[act_kernels::kMathExpLe0](static_cast<i64>(ax.size()), ax.data(), ay.data());
      double worst_le0 = 0.0;
      for (std::size_t i = 0; i < ax.size(); ++i) worst_le0 = std::max(worst_le0, ulp_error(ay[i], std::exp(static_cast<double>(ax[i]))));
      EXPECT_LE(worst_le0, 3.0) << "exp_le0 over [-1, 0]";
      ax.clear();
      ay.clear();
      const float lx[3] = {-std::numeric_limits<float>::infinity(), -200.0f, std::nanf("")};
      float ly[3];
      t->math[act_kernels::kMathExpLe0](3, lx, ly);
      EXPECT_EQ(ly[0], 0.0f);
      EXPECT_EQ(ly[1], 0.0f);
      EXPECT_TRUE(std::isnan(ly[2]));
    }
    // Subnormal results are rounded once.
    for (int i = 0; i < 1000; ++i) x[i] = -87.5f - 16.0f * static_cast<float>(i) / 999.0f;
    t->math[act_kernels::kMathExp](1000, x.data(), y.data());
    for (int i = 0; i < 1000; ++i)
      EXPECT_LE(std::fabs(y[i] - std::exp(static_cast<double>(x[i]))), 1.5 * std::ldexp(1.0, -149))
          << "x=" << x[i];
    for (auto fn : {act_kernels::kMathExpm1, act_kernels::kMathTanh, act_kernels::kMathErf,
                    act_kernels::kMathSigmoid}) {
      const float v[3] = {nan, inf, -inf};
      float r[3];
      t->math[fn](3, v, r);
      EXPECT_TRUE(std::isnan(r[0])) << "math fn " << fn;
      EXPECT_FALSE(std::isnan(r[1])) << "math fn " << fn;
      EXPECT_FALSE(std::isnan(r[2])) << "math fn " << fn;
    }
  }
}

// ---- elementwise activations against the reference ------------------------------------------

std::vector<Activation> activations_to_test() {
  std::vector<Activation> v;
  for (ActKind k : kAllKinds) v.push_back(Activation::make(k));
  v.push_back({ActKind::kLeakyRelu, 0.2f, 0.0f});
  v.push_back({ActKind::kElu, 0.7f, 0.0f});
  v.push_back({ActKind::kCelu, 1.5f, 0.0f});
  v.push_back({ActKind::kCelu, -0.5f, 0.0f});
  v.push_back({ActKind::kClip, -1.0f, 2.5f});
  v.push_back(Activation::relu6());
  v.push_back({ActKind::kHardSigmoid, 1.0f / 6.0f, 0.5f});
  return v;
}

// The shapes of the sweeps: 1-D sizes at vector-width edges and 4-D packed tensors in both
// layouts whose element counts are odd.
std::vector<TensorDesc> sweep_descs(DType t) {
  std::vector<TensorDesc> d;
  for (i64 n : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1037}) d.push_back(TensorDesc::make(t, {n}));
  d.push_back(TensorDesc::make(t, {0}));
  d.push_back(TensorDesc::make(t, {2, 0, 3}));
  d.push_back(TensorDesc::make(t, {2, 17, 3, 5}, Layout::kNCHW));
  d.push_back(TensorDesc::make(t, {3, 15, 7, 3}, Layout::kNHWC));
  d.push_back(TensorDesc::make(t, {1, 3, 2, 4, 5}, Layout::kNHWC));
  return d;
}

void fill_activation_input(HostTensor& x, std::mt19937& rng) {
  x.fill_uniform(rng, -7.0f, 7.0f);
  // A few values on the kinks and far out, exactly representable in every dtype.
  std::vector<float> v = x.values();
  const float specials[] = {0.0f, -3.0f, 3.0f, 6.0f, -1.0f, 2.5f, 20.0f, -20.0f, 30.0f, -90.0f};
  for (std::size_t i = 0; i < v.size(); i += 5) v[i] = specials[(i / 5) % 10];
  x.set_values(v);
}

void check_activation_vs_reference(bool backward) {
  std::mt19937 rng(backward ? 11 : 7);
  for_each_isa([&](Isa isa) {
    Handle h;
    for (DType t : act_test::float_dtypes())
      for (const TensorDesc& d : sweep_descs(t))
        for (const Activation& a : activations_to_test()) {
          SCOPED_TRACE(case_name(a, t, d));
          HostTensor x(d), dy(d), got(d), want(d);
          fill_activation_input(x, rng);
          dy.fill_uniform(rng, -2.0f, 2.0f);
          got.fill_nan();
          want.fill_nan();
          if (backward) {
            expect_ok(activation_backward(h, a, d, x.data(), d, dy.data(), d, got.data()));
            ref::activation_backward(a, d, x.data(), d, dy.data(), d, want.data());
          } else {
            expect_ok(activation_forward(h, a, d, x.data(), d, got.data()));
            ref::activation_forward(a, d, x.data(), d, want.data());
          }
          if (isa == Isa::kGeneric) {
            // The generic kernels evaluate the reference's own scalar code.
            EXPECT_TRUE(act_test::same_bits(got, want));
            continue;
          }
          expect_close_values(t, x.values(), got.values(), want.values(),
                              backward ? kBwdRtol : kFwdRtol, backward ? kBwdAtol : kFwdAtol,
                              backward ? "dx" : "y");
        }
  });
}

TEST(Activation, ForwardMatchesReference) {
  check_activation_vs_reference(false);
}
TEST(Activation, BackwardMatchesReference) {
  check_activation_vs_reference(true);
}

// Infinities, NaN, huge and tiny values: the fast paths agree with the scalar definitions
// (NaN where they give NaN, no overflow to NaN elsewhere).
TEST(Activation, SpecialValuesMatchReference) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = {
      0.0f,  -0.0f,  1e-30f, -1e-30f, 1e-8f, -1e-8f, 0.5f,   -0.5f,   20.0f,        -20.0f,
      20.5f, -20.5f, 88.0f,  -88.0f,  89.0f, -89.0f, 100.0f, -100.0f, 1e4f,         -1e4f,
      1e13f, -1e13f, 1e30f,  -1e30f,  3e38f, -3e38f, inf,    -inf,    std::nanf("")};
  const TensorDesc d = TensorDesc::make(DType::kF32, {static_cast<i64>(v.size())});
  for_each_isa([&](Isa) {
    Handle h;
    for (const Activation& a : activations_to_test()) {
      SCOPED_TRACE(case_name(a, DType::kF32, d));
      HostTensor x(d), ones(d), got(d), want(d);
      x.set_values(v);
      ones.set_values(std::vector<float>(v.size(), 1.0f));
      got.fill_nan();
      expect_ok(activation_forward(h, a, d, x.data(), d, got.data()));
      ref::activation_forward(a, d, x.data(), d, want.data());
      expect_close_values(DType::kF32, {}, got.values(), want.values(), kFwdRtol, 0.0, "y");
      got.fill_nan();
      expect_ok(activation_backward(h, a, d, x.data(), d, ones.data(), d, got.data()));
      ref::activation_backward(a, d, x.data(), d, ones.data(), d, want.data());
      // Absolute slack for 1 - tanh^2 style cancellation (derivatives are O(1) here).
      expect_close_values(DType::kF32, {}, got.values(), want.values(), kBwdRtol, 1e-6, "dx");
    }
  });
}

// The fast paths run where they should (a sweep whose fast path silently refused would only
// compare the reference with itself), and strided problems go to the reference with a reason.
TEST(Activation, DispatchChoosesFastPathForPackedTensors) {
  for_each_isa([&](Isa isa) {
    Handle h;
    const Activation a = Activation::make(ActKind::kGeluErf);
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc d = TensorDesc::make(DType::kBF16, {2, 5, 3, 3}, l);
      HostTensor x(d), y(d);
      act_test::DispatchLog log;
      expect_ok(activation_forward(h, a, d, x.data(), d, y.data()));
      const std::string s = log.finish();
      EXPECT_NE(
          s.find(std::string("activation_forward: chose act_flat") + act_test::isa_suffix(isa)),
          std::string::npos)
          << s;
    }
    const TensorDesc xs = act_test::padded_desc(DType::kF32, {2, 5, 3, 3}, 1);
    const TensorDesc yd = TensorDesc::make(DType::kF32, {2, 5, 3, 3});
    HostTensor x(xs), y(yd);
    act_test::DispatchLog log;
    expect_ok(activation_forward(h, a, xs, x.data(), yd, y.data()));
    const std::string s = log.finish();
    EXPECT_NE(s.find("activation_forward: chose act_ref"), std::string::npos) << s;
    EXPECT_NE(s.find("refused: "), std::string::npos) << s;
  });
}

// Large enough for several units per thread: 1 and 2 threads give identical bits.
TEST(Activation, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(3);
  for (DType t : {DType::kF32, DType::kBF16}) {
    const TensorDesc d = TensorDesc::make(t, {3, 7, 61, 53}, Layout::kNHWC);
    HostTensor x(d), dy(d);
    x.fill_uniform(rng, -8.0f, 8.0f);
    dy.fill_uniform(rng, -1.0f, 1.0f);
    for (ActKind k : {ActKind::kGeluErf, ActKind::kMish, ActKind::kRelu}) {
      const Activation a = Activation::make(k);
      HostTensor y1(d), y2(d), g1(d), g2(d);
      Handle h;
      expect_ok(h.set_num_threads(1));
      expect_ok(activation_forward(h, a, d, x.data(), d, y1.data()));
      expect_ok(activation_backward(h, a, d, x.data(), d, dy.data(), d, g1.data()));
      expect_ok(h.set_num_threads(2));
      expect_ok(activation_forward(h, a, d, x.data(), d, y2.data()));
      expect_ok(activation_backward(h, a, d, x.data(), d, dy.data(), d, g2.data()));
      EXPECT_EQ(y1.bytes, y2.bytes) << act_name(k);
      EXPECT_EQ(g1.bytes, g2.bytes) << act_name(k);
    }
  }
}

// Strided views (gaps, mixed layouts) run on the reference: right values, gaps untouched.
TEST(Activation, StridedTensorsUseReferenceAndKeepGaps) {
  std::mt19937 rng(5);
  for (DType t : act_test::float_dtypes()) {
    const std::vector<i64> dims = {2, 3, 4, 5};
    const TensorDesc packed = TensorDesc::make(t, dims);
    const TensorDesc xs = act_test::padded_desc(t, dims, 2);
    const TensorDesc ys = act_test::padded_desc(t, dims, 1);
    const TensorDesc nhwc = TensorDesc::make(t, dims, Layout::kNHWC);
    const Activation a = Activation::make(ActKind::kSilu);
    Handle h;
    HostTensor x(xs), xp(packed), dy(packed);
    x.fill_uniform(rng, -4.0f, 4.0f);
    xp.set_values(x.values());
    dy.fill_uniform(rng, -1.0f, 1.0f);
    HostTensor want(packed), want_dx(packed);
    ref::activation_forward(a, packed, xp.data(), packed, want.data());
    ref::activation_backward(a, packed, xp.data(), packed, dy.data(), packed, want_dx.data());
    for (const TensorDesc& yd : {ys, nhwc}) {
      HostTensor y(yd);
      y.fill_nan();
      expect_ok(activation_forward(h, a, xs, x.data(), yd, y.data()));
      EXPECT_EQ(y.values(), want.values());
      HostTensor dx(yd);
      dx.fill_nan();
      expect_ok(activation_backward(h, a, xs, x.data(), packed, dy.data(), yd, dx.data()));
      EXPECT_EQ(dx.values(), want_dx.values());
      // Storage outside the view keeps its NaN.
      i64 untouched = 0;
      for (i64 i = 0; i < y.storage_elems(); ++i)
        untouched += std::isnan(detail::load_f32(y.data(), t, i)) ? 1 : 0;
      EXPECT_EQ(untouched, y.storage_elems() - packed.numel());
    }
  }
}

// x == y (and dx == dy, dx == x) give the out-of-place results.
TEST(Activation, InPlace) {
  std::mt19937 rng(9);
  for_each_isa([&](Isa) {
    Handle h;
    for (DType t : act_test::float_dtypes())
      for (const TensorDesc& d :
           {TensorDesc::make(t, {1037}), act_test::padded_desc(t, {3, 7, 5}, 1)})
        for (ActKind k : {ActKind::kGeluTanh, ActKind::kElu, ActKind::kHardSwish}) {
          const Activation a = Activation::make(k);
          HostTensor x(d), dy(d), y(d), dx(d);
          x.fill_uniform(rng, -5.0f, 5.0f);
          dy.fill_uniform(rng, -1.0f, 1.0f);
          expect_ok(activation_forward(h, a, d, x.data(), d, y.data()));
          expect_ok(activation_backward(h, a, d, x.data(), d, dy.data(), d, dx.data()));
          HostTensor inplace = x;
          expect_ok(activation_forward(h, a, d, inplace.data(), d, inplace.data()));
          EXPECT_EQ(inplace.bytes, y.bytes) << act_name(k) << " " << d.to_string();
          HostTensor g = dy;
          expect_ok(activation_backward(h, a, d, x.data(), d, g.data(), d, g.data()));
          EXPECT_EQ(g.bytes, dx.bytes) << act_name(k);
          HostTensor xx = x;
          expect_ok(activation_backward(h, a, d, xx.data(), d, dy.data(), d, xx.data()));
          EXPECT_EQ(xx.bytes, dx.bytes) << act_name(k);
        }
  });
}

// The non-temporal store path of the vector kernels (used for outputs larger than the
// last-level cache) gives the same bits as regular stores, whatever the output alignment.
TEST(Activation, NonTemporalStoresMatchRegularStores) {
  std::vector<const act_kernels::Kernels*> tables;
  if (cpu_info().has(CpuFeature::kAvx512f) && cpu_info().has(CpuFeature::kAvx512bw) &&
      cpu_info().has(CpuFeature::kAvx512dq) && cpu_info().has(CpuFeature::kAvx512vl))
    tables.push_back(&act_kernels::kAvx512);
  if (cpu_info().has(CpuFeature::kAvx2) && cpu_info().has(CpuFeature::kFma))
    tables.push_back(&act_kernels::kAvx2);
  if (tables.empty()) GTEST_SKIP() << "no vector ISA on this CPU";
  std::mt19937 rng(41);
  for (const auto* t : tables)
    for (int s = 0; s < act_kernels::kNumStorage; ++s)
      for (i64 n : {1, 7, 15, 17, 33, 100, 1037})
        for (i64 offset : {0, 1, 3, 8}) {
          SCOPED_TRACE(std::string(t->isa) + " storage " + std::to_string(s) + " n " +
                       std::to_string(n) + " offset " + std::to_string(offset));
          const i64 eb = s == act_kernels::kF32 ? 4 : 2;
          std::vector<std::uint8_t> x(static_cast<std::size_t>((n + 16) * eb));
          for (auto& b : x) b = static_cast<std::uint8_t>(rng() % 64);  // finite values
          std::vector<std::uint8_t> a(x.size() + 64, 0xff), b(x.size() + 64, 0xff);
          for (int k : {act_kernels::kRelu, act_kernels::kGeluErf, act_kernels::kSilu}) {
            act_kernels::Params p{0.0f, 0.0f, false};
            t->fwd[k][s](p, n, x.data(), a.data() + offset * eb);
            p.stream = true;
            t->fwd[k][s](p, n, x.data(), b.data() + offset * eb);
            EXPECT_EQ(a, b) << "forward kind " << k;
            t->bwd[k][s](p, n, x.data(), x.data() + eb, b.data() + offset * eb);
            p.stream = false;
            t->bwd[k][s](p, n, x.data(), x.data() + eb, a.data() + offset * eb);
            EXPECT_EQ(a, b) << "backward kind " << k;
          }
        }
}

// ---- finite differences -----------------------------------------------------------------------

// Points where some kind (with the parameters tested) has a kink.
bool near_kink(const Activation& a, float x, float h) {
  std::vector<float> kinks = {0.0f, -3.0f, 3.0f};
  if (a.kind == ActKind::kClip) kinks.insert(kinks.end(), {a.alpha, a.beta});
  if (a.kind == ActKind::kHardSigmoid)
    kinks.insert(kinks.end(), {-a.beta / a.alpha, (1.0f - a.beta) / a.alpha});
  for (float k : kinks)
    if (std::fabs(x - k) < 3.0f * h) return true;
  return false;
}

// Central differences of the forward pass (f32, step 1e-2) against the backward pass.
TEST(Activation, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(13);
  const float step = 1e-2f;
  for_each_isa([&](Isa) {
    Handle h;
    for (const Activation& a : activations_to_test()) {
      SCOPED_TRACE(act_name(a.kind));
      std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
      std::vector<float> xv;
      while (xv.size() < 301) {
        const float v = dist(rng);
        if (!near_kink(a, v, step)) xv.push_back(v);
      }
      const TensorDesc d = TensorDesc::make(DType::kF32, {static_cast<i64>(xv.size())});
      std::vector<float> xp(xv), xm(xv), yp(xv.size()), ym(xv.size()), ones(xv.size(), 1.0f),
          dx(xv.size());
      for (std::size_t i = 0; i < xv.size(); ++i) xp[i] += step, xm[i] -= step;
      expect_ok(activation_forward(h, a, d, xp.data(), d, yp.data()));
      expect_ok(activation_forward(h, a, d, xm.data(), d, ym.data()));
      expect_ok(activation_backward(h, a, d, xv.data(), d, ones.data(), d, dx.data()));
      for (std::size_t i = 0; i < xv.size(); ++i) {
        const double fd = (static_cast<double>(yp[i]) - ym[i]) / (2.0 * step);
        EXPECT_NEAR(dx[i], fd, 2e-3 * (1.0 + std::fabs(fd))) << "x=" << xv[i];
      }
    }
  });
}

// ---- bad arguments -----------------------------------------------------------------------------

TEST(Activation, BadArgumentsAreRejectedWithoutWriting) {
  Handle h;
  const TensorDesc d = TensorDesc::make(DType::kF32, {2, 3, 4});
  HostTensor x(d), y(d), dy(d);
  const Activation relu = Activation::make(ActKind::kRelu);
  const auto bad = StatusCode::kInvalidArgument;
  TensorDesc neg = d;
  neg.dims[1] = -3;
  expect_rejected(bad, "x dim 1 = -3", y,
                  [&] { return activation_forward(h, relu, neg, x.data(), d, y.data()); });
  TensorDesc few = d;
  few.strides.pop_back();
  expect_rejected(bad, "y has 2 strides for 3 dims", y,
                  [&] { return activation_forward(h, relu, d, x.data(), few, y.data()); });
  TensorDesc other = TensorDesc::make(DType::kF32, {2, 3, 5});
  expect_rejected(bad, "y dims [2,3,5] differ from x dims [2,3,4]", y,
                  [&] { return activation_forward(h, relu, d, x.data(), other, y.data()); });
  TensorDesc ints = d;
  ints.dtype = DType::kI32;
  expect_rejected(StatusCode::kUnsupported, "x has dtype i32", y,
                  [&] { return activation_forward(h, relu, ints, x.data(), d, y.data()); });
  TensorDesc half = d;
  half.dtype = DType::kF16;
  expect_rejected(bad, "y dtype f16 differs from x dtype f32", y,
                  [&] { return activation_forward(h, relu, d, x.data(), half, y.data()); });
  expect_rejected(bad, "x is null", y,
                  [&] { return activation_forward(h, relu, d, nullptr, d, y.data()); });
  expect_rejected(bad, "dy is null", y, [&] {
    return activation_backward(h, relu, d, x.data(), d, nullptr, d, y.data());
  });
  expect_rejected(bad, "rank 0", y, [&] {
    return activation_forward(h, relu, TensorDesc{}, x.data(), TensorDesc{}, y.data());
  });
  expect_rejected(bad, "unknown activation kind 99", y, [&] {
    return activation_forward(h, Activation{static_cast<ActKind>(99), 0, 0}, d, x.data(), d,
                              y.data());
  });
  expect_rejected(bad, "celu alpha must be non-zero", y, [&] {
    return activation_forward(h, Activation{ActKind::kCelu, 0, 0}, d, x.data(), d, y.data());
  });
  expect_rejected(bad, "must not be NaN", y, [&] {
    return activation_forward(h, Activation{ActKind::kClip, std::nanf(""), 1}, d, x.data(), d,
                              y.data());
  });
  expect_rejected(bad, "dx dims", y, [&] {
    return activation_backward(h, relu, d, x.data(), d, dy.data(), other, y.data());
  });
  TensorDesc huge = TensorDesc::make(DType::kF32, {1, 1, 1});
  huge.dims = {1 << 30, 1 << 30, 1 << 30};
  expect_rejected(bad, "address too many elements", y,
                  [&] { return activation_forward(h, relu, huge, x.data(), huge, y.data()); });
  // Empty tensors may have null pointers.
  const TensorDesc empty = TensorDesc::make(DType::kF32, {0, 3});
  EXPECT_TRUE(activation_forward(h, relu, empty, nullptr, empty, nullptr).is_ok());
}

TEST(Activation, BenchReplayLines) {
  Handle h;
  expect_ok(h.set_num_threads(1));
  const TensorDesc d = TensorDesc::make(DType::kF32, {8, 3, 5, 5});
  const TensorDesc nhwc = TensorDesc::make(DType::kBF16, {2, 3, 5, 5}, Layout::kNHWC);
  HostTensor x(d), y(d), xb(nhwc), yb(nhwc);
  const std::uint32_t saved = log::enabled_mask();
  log::set_enabled_mask(static_cast<std::uint32_t>(log::Category::kBench));
  ::testing::internal::CaptureStderr();
  expect_ok(activation_forward(h, Activation::make(ActKind::kGeluErf), d, x.data(), d, y.data()));
  expect_ok(activation_backward(h, Activation{ActKind::kLeakyRelu, 0.2f, 0.0f}, nhwc, xb.data(),
                                nhwc, yb.data(), nhwc, yb.data()));
  const float slope = 0.25f;
  expect_ok(prelu_forward(h, d, x.data(), &slope, 1, d, y.data()));
  const std::string s = ::testing::internal::GetCapturedStderr();
  log::set_enabled_mask(saved);
  EXPECT_NE(s.find("tessera bench dnn act --kind gelu_erf --dims 8x3x5x5 --dtype f32 --dir fwd "
                   "--threads 1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("tessera bench dnn act --kind leaky_relu --dims 2x3x5x5 --dtype bf16 --layout "
                   "nhwc --alpha 0.2 --dir bwd --threads 1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("tessera bench dnn act --kind prelu --dims 8x3x5x5 --dtype f32 --slopes 1 "
                   "--dir fwd"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace tessera::dnn
