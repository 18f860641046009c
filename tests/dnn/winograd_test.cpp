// Winograd F(2x2,3x3) and F(4x4,3x3) convolution against the reference: tile edges (output
// sizes 1..9, 13, 56), channel counts around the vector width, asymmetric padding, groups, both
// layouts and every weight layout, post-ops, bf16/f16 storage, backward-data through the
// flipped forward, every ISA level, thread-count independence, refusals, and the documented
// error bound (docs/dnn_winograd.md); backward-weights over the same sweeps, several tile
// blocks, and its own bound.
#include <algorithm>
#include <cmath>

#include "conv_test_util.hpp"
#include "tessera/core/thread_pool.hpp"
#include "test_util.hpp"

namespace tessera::dnn::testing {
namespace {

using tessera::testing::for_each_isa;

constexpr ConvAlgo kWinograd[] = {ConvAlgo::kWinogradF2x3, ConvAlgo::kWinogradF4x3};

// The documented bound: |y - y_direct| <= bound * sqrt(9 * Cg) * max(1, |y_direct|) for inputs
// and weights in [-1, 1] and Cg <= 512 (y_direct: the f64 reference rounded to f32). Worst
// seen: 8.3e-7 (F2) and 9.4e-6 (F4); the f32 direct and im2col algorithms: 1.3e-6.
double bound_of(ConvAlgo a) {
  return a == ConvAlgo::kWinogradF4x3 ? 2e-5 : 2e-6;
}

// Winograd refuses outputs its tiles cover with so much padding that they need no fewer
// multiplications than the direct method: alpha^2 * tiles >= 9 * OH * OW.
bool saves_work(ConvAlgo a, std::int64_t oh, std::int64_t ow) {
  const std::int64_t m = a == ConvAlgo::kWinogradF4x3 ? 4 : 2;
  return (m + 2) * (m + 2) * ((oh + m - 1) / m) * ((ow + m - 1) / m) < 9 * oh * ow;
}

struct Data {
  std::vector<std::uint8_t> x, w, y, res;
  std::vector<float> bias;
};

Data make_data(const ConvCase& cc, unsigned seed) {
  Data d;
  d.x = random_tensor(cc.x_desc(), seed);
  d.w = random_tensor(cc.w_desc(), seed + 1);
  d.y = nan_tensor(cc.y_desc());
  d.res = random_tensor(cc.y_desc(), seed + 2);
  d.bias.resize(static_cast<std::size_t>(cc.k));
  for (std::size_t i = 0; i < d.bias.size(); ++i)
    d.bias[i] = 0.05f * static_cast<float>(i % 11) - 0.25f;
  return d;
}

PostOps post_ops(Data& d, ActKind act) {
  PostOps po;
  po.bias = d.bias.data();
  po.residual = d.res.data();
  po.act = Activation::make(act);
  if (act == ActKind::kClip) po.act = Activation::relu6();
  return po;
}

Status forward(Handle& h, const ConvCase& cc, Data& d, ConvAlgo algo, const PostOps& po,
               const TensorDesc& wd) {
  return conv_forward(h, cc.desc(), cc.x_desc(), d.x.data(), wd, d.w.data(), cc.y_desc(),
                      d.y.data(), po, algo);
}

// Largest |got - ref| / (sqrt(terms) * max(1, |ref|)) over every element (NaN in one of them:
// infinity), for outputs that are sums of `terms` products.
double scaled_error(double terms, const std::vector<std::uint8_t>& got,
                    const std::vector<std::uint8_t>& ref, const TensorDesc& od) {
  const double scale = std::sqrt(terms);
  double worst = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(od.span()); ++i) {
    const double a = value_at(got, od.dtype, i), e = value_at(ref, od.dtype, i);
    if (std::isnan(a) && std::isnan(e)) continue;  // a gap of strided outputs, left alone by both
    const double err = std::fabs(a - e) / (scale * std::max(1.0, std::fabs(e)));
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
  }
  return worst;
}

// Runs the reference and both Winograd algorithms on the same data (y NaN-filled first) and
// checks the documented bound, or the refusal of outputs too small for the tiles. `wd`
// overrides the weight descriptor (custom strides).
void check(Handle& h, const ConvCase& cc, ActKind act = ActKind::kIdentity, bool post = false,
           const TensorDesc* wd = nullptr) {
  SCOPED_TRACE(cc.name() + (post ? " +post " + std::string(act_name(act)) : ""));
  const TensorDesc w = wd ? *wd : cc.w_desc();
  Data ref = make_data(cc, 11);
  if (wd) ref.w = random_tensor(w, 12);  // values over the whole span of the strided weights
  const PostOps pr = post ? post_ops(ref, act) : PostOps{};
  ASSERT_TRUE(forward(h, cc, ref, ConvAlgo::kReference, pr, w).is_ok());
  for (ConvAlgo algo : kWinograd) {
    SCOPED_TRACE(algo_name(algo));
    Data got = ref;
    got.y = nan_tensor(cc.y_desc());
    const PostOps pg = post ? post_ops(got, act) : PostOps{};
    Status s = forward(h, cc, got, algo, pg, w);
    const TensorDesc yd = cc.y_desc();
    if (!saves_work(algo, yd.dims[2], yd.dims[3])) {
      EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
      EXPECT_NE(s.message().find("too small"), std::string::npos) << s.message();
      EXPECT_EQ(got.y, nan_tensor(yd));
      continue;
    }
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    double tol = bound_of(algo);
    if (cc.dtype != DType::kF32)  // plus one unit in the last place of the stored output
      tol += std::ldexp(1.0, cc.dtype == DType::kBF16 ? -7 : -10) /
             std::sqrt(9.0 * static_cast<double>(cc.c / cc.groups));
    EXPECT_LE(scaled_error(9.0 * static_cast<double>(cc.c / cc.groups), got.y, ref.y, cc.y_desc()), tol);
  }
}

ConvCase same_pad(std::int64_t n, std::int64_t c, std::int64_t k, std::int64_t g, std::int64_t h,
                  std::int64_t w, Layout l) {
  ConvCase cc{n, c, k, g, {h, w}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
  cc.layout = cc.wlayout = l;
  return cc;
}

// Output sizes 1..9 and 13 in both dims (paired so each appears in each dim), every remainder
// modulo the 2- and 4-pixel tiles, and the smallest squares; F(4x4,3x3) refuses the one-row and
// 2x2 outputs, F(2x2,3x3) the 1x1 and 1x3 ones.
std::vector<std::pair<std::int64_t, std::int64_t>> tile_edge_shapes() {
  const std::int64_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13};
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{1, 1}, {2, 2}, {3, 3}};
  for (std::size_t i = 0; i < std::size(sizes); ++i)
    shapes.emplace_back(sizes[i], sizes[(i + 3) % std::size(sizes)]);
  return shapes;
}

