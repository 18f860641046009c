// Batch, layer, group and instance norm against their reference (reached through strided
// tensors) over ranks, channel counts around the vector widths, both layouts, every ISA,
// bf16/f16; the same bits for any thread count; NaN-filled outputs fully written; the
// reference against an independent f64 oracle; every backward (dx, dscale, dbias) by finite
// differences; running statistics; bad arguments.
#include <cmath>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "pool_norm_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using std::int64_t;
using tessera::testing::for_each_isa;
using testing::Buf;
using testing::close;
using testing::get;
using testing::identical;
using testing::make_buf;
using testing::quiet_nan;
using testing::random_values;
using testing::strided;

std::string dims_str(const std::vector<int64_t>& d) {
  return ::testing::PrintToString(d);
}

int64_t spatial(const std::vector<int64_t>& d) {
  int64_t s = 1;
  for (std::size_t i = 2; i < d.size(); ++i) s *= d[i];
  return s;
}

std::vector<float> nans(int64_t n) {
  return std::vector<float>(static_cast<std::size_t>(n), quiet_nan());
}

// ---- batch norm ---------------------------------------------------------------------------

struct BnData {
  std::vector<float> x, dy, scale, bias, mean, var, running_mean, running_var;
};

BnData bn_data(const std::vector<int64_t>& dims, BatchNormMode mode, std::mt19937_64& g,
               float offset = 0.0f) {
  const int64_t numel = dims[0] * dims[1] * spatial(dims);
  const int64_t f = dims[1] * (mode == BatchNormMode::kSpatial ? 1 : spatial(dims));
  BnData d;
  d.x = random_values(static_cast<std::size_t>(numel), g, offset - 1.0f, offset + 1.5f);
  d.dy = random_values(static_cast<std::size_t>(numel), g);
  d.scale = random_values(static_cast<std::size_t>(f), g, 0.5f, 1.5f);
  d.bias = random_values(static_cast<std::size_t>(f), g);
  d.mean = random_values(static_cast<std::size_t>(f), g, -0.2f, 0.2f);
  d.var = random_values(static_cast<std::size_t>(f), g, 0.5f, 2.0f);
  d.running_mean = random_values(static_cast<std::size_t>(f), g);
  d.running_var = random_values(static_cast<std::size_t>(f), g, 0.5f, 1.5f);
  return d;
}

struct BnOut {
  std::vector<float> out, saved_mean, saved_invstd, running_mean, running_var, dscale, dbias;
};

constexpr double kEps = 1e-5;

