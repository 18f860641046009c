// Local response normalisation: the across-channel kernels against the reference (reached
// through strided tensors) over window sizes (odd and even), betas (the square-root paths and
// powf), channel counts around the vector widths, both layouts, every ISA and bf16/f16; the
// reference against an independent f64 oracle (across and within channels, 1-D to 3-D);
// backward by finite differences; thread counts; bad arguments.
#include <cmath>
#include <limits>

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
using testing::random_values;
using testing::strided;

std::vector<float> forward(Handle& h, const LrnDesc& d, const TensorDesc& xd,
                           const std::vector<float>& xv) {
  const Buf x = make_buf(xd, xv, 3.0f);
  Buf y = make_buf(xd);
  const Status s = lrn_forward(h, d, xd, x.data(), xd, y.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return get(y);
}

std::vector<float> backward(Handle& h, const LrnDesc& d, const TensorDesc& xd,
                            const std::vector<float>& xv, const std::vector<float>& dyv) {
  const Buf x = make_buf(xd, xv, 3.0f);
  const Buf dy = make_buf(xd, dyv, 3.0f);
  Buf dx = make_buf(xd);
  const Status s = lrn_backward(h, d, xd, x.data(), xd, dy.data(), xd, dx.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return get(dx);
}

LrnDesc lrn(LrnMode mode, int64_t size, double alpha, double beta, double k) {
  LrnDesc d;
  d.mode = mode;
  d.size = size;
  d.alpha = alpha;
  d.beta = beta;
  d.k = k;
  return d;
}

std::string describe(const LrnDesc& d, const std::vector<int64_t>& dims) {
  return std::string(d.mode == LrnMode::kAcrossChannels ? "across" : "within") + " size " +
         std::to_string(d.size) + " beta " + std::to_string(d.beta) + " dims " +
         ::testing::PrintToString(dims);
}

const std::vector<std::vector<int64_t>> kShapes = {
    {2, 1, 5, 7},  {2, 3, 5, 7}, {2, 15, 5, 7}, {2, 16, 5, 7},   {2, 17, 5, 7},
    {2, 33, 5, 7}, {4, 17},      {2, 17, 19},   {2, 5, 3, 4, 5}, {1, 6, 20, 30},
    // One, two and three pixels: the NHWC kernels work a pixel ahead.
    {1, 17},       {1, 33, 2},   {3, 17},
};

TEST(Lrn, AcrossChannelsMatchesReference) {
  Handle h;
  std::mt19937_64 gen(1);
  for (const auto& dims : kShapes)
    for (int64_t size : {1, 2, 3, 4, 5})
      for (double beta : {0.75, 0.5, 1.0, 0.6}) {
        if (beta != 0.75 && size != 5 && size != 2) continue;
        const LrnDesc d = lrn(LrnMode::kAcrossChannels, size, 0.8, beta, 1.25);
        SCOPED_TRACE(describe(d, dims));
        const TensorDesc rd = strided(DType::kF32, dims);
        const auto xv = random_values(static_cast<std::size_t>(rd.numel()), gen, -2.0f, 2.0f);
        const auto dyv = random_values(xv.size(), gen);
        const auto ry = forward(h, d, rd, xv);
        const auto rdx = backward(h, d, rd, xv, dyv);
        for_each_isa([&](Isa) {
          for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
            SCOPED_TRACE(std::string(layout_name(l)));
            const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
            EXPECT_TRUE(close(forward(h, d, td, xv), ry, 1e-6, 2e-6));
            EXPECT_TRUE(close(backward(h, d, td, xv, dyv), rdx, 2e-6, 2e-5));
          }
        });
      }
}

// The formula of the header in f64, written independently: n = size (across) or size^d
// (within), windows centred with the extra element of an even size on the high side.
std::vector<double> oracle(const LrnDesc& d, const std::vector<int64_t>& dims,
                           const std::vector<float>& x) {
  const int sp = static_cast<int>(dims.size()) - 2;
  std::vector<int64_t> ext(3, 1);
  for (int i = 0; i < sp; ++i)
    ext[static_cast<std::size_t>(3 - sp + i)] = dims[static_cast<std::size_t>(2 + i)];
  const int64_t lo = (d.size - 1) / 2, hi = d.size / 2;
  const bool across = d.mode == LrnMode::kAcrossChannels;
  const double n = across ? static_cast<double>(d.size) : std::pow(static_cast<double>(d.size), sp);
  const int64_t plane = ext[0] * ext[1] * ext[2];
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < dims[0]; ++b)
    for (int64_t c = 0; c < dims[1]; ++c)
      for (int64_t p = 0; p < ext[0]; ++p)
        for (int64_t q = 0; q < ext[1]; ++q)
          for (int64_t r = 0; r < ext[2]; ++r) {
            auto at = [&](int64_t cc, int64_t pp, int64_t qq, int64_t rr) {
              return static_cast<std::size_t>((b * dims[1] + cc) * plane +
                                              (pp * ext[1] + qq) * ext[2] + rr);
            };
            double sum = 0.0;
            if (across) {
              for (int64_t j = std::max<int64_t>(0, c - lo); j <= std::min(dims[1] - 1, c + hi);
                   ++j)
                sum += std::pow(x[at(j, p, q, r)], 2);
            } else {
              auto lo_of = [&](int i, int64_t v) {
                return i < 3 - sp ? v : std::max<int64_t>(0, v - lo);
              };
              auto hi_of = [&](int i, int64_t v) {
                return i < 3 - sp ? v : std::min(ext[static_cast<std::size_t>(i)] - 1, v + hi);
              };
              for (int64_t pp = lo_of(0, p); pp <= hi_of(0, p); ++pp)
                for (int64_t qq = lo_of(1, q); qq <= hi_of(1, q); ++qq)
                  for (int64_t rr = lo_of(2, r); rr <= hi_of(2, r); ++rr)
                    sum += std::pow(x[at(c, pp, qq, rr)], 2);
            }
            y[at(c, p, q, r)] = x[at(c, p, q, r)] * std::pow(d.k + d.alpha / n * sum, -d.beta);
          }
  return y;
}

