// Pooling against its reference (reached through strided tensors) over 1-D/2-D/3-D problems,
// every kind, kernel/stride/padding/dilation/ceil-mode classes, channel counts around the
// vector widths, both layouts, every ISA, bf16/f16 and thread counts (all bit for bit: the
// fast paths scan windows and accumulate in the reference's order); the reference against a
// PyTorch-style oracle and hand-checked cases; backward by finite differences; bad arguments.
#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "pool_norm_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using std::int64_t;
using tessera::testing::for_each_isa;
using tessera::testing::value_or_fail;
using testing::Buf;
using testing::get;
using testing::identical;
using testing::make_buf;
using testing::random_values;
using testing::strided;

constexpr int64_t kIndexFill = 0x5a5a5a5a;

std::string kind_str(PoolKind k) {
  return k == PoolKind::kMax ? "max" : k == PoolKind::kAvgIncludePad ? "avg-incl" : "avg-excl";
}

std::string describe(const PoolDesc& p, const std::vector<int64_t>& x) {
  auto v = [](const std::vector<int64_t>& a) { return ::testing::PrintToString(a); };
  return kind_str(p.kind) + " x" + v(x) + " k" + v(p.kernel) + " s" + v(p.stride) + " pb" +
         v(p.pad_begin) + " pe" + v(p.pad_end) + " d" + v(p.dilation) +
         (p.ceil_mode ? " ceil" : "");
}

struct Fwd {
  std::vector<float> y;
  std::vector<int64_t> idx;
};

// Forward on x given in logical order, with y (and indices) pre-filled with NaN (garbage).
Fwd forward(Handle& h, const PoolDesc& p, const TensorDesc& xd, const std::vector<float>& xv,
            const TensorDesc& yd, bool with_idx) {
  const Buf x = make_buf(xd, xv, 7.0f);
  Buf y = make_buf(yd);
  std::vector<int64_t> idx(static_cast<std::size_t>(std::max<int64_t>(yd.span(), 1)), kIndexFill);
  const Status s =
      pooling_forward(h, p, xd, x.data(), yd, y.data(), with_idx ? idx.data() : nullptr);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  Fwd o;
  o.y = get(y);
  if (with_idx) testing::for_each_offset(yd, [&](int64_t off) { o.idx.push_back(idx[off]); });
  return o;
}

// Backward; indices (logical order, may be empty) are laid out like dy.
std::vector<float> backward(Handle& h, const PoolDesc& p, const TensorDesc& xd,
                            const std::vector<float>* xv, const std::vector<int64_t>& idx,
                            const TensorDesc& dyd, const std::vector<float>& dyv) {
  const Buf x = xv != nullptr ? make_buf(xd, *xv, 7.0f) : Buf{};
  const Buf dy = make_buf(dyd, dyv, 5.0f);
  TensorDesc dxd = xd;
  Buf dx = make_buf(dxd);
  std::vector<int64_t> ibuf;
  if (!idx.empty()) {
    ibuf.assign(static_cast<std::size_t>(dyd.span()), kIndexFill);
    std::size_t i = 0;
    testing::for_each_offset(dyd,
                             [&](int64_t off) { ibuf[static_cast<std::size_t>(off)] = idx[i++]; });
  }
  const Status s =
      pooling_backward(h, p, xd, xv != nullptr ? x.data() : nullptr,
                       idx.empty() ? nullptr : ibuf.data(), dyd, dy.data(), dxd, dx.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return get(dx);
}

PoolDesc desc(PoolKind kind, std::vector<int64_t> k, std::vector<int64_t> s = {},
              std::vector<int64_t> pb = {}, std::vector<int64_t> pe = {},
              std::vector<int64_t> d = {}, bool ceil = false) {
  PoolDesc p;
  p.kind = kind;
  p.kernel = std::move(k);
  p.stride = std::move(s);
  p.pad_begin = std::move(pb);
  p.pad_end = std::move(pe);
  p.dilation = std::move(d);
  p.ceil_mode = ceil;
  return p;
}

// The same value for every spatial dim.
std::vector<int64_t> rep(int sp, int64_t v) {
  return std::vector<int64_t>(static_cast<std::size_t>(sp), v);
}

// Kernel/stride/padding/dilation classes for `sp` spatial dims.
std::vector<PoolDesc> classes(PoolKind kind, int sp, const std::vector<int64_t>& in) {
  std::vector<PoolDesc> v = {
      desc(kind, rep(sp, 3), rep(sp, 1), rep(sp, 1), rep(sp, 1)),
      desc(kind, rep(sp, 3), rep(sp, 2), rep(sp, 1), rep(sp, 1)),
      desc(kind, rep(sp, 2), rep(sp, 2)),
      desc(kind, rep(sp, 3), rep(sp, 2), rep(sp, 1), rep(sp, 0), {}, true),
      desc(kind, rep(sp, 4), rep(sp, 3), rep(sp, 2), rep(sp, 1), {}, true),
      desc(kind, rep(sp, 1)),
      desc(kind, rep(sp, 5), rep(sp, 1), rep(sp, 0), rep(sp, 2)),
      PoolDesc::global(kind, TensorDesc::make(DType::kF32,
                                              [&] {
                                                std::vector<int64_t> d = {1, 1};
                                                d.insert(d.end(), in.begin(), in.end());
                                                return d;
                                              }())),
  };
  // Mixed per-dim parameters (asymmetric padding, different strides).
  std::vector<int64_t> k(rep(sp, 3)), s(rep(sp, 2)), pb(rep(sp, 0)), pe(rep(sp, 1));
  k.back() = 2;
  s.back() = 1;
  pb.back() = 1;
  pe.back() = 0;
  v.push_back(desc(kind, k, s, pb, pe));
  // Windows that skip rows: height 1, stride 2 (max 2x2 stride 2 NCHW backward writes zero rows).
  std::vector<int64_t> k1(rep(sp, 1));
  k1.back() = 2;
  v.push_back(desc(kind, k1, rep(sp, 2)));
  // Dilated windows (average: the divisor counts taps, not the holes between them), in ceil
  // mode too, where the last window can reach past the end padding.
  v.push_back(desc(kind, rep(sp, 3), rep(sp, 1), rep(sp, 2), rep(sp, 2), rep(sp, 2)));
  v.push_back(desc(kind, rep(sp, 2), rep(sp, 2), rep(sp, 1), rep(sp, 1), rep(sp, 3), true));
  v.push_back(desc(kind, rep(sp, 2), rep(sp, 3), rep(sp, 0), rep(sp, 1), rep(sp, 2), true));
  return v;
}

struct Shape {
  int64_t batch;
  std::vector<int64_t> spatial;
  std::vector<int64_t> channels;
};

// Rows wide enough for full and partial vectors of output positions (NCHW: two 16-lane blocks
// and a tail), channel counts around the vector widths (NHWC: 65 takes the four-vector block
// and a one-lane tail at AVX-512 width, 33 at AVX2 width).
const Shape kShapes[] = {
    {2, {37}, {3, 16, 17}},
    {2, {7, 9}, {15, 16, 17, 33}},
    {1, {3, 41}, {1, 65}},
    {2, {4, 5, 6}, {3, 17}},
};

const PoolKind kKinds[] = {PoolKind::kMax, PoolKind::kAvgIncludePad, PoolKind::kAvgExcludePad};

std::vector<int64_t> dims_of(int64_t n, int64_t c, const std::vector<int64_t>& sp) {
  std::vector<int64_t> d = {n, c};
  d.insert(d.end(), sp.begin(), sp.end());
  return d;
}

// Every fast path gives the reference's bits: values and indices forward, dx backward (average,
// max from the indices and max recomputed from x).
void check_against_reference(const Shape& shape) {
  Handle h;
  std::mt19937_64 gen(1);
  for (PoolKind kind : kKinds)
    for (const PoolDesc& p : classes(kind, static_cast<int>(shape.spatial.size()), shape.spatial))
      for (int64_t c : shape.channels) {
        const std::vector<int64_t> xdims = dims_of(shape.batch, c, shape.spatial);
        SCOPED_TRACE(describe(p, xdims));
        const TensorDesc xref = strided(DType::kF32, xdims);
        const TensorDesc ydims = value_or_fail(pooling_output_desc(p, xref));
        const TensorDesc yref = strided(DType::kF32, ydims.dims);
        const auto xv = random_values(static_cast<std::size_t>(xref.numel()), gen);
        const auto dyv = random_values(static_cast<std::size_t>(yref.numel()), gen);
        const bool max = kind == PoolKind::kMax;
        const Fwd ref = forward(h, p, xref, xv, yref, max);
        const std::vector<float> dref = backward(h, p, xref, max ? &xv : nullptr, {}, yref, dyv);
        for_each_isa([&](Isa) {
          for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
            SCOPED_TRACE(std::string(layout_name(l)));
            const TensorDesc xd = TensorDesc::make(DType::kF32, xdims, l);
            const TensorDesc yd = TensorDesc::make(DType::kF32, ydims.dims, l);
            const Fwd f = forward(h, p, xd, xv, yd, max);
            ASSERT_TRUE(identical(f.y, ref.y));
            ASSERT_EQ(f.idx, ref.idx);
            if (max) {
              ASSERT_TRUE(identical(forward(h, p, xd, xv, yd, false).y, ref.y));
              ASSERT_TRUE(identical(backward(h, p, xd, nullptr, ref.idx, yd, dyv), dref));
            }
            ASSERT_TRUE(identical(backward(h, p, xd, max ? &xv : nullptr, {}, yd, dyv), dref));
          }
        });
      }
}

