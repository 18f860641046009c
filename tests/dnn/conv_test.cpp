// Convolution: every algorithm against the reference over the descriptor classes (1-D/2-D/3-D,
// stride, dilation, asymmetric padding, groups, both layouts, both weight layouts, odd sizes,
// post-ops, bf16/f16), every ISA, thread-count independence, adjoint and finite-difference
// checks of the backward passes, Find mode with the tuning database, bad descriptors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#include "conv_test_util.hpp"
#include "tessera/core/thread_pool.hpp"
#include "tessera/hal/hal.hpp"
#include "tessera/tune/tune_db.hpp"
#include "test_util.hpp"

namespace tessera::dnn::testing {
namespace {

using tessera::testing::for_each_isa;
using tessera::testing::TempDir;

constexpr ConvAlgo kAllAlgos[] = {ConvAlgo::kDirect,       ConvAlgo::kIm2col,
                                  ConvAlgo::kGemm1x1,      ConvAlgo::kWinogradF2x3,
                                  ConvAlgo::kWinogradF4x3, ConvAlgo::kDepthwise,
                                  ConvAlgo::kFft};

struct Bufs {
  std::vector<std::uint8_t> x, w, y, res;
  std::vector<float> bias;
};

// Runs one direction. Returns the status; the output lands in b.y (fwd), b.x (bwd-data) or
// b.w (bwd-weights), and dbias into `dbias`.
Status run_dir(Handle& h, const ConvCase& cc, ConvDir dir, ConvAlgo algo, Bufs& b,
               bool post, std::vector<float>* dbias, ActKind act = ActKind::kGeluTanh) {
  const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
  switch (dir) {
    case ConvDir::kForward: {
      PostOps po;
      if (post) {
        po.bias = b.bias.data();
        po.residual = b.res.data();
        po.act = Activation::make(act);
      }
      return conv_forward(h, cc.desc(), xd, b.x.data(), wd, b.w.data(), yd, b.y.data(), po, algo);
    }
    case ConvDir::kBackwardData:
      return conv_backward_data(h, cc.desc(), wd, b.w.data(), yd, b.y.data(), xd, b.x.data(), algo);
    case ConvDir::kBackwardWeights:
      return conv_backward_weights(h, cc.desc(), xd, b.x.data(), yd, b.y.data(), wd, b.w.data(),
                                   dbias ? dbias->data() : nullptr, algo);
  }
  return Status::ok();
}

Bufs inputs(const ConvCase& cc, ConvDir dir, unsigned seed) {
  Bufs b;
  const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
  b.x = dir == ConvDir::kBackwardData ? nan_tensor(xd) : random_tensor(xd, seed);
  b.w = dir == ConvDir::kBackwardWeights ? nan_tensor(wd) : random_tensor(wd, seed + 1);
  b.y = dir == ConvDir::kForward ? nan_tensor(yd) : random_tensor(yd, seed + 2);
  b.res = random_tensor(yd, seed + 3);
  b.bias.resize(static_cast<std::size_t>(std::max<std::int64_t>(cc.k, 1)));
  for (std::size_t i = 0; i < b.bias.size(); ++i) b.bias[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  return b;
}

const std::vector<std::uint8_t>& output_of(const Bufs& b, ConvDir dir) {
  return dir == ConvDir::kForward ? b.y : dir == ConvDir::kBackwardData ? b.x : b.w;
}
TensorDesc output_desc(const ConvCase& cc, ConvDir dir) {
  return dir == ConvDir::kForward ? cc.y_desc() : dir == ConvDir::kBackwardData ? cc.x_desc() : cc.w_desc();
}

// Compares `algo` against the reference. Returns false when the algorithm refused.
bool compare(Handle& h, const ConvCase& cc, ConvDir dir, ConvAlgo algo, bool post,
             ActKind act = ActKind::kGeluTanh) {
  SCOPED_TRACE(cc.name() + " " + std::string(dir_name(dir)) + " " + std::string(algo_name(algo)) +
               (post ? " +post " + std::to_string(static_cast<int>(act)) : ""));
  Bufs ref = inputs(cc, dir, 7), got = inputs(cc, dir, 7);
  std::vector<float> db_ref(static_cast<std::size_t>(cc.k) + 1, NAN), db_got = db_ref;
  Status s = run_dir(h, cc, dir, algo, got, post, &db_got, act);
  if (s.code() == StatusCode::kUnsupported && algo != ConvAlgo::kAuto) return false;
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  Status r = run_dir(h, cc, dir, ConvAlgo::kReference, ref, post, &db_ref, act);
  EXPECT_TRUE(r.is_ok()) << r.to_string();
  const TensorDesc od = output_desc(cc, dir);
  const auto& a = output_of(got, dir);
  const auto& e = output_of(ref, dir);
  // Reduction length of one output element, for the tolerance.
  double red = static_cast<double>(cc.c / cc.groups);
  for (auto v : cc.ker) red *= static_cast<double>(v);
  if (dir == ConvDir::kBackwardData) red = static_cast<double>(cc.k / cc.groups) * red / (cc.c / cc.groups);
  if (dir == ConvDir::kBackwardWeights) red = static_cast<double>(cc.n * cc.y_desc().numel() / std::max<std::int64_t>(cc.n * cc.k, 1));
  ConvAlgo ran = algo;
  if (algo == ConvAlgo::kAuto) {
    auto choice = choose_convolution(h, dir, cc.desc(), cc.x_desc(), cc.w_desc(), cc.y_desc());
    if (choice.is_ok()) ran = choice->algo;
  }
  // Winograd and FFT round through transforms: errors scale with the whole signal's norm.
  const bool wino = ran == ConvAlgo::kWinogradF2x3 || ran == ConvAlgo::kWinogradF4x3 || ran == ConvAlgo::kFft;
  double tol = (wino ? 2e-4 : 2e-6) * std::sqrt(std::max(red, 1.0)) + 1e-6;
  if (od.dtype != DType::kF32) tol = (od.dtype == DType::kBF16 ? 1.6e-2 : 2e-3) * (1 + std::sqrt(red));
  const std::size_t n = static_cast<std::size_t>(od.span());
  int bad = 0;
  for (std::size_t i = 0; i < n && bad < 5; ++i) {
    const float av = value_at(a, od.dtype, i), ev = value_at(e, od.dtype, i);
    if (!(std::fabs(av - ev) <= tol * std::max(1.0f, std::fabs(ev)))) {
      ADD_FAILURE() << "element " << i << ": got " << av << ", reference " << ev << " (tol " << tol << ")";
      ++bad;
    }
  }
  if (dir == ConvDir::kBackwardWeights) {
    for (std::int64_t k = 0; k < cc.k; ++k) {
      EXPECT_NEAR(db_got[static_cast<std::size_t>(k)], db_ref[static_cast<std::size_t>(k)],
                  1e-4 * (1 + std::fabs(db_ref[static_cast<std::size_t>(k)])));
    }
  }
  return true;
}

std::vector<ConvCase> sweep_cases() {
  std::vector<ConvCase> v;
  for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
    auto add = [&](ConvCase c) {
      c.layout = l;
      c.wlayout = l;
      v.push_back(c);
      c.wlayout = l == Layout::kNCHW ? Layout::kNHWC : Layout::kNCHW;  // the other weight layout
      v.push_back(c);
    };
    add({});                                                               // 3x3 plain
    add({2, 5, 7, 1, {9, 8}, {3, 3}, {}, {}, {1, 1}, {1, 1}});             // same padding
    add({1, 17, 16, 1, {6, 7}, {1, 1}});                                   // 1x1
    add({2, 16, 33, 1, {5, 5}, {1, 1}, {2, 2}});                           // 1x1 stride 2
    add({1, 3, 8, 1, {11, 10}, {5, 5}, {2, 2}, {}, {2, 1}, {1, 2}});       // stride, asym pad
    add({1, 6, 9, 3, {8, 8}, {3, 3}, {1, 2}, {2, 1}, {2, 1}, {0, 2}});      // groups, dilation
    add({2, 8, 8, 8, {9, 7}, {3, 3}, {}, {}, {1, 1}, {1, 1}});             // depthwise
    add({1, 16, 16, 16, {7, 7}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}});      // depthwise stride 2
    add({1, 4, 6, 2, {13}, {3}, {2}, {}, {1}, {0}});                       // 1-D
    add({1, 3, 5, 1, {5, 6, 4}, {3, 2, 3}, {1, 2, 1}, {}, {1, 0, 1}, {1, 1, 0}});  // 3-D
    add({2, 32, 32, 1, {8, 8}, {3, 3}, {}, {}, {1, 1}, {1, 1}});           // winograd-sized
    add({1, 19, 21, 1, {10, 9}, {3, 3}, {}, {}, {1, 1}, {0, 0}});          // winograd tails
    add({2, 6, 10, 2, {17, 15}, {7, 7}, {}, {}, {3, 3}, {2, 3}});          // 7x7: FFT, groups
    add({1, 3, 4, 1, {19}, {11}, {}, {}, {5}, {4}});                       // 1-D, long kernel
    add({1, 2, 3, 1, {6, 7, 5}, {3, 5, 4}, {}, {}, {1, 2, 0}, {1, 2, 3}});  // 3-D, odd sizes
  }
  return v;
}

TEST(ConvTest, EveryAlgorithmMatchesTheReference) {
  Handle h;
  for (const ConvCase& cc : sweep_cases())
    for (ConvDir dir : {ConvDir::kForward, ConvDir::kBackwardData, ConvDir::kBackwardWeights}) {
      compare(h, cc, dir, ConvAlgo::kAuto, false);
      for (ConvAlgo a : kAllAlgos) compare(h, cc, dir, a, false);
    }
}

TEST(ConvTest, PostOpsMatchTheReference) {
  Handle h;
  for (const ConvCase& cc : sweep_cases())
    for (ConvAlgo a : kAllAlgos) compare(h, cc, ConvDir::kForward, a, true);
}

// Channels-first problems the tiles run through channels-last copies of x and y (direct, and
// gemm1x1 with deep channels on small planes, strided too): against the reference with and
// without post-ops (a residual is added after y is transposed back), through the algorithm
// named and through immediate mode's choice, at every ISA level (the generic one refuses).
TEST(ConvTest, ChannelsFirstOnChannelsLastTiles) {
  Handle h;
  for_each_isa([&](Isa isa) {
    for (ConvCase cc : {ConvCase{2, 256, 256, 1, {5, 6}, {1, 1}},                          // deep 1x1
                        ConvCase{1, 256, 384, 1, {7, 6}, {1, 1}, {2, 2}},                  // strided
                        ConvCase{2, 32, 48, 1, {9, 10}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}},  // 3x3 s2
                        ConvCase{1, 3, 24, 1, {15, 16}, {7, 7}, {2, 2}, {}, {3, 3}, {3, 3}},   // stem
                        ConvCase{1, 24, 40, 1, {6, 7, 5}, {3, 3, 3}, {}, {}, {1, 1, 1}, {1, 1, 1}}}) {  // 3-D
      cc.layout = cc.wlayout = Layout::kNCHW;
      const ConvAlgo algo = cc.ker[0] == 1 && cc.ker.size() == 2 && cc.ker[1] == 1 ? ConvAlgo::kGemm1x1 : ConvAlgo::kDirect;
      for (bool post : {false, true}) {
        // The generic level refuses what only the tiles run (a stride-1 1x1 takes the GEMM).
        const bool tiles_only = algo == ConvAlgo::kDirect || !cc.stride.empty();
        EXPECT_EQ(compare(h, cc, ConvDir::kForward, algo, post), isa != Isa::kGeneric || !tiles_only)
            << cc.name();
        EXPECT_TRUE(compare(h, cc, ConvDir::kForward, ConvAlgo::kAuto, post));
      }
    }
  });
}