TEST(WinogradTest, TileEdgesMatchTheReference) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (auto [oh, ow] : tile_edge_shapes()) check(h, same_pad(2, 8, 9, 1, oh, ow, l));
}

TEST(WinogradTest, ChannelCountsAroundTheVectorWidth) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (auto [c, k] : {std::pair{8, 8}, {15, 17}, {16, 16}, {17, 15}, {33, 40}, {64, 64}})
      for (Layout wl : {Layout::kNCHW, Layout::kNHWC}) {
        ConvCase cc = same_pad(1, c, k, 1, 7, 10, l);
        cc.wlayout = wl;
        check(h, cc);
      }
}

TEST(WinogradTest, LargeImage) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW}) check(h, same_pad(1, 8, 8, 1, 56, 56, l));
}

TEST(WinogradTest, AsymmetricAndLargePadding) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (auto [pb, pe] :
         {std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>{{0, 0}, {0, 0}},
          {{2, 0}, {0, 1}},
          {{0, 2}, {1, 0}},
          {{3, 1}, {2, 4}}}) {
      ConvCase cc{2, 12, 10, 1, {9, 11}, {3, 3}, {}, {}, pb, pe};
      cc.layout = cc.wlayout = l;
      check(h, cc);
    }
}

TEST(WinogradTest, Groups) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (auto [c, k, g] : {std::tuple{16, 24, 2}, {27, 33, 3}, {64, 64, 4}})
      check(h, same_pad(2, c, k, g, 6, 9, l));
}

