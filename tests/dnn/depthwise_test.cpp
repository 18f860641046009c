// Depthwise convolution (groups == C == K, ConvAlgo::kDepthwise) against the reference: forward
// over register-block edges (widths 1..20, channel counts around the vector widths), kernel
// shapes (3x3 stride 1/2, 5x5, 1x3, 7x7, dilation, asymmetric and zero padding, 1-D, 3-D,
// batch > 1), both activation layouts and both weight layouts, strided weights, post-ops,
// NaN-prefilled outputs, every ISA level; backward data (as a flipped forward) and backward
// weights against the reference and by finite differences; bf16/f16 storage; bitwise-equal
// results for 1 and 2 threads; refusals that write nothing.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "conv_test_util.hpp"
#include "tessera/core/thread_pool.hpp"
#include "test_util.hpp"

namespace tessera::dnn::testing {
namespace {

using tessera::testing::for_each_isa;

struct Bufs {
  std::vector<std::uint8_t> x, w, y, res;
  std::vector<float> bias, dbias;
};

// Depthwise case: c channels (k = groups = c), spatial dims and kernel as given.
ConvCase dw_case(std::int64_t n, std::int64_t c, std::vector<std::int64_t> in,
                 std::vector<std::int64_t> ker, std::vector<std::int64_t> stride = {},
                 std::vector<std::int64_t> dil = {}, std::vector<std::int64_t> pb = {},
                 std::vector<std::int64_t> pe = {}) {
  ConvCase cc;
  cc.n = n;
  cc.c = cc.k = cc.groups = c;
  cc.in = std::move(in);
  cc.ker = std::move(ker);
  cc.stride = std::move(stride);
  cc.dil = std::move(dil);
  cc.pb = std::move(pb);
  cc.pe = std::move(pe);
  return cc;
}

// Same padding on both sides.
ConvCase dw_same(std::int64_t n, std::int64_t c, std::vector<std::int64_t> in,
                 std::vector<std::int64_t> ker, std::vector<std::int64_t> stride = {},
                 std::vector<std::int64_t> dil = {}) {
  std::vector<std::int64_t> pad;
  for (std::size_t i = 0; i < ker.size(); ++i)
    pad.push_back((ker[i] - 1) * (dil.empty() ? 1 : dil[i]) / 2);
  return dw_case(n, c, std::move(in), std::move(ker), std::move(stride), std::move(dil), pad, pad);
}

Bufs inputs(const ConvCase& cc, ConvDir dir, unsigned seed) {
  Bufs b;
  const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
  b.x = dir == ConvDir::kBackwardData ? nan_tensor(xd) : random_tensor(xd, seed);
  b.w = dir == ConvDir::kBackwardWeights ? nan_tensor(wd) : random_tensor(wd, seed + 1);
  b.y = dir == ConvDir::kForward ? nan_tensor(yd) : random_tensor(yd, seed + 2);
  b.res = random_tensor(yd, seed + 3);
  b.bias.resize(static_cast<std::size_t>(cc.k));
  for (std::size_t i = 0; i < b.bias.size(); ++i)
    b.bias[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  b.dbias.assign(static_cast<std::size_t>(cc.k), NAN);
  return b;
}

// Runs one direction with `algo`; the output lands in b.y (fwd), b.x (bwd-data) or b.w and
// b.dbias (bwd-weights). `post` (forward only) adds bias, residual and `act`.
Status run(Handle& h, const ConvCase& cc, ConvDir dir, ConvAlgo algo, Bufs& b, bool post,
           Activation act = Activation::make(ActKind::kGeluTanh)) {
  const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
  switch (dir) {
    case ConvDir::kForward: {
      PostOps po;
      if (post) {
        po.bias = b.bias.data();
        po.residual = b.res.data();
        po.act = act;
      }
      return conv_forward(h, cc.desc(), xd, b.x.data(), wd, b.w.data(), yd, b.y.data(), po, algo);
    }
    case ConvDir::kBackwardData:
      return conv_backward_data(h, cc.desc(), wd, b.w.data(), yd, b.y.data(), xd, b.x.data(), algo);
    case ConvDir::kBackwardWeights:
      return conv_backward_weights(h, cc.desc(), xd, b.x.data(), yd, b.y.data(), wd, b.w.data(),
                                   b.dbias.data(), algo);
  }
  return Status::ok();
}

const std::vector<std::uint8_t>& output_of(const Bufs& b, ConvDir dir) {
  return dir == ConvDir::kForward ? b.y : dir == ConvDir::kBackwardData ? b.x : b.w;
}
TensorDesc output_desc(const ConvCase& cc, ConvDir dir) {
  return dir == ConvDir::kForward        ? cc.y_desc()
         : dir == ConvDir::kBackwardData ? cc.x_desc()
                                         : cc.w_desc();
}

// Runs kDepthwise and the reference on the same inputs and compares every element of the
// output (prefilled with NaN, so anything left unwritten fails). Returns false if depthwise
// refused (kUnsupported); any other failure is a test failure.
bool matches_reference(Handle& h, const ConvCase& cc, ConvDir dir, bool post = false,
                       Activation act = Activation::make(ActKind::kGeluTanh)) {
  SCOPED_TRACE(cc.name() + " " + std::string(dir_name(dir)) + (post ? " +post" : ""));
  Bufs got = inputs(cc, dir, 11), ref = inputs(cc, dir, 11);
  const Status s = run(h, cc, dir, ConvAlgo::kDepthwise, got, post, act);
  if (s.code() == StatusCode::kUnsupported) return false;
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  const Status r = run(h, cc, dir, ConvAlgo::kReference, ref, post, act);
  EXPECT_TRUE(r.is_ok()) << r.to_string();
  // Length of the sum behind one output element, for the tolerance.
  double red = 1.0;
  for (auto v : cc.ker) red *= static_cast<double>(v);
  if (dir == ConvDir::kBackwardWeights) {
    red = static_cast<double>(cc.n);
    for (std::size_t i = 2; i < cc.y_desc().dims.size(); ++i)
      red *= static_cast<double>(cc.y_desc().dims[i]);
  }
  const TensorDesc od = output_desc(cc, dir);
  double tol = 3e-6 * std::sqrt(red) + 1e-6;
  if (od.dtype != DType::kF32)
    tol = (od.dtype == DType::kBF16 ? 1.6e-2 : 2e-3) * (1 + std::sqrt(red));
  const auto& a = output_of(got, dir);
  const auto& e = output_of(ref, dir);
  int bad = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(od.span()) && bad < 5; ++i) {
    const float av = value_at(a, od.dtype, i), ev = value_at(e, od.dtype, i);
    if (!(std::fabs(av - ev) <= tol * std::max(1.0f, std::fabs(ev)))) {
      ADD_FAILURE() << "element " << i << ": got " << av << ", reference " << ev << " (tol " << tol
                    << ")";
      ++bad;
    }
  }
  if (dir == ConvDir::kBackwardWeights) {
    for (std::size_t k = 0; k < got.dbias.size(); ++k)
      EXPECT_NEAR(got.dbias[k], ref.dbias[k], 1e-4 * (1 + std::fabs(ref.dbias[k])))
          << "dbias " << k;
  }
  return true;
}

// Both activation layouts, each with the matching and the other weight layout.
template <typename Fn>
void for_each_layout(ConvCase cc, Fn&& fn) {
  for (Layout l : {Layout::kNHWC, Layout::kNCHW})
    for (Layout wl : {Layout::kNHWC, Layout::kNCHW}) {
      cc.layout = l;
      cc.wlayout = wl;
      fn(cc);
    }
}

constexpr std::int64_t kChannels[] = {1, 7, 15, 16, 17, 31, 32, 33, 69};

// Kernel shapes, each with a channel count (overridden by the sweeps).
std::vector<ConvCase> shape_cases(std::int64_t c) {
  return {
      dw_same(1, c, {9, 11}, {3, 3}),                                 // 3x3 stride 1
      dw_same(2, c, {9, 11}, {3, 3}, {2, 2}),                         // 3x3 stride 2, batch 2
      dw_case(1, c, {10, 9}, {3, 3}, {2, 2}, {}, {0, 0}, {0, 0}),     // stride 2, no padding
      dw_case(1, c, {6, 8}, {3, 3}),                                  // no padding
      dw_same(1, c, {8, 12}, {5, 5}),                                 // 5x5
      dw_case(1, c, {9, 10}, {5, 5}, {2, 2}, {}, {1, 2}, {2, 1}),     // 5x5 stride 2, asymmetric
      dw_case(1, c, {5, 13}, {1, 3}, {}, {}, {0, 1}, {0, 1}),         // 1x3
      dw_same(1, c, {9, 10}, {7, 7}),                                 // 7x7
      dw_same(1, c, {9, 11}, {3, 3}, {}, {2, 2}),                     // dilation 2
      dw_case(1, c, {8, 9}, {3, 3}, {1, 3}, {1, 2}, {2, 0}, {0, 3}),  // strides, dilation, padding
      dw_case(1, c, {7, 6}, {3, 3}, {}, {}, {0, 2}, {1, 0}),          // asymmetric padding
      dw_case(1, c, {4, 5}, {3, 3}, {}, {}, {3, 3}, {3, 3}),          // rows wholly in padding
      dw_same(2, c, {17}, {3}),                                       // 1-D
      dw_case(1, c, {19}, {5}, {2}, {}, {2}, {1}),                    // 1-D stride 2
      dw_same(1, c, {4, 5, 6}, {3, 3, 3}),                            // 3-D
      dw_case(2, c, {5, 6, 7}, {2, 3, 3}, {1, 2, 2}, {}, {0, 1, 1}, {1, 1, 0}),  // 3-D strided
  };
}

// Backward data runs as a forward convolution of dy when the stride is 1 and no padding
// exceeds the dilated kernel extent; otherwise depthwise refuses it.
bool runs_as_forward(const ConvCase& cc) {
  for (std::size_t i = 0; i < cc.ker.size(); ++i) {
    const std::int64_t ext = (cc.dil.empty() ? 1 : cc.dil[i]) * (cc.ker[i] - 1);
    if ((!cc.stride.empty() && cc.stride[i] != 1) || (!cc.pb.empty() && cc.pb[i] > ext) ||
        (!cc.pe.empty() && cc.pe[i] > ext))
      return false;
  }
  return true;
}

TEST(DepthwiseTest, ForwardRegisterBlockEdges) {
  Handle h;
  for_each_isa([&](Isa) {
    for (std::int64_t c : {1, 16, 17, 33})
      for (std::int64_t w = 1; w <= 20; ++w)
        for (std::int64_t s : {1, 2})
          for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
            ConvCase cc = dw_same(1, c, {3, w}, {3, 3}, {s, s});
            cc.layout = cc.wlayout = l;
            EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward));
          }
  });
}

