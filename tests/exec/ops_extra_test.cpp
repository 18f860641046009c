// The rarer math, signal, cache-update and convolution kernels (kernels_extra.cpp,
// kernels_conv_extra.cpp) and dilated AveragePool, on cases ONNX's node tests leave out,
// against plain loops written here or values worked out by hand: Det of singular, pivoting,
// empty and batched matrices; SwiGLU with alpha; TensorScatter wrapping around a circular
// cache along a middle axis; RoiAlign with boxes partly outside the image in both coordinate
// modes and both pooling modes; DeformConv with zero offsets against Conv, and with half-pixel
// offsets at the border; ConvInteger and QLinearConv with per-channel zero points and scales,
// padding and saturation; STFT against a direct DFT; MelWeightMatrix against the formula;
// AveragePool with dilations, pads and ceil mode; and bad inputs, each giving one clear error.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/session.hpp>

#include "one_op.hpp"
#include "onnx_builder.hpp"
#include "test_util.hpp"

namespace tessera::exec {
namespace {

using Dims = std::vector<std::int64_t>;

using testing_util::make;
using testing_util::OneOp;

Tensor floats(const Dims& dims, const std::vector<float>& v) { return make<float>(dims, v); }
Tensor doubles(const Dims& dims, const std::vector<double>& v) { return make<double>(dims, v); }
Tensor ints(const Dims& dims, const std::vector<std::int64_t>& v) { return make<std::int64_t>(dims, v); }
Tensor scalar(std::int64_t v) { return make<std::int64_t>({}, {v}); }

void expect_error(const Result<Tensor>& r, const std::string& needle) {
  ASSERT_FALSE(r.is_ok()) << needle;
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().to_string();
}

template <typename T>
std::vector<T> values(Result<Tensor> r) {
  return std::move(r).value_or_throw().template to_vector<T>();
}

// ---- Det ----------------------------------------------------------------------------------

// The determinant by cofactor expansion along the first row (exact for the small integers
// used here).
double cofactor_det(const std::vector<double>& a, int n) {
  if (n == 0) return 1.0;
  if (n == 1) return a[0];
  double d = 0;
  for (int j = 0; j < n; ++j) {
    std::vector<double> minor;
    for (int i = 1; i < n; ++i)
      for (int k = 0; k < n; ++k)
        if (k != j) minor.push_back(a[static_cast<std::size_t>(i * n + k)]);
    d += (j % 2 ? -1.0 : 1.0) * a[static_cast<std::size_t>(j)] * cofactor_det(minor, n - 1);
  }
  return d;
}

Result<Tensor> det(const Tensor& x) { return OneOp(22, "Det", {{"x", x}}).run(); }

TEST(ExecExtra, DetOfSingularPivotingAndBatchedMatrices) {
  // Rows 0 and 2 equal: singular, exactly 0. A zero in the first pivot position needs a row
  // swap (determinant -1 of the permutation [[0, 1], [1, 0]] scaled).
  EXPECT_EQ(values<double>(det(doubles({3, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3})))[0], 0.0);
  EXPECT_EQ(values<double>(det(doubles({2, 2}, {0, 2, 3, 0})))[0], -6.0);
  // A zero column: singular at the second elimination step.
  EXPECT_EQ(values<double>(det(doubles({3, 3}, {1, 0, 2, 3, 0, 4, 5, 0, 6})))[0], 0.0);
  // [2, 3] batch of 4 x 4 integer matrices against cofactor expansion.
  std::vector<double> xv(2 * 3 * 16);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(static_cast<int>((i * 7 + 3) % 11) - 5);
  const Tensor y = det(doubles({2, 3, 4, 4}, xv)).value_or_throw();
  ASSERT_EQ(y.shape().dims(), (Dims{2, 3}));
  const auto got = y.to_vector<double>();
  for (int b = 0; b < 6; ++b) {
    const std::vector<double> a(xv.begin() + b * 16, xv.begin() + (b + 1) * 16);
    EXPECT_NEAR(got[static_cast<std::size_t>(b)], cofactor_det(a, 4), 1e-9) << "matrix " << b;
  }
  // An empty matrix has determinant 1; a batch of none gives an empty output.
  EXPECT_EQ(values<float>(det(floats({0, 0}, {})))[0], 1.0f);
  EXPECT_EQ(det(floats({0, 2, 2}, {})).value_or_throw().shape().dims(), (Dims{0}));
}

TEST(ExecExtra, DetBadInputs) {
  expect_error(det(floats({2, 3}, std::vector<float>(6, 1.0f))), "square matrices");
  expect_error(det(floats({3}, {1, 2, 3})), "square matrices");
  expect_error(det(ints({2, 2}, {1, 2, 3, 4})), "Det of i64");
}

// ---- SwiGLU -------------------------------------------------------------------------------

TEST(ExecExtra, SwiGluWithAlphaMatchesALoop) {
  const auto av = testing::random_floats(24, 31), bv = testing::random_floats(24, 32);
  std::vector<float> a = av;
  for (float& v : a) v *= 6.0f;  // into the sigmoid's tails
  OneOp op(28, "SwiGLU", {{"a", floats({2, 3, 4}, a)}, {"b", floats({2, 3, 4}, bv)}});
  op.real("alpha", 1.702f);
  const auto y = values<float>(op.run());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double want = a[i] / (1.0 + std::exp(-static_cast<double>(1.702f) * a[i])) * bv[i];
    EXPECT_NEAR(y[i], want, 1e-6 * (1 + std::fabs(want))) << i;
  }
}

TEST(ExecExtra, SwiGluBadInputs) {
  expect_error(OneOp(28, "SwiGLU", {{"a", floats({2, 2}, {1, 2, 3, 4})}, {"b", floats({1, 2}, {1, 2})}}).run(), "no broadcasting");
  expect_error(OneOp(28, "SwiGLU", {{"a", floats({2}, {1, 2})}, {"b", doubles({2}, {1, 2})}}).run(), "but B is f64");
}

// ---- TensorScatter ------------------------------------------------------------------------

Result<Tensor> tensor_scatter(const Tensor& past, const Tensor& update, const Tensor* at, const std::string& mode, std::int64_t axis) {
  std::vector<NamedTensor> in = {{"past", past}, {"update", update}};
  if (at) in.push_back({"at", *at});
  OneOp op(24, "TensorScatter", in);
  op.str("mode", mode);
  op.attr("axis", axis);
  return op.run();
}

TEST(ExecExtra, TensorScatterWrapsAroundACircularCache) {
  // past [batch 2, seq 4, heads 2, d 3] (sequence axis 1), update of 3 steps written at 3 for
  // batch 0 (steps 3, 0, 1) and 1 for batch 1 (steps 1, 2, 3).
  constexpr std::int64_t B = 2, S = 4, H = 2, D = 3, L = 3;
  std::vector<std::int64_t> past(B * S * H * D), upd(B * L * H * D);
  for (std::size_t i = 0; i < past.size(); ++i) past[i] = -static_cast<std::int64_t>(i) - 1;
  for (std::size_t i = 0; i < upd.size(); ++i) upd[i] = static_cast<std::int64_t>(i) + 1000;
  const std::vector<std::int64_t> at = {3, 1};
  const Tensor wi = ints({B}, at);
  const auto y = values<std::int64_t>(tensor_scatter(ints({B, S, H, D}, past), ints({B, L, H, D}, upd), &wi, "circular", 1));
  std::vector<std::int64_t> want = past;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t s = 0; s < L; ++s)
      for (std::int64_t e = 0; e < H * D; ++e)
        want[static_cast<std::size_t>((b * S + (at[static_cast<std::size_t>(b)] + s) % S) * H * D + e)] = upd[static_cast<std::size_t>((b * L + s) * H * D + e)];
  EXPECT_EQ(y, want);
  // Linear mode, default axis -2 on the same data seen as [2, 4, 6], write index left out (0).
  const auto lin = values<std::int64_t>(tensor_scatter(ints({B, S, H * D}, past), ints({B, L, H * D}, upd), nullptr, "linear", -2));
  want = past;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t s = 0; s < L; ++s)
      for (std::int64_t e = 0; e < H * D; ++e) want[static_cast<std::size_t>((b * S + s) * H * D + e)] = upd[static_cast<std::size_t>((b * L + s) * H * D + e)];
  EXPECT_EQ(lin, want);
}