// Clip (ReLU6) after bias and residual, fused in the batch-reduce tiles' stores and in the
// one-pass epilogue (depthwise, separate post-ops), maps a NaN to its lower bound as the
// activation does (fmin(fmax(x, lo), hi); ReLU maps it to 0): with a NaN input every output
// equals the reference's and none is NaN. (The fused paths once kept the NaN.)
TEST(ConvTest, ClipPostOpMapsNaNAsTheActivation) {
  Handle h;
  for (ConvCase cc : {ConvCase{1, 32, 80, 1, {7, 9}, {1, 1}}, ConvCase{1, 16, 48, 1, {8, 8}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
                      ConvCase{2, 40, 40, 40, {9, 7}, {3, 3}, {}, {}, {1, 1}, {1, 1}}}) {
    cc.layout = cc.wlayout = Layout::kNHWC;
    for (ActKind act : {ActKind::kClip, ActKind::kRelu}) {
      SCOPED_TRACE(cc.name() + (act == ActKind::kClip ? " clip" : " relu"));
      Bufs want = inputs(cc, ConvDir::kForward, 3), got = want;
      const float nan = std::nanf("");
      std::memcpy(want.x.data() + 4 * 37, &nan, 4);
      std::memcpy(got.x.data() + 4 * 37, &nan, 4);
      ASSERT_TRUE(run_dir(h, cc, ConvDir::kForward, ConvAlgo::kReference, want, true, nullptr, act).is_ok());
      ASSERT_TRUE(run_dir(h, cc, ConvDir::kForward, ConvAlgo::kAuto, got, true, nullptr, act).is_ok());
      const std::size_t n = static_cast<std::size_t>(cc.y_desc().numel());
      int nans = 0, bad = 0;
      for (std::size_t i = 0; i < n && bad < 5; ++i) {
        const float a = value_at(got.y, DType::kF32, i), e = value_at(want.y, DType::kF32, i);
        nans += std::isnan(a) || std::isnan(e);
        if (std::isnan(a) != std::isnan(e) || (!std::isnan(e) && std::fabs(a - e) > 1e-4f * std::max(1.0f, std::fabs(e)))) {
          ADD_FAILURE() << "element " << i << ": got " << a << ", reference " << e;
          ++bad;
        }
      }
      EXPECT_EQ(nans, 0);
    }
  }
}

TEST(ConvTest, EveryIsaLevel) {
  Handle h;
  std::vector<ConvCase> cases = sweep_cases();
  for_each_isa([&](Isa) {
    for (std::size_t i = 0; i < cases.size(); i += 2)
      for (ConvDir dir : {ConvDir::kForward, ConvDir::kBackwardData, ConvDir::kBackwardWeights})
        for (ConvAlgo a : kAllAlgos) compare(h, cases[i], dir, a, dir == ConvDir::kForward);
  });
}

TEST(ConvTest, HalfPrecisionStorage) {
  Handle h;
  for (DType t : {DType::kBF16, DType::kF16})
    for (ConvCase cc : {ConvCase{}, ConvCase{1, 16, 16, 1, {6, 6}, {1, 1}},
                        ConvCase{1, 8, 8, 8, {7, 7}, {3, 3}, {}, {}, {1, 1}, {1, 1}}}) {
      cc.dtype = t;
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        cc.layout = cc.wlayout = l;
        for (ConvDir dir : {ConvDir::kForward, ConvDir::kBackwardData, ConvDir::kBackwardWeights})
          compare(h, cc, dir, ConvAlgo::kAuto, dir == ConvDir::kForward);
      }
    }
}