TEST(DepthwiseTest, ForwardShapesAndChannelCounts) {
  Handle h;
  for_each_isa([&](Isa) {
    for (std::size_t ci = 0; ci < std::size(kChannels); ++ci) {
      // Every shape for the vector-edge counts 17 and 33; the other counts on every third
      // shape, rotating, so each shape meets several of them.
      const std::int64_t c = kChannels[ci];
      const bool all = c == 17 || c == 33;
      const std::vector<ConvCase> cases = shape_cases(c);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (!all && (i + ci) % 3 != 0) continue;
        for_each_layout(cases[i], [&](const ConvCase& cc) {
          EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward));
        });
      }
    }
  });
}

TEST(DepthwiseTest, ForwardSmallImagesManyChannels) {
  // Few output rows and many channels: the work splits over channel chunks too.
  Handle h;
  for_each_isa([&](Isa) {
    for (ConvCase cc : {dw_same(1, 200, {7, 7}, {3, 3}), dw_same(1, 97, {5, 4}, {3, 3}, {2, 2}),
                        dw_same(1, 130, {1, 6}, {3, 3}), dw_same(1, 300, {2, 2}, {5, 5})})
      for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
        cc.layout = cc.wlayout = l;
        EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward));
        EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward, true, Activation::relu6()));
      }
  });
}