BnOut bn_train(Handle& h, BatchNormMode mode, const TensorDesc& xd, const TensorDesc& yd,
               const BnData& d, bool running, double momentum = 0.1) {
  const Buf x = make_buf(xd, d.x, 3.0f);
  Buf y = make_buf(yd);
  BnOut o;
  const auto f = static_cast<int64_t>(d.scale.size());
  o.saved_mean = nans(f);
  o.saved_invstd = nans(f);
  o.running_mean = d.running_mean;
  o.running_var = d.running_var;
  const Status s = batch_norm_forward_training(
      h, mode, xd, x.data(), d.scale.data(), d.bias.data(), kEps, momentum,
      running ? o.running_mean.data() : nullptr, running ? o.running_var.data() : nullptr,
      o.saved_mean.data(), o.saved_invstd.data(), yd, y.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  o.out = get(y);
  return o;
}

BnOut bn_infer(Handle& h, BatchNormMode mode, const TensorDesc& xd, const TensorDesc& yd,
               const BnData& d) {
  const Buf x = make_buf(xd, d.x, 3.0f);
  Buf y = make_buf(yd);
  const Status s =
      batch_norm_forward_inference(h, mode, xd, x.data(), d.scale.data(), d.bias.data(),
                                   d.mean.data(), d.var.data(), kEps, yd, y.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  BnOut o;
  o.out = get(y);
  return o;
}

// Backward around statistics `st` (saved_mean, saved_invstd of a training forward).
BnOut bn_backward(Handle& h, BatchNormMode mode, const TensorDesc& xd, const TensorDesc& dyd,
                  const TensorDesc& dxd, const BnData& d, const BnOut& st) {
  const Buf x = make_buf(xd, d.x, 3.0f);
  const Buf dy = make_buf(dyd, d.dy, 3.0f);
  Buf dx = make_buf(dxd);
  BnOut o;
  o.dscale = nans(static_cast<int64_t>(d.scale.size()));
  o.dbias = nans(static_cast<int64_t>(d.scale.size()));
  const Status s = batch_norm_backward(h, mode, xd, x.data(), dyd, dy.data(), d.scale.data(),
                                       st.saved_mean.data(), st.saved_invstd.data(), dxd, dx.data(),
                                       o.dscale.data(), o.dbias.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  o.out = get(dx);
  return o;
}

const std::vector<std::vector<int64_t>> kBnShapes = {
    {5, 17},       {3, 16, 23},   {2, 1, 5, 7},  {2, 3, 5, 7},    {2, 15, 5, 7},    {2, 16, 5, 7},
    {2, 17, 5, 7}, {2, 33, 5, 7}, {3, 17, 1, 1}, {2, 3, 3, 4, 5}, {2, 17, 3, 4, 5},
};

const BatchNormMode kModes[] = {BatchNormMode::kSpatial, BatchNormMode::kPerActivation};

TEST(BatchNorm, FastPathsMatchReference) {
  Handle h;
  std::mt19937_64 gen(1);
  for (const auto& dims : kBnShapes)
    for (BatchNormMode mode : kModes) {
      SCOPED_TRACE(dims_str(dims) + (mode == BatchNormMode::kSpatial ? " spatial" : " per-act"));
      const BnData d = bn_data(dims, mode, gen, 0.5f);
      const TensorDesc rd = strided(DType::kF32, dims);
      const BnOut rt = bn_train(h, mode, rd, rd, d, true);
      const BnOut ri = bn_infer(h, mode, rd, rd, d);
      const BnOut rb = bn_backward(h, mode, rd, rd, rd, d, rt);
      for_each_isa([&](Isa) {
        for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
          SCOPED_TRACE(std::string(layout_name(l)));
          const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
          const BnOut t = bn_train(h, mode, td, td, d, true);
          EXPECT_TRUE(close(t.out, rt.out, 2e-5, 2e-5));
          EXPECT_TRUE(close(t.saved_mean, rt.saved_mean, 1e-6, 1e-5));
          EXPECT_TRUE(close(t.saved_invstd, rt.saved_invstd, 1e-6, 2e-5));
          EXPECT_TRUE(close(t.running_mean, rt.running_mean, 1e-6, 1e-5));
          EXPECT_TRUE(close(t.running_var, rt.running_var, 1e-6, 2e-5));
          EXPECT_TRUE(close(bn_infer(h, mode, td, td, d).out, ri.out, 2e-5, 2e-5));
          const BnOut b = bn_backward(h, mode, td, td, td, d, rt);
          EXPECT_TRUE(close(b.out, rb.out, 2e-5, 2e-5));
          EXPECT_TRUE(close(b.dscale, rb.dscale, 2e-5, 2e-5));
          EXPECT_TRUE(close(b.dbias, rb.dbias, 2e-5, 2e-5));
        }
      });
    }
}

// Data far from zero: the shifted moments keep the variance from cancelling.
TEST(BatchNorm, LargeMeanKeepsVariance) {
  Handle h;
  std::mt19937_64 gen(2);
  const std::vector<int64_t> dims = {4, 17, 9, 9};
  for (BatchNormMode mode : kModes) {
    const BnData d = bn_data(dims, mode, gen, 3000.0f);
    const TensorDesc rd = strided(DType::kF32, dims);
    const BnOut r = bn_train(h, mode, rd, rd, d, false);
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
      const BnOut t = bn_train(h, mode, td, td, d, false);
      EXPECT_TRUE(close(t.saved_invstd, r.saved_invstd, 0.0, 1e-4));
      EXPECT_TRUE(close(t.out, r.out, 1e-3, 0.0));
    }
  }
}

// An oracle written here in f64: y, the batch statistics and the running update of the header.
TEST(BatchNorm, ReferenceMatchesIndependentOracle) {
  Handle h;
  std::mt19937_64 gen(3);
  const std::vector<int64_t> dims = {3, 4, 2, 5};
  const int64_t n_ = 3, c_ = 4, s_ = 10;
  for (BatchNormMode mode : kModes) {
    const BnData d = bn_data(dims, mode, gen);
    const double momentum = 0.3;
    for (const TensorDesc& xd : {strided(DType::kF32, dims), TensorDesc::make(DType::kF32, dims)}) {
      const BnOut t = bn_train(h, mode, xd, xd, d, true, momentum);
      const bool sp = mode == BatchNormMode::kSpatial;
      for (int64_t f = 0; f < (sp ? c_ : c_ * s_); ++f) {
        std::vector<int64_t> at;  // logical indices of feature f
        for (int64_t n = 0; n < n_; ++n)
          for (int64_t s = 0; s < s_; ++s)
            if (sp || s == f % s_) at.push_back(n * c_ * s_ + (sp ? f : f / s_) * s_ + s);
        double mean = 0.0, var = 0.0;
        for (int64_t i : at) mean += d.x[static_cast<std::size_t>(i)];
        mean /= static_cast<double>(at.size());
        for (int64_t i : at) var += std::pow(d.x[static_cast<std::size_t>(i)] - mean, 2);
        var /= static_cast<double>(at.size());
        const double invstd = 1.0 / std::sqrt(var + kEps);
        const auto fi = static_cast<std::size_t>(f);
        EXPECT_NEAR(t.saved_mean[fi], mean, 1e-6);
        EXPECT_NEAR(t.saved_invstd[fi], invstd, 1e-5 * invstd);
        EXPECT_NEAR(t.running_mean[fi], 0.7 * d.running_mean[fi] + 0.3 * mean, 1e-6);
        const double unbiased = var * static_cast<double>(at.size()) / (at.size() - 1.0);
        EXPECT_NEAR(t.running_var[fi], 0.7 * d.running_var[fi] + 0.3 * unbiased, 1e-6);
        for (int64_t i : at) {
          const double y =
              (d.x[static_cast<std::size_t>(i)] - mean) * invstd * d.scale[fi] + d.bias[fi];
          EXPECT_NEAR(t.out[static_cast<std::size_t>(i)], y, 2e-6);
        }
      }
    }
  }
}

// Momentum 0 keeps the running statistics; momentum 1 replaces them by the batch's (variance
// unbiased); without running statistics nothing else changes.
TEST(BatchNorm, RunningStatistics) {
  Handle h;
  std::mt19937_64 gen(4);
  const std::vector<int64_t> dims = {4, 3, 2, 2};
  const BnData d = bn_data(dims, BatchNormMode::kSpatial, gen);
  for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
    const TensorDesc xd = TensorDesc::make(DType::kF32, dims, l);
    const BnOut keep = bn_train(h, BatchNormMode::kSpatial, xd, xd, d, true, 0.0);
    EXPECT_EQ(keep.running_mean, d.running_mean);
    EXPECT_EQ(keep.running_var, d.running_var);
    const BnOut take = bn_train(h, BatchNormMode::kSpatial, xd, xd, d, true, 1.0);
    const BnOut none = bn_train(h, BatchNormMode::kSpatial, xd, xd, d, false);
    EXPECT_TRUE(identical(none.out, take.out));
    for (std::size_t c = 0; c < 3; ++c) {
      EXPECT_FLOAT_EQ(take.running_mean[c], take.saved_mean[c]);
      const double var = 1.0 / std::pow(static_cast<double>(take.saved_invstd[c]), 2) - kEps;
      EXPECT_NEAR(take.running_var[c], var * 16.0 / 15.0, 1e-5);
    }
  }
}