TEST(ConvTest, AlgorithmsAcceptTheirClasses) {
  // Each algorithm must actually run on the problems it exists for (not refuse everything).
  Handle h;
  ConvCase one{1, 16, 16, 1, {6, 6}, {1, 1}};
  EXPECT_TRUE(compare(h, one, ConvDir::kForward, ConvAlgo::kGemm1x1, false));
  EXPECT_TRUE(compare(h, one, ConvDir::kForward, ConvAlgo::kIm2col, false));
  for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
    ConvCase dw{2, 24, 24, 24, {9, 9}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}};
    dw.layout = dw.wlayout = l;
    EXPECT_TRUE(compare(h, dw, ConvDir::kForward, ConvAlgo::kDepthwise, true));
    EXPECT_TRUE(compare(h, dw, ConvDir::kBackwardWeights, ConvAlgo::kDepthwise, false));
  }
  if (cpu_info().usable(CpuFeature::kAvx512f)) {
    ConvCase d{2, 16, 40, 1, {9, 30}, {3, 3}, {1, 2}, {}, {1, 1}, {1, 1}};
    d.layout = d.wlayout = Layout::kNHWC;
    EXPECT_TRUE(compare(h, d, ConvDir::kForward, ConvAlgo::kDirect, true));
    // Stride 2: the strided batch-reduce tiles (channels a multiple of 16; 24 is refused).
    EXPECT_TRUE(compare(h, d, ConvDir::kBackwardData, ConvAlgo::kDirect, false));
    ConvCase d24 = d;
    d24.c = 24;
    EXPECT_FALSE(compare(h, d24, ConvDir::kBackwardData, ConvAlgo::kDirect, false));
    d.stride = {};
    EXPECT_TRUE(compare(h, d, ConvDir::kBackwardData, ConvAlgo::kDirect, false));
    // 136 channels, 41 output channels (a tail past a 64-channel tile).
    ConvCase wide{1, 136, 41, 1, {6, 5}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
    wide.layout = wide.wlayout = Layout::kNHWC;
    EXPECT_TRUE(compare(h, wide, ConvDir::kForward, ConvAlgo::kDirect, true));
    ConvCase c128{1, 128, 64, 2, {7, 7}, {3, 3}, {2, 2}, {}, {0, 1}, {1, 0}};
    c128.layout = c128.wlayout = Layout::kNHWC;
    EXPECT_TRUE(compare(h, c128, ConvDir::kForward, ConvAlgo::kDirect, false));
  }
  for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
    ConvCase c3{1, 32, 32, 1, {8, 8}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
    c3.layout = c3.wlayout = l;
    EXPECT_TRUE(compare(h, c3, ConvDir::kBackwardData, ConvAlgo::kIm2col, false));
    EXPECT_TRUE(compare(h, c3, ConvDir::kBackwardWeights, ConvAlgo::kIm2col, false));
  }
}

// The channels-last batch-reduce GEMM (gemm1x1 and direct on AVX-512; on AVX2 gemm1x1 with
// weights up to 256 KiB, and both with at most 64 output pixels; gemm1x1 falls back to BLAS
// elsewhere): several reduction batches (Cg > 512, taps x channels > 512), pixel and
// channel tails, groups, strides, padding and dilation in 1-D to 3-D, fused (relu, none) and
// separate (gelu) post-ops, every ISA level, and the same bits on 1 and 2 threads.
TEST(ConvTest, BatchReduceBlocksTailsAndStrides) {
  std::vector<ConvCase> cases = {
      ConvCase{2, 600, 150, 1, {5, 7}, {1, 1}},
      ConvCase{1, 1100, 20, 1, {3, 3}, {1, 1}},
      // Weights over 256 KiB with few pixels (the AVX2 tiles take them, 3x3 too): three
      // channel batches; strided, 4 full channel tiles + 4; 3x3 over 7x7, a tap a batch.
      ConvCase{1, 1100, 80, 1, {6, 7}, {1, 1}},
      ConvCase{1, 300, 260, 1, {9, 9}, {1, 1}, {2, 2}},
      ConvCase{1, 600, 130, 1, {7, 7}, {3, 3}, {1, 1}, {}, {1, 1}, {1, 1}},
      ConvCase{1, 40, 140, 2, {4, 9}, {1, 1}},
      ConvCase{2, 24, 20, 1, {7, 9, 5}, {1, 1, 1}, {2, 3, 2}},
      ConvCase{3, 9, 10, 1, {17}, {1}, {3}},
      ConvCase{1, 65, 70, 5, {11, 6}, {1, 1}, {2, 1}},
      // Strided 1x1 with 64 or more output channels: per-pixel tiles (a 64 + 8 and a
      // 64 + 64 + 2 channel split).
      ConvCase{1, 24, 72, 1, {9, 11}, {1, 1}, {2, 2}},
      ConvCase{2, 16, 130, 1, {7, 8}, {1, 1}, {2, 1}},
      ConvCase{1, 520, 70, 1, {5, 6}, {3, 3}, {2, 1}, {1, 2}, {1, 2}, {2, 1}},
      ConvCase{2, 96, 72, 2, {9, 8}, {3, 3}, {1, 1}, {}, {1, 1}, {1, 1}},
      ConvCase{1, 20, 33, 1, {4, 6, 5}, {3, 2, 3}, {1, 2, 1}, {2, 1, 1}, {2, 0, 1}, {1, 1, 2}},
      // Run tiles: narrow 1x1 (one run over all pixels, groups), 1x1 with kernel rows of
      // taps along h, and few input channels (segments over whole kernel rows: pixels at the
      // left/right edges take the per-pixel tiles; a kernel wider than the input has no
      // interior at all).
      ConvCase{2, 32, 16, 1, {13, 11}, {1, 1}},
      ConvCase{1, 40, 24, 2, {9, 7}, {1, 1}},
      ConvCase{2, 24, 200, 1, {30, 30}, {1, 1}},  // enough pixels for items of 3 full tiles + 8
      ConvCase{2, 8, 20, 1, {9, 10}, {3, 1}, {1, 2}, {}, {1, 0}, {1, 0}},
      ConvCase{2, 3, 32, 1, {15, 23}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}},
      ConvCase{1, 3, 70, 1, {19, 20}, {7, 7}, {2, 2}, {}, {3, 3}, {3, 2}},
      ConvCase{1, 5, 17, 1, {5, 9, 11}, {2, 3, 4}, {1, 2, 3}, {2, 1, 1}, {1, 0, 2}, {0, 1, 1}},
      ConvCase{1, 4, 8, 1, {6, 3}, {3, 5}, {1, 1}, {}, {1, 2}, {1, 2}}};
  for (ConvCase& cc : cases) cc.layout = Layout::kNHWC;
  Handle h;
  for_each_isa([&](Isa) {
    for (ConvCase cc : cases)
      for (Layout wl : {Layout::kNCHW, Layout::kNHWC}) {
        cc.wlayout = wl;
        for (ConvAlgo a : {ConvAlgo::kGemm1x1, ConvAlgo::kDirect}) {
          if (!compare(h, cc, ConvDir::kForward, a, false)) continue;
          for (ActKind act : {ActKind::kRelu, ActKind::kIdentity, ActKind::kGeluTanh, ActKind::kClip})
            compare(h, cc, ConvDir::kForward, a, true, act);
        }
      }
  });
  for (const ConvCase& cc : cases)
    for (ConvAlgo a : {ConvAlgo::kGemm1x1, ConvAlgo::kDirect}) {
      Handle h1, h2;
      ASSERT_TRUE(h1.set_num_threads(1).is_ok());
      ASSERT_TRUE(h2.set_num_threads(2).is_ok());
      Bufs b1 = inputs(cc, ConvDir::kForward, 5), b2 = b1;
      const Status s1 = run_dir(h1, cc, ConvDir::kForward, a, b1, true, nullptr, ActKind::kRelu);
      const Status s2 = run_dir(h2, cc, ConvDir::kForward, a, b2, true, nullptr, ActKind::kRelu);
      ASSERT_EQ(s1.code(), s2.code());
      if (s1.is_ok()) {
        EXPECT_EQ(b1.y, b2.y) << cc.name() << " " << algo_name(a);
      }
    }
  // Each class runs somewhere: gemm1x1 takes every 1x1 case, direct every case on AVX-512.
  if (cpu_info().usable(CpuFeature::kAvx512f)) {
    for (const ConvCase& cc : cases) EXPECT_TRUE(compare(h, cc, ConvDir::kForward, ConvAlgo::kDirect, false));
  }
}