TEST(Pooling, OneDimMatchesReferenceBitForBit) {
  check_against_reference(kShapes[0]);
}
TEST(Pooling, TwoDimMatchesReferenceBitForBit) {
  check_against_reference(kShapes[1]);
}
TEST(Pooling, WideRowsMatchReferenceBitForBit) {
  check_against_reference(kShapes[2]);
}
TEST(Pooling, ThreeDimMatchesReferenceBitForBit) {
  check_against_reference(kShapes[3]);
}

// bf16/f16 storage (f32 compute, staged) rounds exactly like the reference.
TEST(Pooling, HalfPrecisionMatchesReference) {
  Handle h;
  std::mt19937_64 gen(2);
  for (DType t : {DType::kBF16, DType::kF16})
    for (PoolKind kind : kKinds)
      for (const PoolDesc& p : {desc(kind, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
                                desc(kind, {2, 3}, {1, 2}, {0, 1}, {1, 0}, {}, true)}) {
        const std::vector<int64_t> xdims = {2, 17, 9, 10};
        SCOPED_TRACE(describe(p, xdims) + " " + std::string(dtype_name(t)));
        const TensorDesc xref = strided(t, xdims);
        const TensorDesc yref = strided(t, value_or_fail(pooling_output_desc(p, xref)).dims);
        const auto xv =
            testing::rounded(random_values(static_cast<std::size_t>(xref.numel()), gen), t);
        const auto dyv =
            testing::rounded(random_values(static_cast<std::size_t>(yref.numel()), gen), t);
        const bool max = kind == PoolKind::kMax;
        const Fwd ref = forward(h, p, xref, xv, yref, max);
        const auto dref = backward(h, p, xref, max ? &xv : nullptr, {}, yref, dyv);
        for_each_isa([&](Isa) {
          for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
            const TensorDesc xd = TensorDesc::make(t, xdims, l);
            const TensorDesc yd = TensorDesc::make(t, yref.dims, l);
            const Fwd f = forward(h, p, xd, xv, yd, max);
            EXPECT_TRUE(identical(f.y, ref.y));
            EXPECT_EQ(f.idx, ref.idx);
            EXPECT_TRUE(identical(backward(h, p, xd, max ? &xv : nullptr, {}, yd, dyv), dref));
          }
        });
      }
}

