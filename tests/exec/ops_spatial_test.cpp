// The spatial, detection and integer-matrix kernels (kernels_spatial.cpp, kernels_detect.cpp)
// on cases ONNX's node tests leave out, against plain loops or values worked out by hand:
// GridSample points outside the image under each padding mode (far and non-finite ones too),
// AffineGrid with a dim of 1, Col2Im with dilations, uneven pads and strides, MaxUnpool into a
// larger output_shape, NonMaxSuppression with tied scores, an IoU exactly at the threshold, a
// score threshold that removes every box and no boxes at all, RotaryEmbedding with
// rotary_embedding_dim below the head size, MatMulInteger and QLinearMatMul with zero points
// and scales per row, per batch and row, and per column; and bad inputs, each giving one clear
// error.
#include <algorithm>
#include <cmath>
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
Tensor ints(const Dims& dims, const std::vector<std::int64_t>& v) { return make<std::int64_t>(dims, v); }

void expect_error(const Result<Tensor>& r, const std::string& needle) {
  ASSERT_FALSE(r.is_ok()) << needle;
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().to_string();
}

// ---- GridSample ---------------------------------------------------------------------------

Result<Tensor> grid_sample(const Tensor& x, const Tensor& grid, const std::string& mode, const std::string& padding, std::int64_t align) {
  OneOp op(20, "GridSample", {{"x", x}, {"grid", grid}});
  testing::OnnxBuilder::attr_string(op.node, "mode", mode);
  testing::OnnxBuilder::attr_string(op.node, "padding_mode", padding);
  testing::OnnxBuilder::attr(op.node, "align_corners", align);
  return op.run();
}

