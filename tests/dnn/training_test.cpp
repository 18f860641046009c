// Dropout and losses: Philox against its published known answer; dropout's mask independent of
// threads and layout, its rate, scaling and backward; every loss against its formula (class
// weights, label smoothing, ignore_index, every reduction) and every backward by central
// finite differences of the forward.
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "../../src/dnn/ops/training/kernels.hpp"
#include "tensor_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using namespace tensor_test;

void set(T& x, i64 off, double v) {
  const float f = static_cast<float>(v);
  unsigned char* at = x.mem.data() + off * static_cast<i64>(dtype_size(x.d.dtype));
  if (x.d.dtype == DType::kF32) std::memcpy(at, &f, 4);
  if (x.d.dtype == DType::kF64) std::memcpy(at, &v, 8);
}
T uniform(const Idx& dims, Lay lay, std::mt19937& rng, double lo = -2, double hi = 2) {
  T x = make(DType::kF32, dims, lay);
  std::uniform_real_distribution<double> u(lo, hi);
  for (i64 o : offsets(x.d)) set(x, o, u(rng));
  return x;
}
// x's element at a multi-index.
double at(const T& x, std::initializer_list<i64> idx) {
  i64 o = 0, i = 0;
  for (i64 v : idx) o += v * x.d.strides[static_cast<std::size_t>(i++)];
  return value(x, o);
}

TEST(Training, PhiloxKnownAnswer) {
  // Random123's known-answer vector for philox4x32-10 with zero counter and key.
  const std::uint32_t ctr[4] = {0, 0, 0, 0}, key[2] = {0, 0};
  std::uint32_t out[4];
  philox4x32(ctr, key, out);
  EXPECT_EQ(out[0], 0x6627e8d5u);
  EXPECT_EQ(out[1], 0xe169c58du);
  EXPECT_EQ(out[2], 0xbc57ac4cu);
  EXPECT_EQ(out[3], 0x9b00dbd8u);
}

TEST(Training, DropoutMaskIsReproducibleAndScaled) {
  std::mt19937 rng(1);
  const Idx dims{37, 129};
  const float ratio = 0.3f;
  T x = uniform(dims, Lay::kPacked, rng);
  std::vector<std::vector<unsigned char>> masks;
  for (int threads : {1, 2})
    for (Lay lay : {Lay::kPacked, Lay::kGaps}) {
      Handle h;
      ASSERT_TRUE(h.set_num_threads(threads).is_ok());
      T y = make(DType::kF32, dims, lay), m = make(DType::kBool, dims, lay);
      ASSERT_TRUE(dropout_forward(h, ratio, 42, 7, x.d, x.p(), y.d, y.p(), m.d, m.p()).is_ok());
      std::vector<unsigned char> packed;
      i64 kept = 0, k = 0;
      const auto xo = offsets(x.d), yo = offsets(y.d), mo = offsets(m.d);
      for (std::size_t i = 0; i < xo.size(); ++i) {
        const bool keep = m.mem[static_cast<std::size_t>(mo[i])] != 0;
        packed.push_back(keep ? 1 : 0);
        kept += keep ? 1 : 0;
        const float want = keep ? static_cast<float>(value(x, xo[i])) * (1.0f / (1.0f - ratio)) : 0.0f;
        EXPECT_EQ(static_cast<float>(value(y, yo[i])), want) << "element " << i;
        ++k;
      }
      masks.push_back(packed);
      const double rate = static_cast<double>(kept) / static_cast<double>(k);
      EXPECT_GT(rate, 0.66);
      EXPECT_LT(rate, 0.74);
    }
  for (const auto& m : masks) EXPECT_EQ(m, masks[0]) << "the mask depends on threads or layout";
  // Another seed or offset gives another mask; ratio 0 keeps x, ratio 1 drops all.
  Handle h;
  T y = make(DType::kF32, dims), m = make(DType::kBool, dims), m2 = make(DType::kBool, dims);
  ASSERT_TRUE(dropout_forward(h, ratio, 43, 7, x.d, x.p(), y.d, y.p(), m.d, m.p()).is_ok());
  ASSERT_TRUE(dropout_forward(h, ratio, 42, 8, x.d, x.p(), y.d, y.p(), m2.d, m2.p()).is_ok());
  EXPECT_NE(std::vector<unsigned char>(m.mem.begin(), m.mem.end()), masks[0]);
  EXPECT_NE(std::vector<unsigned char>(m2.mem.begin(), m2.mem.end()), masks[0]);
  ASSERT_TRUE(dropout_forward(h, 0.0f, 1, 0, x.d, x.p(), y.d, y.p(), m.d, nullptr).is_ok());
  EXPECT_EQ(y.mem, x.mem);
  ASSERT_TRUE(dropout_forward(h, 1.0f, 1, 0, x.d, x.p(), y.d, y.p(), m.d, m.p()).is_ok());
  for (i64 o : offsets(y.d)) EXPECT_EQ(value(y, o), 0.0);
  // Backward: dx = mask ? dy / (1 - ratio) : 0.
  ASSERT_TRUE(dropout_forward(h, ratio, 42, 7, x.d, x.p(), y.d, y.p(), m.d, m.p()).is_ok());
  T dy = uniform(dims, Lay::kGaps, rng), dx = make(DType::kF32, dims);
  ASSERT_TRUE(dropout_backward(h, ratio, m.d, m.p(), dy.d, dy.p(), dx.d, dx.p()).is_ok());
  const auto go = offsets(dy.d);
  for (std::size_t i = 0; i < go.size(); ++i) {
    const float want = m.mem[i] != 0 ? static_cast<float>(value(dy, go[i])) * (1.0f / (1.0f - ratio)) : 0.0f;
    EXPECT_EQ(static_cast<float>(value(dx, static_cast<i64>(i))), want);
  }
  EXPECT_EQ(dropout_forward(h, 1.5f, 1, 0, x.d, x.p(), y.d, y.p(), m.d, m.p()).code(), StatusCode::kInvalidArgument);
}