// One and two threads give the same bits (outputs split over threads, dx slices owned by one).
TEST(Pooling, SameBitsForAnyThreadCount) {
  Handle h1, h2;
  ASSERT_TRUE(h1.set_num_threads(1).is_ok());
  ASSERT_TRUE(h2.set_num_threads(2).is_ok());
  std::mt19937_64 gen(3);
  for (PoolKind kind : kKinds)
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const PoolDesc p = desc(kind, {3, 3}, {2, 2}, {1, 1}, {1, 1});
      const std::vector<int64_t> xdims = {3, 37, 33, 35};
      const TensorDesc xd = TensorDesc::make(DType::kF32, xdims, l);
      const TensorDesc yd = value_or_fail(pooling_output_desc(p, xd));
      const auto xv = random_values(static_cast<std::size_t>(xd.numel()), gen);
      const auto dyv = random_values(static_cast<std::size_t>(yd.numel()), gen);
      const bool max = kind == PoolKind::kMax;
      const Fwd a = forward(h1, p, xd, xv, yd, max), b = forward(h2, p, xd, xv, yd, max);
      EXPECT_TRUE(identical(a.y, b.y));
      EXPECT_EQ(a.idx, b.idx);
      EXPECT_TRUE(identical(backward(h1, p, xd, max ? &xv : nullptr, {}, yd, dyv),
                            backward(h2, p, xd, max ? &xv : nullptr, {}, yd, dyv)));
    }
}

// An independent oracle: PyTorch's 2-D pooling loops (symmetric padding, count_include_pad
// dividing by the window clipped to the padded input) in double. PyTorch has no dilated
// average pooling; for it this follows ONNX's reference: the taps at or past the padded
// input's end are dropped, the rest are counted (include-pad) or those inside the input
// (exclude-pad).
std::vector<double> torch_pool2d(const std::vector<float>& x, int64_t nc, int64_t H, int64_t W,
                                 PoolKind kind, int64_t k, int64_t s, int64_t pad, int64_t dil,
                                 int64_t OH, int64_t OW, std::vector<int64_t>* idx) {
  std::vector<double> y;
  for (int64_t p = 0; p < nc; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const float* xp = x.data() + p * H * W;
        if (kind == PoolKind::kMax) {
          int64_t hs = oh * s - pad, ws = ow * s - pad;
          const int64_t he = std::min(hs + (k - 1) * dil + 1, H),
                        we = std::min(ws + (k - 1) * dil + 1, W);
          while (hs < 0) hs += dil;
          while (ws < 0) ws += dil;
          double m = -INFINITY;
          int64_t mi = hs * W + ws;
          for (int64_t a = hs; a < he; a += dil)
            for (int64_t b = ws; b < we; b += dil)
              if (xp[a * W + b] > m) {
                m = xp[a * W + b];
                mi = a * W + b;
              }
          y.push_back(m);
          idx->push_back(mi);
          continue;
        }
        int64_t hs = oh * s - pad, ws = ow * s - pad;
        if (dil != 1) {
          double sum = 0.0;
          int64_t in_padded = 0, inside = 0;
          for (int64_t a = 0; a < k; ++a)
            for (int64_t b = 0; b < k; ++b) {
              const int64_t ih = hs + a * dil, iw = ws + b * dil;
              if (ih >= H + pad || iw >= W + pad) continue;
              ++in_padded;
              if (ih < 0 || iw < 0 || ih >= H || iw >= W) continue;
              ++inside;
              sum += xp[ih * W + iw];
            }
          const int64_t count = kind == PoolKind::kAvgIncludePad ? in_padded : inside;
          y.push_back(count > 0 ? sum / static_cast<double>(count) : 0.0);
          continue;
        }
        int64_t he = std::min(hs + k, H + pad), we = std::min(ws + k, W + pad);
        const int64_t pool_size = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0);
        ws = std::max<int64_t>(ws, 0);
        he = std::min(he, H);
        we = std::min(we, W);
        double sum = 0.0;
        for (int64_t a = hs; a < he; ++a)
          for (int64_t b = ws; b < we; ++b) sum += xp[a * W + b];
        y.push_back(sum / static_cast<double>(kind == PoolKind::kAvgIncludePad
                                                  ? pool_size
                                                  : (he - hs) * (we - ws)));
      }
  return y;
}

TEST(Pooling, ReferenceAgreesWithPyTorchSemantics) {
  Handle h;
  std::mt19937_64 gen(4);
  struct P {
    int64_t k, s, pad, dil;
    bool ceil;
  };
  for (PoolKind kind : kKinds)
    for (const P& c :
         {P{3, 2, 1, 1, false}, P{3, 2, 1, 1, true}, P{2, 2, 1, 1, true}, P{3, 3, 1, 1, true},
          P{4, 3, 2, 1, true}, P{3, 1, 2, 2, false}, P{2, 3, 1, 2, true}, P{3, 2, 0, 2, true},
          P{2, 1, 1, 3, true}})
      for (int64_t hw : {4, 5, 7, 8}) {
        if ((c.k - 1) * c.dil + 1 > hw + 2 * c.pad) continue;
        const PoolDesc p = desc(kind, {c.k, c.k}, {c.s, c.s}, {c.pad, c.pad}, {c.pad, c.pad},
                                {c.dil, c.dil}, c.ceil);
        const std::vector<int64_t> xdims = {1, 2, hw, hw + 1};
        SCOPED_TRACE(describe(p, xdims));
        // PyTorch's output size.
        auto out = [&](int64_t in) {
          const int64_t num = in + 2 * c.pad - c.dil * (c.k - 1) - 1;
          int64_t o = (c.ceil ? (num + c.s - 1) / c.s : num / c.s) + 1;
          if (c.ceil && (o - 1) * c.s >= in + c.pad) --o;
          return o;
        };
        const TensorDesc xd = strided(DType::kF32, xdims);
        const TensorDesc yd = value_or_fail(pooling_output_desc(p, xd));
        ASSERT_EQ(yd.dims, (std::vector<int64_t>{1, 2, out(hw), out(hw + 1)}));
        const auto xv = random_values(static_cast<std::size_t>(xd.numel()), gen);
        std::vector<int64_t> tidx;
        const auto expect = torch_pool2d(xv, 2, hw, hw + 1, kind, c.k, c.s, c.pad, c.dil,
                                         yd.dims[2], yd.dims[3], &tidx);
        for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
          const TensorDesc xl = l == Layout::kNCHW ? xd : TensorDesc::make(DType::kF32, xdims, l);
          const TensorDesc yl = l == Layout::kNCHW ? strided(DType::kF32, yd.dims)
                                                   : TensorDesc::make(DType::kF32, yd.dims, l);
          const Fwd f = forward(h, p, xl, xv, yl, kind == PoolKind::kMax);
          for (std::size_t i = 0; i < expect.size(); ++i)
            ASSERT_NEAR(f.y[i], expect[i], 1e-6) << "output " << i;
          if (kind == PoolKind::kMax) {
            EXPECT_EQ(f.idx, tidx);
          }
        }
      }
}