TEST(ExecExtra, TensorScatterBadInputs) {
  const Tensor past = floats({2, 4, 3}, std::vector<float>(24, 0.0f)), upd = floats({2, 2, 3}, std::vector<float>(12, 1.0f));
  const Tensor late = ints({2}, {0, 3}), neg = ints({2}, {-1, 0}), short_wi = ints({1}, {0});
  expect_error(tensor_scatter(past, upd, &late, "linear", 1), "runs past the cache's 4 (linear mode)");
  expect_error(tensor_scatter(past, upd, &neg, "circular", 1), "is negative");
  expect_error(tensor_scatter(past, upd, &short_wi, "linear", 1), "one per batch");
  expect_error(tensor_scatter(past, floats({2, 5, 3}, std::vector<float>(30, 1.0f)), nullptr, "linear", 1), "no longer");
  expect_error(tensor_scatter(past, upd, nullptr, "linear", 0), "batch axis 0");
  expect_error(tensor_scatter(past, upd, nullptr, "ring", 1), "mode 'ring'");
}

// ---- RoiAlign -----------------------------------------------------------------------------

// ONNX's RoiAlign for one box and channel plane, written out directly.
double roi_sample(const std::vector<float>& plane, int H, int W, double y, double x, bool max_corner) {
  if (y < -1 || y > H || x < -1 || x > W) return 0.0;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int y0 = static_cast<int>(y), x0 = static_cast<int>(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = y0;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = x0;
  }
  const double ly = y - y0, lx = x - x0;
  auto at = [&](int r, int c) { return static_cast<double>(plane[static_cast<std::size_t>(r * W + c)]); };
  const double t[4] = {(1 - ly) * (1 - lx) * at(y0, x0), (1 - ly) * lx * at(y0, x1), ly * (1 - lx) * at(y1, x0), ly * lx * at(y1, x1)};
  return max_corner ? std::max({t[0], t[1], t[2], t[3]}) : t[0] + t[1] + t[2] + t[3];
}