// Central differences of f at x (f32 storage): df/dx_e for every element.
std::vector<double> numeric_grad(T& x, const std::function<double()>& f, double step) {
  std::vector<double> g;
  for (i64 o : offsets(x.d)) {
    const double v = value(x, o);
    set(x, o, v + step);
    const double up = f();
    set(x, o, v - step);
    const double down = f();
    set(x, o, v);
    g.push_back((up - down) / (2 * step));
  }
  return g;
}
void expect_grad(const T& dx, const std::vector<double>& want, const std::string& what, double tol) {
  const auto o = offsets(dx.d);
  ASSERT_EQ(o.size(), want.size());
  int bad = 0;
  for (std::size_t i = 0; i < o.size(); ++i) {
    const double g = value(dx, o[i]);
    if (!(std::fabs(g - want[i]) <= tol * (1 + std::fabs(want[i]))) && ++bad <= 3)
      ADD_FAILURE() << what << ": element " << i << " analytic " << g << " numeric " << want[i];
  }
}

TEST(Training, SoftmaxCrossEntropyAndNllMatchFormulaAndGradients) {
  std::mt19937 rng(5);
  Handle h;
  const i64 N = 4, C = 5, D = 3;
  const std::vector<float> weight{0.5f, 1.0f, 2.0f, 1.5f, 0.25f};
  for (bool weighted : {false, true})
    for (float eps : {0.0f, 0.2f})
      for (LossReduction red : {LossReduction::kNone, LossReduction::kSum, LossReduction::kMean})
        for (bool nll : {false, true}) {
          if (nll && eps != 0) continue;
          ClassLossParams p;
          p.reduction = red;
          p.ignore_index = -1;
          p.label_smoothing = eps;
          p.weight = weighted ? weight.data() : nullptr;
          T x = uniform({N, C, D}, Lay::kGaps, rng);
          T lab = make(DType::kI64, {N, D});
          std::uniform_int_distribution<int> pick(0, static_cast<int>(C) - 1);
          for (i64 i = 0; i < N * D; ++i) static_cast<i64*>(lab.p())[i] = i == 4 ? -1 : pick(rng);  // one ignored
          const Idx ld = red == LossReduction::kNone ? Idx{N, D} : Idx{};
          T loss = make(DType::kF32, ld);
          auto forward = [&]() -> Status {
            return nll ? nll_loss_forward(h, p, x.d, x.p(), lab.d, lab.p(), loss.d, loss.p())
                       : softmax_cross_entropy_forward(h, p, x.d, x.p(), lab.d, lab.p(), loss.d, loss.p());
          };
          const std::string what = std::string(nll ? "nll" : "softmax_ce") + " " + std::string(loss_reduction_name(red)) + (weighted ? " weighted" : "") + " eps " + std::to_string(eps);
          ASSERT_TRUE(forward().is_ok()) << what;
          // The formula.
          std::vector<double> per;
          double wsum = 0;
          for (i64 n = 0; n < N; ++n)
            for (i64 d = 0; d < D; ++d) {
              const i64 t = static_cast<i64*>(lab.p())[n * D + d];
              if (t < 0) {
                per.push_back(0);
                continue;
              }
              auto w = [&](i64 c) { return weighted ? static_cast<double>(weight[static_cast<std::size_t>(c)]) : 1.0; };
              wsum += w(t);
              std::vector<double> lp(static_cast<std::size_t>(C));
              double m = -1e300, s = 0;
              for (i64 c = 0; c < C; ++c) m = std::max(m, at(x, {n, c, d}));
              for (i64 c = 0; c < C; ++c) s += std::exp(at(x, {n, c, d}) - m);
              for (i64 c = 0; c < C; ++c) lp[static_cast<std::size_t>(c)] = nll ? at(x, {n, c, d}) : at(x, {n, c, d}) - m - std::log(s);
              double l = -(1 - eps) * w(t) * lp[static_cast<std::size_t>(t)];
              for (i64 c = 0; c < C; ++c) l -= eps / static_cast<double>(C) * w(c) * lp[static_cast<std::size_t>(c)];
              per.push_back(l);
            }
          if (red == LossReduction::kNone) {
            for (std::size_t i = 0; i < per.size(); ++i) EXPECT_NEAR(value(loss, static_cast<i64>(i)), per[i], 1e-5 * (1 + std::fabs(per[i]))) << what;
          } else {
            double sum = 0;
            for (double v : per) sum += v;
            if (red == LossReduction::kMean) sum /= wsum;
            EXPECT_NEAR(value(loss, 0), sum, 1e-5 * (1 + std::fabs(sum))) << what;
          }
          // Gradient of sum_i r_i * loss_i (none) or of the scalar, by central differences.
          T dloss = make(DType::kF32, ld);
          std::vector<double> r;
          for (i64 o : offsets(dloss.d)) {
            r.push_back(std::uniform_real_distribution<double>(0.5, 1.5)(rng));
            set(dloss, o, r.back());
          }
          auto objective = [&]() {
            EXPECT_TRUE(forward().is_ok());
            double s = 0;
            const auto lo = offsets(loss.d);
            for (std::size_t i = 0; i < lo.size(); ++i) s += r[i] * value(loss, lo[i]);
            return s;
          };
          T dx = make(DType::kF32, {N, C, D}, Lay::kReversed);
          const Status s = nll ? nll_loss_backward(h, p, x.d, lab.d, lab.p(), dloss.d, dloss.p(), dx.d, dx.p())
                               : softmax_cross_entropy_backward(h, p, x.d, x.p(), lab.d, lab.p(), dloss.d, dloss.p(), dx.d, dx.p());
          ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
          const auto num = numeric_grad(x, objective, 1e-2);
          expect_grad(dx, num, what + " backward", 3e-3);
        }
}

