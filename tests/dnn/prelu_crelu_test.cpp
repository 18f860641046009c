// PReLU and CReLU: the dense fast paths against the reference (every ISA via TESSERA_MAX_ISA,
// f32/bf16/f16, both layouts, channel counts at vector-width edges, NaN-prefilled outputs),
// thread-count independence of dx and the slope gradient, finite differences of both
// backward passes, and bad arguments.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "activation_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using act_test::expect_ok;
using act_test::expect_rejected;
using act_test::HostTensor;
using act_test::i64;
using testing::for_each_isa;

// ---- PReLU --------------------------------------------------------------------------------------

struct PreluCase {
  TensorDesc desc;
  i64 slope_count;
};

std::vector<PreluCase> prelu_cases(DType t) {
  std::vector<PreluCase> c;
  for (i64 ch : {1, 3, 16, 17})
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc d = TensorDesc::make(t, {2, ch, 5, 3}, l);
      c.push_back({d, ch});
      c.push_back({d, 1});
    }
  c.push_back({TensorDesc::make(t, {7, 33}), 33});  // rank 2: channels innermost
  c.push_back({TensorDesc::make(t, {3, 5, 17}), 5});
  c.push_back({act_test::padded_desc(t, {2, 4, 3, 3}, 1), 4});  // strided: reference
  c.push_back({TensorDesc::make(t, {0, 4, 3}), 4});
  return c;
}

TEST(Prelu, MatchesReference) {
  std::mt19937 rng(17);
  for_each_isa([&](Isa isa) {
    Handle h;
    for (DType t : act_test::float_dtypes())
      for (const PreluCase& pc : prelu_cases(t)) {
        const TensorDesc& d = pc.desc;
        SCOPED_TRACE(d.to_string() + " slopes " + std::to_string(pc.slope_count));
        std::vector<float> slope(static_cast<std::size_t>(pc.slope_count));
        for (float& s : slope) s = std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
        HostTensor x(d), dy(d), y(d), want_y(d), dx(d), want_dx(d);
        x.fill_uniform(rng, -3.0f, 3.0f);
        dy.fill_uniform(rng, -1.0f, 1.0f);
        y.fill_nan();
        dx.fill_nan();
        act_test::DispatchLog log;
        expect_ok(prelu_forward(h, d, x.data(), slope.data(), pc.slope_count, d, y.data()));
        const std::string chosen = log.finish();
        if (d.numel() > 0) {
          const std::string want = d.packed_layout()
                                       ? std::string("prelu_dense") + act_test::isa_suffix(isa)
                                       : std::string("prelu_ref");
          EXPECT_NE(chosen.find("prelu_forward: chose " + want), std::string::npos) << chosen;
        }
        ref::prelu_forward(d, x.data(), slope.data(), pc.slope_count, d, want_y.data());
        EXPECT_TRUE(act_test::same_bits(y, want_y));  // one multiply: exact on every path
        std::vector<float> ds(slope.size(), std::nanf("")), want_ds(slope.size());
        expect_ok(prelu_backward(h, d, x.data(), slope.data(), pc.slope_count, d, dy.data(), d,
                                 dx.data(), ds.data()));
        ref::prelu_backward(d, x.data(), slope.data(), pc.slope_count, d, dy.data(), d,
                            want_dx.data(), want_ds.data());
        EXPECT_TRUE(act_test::same_bits(dx, want_dx));
        for (std::size_t c = 0; c < ds.size(); ++c)
          EXPECT_NEAR(ds[c], want_ds[c], 1e-6 * (1.0 + std::fabs(want_ds[c]))) << "channel " << c;
        // dslope may be null.
        expect_ok(prelu_backward(h, d, x.data(), slope.data(), pc.slope_count, d, dy.data(), d,
                                 dx.data(), nullptr));
        EXPECT_TRUE(act_test::same_bits(dx, want_dx));
      }
  });
}