std::vector<double> roi_align_loop(const std::vector<float>& plane, int H, int W, const float box[4], float scale, bool half, bool max,
                                   int OH, int OW, int ratio) {
  const double off = half ? 0.5 : 0.0;
  const double x0 = box[0] * static_cast<double>(scale) - off, y0 = box[1] * static_cast<double>(scale) - off;
  double w = box[2] * static_cast<double>(scale) - off - x0, h = box[3] * static_cast<double>(scale) - off - y0;
  if (!half) {
    w = std::max(w, 1.0);
    h = std::max(h, 1.0);
  }
  const double bh = h / OH, bw = w / OW;
  const int gh = ratio > 0 ? ratio : static_cast<int>(std::ceil(bh)), gw = ratio > 0 ? ratio : static_cast<int>(std::ceil(bw));
  std::vector<double> y;
  for (int ph = 0; ph < OH; ++ph)
    for (int pw = 0; pw < OW; ++pw) {
      double acc = 0;
      for (int iy = 0; iy < gh; ++iy)
        for (int ix = 0; ix < gw; ++ix) {
          const double v = roi_sample(plane, H, W, y0 + ph * bh + (iy + 0.5) * bh / gh, x0 + pw * bw + (ix + 0.5) * bw / gw, max);
          acc = max ? (iy == 0 && ix == 0 ? v : std::max(acc, v)) : acc + v;
        }
      y.push_back(max ? acc : acc / std::max(gh * gw, 1));
    }
  return y;
}

TEST(ExecExtra, RoiAlignBoxesPartlyOutsideTheImage) {
  constexpr int N = 2, C = 2, H = 5, W = 6, OH = 3, OW = 2;
  std::vector<float> xv = testing::random_floats(N * C * H * W, 41);
  for (float& v : xv) v += 0.5f;  // mostly positive, so max mode sees corners of both signs rarely
  // Box 0 runs past the right and bottom edges (and more than a pixel beyond), box 1 starts
  // left of and above the image; box 2 is smaller than a pixel (output_half_pixel stretches it
  // to 1 x 1).
  const std::vector<float> boxes = {3.0f, 2.5f, 9.0f, 8.0f, -2.5f, -1.75f, 2.0f, 3.0f, 1.2f, 1.1f, 1.4f, 1.3f};
  const std::vector<std::int64_t> batch = {1, 0, 1};
  for (bool half : {true, false})
    for (bool max : {false, true})
      for (int ratio : {0, 2}) {
        SCOPED_TRACE(std::string(half ? "half_pixel" : "output_half_pixel") + (max ? " max" : " avg") + " ratio " + std::to_string(ratio));
        OneOp op(22, "RoiAlign", {{"x", floats({N, C, H, W}, xv)}, {"rois", floats({3, 4}, boxes)}, {"bi", ints({3}, batch)}});
        op.str("coordinate_transformation_mode", half ? "half_pixel" : "output_half_pixel");
        op.str("mode", max ? "max" : "avg");
        op.attr("output_height", OH);
        op.attr("output_width", OW);
        op.attr("sampling_ratio", ratio);
        op.real("spatial_scale", 0.75f);
        const Tensor y = op.run().value_or_throw();
        ASSERT_EQ(y.shape().dims(), (Dims{3, C, OH, OW}));
        const auto got = y.to_vector<float>();
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < C; ++c) {
            const auto b = static_cast<std::size_t>(batch[static_cast<std::size_t>(r)]);
            const std::vector<float> plane(xv.begin() + static_cast<std::ptrdiff_t>((b * C + static_cast<std::size_t>(c)) * H * W),
                                           xv.begin() + static_cast<std::ptrdiff_t>((b * C + static_cast<std::size_t>(c) + 1) * H * W));
            const auto want = roi_align_loop(plane, H, W, &boxes[static_cast<std::size_t>(r * 4)], 0.75f, half, max, OH, OW, ratio);
            for (int i = 0; i < OH * OW; ++i)
              EXPECT_NEAR(got[static_cast<std::size_t>((r * C + c) * OH * OW + i)], want[static_cast<std::size_t>(i)], 1e-5) << "box " << r << " channel " << c << " bin " << i;
          }
      }
}