TEST(Training, PointLossesMatchFormulaAndGradients) {
  std::mt19937 rng(9);
  Handle h;
  for (PointLoss kind : {PointLoss::kMse, PointLoss::kL1, PointLoss::kSmoothL1, PointLoss::kBceWithLogits})
    for (LossReduction red : {LossReduction::kNone, LossReduction::kSum, LossReduction::kMean}) {
      PointLossParams p;
      p.kind = kind;
      p.reduction = red;
      p.beta = 0.7f;
      p.pos_weight = 1.7f;
      const Idx dims{3, 7};
      T x = uniform(dims, Lay::kGaps, rng), t = make(DType::kF32, dims);
      // Targets away from the kinks (|x - t| not near 0 or beta); probabilities for BCE.
      const auto xo = offsets(x.d), to = offsets(t.d);
      for (std::size_t i = 0; i < xo.size(); ++i) {
        const double xv = value(x, xo[i]);
        const double off = (i % 2 == 0 ? 1 : -1) * (i % 3 == 0 ? 0.3 : 1.2);
        set(t, to[i], kind == PointLoss::kBceWithLogits ? (i % 4) / 3.0 : xv - off);
      }
      const Idx ld = red == LossReduction::kNone ? dims : Idx{};
      T loss = make(DType::kF32, ld);
      const std::string what = std::string(point_loss_name(kind)) + " " + std::string(loss_reduction_name(red));
      auto forward = [&] { return point_loss_forward(h, p, x.d, x.p(), t.d, t.p(), loss.d, loss.p()); };
      ASSERT_TRUE(forward().is_ok()) << what;
      double sum = 0;
      std::vector<double> per;
      for (std::size_t i = 0; i < xo.size(); ++i) {
        const double xv = value(x, xo[i]), tv = value(t, to[i]), d = xv - tv;
        double v = 0;
        if (kind == PointLoss::kMse) v = d * d;
        if (kind == PointLoss::kL1) v = std::fabs(d);
        if (kind == PointLoss::kSmoothL1) v = std::fabs(d) < 0.7 ? 0.5 * d * d / 0.7 : std::fabs(d) - 0.35;
        if (kind == PointLoss::kBceWithLogits) {
          const double sig = 1 / (1 + std::exp(-xv));
          v = -(1.7 * tv * std::log(sig) + (1 - tv) * std::log(1 - sig));
        }
        per.push_back(v);
        sum += v;
      }
      if (red == LossReduction::kNone) {
        for (std::size_t i = 0; i < per.size(); ++i) EXPECT_NEAR(value(loss, static_cast<i64>(i)), per[i], 1e-5 * (1 + per[i])) << what;
      } else {
        EXPECT_NEAR(value(loss, 0), red == LossReduction::kMean ? sum / static_cast<double>(per.size()) : sum, 1e-5 * (1 + sum)) << what;
      }
      T dloss = make(DType::kF32, ld);
      std::vector<double> r;
      for (i64 o : offsets(dloss.d)) {
        r.push_back(std::uniform_real_distribution<double>(0.5, 1.5)(rng));
        set(dloss, o, r.back());
      }
      auto objective = [&]() {
        EXPECT_TRUE(forward().is_ok());
        double s = 0;
        const auto lo = offsets(loss.d);
        for (std::size_t i = 0; i < lo.size(); ++i) s += r[i] * value(loss, lo[i]);
        return s;
      };
      T dx = make(DType::kF32, dims);
      ASSERT_TRUE(point_loss_backward(h, p, x.d, x.p(), t.d, t.p(), dloss.d, dloss.p(), dx.d, dx.p()).is_ok()) << what;
      expect_grad(dx, numeric_grad(x, objective, 1e-2), what + " backward", 3e-3);
    }
}