TEST(BatchNorm, SameBitsForAnyThreadCount) {
  Handle h1, h2;
  ASSERT_TRUE(h1.set_num_threads(1).is_ok());
  ASSERT_TRUE(h2.set_num_threads(2).is_ok());
  std::mt19937_64 gen(5);
  for (const auto& dims :
       {std::vector<int64_t>{4, 64, 30, 30}, std::vector<int64_t>{16, 8, 20, 20}})
    for (BatchNormMode mode : kModes)
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        SCOPED_TRACE(dims_str(dims) + std::string(layout_name(l)));
        const BnData d = bn_data(dims, mode, gen);
        const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
        const BnOut a = bn_train(h1, mode, td, td, d, true),
                    b = bn_train(h2, mode, td, td, d, true);
        EXPECT_TRUE(identical(a.out, b.out));
        EXPECT_TRUE(identical(a.saved_mean, b.saved_mean));
        EXPECT_TRUE(identical(a.saved_invstd, b.saved_invstd));
        EXPECT_TRUE(identical(a.running_var, b.running_var));
        const BnOut ga = bn_backward(h1, mode, td, td, td, d, a);
        const BnOut gb = bn_backward(h2, mode, td, td, td, d, a);
        EXPECT_TRUE(identical(ga.out, gb.out));
        EXPECT_TRUE(identical(ga.dscale, gb.dscale));
        EXPECT_TRUE(identical(ga.dbias, gb.dbias));
        EXPECT_TRUE(
            identical(bn_infer(h1, mode, td, td, d).out, bn_infer(h2, mode, td, td, d).out));
      }
}

TEST(BatchNorm, HalfPrecision) {
  Handle h;
  std::mt19937_64 gen(6);
  const std::vector<int64_t> dims = {3, 17, 5, 6};
  for (DType t : {DType::kBF16, DType::kF16})
    for (BatchNormMode mode : kModes) {
      BnData d = bn_data(dims, mode, gen);
      d.x = testing::rounded(d.x, t);
      d.dy = testing::rounded(d.dy, t);
      const double tol = t == DType::kBF16 ? 2e-2 : 3e-3;
      const TensorDesc rd = strided(t, dims);
      const BnOut rt = bn_train(h, mode, rd, rd, d, false);
      const BnOut rb = bn_backward(h, mode, rd, rd, rd, d, rt);
      for_each_isa([&](Isa) {
        for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
          const TensorDesc td = TensorDesc::make(t, dims, l);
          const BnOut a = bn_train(h, mode, td, td, d, false);
          EXPECT_TRUE(close(a.out, rt.out, tol, tol));
          EXPECT_TRUE(close(a.saved_invstd, rt.saved_invstd, 1e-5, 1e-5));
          const BnOut b = bn_backward(h, mode, td, td, td, d, rt);
          EXPECT_TRUE(close(b.out, rb.out, tol, tol));
          EXPECT_TRUE(close(b.dscale, rb.dscale, 1e-4, 1e-4));
        }
      });
    }
}

// Central differences of L = sum(w * y) where y uses the batch statistics of x.
template <typename Loss>
void check_fd(const std::vector<float>& v, const std::vector<float>& grad, Loss&& loss,
              const char* what, float step = 4e-3f, double tol = 3e-3) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::vector<float> a = v, b = v;
    a[i] += step;
    b[i] -= step;
    const double fd = (loss(a) - loss(b)) / (static_cast<double>(a[i]) - b[i]);
    ASSERT_NEAR(grad[i], fd, tol * (1.0 + std::fabs(fd))) << what << " element " << i;
  }
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

TEST(BatchNorm, BackwardMatchesFiniteDifferences) {
  Handle h;
  std::mt19937_64 gen(7);
  const std::vector<int64_t> dims = {3, 2, 2, 3};
  for (BatchNormMode mode : kModes)
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const BnData d = bn_data(dims, mode, gen);
      const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
      const BnOut st = bn_train(h, mode, td, td, d, false);
      const BnOut g = bn_backward(h, mode, td, td, td, d, st);
      auto loss_x = [&](const std::vector<float>& x) {
        BnData e = d;
        e.x = x;
        return dot(bn_train(h, mode, td, td, e, false).out, d.dy);
      };
      check_fd(d.x, g.out, loss_x, "dx");
      auto loss_scale = [&](const std::vector<float>& s) {
        BnData e = d;
        e.scale = s;
        return dot(bn_train(h, mode, td, td, e, false).out, d.dy);
      };
      check_fd(d.scale, g.dscale, loss_scale, "dscale");
      auto loss_bias = [&](const std::vector<float>& b) {
        BnData e = d;
        e.bias = b;
        return dot(bn_train(h, mode, td, td, e, false).out, d.dy);
      };
      check_fd(d.bias, g.dbias, loss_bias, "dbias");
    }
}