TEST(ExecSpatial, GridSamplePointsOutsideTheImageByPaddingMode) {
  // X = [[1, 2, 3], [4, 5, 6]] (H 2, W 3).
  const Tensor x = floats({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  // Linear, align_corners: (gx, gy) = (1.5, 0) is pixel (x 2.5, y 0.5), half a pixel right of
  // the last column. zeros: column 2 at weight 0.5, column 3 is 0: 0.25 (3 + 6). border: x
  // clamped to 2: 0.5 (3 + 6). reflection: x mirrored to 1.5: 0.25 (2 + 3 + 5 + 6).
  const Tensor g1 = floats({1, 1, 1, 2}, {1.5f, 0.0f});
  EXPECT_FLOAT_EQ(grid_sample(x, g1, "linear", "zeros", 1).value_or_throw().to_vector<float>()[0], 2.25f);
  EXPECT_FLOAT_EQ(grid_sample(x, g1, "linear", "border", 1).value_or_throw().to_vector<float>()[0], 4.5f);
  EXPECT_FLOAT_EQ(grid_sample(x, g1, "linear", "reflection", 1).value_or_throw().to_vector<float>()[0], 4.0f);
  // Nearest, not align_corners: (gx, gy) = (-1.9, 1.2) is pixel (x -1.85, y 1.7), rounded to
  // (-2, 2). zeros: 0. border: clamped to (0, 1): 4. reflection about -0.5 and 1.5: (1, 1): 5.
  const Tensor g2 = floats({1, 1, 1, 2}, {-1.9f, 1.2f});
  EXPECT_FLOAT_EQ(grid_sample(x, g2, "nearest", "zeros", 0).value_or_throw().to_vector<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(grid_sample(x, g2, "nearest", "border", 0).value_or_throw().to_vector<float>()[0], 4.0f);
  EXPECT_FLOAT_EQ(grid_sample(x, g2, "nearest", "reflection", 0).value_or_throw().to_vector<float>()[0], 5.0f);
  // Cubic with border padding far outside: every tap clamps to the corner pixel (weights sum to 1).
  const Tensor g3 = floats({1, 1, 1, 2}, {7.0f, -9.0f});
  EXPECT_NEAR(grid_sample(x, g3, "cubic", "border", 0).value_or_throw().to_vector<float>()[0], 3.0f, 1e-6);
}

TEST(ExecSpatial, GridSampleNonFiniteAndFarPoints) {
  const Tensor x = floats({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  // (gx, gy) = (1e30, 0), (inf, 0), (NaN, 0), align_corners, linear: far right of row 0.5.
  const Tensor g = floats({1, 1, 3, 2}, {1e30f, 0.0f, INFINITY, 0.0f, NAN, 0.0f});
  const auto zeros = grid_sample(x, g, "linear", "zeros", 1).value_or_throw().to_vector<float>();
  EXPECT_EQ(zeros[0], 0.0f);
  EXPECT_EQ(zeros[1], 0.0f);
  EXPECT_TRUE(std::isnan(zeros[2]));
  const auto border = grid_sample(x, g, "linear", "border", 1).value_or_throw().to_vector<float>();
  EXPECT_FLOAT_EQ(border[0], 4.5f);
  EXPECT_FLOAT_EQ(border[1], 4.5f);
  EXPECT_TRUE(std::isnan(border[2]));
  // Reflection has no place for an infinite coordinate: NaN.
  const auto reflection = grid_sample(x, g, "cubic", "reflection", 1).value_or_throw().to_vector<float>();
  EXPECT_TRUE(std::isfinite(reflection[0]));
  EXPECT_TRUE(std::isnan(reflection[1]));
  EXPECT_TRUE(std::isnan(reflection[2]));
}

TEST(ExecSpatial, GridSampleBilinearZerosMatchesALoop) {
  constexpr int C = 2, H = 3, W = 4, HO = 5, WO = 6;
  const auto xv = testing::random_floats(C * H * W, 21);
  auto gv = testing::random_floats(HO * WO * 2, 22);
  for (float& g : gv) g *= 1.4f;  // some points fall outside [-1, 1]
  const auto y = grid_sample(floats({1, C, H, W}, xv), floats({1, HO, WO, 2}, gv), "linear", "zeros", 0).value_or_throw();
  ASSERT_EQ(y.shape().dims(), (Dims{1, C, HO, WO}));
  const auto got = y.to_vector<float>();
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < HO * WO; ++p) {
      const double ix = ((gv[static_cast<std::size_t>(2 * p)] + 1.0) * W - 1) / 2, iy = ((gv[static_cast<std::size_t>(2 * p + 1)] + 1.0) * H - 1) / 2;
      const double x0 = std::floor(ix), y0 = std::floor(iy);
      double want = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const int px = static_cast<int>(x0) + dx, py = static_cast<int>(y0) + dy;
          if (px < 0 || px >= W || py < 0 || py >= H) continue;
          const double w = (dx ? ix - x0 : 1 - (ix - x0)) * (dy ? iy - y0 : 1 - (iy - y0));
          want += w * xv[static_cast<std::size_t>((c * H + py) * W + px)];
        }
      EXPECT_NEAR(got[static_cast<std::size_t>(c * HO * WO + p)], want, 1e-5) << c << "," << p;
    }
}

TEST(ExecSpatial, GridSampleBadInputs) {
  const Tensor x = floats({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error(grid_sample(x, floats({1, 1, 1, 3}, {0, 0, 0}), "linear", "zeros", 0), "the grid has dims [1, 1, 1, 3] for X of dims [1, 1, 2, 3]");
  expect_error(grid_sample(x, floats({1, 1, 1, 2}, {0, 0}), "bilinear", "zeros", 0), "mode 'bilinear' (opset 20's modes: linear, nearest, cubic)");
  expect_error(grid_sample(x, floats({1, 1, 1, 2}, {0, 0}), "linear", "wrap", 0), "padding_mode 'wrap'");
  expect_error(grid_sample(floats({2, 3}, {1, 2, 3, 4, 5, 6}), floats({2, 2}, {0, 0, 0, 0}), "linear", "zeros", 0), "GridSample's X must be [N, C, spatial dims...]");
}

// ---- AffineGrid ---------------------------------------------------------------------------

TEST(ExecSpatial, AffineGridDimOfOneAndBadTheta) {
  // size (1, 1, 1, 3), align_corners: x runs -1, 0, 1; the one row sits at y = 0.
  OneOp op(20, "AffineGrid", {{"theta", floats({1, 2, 3}, {1, 0, 0.5f, 0, 2, 0.25f})}, {"size", ints({4}, {1, 1, 1, 3})}});
  testing::OnnxBuilder::attr(op.node, "align_corners", std::int64_t{1});
  const Tensor g = op.run().value_or_throw();
  ASSERT_EQ(g.shape().dims(), (Dims{1, 1, 3, 2}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{-0.5f, 0.25f, 0.5f, 0.25f, 1.5f, 0.25f}));
  OneOp bad(20, "AffineGrid", {{"theta", floats({1, 3, 4}, std::vector<float>(12, 0))}, {"size", ints({4}, {1, 1, 2, 2})}});
  expect_error(bad.run(), "theta has dims [1, 3, 4] for size [1, 1, 2, 2]: it must be [1, 2, 3]");
}

// ---- Col2Im -------------------------------------------------------------------------------

TEST(ExecSpatial, Col2ImDilationsPadsAndStridesMatchALoop) {
  // Image 4 x 5, block 2 x 2, dilations (2, 1), pads (h 1 | 0, w 0 | 2), strides (1, 2): the
  // block grid is ((4 + 1 - 3) / 1 + 1) x ((5 + 2 - 2) / 2 + 1) = 3 x 3.
  constexpr int C = 2, KH = 2, KW = 2, H = 4, W = 5, GH = 3, GW = 3;
  const auto xv = testing::random_floats(C * KH * KW * GH * GW, 23);
  OneOp op(18, "Col2Im", {{"x", floats({1, C * KH * KW, GH * GW}, xv)}, {"image", ints({2}, {H, W})}, {"block", ints({2}, {KH, KW})}});
  testing::OnnxBuilder::attr(op.node, "dilations", Dims{2, 1});
  testing::OnnxBuilder::attr(op.node, "pads", Dims{1, 0, 0, 2});
  testing::OnnxBuilder::attr(op.node, "strides", Dims{1, 2});
  const Tensor y = op.run().value_or_throw();
  ASSERT_EQ(y.shape().dims(), (Dims{1, C, H, W}));
  std::vector<double> want(C * H * W, 0.0);
  for (int c = 0; c < C; ++c)
    for (int kh = 0; kh < KH; ++kh)
      for (int kw = 0; kw < KW; ++kw)
        for (int bh = 0; bh < GH; ++bh)
          for (int bw = 0; bw < GW; ++bw) {
            const int h = bh * 1 - 1 + kh * 2, w = bw * 2 - 0 + kw * 1;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            want[static_cast<std::size_t>((c * H + h) * W + w)] += xv[static_cast<std::size_t>(((c * KH + kh) * KW + kw) * GH * GW + bh * GW + bw)];
          }
  const auto got = y.to_vector<float>();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  // Eight blocks where the grid has nine.
  OneOp bad(18, "Col2Im", {{"x", floats({1, 4, 8}, std::vector<float>(32, 1))}, {"image", ints({2}, {H, W})}, {"block", ints({2}, {KH, KW})}});
  testing::OnnxBuilder::attr(bad.node, "dilations", Dims{2, 1});
  testing::OnnxBuilder::attr(bad.node, "pads", Dims{1, 0, 0, 2});
  testing::OnnxBuilder::attr(bad.node, "strides", Dims{1, 2});
  expect_error(bad.run(), "input dim 2 is 8, the block grid [3, 3] has 9 blocks");
}

// ---- MaxUnpool ----------------------------------------------------------------------------

TEST(ExecSpatial, MaxUnpoolIntoALargerOutputAndIndicesOutOfRange) {
  // 1-D: kernel 2, stride 2 over 2 values unpools to 4; output_shape 6 pads two zeros after.
  auto unpool = [](const std::vector<std::int64_t>& idx, bool shape) {
    std::vector<NamedTensor> in = {{"x", floats({1, 1, 2}, {7, 9})}, {"i", ints({1, 1, 2}, idx)}};
    if (shape) in.push_back({"shape", ints({3}, {1, 1, 6})});
    OneOp op(22, "MaxUnpool", in);
    testing::OnnxBuilder::attr(op.node, "kernel_shape", Dims{2});
    testing::OnnxBuilder::attr(op.node, "strides", Dims{2});
    return op.run();
  };
  EXPECT_EQ(unpool({1, 2}, true).value_or_throw().to_vector<float>(), (std::vector<float>{0, 7, 9, 0, 0, 0}));
  EXPECT_EQ(unpool({3, 0}, false).value_or_throw().to_vector<float>(), (std::vector<float>{9, 0, 0, 7}));
  expect_error(unpool({1, 4}, false), "index 4 is outside [0, 4) of the unpooled dims [1, 1, 4]");
  expect_error(unpool({-1, 0}, true), "index -1 is outside [0, 4)");
}

// ---- NonMaxSuppression --------------------------------------------------------------------

Result<Tensor> nms(const Tensor& boxes, const Tensor& scores, std::int64_t max_out, float iou, const float* score_min) {
  std::vector<NamedTensor> in = {{"boxes", boxes}, {"scores", scores}, {"max", ints({1}, {max_out})}, {"iou", floats({1}, {iou})}};
  if (score_min) in.push_back({"smin", floats({1}, {*score_min})});
  return OneOp(11, "NonMaxSuppression", in).run();
}

TEST(ExecSpatial, NonMaxSuppressionTiesThresholdsAndNoBoxes) {
  // Four equal scores: ties go to the lower index. Box 1 repeats box 0 (IoU 1); box 2 overlaps
  // box 0 by exactly half its union (IoU 0.5, not above the threshold, so kept); box 3 is apart.
  const Tensor boxes = floats({1, 4, 4}, {0, 0, 1, 2, 0, 0, 1, 2, 0, 1, 1, 2, 0, 5, 1, 6});
  const Tensor scores = floats({1, 1, 4}, {0.5f, 0.5f, 0.5f, 0.5f});
  const Tensor y = nms(boxes, scores, 10, 0.5f, nullptr).value_or_throw();
  ASSERT_EQ(y.shape().dims(), (Dims{3, 3}));
  EXPECT_EQ(y.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 0, 0, 0, 0, 2, 0, 0, 3}));
  // At most two per class.
  EXPECT_EQ(nms(boxes, scores, 2, 0.5f, nullptr).value_or_throw().to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 0, 0, 0, 0, 2}));
  // A score threshold at the scores removes every box (it keeps those strictly above).
  const float at = 0.5f;
  EXPECT_EQ(nms(boxes, scores, 10, 0.5f, &at).value_or_throw().shape().dims(), (Dims{0, 3}));
  // No boxes at all.
  EXPECT_EQ(nms(floats({1, 0, 4}, {}), floats({1, 2, 0}, {}), 10, 0.5f, nullptr).value_or_throw().shape().dims(), (Dims{0, 3}));
  // Bad inputs.
  expect_error(nms(boxes, floats({1, 1, 3}, {1, 2, 3}), 10, 0.5f, nullptr), "scores must be [1, classes, 4] for boxes [1, 4, 4], not [1, 1, 3]");
  expect_error(nms(floats({1, 2, 3}, {0, 0, 0, 0, 0, 0}), floats({1, 1, 2}, {1, 2}), 10, 0.5f, nullptr), "boxes must be [batches, boxes, 4]");
  expect_error(nms(boxes, scores, 10, 1.5f, nullptr), "iou_threshold 1.5");
}

// ---- RotaryEmbedding ----------------------------------------------------------------------

TEST(ExecSpatial, RotaryEmbeddingPartialRotationMatchesALoop) {
  // 3-D input [batch 2, seq 3, 2 heads x 6], rotary_embedding_dim 4, caches per token.
  constexpr int B = 2, S = 3, NH = 2, D = 6, R = 4, HALF = R / 2;
  const auto xv = testing::random_floats(B * S * NH * D, 24), cv = testing::random_floats(B * S * HALF, 25), sv = testing::random_floats(B * S * HALF, 26);
  for (int interleaved = 0; interleaved < 2; ++interleaved) {
    OneOp op(23, "RotaryEmbedding", {{"x", floats({B, S, NH * D}, xv)}, {"cos", floats({B, S, HALF}, cv)}, {"sin", floats({B, S, HALF}, sv)}});
    testing::OnnxBuilder::attr(op.node, "num_heads", std::int64_t{NH});
    testing::OnnxBuilder::attr(op.node, "rotary_embedding_dim", std::int64_t{R});
    testing::OnnxBuilder::attr(op.node, "interleaved", std::int64_t{interleaved});
    const auto got = op.run().value_or_throw().to_vector<float>();
    std::vector<double> want(xv.begin(), xv.end());
    for (int t = 0; t < B * S; ++t)
      for (int h = 0; h < NH; ++h)
        for (int i = 0; i < HALF; ++i) {
          const int base = (t * NH + h) * D, a = base + (interleaved ? 2 * i : i), b = base + (interleaved ? 2 * i + 1 : i + HALF);
          const double co = cv[static_cast<std::size_t>(t * HALF + i)], si = sv[static_cast<std::size_t>(t * HALF + i)];
          want[static_cast<std::size_t>(a)] = co * xv[static_cast<std::size_t>(a)] - si * xv[static_cast<std::size_t>(b)];
          want[static_cast<std::size_t>(b)] = si * xv[static_cast<std::size_t>(a)] + co * xv[static_cast<std::size_t>(b)];
        }
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << interleaved << "," << i;
    // Entries 4 and 5 of each head are past the rotary dims: copied as they are.
    EXPECT_EQ(got[4], xv[4]);
    EXPECT_EQ(got[5], xv[5]);
  }
}

TEST(ExecSpatial, RotaryEmbeddingBadInputs) {
  const Tensor x = floats({1, 1, 2, 4}, std::vector<float>(8, 1));
  const Tensor cache = floats({5, 2}, std::vector<float>(10, 0.5f));
  expect_error(OneOp(23, "RotaryEmbedding", {{"x", x}, {"c", cache}, {"s", cache}, {"p", ints({1, 2}, {0, 5})}}).run(), "position id 5 is outside the caches' [0, 5)");
  expect_error(OneOp(23, "RotaryEmbedding", {{"x", x}, {"c", cache}, {"s", cache}}).run(), "without position_ids the caches must be [1, 2, 2], not [5, 2]");
  expect_error(OneOp(23, "RotaryEmbedding", {{"x", floats({1, 2, 8}, std::vector<float>(16, 1))}, {"c", cache}, {"s", cache}, {"p", ints({1, 2}, {0, 1})}}).run(),
               "a 3-D input needs num_heads");
  OneOp odd(23, "RotaryEmbedding", {{"x", x}, {"c", cache}, {"s", cache}, {"p", ints({1, 2}, {0, 1})}});
  testing::OnnxBuilder::attr(odd.node, "rotary_embedding_dim", std::int64_t{3});
  expect_error(odd.run(), "rotary_embedding_dim 3 must be even");
}

// ---- MatMulInteger, QLinearMatMul ---------------------------------------------------------

TEST(ExecSpatial, MatMulIntegerZeroPointsPerRowAndColumnOverBroadcastBatches) {
  constexpr int NB = 2, M = 2, K = 3, N = 2;
  const std::vector<std::uint8_t> a = {10, 200, 3, 255, 0, 17, 9, 8, 7, 6, 5, 4};  // [2, 2, 3]
  const std::vector<std::uint8_t> b = {1, 2, 250, 4, 5, 6};                          // [3, 2], shared by both batches
  const std::vector<std::uint8_t> za = {3, 128}, zb = {1, 255};
  const Tensor y = OneOp(10, "MatMulInteger", {{"a", make<std::uint8_t>({NB, M, K}, a)}, {"b", make<std::uint8_t>({K, N}, b)}, {"za", make<std::uint8_t>({M}, za)}, {"zb", make<std::uint8_t>({N}, zb)}})
                       .run()
                       .value_or_throw();
  ASSERT_EQ(y.dtype(), DType::kI32);
  ASSERT_EQ(y.shape().dims(), (Dims{NB, M, N}));
  const auto got = y.to_vector<std::int32_t>();
  for (int o = 0; o < NB; ++o)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        int want = 0;
        for (int k = 0; k < K; ++k) want += (a[static_cast<std::size_t>((o * M + i) * K + k)] - za[static_cast<std::size_t>(i)]) * (b[static_cast<std::size_t>(k * N + j)] - zb[static_cast<std::size_t>(j)]);
        EXPECT_EQ(got[static_cast<std::size_t>((o * M + i) * N + j)], want) << o << i << j;
      }
  expect_error(OneOp(10, "MatMulInteger", {{"a", make<std::uint8_t>({2, 3}, std::vector<std::uint8_t>(6, 1))}, {"b", make<std::uint8_t>({2, 3}, std::vector<std::uint8_t>(6, 1))}}).run(),
               "do not multiply (inner dims 3 and 2)");
  expect_error(OneOp(10, "MatMulInteger", {{"a", make<std::uint8_t>({2, 3}, std::vector<std::uint8_t>(6, 1))}, {"b", make<std::uint8_t>({3, 2}, std::vector<std::uint8_t>(6, 1))}, {"za", make<std::uint8_t>({3}, {1, 2, 3})}}).run(),
               "a_zero_point has dims [3]: it must be a scalar, hold 2 values (one per row) or broadcast to [2, 1]");
}