// ---- the fast paths against the reference -------------------------------------------------------
// Packed tensors take the ISA kernels (every level this CPU has); the same values with gaps
// between the elements take the reference. Results must agree: dropout bit for bit, losses
// within the f32 kernels' error (a few f32 ulps, or one ulp of a 16-bit output) plus `atol`.

// x's values in another layout (bit copies of the elements, row-major order).
T relayout(const T& x, Lay lay) {
  T y = make(x.d.dtype, x.d.dims, lay);
  const auto xo = offsets(x.d), yo = offsets(y.d);
  const std::size_t b = dtype_size(x.d.dtype);
  for (std::size_t i = 0; i < xo.size(); ++i)
    std::memcpy(y.mem.data() + static_cast<std::size_t>(yo[i]) * b, x.mem.data() + static_cast<std::size_t>(xo[i]) * b, b);
  return y;
}
// Plain values uniform in [lo, hi) in `t`'s dtype, packed.
T random_tensor(DType t, const Idx& dims, std::mt19937& rng, double lo, double hi) {
  T x = make(t, dims);
  std::uniform_real_distribution<double> u(lo, hi);
  const std::size_t b = dtype_size(t);
  for (i64 o : offsets(x.d)) {
    const float v = static_cast<float>(u(rng));
    unsigned char* at = x.mem.data() + static_cast<std::size_t>(o) * b;
    if (t == DType::kF32) std::memcpy(at, &v, 4);
    if (t == DType::kBF16) *reinterpret_cast<std::uint16_t*>(at) = f32_to_bf16_bits(v);
    if (t == DType::kF16) *reinterpret_cast<std::uint16_t*>(at) = f32_to_f16_bits(v);
  }
  return x;
}
// got (any layout) against want (any layout), element by element in row-major order.
void expect_near(const T& got, const T& want, double rel, double atol, const std::string& what) {
  const auto go = offsets(got.d), wo = offsets(want.d);
  ASSERT_EQ(go.size(), wo.size()) << what;
  const double ulp = got.d.dtype == DType::kF16 ? 0x1p-10 : got.d.dtype == DType::kBF16 ? 0x1p-7 : 0.0;
  int bad = 0;
  for (std::size_t i = 0; i < go.size(); ++i) {
    const double g = value(got, go[i]), w = value(want, wo[i]);
    const bool ok = g == w || (std::isnan(g) && std::isnan(w)) || std::fabs(g - w) <= (rel + ulp) * std::fabs(w) + atol;
    if (!ok && ++bad <= 5) ADD_FAILURE() << what << ": element " << i << " got " << g << " want " << w;
  }
}
// Bit patterns equal, element by element in row-major order.
void expect_bits(const T& got, const T& want, const std::string& what) { expect_near(got, want, 0, 0, what); }