TEST(BatchNorm, BadArgumentsWriteNothing) {
  Handle h;
  const std::vector<int64_t> dims = {2, 3, 4, 4};
  const TensorDesc xd = TensorDesc::make(DType::kF32, dims);
  const Buf x = make_buf(xd, 1.0f);
  Buf y = make_buf(xd, 42.0f);
  std::vector<float> p(3, 1.0f), sm(3, 42.0f), si(3, 42.0f), rm(3, 42.0f), rv(3, 42.0f);
  auto train = [&](BatchNormMode mode, const TensorDesc& x_d, const TensorDesc& y_d,
                   const float* scale, double eps, double mom, float* r_m, float* r_v, float* s_m) {
    return batch_norm_forward_training(h, mode, x_d, x.data(), scale, p.data(), eps, mom, r_m, r_v,
                                       s_m, si.data(), y_d, y.data());
  };
  const BatchNormMode sp = BatchNormMode::kSpatial;
  TensorDesc f64 = xd;
  f64.dtype = DType::kF64;
  struct Bad {
    const char* what;
    Status s;
    const char* needle;
  };
  const Bad cases[] = {
      {"rank 1",
       train(sp, TensorDesc::make(DType::kF32, {6}), xd, p.data(), kEps, 0.1, nullptr, nullptr,
             sm.data()),
       "rank 1"},
      {"dims",
       train(sp, xd, TensorDesc::make(DType::kF32, {2, 3, 4, 5}), p.data(), kEps, 0.1, nullptr,
             nullptr, sm.data()),
       "differ"},
      {"null scale", train(sp, xd, xd, nullptr, kEps, 0.1, nullptr, nullptr, sm.data()),
       "scale is null"},
      {"null saved", train(sp, xd, xd, p.data(), kEps, 0.1, nullptr, nullptr, nullptr),
       "saved_mean is null"},
      {"negative eps", train(sp, xd, xd, p.data(), -1.0, 0.1, nullptr, nullptr, sm.data()),
       "epsilon"},
      {"nan eps", train(sp, xd, xd, p.data(), NAN, 0.1, nullptr, nullptr, sm.data()), "epsilon"},
      {"momentum", train(sp, xd, xd, p.data(), kEps, 1.5, rm.data(), rv.data(), sm.data()),
       "momentum"},
      {"running half", train(sp, xd, xd, p.data(), kEps, 0.1, rm.data(), nullptr, sm.data()),
       "both or neither"},
      {"one value",
       train(sp, TensorDesc::make(DType::kF32, {1, 3, 1, 1}),
             TensorDesc::make(DType::kF32, {1, 3, 1, 1}), p.data(), kEps, 0.1, rm.data(), rv.data(),
             sm.data()),
       "at least two"},
      {"mode",
       train(static_cast<BatchNormMode>(7), xd, xd, p.data(), kEps, 0.1, nullptr, nullptr,
             sm.data()),
       "mode"},
      {"f64", train(sp, f64, f64, p.data(), kEps, 0.1, nullptr, nullptr, sm.data()), "f64"},
      {"inference var",
       batch_norm_forward_inference(h, sp, xd, x.data(), p.data(), p.data(), p.data(), nullptr,
                                    kEps, xd, y.data()),
       "var is null"},
      {"backward invstd",
       batch_norm_backward(h, sp, xd, x.data(), xd, x.data(), p.data(), p.data(), nullptr, xd,
                           y.data(), nullptr, nullptr),
       "saved_invstd is null"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.what);
    EXPECT_FALSE(b.s.is_ok());
    EXPECT_NE(b.s.message().find(b.needle), std::string::npos) << b.s.message();
  }
  EXPECT_EQ(get(y), std::vector<float>(96, 42.0f));
  EXPECT_EQ(sm, std::vector<float>(3, 42.0f));
  EXPECT_EQ(si, std::vector<float>(3, 42.0f));
  EXPECT_EQ(rm, std::vector<float>(3, 42.0f));
  EXPECT_EQ(rv, std::vector<float>(3, 42.0f));
  EXPECT_EQ(train(sp, f64, f64, p.data(), kEps, 0.1, nullptr, nullptr, sm.data()).code(),
            StatusCode::kUnsupported);
}

TEST(BatchNorm, DispatchAndBenchLines) {
  Handle h;
  std::mt19937_64 gen(8);
  const std::vector<int64_t> dims = {8, 64, 7, 7};
  const BnData d = bn_data(dims, BatchNormMode::kSpatial, gen);
  for_each_isa([&](Isa isa) {
    const TensorDesc td = TensorDesc::make(DType::kF32, dims, Layout::kNHWC);
    const std::string log = testing::log_of(
        log::Category::kDispatch, [&] { bn_train(h, BatchNormMode::kSpatial, td, td, d, false); });
    EXPECT_NE(log.find("chose batch_norm_f32_" + std::string(isa_name(isa))), std::string::npos)
        << log;
  });
  const TensorDesc rd = strided(DType::kF32, dims);
  std::string log = testing::log_of(log::Category::kDispatch,
                                    [&] { bn_infer(h, BatchNormMode::kSpatial, rd, rd, d); });
  EXPECT_NE(log.find("chose batch_norm_ref"), std::string::npos) << log;
  const TensorDesc td = TensorDesc::make(DType::kF32, dims);
  log = testing::log_of(log::Category::kBench,
                        [&] { bn_train(h, BatchNormMode::kSpatial, td, td, d, true); });
  EXPECT_NE(
      log.find("tessera bench dnn norm --kind batch --mode spatial --dims 8x64x7x7 --layout nchw "
               "--dtype f32 --dir fwd-training"),
      std::string::npos)
      << log;
}

// ---- layer norm ---------------------------------------------------------------------------

struct LnOut {
  std::vector<float> out, mean, invstd, dscale, dbias;
};

int64_t rows_of(const std::vector<int64_t>& dims, int axis) {
  int64_t m = 1;
  for (int i = 0; i < axis; ++i) m *= dims[static_cast<std::size_t>(i)];
  return m;
}