TEST(ExecExtra, RoiAlignBadInputs) {
  const Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  auto run = [&](const Tensor& rois, const Tensor& bi, const std::string& mode) {
    OneOp op(22, "RoiAlign", {{"x", x}, {"rois", rois}, {"bi", bi}});
    op.str("mode", mode);
    return op.run();
  };
  expect_error(run(floats({1, 4}, {0, 0, 1, 1}), ints({1}, {1}), "avg"), "batch_indices[0] = 1 is outside");
  expect_error(run(floats({1, 3}, {0, 0, 1}), ints({1}, {0}), "avg"), "rois must be [num_rois, 4]");
  expect_error(run(floats({2, 4}, std::vector<float>(8, 0.0f)), ints({1}, {0}), "avg"), "one per box");
  expect_error(run(floats({1, 4}, {0, 0, NAN, 1}), ints({1}, {0}), "avg"), "non-finite");
  expect_error(run(floats({1, 4}, {0, 0, 1, 1}), ints({1}, {0}), "min"), "mode 'min'");
}

// ---- DeformConv ---------------------------------------------------------------------------

TEST(ExecExtra, DeformConvWithZeroOffsetsEqualsConv) {
  // Two groups, two offset groups, pads, strides and dilations; offsets 0 and mask 1 make it
  // a plain convolution.
  constexpr std::int64_t N = 2, C = 4, H = 6, W = 7, M = 6, KH = 2, KW = 3, G = 2, OG = 2;
  const auto xv = testing::random_floats(N * C * H * W, 51), wv = testing::random_floats(M * (C / G) * KH * KW, 52), bv = testing::random_floats(M, 53);
  const Dims pads = {1, 0, 1, 2}, strides = {2, 1}, dil = {1, 2};
  const std::int64_t OH = (H + 2 - ((KH - 1) * 1 + 1)) / 2 + 1, OW = (W + 2 - ((KW - 1) * 2 + 1)) / 1 + 1;
  auto set = [&](const OneOp& op) {
    op.ints("pads", pads);
    op.ints("strides", strides);
    op.ints("dilations", dil);
    op.attr("group", G);
  };
  OneOp conv(22, "Conv", {{"x", floats({N, C, H, W}, xv)}, {"w", floats({M, C / G, KH, KW}, wv)}, {"b", floats({M}, bv)}});
  set(conv);
  const auto want = values<float>(conv.run());
  const Tensor offset = floats({N, OG * KH * KW * 2, OH, OW}, std::vector<float>(static_cast<std::size_t>(N * OG * KH * KW * 2 * OH * OW), 0.0f));
  const Tensor mask = floats({N, OG * KH * KW, OH, OW}, std::vector<float>(static_cast<std::size_t>(N * OG * KH * KW * OH * OW), 1.0f));
  for (bool with_mask : {false, true}) {
    std::vector<NamedTensor> in = {{"x", floats({N, C, H, W}, xv)}, {"w", floats({M, C / G, KH, KW}, wv)}, {"offset", offset}, {"b", floats({M}, bv)}};
    if (with_mask) in.push_back({"mask", mask});
    OneOp dc(22, "DeformConv", in);
    set(dc);
    dc.attr("offset_group", OG);
    const Tensor y = dc.run().value_or_throw();
    ASSERT_EQ(y.shape().dims(), (Dims{N, M, OH, OW}));
    const auto got = y.to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  }
}

