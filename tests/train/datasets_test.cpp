// Datasets beyond IDX: .npy pairs and CSV tables (values, headers, label columns, every error
// named by file, line and column), a folder holding either, seeded augmentation (crops and flips
// checked pixel by pixel, the same per sample however the batch is cut), and fit with
// augmentation giving the same bits with and without the prefetch thread.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/core/npy.hpp>
#include <tessera/train.hpp>

#include "tasks.hpp"
#include "test_util.hpp"

namespace tessera::train {
namespace {

using testing::TempDir;

template <class T>
void npy(const std::string& path, const std::vector<std::int64_t>& dims, const std::vector<T>& v) {
  ASSERT_TRUE(write_npy(path, Tensor::from_vector<T>(Shape(dims), v).value_or_throw()).is_ok());
}

std::string error_of(const Result<Dataset>& r) { return r.is_ok() ? "(no error)" : r.status().message(); }

TEST(TrainDatasets, NpyPairs) {
  TempDir dir;
  std::vector<std::uint8_t> pixels(5 * 2 * 2);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 12);
  npy<std::uint8_t>(dir.file("x.npy"), {5, 2, 2}, pixels);
  npy<std::int32_t>(dir.file("y.npy"), {5}, {3, 1, 4, 1, 5});
  const Dataset d = read_npy_dataset(dir.file("x.npy"), dir.file("y.npy")).value_or_throw();
  EXPECT_EQ(d.images.shape().dims(), (std::vector<std::int64_t>{5, 1, 2, 2}));  // a channel axis added
  EXPECT_EQ(d.images.to_vector<float>()[3], 36.0f / 255.0f);
  EXPECT_EQ(d.labels.to_vector<std::int64_t>(), (std::vector<std::int64_t>{3, 1, 4, 1, 5}));
  npy<double>(dir.file("f.npy"), {2, 3}, {1, 2, 3, 4, 5, 6.5});  // feature rows stay [N, F]
  npy<std::int64_t>(dir.file("y2.npy"), {2}, {0, 1});
  const Dataset f = read_npy_dataset(dir.file("f.npy"), dir.file("y2.npy")).value_or_throw();
  EXPECT_EQ(f.images.shape().dims(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(f.images.to_vector<float>()[5], 6.5f);

  const auto err = [&](const char* x, const char* y) { return error_of(read_npy_dataset(dir.file(x), dir.file(y))); };
  EXPECT_NE(err("x.npy", "y2.npy").find("holds 5 samples, '" + dir.file("y2.npy") + "' 2 labels"), std::string::npos) << err("x.npy", "y2.npy");
  npy<std::int64_t>(dir.file("neg.npy"), {5}, {0, 1, -2, 0, 0});
  EXPECT_NE(err("x.npy", "neg.npy").find("label 2 is -2"), std::string::npos) << err("x.npy", "neg.npy");
  npy<float>(dir.file("yf.npy"), {5}, {0, 1, 2, 3, 4});
  EXPECT_NE(err("x.npy", "yf.npy").find("labels of f32 (an integer type)"), std::string::npos) << err("x.npy", "yf.npy");
  npy<std::int64_t>(dir.file("y2d.npy"), {5, 1}, {0, 1, 2, 3, 4});
  EXPECT_NE(err("x.npy", "y2d.npy").find("labels must be one axis"), std::string::npos);
  npy<std::int64_t>(dir.file("xi.npy"), {5, 1}, {0, 1, 2, 3, 4});
  EXPECT_NE(err("xi.npy", "y.npy").find("samples of i64 (u8, f32 or f64)"), std::string::npos) << err("xi.npy", "y.npy");
  npy<float>(dir.file("x1.npy"), {5}, {0, 1, 2, 3, 4});
  EXPECT_NE(err("x1.npy", "y.npy").find("a leading sample axis and at least one more"), std::string::npos);
  EXPECT_NE(err("none.npy", "y.npy").find("none.npy"), std::string::npos);
}

TEST(TrainDatasets, CsvTables) {
  TempDir dir;
  const auto csv = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.file(name)) << text;
    return dir.file(name);
  };
  const Dataset d = read_csv(csv("a.csv", "f1,f2,label\r\n0.5, -1 ,2\r\n\r\n+3,4e-1,0\n")).value_or_throw();
  EXPECT_EQ(d.images.shape().dims(), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(d.images.to_vector<float>(), (std::vector<float>{0.5f, -1.0f, 3.0f, 0.4f}));
  EXPECT_EQ(d.labels.to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 0}));
  const Dataset first = read_csv(csv("b.csv", "7,1,2\n3,4,5\n"), 0).value_or_throw();  // no header; the label first
  EXPECT_EQ(first.labels.to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 3}));
  EXPECT_EQ(first.images.to_vector<float>(), (std::vector<float>{1, 2, 4, 5}));

  const auto err = [&](const std::string& text, int label = -1) { return error_of(read_csv(csv("e.csv", text), label)); };
  EXPECT_NE(err("1,2,3\n4,5\n").find("e.csv' line 2: 2 fields, the first row has 3"), std::string::npos) << err("1,2,3\n4,5\n");
  EXPECT_NE(err("x,y\n1,abc\n").find("line 2, column 2: 'abc' is not a number"), std::string::npos) << err("x,y\n1,abc\n");
  EXPECT_NE(err("1,1.5\n").find("line 1, column 2: label 1.5 is not a class number"), std::string::npos) << err("1,1.5\n");
  EXPECT_NE(err("1,-1\n").find("label -1 is not a class number"), std::string::npos);
  EXPECT_NE(err("a,b\n").find("holds no rows"), std::string::npos);
  EXPECT_NE(err("1,2\n", 5).find("label column 5 of 2 columns"), std::string::npos);
  EXPECT_NE(err("1\n2\n").find("one column"), std::string::npos);
  EXPECT_NE(error_of(read_csv(dir.file("missing.csv"))).find("is not a file"), std::string::npos);
}