TEST(DepthwiseTest, ForwardLargePlanes) {
  // Planes too large for the channels-first blocked path (input + output plane over 32768
  // pixels) run vectors along rows (forward) or dot products along rows (backward weights).
  Handle h;
  for_each_isa([&](Isa) {
    for (ConvCase cc :
         {dw_same(1, 3, {130, 131}, {3, 3}), dw_same(1, 2, {170, 161}, {3, 3}, {2, 2}),
          dw_case(1, 2, {170, 151}, {5, 5}, {1, 2}, {}, {2, 1}, {1, 2})})
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        cc.layout = cc.wlayout = l;
        EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward, true, Activation::relu6()));
        EXPECT_TRUE(matches_reference(h, cc, ConvDir::kBackwardWeights));
      }
  });
}

TEST(DepthwiseTest, ForwardChannelsFirstBands) {
  // Wide channels-first planes run in bands of output rows, each transposing only the input
  // rows its windows read: many bands, stride 2, dilation, asymmetric padding, a channel tail.
  Handle h;
  for_each_isa([&](Isa) {
    for (ConvCase cc : {dw_same(2, 17, {23, 200}, {3, 3}), dw_same(1, 33, {25, 201}, {3, 3}, {2, 2}),
                        dw_same(1, 16, {20, 210}, {3, 3}, {}, {2, 2}),
                        dw_case(1, 20, {19, 190}, {5, 3}, {2, 1}, {}, {1, 0}, {3, 2})}) {
      cc.layout = cc.wlayout = Layout::kNCHW;
      EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward));
      EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward, true, Activation::relu6()));
    }
  });
}