TEST(ExecExtra, DeformConvFractionalOffsetsAtTheBorder) {
  // A 1 x 1 kernel of weight 1 over a 1 x 3 row [1, 2, 4]: an offset of +0.5 along W reads
  // halfway to the next pixel; past the last pixel the missing neighbour is 0; -1.5 from the
  // first pixel is entirely outside. A mask of 2 doubles the sample.
  const Tensor x = floats({1, 1, 1, 3}, {1, 2, 4}), w = floats({1, 1, 1, 1}, {1});
  const Tensor offset = floats({1, 2, 1, 3}, {0, 0, 0, /* W: */ -1.5f, 0.5f, 0.5f});
  const Tensor mask = floats({1, 1, 1, 3}, {1, 2, 1});
  const auto y = values<float>(OneOp(22, "DeformConv", {{"x", x}, {"w", w}, {"offset", offset}, {"", Tensor()}, {"mask", mask}}).run());
  EXPECT_EQ(y, (std::vector<float>{0.0f, 2 * 3.0f, 2.0f}));
}

TEST(ExecExtra, DeformConvBadInputs) {
  const Tensor x = floats({1, 2, 3, 3}, std::vector<float>(18, 1.0f)), w = floats({2, 2, 2, 2}, std::vector<float>(16, 1.0f));
  expect_error(OneOp(22, "DeformConv", {{"x", x}, {"w", w}, {"offset", floats({1, 8, 3, 3}, std::vector<float>(72, 0.0f))}}).run(), "must be [1, 8, 2, 2]");
  OneOp og(22, "DeformConv", {{"x", x}, {"w", w}, {"offset", floats({1, 24, 2, 2}, std::vector<float>(96, 0.0f))}});
  og.attr("offset_group", 3);
  expect_error(og.run(), "offset_group 3");
  expect_error(OneOp(22, "DeformConv", {{"x", x}, {"w", floats({2, 1, 2, 2}, std::vector<float>(8, 1.0f))}, {"offset", floats({1, 8, 2, 2}, std::vector<float>(32, 0.0f))}}).run(), "does not fit X");
}

// ---- ConvInteger and QLinearConv ----------------------------------------------------------

// The integer convolution (2-D, pads [top, left, bottom, right], stride 1, one group) of
// (x - xz) by (w - wz[m]).
std::vector<std::int64_t> int_conv_loop(const std::vector<int>& x, int C, int H, int W, const std::vector<int>& w, int M, int KH, int KW,
                                        int xz, const std::vector<int>& wz, const Dims& pads, int& OH, int& OW) {
  OH = H + static_cast<int>(pads[0] + pads[2]) - KH + 1;
  OW = W + static_cast<int>(pads[1] + pads[3]) - KW + 1;
  std::vector<std::int64_t> y;
  for (int m = 0; m < M; ++m)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        std::int64_t s = 0;
        for (int c = 0; c < C; ++c)
          for (int kh = 0; kh < KH; ++kh)
            for (int kw = 0; kw < KW; ++kw) {
              const int ih = oh + kh - static_cast<int>(pads[0]), iw = ow + kw - static_cast<int>(pads[1]);
              if (ih < 0 || iw < 0 || ih >= H || iw >= W) continue;
              s += static_cast<std::int64_t>(x[static_cast<std::size_t>((c * H + ih) * W + iw)] - xz) *
                   (w[static_cast<std::size_t>(((m * C + c) * KH + kh) * KW + kw)] - wz[static_cast<std::size_t>(m)]);
            }
        y.push_back(s);
      }
  return y;
}