TEST(TrainDatasets, AFolderOfAnyForm) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("n"));
  npy<float>(dir.file("n/train_images.npy"), {2, 1, 2, 2}, std::vector<float>(8, 0.5f));
  npy<std::int64_t>(dir.file("n/train_labels.npy"), {2}, {1, 0});
  EXPECT_EQ(load_dataset(dir.file("n"), true).value_or_throw().size(), 2);
  EXPECT_NE(error_of(load_dataset(dir.file("n"), false)).find("holds none of test_images.npy + test_labels.npy, test.csv"), std::string::npos)
      << error_of(load_dataset(dir.file("n"), false));
  std::ofstream(dir.file("n/test.csv")) << "1,2,0\n3,4,1\n5,6,1\n";
  EXPECT_EQ(load_dataset(dir.file("n"), false).value_or_throw().size(), 3);
  npy<float>(dir.file("n/test_images.npy"), {1, 2}, {1, 2});  // a half pair is an error, not a fall-back
  EXPECT_NE(error_of(load_dataset(dir.file("n"), false)).find("test_labels.npy"), std::string::npos);
}

// A batch of n distinct images [n, 2, 4, 5]: pixel value = 1000 sample + 100 channel + 10 y + x + 1.
Dataset numbered(std::int64_t n) {
  std::vector<float> x;
  for (std::int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 4; ++y)
        for (int xx = 0; xx < 5; ++xx) x.push_back(static_cast<float>(1000 * i + 100 * c + 10 * y + xx + 1));
  return Dataset{Tensor::from_vector<float>(Shape({n, 2, 4, 5}), x).value_or_throw(), Tensor::zeros(Shape({n}), DType::kI64).value_or_throw()};
}