constexpr DType kFloatTypes[] = {DType::kF32, DType::kBF16, DType::kF16};

TEST(Training, DropoutFastPathsMatchTheReferenceBitForBit) {
  std::mt19937 rng(21);
  // Sizes around the 64-element blocks and the 2048-element chunks; NaN and infinities included.
  for (const Idx& dims : {Idx{1}, Idx{63}, Idx{3, 43}, Idx{2049}, Idx{5, 1000, 7}})
    for (DType dt : kFloatTypes)
      for (float ratio : {0.0f, 0.3f, 0.9f, 1.0f}) {
        T x = make(dt, dims);
        fill(x, rng);
        const std::uint64_t seed = 0x1234567890abcdefull, offset = 0xfedcba987ull;
        const std::string what = std::string(dtype_name(dt)) + " " + std::to_string(x.d.numel()) + " ratio " + std::to_string(ratio);
        Handle h;
        T xg = relayout(x, Lay::kGaps), yr = make(dt, dims, Lay::kGaps), mr = make(DType::kBool, dims, Lay::kGaps);
        ASSERT_TRUE(dropout_forward(h, ratio, seed, offset, xg.d, xg.p(), yr.d, yr.p(), mr.d, mr.p()).is_ok());
        T dy = make(dt, dims);
        fill(dy, rng);
        T dyg = relayout(dy, Lay::kGaps), dxr = make(dt, dims, Lay::kGaps);
        ASSERT_TRUE(dropout_backward(h, ratio, mr.d, mr.p(), dyg.d, dyg.p(), dxr.d, dxr.p()).is_ok());
        testing::for_each_isa([&](Isa) {
          for (int threads : {1, 2}) {
            ASSERT_TRUE(h.set_num_threads(threads).is_ok());
            T y = make(dt, dims), m = make(DType::kBool, dims), y2 = make(dt, dims);
            ASSERT_TRUE(dropout_forward(h, ratio, seed, offset, x.d, x.p(), y.d, y.p(), m.d, m.p()).is_ok());
            expect_bits(y, yr, what + " y");
            expect_bits(m, mr, what + " mask");
            ASSERT_TRUE(dropout_forward(h, ratio, seed, offset, x.d, x.p(), y2.d, y2.p(), m.d, nullptr).is_ok());
            expect_bits(y2, yr, what + " y without a mask");
            T dx = make(dt, dims);
            ASSERT_TRUE(dropout_backward(h, ratio, m.d, m.p(), dy.d, dy.p(), dx.d, dx.p()).is_ok());
            expect_bits(dx, dxr, what + " dx");
          }
        });
      }
}

// Beyond 2^34 elements the Philox counter's second word is the group index's high half: the
// kernels run a window across that boundary directly (no tensor that large is needed), against
// the published generator word by word.
TEST(Training, DropoutKernelsCarryTheCounterPastTwoToThe32Groups) {
  std::vector<const training_kernels::Kernels*> tables{&training_kernels::kGeneric};
  if (cpu_info().has(CpuFeature::kAvx2) && cpu_info().has(CpuFeature::kFma)) tables.push_back(&training_kernels::kAvx2);
  if (cpu_info().has(CpuFeature::kAvx512f) && cpu_info().has(CpuFeature::kAvx512bw) && cpu_info().has(CpuFeature::kAvx512dq) &&
      cpu_info().has(CpuFeature::kAvx512vl))
    tables.push_back(&training_kernels::kAvx512);
  const i64 first = (i64{1} << 34) - 128, n = 251;  // groups 2^32 - 32 .. 2^32 + 30, a partial tail
  const float ratio = 0.4f;
  training_kernels::DropoutArgs a{};
  a.key[0] = 0x9abcdef0u;
  a.key[1] = 0x12345678u;
  for (std::uint32_t r = 0; r < 10; ++r) {
    a.round_key[r][0] = a.key[0] + r * 0x9E3779B9u;
    a.round_key[r][1] = a.key[1] + r * 0xBB67AE85u;
  }
  a.offset[0] = 7;
  a.offset[1] = 1;
  a.threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(ratio) * 0x1p24));
  a.scale = 1.0f / (1.0f - ratio);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  std::vector<unsigned char> want(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) {
    const auto g = static_cast<std::uint64_t>(first + i) / 4;
    const std::uint32_t ctr[4] = {static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(g >> 32), a.offset[0], a.offset[1]};
    std::uint32_t r[4];
    philox4x32(ctr, a.key, r);
    want[static_cast<std::size_t>(i)] = static_cast<float>(r[(first + i) % 4] >> 8) * 0x1p-24f >= ratio ? 1 : 0;
  }
  for (const auto* t : tables) {
    std::vector<float> y(static_cast<std::size_t>(n), -1.0f);
    std::vector<unsigned char> m(static_cast<std::size_t>(n), 7);
    t->dropout_fwd[act_kernels::kF32](first, n, x.data(), y.data(), m.data(), a, false);
    EXPECT_EQ(m, want) << t->isa;
    for (i64 i = 0; i < n; ++i) {
      const auto u = static_cast<std::size_t>(i);
      EXPECT_EQ(y[u], want[u] != 0 ? x[u] * a.scale : 0.0f) << t->isa << " element " << i;
    }
  }
}

