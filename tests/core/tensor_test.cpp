#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include <tessera/core/tensor.hpp>

#include "test_util.hpp"

namespace tessera {
namespace {

using testing::value_or_fail;

Tensor iota_f32(const Shape& shape) {
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  std::iota(v.begin(), v.end(), 0.0f);
  return value_or_fail(Tensor::from_vector(shape, v));
}

TEST(Shape, BasicsAndValidation) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.to_string(), "[2, 3, 4]");
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_EQ((Shape{3, 0, 5}).numel(), 0);
  EXPECT_EQ(contiguous_strides(s), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides(Shape{3, 0, 5}), (Strides{5, 5, 1}));
  EXPECT_EQ((Shape{std::int64_t{1} << 62, 4, 0}).numel(), 0) << "zero dims must not overflow";
  auto neg = Shape::make({2, -1});
  ASSERT_FALSE(neg.is_ok());
  EXPECT_EQ(neg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(neg.status().message().find("dimension 1 is negative"), std::string::npos);
  auto huge = Shape::make({1 << 30, 1 << 30, 1 << 30});
  ASSERT_FALSE(huge.is_ok());
  EXPECT_NE(huge.status().message().find("2^62"), std::string::npos);
}

TEST(Tensor, NewTensorsAreContiguousAndAligned) {
  for (DType t : kAllDTypes) {
    Tensor x = value_or_fail(Tensor::zeros({3, 5}, t));
    EXPECT_TRUE(x.is_contiguous());
    EXPECT_EQ(x.nbytes(), 15 * dtype_size(t));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(x.data()) % kDefaultAlignment, 0u);
    const auto* bytes = static_cast<const unsigned char*>(x.data());
    for (std::size_t i = 0; i < x.nbytes(); ++i) ASSERT_EQ(bytes[i], 0);
  }
  Tensor empty = value_or_fail(Tensor::empty({0, 4}, DType::kF32));
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_TRUE(value_or_fail(Tensor::empty({2, 0, 3}, DType::kF32)).is_contiguous());
  EXPECT_TRUE(value_or_fail(value_or_fail(Tensor::empty({2, 0, 3}, DType::kF32)).transpose(0, 2))
                  .is_contiguous());
  EXPECT_TRUE(empty.to_vector<float>().empty());
  Tensor scalar = value_or_fail(Tensor::from_vector<double>({}, {2.5}));
  EXPECT_EQ(scalar.to_vector<double>(), std::vector<double>{2.5});
}

TEST(Tensor, FromVectorChecksCount) {
  auto r = Tensor::from_vector<float>({2, 2}, {1, 2, 3});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("3 values for shape [2, 2]"), std::string::npos);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor x = iota_f32({3, 4});
  Tensor row = value_or_fail(x.select(0, 1));
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
  row.at<float>({2}) = 100;
  EXPECT_EQ(x.at<float>({1, 2}), 100);
  Tensor col = value_or_fail(x.select(1, 3));
  EXPECT_EQ(col.to_vector<float>(), (std::vector<float>{3, 7, 11}));
  EXPECT_FALSE(col.is_contiguous());
  EXPECT_EQ(col.buffer(), x.buffer());
}

TEST(Tensor, SliceWithPositiveAndNegativeSteps) {
  Tensor x = iota_f32({10});
  EXPECT_EQ(value_or_fail(x.slice(0, 2, 9, 3)).to_vector<float>(), (std::vector<float>{2, 5, 8}));
  EXPECT_EQ(value_or_fail(x.slice(0, 9, -1, -4)).to_vector<float>(), (std::vector<float>{9, 5, 1}));
  EXPECT_EQ(value_or_fail(x.slice(0, 4, 4)).numel(), 0);
  EXPECT_EQ(value_or_fail(x.slice(0, 10, 10)).numel(), 0);
  Tensor y = iota_f32({4, 6});
  Tensor s = value_or_fail(value_or_fail(y.slice(1, 5, 0, -2)).slice(0, 1, 3));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{11, 9, 7, 17, 15, 13}));
  for (auto [start, stop, step] :
       {std::tuple{-1, 3, 1}, {0, 11, 1}, {5, 3, 1}, {0, 3, 0}, {10, 0, -1}, {3, 5, -1}}) {
    auto r = x.slice(0, start, stop, step);
    EXPECT_FALSE(r.is_ok()) << start << " " << stop << " " << step;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(x.slice(1, 0, 1).is_ok());
}

TEST(Tensor, PermuteTransposeReshape) {
  Tensor x = iota_f32({2, 3, 4});
  Tensor p = value_or_fail(x.permute({2, 0, 1}));
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.at<float>({3, 1, 2}), x.at<float>({1, 2, 3}));
  EXPECT_FALSE(p.is_contiguous());
  auto bad = x.permute({0, 0, 1});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("permutation"), std::string::npos);
  Tensor t = value_or_fail(x.transpose(0, 2));
  EXPECT_EQ(t.at<float>({3, 2, 1}), x.at<float>({1, 2, 3}));
  EXPECT_EQ(value_or_fail(x.reshape({6, 4})).at<float>({5, 3}), 23);
  EXPECT_EQ(p.reshape({24}).status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(x.reshape({5, 5}).status().code(), StatusCode::kInvalidArgument);
  Tensor c = value_or_fail(p.contiguous());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.buffer(), x.buffer());
  EXPECT_EQ(c.to_vector<float>(), p.to_vector<float>());
  EXPECT_EQ(value_or_fail(x.contiguous()).buffer(), x.buffer());
}