TEST(ExecSpatial, MatMulIntegerZeroPointsPerBatchAndRow) {
  // a_zero_point [2, 2, 1]: one per batch and row of A [2, 2, 3]; b_zero_point [1, 2]: per column.
  constexpr int NB = 2, M = 2, K = 3, N = 2;
  const std::vector<std::int8_t> a = {1, 2, 3, 4, 5, 6, -7, -8, -9, 10, 11, 12}, b = {3, -1, 4, 1, -5, 9};
  const std::vector<std::int8_t> za = {1, -1, 2, -2}, zb = {5, -5};
  const Tensor y = OneOp(10, "MatMulInteger", {{"a", make<std::int8_t>({NB, M, K}, a)}, {"b", make<std::int8_t>({K, N}, b)}, {"za", make<std::int8_t>({NB, M, 1}, za)}, {"zb", make<std::int8_t>({1, N}, zb)}})
                       .run()
                       .value_or_throw();
  const auto got = y.to_vector<std::int32_t>();
  for (int o = 0; o < NB; ++o)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        int want = 0;
        for (int k = 0; k < K; ++k) want += (a[static_cast<std::size_t>((o * M + i) * K + k)] - za[static_cast<std::size_t>(o * M + i)]) * (b[static_cast<std::size_t>(k * N + j)] - zb[static_cast<std::size_t>(j)]);
        EXPECT_EQ(got[static_cast<std::size_t>((o * M + i) * N + j)], want) << o << i << j;
      }
}