TEST(Training, PointLossFastPathsMatchTheReference) {
  std::mt19937 rng(22);
  for (PointLoss kind : {PointLoss::kMse, PointLoss::kL1, PointLoss::kSmoothL1, PointLoss::kBceWithLogits})
    for (LossReduction red : {LossReduction::kNone, LossReduction::kSum, LossReduction::kMean})
      for (DType dt : kFloatTypes)
        for (const Idx& dims : {Idx{5}, Idx{3, 37}, Idx{7, 5000}}) {
          PointLossParams p;
          p.kind = kind;
          p.reduction = red;
          p.beta = 0.7f;
          p.pos_weight = 1.7f;
          const bool bce = kind == PointLoss::kBceWithLogits;
          T x = random_tensor(dt, dims, rng, -6, 6), t = random_tensor(dt, dims, rng, bce ? 0 : -6, bce ? 1 : 6);
          const Idx ld = red == LossReduction::kNone ? dims : Idx{};
          T g = random_tensor(dt, ld, rng, 0.5, 1.5);
          const std::string what = std::string(point_loss_name(kind)) + " " + std::string(loss_reduction_name(red)) + " " +
                                   std::string(dtype_name(dt)) + " " + std::to_string(x.d.numel());
          Handle h;
          T xg = relayout(x, Lay::kGaps), tg = relayout(t, Lay::kGaps), gg = relayout(g, Lay::kGaps);
          T lr = make(dt, ld, Lay::kGaps), dxr = make(dt, dims, Lay::kGaps);
          ASSERT_TRUE(point_loss_forward(h, p, xg.d, xg.p(), tg.d, tg.p(), lr.d, lr.p()).is_ok()) << what;
          ASSERT_TRUE(point_loss_backward(h, p, xg.d, xg.p(), tg.d, tg.p(), gg.d, gg.p(), dxr.d, dxr.p()).is_ok()) << what;
          // Sums add f32 blocks of 1024 terms (all terms >= 0 here).
          const double rel = red == LossReduction::kNone ? 3e-6 : 2e-5;
          testing::for_each_isa([&](Isa) {
            std::vector<unsigned char> first;
            for (int threads : {1, 2}) {
              ASSERT_TRUE(h.set_num_threads(threads).is_ok());
              T l = make(dt, ld), dx = make(dt, dims);
              ASSERT_TRUE(point_loss_forward(h, p, x.d, x.p(), t.d, t.p(), l.d, l.p()).is_ok()) << what;
              ASSERT_TRUE(point_loss_backward(h, p, x.d, x.p(), t.d, t.p(), g.d, g.p(), dx.d, dx.p()).is_ok()) << what;
              expect_near(l, lr, rel, 1e-30, what + " loss");
              // bce's gradient cancels where sigmoid(x) is near t: one f32 ulp of 1 absolute.
              expect_near(dx, dxr, 3e-6, bce ? 3e-7 : 1e-30, what + " dx");
              if (threads == 1) first = l.mem;
              else EXPECT_EQ(l.mem, first) << what << ": the loss depends on the thread count";
            }
          });
        }
}