TEST(Pooling, HandCheckedCases) {
  Handle h;
  // 1x1x4x4 holding 0..15; max 2x2 stride 2; avg 3x3 stride 2 pad 1 with and without padding.
  std::vector<float> xv(16);
  std::iota(xv.begin(), xv.end(), 0.0f);
  const TensorDesc xd = TensorDesc::make(DType::kF32, {1, 1, 4, 4});
  const TensorDesc y2 = TensorDesc::make(DType::kF32, {1, 1, 2, 2});
  Fwd f = forward(h, desc(PoolKind::kMax, {2, 2}, {2, 2}), xd, xv, y2, true);
  EXPECT_EQ(f.y, (std::vector<float>{5, 7, 13, 15}));
  EXPECT_EQ(f.idx, (std::vector<int64_t>{5, 7, 13, 15}));
  f = forward(h, desc(PoolKind::kAvgIncludePad, {3, 3}, {2, 2}, {1, 1}, {1, 1}), xd, xv, y2, false);
  EXPECT_EQ(f.y, (std::vector<float>{(0 + 1 + 4 + 5) / 9.0f, (1 + 2 + 3 + 5 + 6 + 7) / 9.0f,
                                     (4 + 5 + 8 + 9 + 12 + 13) / 9.0f,
                                     (5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15) / 9.0f}));
  f = forward(h, desc(PoolKind::kAvgExcludePad, {3, 3}, {2, 2}, {1, 1}, {1, 1}), xd, xv, y2, false);
  EXPECT_EQ(f.y, (std::vector<float>{10 / 4.0f, 24 / 6.0f, 51 / 6.0f, 90 / 9.0f}));
  // Dilated average (ONNX's example): kernel 2x2 dilation 2 takes the corners of each 3x3 block.
  for (PoolKind k : {PoolKind::kAvgIncludePad, PoolKind::kAvgExcludePad}) {
    f = forward(h, desc(k, {2, 2}, {1, 1}, {}, {}, {2, 2}, true), xd, xv, y2, false);
    EXPECT_EQ(f.y, (std::vector<float>{5, 6, 9, 10}));
  }
  // 1-D 0..5, kernel 3 dilation 2 stride 2: window 1's taps sit at 2, 4 and 6. With end pad 1,
  // tap 6 is padding (include-pad divides by 3, exclude-pad by 2); without it and in ceil mode
  // tap 6 lies past the padded input and counts for neither.
  const std::vector<float> x6 = {0, 1, 2, 3, 4, 5};
  const TensorDesc x1 = TensorDesc::make(DType::kF32, {1, 1, 6});
  const TensorDesc y1 = TensorDesc::make(DType::kF32, {1, 1, 2});
  f = forward(h, desc(PoolKind::kAvgIncludePad, {3}, {2}, {0}, {1}, {2}), x1, x6, y1, false);
  EXPECT_EQ(f.y, (std::vector<float>{2, 2}));
  f = forward(h, desc(PoolKind::kAvgExcludePad, {3}, {2}, {0}, {1}, {2}), x1, x6, y1, false);
  EXPECT_EQ(f.y, (std::vector<float>{2, 3}));
  for (PoolKind k : {PoolKind::kAvgIncludePad, PoolKind::kAvgExcludePad}) {
    f = forward(h, desc(k, {3}, {2}, {}, {}, {2}, true), x1, x6, y1, false);
    EXPECT_EQ(f.y, (std::vector<float>{2, 3}));
  }
  // Ties: the first maximum (row-major) wins; -inf is a value like any other.
  const std::vector<float> ties = {1, 3, 3, 1, -INFINITY, 3, 3, 0, 2};
  for (Layout l : {Layout::kNCHW, Layout::kNHWC})
    for_each_isa([&](Isa) {
      const TensorDesc t = TensorDesc::make(DType::kF32, {1, 1, 3, 3}, l);
      const TensorDesc o = TensorDesc::make(DType::kF32, {1, 1, 2, 2}, l);
      const Fwd g = forward(h, desc(PoolKind::kMax, {2, 2}), t, ties, o, true);
      EXPECT_EQ(g.y, (std::vector<float>{3, 3, 3, 3}));
      EXPECT_EQ(g.idx, (std::vector<int64_t>{1, 1, 6, 5}));
      const std::vector<float> ninf(9, -INFINITY);
      const Fwd n = forward(h, desc(PoolKind::kMax, {2, 2}), t, ninf, o, true);
      EXPECT_EQ(n.idx, (std::vector<int64_t>{0, 1, 3, 4}));
    });
}