TEST(Lrn, ReferenceMatchesIndependentOracle) {
  Handle h;
  std::mt19937_64 gen(2);
  for (LrnMode mode : {LrnMode::kAcrossChannels, LrnMode::kWithinChannel})
    for (const auto& dims : {std::vector<int64_t>{2, 5, 9}, std::vector<int64_t>{1, 4, 5, 6},
                             std::vector<int64_t>{1, 3, 3, 4, 5}})
      for (int64_t size : {1, 2, 3, 4}) {
        const LrnDesc d = lrn(mode, size, 0.7, 0.75, 1.5);
        SCOPED_TRACE(describe(d, dims));
        const TensorDesc xd = strided(DType::kF32, dims);
        const auto xv = random_values(static_cast<std::size_t>(xd.numel()), gen, -2.0f, 2.0f);
        const auto y = forward(h, d, xd, xv);
        const auto expect = oracle(d, dims, xv);
        for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expect[i], 1e-6) << i;
        // Packed layouts run the same reference (within) or the kernels (across).
        for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
          const auto yl = forward(h, d, TensorDesc::make(DType::kF32, dims, l), xv);
          for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(yl[i], expect[i], 2e-6) << i;
        }
      }
}

TEST(Lrn, BackwardMatchesFiniteDifferences) {
  Handle h;
  std::mt19937_64 gen(3);
  struct C {
    LrnMode mode;
    std::vector<int64_t> dims;
    int64_t size;
  };
  for (const C& c :
       {C{LrnMode::kAcrossChannels, {2, 5, 2, 3}, 3}, C{LrnMode::kAcrossChannels, {1, 6, 7}, 4},
        C{LrnMode::kWithinChannel, {1, 2, 4, 5}, 3}, C{LrnMode::kWithinChannel, {2, 2, 7}, 2},
        C{LrnMode::kWithinChannel, {1, 1, 3, 3, 4}, 2}})
    for (double beta : {0.75, 0.6})
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        const LrnDesc d = lrn(c.mode, c.size, 0.9, beta, 1.1);
        SCOPED_TRACE(describe(d, c.dims) + " " + std::string(layout_name(l)));
        const TensorDesc td = TensorDesc::make(DType::kF32, c.dims, l);
        const auto xv = random_values(static_cast<std::size_t>(td.numel()), gen, -2.0f, 2.0f);
        const auto w = random_values(xv.size(), gen);
        const auto dx = backward(h, d, td, xv, w);
        for (std::size_t i = 0; i < xv.size(); ++i) {
          std::vector<float> a = xv, b = xv;
          a[i] += 2e-3f;
          b[i] -= 2e-3f;
          double la = 0.0, lb = 0.0;
          const auto ya = forward(h, d, td, a), yb = forward(h, d, td, b);
          for (std::size_t j = 0; j < w.size(); ++j) {
            la += static_cast<double>(w[j]) * ya[j];
            lb += static_cast<double>(w[j]) * yb[j];
          }
          const double fd = (la - lb) / (static_cast<double>(a[i]) - b[i]);
          ASSERT_NEAR(dx[i], fd, 2e-3 * (1.0 + std::fabs(fd))) << "element " << i;
        }
      }
}