TEST(DepthwiseTest, PostOps) {
  Handle h;
  const Activation acts[] = {Activation::make(ActKind::kRelu), Activation::relu6(),
                             Activation::make(ActKind::kGeluTanh),
                             Activation::make(ActKind::kLeakyRelu), Activation{}};
  for_each_isa([&](Isa) {
    for (std::int64_t c : {17, 32})
      for (ConvCase cc : {dw_same(2, c, {6, 9}, {3, 3}), dw_same(1, c, {7, 7}, {3, 3}, {2, 2}),
                          dw_same(1, c, {5, 6}, {5, 5})})
        for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
          cc.layout = cc.wlayout = l;
          for (const Activation& a : acts)
            EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward, true, a)) << act_name(a.kind);
        }
  });
}

TEST(DepthwiseTest, StridedWeights) {
  // Weights that are not packed (a gap after each filter, taps column-major) take the general
  // repacking path.
  Handle h;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
    ConvCase cc = dw_same(1, 19, {6, 7}, {3, 3});
    cc.layout = cc.wlayout = l;
    TensorDesc wd = cc.w_desc();
    wd.strides = {13, 13, 1, 3};  // [C][1][kh][kw] with kh and kw swapped in memory, 4 spare
    const TensorDesc xd = cc.x_desc(), yd = cc.y_desc();
    std::vector<std::uint8_t> x = random_tensor(xd, 3), w = random_tensor(wd, 4);
    std::vector<std::uint8_t> y = nan_tensor(yd), yr = nan_tensor(yd);
    ASSERT_TRUE(conv_forward(h, cc.desc(), xd, x.data(), wd, w.data(), yd, y.data(), {},
                             ConvAlgo::kDepthwise)
                    .is_ok());
    ASSERT_TRUE(conv_forward(h, cc.desc(), xd, x.data(), wd, w.data(), yd, yr.data(), {},
                             ConvAlgo::kReference)
                    .is_ok());
    for (std::size_t i = 0; i < static_cast<std::size_t>(yd.numel()); ++i)
      ASSERT_NEAR(value_at(y, DType::kF32, i), value_at(yr, DType::kF32, i), 2e-5) << i;
    // Backward weights into the same strided layout; the gaps stay untouched.
    std::vector<std::uint8_t> dw = nan_tensor(wd), dwr = nan_tensor(wd);
    ASSERT_TRUE(conv_backward_weights(h, cc.desc(), xd, x.data(), yd, yr.data(), wd, dw.data(),
                                      nullptr, ConvAlgo::kDepthwise)
                    .is_ok());
    ASSERT_TRUE(conv_backward_weights(h, cc.desc(), xd, x.data(), yd, yr.data(), wd, dwr.data(),
                                      nullptr, ConvAlgo::kReference)
                    .is_ok());
    for (std::size_t i = 0; i < static_cast<std::size_t>(wd.span()); ++i) {
      const float a = value_at(dw, DType::kF32, i), e = value_at(dwr, DType::kF32, i);
      if (std::isnan(e)) {
        EXPECT_TRUE(std::isnan(a)) << "gap element " << i << " written";
      } else {
        EXPECT_NEAR(a, e, 1e-4 * (1 + std::fabs(e))) << i;
      }
    }
  }
}