TEST(WinogradTest, StridedWeights) {
  // Weights with padded strides reach the generic gather.
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
    const ConvCase cc = same_pad(1, 10, 12, 1, 8, 7, l);
    TensorDesc wd = cc.w_desc();
    wd.strides = {10 * 9 * 2, 9 * 2, 3 * 2, 2};  // every other float
    check(h, cc, ActKind::kIdentity, false, &wd);
  }
}

TEST(WinogradTest, PostOpsMatchTheReference) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (ActKind act : {ActKind::kIdentity, ActKind::kRelu, ActKind::kLeakyRelu, ActKind::kClip,
                        ActKind::kGeluTanh, ActKind::kSigmoid})
      check(h, same_pad(2, 16, 21, 1, 7, 6, l), act, true);
}

TEST(WinogradTest, HalfPrecisionStorage) {
  Handle h;
  for (DType t : {DType::kBF16, DType::kF16})
    for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
      ConvCase cc = same_pad(1, 16, 16, 1, 6, 7, l);
      cc.dtype = t;
      check(h, cc, ActKind::kRelu, true);
    }
}

TEST(WinogradTest, EveryIsaLevel) {
  Handle h;
  for_each_isa([&](Isa) {
    for (Layout l : {Layout::kNHWC, Layout::kNCHW})
      for (const ConvCase& cc : {same_pad(2, 17, 15, 1, 5, 7, l), same_pad(1, 16, 40, 2, 9, 6, l)})
        for (ActKind act : {ActKind::kIdentity, ActKind::kLeakyRelu, ActKind::kClip})
          check(h, cc, act, act != ActKind::kIdentity);
  });
}

TEST(WinogradTest, BackwardDataThroughTheFlippedForward) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (auto [pb, pe] :
         {std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>{{1, 1}, {1, 1}},
          {{0, 2}, {1, 0}}}) {
      ConvCase cc{2, 12, 9, 1, {7, 10}, {3, 3}, {}, {}, pb, pe};
      cc.layout = cc.wlayout = l;
      SCOPED_TRACE(cc.name());
      const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
      const auto w = random_tensor(wd, 3), dy = random_tensor(yd, 4);
      auto ref = nan_tensor(xd);
      ASSERT_TRUE(conv_backward_data(h, cc.desc(), wd, w.data(), yd, dy.data(), xd, ref.data(),
                                     ConvAlgo::kReference)
                      .is_ok());
      for (ConvAlgo a : kWinograd) {
        auto got = nan_tensor(xd);
        Status s = conv_backward_data(h, cc.desc(), wd, w.data(), yd, dy.data(), xd, got.data(), a);
        ASSERT_TRUE(s.is_ok()) << s.to_string();
        // The reduction of dx runs over Kg output channels.
        EXPECT_LE(scaled_error(9.0 * static_cast<double>(cc.k / cc.groups), got, ref, xd), bound_of(a))
            << algo_name(a);
      }
    }
}

TEST(WinogradTest, BitwiseIdenticalForAnyThreadCount) {
  if (thread_pool().num_threads() < 2) GTEST_SKIP() << "needs a pool of >= 2 threads";
  // Many tiles (items over tiles), few tiles and many output channels (items over channel
  // ranges), groups.
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (const ConvCase& cc : {same_pad(2, 16, 24, 1, 30, 29, l), same_pad(1, 40, 200, 1, 5, 6, l),
                               same_pad(3, 24, 36, 3, 11, 9, l)})
      for (ConvAlgo a : kWinograd) {
        SCOPED_TRACE(cc.name() + " " + std::string(algo_name(a)));
        Handle h1, h2;
        ASSERT_TRUE(h1.set_num_threads(1).is_ok());
        ASSERT_TRUE(h2.set_num_threads(2).is_ok());
        Data d1 = make_data(cc, 5), d2 = make_data(cc, 5);
        ASSERT_TRUE(forward(h1, cc, d1, a, post_ops(d1, ActKind::kGeluTanh), cc.w_desc()).is_ok());
        ASSERT_TRUE(forward(h2, cc, d2, a, post_ops(d2, ActKind::kGeluTanh), cc.w_desc()).is_ok());
        EXPECT_EQ(d1.y, d2.y);
      }
}

