// A whole LeNet's gradients against PyTorch's (Debian's python3-torch runs
// tests/train/torch_grads.py on the same weights and batch): the loss and every parameter's
// gradient to 1e-4 of the gradient's largest magnitude. Skipped with a message where
// /usr/bin/python3 has no torch.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/core/npy.hpp>
#include <tessera/session.hpp>
#include <tessera/train.hpp>

#include "test_util.hpp"

namespace tessera::train {
namespace {

TEST(TrainOracle, LeNetGradientsMatchPyTorch) {
  const char* root = std::getenv("TESSERA_TEST_DATA");
  if (!root) GTEST_SKIP() << "TESSERA_TEST_DATA is not set (ctest sets it to tests/)";
  if (std::system("/usr/bin/python3 -c 'import torch, numpy' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (Debian's python3-torch, python3-numpy)";
  testing::TempDir dir;
  const auto npy = [&](const char* stem, std::size_t k) {  // p3.npy, g3.npy (appended: GCC 12 warns wrongly on "p" + string)
    std::string name = stem;
    name += std::to_string(k);
    name += ".npy";
    return dir.file(name);
  };
  // Caffe's LeNet, as `tessera train --model lenet` builds it, with random biases too.
  NetBuilder b({1, 28, 28}, 42);
  graph::Model m = b.conv(20, 5).relu().max_pool(2).conv(50, 5).relu().max_pool(2).flatten().linear(500).relu().linear(10).build().value_or_throw();
  std::ofstream(dir.file("layers.txt")) << "conv 1 0\nrelu\nmaxpool 2\nconv 1 0\nrelu\nmaxpool 2\nflatten\nlinear\nrelu\nlinear\n";
  std::vector<exec::NamedTensor> in;
  for (std::size_t k = 0; k < b.parameters().size(); ++k) {
    graph::Value& v = m.graph.values[static_cast<std::size_t>(m.graph.find(b.parameters()[k]))];
    Tensor t = exec::tensor_from_constant(*v.constant, v.name).value_or_throw();
    if (k % 2 == 1) {  // a bias: zero from the builder
      const std::vector<float> r = testing::random_floats(static_cast<std::size_t>(t.numel()), 7u + static_cast<unsigned>(k));
      for (std::size_t i = 0; i < r.size(); ++i) t.data<float>()[i] = 0.1f * r[i];
    }
    ASSERT_TRUE(write_npy(npy("p", k), t).is_ok());
    in.push_back({v.name, t});
  }
  // A batch of 64: Fashion-MNIST's first images where installed, else noise.
  Dataset batch;
  if (Result<Dataset> fm = fashion_mnist(true); fm.is_ok()) {
    std::vector<std::int64_t> order(64);
    for (std::int64_t i = 0; i < 64; ++i) order[static_cast<std::size_t>(i)] = i;
    batch = gather_batch(fm.value(), order, 0, 64).value_or_throw();
  } else {
    std::vector<float> x = testing::random_floats(64 * 28 * 28, 3);
    for (float& v : x) v = std::abs(v);
    std::vector<std::int64_t> y(64);
    for (std::int64_t i = 0; i < 64; ++i) y[static_cast<std::size_t>(i)] = (i * 7) % 10;
    batch = Dataset{Tensor::from_vector<float>(Shape({64, 1, 28, 28}), x).value_or_throw(), Tensor::from_vector<std::int64_t>(Shape({64}), y).value_or_throw()};
  }
  ASSERT_TRUE(write_npy(dir.file("images.npy"), batch.images).is_ok());
  ASSERT_TRUE(write_npy(dir.file("labels.npy"), batch.labels).is_ok());
  const std::string cmd = "/usr/bin/python3 " + std::string(root) + "/train/torch_grads.py " + dir.path().string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  exec::Session s = exec::Session::create(differentiate(m, "loss", b.parameters()).value_or_throw()).value_or_throw();
  in.push_back({"images", batch.images});
  in.push_back({"labels", batch.labels});
  const std::vector<exec::NamedTensor> out = s.run(in).value_or_throw();
  const float loss = out[0].tensor.to_vector<float>()[0], want_loss = read_npy(dir.file("loss.npy")).value_or_throw().to_vector<float>()[0];
  EXPECT_NEAR(loss, want_loss, 1e-5 * std::abs(want_loss));
  for (std::size_t k = 0; k < b.parameters().size(); ++k) {
    const Tensor want = read_npy(npy("g", k)).value_or_throw();
    const Tensor& got = out[k + 1].tensor;
    ASSERT_EQ(got.shape().dims(), want.shape().dims()) << b.parameters()[k];
    const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
    double scale = 0, worst = 0;
    for (float v : w) scale = std::max(scale, static_cast<double>(std::abs(v)));
    for (std::size_t i = 0; i < g.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(g[i] - w[i])));
    EXPECT_GT(scale, 0) << b.parameters()[k];
    EXPECT_LE(worst, 1e-4 * scale) << b.parameters()[k] << ": largest difference " << worst << " of gradients up to " << scale;
  }
}

}  // namespace
}  // namespace tessera::train