LnOut ln_forward(Handle& h, int axis, const TensorDesc& xd, const std::vector<float>& xv,
                 const std::vector<float>& scale, const std::vector<float>* bias) {
  const int a = axis < 0 ? axis + xd.rank() : axis;
  const Buf x = make_buf(xd, xv, 3.0f);
  Buf y = make_buf(xd);
  LnOut o;
  o.mean = nans(rows_of(xd.dims, a));
  o.invstd = nans(rows_of(xd.dims, a));
  const Status s = layer_norm_forward(h, axis, xd, x.data(), scale.data(),
                                      bias != nullptr ? bias->data() : nullptr, kEps, xd, y.data(),
                                      o.mean.data(), o.invstd.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  o.out = get(y);
  return o;
}

LnOut ln_backward(Handle& h, int axis, const TensorDesc& xd, const std::vector<float>& xv,
                  const std::vector<float>& dyv, const std::vector<float>& scale, const LnOut& st) {
  const Buf x = make_buf(xd, xv, 3.0f);
  const Buf dy = make_buf(xd, dyv, 3.0f);
  Buf dx = make_buf(xd);
  LnOut o;
  o.dscale = nans(static_cast<int64_t>(scale.size()));
  o.dbias = nans(static_cast<int64_t>(scale.size()));
  const Status s =
      layer_norm_backward(h, axis, xd, x.data(), xd, dy.data(), scale.data(), st.mean.data(),
                          st.invstd.data(), xd, dx.data(), o.dscale.data(), o.dbias.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  o.out = get(dx);
  return o;
}

struct LnCase {
  std::vector<int64_t> dims;
  int axis;
};
const LnCase kLnCases[] = {
    {{7, 33}, 1},       {{7, 33}, -1},      {{3, 5, 15}, 2},    {{3, 5, 16}, 2},
    {{3, 5, 17}, 2},    {{3, 5, 17}, 1},    {{2, 3, 4, 5}, 1},  {{2, 3, 4, 5}, 3},
    {{2, 17, 3, 5}, 1}, {{2, 17, 3, 5}, 0}, {{2, 17, 3, 5}, 2}, {{3, 2, 2049}, 2},
    {{40, 3}, 1},
    // Long rows: in chunks, with a short last chunk; more than 64 rows (f64 gradient sums)
    {{19, 3, 41, 97}, 1}, {{70, 2, 47, 93}, 1},
};

TEST(LayerNorm, FastPathsMatchReference) {
  Handle h;
  std::mt19937_64 gen(10);
  for (const LnCase& c : kLnCases)
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE(dims_str(c.dims) + " axis " + std::to_string(c.axis));
      const TensorDesc rd = strided(DType::kF32, c.dims);
      const int a = c.axis < 0 ? c.axis + rd.rank() : c.axis;
      const auto k = static_cast<std::size_t>(rd.numel() / rows_of(c.dims, a));
      const auto xv = random_values(static_cast<std::size_t>(rd.numel()), gen, -0.5f, 2.0f);
      const auto dyv = random_values(xv.size(), gen);
      const auto scale = random_values(k, gen, 0.5f, 1.5f), bias = random_values(k, gen);
      const auto* b = with_bias ? &bias : nullptr;
      const LnOut rf = ln_forward(h, c.axis, rd, xv, scale, b);
      const LnOut rb = ln_backward(h, c.axis, rd, xv, dyv, scale, rf);
      for_each_isa([&](Isa) {
        for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
          SCOPED_TRACE(std::string(layout_name(l)));
          const TensorDesc td = TensorDesc::make(DType::kF32, c.dims, l);
          const LnOut f = ln_forward(h, c.axis, td, xv, scale, b);
          EXPECT_TRUE(close(f.out, rf.out, 2e-5, 2e-5));
          EXPECT_TRUE(close(f.mean, rf.mean, 1e-6, 1e-5));
          EXPECT_TRUE(close(f.invstd, rf.invstd, 1e-6, 2e-5));
          const LnOut g = ln_backward(h, c.axis, td, xv, dyv, scale, rf);
          EXPECT_TRUE(close(g.out, rb.out, 2e-5, 2e-5));
          EXPECT_TRUE(close(g.dscale, rb.dscale, 2e-5, 2e-5));
          EXPECT_TRUE(close(g.dbias, rb.dbias, 2e-5, 2e-5));
        }
      });
    }
}

TEST(LayerNorm, ReferenceMatchesIndependentOracle) {
  Handle h;
  std::mt19937_64 gen(11);
  const std::vector<int64_t> dims = {3, 4, 5};
  const auto xv = random_values(60, gen);
  const auto scale = random_values(20, gen), bias = random_values(20, gen);
  const LnOut f = ln_forward(h, 1, strided(DType::kF32, dims), xv, scale, &bias);
  for (std::size_t r = 0; r < 3; ++r) {
    double mean = 0.0, var = 0.0;
    for (std::size_t k = 0; k < 20; ++k) mean += xv[r * 20 + k];
    mean /= 20.0;
    for (std::size_t k = 0; k < 20; ++k) var += std::pow(xv[r * 20 + k] - mean, 2);
    const double invstd = 1.0 / std::sqrt(var / 20.0 + kEps);
    EXPECT_NEAR(f.mean[r], mean, 1e-6);
    EXPECT_NEAR(f.invstd[r], invstd, 1e-5 * invstd);
    for (std::size_t k = 0; k < 20; ++k)
      EXPECT_NEAR(f.out[r * 20 + k], (xv[r * 20 + k] - mean) * invstd * scale[k] + bias[k], 2e-6);
  }
}

TEST(LayerNorm, SameBitsForAnyThreadCount) {
  Handle h1, h2;
  ASSERT_TRUE(h1.set_num_threads(1).is_ok());
  ASSERT_TRUE(h2.set_num_threads(2).is_ok());
  std::mt19937_64 gen(12);
  for (const LnCase& c :
       {LnCase{{300, 257}, 1}, LnCase{{6, 16, 9, 9}, 1}, LnCase{{20, 3, 47, 61}, 1}})
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc td = TensorDesc::make(DType::kF32, c.dims, l);
      const auto k = static_cast<std::size_t>(td.numel() / c.dims[0]);
      const auto xv = random_values(static_cast<std::size_t>(td.numel()), gen);
      const auto dyv = random_values(xv.size(), gen);
      const auto scale = random_values(k, gen), bias = random_values(k, gen);
      const LnOut a = ln_forward(h1, c.axis, td, xv, scale, &bias);
      const LnOut b = ln_forward(h2, c.axis, td, xv, scale, &bias);
      EXPECT_TRUE(identical(a.out, b.out));
      EXPECT_TRUE(identical(a.invstd, b.invstd));
      const LnOut ga = ln_backward(h1, c.axis, td, xv, dyv, scale, a);
      const LnOut gb = ln_backward(h2, c.axis, td, xv, dyv, scale, a);
      EXPECT_TRUE(identical(ga.out, gb.out));
      EXPECT_TRUE(identical(ga.dscale, gb.dscale));
      EXPECT_TRUE(identical(ga.dbias, gb.dbias));
    }
}