// Every case in direction `dir` with one thread and with two: the same status and the same
// bits (and dbias). Returns the statuses.
std::vector<Status> any_threads(const std::vector<ConvCase>& cases, ConvDir dir, ConvAlgo algo) {
  std::vector<Status> out;
  for (const ConvCase& cc : cases) {
    Handle h1, h2;
    EXPECT_TRUE(h1.set_num_threads(1).is_ok());
    EXPECT_TRUE(h2.set_num_threads(2).is_ok());
    Bufs b1 = inputs(cc, dir, 5), b2 = b1;
    std::vector<float> d1(static_cast<std::size_t>(cc.k)), d2 = d1;
    const Status s1 = run_dir(h1, cc, dir, algo, b1, false, &d1);
    const Status s2 = run_dir(h2, cc, dir, algo, b2, false, &d2);
    EXPECT_EQ(s1.code(), s2.code()) << cc.name();
    if (s1.is_ok()) {
      EXPECT_EQ(output_of(b1, dir), output_of(b2, dir)) << cc.name();
      EXPECT_EQ(d1, d2) << cc.name();
    }
    out.push_back(s1);
  }
  return out;
}

// `algo` against the reference for every case, both weight layouts, every ISA level: it
// must run on AVX-512 (below, it may refuse and the list's next algorithm serves).
void expect_on_avx512(Handle& h, const std::vector<ConvCase>& cases, ConvDir dir, ConvAlgo algo) {
  for_each_isa([&](Isa isa) {
    for (ConvCase cc : cases)
      for (Layout wl : {Layout::kNCHW, Layout::kNHWC}) {
        cc.wlayout = wl;
        const bool ran = compare(h, cc, dir, algo, false);
        if (isa >= Isa::kAvx512) {
          EXPECT_TRUE(ran) << cc.name();
        }
      }
  });
}

// Backward data of 1x1 convolutions through the run tiles (channels-last, Cg a multiple of
// 16, AVX-512): W's rows read in place, any stride (the dx pixels between the strided ones
// zeroed: dx starts as NaN), channel tiles with a narrow last one, groups, 3-D.
TEST(ConvTest, BatchReduceBackwardData1x1) {
  std::vector<ConvCase> cases = {
      ConvCase{2, 32, 16, 1, {13, 11}, {1, 1}},
      ConvCase{1, 144, 40, 1, {9, 7}, {1, 1}},
      ConvCase{1, 64, 600, 1, {5, 6}, {1, 1}},
      ConvCase{2, 96, 70, 2, {8, 9}, {1, 1}},
      ConvCase{1, 32, 24, 1, {14, 13}, {1, 1}, {2, 2}},
      ConvCase{1, 48, 20, 1, {9, 10}, {1, 1}, {2, 3}},
      ConvCase{2, 16, 12, 1, {5, 6, 7}, {1, 1, 1}, {2, 1, 2}},
      ConvCase{1, 64, 256, 4, {7, 7}, {1, 1}, {2, 2}},
      ConvCase{1, 40, 8, 1, {6, 6}, {1, 1}, {2, 2}}};  // Cg 40: the GEMM (stride 2 refused)
  for (ConvCase& cc : cases) cc.layout = Layout::kNHWC;
  Handle h;
  int ran = 0;
  for_each_isa([&](Isa) {
    for (ConvCase cc : cases)
      for (Layout wl : {Layout::kNCHW, Layout::kNHWC}) {
        cc.wlayout = wl;
        if (compare(h, cc, ConvDir::kBackwardData, ConvAlgo::kGemm1x1, false)) ++ran;
      }
  });
  EXPECT_GE(ran, 10);  // stride 1 on every ISA; strides through the tiles on AVX-512
  const bool avx512 = cpu_info().usable(CpuFeature::kAvx512f);
  const std::vector<Status> st = any_threads(cases, ConvDir::kBackwardData, ConvAlgo::kGemm1x1);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ConvCase& cc = cases[i];
    const bool strided = !cc.stride.empty() && cc.stride[0] * cc.stride[1] > 1;
    if (avx512 && cc.c % 16 == 0) {
      EXPECT_TRUE(st[i].is_ok()) << cc.name() << ": " << st[i].to_string();
    } else if (strided) {
      EXPECT_EQ(st[i].code(), StatusCode::kUnsupported) << cc.name();
    }
  }
}

// Direct backward data with the weights read flipped in place by the tiles (channels-last,
// Cg a multiple of 16, 16+ output channels per group): kernels, dilation, asymmetric padding
// (down to none), groups, 3-D, pixel tiles at the edges and run tiles inside, both weight
// layouts (OIHW is made dense OHWI first); dx starts as NaN.
TEST(ConvTest, BatchReduceBackwardDataFlippedInPlace) {
  std::vector<ConvCase> cases = {
      ConvCase{1, 16, 16, 1, {7, 7}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
      ConvCase{2, 48, 20, 1, {9, 8}, {3, 3}, {}, {}, {1, 0}, {0, 2}},
      ConvCase{1, 80, 70, 1, {6, 11}, {5, 3}, {}, {2, 1}, {3, 1}, {4, 1}},
      ConvCase{1, 64, 130, 2, {8, 8}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
      ConvCase{1, 32, 24, 1, {4, 5, 6}, {3, 2, 3}, {}, {}, {1, 0, 1}, {1, 1, 2}},
      ConvCase{1, 128, 16, 1, {5, 5}, {3, 3}, {}, {}, {0, 0}, {0, 0}}};
  for (ConvCase& cc : cases) cc.layout = Layout::kNHWC;
  Handle h;
  expect_on_avx512(h, cases, ConvDir::kBackwardData, ConvAlgo::kDirect);
  const bool avx512 = cpu_info().usable(CpuFeature::kAvx512f);
  for (const Status& st : any_threads(cases, ConvDir::kBackwardData, ConvAlgo::kDirect)) {
    EXPECT_TRUE(st.is_ok() || !avx512) << st.to_string();
  }
}

// Backward data of strided convolutions on the batch-reduce tiles (channels-last, AVX-512):
// 3x3 stride 2 with even and odd sizes, strides along one dim, asymmetric and no padding, a
// kernel as large as the stride (one tap a pixel), 5x5 stride 3, 1x1 stride 2 (dx pixels no tap
// reaches are zeroed), rows too short for an interior run, 5x5 and 4x4 stride 2 (taps before
// the row's first dy pixel: edge pixels on both ends), 80 channels (a 64 + 16 split), both
// weight layouts (OIHW is packed first, OHWI read in place), dx NaN-prefilled; and the same bits
// on 1 and 2 threads.
TEST(ConvTest, BatchReduceBackwardDataStrided) {
  std::vector<ConvCase> cases = {
      ConvCase{2, 16, 40, 1, {9, 30}, {3, 3}, {1, 2}, {}, {1, 1}, {1, 1}},
      ConvCase{1, 80, 24, 1, {14, 14}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}},
      ConvCase{2, 32, 32, 1, {7, 8}, {3, 3}, {2, 2}, {}, {0, 1}, {1, 0}},
      ConvCase{1, 16, 16, 1, {9, 11}, {5, 5}, {3, 3}, {}, {2, 2}, {2, 2}},
      ConvCase{1, 32, 16, 1, {8, 8}, {2, 2}, {2, 2}, {}, {0, 0}, {0, 0}},
      ConvCase{1, 16, 16, 1, {7, 7}, {1, 1}, {2, 2}},
      ConvCase{1, 16, 48, 1, {5, 9}, {1, 3}, {1, 3}, {}, {0, 1}, {0, 1}},
      ConvCase{1, 16, 16, 1, {3, 3}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}},
      ConvCase{3, 64, 64, 1, {6, 6}, {3, 3}, {2, 2}, {}, {1, 1}, {0, 0}},
      ConvCase{1, 16, 32, 1, {11, 12}, {5, 5}, {2, 2}, {}, {0, 0}, {0, 0}},  // taps left of the row start
      ConvCase{1, 32, 16, 1, {9, 9}, {4, 4}, {2, 2}, {}, {1, 1}, {2, 2}}};
  for (ConvCase& cc : cases) cc.layout = Layout::kNHWC;
  Handle h;
  expect_on_avx512(h, cases, ConvDir::kBackwardData, ConvAlgo::kDirect);  // both weight layouts
  const bool avx512 = cpu_info().usable(CpuFeature::kAvx512f);
  for (const Status& st : any_threads(cases, ConvDir::kBackwardData, ConvAlgo::kDirect)) {
    EXPECT_TRUE(st.is_ok() || !avx512) << st.to_string();
  }
}