TEST(DepthwiseTest, BackwardDataAsFlippedForward) {
  Handle h;
  for_each_isa([&](Isa) {
    for (std::int64_t c : {1, 17, 33}) {
      for (const ConvCase& base : shape_cases(c))
        for_each_layout(base, [&](const ConvCase& cc) {
          EXPECT_EQ(matches_reference(h, cc, ConvDir::kBackwardData), runs_as_forward(cc));
        });
    }
  });
}

TEST(DepthwiseTest, BackwardWeights) {
  Handle h;
  for_each_isa([&](Isa) {
    for (std::size_t ci = 0; ci < std::size(kChannels); ++ci) {
      // Every shape for 17 channels; the other counts on every fourth shape, rotating.
      const std::int64_t c = kChannels[ci];
      const std::vector<ConvCase> cases = shape_cases(c);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (c != 17 && (i + ci) % 4 != 0) continue;
        for_each_layout(cases[i], [&](const ConvCase& cc) {
          EXPECT_TRUE(matches_reference(h, cc, ConvDir::kBackwardWeights));
        });
      }
    }
    // Many output rows (several row blocks summed in order) and a wide channel count.
    for (ConvCase cc : {dw_same(3, 20, {30, 9}, {3, 3}), dw_same(1, 150, {12, 5}, {3, 3}, {2, 2})})
      for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
        cc.layout = cc.wlayout = l;
        EXPECT_TRUE(matches_reference(h, cc, ConvDir::kBackwardWeights));
      }
  });
}

// L(x, w) = <conv(x, w), dy> in double through the reference forward; its central
// differences must match kDepthwise's dx and dw (the loss is linear in each, so the
// difference quotient is exact up to rounding).
TEST(DepthwiseTest, GradientsMatchFiniteDifferences) {
  Handle h;
  for (ConvCase cc :
       {dw_same(1, 5, {6, 7}, {3, 3}), dw_case(2, 3, {7, 6}, {3, 2}, {}, {2, 1}, {1, 0}, {2, 1}),
        dw_case(1, 4, {9, 8}, {3, 3}, {2, 2}, {}, {1, 1}, {0, 1})})
    for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
      cc.layout = cc.wlayout = l;
      SCOPED_TRACE(cc.name());
      const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
      std::vector<float> x(static_cast<std::size_t>(xd.numel())),
          w(static_cast<std::size_t>(wd.numel())), dy(static_cast<std::size_t>(yd.numel()));
      std::mt19937 g(5);
      std::uniform_real_distribution<float> u(-1, 1);
      for (auto* v : {&x, &w, &dy})
        for (auto& e : *v) e = u(g);
      auto loss = [&](const std::vector<float>& xx, const std::vector<float>& ww) {
        std::vector<float> y(dy.size());
        EXPECT_TRUE(conv_forward(h, cc.desc(), xd, xx.data(), wd, ww.data(), yd, y.data(), {},
                                 ConvAlgo::kReference)
                        .is_ok());
        double s = 0;
        for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * dy[i];
        return s;
      };
      std::vector<float> dx(x.size(), NAN), dw(w.size(), NAN),
          db(static_cast<std::size_t>(cc.k), NAN);
      const bool unit_stride = runs_as_forward(cc);
      const Status sd = conv_backward_data(h, cc.desc(), wd, w.data(), yd, dy.data(), xd, dx.data(),
                                           ConvAlgo::kDepthwise);
      ASSERT_EQ(sd.is_ok(), unit_stride) << sd.to_string();
      ASSERT_TRUE(conv_backward_weights(h, cc.desc(), xd, x.data(), yd, dy.data(), wd, dw.data(),
                                        db.data(), ConvAlgo::kDepthwise)
                      .is_ok());
      const float eps = 1e-2f;
      if (unit_stride)
        for (std::size_t i = 0; i < x.size(); i += 2) {
          auto xp = x, xm = x;
          xp[i] += eps, xm[i] -= eps;
          EXPECT_NEAR((loss(xp, w) - loss(xm, w)) / (2 * eps), dx[i], 2e-3) << "dx " << i;
        }
      for (std::size_t i = 0; i < w.size(); ++i) {
        auto wp = w, wm = w;
        wp[i] += eps, wm[i] -= eps;
        EXPECT_NEAR((loss(x, wp) - loss(x, wm)) / (2 * eps), dw[i], 2e-3) << "dw " << i;
      }
    }
}