TEST(LayerNorm, HalfPrecision) {
  Handle h;
  std::mt19937_64 gen(13);
  const std::vector<int64_t> dims = {5, 3, 33};
  for (DType t : {DType::kBF16, DType::kF16}) {
    const auto xv = testing::rounded(random_values(495, gen), t);
    const auto dyv = testing::rounded(random_values(495, gen), t);
    const auto scale = random_values(33, gen), bias = random_values(33, gen);
    const double tol = t == DType::kBF16 ? 2e-2 : 3e-3;
    const LnOut rf = ln_forward(h, 2, strided(t, dims), xv, scale, &bias);
    const LnOut rb = ln_backward(h, 2, strided(t, dims), xv, dyv, scale, rf);
    for_each_isa([&](Isa) {
      const TensorDesc td = TensorDesc::make(t, dims);
      EXPECT_TRUE(close(ln_forward(h, 2, td, xv, scale, &bias).out, rf.out, tol, tol));
      const LnOut g = ln_backward(h, 2, td, xv, dyv, scale, rf);
      EXPECT_TRUE(close(g.out, rb.out, tol, tol));
      EXPECT_TRUE(close(g.dscale, rb.dscale, 1e-4, 1e-4));
    });
  }
}

TEST(LayerNorm, BackwardMatchesFiniteDifferences) {
  Handle h;
  std::mt19937_64 gen(14);
  for (const LnCase& c : {LnCase{{3, 10}, 1}, LnCase{{2, 3, 2, 2}, 1}})
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc td = TensorDesc::make(DType::kF32, c.dims, l);
      const auto k = static_cast<std::size_t>(td.numel() / c.dims[0]);
      const auto xv = random_values(static_cast<std::size_t>(td.numel()), gen);
      const auto w = random_values(xv.size(), gen);
      const auto scale = random_values(k, gen, 0.5f, 1.5f), bias = random_values(k, gen);
      const LnOut st = ln_forward(h, c.axis, td, xv, scale, &bias);
      const LnOut g = ln_backward(h, c.axis, td, xv, w, scale, st);
      check_fd(
          xv, g.out,
          [&](const std::vector<float>& x) {
            return dot(ln_forward(h, c.axis, td, x, scale, &bias).out, w);
          },
          "dx");
      check_fd(
          scale, g.dscale,
          [&](const std::vector<float>& s) {
            return dot(ln_forward(h, c.axis, td, xv, s, &bias).out, w);
          },
          "dscale");
      check_fd(
          bias, g.dbias,
          [&](const std::vector<float>& b) {
            return dot(ln_forward(h, c.axis, td, xv, scale, &b).out, w);
          },
          "dbias");
    }
}

TEST(LayerNorm, BadArgumentsWriteNothing) {
  Handle h;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {2, 3, 4});
  const Buf x = make_buf(xd, 1.0f);
  Buf y = make_buf(xd, 42.0f);
  std::vector<float> p(12, 1.0f), m(2, 42.0f);
  Status s = layer_norm_forward(h, 3, xd, x.data(), p.data(), nullptr, kEps, xd, y.data(), m.data(),
                                nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("axis 3"), std::string::npos) << s.message();
  s = layer_norm_forward(h, -4, xd, x.data(), p.data(), nullptr, kEps, xd, y.data(), m.data(),
                         nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = layer_norm_forward(h, 1, xd, x.data(), nullptr, nullptr, kEps, xd, y.data(), m.data(),
                         nullptr);
  EXPECT_NE(s.message().find("scale is null"), std::string::npos) << s.message();
  s = layer_norm_forward(h, 1, xd, x.data(), p.data(), nullptr, -1e-3, xd, y.data(), m.data(),
                         nullptr);
  EXPECT_NE(s.message().find("epsilon"), std::string::npos) << s.message();
  s = layer_norm_backward(h, 1, xd, x.data(), xd, x.data(), p.data(), nullptr, p.data(), xd,
                          y.data(), nullptr, nullptr);
  EXPECT_NE(s.message().find("mean is null"), std::string::npos) << s.message();
  EXPECT_EQ(get(y), std::vector<float>(24, 42.0f));
  EXPECT_EQ(m, std::vector<float>(2, 42.0f));
}

// ---- group and instance norm --------------------------------------------------------------

struct GnOut {
  std::vector<float> out, mean, invstd, dscale, dbias;
};