TEST(Prelu, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(19);
  Handle h;
  for (Layout l : {Layout::kNCHW, Layout::kNHWC})
    for (i64 count : {1, 4}) {
      const TensorDesc d = TensorDesc::make(DType::kF32, {2, 4, 3, 5}, l);
      HostTensor x(d), w(d);
      std::vector<float> xv(static_cast<std::size_t>(d.numel()));
      for (float& v : xv) {  // away from the kink at 0
        do v = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
        while (std::fabs(v) < 0.05f);
      }
      x.set_values(xv);
      w.fill_uniform(rng, -1.0f, 1.0f);
      std::vector<float> slope = {0.1f, -0.2f, 0.3f, 0.05f};
      slope.resize(static_cast<std::size_t>(count));
      // L = sum w * prelu(x): dL/dx = dx with dy = w, dL/dslope = dslope.
      auto loss = [&](const HostTensor& xx, const std::vector<float>& s) {
        HostTensor y(d);
        expect_ok(prelu_forward(h, d, xx.data(), s.data(), count, d, y.data()));
        const std::vector<float> yv = y.values(), wv = w.values();
        double sum = 0.0;
        for (std::size_t i = 0; i < yv.size(); ++i) sum += static_cast<double>(yv[i]) * wv[i];
        return sum;
      };
      HostTensor dx(d);
      std::vector<float> ds(slope.size());
      expect_ok(prelu_backward(h, d, x.data(), slope.data(), count, d, w.data(), d, dx.data(),
                               ds.data()));
      const float step = 1e-2f;
      const std::vector<float> dxv = dx.values();
      for (std::size_t i = 0; i < xv.size(); i += 7) {
        std::vector<float> p = xv, m = xv;
        p[i] += step;
        m[i] -= step;
        HostTensor xp(d), xm(d);
        xp.set_values(p);
        xm.set_values(m);
        const double fd = (loss(xp, slope) - loss(xm, slope)) / (2.0 * step);
        EXPECT_NEAR(dxv[i], fd, 1e-3 * (1.0 + std::fabs(fd))) << "dx " << i;
      }
      for (std::size_t c = 0; c < slope.size(); ++c) {
        std::vector<float> p = slope, m = slope;
        p[c] += step;
        m[c] -= step;
        const double fd = (loss(x, p) - loss(x, m)) / (2.0 * step);
        EXPECT_NEAR(ds[c], fd, 1e-3 * (1.0 + std::fabs(fd))) << "dslope " << c;
      }
    }
}

// Planes larger than one unit, channel-innermost rows over several row blocks, and one
// shared slope: dx and dslope identical for 1 and 2 threads.
TEST(Prelu, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(23);
  const std::vector<PreluCase> cases = {
      {TensorDesc::make(DType::kF32, {2, 5, 133, 131}), 5},
      {TensorDesc::make(DType::kF32, {1, 7, 150, 150}, Layout::kNHWC), 7},
      {TensorDesc::make(DType::kBF16, {1, 3, 190, 190}), 1},
  };
  for (const PreluCase& pc : cases) {
    const TensorDesc& d = pc.desc;
    HostTensor x(d), dy(d);
    x.fill_uniform(rng, -3.0f, 3.0f);
    dy.fill_uniform(rng, -1.0f, 1.0f);
    std::vector<float> slope(static_cast<std::size_t>(pc.slope_count), 0.25f);
    HostTensor y1(d), y2(d), dx1(d), dx2(d);
    std::vector<float> ds1(slope.size()), ds2(slope.size());
    Handle h;
    expect_ok(h.set_num_threads(1));
    expect_ok(prelu_forward(h, d, x.data(), slope.data(), pc.slope_count, d, y1.data()));
    expect_ok(prelu_backward(h, d, x.data(), slope.data(), pc.slope_count, d, dy.data(), d,
                             dx1.data(), ds1.data()));
    expect_ok(h.set_num_threads(2));
    expect_ok(prelu_forward(h, d, x.data(), slope.data(), pc.slope_count, d, y2.data()));
    expect_ok(prelu_backward(h, d, x.data(), slope.data(), pc.slope_count, d, dy.data(), d,
                             dx2.data(), ds2.data()));
    EXPECT_EQ(y1.bytes, y2.bytes);
    EXPECT_EQ(dx1.bytes, dx2.bytes);
    EXPECT_EQ(0, std::memcmp(ds1.data(), ds2.data(), ds1.size() * sizeof(float)));
    // And close to the reference's single f64 sum.
    std::vector<float> want(slope.size());
    HostTensor dxr(d);
    ref::prelu_backward(d, x.data(), slope.data(), pc.slope_count, d, dy.data(), d, dxr.data(),
                        want.data());
    for (std::size_t c = 0; c < want.size(); ++c)
      EXPECT_NEAR(ds1[c], want[c], 1e-6 * (1.0 + std::fabs(want[c])));
  }
}

