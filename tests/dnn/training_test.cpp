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

#include "tensor_test_util.hpp"

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