// NaN counts as the largest value (the first NaN wins; +inf next to -inf is no NaN); a window
// that covers no input element
// (dilation stepping over the input) gives -inf, index -1 and no gradient.
TEST(Pooling, NanAndEmptyWindows) {
  Handle h;
  for (int64_t c : {1, 17})
    for (Layout l : {Layout::kNCHW, Layout::kNHWC})
      for_each_isa([&](Isa) {
        const TensorDesc xd = TensorDesc::make(DType::kF32, {1, c, 2, 20}, l);
        const TensorDesc yd = TensorDesc::make(DType::kF32, {1, c, 1, 10}, l);
        std::vector<float> xv(static_cast<std::size_t>(xd.numel()), 1.0f);
        for (int64_t ch = 0; ch < c; ++ch) {
          xv[static_cast<std::size_t>(ch * 40 + 5)] = NAN;   // row 0, column 5
          xv[static_cast<std::size_t>(ch * 40 + 24)] = NAN;  // row 1, column 4
        }
        for (int64_t ch = 0; ch < c; ++ch) {  // +inf and -inf in window 7: not a NaN
          xv[static_cast<std::size_t>(ch * 40 + 14)] = INFINITY;
          xv[static_cast<std::size_t>(ch * 40 + 35)] = -INFINITY;
        }
        const PoolDesc p = desc(PoolKind::kMax, {2, 2}, {2, 2});
        for (bool with_idx : {true, false}) {
          const Fwd f = forward(h, p, xd, xv, yd, with_idx);
          for (int64_t ch = 0; ch < c; ++ch) {
            EXPECT_TRUE(std::isnan(f.y[static_cast<std::size_t>(ch * 10 + 2)]));
            EXPECT_EQ(f.y[static_cast<std::size_t>(ch * 10 + 1)], 1.0f);
            EXPECT_EQ(f.y[static_cast<std::size_t>(ch * 10 + 7)], INFINITY);
            if (with_idx) {
              EXPECT_EQ(f.idx[static_cast<std::size_t>(ch * 10 + 2)], 5);
            }
          }
        }
        // In width 3, kernel 2 with dilation 5 and begin padding 2: the taps of window 0 sit at
        // -2 and 3, both outside.
        const TensorDesc xe = TensorDesc::make(DType::kF32, {1, c, 3}, l);
        const PoolDesc pe = desc(PoolKind::kMax, {2}, {1}, {2}, {1}, {5});
        const TensorDesc ye = value_or_fail(pooling_output_desc(pe, xe));
        ASSERT_EQ(ye.dims[2], 1);
        const std::vector<float> xs(static_cast<std::size_t>(xe.numel()), 2.0f);
        const Fwd f = forward(h, pe, xe, xs, ye, true);
        for (int64_t ch = 0; ch < c; ++ch) {
          EXPECT_EQ(f.y[static_cast<std::size_t>(ch)], -INFINITY);
          EXPECT_EQ(f.idx[static_cast<std::size_t>(ch)], -1);
        }
        const std::vector<float> dy(static_cast<std::size_t>(c), 1.0f);
        EXPECT_EQ(backward(h, pe, xe, &xs, {}, ye, dy), std::vector<float>(xs.size(), 0.0f));
        EXPECT_EQ(backward(h, pe, xe, nullptr, f.idx, ye, dy), std::vector<float>(xs.size(), 0.0f));
      });
}

// NHWC stride-1 windows over whole channel lines take a blocked path (each input loaded once
// for several outputs, a NaN among a block's inputs redone by the scalar rule): NaN, infinities
// of both signs (in one block, not one window) and signed zeros, against the reference's bits.
TEST(Pooling, StrideOneBlocksWithNanAndInfinitiesMatchReference) {
  Handle h;
  std::mt19937_64 gen(5);
  for (int64_t k : {2, 3, 5})
    for (PoolKind kind : kKinds) {
      const std::vector<int64_t> xdims = {1, 32, 3, 23};
      const PoolDesc p = desc(kind, {k, k}, {1, 1}, {k / 2, k / 2}, {k / 2, k / 2});
      SCOPED_TRACE(describe(p, xdims));
      const TensorDesc xref = strided(DType::kF32, xdims);
      const TensorDesc ydims = value_or_fail(pooling_output_desc(p, xref));
      const TensorDesc yref = strided(DType::kF32, ydims.dims);
      auto xv = random_values(static_cast<std::size_t>(xref.numel()), gen);
      const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
      for (std::size_t i = 0; i < xv.size(); i += 37) xv[i] = special[(i / 37) % 5];
      const bool max = kind == PoolKind::kMax;
      const Fwd ref = forward(h, p, xref, xv, yref, max);
      for_each_isa([&](Isa) {
        const TensorDesc xd = TensorDesc::make(DType::kF32, xdims, Layout::kNHWC);
        const TensorDesc yd = TensorDesc::make(DType::kF32, ydims.dims, Layout::kNHWC);
        ASSERT_TRUE(identical(forward(h, p, xd, xv, yd, false).y, ref.y));
      });
    }
}