GnOut gn_forward(Handle& h, int64_t groups, const TensorDesc& xd, const std::vector<float>& xv,
                 const std::vector<float>& scale, const std::vector<float>& bias,
                 bool instance = false) {
  const Buf x = make_buf(xd, xv, 3.0f);
  Buf y = make_buf(xd);
  GnOut o;
  o.mean = nans(xd.dims[0] * groups);
  o.invstd = nans(xd.dims[0] * groups);
  const Status s = instance
                       ? instance_norm_forward(h, xd, x.data(), scale.data(), bias.data(), kEps, xd,
                                               y.data(), o.mean.data(), o.invstd.data())
                       : group_norm_forward(h, groups, xd, x.data(), scale.data(), bias.data(),
                                            kEps, xd, y.data(), o.mean.data(), o.invstd.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  o.out = get(y);
  return o;
}

GnOut gn_backward(Handle& h, int64_t groups, const TensorDesc& xd, const std::vector<float>& xv,
                  const std::vector<float>& dyv, const std::vector<float>& scale, const GnOut& st,
                  bool instance = false) {
  const Buf x = make_buf(xd, xv, 3.0f);
  const Buf dy = make_buf(xd, dyv, 3.0f);
  Buf dx = make_buf(xd);
  GnOut o;
  o.dscale = nans(xd.dims[1]);
  o.dbias = nans(xd.dims[1]);
  const Status s = instance ? instance_norm_backward(h, xd, x.data(), xd, dy.data(), scale.data(),
                                                     st.mean.data(), st.invstd.data(), xd,
                                                     dx.data(), o.dscale.data(), o.dbias.data())
                            : group_norm_backward(h, groups, xd, x.data(), xd, dy.data(),
                                                  scale.data(), st.mean.data(), st.invstd.data(),
                                                  xd, dx.data(), o.dscale.data(), o.dbias.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  o.out = get(dx);
  return o;
}

struct GnCase {
  std::vector<int64_t> dims;
  std::vector<int64_t> groups;
};
const GnCase kGnCases[] = {
    {{2, 16, 5, 7}, {1, 2, 4, 16}},
    {{2, 15, 5, 7}, {3, 5, 15}},
    {{2, 17, 5, 7}, {1, 17}},
    {{2, 33, 3, 3}, {3, 11}},
    {{3, 6, 11}, {2, 3}},
    {{2, 8, 3, 4, 5}, {4}},
    {{4, 12}, {3}},
};

TEST(GroupNorm, FastPathsMatchReference) {
  Handle h;
  std::mt19937_64 gen(20);
  for (const GnCase& c : kGnCases)
    for (int64_t groups : c.groups) {
      SCOPED_TRACE(dims_str(c.dims) + " groups " + std::to_string(groups));
      const TensorDesc rd = strided(DType::kF32, c.dims);
      const auto xv = random_values(static_cast<std::size_t>(rd.numel()), gen, -1.0f, 3.0f);
      const auto dyv = random_values(xv.size(), gen);
      const auto nc = static_cast<std::size_t>(c.dims[1]);
      const auto scale = random_values(nc, gen, 0.5f, 1.5f), bias = random_values(nc, gen);
      const GnOut rf = gn_forward(h, groups, rd, xv, scale, bias);
      const GnOut rb = gn_backward(h, groups, rd, xv, dyv, scale, rf);
      for_each_isa([&](Isa) {
        for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
          SCOPED_TRACE(std::string(layout_name(l)));
          const TensorDesc td = TensorDesc::make(DType::kF32, c.dims, l);
          const GnOut f = gn_forward(h, groups, td, xv, scale, bias);
          EXPECT_TRUE(close(f.out, rf.out, 2e-5, 2e-5));
          EXPECT_TRUE(close(f.mean, rf.mean, 1e-6, 1e-5));
          EXPECT_TRUE(close(f.invstd, rf.invstd, 1e-6, 2e-5));
          const GnOut g = gn_backward(h, groups, td, xv, dyv, scale, rf);
          EXPECT_TRUE(close(g.out, rb.out, 2e-5, 2e-5));
          EXPECT_TRUE(close(g.dscale, rb.dscale, 2e-5, 2e-5));
          EXPECT_TRUE(close(g.dbias, rb.dbias, 2e-5, 2e-5));
        }
      });
    }
}

// Channels of a group with very different means: the per-channel moments combine without
// cancelling.
TEST(GroupNorm, ChannelsWithDifferentMeans) {
  Handle h;
  std::mt19937_64 gen(21);
  const std::vector<int64_t> dims = {2, 4, 9, 9};
  auto xv = random_values(648, gen);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] += (i / 81) % 2 == 0 ? 500.0f : -500.0f;
  const std::vector<float> scale(4, 1.0f), bias(4, 0.0f);
  const GnOut r = gn_forward(h, 1, strided(DType::kF32, dims), xv, scale, bias);
  for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
    const GnOut f = gn_forward(h, 1, TensorDesc::make(DType::kF32, dims, l), xv, scale, bias);
    EXPECT_TRUE(close(f.invstd, r.invstd, 0.0, 1e-5));
    EXPECT_TRUE(close(f.out, r.out, 1e-4, 0.0));
  }
}

TEST(GroupNorm, InstanceNormIsOneGroupPerChannel) {
  Handle h;
  std::mt19937_64 gen(22);
  const std::vector<int64_t> dims = {3, 5, 4, 6};
  const auto xv = random_values(360, gen), dyv = random_values(360, gen);
  const auto scale = random_values(5, gen), bias = random_values(5, gen);
  for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
    const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
    const GnOut g = gn_forward(h, 5, td, xv, scale, bias),
                i = gn_forward(h, 5, td, xv, scale, bias, true);
    EXPECT_TRUE(identical(g.out, i.out));
    EXPECT_TRUE(identical(g.invstd, i.invstd));
    const GnOut gb = gn_backward(h, 5, td, xv, dyv, scale, g);
    const GnOut ib = gn_backward(h, 5, td, xv, dyv, scale, g, true);
    EXPECT_TRUE(identical(gb.out, ib.out));
    EXPECT_TRUE(identical(gb.dscale, ib.dscale));
  }
}

TEST(GroupNorm, ReferenceMatchesIndependentOracle) {
  Handle h;
  std::mt19937_64 gen(23);
  const std::vector<int64_t> dims = {2, 6, 7};
  const auto xv = random_values(84, gen);
  const auto scale = random_values(6, gen), bias = random_values(6, gen);
  const GnOut f = gn_forward(h, 3, strided(DType::kF32, dims), xv, scale, bias);
  for (std::size_t n = 0; n < 2; ++n)
    for (std::size_t g = 0; g < 3; ++g) {
      const std::size_t base = n * 42 + g * 14;
      double mean = 0.0, var = 0.0;
      for (std::size_t i = 0; i < 14; ++i) mean += xv[base + i];
      mean /= 14.0;
      for (std::size_t i = 0; i < 14; ++i) var += std::pow(xv[base + i] - mean, 2);
      const double invstd = 1.0 / std::sqrt(var / 14.0 + kEps);
      EXPECT_NEAR(f.mean[n * 3 + g], mean, 1e-6);
      for (std::size_t i = 0; i < 14; ++i) {
        const std::size_t c = g * 2 + i / 7;
        EXPECT_NEAR(f.out[base + i], (xv[base + i] - mean) * invstd * scale[c] + bias[c], 2e-6);
      }
    }
}