// Large inputs (1e18: d near 1e35), windows whose sum of squares overflows f32 (3e19: d = +inf
// in the kernels, d^-beta = 0 there, where the f64 reference's y is at most about 1e-9 for
// beta >= 3/4; for smaller betas it stays far from 0 (x / sqrt(alpha/n x^2) at 1/2), which the
// f32 squares cannot give, so those have no overflowing windows here) and NaN inputs (NaN
// through their windows)
// come out as the reference's, for the betas with their own formulas (3/4 and 1/2 from an
// estimate of d^-1/2, 1 by division) and the general one, on every ISA and both layouts.
TEST(Lrn, OverflowingWindowsAndNaN) {
  Handle h;
  std::mt19937_64 gen(7);
  const std::vector<int64_t> dims = {2, 19, 5, 6};
  for (double beta : {0.75, 0.5, 1.0, 0.6}) {
    const LrnDesc d = lrn(LrnMode::kAcrossChannels, 5, 0.8, beta, 1.25);
    SCOPED_TRACE(describe(d, dims));
    const TensorDesc rd = strided(DType::kF32, dims);
    auto xv = random_values(static_cast<std::size_t>(rd.numel()), gen, -2.0f, 2.0f);
    const float big = beta >= 0.75 ? 3e19f : 1e18f;
    for (std::size_t i = 0; i < xv.size(); i += 23) xv[i] = i % 2 ? big : -big;
    for (std::size_t i = 11; i < xv.size(); i += 29) xv[i] = 1e18f;
    xv[40] = std::numeric_limits<float>::quiet_NaN();
    const auto ry = forward(h, d, rd, xv);
    int nans = 0;
    for (float v : ry) nans += std::isnan(v);
    ASSERT_GT(nans, 0);
    for_each_isa([&](Isa) {
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        SCOPED_TRACE(std::string(layout_name(l)));
        const auto y = forward(h, d, TensorDesc::make(DType::kF32, dims, l), xv);
        ASSERT_EQ(y.size(), ry.size());
        for (std::size_t i = 0; i < y.size(); ++i) {
          if (std::isnan(ry[i])) {
            EXPECT_TRUE(std::isnan(y[i])) << "element " << i;
          } else {
            EXPECT_NEAR(y[i], ry[i], 1e-6 + 2e-6 * std::fabs(ry[i])) << "element " << i;
          }
        }
      }
    });
  }
}

TEST(Lrn, SameBitsForAnyThreadCount) {
  Handle h1, h2;
  ASSERT_TRUE(h1.set_num_threads(1).is_ok());
  ASSERT_TRUE(h2.set_num_threads(2).is_ok());
  std::mt19937_64 gen(4);
  const std::vector<int64_t> dims = {2, 33, 30, 31};
  for (Layout l : {Layout::kNCHW, Layout::kNHWC})
    for (double beta : {0.75, 0.6}) {
      const LrnDesc d = lrn(LrnMode::kAcrossChannels, 5, 1e-4, beta, 1.0);
      const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
      const auto xv = random_values(static_cast<std::size_t>(td.numel()), gen);
      const auto dyv = random_values(xv.size(), gen);
      EXPECT_TRUE(identical(forward(h1, d, td, xv), forward(h2, d, td, xv)));
      EXPECT_TRUE(identical(backward(h1, d, td, xv, dyv), backward(h2, d, td, xv, dyv)));
    }
}