TEST(WinogradTest, ErrorStaysWithinTheDocumentedBound) {
  // The deepest reduction the bound covers (the sweeps above have Cg <= 64).
  Handle h;
  check(h, same_pad(1, 512, 16, 1, 8, 8, Layout::kNHWC));
}

TEST(WinogradTest, RefusalsNameTheReason) {
  Handle h;
  struct Refused {
    ConvCase cc;
    const char* reason;
  };
  ConvCase mixed = same_pad(1, 8, 8, 1, 6, 6, Layout::kNHWC);
  std::vector<Refused> cases = {
      {ConvCase{1, 8, 8, 1, {9, 9}, {5, 5}, {}, {}, {2, 2}, {2, 2}}, "3x3 kernel"},
      {ConvCase{1, 8, 8, 1, {9, 9}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}}, "stride 1"},
      {ConvCase{1, 8, 8, 1, {9, 9}, {3, 3}, {}, {2, 2}, {2, 2}, {2, 2}}, "dilation 1"},
      {ConvCase{1, 8, 8, 1, {9}, {3}, {}, {}, {1}, {1}}, "2-D"},
      {ConvCase{1, 8, 8, 1, {5, 5, 5}, {3, 3, 3}, {}, {}, {1, 1, 1}, {1, 1, 1}}, "2-D"},
      {same_pad(1, 7, 16, 1, 6, 6, Layout::kNCHW), "fewer than 8"},
      {same_pad(1, 16, 4, 1, 6, 6, Layout::kNHWC), "fewer than 8"},
      {same_pad(1, 32, 32, 8, 6, 6, Layout::kNHWC), "fewer than 8"},
  };
  for (const Refused& r : cases)
    for (ConvAlgo a : kWinograd) {
      SCOPED_TRACE(r.cc.name());
      Data d = make_data(r.cc, 1);
      const auto before = d.y;
      Status s = forward(h, r.cc, d, a, {}, r.cc.w_desc());
      EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
      EXPECT_NE(s.message().find(r.reason), std::string::npos) << s.message();
      EXPECT_EQ(d.y, before);
    }
  // x in NHWC, y in NCHW.
  Data d = make_data(mixed, 1);
  const auto before = d.y;
  TensorDesc y = TensorDesc::make(DType::kF32, mixed.y_desc().dims, Layout::kNCHW);
  for (ConvAlgo a : kWinograd) {
    Status s = conv_forward(h, mixed.desc(), mixed.x_desc(), d.x.data(), mixed.w_desc(), d.w.data(),
                            y, d.y.data(), {}, a);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
    EXPECT_NE(s.message().find("packed alike"), std::string::npos) << s.message();
    EXPECT_EQ(d.y, before);
  }
}

// ---- backward-weights ----------------------------------------------------------------------

// The documented bound for dW = sum over N x OH x OW pixels of dy * x: |dw - dw_direct| <=
// bound * sqrt(N * OH * OW) * max(1, |dw_direct|) for x and dy in [-1, 1]. Worst seen: 2.0e-6
// (F2) and 7.8e-6 (F4), over 70 to 25088 pixels.
double wgrad_bound_of(ConvAlgo a) {
  return a == ConvAlgo::kWinogradF4x3 ? 2e-5 : 5e-6;
}

struct Wgrad {
  std::vector<std::uint8_t> dw;
  std::vector<float> db;
  Status status;
};

// dW (NaN-filled first, then written through `wd`) and the bias gradient.
Wgrad wgrad(Handle& h, const ConvCase& cc, const std::vector<std::uint8_t>& x,
            const std::vector<std::uint8_t>& dy, const TensorDesc& wd, ConvAlgo a) {
  Wgrad r{nan_tensor(wd), std::vector<float>(static_cast<std::size_t>(cc.k), NAN), {}};
  r.status = conv_backward_weights(h, cc.desc(), cc.x_desc(), x.data(), cc.y_desc(), dy.data(), wd,
                                   r.dw.data(), r.db.data(), a);
  return r;
}