TEST(TrainDatasets, AugmentationCropsAndFlipsEachSampleByItsId) {
  const std::int64_t n = 64;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = 100 + i;
  Dataset same = numbered(n);
  ASSERT_TRUE(augment(same, ids, Augmentation{}, 1).is_ok());  // nothing asked: nothing changed
  EXPECT_EQ(same.images.to_vector<float>(), numbered(n).images.to_vector<float>());

  Dataset d = numbered(n);
  const Augmentation a{2, true};
  ASSERT_TRUE(augment(d, ids, a, 9).is_ok());
  const std::vector<float> out = d.images.to_vector<float>();
  int flipped = 0, shifted = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    // Find the (dy, dx, flip) that explains the sample: every pixel the shifted (and mirrored)
    // source or zero outside it.
    int found = 0;
    for (int flip = 0; flip < 2; ++flip)
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) {
          bool all = true;
          for (int c = 0; c < 2 && all; ++c)
            for (int y = 0; y < 4 && all; ++y)
              for (int x = 0; x < 5 && all; ++x) {
                const int sy = y + dy, sx0 = x + dx, sx = flip ? 4 - sx0 : sx0;
                const float want = sy >= 0 && sy < 4 && sx0 >= 0 && sx0 < 5 ? static_cast<float>(1000 * i + 100 * c + 10 * sy + sx + 1) : 0.0f;
                all = out[static_cast<std::size_t>(((i * 2 + c) * 4 + y) * 5 + x)] == want;
              }
          if (all) {
            ++found;
            flipped += flip;
            shifted += dy != 0 || dx != 0;
          }
        }
    EXPECT_EQ(found, 1) << "sample " << i;
  }
  EXPECT_GT(flipped, 16);  // about half of 64
  EXPECT_LT(flipped, 48);
  EXPECT_GT(shifted, 40);  // 24 of 25 offsets move the image
  // The same sample gets the same choices in any batch: the second half alone, reversed.
  Dataset part = numbered(n);
  std::vector<std::int64_t> rev(ids.rbegin(), ids.rend());
  ASSERT_TRUE(augment(part, rev, a, 9).is_ok());
  const std::vector<float> p = part.images.to_vector<float>();
  // part's sample j (id rev[j] = ids[n - 1 - j]) holds sample j's pixels moved the way id ids[n-1-j] moves them;
  // compare the positions of zeros (the crop's border), which depend only on the choices.
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t i = n - 1 - j;
    for (std::int64_t k = 0; k < 40; ++k)
      ASSERT_EQ(p[static_cast<std::size_t>(j * 40 + k)] == 0.0f, out[static_cast<std::size_t>(i * 40 + k)] == 0.0f) << "sample id " << ids[static_cast<std::size_t>(i)];
  }
  Dataset other = numbered(n);
  ASSERT_TRUE(augment(other, ids, a, 10).is_ok());
  EXPECT_NE(other.images.to_vector<float>(), out);  // another seed, other choices
  Dataset flat{Tensor::zeros(Shape({2, 3}), DType::kF32).value_or_throw(), Tensor::zeros(Shape({2}), DType::kI64).value_or_throw()};
  EXPECT_NE(augment(flat, std::vector<std::int64_t>{0, 1}, a, 1).message().find("images [N, C, H, W] are needed"), std::string::npos);
  EXPECT_NE(augment(d, std::vector<std::int64_t>{0}, a, 1).message().find("1 sample ids for a batch of 64"), std::string::npos);
  EXPECT_NE(augment(d, ids, Augmentation{-1, false}, 1).message().find("crop padding -1 is negative"), std::string::npos);
}

// The prefetch thread changes when batches are made, not what they hold.
TEST(TrainDatasets, FitWithAugmentationGivesTheSameBitsWithOrWithoutPrefetch) {
  NetBuilder b({1, 8, 8}, 2);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(4).build().value_or_throw();
  const Dataset train_set = quarters(128, 1), test_set = quarters(32, 2);
  TrainOptions o = three_adamw_epochs();
  o.augmentation = Augmentation{1, false};
  const TrainResult with = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  o.prefetch = false;
  const TrainResult without = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  expect_same_parameters(with, without, b.parameters());
  o.augmentation = Augmentation{};
  const TrainResult plain = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  EXPECT_NE(plain.epochs[0].mean_loss, with.epochs[0].mean_loss);  // the crops changed the batches
}

}  // namespace
}  // namespace tessera::train