// ---- CReLU ----------------------------------------------------------------------------------

TensorDesc doubled(const TensorDesc& x, Layout l) {
  std::vector<i64> dims = x.dims;
  dims[1] *= 2;
  return TensorDesc::make(x.dtype, dims, l);
}

TEST(Crelu, MatchesReference) {
  std::mt19937 rng(29);
  for_each_isa([&](Isa isa) {
    Handle h;
    for (DType t : act_test::float_dtypes())
      for (Layout l : {Layout::kNCHW, Layout::kNHWC})
        for (const std::vector<i64>& dims : std::vector<std::vector<i64>>{
                 {2, 1, 3, 5}, {2, 3, 5, 3}, {3, 17, 2, 2}, {5, 9}, {1, 16, 1, 33}}) {
          const TensorDesc xd = TensorDesc::make(t, dims, l);
          const TensorDesc yd = doubled(xd, l);
          SCOPED_TRACE(xd.to_string());
          HostTensor x(xd), y(yd), want_y(yd), dy(yd), dx(xd), want_dx(xd);
          x.fill_uniform(rng, -2.0f, 2.0f);
          std::vector<float> xv = x.values();
          xv[0] = 0.0f;
          x.set_values(xv);
          dy.fill_uniform(rng, -1.0f, 1.0f);
          y.fill_nan();
          dx.fill_nan();
          act_test::DispatchLog log;
          expect_ok(crelu_forward(h, xd, x.data(), yd, y.data()));
          expect_ok(crelu_backward(h, xd, x.data(), yd, dy.data(), xd, dx.data()));
          const std::string s = log.finish();
          EXPECT_NE(
              s.find(std::string("crelu_forward: chose crelu_dense") + act_test::isa_suffix(isa)),
              std::string::npos)
              << s;
          EXPECT_NE(
              s.find(std::string("crelu_backward: chose crelu_dense") + act_test::isa_suffix(isa)),
              std::string::npos)
              << s;
          ref::crelu_forward(xd, x.data(), yd, want_y.data());
          ref::crelu_backward(xd, x.data(), yd, dy.data(), xd, want_dx.data());
          EXPECT_TRUE(act_test::same_bits(y, want_y));
          EXPECT_TRUE(act_test::same_bits(dx, want_dx));
        }
    // Mixed layouts run on the reference.
    const TensorDesc xd = TensorDesc::make(DType::kF32, {2, 3, 4, 5});
    const TensorDesc yd = doubled(xd, Layout::kNHWC);
    HostTensor x(xd), y(yd), want(yd);
    x.fill_uniform(rng, -1.0f, 1.0f);
    expect_ok(crelu_forward(h, xd, x.data(), yd, y.data()));
    ref::crelu_forward(xd, x.data(), yd, want.data());
    EXPECT_TRUE(act_test::same_bits(y, want));
  });
}

TEST(Crelu, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(31);
  Handle h;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {2, 3, 4, 3}, Layout::kNHWC);
  const TensorDesc yd = doubled(xd, Layout::kNHWC);
  std::vector<float> xv(static_cast<std::size_t>(xd.numel()));
  for (float& v : xv) {
    do v = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
    while (std::fabs(v) < 0.05f);
  }
  HostTensor x(xd), w(yd), dx(xd);
  x.set_values(xv);
  w.fill_uniform(rng, -1.0f, 1.0f);
  expect_ok(crelu_backward(h, xd, x.data(), yd, w.data(), xd, dx.data()));
  auto loss = [&](const std::vector<float>& v) {
    HostTensor xx(xd), y(yd);
    xx.set_values(v);
    expect_ok(crelu_forward(h, xd, xx.data(), yd, y.data()));
    const std::vector<float> yv = y.values(), wv = w.values();
    double s = 0.0;
    for (std::size_t i = 0; i < yv.size(); ++i) s += static_cast<double>(yv[i]) * wv[i];
    return s;
  };
  const std::vector<float> dxv = dx.values();
  for (std::size_t i = 0; i < xv.size(); ++i) {
    std::vector<float> p = xv, m = xv;
    p[i] += 1e-2f;
    m[i] -= 1e-2f;
    const double fd = (loss(p) - loss(m)) / 2e-2;
    EXPECT_NEAR(dxv[i], fd, 1e-3 * (1.0 + std::fabs(fd))) << i;
  }
}