TEST(Tensor, ViewOfChecksBounds) {
  Tensor x = iota_f32({16});
  const auto& buf = x.buffer();
  Tensor v = value_or_fail(Tensor::view_of(buf, 4, DType::kF32, {3, 2}, {4, 2}));
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  Tensor rev = value_or_fail(Tensor::view_of(buf, 15 * 4, DType::kF32, {4}, {-5}));
  EXPECT_EQ(rev.to_vector<float>(), (std::vector<float>{15, 10, 5, 0}));
  Tensor bcast = value_or_fail(Tensor::view_of(buf, 0, DType::kF32, {3, 2}, {0, 1}));
  EXPECT_EQ(bcast.to_vector<float>(), (std::vector<float>{0, 1, 0, 1, 0, 1}));
  EXPECT_FALSE(Tensor::view_of(buf, 4, DType::kF32, {16}, {1}).is_ok());
  EXPECT_FALSE(Tensor::view_of(buf, 0, DType::kF32, {2}, {-1}).is_ok());
  EXPECT_FALSE(Tensor::view_of(buf, 0, DType::kF32, {2}, {1, 1}).is_ok());
  EXPECT_FALSE(Tensor::view_of(buf, 0, DType::kF32, {3}, {INT64_MAX / 2}).is_ok());
  EXPECT_FALSE(Tensor::view_of(nullptr, 0, DType::kF32, {1}, {1}).is_ok());
  EXPECT_TRUE(Tensor::view_of(buf, 64, DType::kF32, {0}, {1}).is_ok());
}

TEST(Tensor, CopyFromStridedAndOverlap) {
  Tensor x = iota_f32({4, 4});
  Tensor dst = value_or_fail(Tensor::zeros({4, 4}, DType::kF32));
  Tensor dst_t = value_or_fail(dst.transpose(0, 1));
  ASSERT_TRUE(dst_t.copy_from(x).is_ok());
  EXPECT_EQ(dst.at<float>({3, 1}), x.at<float>({1, 3}));
  // Overlapping source and destination in one buffer are refused; identical views are a no-op.
  Tensor a = value_or_fail(x.slice(0, 0, 3));
  Tensor b = value_or_fail(x.slice(0, 1, 4));
  EXPECT_EQ(a.copy_from(b).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(a.copy_from(a).is_ok());
  EXPECT_EQ(dst.copy_from(iota_f32({2, 8})).code(), StatusCode::kInvalidArgument);
  Tensor disjoint_dst = value_or_fail(x.slice(0, 0, 2));
  Tensor disjoint_src = value_or_fail(x.slice(0, 2, 4));
  ASSERT_TRUE(disjoint_dst.copy_from(disjoint_src).is_ok());
  EXPECT_EQ(x.at<float>({0, 0}), 8);
}

TEST(Tensor, BitwiseEqualComparesNaNPayloads) {
  Tensor a = value_or_fail(Tensor::from_vector<float>({2}, {1.0f, NAN}));
  Tensor b = value_or_fail(a.clone());
  EXPECT_TRUE(bitwise_equal(a, b));
  b.at<float>({1}) = -NAN;
  EXPECT_FALSE(bitwise_equal(a, b));
  EXPECT_FALSE(bitwise_equal(a, iota_f32({2})));
}

TEST(Tensor, FillAndToString) {
  Tensor x = value_or_fail(Tensor::empty({2, 3}, DType::kI32));
  value_or_fail(x.slice(1, 0, 3, 2)).fill<std::int32_t>(7);
  value_or_fail(x.select(1, 1)).fill<std::int32_t>(-1);
  EXPECT_EQ(x.to_vector<std::int32_t>(), (std::vector<std::int32_t>{7, -1, 7, 7, -1, 7}));
  EXPECT_EQ(x.to_string(), "Tensor(i32, [2, 3], strides [3, 1], cpu:0)");
  EXPECT_EQ(Tensor().to_string(), "Tensor(undefined)");
  EXPECT_EQ(Tensor().contiguous().status().code(), StatusCode::kInvalidArgument);
}

TEST(DType, NamesSizesAndClasses) {
  for (DType t : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_FALSE(parse_dtype("f128").has_value());
  EXPECT_EQ(dtype_size(DType::kC128), 16u);
  EXPECT_EQ(dtype_size(DType::kBF16), 2u);
  EXPECT_TRUE(is_floating(DType::kBF16));
  EXPECT_FALSE(is_floating(DType::kC64));
  EXPECT_TRUE(is_complex(DType::kC64));
  EXPECT_TRUE(is_integer(DType::kU8));
  EXPECT_FALSE(is_integer(DType::kBool));
}

}  // namespace
}  // namespace tessera