// Max backward without indices finds each window's first maximum itself (vectors over output
// positions for NCHW, over channels for NHWC). On values full of ties, signed zeros, infinities
// and NaN it must route every gradient as the reference does: rows wide enough for whole
// vectors and a tail, every stride class the kernels treat apart (stride 1, stride 2 with
// kernel 3 and with other windows, stride 3), dx rows streamed out or not.
TEST(Pooling, MaxBackwardTiesAndNanMatchReference) {
  Handle h;
  std::mt19937_64 gen(7);
  const float pool_values[] = {0.0f, -0.0f, 1.0f, 1.0f, 2.0f, 2.0f, INFINITY, -INFINITY, NAN};
  std::uniform_int_distribution<int> pick(0, 8);
  const std::vector<PoolDesc> descs = {
      desc(PoolKind::kMax, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
      desc(PoolKind::kMax, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
      desc(PoolKind::kMax, {2, 2}, {2, 2}),
      desc(PoolKind::kMax, {3, 3}, {2, 2}, {1, 2}, {1, 2}, {1, 2}),
      desc(PoolKind::kMax, {3, 3}, {3, 3}, {1, 1}, {1, 1}),
      desc(PoolKind::kMax, {3, 3}, {2, 2}, {}, {}, {}, true),  // no padding (Inception's)
  };
  for (const PoolDesc& p : descs)
    for (int64_t c : {1, 17})
      for (int nan_share : {0, 1}) {
        const std::vector<int64_t> xdims = {2, c, 7, 75};
        SCOPED_TRACE(describe(p, xdims) + (nan_share ? " with NaN" : " no NaN"));
        const TensorDesc xref = strided(DType::kF32, xdims);
        const TensorDesc ydims = value_or_fail(pooling_output_desc(p, xref));
        const TensorDesc yref = strided(DType::kF32, ydims.dims);
        std::vector<float> xv(static_cast<std::size_t>(xref.numel()));
        for (float& v : xv) {
          int i = pick(gen);
          if (!nan_share && i == 8) i = 2;
          v = pool_values[i];
        }
        auto dyv = random_values(static_cast<std::size_t>(yref.numel()), gen);
        // Negative zeros: dx starts at +0, so a lone -0 gradient lands as +0.
        for (std::size_t i = 0; i < dyv.size(); i += 3) dyv[i] = -0.0f;
        const std::vector<float> dref = backward(h, p, xref, &xv, {}, yref, dyv);
        for_each_isa([&](Isa) {
          for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
            SCOPED_TRACE(std::string(layout_name(l)));
            const TensorDesc xd = TensorDesc::make(DType::kF32, xdims, l);
            const TensorDesc yd = TensorDesc::make(DType::kF32, ydims.dims, l);
            ASSERT_TRUE(identical(backward(h, p, xd, &xv, {}, yd, dyv), dref));
          }
        });
      }
}

// Indices need not come from a forward: any element of the plane (or -1) takes its gradient.
// NHWC gathers each dx pixel from the windows covering it when every index lies in its
// window, and must scatter instead when one does not: indices at random, and a forward's
// indices with one moved out of its window (found after some dx rows were gathered), or to the
// column just past its window's last one (NCHW max 2x2 / 3x3 stride 2 check each window's box).
TEST(Pooling, MaxBackwardTakesAnyIndexOfThePlane) {
  Handle h;
  std::mt19937_64 gen(11);
  for (const PoolDesc& p : {desc(PoolKind::kMax, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
                            desc(PoolKind::kMax, {2, 2}, {2, 2}),
                            desc(PoolKind::kMax, {3, 3}, {2, 2}, {0, 0}, {0, 0}, {}, true),
                            desc(PoolKind::kMax, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {2, 2})})
    for (const std::vector<int64_t>& xdims : std::vector<std::vector<int64_t>>{{2, 17, 9, 11}, {1, 65, 6, 7}})
      for (int moved : {0, 1, 2}) {
        SCOPED_TRACE(describe(p, xdims) + (moved == 0   ? " random indices"
                                           : moved == 1 ? " one index moved"
                                                        : " one index past its window"));
        const TensorDesc xref = strided(DType::kF32, xdims);
        const TensorDesc ydims = value_or_fail(pooling_output_desc(p, xref));
        const TensorDesc yref = strided(DType::kF32, ydims.dims);
        const int64_t plane = xdims[2] * xdims[3];
        const auto xv = random_values(static_cast<std::size_t>(xref.numel()), gen);
        const auto dyv = random_values(static_cast<std::size_t>(yref.numel()), gen);
        std::vector<int64_t> idx;
        if (moved == 1) {
          idx = forward(h, p, xref, xv, yref, true).idx;
          idx[idx.size() * 3 / 4] = (idx[idx.size() * 3 / 4] + plane / 2) % plane;
        } else if (moved == 2) {  // the first window whose last column is not the row's last
          idx = forward(h, p, xref, xv, yref, true).idx;
          const int64_t ow_n = ydims.dims[3], w = xdims[3];
          const int64_t d = p.dilation.empty() ? 1 : p.dilation[1];
          const int64_t pb = p.pad_begin.empty() ? 0 : p.pad_begin[1];
          for (std::size_t j = idx.size() / 2; j < idx.size(); ++j) {
            const int64_t ow = static_cast<int64_t>(j) % ow_n;
            const int64_t last = ow * p.stride[1] - pb + (p.kernel[1] - 1) * d;
            if (idx[j] < 0 || last + 1 >= w) continue;
            idx[j] = idx[j] / w * w + last + 1;
            break;
          }
        } else {
          std::uniform_int_distribution<int64_t> any(-1, plane - 1);
          idx.resize(static_cast<std::size_t>(yref.numel()));
          for (int64_t& i : idx) i = any(gen);
        }
        const std::vector<float> dref = backward(h, p, xref, nullptr, idx, yref, dyv);
        for_each_isa([&](Isa) {
          for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
            SCOPED_TRACE(std::string(layout_name(l)));
            const TensorDesc xd = TensorDesc::make(DType::kF32, xdims, l);
            const TensorDesc yd = TensorDesc::make(DType::kF32, ydims.dims, l);
            ASSERT_TRUE(identical(backward(h, p, xd, nullptr, idx, yd, dyv), dref));
          }
        });
      }
}

// Max pooling 3x3 stride 2 over NCHW planes takes a kernel of its own (each input row's
// window maxima computed once): against the reference, bit for bit (values and indices), on
// values full of ties, signed zeros, infinities and NaN, for row widths around the vector
// widths (partial blocks, taps reaching the row's end), one to seven rows, every begin/end
// padding the kernel takes, floor and ceil mode.
TEST(Pooling, MaxK3S2PlanesMatchReference) {
  Handle h;
  std::mt19937_64 gen(8);
  const float pool_values[] = {0.0f, -0.0f, 1.0f, 1.0f, 2.0f, 2.0f, INFINITY, -INFINITY, NAN};
  std::uniform_int_distribution<int> pick(0, 8);
  for (int64_t rows : {1, 2, 3, 6, 7})
    for (int64_t width : {1, 2, 3, 17, 31, 32, 33, 34, 35, 64, 65, 97})
      for (int64_t pb : {0, 1})
        for (int64_t pe : {0, 1})
          for (bool ceil : {false, true})
            for (int nan_share : {0, 1}) {
              const std::vector<int64_t> xdims = {2, 3, rows, width};
              const PoolDesc p = desc(PoolKind::kMax, {3, 3}, {2, 2}, {pb, pb}, {pe, pe}, {}, ceil);
              const TensorDesc xref = strided(DType::kF32, xdims);
              const auto ydims = pooling_output_desc(p, xref);
              if (!ydims.is_ok()) continue;  // a window past the input
              SCOPED_TRACE(describe(p, xdims) + (nan_share ? " with NaN" : " no NaN"));
              const TensorDesc yref = strided(DType::kF32, ydims.value().dims);
              std::vector<float> xv(static_cast<std::size_t>(xref.numel()));
              for (float& v : xv) {
                int i = pick(gen);
                if (!nan_share && i == 8) i = 2;
                v = pool_values[i];
              }
              const Fwd ref = forward(h, p, xref, xv, yref, true);
              for_each_isa([&](Isa) {
                const TensorDesc xd = TensorDesc::make(DType::kF32, xdims);
                const TensorDesc yd = TensorDesc::make(DType::kF32, ydims.value().dims);
                ASSERT_TRUE(identical(forward(h, p, xd, xv, yd, false).y, ref.y));
                const Fwd f = forward(h, p, xd, xv, yd, true);
                ASSERT_TRUE(identical(f.y, ref.y));
                ASSERT_EQ(f.idx, ref.idx);
              });
            }
}

// d/dx of sum(w * y) by central differences against backward(dy = w): average pooling is linear;
// max pooling on distinct values spaced wider than the step keeps every window's winner.
TEST(Pooling, BackwardMatchesFiniteDifferences) {
  Handle h;
  std::mt19937_64 gen(5);
  for (PoolKind kind : kKinds)
    for (const PoolDesc& p :
         {desc(kind, {3, 3}, {2, 2}, {1, 1}, {0, 1}),
          desc(kind, {2, 3}, {1, 2}, {1, 0}, {0, 1}, {}, true),
          desc(kind, {3, 2}, {1, 1}, {2, 1}, {2, 1}, {2, 2}),
          desc(kind, {2, 3}, {2, 2}, {0, 1}, {1, 0}, {3, 2}, true)})
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        const std::vector<int64_t> xdims = {1, 3, 6, 7};
        SCOPED_TRACE(describe(p, xdims) + " " + std::string(layout_name(l)));
        const TensorDesc xd = TensorDesc::make(DType::kF32, xdims, l);
        const TensorDesc yd = value_or_fail(pooling_output_desc(p, xd));
        std::vector<float> xv(static_cast<std::size_t>(xd.numel()));
        for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = 0.05f * static_cast<float>(i) - 3.0f;
        std::shuffle(xv.begin(), xv.end(), gen);
        const auto w = random_values(static_cast<std::size_t>(yd.numel()), gen);
        const bool max = kind == PoolKind::kMax;
        const auto dx = backward(h, p, xd, max ? &xv : nullptr, {}, yd, w);
        auto loss = [&](const std::vector<float>& x) {
          const Fwd f = forward(h, p, xd, x, yd, false);
          double s = 0.0;
          for (std::size_t i = 0; i < w.size(); ++i) s += static_cast<double>(w[i]) * f.y[i];
          return s;
        };
        const float step = 0.01f;
        for (std::size_t i = 0; i < xv.size(); ++i) {
          std::vector<float> a = xv, b = xv;
          a[i] += step;
          b[i] -= step;
          const double fd = (loss(a) - loss(b)) / (static_cast<double>(a[i]) - b[i]);
          ASSERT_NEAR(dx[i], fd, 2e-4) << "element " << i;
        }
      }
}