TEST(Crelu, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(37);
  const TensorDesc xd = TensorDesc::make(DType::kF16, {1, 3, 160, 150});
  const TensorDesc yd = doubled(xd, Layout::kNCHW);
  HostTensor x(xd), dy(yd), y1(yd), y2(yd), dx1(xd), dx2(xd);
  x.fill_uniform(rng, -2.0f, 2.0f);
  dy.fill_uniform(rng, -1.0f, 1.0f);
  Handle h;
  expect_ok(h.set_num_threads(1));
  expect_ok(crelu_forward(h, xd, x.data(), yd, y1.data()));
  expect_ok(crelu_backward(h, xd, x.data(), yd, dy.data(), xd, dx1.data()));
  expect_ok(h.set_num_threads(2));
  expect_ok(crelu_forward(h, xd, x.data(), yd, y2.data()));
  expect_ok(crelu_backward(h, xd, x.data(), yd, dy.data(), xd, dx2.data()));
  EXPECT_EQ(y1.bytes, y2.bytes);
  EXPECT_EQ(dx1.bytes, dx2.bytes);
}

// ---- bad arguments -----------------------------------------------------------------------------

TEST(Prelu, BadArgumentsAreRejectedWithoutWriting) {
  Handle h;
  const TensorDesc d = TensorDesc::make(DType::kF32, {2, 3, 4});
  HostTensor x(d), y(d), dy(d);
  const float slope[3] = {0.1f, 0.2f, 0.3f};
  const auto bad = StatusCode::kInvalidArgument;
  expect_rejected(bad, "slope_count = 2 must be 1 or x's channel count 3", y,
                  [&] { return prelu_forward(h, d, x.data(), slope, 2, d, y.data()); });
  expect_rejected(bad, "slope is null", y,
                  [&] { return prelu_forward(h, d, x.data(), nullptr, 3, d, y.data()); });
  const TensorDesc r1 = TensorDesc::make(DType::kF32, {5});
  expect_rejected(bad, "x has rank 1", y,
                  [&] { return prelu_forward(h, r1, x.data(), slope, 1, r1, y.data()); });
  expect_rejected(bad, "dx is null", y, [&] {
    return prelu_backward(h, d, x.data(), slope, 3, d, dy.data(), d, nullptr, nullptr);
  });
  std::vector<float> ds(3, std::nanf(""));
  expect_rejected(bad, "slope_count = 4", y, [&] {
    return prelu_backward(h, d, x.data(), slope, 4, d, dy.data(), d, y.data(), ds.data());
  });
  EXPECT_TRUE(std::isnan(ds[0]));
  // Empty x: dslope is overwritten with zeros.
  const TensorDesc empty = TensorDesc::make(DType::kF32, {0, 3, 2});
  EXPECT_TRUE(prelu_backward(h, empty, nullptr, slope, 3, empty, nullptr, empty, nullptr, ds.data())
                  .is_ok());
  EXPECT_EQ(ds, std::vector<float>(3, 0.0f));
}

TEST(Crelu, BadArgumentsAreRejectedWithoutWriting) {
  Handle h;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {2, 3, 4});
  const TensorDesc yd = TensorDesc::make(DType::kF32, {2, 6, 4});
  HostTensor x(xd), y(yd), dx(xd);
  const auto bad = StatusCode::kInvalidArgument;
  expect_rejected(bad, "y dims [2,3,4] must be x's with dim 1 doubled: [2,6,4]", dx,
                  [&] { return crelu_forward(h, xd, x.data(), xd, dx.data()); });
  expect_rejected(bad, "dx dims [2,6,4] differ from x dims [2,3,4]", y,
                  [&] { return crelu_backward(h, xd, x.data(), yd, y.data(), yd, y.data()); });
  TensorDesc bf = yd;
  bf.dtype = DType::kBF16;
  expect_rejected(bad, "y dtype bf16 differs from x dtype f32", y,
                  [&] { return crelu_forward(h, xd, x.data(), bf, y.data()); });
  expect_rejected(bad, "y is null", dx,
                  [&] { return crelu_forward(h, xd, x.data(), yd, nullptr); });
}

// TESSERA_LOG=bench prints one replay line per call.
}  // namespace
}  // namespace tessera::dnn