double pixels_of(const ConvCase& cc) {
  const TensorDesc yd = cc.y_desc();
  return static_cast<double>(cc.n * yd.dims[2] * yd.dims[3]);
}

// Both Winograd algorithms against the reference on the same data: the bound, the bias
// gradient, or (outputs too small for the tiles) a refusal that leaves dW untouched.
void check_wgrad(Handle& h, const ConvCase& cc, const TensorDesc* wd_in = nullptr) {
  SCOPED_TRACE(cc.name());
  const TensorDesc wd = wd_in ? *wd_in : cc.w_desc();
  const auto x = random_tensor(cc.x_desc(), 21), dy = random_tensor(cc.y_desc(), 22);
  const Wgrad ref = wgrad(h, cc, x, dy, wd, ConvAlgo::kReference);
  ASSERT_TRUE(ref.status.is_ok()) << ref.status.to_string();
  const TensorDesc yd = cc.y_desc();
  for (ConvAlgo a : kWinograd) {
    SCOPED_TRACE(algo_name(a));
    const Wgrad got = wgrad(h, cc, x, dy, wd, a);
    if (!saves_work(a, yd.dims[2], yd.dims[3])) {
      EXPECT_EQ(got.status.code(), StatusCode::kUnsupported) << got.status.to_string();
      EXPECT_NE(got.status.message().find("too small"), std::string::npos) << got.status.message();
      EXPECT_EQ(got.dw, nan_tensor(wd));
      continue;
    }
    ASSERT_TRUE(got.status.is_ok()) << got.status.to_string();
    double tol = wgrad_bound_of(a);
    if (cc.dtype != DType::kF32)
      tol += std::ldexp(1.0, cc.dtype == DType::kBF16 ? -7 : -10) / std::sqrt(pixels_of(cc));
    EXPECT_LE(scaled_error(pixels_of(cc), got.dw, ref.dw, wd), tol);
    for (std::size_t k = 0; k < got.db.size(); ++k)
      EXPECT_NEAR(got.db[k], ref.db[k], 1e-5 * std::sqrt(pixels_of(cc)) * std::max(1.0f, std::fabs(ref.db[k])))
          << "dbias[" << k << "]";
  }
}

TEST(WinogradBwdWeightsTest, TileEdgesMatchTheReference) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (auto [oh, ow] : tile_edge_shapes()) check_wgrad(h, same_pad(2, 8, 9, 1, oh, ow, l));
}

TEST(WinogradBwdWeightsTest, ChannelsPanelsAndWeightLayouts) {
  // Input channels around the 32-wide panels, output channels around the 64-row blocks.
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (auto [c, k] : {std::pair{8, 8}, {15, 17}, {33, 40}, {32, 64}, {70, 130}})
      for (Layout wl : {Layout::kNCHW, Layout::kNHWC}) {
        ConvCase cc = same_pad(1, c, k, 1, 7, 10, l);
        cc.wlayout = wl;
        check_wgrad(h, cc);
      }
}

TEST(WinogradBwdWeightsTest, PaddingGroupsAndStridedWeights) {
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
    for (auto [pb, pe] :
         {std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>{{0, 0}, {0, 0}},
          {{2, 0}, {0, 1}},
          {{3, 1}, {2, 4}}}) {
      ConvCase cc{2, 12, 10, 1, {9, 11}, {3, 3}, {}, {}, pb, pe};
      cc.layout = cc.wlayout = l;
      check_wgrad(h, cc);
    }
    for (auto [c, k, g] : {std::tuple{16, 24, 2}, {27, 33, 3}, {64, 64, 4}})
      check_wgrad(h, same_pad(2, c, k, g, 6, 9, l));
    const ConvCase cc = same_pad(1, 10, 12, 1, 8, 7, l);
    TensorDesc wd = cc.w_desc();
    wd.strides = {10 * 9 * 2, 9 * 2, 3 * 2, 2};  // every other float
    check_wgrad(h, cc, &wd);
  }
}