TEST(ExecExtra, ConvIntegerPerChannelZeroPointsAndPadding) {
  constexpr int C = 2, H = 4, W = 5, M = 3, KH = 2, KW = 3;
  std::vector<std::uint8_t> xv(C * H * W);
  std::vector<std::int8_t> wv(M * C * KH * KW);
  std::vector<int> xi, wi;
  for (std::size_t i = 0; i < xv.size(); ++i) xi.push_back(xv[i] = static_cast<std::uint8_t>((i * 37 + 11) % 256));
  for (std::size_t i = 0; i < wv.size(); ++i) wi.push_back(wv[i] = static_cast<std::int8_t>(static_cast<int>((i * 53 + 7) % 256) - 128));
  const std::vector<std::int8_t> wz = {-3, 0, 5};
  const Dims pads = {1, 0, 0, 2};
  OneOp op(10, "ConvInteger", {{"x", make<std::uint8_t>({1, C, H, W}, xv)}, {"w", make<std::int8_t>({M, C, KH, KW}, wv)},
                                 {"xz", make<std::uint8_t>({}, {131})}, {"wz", make<std::int8_t>({M}, wz)}});
  op.ints("pads", pads);
  const Tensor y = op.run().value_or_throw();
  int OH = 0, OW = 0;
  const auto want = int_conv_loop(xi, C, H, W, wi, M, KH, KW, 131, {-3, 0, 5}, pads, OH, OW);
  ASSERT_EQ(y.dtype(), DType::kI32);
  ASSERT_EQ(y.shape().dims(), (Dims{1, M, OH, OW}));
  const auto got = y.to_vector<std::int32_t>();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
}

TEST(ExecExtra, QLinearConvPerChannelScalesAndSaturation) {
  constexpr int C = 2, H = 3, W = 4, M = 2, KH = 2, KW = 2;
  std::vector<std::int8_t> xv(C * H * W), wv(M * C * KH * KW);
  std::vector<int> xi, wi;
  for (std::size_t i = 0; i < xv.size(); ++i) xi.push_back(xv[i] = static_cast<std::int8_t>(static_cast<int>((i * 29 + 5) % 200) - 100));
  for (std::size_t i = 0; i < wv.size(); ++i) wi.push_back(wv[i] = static_cast<std::int8_t>(static_cast<int>((i * 17 + 3) % 120) - 60));
  const float xs = 0.02f, ys = 0.005f;
  const std::vector<float> ws = {0.01f, 0.003f};
  const std::vector<std::int32_t> bias = {400, -2500};
  const Dims pads = {0, 1, 1, 0};
  OneOp op(10, "QLinearConv", {{"x", make<std::int8_t>({1, C, H, W}, xv)}, {"xs", floats({}, {xs})}, {"xz", make<std::int8_t>({}, {4})},
                                 {"w", make<std::int8_t>({M, C, KH, KW}, wv)}, {"ws", floats({M}, ws)}, {"wz", make<std::int8_t>({M}, {0, -2})},
                                 {"ys", floats({}, {ys})}, {"yz", make<std::uint8_t>({}, {128})}, {"b", make<std::int32_t>({M}, bias)}});
  op.ints("pads", pads);
  const Tensor y = op.run().value_or_throw();
  int OH = 0, OW = 0;
  const auto acc = int_conv_loop(xi, C, H, W, wi, M, KH, KW, 4, {0, -2}, pads, OH, OW);
  ASSERT_EQ(y.dtype(), DType::kU8);
  ASSERT_EQ(y.shape().dims(), (Dims{1, M, OH, OW}));
  const auto got = y.to_vector<std::uint8_t>();
  bool saturated = false;
  for (int m = 0; m < M; ++m)
    for (int i = 0; i < OH * OW; ++i) {
      const std::size_t at = static_cast<std::size_t>(m * OH * OW + i);
      const float mult = static_cast<float>(static_cast<float>(xs * ws[static_cast<std::size_t>(m)]) / ys);
      const double v = std::nearbyint(static_cast<double>(acc[at] + bias[static_cast<std::size_t>(m)]) * mult) + 128;
      saturated = saturated || v < 0 || v > 255;
      EXPECT_EQ(got[at], static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0))) << at;
    }
  EXPECT_TRUE(saturated) << "the data should push some outputs past the u8 range";
}

TEST(ExecExtra, IntegerConvBadInputs) {
  const Tensor x = make<std::uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), w = make<std::uint8_t>({2, 1, 1, 1}, {1, 2});
  expect_error(OneOp(10, "ConvInteger", {{"x", floats({1, 1, 2, 2}, {1, 2, 3, 4})}, {"w", w}}).run(), "x must be u8 or i8");
  expect_error(OneOp(10, "ConvInteger", {{"x", x}, {"w", w}, {"xz", make<std::uint8_t>({}, {0})}, {"wz", make<std::uint8_t>({3}, {0, 0, 0})}}).run(),
               "one value per output channel (2)");
  expect_error(OneOp(10, "ConvInteger", {{"x", x}, {"w", w}, {"xz", make<std::int8_t>({}, {0})}}).run(), "x_zero_point is i8");
  const Tensor f = floats({}, {1.0f}), z = make<std::uint8_t>({}, {0});
  expect_error(OneOp(10, "QLinearConv", {{"x", x}, {"xs", f}, {"xz", z}, {"w", w}, {"ws", f}, {"wz", z}, {"ys", floats({}, {0.0f})}, {"yz", z}}).run(),
               "y_scale must be nonzero");
  expect_error(OneOp(10, "QLinearConv", {{"x", x}, {"xs", f}, {"xz", z}, {"w", w}, {"ws", f}, {"wz", z}, {"ys", f}, {"yz", z}, {"b", floats({2}, {0, 0})}}).run(),
               "the bias must be i32 [2]");
}