TEST(Pooling, OutputDescAndGlobal) {
  const TensorDesc x = TensorDesc::make(DType::kBF16, {2, 8, 5, 6}, Layout::kNHWC);
  const TensorDesc y = value_or_fail(
      pooling_output_desc(desc(PoolKind::kMax, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {}, true), x));
  // Height: ceil((5 + 2 - 3) / 3) + 1 = 3, but the third window would start at 6 >= 5 + 1.
  EXPECT_EQ(y.dims, (std::vector<int64_t>{2, 8, 2, 3}));
  EXPECT_EQ(y.dtype, DType::kBF16);
  EXPECT_TRUE(y.is_packed(Layout::kNHWC));
  const PoolDesc g = PoolDesc::global(PoolKind::kAvgExcludePad, x);
  EXPECT_EQ(g.kernel, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(value_or_fail(pooling_output_desc(g, x)).dims, (std::vector<int64_t>{2, 8, 1, 1}));
  const TensorDesc x3 = TensorDesc::make(DType::kF32, {1, 2, 4, 5, 6});
  EXPECT_EQ(value_or_fail(pooling_output_desc(PoolDesc::global(PoolKind::kMax, x3), x3)).dims,
            (std::vector<int64_t>{1, 2, 1, 1, 1}));
}

// Bad descriptors and arguments return kInvalidArgument / kUnsupported naming the problem and
// leave every output untouched.
TEST(Pooling, BadArgumentsWriteNothing) {
  Handle h;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {1, 2, 5, 5});
  const TensorDesc yd = TensorDesc::make(DType::kF32, {1, 2, 2, 2});
  const std::vector<float> xv(50, 1.0f);
  const Buf x = make_buf(xd, xv, 0.0f);
  Buf y = make_buf(yd, 42.0f);
  std::vector<int64_t> idx(8, 42);
  const PoolDesc good = desc(PoolKind::kMax, {2, 2}, {2, 2});
  auto fwd = [&](const PoolDesc& p, const TensorDesc& xx, const TensorDesc& yy, const void* xp,
                 void* yp, int64_t* ip) { return pooling_forward(h, p, xx, xp, yy, yp, ip); };
  struct Bad {
    const char* what;
    Status status;
    StatusCode code;
    const char* needle;
  };
  TensorDesc neg = xd;
  neg.dims[2] = -1;
  TensorDesc f64 = xd;
  f64.dtype = DType::kF64;
  TensorDesc bf = yd;
  bf.dtype = DType::kBF16;
  const Bad cases[] = {
      {"kernel too large", fwd(desc(PoolKind::kMax, {6, 2}), xd, yd, x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "larger than the padded input"},
      {"rank 2", fwd(good, TensorDesc::make(DType::kF32, {2, 5}), yd, x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "rank 2"},
      {"rank 6",
       fwd(good, TensorDesc::make(DType::kF32, {1, 1, 1, 1, 5, 5}), yd, x.data(), y.data(),
           nullptr),
       StatusCode::kInvalidArgument, "rank 6"},
      {"kernel length", fwd(desc(PoolKind::kMax, {2}), xd, yd, x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "kernel has 1 values for 2 spatial dims"},
      {"stride 0", fwd(desc(PoolKind::kMax, {2, 2}, {0, 2}), xd, yd, x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "stride[0] = 0"},
      {"negative pad",
       fwd(desc(PoolKind::kMax, {2, 2}, {}, {-1, 0}), xd, yd, x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "pad_begin[0] = -1"},
      {"avg indices",
       fwd(desc(PoolKind::kAvgExcludePad, {2, 2}, {2, 2}), xd, yd, x.data(), y.data(), idx.data()),
       StatusCode::kInvalidArgument, "indices are for max pooling only"},
      {"y dims",
       fwd(good, xd, TensorDesc::make(DType::kF32, {1, 2, 3, 2}), x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "y dims [1,2,3,2] differ"},
      {"negative dim", fwd(good, neg, yd, x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "must be >= 0"},
      {"f64", fwd(good, f64, yd, x.data(), y.data(), nullptr), StatusCode::kUnsupported, "f64"},
      {"dtype mismatch", fwd(good, xd, bf, x.data(), y.data(), nullptr),
       StatusCode::kInvalidArgument, "dtype bf16 differs"},
      {"null x", fwd(good, xd, yd, nullptr, y.data(), nullptr), StatusCode::kInvalidArgument,
       "x is null"},
      {"null y", fwd(good, xd, yd, x.data(), nullptr, nullptr), StatusCode::kInvalidArgument,
       "y is null"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.what);
    EXPECT_EQ(b.status.code(), b.code) << b.status.to_string();
    EXPECT_NE(b.status.message().find(b.needle), std::string::npos) << b.status.message();
  }
  EXPECT_EQ(get(y), std::vector<float>(8, 42.0f));
  EXPECT_EQ(idx, std::vector<int64_t>(8, 42));
  // Backward: max needs x or indices; indices must lie in the plane; dx dims must match x.
  const Buf dy = make_buf(yd, 1.0f);
  Buf dx = make_buf(xd, 42.0f);
  Status s = pooling_backward(h, good, xd, nullptr, nullptr, yd, dy.data(), xd, dx.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("needs x or the forward indices"), std::string::npos);
  std::vector<int64_t> bad_idx(8, 3);
  bad_idx[5] = 25;
  s = pooling_backward(h, good, xd, nullptr, bad_idx.data(), yd, dy.data(), xd, dx.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("indices hold 25"), std::string::npos) << s.message();
  s = pooling_backward(h, good, xd, x.data(), nullptr, yd, dy.data(),
                       TensorDesc::make(DType::kF32, {1, 2, 5, 4}), dx.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = pooling_backward(h, good, xd, x.data(), nullptr, TensorDesc::make(DType::kF32, {1, 2, 3, 3}),
                       dy.data(), xd, dx.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(get(dx), std::vector<float>(50, 42.0f));
  EXPECT_TRUE(
      pooling_output_desc(desc(PoolKind::kMax, {2, 2}), TensorDesc::make(DType::kF32, {1, 1, 0, 4}))
          .status()
          .code() == StatusCode::kInvalidArgument);
}

TEST(Pooling, EmptyBatchIsANoOp) {
  Handle h;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {0, 3, 5, 5});
  const TensorDesc yd = TensorDesc::make(DType::kF32, {0, 3, 2, 2});
  EXPECT_TRUE(
      pooling_forward(h, desc(PoolKind::kMax, {2, 2}, {2, 2}), xd, nullptr, yd, nullptr).is_ok());
  EXPECT_TRUE(pooling_backward(h, desc(PoolKind::kAvgIncludePad, {2, 2}, {2, 2}), xd, nullptr,
                               nullptr, yd, nullptr, xd, nullptr)
                  .is_ok());
}

// The dispatcher picks the layout's kernel for the capped ISA and the reference for other
// strides; every call logs one replayable bench line.
TEST(Pooling, DispatchAndBenchLines) {
  Handle h;
  const PoolDesc p = desc(PoolKind::kMax, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  for_each_isa([&](Isa isa) {
    for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
      const TensorDesc xd = TensorDesc::make(DType::kF32, {1, 4, 7, 7}, l);
      const TensorDesc yd = value_or_fail(pooling_output_desc(p, xd));
      const Buf x = make_buf(xd, 1.0f);
      Buf y = make_buf(yd);
      const std::string log = testing::log_of(log::Category::kDispatch, [&] {
        EXPECT_TRUE(pooling_forward(h, p, xd, x.data(), yd, y.data()).is_ok());
      });
      EXPECT_NE(log.find("chose pool_fwd_f32_" + std::string(layout_name(l)) + "_" +
                         std::string(isa_name(isa))),
                std::string::npos)
          << log;
    }
  });
  const TensorDesc xs = strided(DType::kF32, {1, 4, 7, 7});
  const TensorDesc ys = strided(DType::kF32, {1, 4, 4, 4});
  const Buf x = make_buf(xs, 1.0f);
  Buf y = make_buf(ys);
  std::string log = testing::log_of(log::Category::kDispatch, [&] {
    EXPECT_TRUE(pooling_forward(h, p, xs, x.data(), ys, y.data()).is_ok());
  });
  EXPECT_NE(log.find("chose pool_fwd_ref"), std::string::npos) << log;
  const TensorDesc xd = TensorDesc::make(DType::kF32, {8, 64, 56, 56}, Layout::kNHWC);
  const TensorDesc yd = value_or_fail(pooling_output_desc(p, xd));
  const Buf xb = make_buf(xd, 1.0f);
  Buf yb = make_buf(yd);
  log = testing::log_of(log::Category::kBench, [&] {
    EXPECT_TRUE(pooling_forward(h, p, xd, xb.data(), yd, yb.data()).is_ok());
  });
  EXPECT_NE(log.find("tessera bench dnn pool --kind max --dims 8x64x56x56 --layout nhwc "
                     "--kernel 3x3 --stride 2x2 --pad 1x1x1x1 --dtype f32 --dir fwd"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace tessera::dnn