TEST(ExecSpatial, QLinearMatMulPerRowAndColumnScalesMatchALoop) {
  constexpr int M = 2, K = 3, N = 2;
  const std::vector<std::int8_t> a = {10, -20, 30, 127, -128, 5}, b = {1, -2, 3, 4, -5, 6};
  const std::vector<float> sa = {0.05f, 0.2f}, sb = {0.1f, 0.03f};
  const std::vector<std::int8_t> za = {1, -3}, zb = {0, 2};
  const float ys = 0.02f;
  const std::uint8_t yz = 100;
  const Tensor y = OneOp(21, "QLinearMatMul",
                         {{"a", make<std::int8_t>({M, K}, a)}, {"sa", floats({M}, sa)}, {"za", make<std::int8_t>({M}, za)},
                          {"b", make<std::int8_t>({K, N}, b)}, {"sb", floats({N}, sb)}, {"zb", make<std::int8_t>({N}, zb)},
                          {"ys", floats({}, {ys})}, {"yz", make<std::uint8_t>({}, {yz})}})
                       .run()
                       .value_or_throw();
  ASSERT_EQ(y.dtype(), DType::kU8);
  const auto got = y.to_vector<std::uint8_t>();
  int saturated = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      long acc = 0;
      for (int k = 0; k < K; ++k) acc += (a[static_cast<std::size_t>(i * K + k)] - za[static_cast<std::size_t>(i)]) * (b[static_cast<std::size_t>(k * N + j)] - zb[static_cast<std::size_t>(j)]);
      const float mult = sa[static_cast<std::size_t>(i)] * sb[static_cast<std::size_t>(j)] / ys;
      const double v = std::nearbyint(static_cast<double>(acc) * mult) + yz;
      saturated += v < 0 || v > 255;
      EXPECT_EQ(got[static_cast<std::size_t>(i * N + j)], static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0))) << i << "," << j << ": " << v;
    }
  EXPECT_GT(saturated, 0);  // row 1 falls below u8's range
  expect_error(OneOp(21, "QLinearMatMul",
                     {{"a", make<std::int8_t>({M, K}, a)}, {"sa", floats({K}, {1, 1, 1})}, {"za", make<std::int8_t>({}, {0})},
                      {"b", make<std::int8_t>({K, N}, b)}, {"sb", floats({}, {1})}, {"zb", make<std::int8_t>({}, {0})},
                      {"ys", floats({}, {1})}, {"yz", make<std::uint8_t>({}, {0})}})
                   .run(),
               "a_scale has dims [3]");
}

}  // namespace
}  // namespace tessera::exec