TEST(WinogradBwdWeightsTest, ReductionOverSeveralTileBlocks) {
  // 3 x 16 x 16 = 768 4x4 tiles (3072 2x2 ones): more than one block of tiles, so dU
  // accumulates across blocks; two panels of input channels.
  Handle h;
  check_wgrad(h, same_pad(3, 40, 16, 1, 64, 64, Layout::kNHWC));
}

TEST(WinogradBwdWeightsTest, HalfPrecisionStorage) {
  Handle h;
  for (DType t : {DType::kBF16, DType::kF16}) {
    ConvCase cc = same_pad(1, 16, 16, 1, 6, 7, Layout::kNHWC);
    cc.dtype = t;
    check_wgrad(h, cc);
  }
}

TEST(WinogradBwdWeightsTest, EveryIsaLevel) {
  Handle h;
  for_each_isa([&](Isa) {
    for (Layout l : {Layout::kNHWC, Layout::kNCHW})
      for (const ConvCase& cc : {same_pad(2, 17, 15, 1, 5, 7, l), same_pad(1, 16, 40, 2, 9, 6, l)})
        check_wgrad(h, cc);
  });
}

TEST(WinogradBwdWeightsTest, BitwiseIdenticalForAnyThreadCount) {
  if (thread_pool().num_threads() < 2) GTEST_SKIP() << "needs a pool of >= 2 threads";
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (const ConvCase& cc : {same_pad(2, 16, 24, 1, 30, 29, l), same_pad(1, 40, 200, 1, 5, 6, l),
                               same_pad(3, 24, 36, 3, 11, 9, l), same_pad(3, 8, 8, 1, 64, 64, l)})
      for (ConvAlgo a : kWinograd) {
        SCOPED_TRACE(cc.name() + " " + std::string(algo_name(a)));
        Handle h1, h2;
        ASSERT_TRUE(h1.set_num_threads(1).is_ok());
        ASSERT_TRUE(h2.set_num_threads(2).is_ok());
        const auto x = random_tensor(cc.x_desc(), 7), dy = random_tensor(cc.y_desc(), 8);
        const Wgrad r1 = wgrad(h1, cc, x, dy, cc.w_desc(), a), r2 = wgrad(h2, cc, x, dy, cc.w_desc(), a);
        ASSERT_TRUE(r1.status.is_ok() && r2.status.is_ok());
        EXPECT_EQ(r1.dw, r2.dw);
        EXPECT_EQ(r1.db, r2.db);
      }
}

TEST(WinogradBwdWeightsTest, ErrorStaysWithinTheDocumentedBound) {
  // ResNet-50's longest reduction at batch 8: 8 x 56 x 56 = 25088 pixels per weight.
  Handle h;
  check_wgrad(h, same_pad(8, 16, 16, 1, 56, 56, Layout::kNHWC));
}

TEST(WinogradBwdWeightsTest, RefusalsNameTheReason) {
  Handle h;
  const ConvCase strided{1, 8, 8, 1, {9, 9}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}};
  const ConvCase five{1, 8, 8, 1, {9, 9}, {5, 5}, {}, {}, {2, 2}, {2, 2}};
  for (auto [cc, reason] : {std::pair{strided, "stride 1"}, {five, "3x3 kernel"},
                            {same_pad(1, 7, 16, 1, 6, 6, Layout::kNCHW), "fewer than 8"}})
    for (ConvAlgo a : kWinograd) {
      SCOPED_TRACE(cc.name());
      const auto x = random_tensor(cc.x_desc(), 1), dy = random_tensor(cc.y_desc(), 2);
      const Wgrad r = wgrad(h, cc, x, dy, cc.w_desc(), a);
      EXPECT_EQ(r.status.code(), StatusCode::kUnsupported) << r.status.to_string();
      EXPECT_NE(r.status.message().find(reason), std::string::npos) << r.status.message();
      EXPECT_EQ(r.dw, nan_tensor(cc.w_desc()));
    }
}

}  // namespace
}  // namespace tessera::dnn::testing