TEST(Training, PointLossFastPathsKeepSpecialValues) {
  // NaN and infinities through every kind (reduction none, so each element is compared).
  std::mt19937 rng(23);
  for (PointLoss kind : {PointLoss::kMse, PointLoss::kL1, PointLoss::kSmoothL1, PointLoss::kBceWithLogits}) {
    PointLossParams p;
    p.kind = kind;
    p.reduction = LossReduction::kNone;
    const Idx dims{41, 29};
    T x = make(DType::kF32, dims), t = random_tensor(DType::kF32, dims, rng, 0, 1), g = random_tensor(DType::kF32, dims, rng, 0.5, 1.5);
    fill(x, rng);
    Handle h;
    T xg = relayout(x, Lay::kGaps), tg = relayout(t, Lay::kGaps), gg = relayout(g, Lay::kGaps);
    T lr = make(DType::kF32, dims, Lay::kGaps), dxr = make(DType::kF32, dims, Lay::kGaps);
    ASSERT_TRUE(point_loss_forward(h, p, xg.d, xg.p(), tg.d, tg.p(), lr.d, lr.p()).is_ok());
    ASSERT_TRUE(point_loss_backward(h, p, xg.d, xg.p(), tg.d, tg.p(), gg.d, gg.p(), dxr.d, dxr.p()).is_ok());
    testing::for_each_isa([&](Isa) {
      T l = make(DType::kF32, dims), dx = make(DType::kF32, dims);
      ASSERT_TRUE(point_loss_forward(h, p, x.d, x.p(), t.d, t.p(), l.d, l.p()).is_ok());
      ASSERT_TRUE(point_loss_backward(h, p, x.d, x.p(), t.d, t.p(), g.d, g.p(), dx.d, dx.p()).is_ok());
      const std::string what(point_loss_name(kind));
      expect_near(l, lr, 3e-6, 1e-30, what + " loss");
      expect_near(dx, dxr, 3e-6, kind == PointLoss::kBceWithLogits ? 3e-7 : 1e-30, what + " dx");
    });
  }
}

// A packed tensor in the channels-last order (dim 1 innermost).
T make_nhwc(DType t, const Idx& dims) {
  T x;
  x.d = TensorDesc::make(t, dims, Layout::kNHWC);
  x.mem.assign(static_cast<std::size_t>(std::max<i64>(1, x.d.span())) * dtype_size(t), 0xA5);
  return x;
}

TEST(Training, SoftmaxCrossEntropyFastPathsMatchTheReference) {
  std::mt19937 rng(24);
  std::vector<float> weight(5000);
  for (float& w : weight) w = std::uniform_real_distribution<float>(0.25f, 2.0f)(rng);
  // [N, C] rows; [N, C, H, W] packed row-major (the column kernels: 35 samples per slice, or
  // 1320 across units of 1024, classes across blocks of 256) and channels-last (rows again).
  struct Shape {
    Idx dims;
    bool nhwc;
  };
  std::vector<Shape> shapes;
  for (i64 C : {1, 7, 100, 1030, 5000}) shapes.push_back({{C >= 1000 ? 9 : 37, C}, false});
  for (i64 C : {1, 21, 300})
    for (bool nhwc : {false, true}) shapes.push_back({{3, C, 5, 7}, nhwc});
  shapes.push_back({{2, 21, 33, 40}, false});
  for (const Shape& sh : shapes)
    for (DType dt : kFloatTypes)
      for (LossReduction red : {LossReduction::kNone, LossReduction::kSum, LossReduction::kMean})
        for (bool weighted : {false, true})
          for (float eps : {0.0f, 0.1f}) {
            const i64 C = sh.dims[1];
            Idx sd = sh.dims;
            sd.erase(sd.begin() + 1);
            i64 n = 1;
            for (i64 d : sd) n *= d;
            ClassLossParams p;
            p.reduction = red;
            p.ignore_index = 2;
            p.label_smoothing = eps;
            p.weight = weighted ? weight.data() : nullptr;
            T x = random_tensor(dt, sh.dims, rng, -8, 8);
            if (sh.nhwc) {
              T y = make_nhwc(dt, sh.dims);
              const auto xo = offsets(x.d), yo = offsets(y.d);
              const std::size_t b = dtype_size(dt);
              for (std::size_t i = 0; i < xo.size(); ++i)
                std::memcpy(y.mem.data() + static_cast<std::size_t>(yo[i]) * b, x.mem.data() + static_cast<std::size_t>(xo[i]) * b, b);
              x = y;
            }
            T lab = make(DType::kI64, sd);
            std::uniform_int_distribution<i64> pick(0, C - 1);
            for (i64 i = 0; i < n; ++i) static_cast<i64*>(lab.p())[i] = i % 5 == 2 ? 2 : pick(rng);  // some ignored
            const Idx ld = red == LossReduction::kNone ? sd : Idx{};
            T g = random_tensor(dt, ld, rng, 0.5, 1.5);
            const std::string what = std::string(dtype_name(dt)) + " " + x.d.to_string() + " " + std::string(loss_reduction_name(red)) +
                                     (weighted ? " weighted" : "") + " eps " + std::to_string(eps);
            Handle h;
            T xg = relayout(x, Lay::kGaps), lr = make(dt, ld, Lay::kGaps), dxr = make(dt, sh.dims, Lay::kGaps);
            ASSERT_TRUE(softmax_cross_entropy_forward(h, p, xg.d, xg.p(), lab.d, lab.p(), lr.d, lr.p()).is_ok()) << what;
            ASSERT_TRUE(softmax_cross_entropy_backward(h, p, xg.d, xg.p(), lab.d, lab.p(), g.d, g.p(), dxr.d, dxr.p()).is_ok()) << what;
            testing::for_each_isa([&](Isa) {
              std::vector<unsigned char> first;
              for (int threads : {1, 2}) {
                ASSERT_TRUE(h.set_num_threads(threads).is_ok());
                T l = make(dt, ld), dx = sh.nhwc ? make_nhwc(dt, sh.dims) : make(dt, sh.dims);
                ASSERT_TRUE(softmax_cross_entropy_forward(h, p, x.d, x.p(), lab.d, lab.p(), l.d, l.p()).is_ok()) << what;
                ASSERT_TRUE(softmax_cross_entropy_backward(h, p, x.d, x.p(), lab.d, lab.p(), g.d, g.p(), dx.d, dx.p()).is_ok()) << what;
                // The loss subtracts x_t from lse (up to about 17 here): f32 errors of lse absolute.
                expect_near(l, lr, 1e-5, red == LossReduction::kNone ? 3e-5 : 3e-5 * static_cast<double>(n), what + " loss");
                expect_near(dx, dxr, 3e-5, 1e-6, what + " dx");  // terms up to about 3 cancel
                if (threads == 1) first = l.mem;
                else EXPECT_EQ(l.mem, first) << what << ": the loss depends on the thread count";
              }
            });
          }
}