TEST(DepthwiseTest, HalfPrecisionStorage) {
  Handle h;
  for (DType t : {DType::kBF16, DType::kF16})
    for (ConvCase cc : {dw_same(1, 17, {6, 7}, {3, 3}), dw_same(2, 32, {7, 5}, {3, 3}, {2, 2})})
      for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
        cc.dtype = t;
        cc.layout = cc.wlayout = l;
        EXPECT_TRUE(matches_reference(h, cc, ConvDir::kForward, true));
        EXPECT_TRUE(matches_reference(h, cc, ConvDir::kBackwardWeights));
        // Backward data runs as a forward convolution for stride 1 only.
        EXPECT_EQ(matches_reference(h, cc, ConvDir::kBackwardData), runs_as_forward(cc));
      }
}

TEST(DepthwiseTest, BitwiseIdenticalForOneAndTwoThreads) {
  if (thread_pool().num_threads() < 2) set_num_threads(2);
  ASSERT_GE(thread_pool().num_threads(), 2);
  Handle h1, h2;
  ASSERT_TRUE(h1.set_num_threads(1).is_ok());
  ASSERT_TRUE(h2.set_num_threads(2).is_ok());
  for_each_isa([&](Isa) {
    for (ConvCase cc : {dw_same(2, 40, {15, 15}, {3, 3}), dw_same(1, 200, {7, 7}, {3, 3}),
                        dw_same(1, 33, {9, 13}, {5, 5}, {2, 2}), dw_same(3, 8, {6, 6}, {3, 3}),
                        dw_same(1, 24, {30, 11}, {3, 3}, {2, 2})})
      for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
        cc.layout = cc.wlayout = l;
        for (ConvDir dir : {ConvDir::kForward, ConvDir::kBackwardData, ConvDir::kBackwardWeights}) {
          Bufs b1 = inputs(cc, dir, 3), b2 = inputs(cc, dir, 3);
          const Status s1 = run(h1, cc, dir, ConvAlgo::kDepthwise, b1, true);
          const Status s2 = run(h2, cc, dir, ConvAlgo::kDepthwise, b2, true);
          ASSERT_EQ(s1.code(), s2.code()) << cc.name();
          if (!s1.is_ok()) continue;  // bwd-data with stride 2
          EXPECT_EQ(output_of(b1, dir), output_of(b2, dir)) << cc.name() << " " << dir_name(dir);
          if (dir == ConvDir::kBackwardWeights) {
            EXPECT_EQ(b1.dbias, b2.dbias) << cc.name();
          }
        }
      }
  });
}