// ---- STFT and MelWeightMatrix -------------------------------------------------------------

TEST(ExecExtra, StftMatchesADirectDft) {
  constexpr int B = 2, L = 19, FL = 8, STEP = 3;
  const int frames = (L - FL) / STEP + 1;
  std::vector<double> window(FL);
  for (int i = 0; i < FL; ++i) window[static_cast<std::size_t>(i)] = 0.5 - 0.5 * std::cos(2 * M_PI * i / FL);
  for (bool complex_in : {false, true}) {
    const int ci = complex_in ? 2 : 1;
    std::vector<double> sig(static_cast<std::size_t>(B * L * ci));
    for (std::size_t i = 0; i < sig.size(); ++i) sig[i] = std::sin(0.37 * static_cast<double>(i)) + 0.1 * static_cast<double>(i % 5);
    OneOp op(17, "STFT", {{"x", doubles({B, L, ci}, sig)}, {"step", scalar(STEP)}, {"win", doubles({FL}, window)}, {"len", scalar(FL)}});
    op.attr("onesided", complex_in ? 0 : 1);
    const Tensor y = op.run().value_or_throw();
    const int bins = complex_in ? FL : FL / 2 + 1;
    ASSERT_EQ(y.shape().dims(), (Dims{B, frames, bins, 2}));
    const auto got = y.to_vector<double>();
    for (int b = 0; b < B; ++b)
      for (int f = 0; f < frames; ++f)
        for (int k = 0; k < bins; ++k) {
          std::complex<double> s;
          for (int m = 0; m < FL; ++m) {
            const double* p = &sig[static_cast<std::size_t>((b * L + f * STEP + m) * ci)];
            s += std::complex<double>(p[0], complex_in ? p[1] : 0.0) * window[static_cast<std::size_t>(m)] * std::polar(1.0, -2 * M_PI * k * m / FL);
          }
          const std::size_t at = static_cast<std::size_t>(((b * frames + f) * bins + k) * 2);
          EXPECT_NEAR(got[at], s.real(), 1e-12);
          EXPECT_NEAR(got[at + 1], s.imag(), 1e-12);
        }
  }
}

TEST(ExecExtra, StftBadInputs) {
  const Tensor sig = floats({1, 6, 1}, std::vector<float>(6, 1.0f));
  expect_error(OneOp(17, "STFT", {{"x", sig}, {"step", scalar(1)}, {"", Tensor()}, {"len", scalar(7)}}).run(), "frame_length 7 for a signal of length 6");
  expect_error(OneOp(17, "STFT", {{"x", sig}, {"step", scalar(0)}}).run(), "frame_step must be positive");
  expect_error(OneOp(17, "STFT", {{"x", sig}, {"step", scalar(1)}, {"win", floats({4}, {1, 1, 1, 1})}, {"len", scalar(3)}}).run(), "4 values for frame_length 3");
  expect_error(OneOp(17, "STFT", {{"x", floats({1, 6, 2}, std::vector<float>(12, 1.0f))}, {"step", scalar(1)}}).run(), "one-sided STFT of a complex signal");
}

Result<Tensor> mel(std::int64_t bins, std::int64_t dft, std::int64_t rate, float lo, float hi) {
  return OneOp(17, "MelWeightMatrix", {{"n", scalar(bins)}, {"dft", scalar(dft)}, {"rate", scalar(rate)}, {"lo", floats({}, {lo})}, {"hi", floats({}, {hi})}}).run();
}