// Weight gradients of few-channel layers over whole kernel rows (channels-last, AVX-512):
// strides, asymmetric and one-sided padding, kernel rows wholly in the padding, dilation
// along h, 3-D, two input channels, 15 channels with a 64 + 32 split of K, and enough output
// rows for many blocks. dW starts as NaN; dbias is checked too.
TEST(ConvTest, WeightGradientsOverKernelRows) {
  std::vector<ConvCase> cases = {
      ConvCase{1, 3, 64, 1, {23, 21}, {7, 7}, {2, 2}, {}, {3, 3}, {3, 2}},
      ConvCase{2, 3, 32, 1, {15, 16}, {3, 3}, {2, 2}, {}, {0, 1}, {1, 0}},
      ConvCase{1, 5, 48, 1, {9, 11}, {3, 5}, {1, 1}, {2, 1}, {1, 2}, {2, 2}},
      ConvCase{1, 2, 16, 1, {4, 5, 6}, {2, 3, 3}, {1, 2, 1}, {}, {1, 1, 1}, {0, 1, 1}},
      ConvCase{2, 15, 96, 1, {6, 7}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
      ConvCase{1, 2, 16, 1, {2, 9}, {5, 3}, {}, {}, {3, 1}, {3, 1}},
      ConvCase{2, 3, 16, 1, {70, 12}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
      // 16 to 32 input channels (two 16-channel widths of the padded x rows), odd widths
      ConvCase{3, 16, 16, 1, {11, 13}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
      ConvCase{1, 32, 48, 1, {7, 10}, {3, 3}, {2, 1}, {}, {1, 0}, {0, 1}},
      ConvCase{2, 19, 32, 1, {9, 17}, {5, 3}, {}, {}, {2, 1}, {2, 1}}};
  const std::size_t n = cases.size();
  for (std::size_t i = 0; i < n; ++i) {  // both layouts: channels-first x and dy are transposed
    cases[i].layout = Layout::kNHWC;
    cases.push_back(cases[i]);
    cases.back().layout = Layout::kNCHW;
  }
  Handle h;
  expect_on_avx512(h, cases, ConvDir::kBackwardWeights, ConvAlgo::kDirect);
  const bool avx512 = cpu_info().usable(CpuFeature::kAvx512f);
  for (const Status& st : any_threads(cases, ConvDir::kBackwardWeights, ConvAlgo::kDirect)) {
    EXPECT_TRUE(st.is_ok() || !avx512) << st.to_string();
  }
  // Over 32 input channels, or grouped: refused with the reason.
  if (avx512) {
    ConvCase over{1, 33, 16, 1, {6, 6}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
    over.layout = Layout::kNHWC;
    Bufs b = inputs(over, ConvDir::kBackwardWeights, 1);
    const Status s = run_dir(h, over, ConvDir::kBackwardWeights, ConvAlgo::kDirect, b, false, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
    EXPECT_NE(s.message().find("at most 32 input channels"), std::string::npos) << s.to_string();
  }
  // The heuristic takes it up to 16 input channels in either layout (a stem; a 16-channel
  // 3x3 layer, where it beats Winograd), and up to 32 when strided (where im2col is the
  // other choice), and leaves wider stride-1 layers to the others.
  if (avx512) {
    ConvCase narrow{2, 16, 16, 1, {28, 28}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
    ConvCase strided{2, 32, 64, 1, {14, 14}, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}};
    ConvCase wide{1, 32, 32, 1, {9, 9}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
    for (Layout l : {Layout::kNHWC, Layout::kNCHW}) {
      ConvCase stem = cases[0];
      stem.layout = narrow.layout = strided.layout = wide.layout = l;
      for (const ConvCase* cc : {&stem, &narrow, &strided, &wide}) {
        auto c = choose_convolution(h, ConvDir::kBackwardWeights, cc->desc(), cc->x_desc(), cc->w_desc(), cc->y_desc());
        ASSERT_TRUE(c.is_ok()) << c.status().to_string();
        EXPECT_EQ(c->algo == ConvAlgo::kDirect, cc != &wide) << cc->name();
      }
    }
  }
}

// Outputs larger than 1/4 of the last-level cache are written with non-temporal stores when
// y is 64-byte aligned: the same bits as the ordinary stores into a misaligned y (1x1 run
// tiles with a narrow last channel tile; a 3x3 over kernel rows with per-pixel edge tiles; a
// depthwise 3x3, whose rows stream out of a thread-local row after their post-ops, residual
// included).
TEST(ConvTest, StreamedOutputsEqualStoredOnes) {
  const std::int64_t llc = cpu_info().last_level_cache_bytes();
  if (llc <= 0 || llc > (std::int64_t{64} << 20))
    GTEST_SKIP() << "last-level cache unknown or over 64 MiB: the output would be too large";
  const std::int64_t k = 80, side = static_cast<std::int64_t>(std::sqrt(llc * 0.8 / (k * 4))) + 1;
  Handle h;
  for (ConvCase cc : {ConvCase{1, 8, k, 1, {side, side}, {1, 1}},
                      ConvCase{1, 2, k, 1, {side, side}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
                      ConvCase{1, k, k, k, {side, side}, {3, 3}, {}, {}, {1, 1}, {1, 1}}}) {
    cc.layout = cc.wlayout = Layout::kNHWC;
    const Bufs b = inputs(cc, ConvDir::kForward, 5);
    const std::size_t bytes = b.y.size();
    std::unique_ptr<std::uint8_t[]> mem(new std::uint8_t[bytes + 128]);
    const auto base = reinterpret_cast<std::uintptr_t>(mem.get());
    std::uint8_t* aligned = mem.get() + (64 - base % 64) % 64;
    std::vector<std::uint8_t> misaligned_mem(bytes + 16);
    std::uint8_t* misaligned = misaligned_mem.data() + (reinterpret_cast<std::uintptr_t>(misaligned_mem.data()) % 64 == 0 ? 16 : 0);
    std::vector<float> residual(bytes / sizeof(float));
    for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = static_cast<float>(i % 7) - 3.0f;
    for (ConvAlgo a : {ConvAlgo::kGemm1x1, ConvAlgo::kDirect, ConvAlgo::kDepthwise})
      for (bool post : {false, true}) {
        SCOPED_TRACE(cc.name() + " " + std::string(algo_name(a)) + (post ? " +bias+residual+relu" : ""));
        PostOps po;
        if (post) po.bias = b.bias.data(), po.residual = residual.data(), po.act = Activation::make(ActKind::kRelu);
        // The depthwise kernels stream on AVX2 too.
        for_each_isa([&](Isa isa) {
          if (a != ConvAlgo::kDepthwise && isa != cpu_info().detected_isa) return;
          std::fill(aligned, aligned + bytes, std::uint8_t{0xff});
          std::fill(misaligned, misaligned + bytes, std::uint8_t{0});
          const Status s1 = conv_forward(h, cc.desc(), cc.x_desc(), b.x.data(), cc.w_desc(), b.w.data(),
                                         cc.y_desc(), aligned, po, a);
          if (s1.code() == StatusCode::kUnsupported) return;
          ASSERT_TRUE(s1.is_ok()) << s1.to_string();
          ASSERT_TRUE(conv_forward(h, cc.desc(), cc.x_desc(), b.x.data(), cc.w_desc(), b.w.data(),
                                   cc.y_desc(), misaligned, po, a).is_ok());
          EXPECT_EQ(std::memcmp(aligned, misaligned, bytes), 0);
        });
      }
  }
}

TEST(ConvTest, BitwiseIdenticalForAnyThreadCount) {
  if (thread_pool().num_threads() < 2) GTEST_SKIP() << "needs a pool of >= 2 threads";
  for (ConvCase cc : {ConvCase{4, 16, 24, 1, {20, 20}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
                      ConvCase{4, 32, 32, 1, {17, 17}, {1, 1}},
                      ConvCase{4, 16, 16, 16, {15, 15}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
                      // one image, a few-channel strided stem: col2im's gather in parallel over dx rows
                      ConvCase{1, 3, 16, 1, {29, 27}, {7, 7}, {2, 2}, {}, {3, 3}, {2, 3}}})
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      cc.layout = cc.wlayout = l;
      for (ConvDir dir : {ConvDir::kForward, ConvDir::kBackwardData, ConvDir::kBackwardWeights})
        for (ConvAlgo a : kAllAlgos) {
          Handle h1, h2;
          ASSERT_TRUE(h1.set_num_threads(1).is_ok());
          ASSERT_TRUE(h2.set_num_threads(2).is_ok());
          Bufs b1 = inputs(cc, dir, 3), b2 = inputs(cc, dir, 3);
          Status s1 = run_dir(h1, cc, dir, a, b1, true, nullptr);
          Status s2 = run_dir(h2, cc, dir, a, b2, true, nullptr);
          ASSERT_EQ(s1.code(), s2.code());
          if (!s1.is_ok()) continue;
          EXPECT_EQ(output_of(b1, dir), output_of(b2, dir))
              << cc.name() << " " << dir_name(dir) << " " << algo_name(a);
        }
    }
}

// Weight gradients over many pixel chunks take the partial-sum path (chunks spread over four
// partial sums, added at the end): against the reference and bitwise across thread counts.
TEST(ConvTest, WeightGradientsOverManyChunks) {
  for (ConvCase cc : {ConvCase{1, 1024, 8, 1, {48, 48}, {1, 1}},
                      ConvCase{4, 128, 8, 1, {24, 24}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
                      ConvCase{2, 128, 8, 1, {40, 40}, {3, 3}, {}, {}, {1, 1}, {1, 1}}})
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      cc.layout = cc.wlayout = l;
      for (ConvAlgo a : {ConvAlgo::kGemm1x1, ConvAlgo::kIm2col}) {
        Handle h1, h2;
        ASSERT_TRUE(h1.set_num_threads(1).is_ok());
        ASSERT_TRUE(h2.set_num_threads(2).is_ok());
        if (!compare(h2, cc, ConvDir::kBackwardWeights, a, false)) continue;
        Bufs b1 = inputs(cc, ConvDir::kBackwardWeights, 3), b2 = b1;
        ASSERT_TRUE(run_dir(h1, cc, ConvDir::kBackwardWeights, a, b1, false, nullptr).is_ok());
        ASSERT_TRUE(run_dir(h2, cc, ConvDir::kBackwardWeights, a, b2, false, nullptr).is_ok());
        EXPECT_EQ(b1.w, b2.w) << cc.name() << " " << algo_name(a);
      }
    }
}

// <conv(x, w), dy> = <x, bwd_data(w, dy)> = <w, bwd_weights(x, dy)>, and finite differences
// of L(x, w) = <conv(x, w), dy> (computed in double) agree with the gradients.
TEST(ConvTest, BackwardPassesAreTheGradients) {
  Handle h;
  for (ConvCase cc : {ConvCase{2, 6, 4, 2, {7, 6}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}},
                      ConvCase{1, 4, 4, 4, {6, 6}, {3, 3}, {}, {}, {1, 1}, {1, 1}},
                      ConvCase{1, 5, 3, 1, {9}, {4}, {3}, {}, {2}, {1}}}) {
    const TensorDesc xd = cc.x_desc(), wd = cc.w_desc(), yd = cc.y_desc();
    std::vector<float> x(static_cast<std::size_t>(xd.numel())), w(static_cast<std::size_t>(wd.numel())),
        dy(static_cast<std::size_t>(yd.numel()));
    std::mt19937 g(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto* v : {&x, &w, &dy})
      for (auto& e : *v) e = u(g);
    auto loss = [&](const std::vector<float>& xx, const std::vector<float>& ww) {
      std::vector<float> y(dy.size());
      EXPECT_TRUE(conv_forward(h, cc.desc(), xd, xx.data(), wd, ww.data(), yd, y.data(), {},
                               ConvAlgo::kReference).is_ok());
      double s = 0;
      for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * dy[i];
      return s;
    };
    std::vector<float> dx(x.size()), dw(w.size()), db(static_cast<std::size_t>(cc.k));
    ASSERT_TRUE(conv_backward_data(h, cc.desc(), wd, w.data(), yd, dy.data(), xd, dx.data()).is_ok());
    ASSERT_TRUE(conv_backward_weights(h, cc.desc(), xd, x.data(), yd, dy.data(), wd, dw.data(),
                                      db.data()).is_ok());
    const float eps = 1e-2f;
    for (std::size_t i = 0; i < x.size(); i += 3) {
      auto xp = x, xm = x;
      xp[i] += eps, xm[i] -= eps;
      EXPECT_NEAR((loss(xp, w) - loss(xm, w)) / (2 * eps), dx[i], 2e-3) << cc.name() << " dx " << i;
    }
    for (std::size_t i = 0; i < w.size(); i += 2) {
      auto wp = w, wm = w;
      wp[i] += eps, wm[i] -= eps;
      EXPECT_NEAR((loss(x, wp) - loss(x, wm)) / (2 * eps), dw[i], 2e-3) << cc.name() << " dw " << i;
    }
    // dbias: the gradient of <y + b, dy> with respect to b is the sum of dy per channel.
    const std::int64_t per_k = yd.numel() / std::max<std::int64_t>(cc.k * cc.n, 1);
    for (std::int64_t k = 0; k < cc.k; ++k) {
      double s = 0;
      for (std::int64_t n = 0; n < cc.n; ++n)
        for (std::int64_t q = 0; q < per_k; ++q) s += dy[static_cast<std::size_t>((n * cc.k + k) * per_k + q)];
      EXPECT_NEAR(db[static_cast<std::size_t>(k)], s, 1e-4);
    }
  }
}

TEST(ConvTest, ResidualMayAliasTheOutput) {
  Handle h;
  for (ConvAlgo a : {ConvAlgo::kAuto, ConvAlgo::kIm2col}) {
    ConvCase cc{1, 8, 8, 1, {6, 6}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
    Bufs b = inputs(cc, ConvDir::kForward, 1);
    b.y = b.res;
    PostOps po;
    po.residual = b.y.data();
    std::vector<std::uint8_t> expect = b.y;
    PostOps pe;
    pe.residual = b.res.data();
    ASSERT_TRUE(conv_forward(h, cc.desc(), cc.x_desc(), b.x.data(), cc.w_desc(), b.w.data(),
                             cc.y_desc(), expect.data(), pe, a).is_ok());
    ASSERT_TRUE(conv_forward(h, cc.desc(), cc.x_desc(), b.x.data(), cc.w_desc(), b.w.data(),
                             cc.y_desc(), b.y.data(), po, a).is_ok());
    EXPECT_EQ(b.y, expect);
  }
}

TEST(ConvTest, ZeroSizedProblems) {
  Handle h;
  for (ConvCase cc : {ConvCase{0, 4, 4}, ConvCase{1, 4, 0}, ConvCase{2, 0, 3}}) {
    for (ConvDir dir : {ConvDir::kForward, ConvDir::kBackwardData, ConvDir::kBackwardWeights})
      compare(h, cc, dir, ConvAlgo::kAuto, dir == ConvDir::kForward);
  }
}

TEST(ConvTest, FindModeRecordsAndImmediateModeUsesIt) {
  TempDir dir;
  Handle h;
  h.set_tune_db(dir.file("tune.sqlite"));
  ConvCase cc{1, 16, 16, 1, {8, 8}, {1, 1}};
  cc.layout = cc.wlayout = Layout::kNHWC;
  FindOptions o;
  o.min_seconds_per_algo = 0;
  auto found = find_convolution(h, ConvDir::kForward, cc.desc(), cc.x_desc(), cc.w_desc(), cc.y_desc(), o);
  ASSERT_TRUE(found.is_ok()) << found.status().to_string();
  ASSERT_FALSE(found->empty());
  EXPECT_TRUE(found->front().accepted);
  bool saw_refusal = false;
  for (std::size_t i = 0; i < found->size(); ++i) {
    const ConvCandidate& c = (*found)[i];
    if (c.accepted) {
      EXPECT_GE(c.samples, 3);
      if (i > 0 && (*found)[i - 1].accepted) {
        EXPECT_LE((*found)[i - 1].median_us, c.median_us);
      }
    } else {
      EXPECT_FALSE(c.reason.empty()) << c.impl;
      saw_refusal = true;
    }
  }
  EXPECT_TRUE(saw_refusal);  // e.g. winograd refuses a 1x1 kernel
  auto db = tessera::testing::value_or_fail(tune::TuneDb::open(dir.file("tune.sqlite")));
  auto rec = tessera::testing::value_or_fail(db.lookup(tune::TuneKey{
      "dnn", "conv", conv_signature(ConvDir::kForward, cc.desc(), cc.x_desc(), cc.w_desc(), cc.y_desc()),
      hal::cpu_device().fingerprint(), "1", "bitwise"}));
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->solution, found->front().impl);
  EXPECT_EQ(rec->candidates.size(), found->size());
  auto choice = choose_convolution(h, ConvDir::kForward, cc.desc(), cc.x_desc(), cc.w_desc(), cc.y_desc());
  ASSERT_TRUE(choice.is_ok());
  EXPECT_EQ(choice->source, "tune-db");
  EXPECT_EQ(choice->impl, found->front().impl);
  h.set_use_tune_db(false);
  choice = choose_convolution(h, ConvDir::kForward, cc.desc(), cc.x_desc(), cc.w_desc(), cc.y_desc());
  ASSERT_TRUE(choice.is_ok());
  EXPECT_EQ(choice->source, "heuristic");
}

// preferred_conv_layout: Find mode's measurements of both layouts decide when the database has
// them; else the heuristic, which names what each layout would run.
TEST(ConvTest, PreferredLayoutFromTheTuningDatabaseElseTheHeuristic) {
  TempDir dir;
  Handle h;
  h.set_tune_db(dir.file("tune.sqlite"));
  ConvDesc d;
  d.pad_begin = d.pad_end = {1, 1};
  const std::vector<std::int64_t> xd = {1, 64, 14, 14}, wd = {64, 64, 3, 3};
  auto heuristic = tessera::testing::value_or_fail(preferred_conv_layout(h, d, DType::kF32, xd, wd));
  EXPECT_EQ(heuristic.layout, Layout::kNHWC);
  EXPECT_EQ(heuristic.reason.rfind("heuristic: nhwc conv_f32_", 0), 0u) << heuristic.reason;
  EXPECT_NE(heuristic.reason.find(", nchw conv_f32_"), std::string::npos) << heuristic.reason;
  auto db = tessera::testing::value_or_fail(tune::TuneDb::open(dir.file("tune.sqlite")));
  const auto record = [&](Layout l, double us) {
    const TensorDesc x = TensorDesc::make(DType::kF32, xd, l), w = TensorDesc::make(DType::kF32, wd, l);
    const TensorDesc y = TensorDesc::make(DType::kF32, {1, 64, 14, 14}, l);
    tune::TuneRecord r;
    r.key = {"dnn", "conv", conv_signature(ConvDir::kForward, d, x, w, y), hal::cpu_device().fingerprint(), "1", "bitwise"};
    r.candidates = {{"conv_f32_im2col", "", us, 1.0, 3, true, ""}, {"conv_f32_reference", "", 10 * us, 1.0, 3, true, ""}};
    ASSERT_TRUE(db.record(r).is_ok());
  };
  record(Layout::kNHWC, 20);
  EXPECT_EQ(tessera::testing::value_or_fail(preferred_conv_layout(h, d, DType::kF32, xd, wd)).reason.rfind("heuristic", 0), 0u);  // one layout only
  record(Layout::kNCHW, 10);
  auto measured = tessera::testing::value_or_fail(preferred_conv_layout(h, d, DType::kF32, xd, wd));
  EXPECT_EQ(measured.layout, Layout::kNCHW);
  EXPECT_EQ(measured.reason, "tuning database: nhwc 20.0 us, nchw 10.0 us");
  record(Layout::kNHWC, 5);
  EXPECT_EQ(tessera::testing::value_or_fail(preferred_conv_layout(h, d, DType::kF32, xd, wd)).layout, Layout::kNHWC);
  h.set_use_tune_db(false);
  EXPECT_EQ(tessera::testing::value_or_fail(preferred_conv_layout(h, d, DType::kF32, xd, wd)).reason.rfind("heuristic", 0), 0u);
  d.groups = 3;  // 64 channels do not split into 3 groups
  EXPECT_FALSE(preferred_conv_layout(h, d, DType::kF32, xd, wd).is_ok());
}

// A plan gives conv_forward's bits with the same algorithm (packed weights or not, any dtype,
// post-ops per run), keeps its own copy of the weights, runs from two threads at once, and
// rejects bad descriptors at creation and bad pointers at run time.
TEST(ConvTest, ForwardPlansMatchConvForward) {
  Handle h;
  std::vector<ConvCase> cases = {
      ConvCase{2, 32, 16, 1, {13, 11}, {1, 1}},                           // gemm1x1
      ConvCase{1, 40, 70, 2, {9, 7}, {3, 3}, {2, 1}, {}, {1, 1}, {0, 1}},  // direct / winograd
      ConvCase{1, 3, 20, 1, {15, 16}, {7, 7}, {2, 2}, {}, {3, 3}, {3, 3}},  // kernel rows
      ConvCase{1, 12, 12, 12, {8, 9}, {3, 3}, {}, {}, {1, 1}, {1, 1}},      // depthwise
      ConvCase{1, 80, 40, 1, {8, 9}, {3, 3}, {}, {}, {1, 1}, {1, 1}},       // winograd: 2 channel
      ConvCase{2, 64, 64, 2, {9, 9}, {3, 3}, {}, {}, {1, 1}, {0, 1}},       // blocks, 2 panels, groups
      ConvCase{1, 256, 256, 1, {5, 6}, {1, 1}}};                            // NCHW: gemm1x1 on the tiles
  int planned = 0;
  for (ConvCase cc : cases)
    for (Layout l : {Layout::kNHWC, Layout::kNCHW})
      for (DType dt : {DType::kF32, DType::kBF16}) {
        cc.layout = cc.wlayout = l;
        cc.dtype = dt;
        for (ConvAlgo a : {ConvAlgo::kAuto, ConvAlgo::kDirect, ConvAlgo::kGemm1x1, ConvAlgo::kIm2col,
                           ConvAlgo::kWinogradF2x3, ConvAlgo::kWinogradF4x3, ConvAlgo::kFft}) {
          SCOPED_TRACE(cc.name() + " " + std::string(algo_name(a)) + " " + std::string(dtype_name(dt)));
          Bufs b = inputs(cc, ConvDir::kForward, 11), want = b;
          auto plan = ConvForwardPlan::create(h, cc.desc(), cc.x_desc(), cc.w_desc(), b.w.data(),
                                              cc.y_desc(), a);
          if (!plan.is_ok()) {
            EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported) << plan.status().to_string();
            continue;
          }
          ++planned;
          for (bool post : {false, true}) {
            ASSERT_TRUE(run_dir(h, cc, ConvDir::kForward, plan->algo(), want, post, nullptr, ActKind::kRelu).is_ok());
            std::fill(b.w.begin(), b.w.end(), std::uint8_t{0x7f});  // the plan has its own copy
            PostOps po;
            if (post) po.bias = b.bias.data(), po.residual = b.res.data(), po.act = Activation::make(ActKind::kRelu);
            ASSERT_TRUE(plan->run(h, b.x.data(), b.y.data(), po).is_ok());
            EXPECT_EQ(b.y, want.y);
          }
        }
      }
  EXPECT_GE(planned, 32);  // every case with auto and im2col, both layouts and dtypes
  // Packed weights where the batch-reduce tiles run; two threads share one plan.
  ConvCase cc{2, 24, 40, 1, {10, 9}, {3, 3}, {}, {}, {1, 1}, {1, 1}};
  cc.layout = cc.wlayout = Layout::kNHWC;
  Bufs b = inputs(cc, ConvDir::kForward, 3);
  auto plan = ConvForwardPlan::create(h, cc.desc(), cc.x_desc(), cc.w_desc(), b.w.data(), cc.y_desc(),
                                      ConvAlgo::kDirect);
  if (cpu_info().usable(CpuFeature::kAvx512f)) {
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    EXPECT_GT(plan->packed_bytes(), 0u);
    Bufs want = b;
    ASSERT_TRUE(run_dir(h, cc, ConvDir::kForward, ConvAlgo::kDirect, want, false, nullptr).is_ok());
    Bufs b2 = b;
    std::thread t([&] {
      Handle h2;
      for (int i = 0; i < 20; ++i) EXPECT_TRUE(plan->run(h2, b2.x.data(), b2.y.data()).is_ok());
    });
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(plan->run(h, b.x.data(), b.y.data()).is_ok());
    t.join();
    EXPECT_EQ(b.y, want.y);
    EXPECT_EQ(b2.y, want.y);
    const auto before = b.y;
    Status s = plan->run(h, nullptr, b.y.data());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("ConvForwardPlan::run"), std::string::npos) << s.message();
    EXPECT_EQ(b.y, before);
    // The residual may be y itself (in place, as a graph's residual add): the plan keeps a
    // copy before the tiles overwrite y.
    Bufs alias = b, sep = b;
    PostOps po;
    po.residual = alias.y.data();
    ASSERT_TRUE(plan->run(h, alias.x.data(), alias.y.data(), po).is_ok());
    po.residual = b.y.data();
    ASSERT_TRUE(plan->run(h, sep.x.data(), sep.y.data(), po).is_ok());
    EXPECT_EQ(alias.y, sep.y);
    EXPECT_NE(alias.y, before);
  }
  ConvDesc g3 = cc.desc();
  g3.groups = 5;
  auto bad = ConvForwardPlan::create(h, g3, cc.x_desc(), cc.w_desc(), b.w.data(), cc.y_desc());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("groups"), std::string::npos) << bad.status().message();
  bad = ConvForwardPlan::create(h, cc.desc(), cc.x_desc(), cc.w_desc(), nullptr, cc.y_desc());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);

  // A plan pays the FFT's filter spectra once: from 7x7 up (NCHW) immediate mode plans the
  // FFT, where a single call (spectra per call) takes another algorithm.
  ConvCase big{1, 8, 8, 1, {20, 20}, {7, 7}, {}, {}, {3, 3}, {3, 3}};
  Bufs bb = inputs(big, ConvDir::kForward, 9), want = bb;
  auto fplan = ConvForwardPlan::create(h, big.desc(), big.x_desc(), big.w_desc(), bb.w.data(), big.y_desc());
  ASSERT_TRUE(fplan.is_ok()) << fplan.status().to_string();
  EXPECT_EQ(fplan->algo(), ConvAlgo::kFft);
  EXPECT_GT(fplan->packed_bytes(), 0u);  // the filter spectra
  auto single = choose_convolution(h, ConvDir::kForward, big.desc(), big.x_desc(), big.w_desc(), big.y_desc());
  ASSERT_TRUE(single.is_ok());
  EXPECT_NE(single->algo, ConvAlgo::kFft);
  ASSERT_TRUE(fplan->run(h, bb.x.data(), bb.y.data()).is_ok());
  ASSERT_TRUE(run_dir(h, big, ConvDir::kForward, ConvAlgo::kFft, want, false, nullptr).is_ok());
  EXPECT_EQ(bb.y, want.y);
}

TEST(ConvTest, BadDescriptorsAreRejectedAndNothingIsWritten) {
  Handle h;
  ConvCase cc;
  Bufs b = inputs(cc, ConvDir::kForward, 1);
  const auto before = b.y;
  auto expect_error = [&](StatusCode code, const ConvDesc& c, const TensorDesc& x, const TensorDesc& w,
                          const TensorDesc& y, const char* needle) {
    Status s = conv_forward(h, c, x, b.x.data(), w, b.w.data(), y, b.y.data());
    EXPECT_EQ(s.code(), code) << s.to_string();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
    EXPECT_EQ(b.y, before);
  };
  const TensorDesc x = cc.x_desc(), w = cc.w_desc(), y = cc.y_desc();
  TensorDesc neg = x;
  neg.dims[2] = -1;
  expect_error(StatusCode::kInvalidArgument, cc.desc(), neg, w, y, "must be >= 0");
  ConvDesc g3 = cc.desc();
  g3.groups = 3;
  expect_error(StatusCode::kInvalidArgument, g3, x, w, y, "divisible by groups");
  TensorDesc wc = TensorDesc::make(DType::kF32, {4, 3, 3, 3});
  expect_error(StatusCode::kInvalidArgument, cc.desc(), x, wc, y, "input channels per group");
  TensorDesc ybad = y;
  ybad.dims[3] += 1;
  ybad = TensorDesc::make(DType::kF32, ybad.dims);
  expect_error(StatusCode::kInvalidArgument, cc.desc(), x, w, ybad, "but the convolution gives");
  TensorDesc big = TensorDesc::make(DType::kF32, {4, 4, 9, 9});
  expect_error(StatusCode::kInvalidArgument, cc.desc(), x, big, y, "output too small");
  TensorDesc xi = x;
  xi.dtype = DType::kI32;
  expect_error(StatusCode::kUnsupported, cc.desc(), xi, w, y, "dtype i32");
  ConvDesc s0 = cc.desc();
  s0.stride = {0, 1};
  expect_error(StatusCode::kInvalidArgument, s0, x, w, y, "stride");
  ConvDesc s3 = cc.desc();
  s3.pad_begin = {1, 1, 1};
  expect_error(StatusCode::kInvalidArgument, s3, x, w, y, "pad_begin has 3 values");
  Status s = conv_forward(h, cc.desc(), x, nullptr, w, b.w.data(), y, b.y.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.y, before);
  s = conv_forward(h, cc.desc(), x, b.x.data(), w, b.w.data(), y, b.y.data(), {}, ConvAlgo::kGemm1x1);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("1x1"), std::string::npos) << s.message();
  EXPECT_EQ(b.y, before);
}

}  // namespace
}  // namespace tessera::dnn::testing