TEST(GroupNorm, SameBitsForAnyThreadCount) {
  Handle h1, h2;
  ASSERT_TRUE(h1.set_num_threads(1).is_ok());
  ASSERT_TRUE(h2.set_num_threads(2).is_ok());
  std::mt19937_64 gen(24);
  const std::vector<int64_t> dims = {3, 32, 20, 21};
  for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
    const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
    const auto xv = random_values(static_cast<std::size_t>(td.numel()), gen);
    const auto dyv = random_values(xv.size(), gen);
    const auto scale = random_values(32, gen), bias = random_values(32, gen);
    const GnOut a = gn_forward(h1, 8, td, xv, scale, bias),
                b = gn_forward(h2, 8, td, xv, scale, bias);
    EXPECT_TRUE(identical(a.out, b.out));
    EXPECT_TRUE(identical(a.invstd, b.invstd));
    const GnOut ga = gn_backward(h1, 8, td, xv, dyv, scale, a),
                gb = gn_backward(h2, 8, td, xv, dyv, scale, a);
    EXPECT_TRUE(identical(ga.out, gb.out));
    EXPECT_TRUE(identical(ga.dscale, gb.dscale));
    EXPECT_TRUE(identical(ga.dbias, gb.dbias));
  }
}

TEST(GroupNorm, HalfPrecision) {
  Handle h;
  std::mt19937_64 gen(25);
  const std::vector<int64_t> dims = {2, 17, 5, 6};
  for (DType t : {DType::kBF16, DType::kF16}) {
    const auto xv = testing::rounded(random_values(1020, gen), t);
    const auto dyv = testing::rounded(random_values(1020, gen), t);
    const auto scale = random_values(17, gen), bias = random_values(17, gen);
    const double tol = t == DType::kBF16 ? 2e-2 : 3e-3;
    const GnOut rf = gn_forward(h, 17, strided(t, dims), xv, scale, bias);
    const GnOut rb = gn_backward(h, 17, strided(t, dims), xv, dyv, scale, rf);
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc td = TensorDesc::make(t, dims, l);
      EXPECT_TRUE(close(gn_forward(h, 17, td, xv, scale, bias).out, rf.out, tol, tol));
      EXPECT_TRUE(close(gn_backward(h, 17, td, xv, dyv, scale, rf).out, rb.out, tol, tol));
    }
  }
}

TEST(GroupNorm, BackwardMatchesFiniteDifferences) {
  Handle h;
  std::mt19937_64 gen(26);
  const std::vector<int64_t> dims = {2, 4, 3, 2};
  for (bool instance : {false, true})
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const int64_t groups = instance ? 4 : 2;
      const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
      const auto xv = random_values(48, gen), w = random_values(48, gen);
      const auto scale = random_values(4, gen, 0.5f, 1.5f), bias = random_values(4, gen);
      const GnOut st = gn_forward(h, groups, td, xv, scale, bias, instance);
      const GnOut g = gn_backward(h, groups, td, xv, w, scale, st, instance);
      check_fd(
          xv, g.out,
          [&](const std::vector<float>& x) {
            return dot(gn_forward(h, groups, td, x, scale, bias, instance).out, w);
          },
          "dx");
      check_fd(
          scale, g.dscale,
          [&](const std::vector<float>& s) {
            return dot(gn_forward(h, groups, td, xv, s, bias, instance).out, w);
          },
          "dscale");
      check_fd(
          bias, g.dbias,
          [&](const std::vector<float>& b) {
            return dot(gn_forward(h, groups, td, xv, scale, b, instance).out, w);
          },
          "dbias");
    }
}

TEST(GroupNorm, BadArgumentsWriteNothing) {
  Handle h;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {2, 6, 4});
  const Buf x = make_buf(xd, 1.0f);
  Buf y = make_buf(xd, 42.0f);
  std::vector<float> p(6, 1.0f), m(8, 42.0f);
  Status s = group_norm_forward(h, 4, xd, x.data(), p.data(), p.data(), kEps, xd, y.data(),
                                m.data(), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("groups = 4 must be >= 1 and divide the 6 channels"),
            std::string::npos)
      << s.message();
  s = group_norm_forward(h, 0, xd, x.data(), p.data(), p.data(), kEps, xd, y.data(), m.data(),
                         nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = group_norm_forward(h, 2, xd, x.data(), p.data(), nullptr, kEps, xd, y.data(), m.data(),
                         nullptr);
  EXPECT_NE(s.message().find("bias is null"), std::string::npos) << s.message();
  s = group_norm_backward(h, 2, xd, x.data(), xd, x.data(), p.data(), nullptr, p.data(), xd,
                          y.data(), nullptr, nullptr);
  EXPECT_NE(s.message().find("mean is null"), std::string::npos) << s.message();
  s = instance_norm_forward(h, TensorDesc::make(DType::kF32, {6}), x.data(), p.data(), p.data(),
                            kEps, xd, y.data(), nullptr, nullptr);
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.message();
  s = group_norm_forward(h, 2, xd, x.data(), p.data(), p.data(), kEps,
                         TensorDesc::make(DType::kF32, {2, 6, 5}), y.data(), nullptr, nullptr);
  EXPECT_NE(s.message().find("differ"), std::string::npos) << s.message();
  EXPECT_EQ(get(y), std::vector<float>(48, 42.0f));
  EXPECT_EQ(m, std::vector<float>(8, 42.0f));
}

}  // namespace
}  // namespace tessera::dnn