TEST(ExecExtra, MelWeightMatrixMatchesTheFormula) {
  constexpr int MELS = 6, DFT = 64, RATE = 8000;
  const float lo = 125.0f, hi = 3800.0f;
  const Tensor y = mel(MELS, DFT, RATE, lo, hi).value_or_throw();
  ASSERT_EQ(y.shape().dims(), (Dims{DFT / 2 + 1, MELS}));
  ASSERT_EQ(y.dtype(), DType::kF32);
  const auto got = y.to_vector<float>();
  auto to_mel = [](double f) { return 2595.0 * std::log10(1.0 + f / 700.0); };
  const double step = (to_mel(hi) - to_mel(lo)) / (MELS + 2);
  std::vector<int> pts;
  for (int i = 0; i < MELS + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (to_mel(lo) + i * step) / 2595.0) - 1.0);
    pts.push_back(static_cast<int>(std::floor((DFT + 1) * hz / RATE)));
  }
  for (int j = 0; j <= DFT / 2; ++j)
    for (int i = 0; i < MELS; ++i) {
      const int l = pts[static_cast<std::size_t>(i)], c = pts[static_cast<std::size_t>(i + 1)], r = pts[static_cast<std::size_t>(i + 2)];
      double want = 0;
      if (j >= l && j <= c) want = c == l ? 1.0 : static_cast<double>(j - l) / (c - l);
      if (j >= c && j < r) want = static_cast<double>(r - j) / (r - c);
      EXPECT_FLOAT_EQ(got[static_cast<std::size_t>(j * MELS + i)], static_cast<float>(want)) << "bin " << j << " filter " << i;
    }
}

TEST(ExecExtra, MelWeightMatrixBadInputs) {
  expect_error(mel(4, 64, 8000, 0.0f, 9000.0f), "falls outside the 33 bins");
  expect_error(mel(0, 64, 8000, 0.0f, 4000.0f), "must be positive");
  expect_error(mel(4, 64, 8000, -500.0f, 4000.0f), "falls outside");
}

// ---- AveragePool with dilations -----------------------------------------------------------

TEST(ExecExtra, DilatedAveragePoolWithPadsAndCeilMode) {
  constexpr int H = 6, W = 7;
  const auto xv = testing::random_floats(H * W, 61);
  const Dims k = {2, 3}, s = {2, 2}, d = {2, 2}, pads = {1, 0, 1, 1};
  for (int include : {0, 1})
    for (int ceil : {0, 1}) {
      SCOPED_TRACE("count_include_pad " + std::to_string(include) + " ceil_mode " + std::to_string(ceil));
      OneOp op(19, "AveragePool", {{"x", floats({1, 1, H, W}, xv)}});
      op.ints("kernel_shape", k);
      op.ints("strides", s);
      op.ints("dilations", d);
      op.ints("pads", pads);
      op.attr("count_include_pad", include);
      op.attr("ceil_mode", ceil);
      const Tensor y = op.run().value_or_throw();
      // Output size: ONNX's rule (a ceil-mode window must start inside the input or its begin padding).
      auto out = [&](int in, int i) {
        const std::int64_t room = in + pads[static_cast<std::size_t>(i)] + pads[static_cast<std::size_t>(i + 2)] - ((k[static_cast<std::size_t>(i)] - 1) * d[static_cast<std::size_t>(i)] + 1);
        std::int64_t o = (ceil ? (room + s[static_cast<std::size_t>(i)] - 1) / s[static_cast<std::size_t>(i)] : room / s[static_cast<std::size_t>(i)]) + 1;
        if (ceil && (o - 1) * s[static_cast<std::size_t>(i)] >= in + pads[static_cast<std::size_t>(i)]) --o;
        return o;
      };
      const std::int64_t OH = out(H, 0), OW = out(W, 1);
      ASSERT_EQ(y.shape().dims(), (Dims{1, 1, OH, OW}));
      const auto got = y.to_vector<float>();
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          double sum = 0;
          int count = 0;
          for (std::int64_t a = 0; a < k[0]; ++a)
            for (std::int64_t b = 0; b < k[1]; ++b) {
              const std::int64_t ih = oh * s[0] - pads[0] + a * d[0], iw = ow * s[1] - pads[1] + b * d[1];
              if (ih >= H + pads[2] || iw >= W + pads[3]) continue;  // past the padded input: not a tap
              const bool inside = ih >= 0 && iw >= 0 && ih < H && iw < W;
              if (inside) sum += xv[static_cast<std::size_t>(ih * W + iw)];
              if (inside || include) ++count;
            }
          EXPECT_NEAR(got[static_cast<std::size_t>(oh * OW + ow)], count ? sum / count : 0.0, 1e-6) << oh << ", " << ow;
        }
    }
}

}  // namespace
}  // namespace tessera::exec