// The channels-last paths taken past the last-level cache (input rows staged in a per-thread
// ring, outputs streamed from a row buffer); tessera_dnn_depthwise_test_streamed runs this file
// with TESSERA_STREAM_BYTES=0, which sends every problem down them. 64-byte aligned buffers (the
// streamed stores need them), one thread (so one ring sees several images) and two, against the
// reference and each other bit for bit: several images, stride 2, 5x5, 3-D, a dilated window
// of two rows whose ring slots collide (left in place), post-ops, y misaligned by one float.
TEST(DepthwiseTest, ForwardPastTheCacheStagedAndStreamed) {
  if (thread_pool().num_threads() < 2) set_num_threads(2);
  Handle h1, h2;
  ASSERT_TRUE(h1.set_num_threads(1).is_ok());
  ASSERT_TRUE(h2.set_num_threads(2).is_ok());
  struct Aligned {
    explicit Aligned(const std::vector<std::uint8_t>& b)
        : p(static_cast<float*>(std::aligned_alloc(64, (b.size() + 127) / 64 * 64)), &std::free) {
      std::memcpy(p.get(), b.data(), b.size());
    }
    std::unique_ptr<float, decltype(&std::free)> p;
  };
  for_each_isa([&](Isa) {
    for (ConvCase cc : {dw_same(3, 48, {6, 9}, {3, 3}), dw_same(3, 40, {7, 10}, {3, 3}, {2, 2}),
                        dw_same(2, 64, {7, 8}, {5, 5}), dw_same(2, 48, {4, 5, 6}, {3, 3, 3}),
                        dw_case(2, 48, {8, 9}, {2, 3}, {}, {2, 1}, {1, 1}, {1, 1}),
                        dw_same(2, 33, {5, 6}, {3, 3})})
      for (bool post : {false, true})
        for (std::int64_t yoff : {0, 1}) {
          cc.layout = cc.wlayout = Layout::kNHWC;
          SCOPED_TRACE(cc.name() + (post ? " +post" : "") + " y offset " + std::to_string(yoff));
          const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
          const Bufs b = inputs(cc, ConvDir::kForward, 5);
          Aligned x(b.x), w(b.w), res(b.res), y1(b.y), y2(b.y), yr(b.y);
          PostOps po;
          if (post) {
            po.bias = b.bias.data();
            po.residual = res.p.get();
            po.act = Activation::relu6();
          }
          std::vector<float> r1(b.y.size() / 4 + 1, NAN), r2 = r1;
          float* out1 = yoff == 0 ? y1.p.get() : r1.data() + 1;
          float* out2 = yoff == 0 ? y2.p.get() : r2.data() + 1;
          const ConvDesc d = cc.desc();
          ASSERT_TRUE(conv_forward(h1, d, xd, x.p.get(), wd, w.p.get(), yd, out1, po, ConvAlgo::kDepthwise).is_ok());
          ASSERT_TRUE(conv_forward(h2, d, xd, x.p.get(), wd, w.p.get(), yd, out2, po, ConvAlgo::kDepthwise).is_ok());
          ASSERT_TRUE(conv_forward(h1, d, xd, x.p.get(), wd, w.p.get(), yd, yr.p.get(), po, ConvAlgo::kReference).is_ok());
          const std::int64_t n = yd.span();
          EXPECT_EQ(std::memcmp(out1, out2, static_cast<std::size_t>(n) * 4), 0);
          double red = 1.0;
          for (auto v : cc.ker) red *= static_cast<double>(v);
          const float tol = static_cast<float>(3e-6 * std::sqrt(red) + 1e-6);
          int bad = 0;
          for (std::int64_t i = 0; i < n && bad < 5; ++i) {
            const float got = out1[i], want = yr.p.get()[i];
            if (!(std::fabs(got - want) <= tol * std::max(1.0f, std::fabs(want)))) {
              ADD_FAILURE() << "element " << i << ": got " << got << ", reference " << want;
              ++bad;
            }
          }
        }
  });
}

TEST(DepthwiseTest, RefusalsNameTheReasonAndWriteNothing) {
  Handle h;
  auto expect_refused = [&](const ConvCase& cc, const TensorDesc& xd, const TensorDesc& yd,
                            const char* needle) {
    std::vector<std::uint8_t> x = random_tensor(xd, 1), w = random_tensor(cc.w_desc(), 2);
    std::vector<std::uint8_t> y = nan_tensor(yd);
    const auto before = y;
    const Status s = conv_forward(h, cc.desc(), xd, x.data(), cc.w_desc(), w.data(), yd, y.data(),
                                  {}, ConvAlgo::kDepthwise);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
    EXPECT_EQ(y, before);
  };
  ConvCase grouped = dw_same(1, 8, {5, 5}, {3, 3});
  grouped.groups = 4;  // two channels per group
  expect_refused(grouped, grouped.x_desc(), grouped.y_desc(), "not depthwise");
  ConvCase mult = dw_same(1, 8, {5, 5}, {3, 3});
  mult.k = 16;  // channel multiplier 2
  expect_refused(mult, mult.x_desc(), mult.y_desc(), "channel multiplier");
  ConvCase mixed = dw_same(1, 8, {5, 5}, {3, 3});
  mixed.layout = Layout::kNHWC;
  TensorDesc yc = mixed.y_desc();
  yc = TensorDesc::make(DType::kF32, yc.dims, Layout::kNCHW);  // x NHWC, y NCHW
  expect_refused(mixed, mixed.x_desc(), yc, "packed alike");
  // The reference still computes such problems.
  std::vector<std::uint8_t> x = random_tensor(mixed.x_desc(), 1),
                            w = random_tensor(mixed.w_desc(), 2);
  std::vector<std::uint8_t> y = nan_tensor(yc);
  EXPECT_TRUE(conv_forward(h, mixed.desc(), mixed.x_desc(), x.data(), mixed.w_desc(), w.data(), yc,
                           y.data())
                  .is_ok());
}

}  // namespace
}  // namespace tessera::dnn::testing