TEST(Training, NllBackwardDenseMatchesTheReference) {
  std::mt19937 rng(25);
  const Idx dims{6, 11, 3};
  T lab = make(DType::kI32, {6, 3});
  for (i64 i = 0; i < 18; ++i) static_cast<std::int32_t*>(lab.p())[i] = i == 4 ? -100 : static_cast<std::int32_t>(i % 11);
  for (LossReduction red : {LossReduction::kNone, LossReduction::kMean}) {
    ClassLossParams p;
    p.reduction = red;
    const Idx ld = red == LossReduction::kNone ? Idx{6, 3} : Idx{};
    T g = random_tensor(DType::kF32, ld, rng, 0.5, 1.5), x = make(DType::kF32, dims);
    Handle h;
    T dxr = make(DType::kF32, dims, Lay::kGaps), dx = make(DType::kF32, dims, Lay::kReversed);
    std::fill(dx.mem.begin(), dx.mem.end(), 0x7f);  // every element must be written
    ASSERT_TRUE(nll_loss_backward(h, p, x.d, lab.d, lab.p(), g.d, g.p(), dxr.d, dxr.p()).is_ok());
    ASSERT_TRUE(nll_loss_backward(h, p, x.d, lab.d, lab.p(), g.d, g.p(), dx.d, dx.p()).is_ok());
    expect_bits(dx, dxr, std::string("nll ") + std::string(loss_reduction_name(red)));
  }
}

TEST(Training, BadArguments) {
  Handle h;
  T x = make(DType::kF32, {2, 3}), lab = make(DType::kI64, {2}), loss = make(DType::kF32, {});
  static_cast<i64*>(lab.p())[0] = 1;
  static_cast<i64*>(lab.p())[1] = 3;
  ClassLossParams p;
  Status s = softmax_cross_entropy_forward(h, p, x.d, x.p(), lab.d, lab.p(), loss.d, loss.p());
  EXPECT_NE(s.message().find("label 3 at position 1 is outside [0, 3)"), std::string::npos) << s.message();
  T wrong = make(DType::kF32, {2});
  static_cast<i64*>(lab.p())[1] = 0;
  s = softmax_cross_entropy_forward(h, p, x.d, x.p(), lab.d, lab.p(), wrong.d, wrong.p());
  EXPECT_NE(s.message().find("loss dims [2] must be []"), std::string::npos) << s.message();
  PointLossParams q;
  q.kind = PointLoss::kSmoothL1;
  q.beta = 0;
  s = point_loss_forward(h, q, x.d, x.p(), x.d, x.p(), loss.d, loss.p());
  EXPECT_NE(s.message().find("beta"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::dnn