TEST(Lrn, HalfPrecision) {
  Handle h;
  std::mt19937_64 gen(5);
  const std::vector<int64_t> dims = {2, 17, 4, 5};
  for (DType t : {DType::kBF16, DType::kF16}) {
    const LrnDesc d = lrn(LrnMode::kAcrossChannels, 5, 0.8, 0.75, 1.0);
    const auto xv = testing::rounded(random_values(680, gen), t);
    const auto dyv = testing::rounded(random_values(680, gen), t);
    const double tol = t == DType::kBF16 ? 1e-2 : 2e-3;
    const auto ry = forward(h, d, strided(t, dims), xv);
    const auto rdx = backward(h, d, strided(t, dims), xv, dyv);
    for_each_isa([&](Isa) {
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        const TensorDesc td = TensorDesc::make(t, dims, l);
        EXPECT_TRUE(close(forward(h, d, td, xv), ry, tol, tol));
        EXPECT_TRUE(close(backward(h, d, td, xv, dyv), rdx, tol, tol));
      }
    });
  }
}

TEST(Lrn, BadArgumentsWriteNothing) {
  Handle h;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {1, 3, 4, 4});
  const Buf x = make_buf(xd, 1.0f);
  Buf y = make_buf(xd, 42.0f);
  struct Bad {
    const char* what;
    LrnDesc d;
    TensorDesc x;
    const char* needle;
  };
  const LrnMode across = LrnMode::kAcrossChannels, within = LrnMode::kWithinChannel;
  const Bad cases[] = {
      {"size 0", lrn(across, 0, 1e-4, 0.75, 1.0), xd, "size = 0"},
      {"k 0", lrn(across, 5, 1e-4, 0.75, 0.0), xd, "k > 0"},
      {"alpha", lrn(across, 5, -1.0, 0.75, 1.0), xd, "alpha >= 0"},
      {"beta", lrn(across, 5, 1e-4, NAN, 1.0), xd, "finite"},
      {"mode", lrn(static_cast<LrnMode>(3), 5, 1e-4, 0.75, 1.0), xd, "unknown LRN mode"},
      {"within rank 2", lrn(within, 3, 1e-4, 0.75, 1.0), TensorDesc::make(DType::kF32, {3, 16}),
       "rank 2"},
      {"within rank 6", lrn(within, 3, 1e-4, 0.75, 1.0),
       TensorDesc::make(DType::kF32, {1, 1, 1, 1, 4, 4}), "rank 6"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.what);
    const Status s = lrn_forward(h, b.d, b.x, x.data(), b.x, y.data());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(b.needle), std::string::npos) << s.message();
  }
  const LrnDesc d = lrn(across, 5, 1e-4, 0.75, 1.0);
  EXPECT_NE(lrn_forward(h, d, xd, nullptr, xd, y.data()).message().find("x is null"),
            std::string::npos);
  EXPECT_NE(
      lrn_backward(h, d, xd, x.data(), xd, nullptr, xd, y.data()).message().find("dy is null"),
      std::string::npos);
  EXPECT_FALSE(
      lrn_forward(h, d, xd, x.data(), TensorDesc::make(DType::kF32, {1, 3, 4, 5}), y.data())
          .is_ok());
  EXPECT_EQ(get(y), std::vector<float>(48, 42.0f));
}

TEST(Lrn, DispatchAndBenchLines) {
  Handle h;
  const std::vector<int64_t> dims = {1, 8, 6, 6};
  const std::vector<float> xv(288, 0.5f);
  for_each_isa([&](Isa isa) {
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc td = TensorDesc::make(DType::kF32, dims, l);
      const std::string log = testing::log_of(log::Category::kDispatch, [&] {
        forward(h, lrn(LrnMode::kAcrossChannels, 5, 1e-4, 0.75, 1.0), td, xv);
      });
      EXPECT_NE(log.find("chose lrn_across_f32_" + std::string(isa_name(isa))), std::string::npos)
          << log;
    }
  });
  const TensorDesc td = TensorDesc::make(DType::kF32, dims);
  std::string log = testing::log_of(log::Category::kDispatch, [&] {
    forward(h, lrn(LrnMode::kWithinChannel, 3, 1e-4, 0.75, 1.0), td, xv);
  });
  EXPECT_NE(log.find("chose lrn_ref"), std::string::npos) << log;
  log = testing::log_of(log::Category::kBench, [&] {
    forward(h, lrn(LrnMode::kAcrossChannels, 5, 1e-4, 0.75, 2.0), td, xv);
  });
  EXPECT_NE(log.find("tessera bench dnn norm --kind lrn --lrn-mode across --size 5 --alpha 0.0001 "
                     "--beta 0.75 --k 2 --dims 1x8x6x6 --layout nchw --dtype f32 --dir fwd"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace tessera::dnn
