// The training front end around autodiff: IDX data (the real Fashion-MNIST from Debian's
// dataset-fashion-mnist, and broken files), seeded orders and batches, the optimisers against
// their formulas written out here, NetBuilder's models and errors, and fit(): learning, the
// same bits from the same seed, a diverging loss stopped with its place, an exported model.
#include <cmath>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/session.hpp>
#include <tessera/train.hpp>

#include "tasks.hpp"
#include "test_util.hpp"

namespace tessera::train {
namespace {

using testing::TempDir;

void write_bytes(const std::string& path, const std::vector<unsigned char>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// An IDX file of u8 data: magic 0x0800 | rank, big-endian dims, then the bytes.
std::vector<unsigned char> idx(const std::vector<std::uint32_t>& dims, const std::vector<unsigned char>& data) {
  std::vector<unsigned char> b = {0, 0, 0x08, static_cast<unsigned char>(dims.size())};
  for (std::uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(d >> s));
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

TEST(TrainData, ReadsIdxFilesAndNamesWhatIsWrong) {
  TempDir dir;
  std::vector<unsigned char> pixels(3 * 2 * 2);
  std::iota(pixels.begin(), pixels.end(), 0);
  pixels[0] = 255;
  write_bytes(dir.file("img"), idx({3, 2, 2}, pixels));
  write_bytes(dir.file("lab"), idx({3}, {7, 0, 9}));
  const Dataset d = read_idx(dir.file("img"), dir.file("lab")).value_or_throw();
  EXPECT_EQ(d.images.shape().dims(), (std::vector<std::int64_t>{3, 1, 2, 2}));
  EXPECT_EQ(d.images.to_vector<float>()[0], 1.0f);
  EXPECT_EQ(d.images.to_vector<float>()[5], 5.0f / 255.0f);
  EXPECT_EQ(d.labels.to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 0, 9}));
  const auto error = [&](const std::string& images, const std::string& labels) { return read_idx(dir.file(images), dir.file(labels)).status().message(); };
  std::vector<unsigned char> cut = idx({3, 2, 2}, pixels);
  cut.pop_back();
  write_bytes(dir.file("short"), cut);
  EXPECT_NE(error("short", "lab").find("the header promises 12 bytes of data, the file holds 11"), std::string::npos) << error("short", "lab");
  write_bytes(dir.file("magic"), idx({12}, pixels));  // labels where images belong
  EXPECT_NE(error("magic", "lab").find("is not that of u8 data of rank 3"), std::string::npos) << error("magic", "lab");
  write_bytes(dir.file("two"), idx({2}, {1, 2}));
  EXPECT_NE(error("img", "two").find("holds 3 images"), std::string::npos) << error("img", "two");
  EXPECT_NE(error("none", "lab").find("is not a file"), std::string::npos);
  write_bytes(dir.file("tiny"), {0, 0});
  EXPECT_NE(error("tiny", "lab").find("shorter than an IDX header"), std::string::npos);
}

TEST(TrainData, FashionMnistFromDebiansPackage) {
  const Result<Dataset> test = fashion_mnist(false);
  if (!test.is_ok()) GTEST_SKIP() << test.status().message();
  EXPECT_EQ(test->size(), 10000);
  EXPECT_EQ(test->images.shape().dims(), (std::vector<std::int64_t>{10000, 1, 28, 28}));
  const std::vector<std::int64_t> labels = test->labels.to_vector<std::int64_t>();
  EXPECT_EQ(labels[0], 9);  // the first test image is an ankle boot
  EXPECT_EQ(std::set<std::int64_t>(labels.begin(), labels.end()).size(), 10u);
  for (float v : test->images.to_vector<float>()) ASSERT_TRUE(v >= 0 && v <= 1);
}

TEST(TrainData, SeededOrdersAndBatches) {
  const std::vector<std::int64_t> a = shuffled(1000, 5), b = shuffled(1000, 5), c = shuffled(1000, 6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<std::int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i);
  EXPECT_TRUE(shuffled(0, 1).empty());
  Dataset d;
  d.images = Tensor::from_vector<float>(Shape({3, 1, 1, 2}), {0, 1, 2, 3, 4, 5}).value_or_throw();
  d.labels = Tensor::from_vector<std::int64_t>(Shape({3}), {10, 11, 12}).value_or_throw();
  const Dataset batch = gather_batch(d, {2, 0, 1}, 0, 2).value_or_throw();
  EXPECT_EQ(batch.images.to_vector<float>(), (std::vector<float>{4, 5, 0, 1}));
  EXPECT_EQ(batch.labels.to_vector<std::int64_t>(), (std::vector<std::int64_t>{12, 10}));
  EXPECT_FALSE(gather_batch(d, {2, 0, 1}, 2, 2).is_ok());
  EXPECT_FALSE(gather_batch(d, {5}, 0, 1).is_ok());
}

// Three steps of each optimiser against its formula in double precision.
TEST(TrainOptimizers, FollowTheirFormulas) {
  const std::vector<float> p0 = {0.5f, -1.0f, 2.0f}, g = {0.1f, -0.3f, 0.2f};
  for (const char* kind : {"sgd", "sgd-momentum", "sgd-nesterov", "adamw"}) {
    SCOPED_TRACE(kind);
    OptimizerOptions o;
    const std::string k = kind;
    o.kind = k == "adamw" ? "adamw" : "sgd";
    o.lr = 0.1f;
    o.weight_decay = 0.01f;
    if (k != "sgd" && k != "adamw") o.momentum = 0.9f;
    o.nesterov = k == "sgd-nesterov";
    Optimizer opt = Optimizer::create(o).value_or_throw();
    std::vector<Tensor> p = {Tensor::from_vector<float>(Shape({3}), p0).value_or_throw()};
    const std::vector<Tensor> gr = {Tensor::from_vector<float>(Shape({3}), g).value_or_throw()};
    std::vector<double> want(p0.begin(), p0.end()), m(3, 0), v(3, 0);
    for (int t = 1; t <= 3; ++t) {
      ASSERT_TRUE(opt.step(p, gr).is_ok());
      for (std::size_t i = 0; i < 3; ++i) {
        double& w = want[i];
        if (o.kind == "sgd") {
          const double gi = g[i] + 0.01 * w;
          m[i] = t == 1 ? gi : 0.9 * m[i] + gi;
          w -= 0.1 * (o.momentum == 0 ? gi : o.nesterov ? gi + 0.9 * m[i] : m[i]);
        } else {
          w *= 1 - 0.1 * 0.01;
          m[i] = 0.9 * m[i] + 0.1 * g[i];
          v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
          w -= 0.1 * (m[i] / (1 - std::pow(0.9, t))) / (std::sqrt(v[i] / (1 - std::pow(0.999, t))) + 1e-8);
        }
      }
    }
    const std::vector<float> got = p[0].to_vector<float>();
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  }
  OptimizerOptions bad;
  bad.kind = "lbfgs";
  EXPECT_FALSE(Optimizer::create(bad).is_ok());
  bad.kind = "sgd";
  bad.nesterov = true;
  EXPECT_FALSE(Optimizer::create(bad).is_ok());
  Optimizer opt = Optimizer::create(OptimizerOptions{}).value_or_throw();
  std::vector<Tensor> p = {Tensor::from_vector<float>(Shape({2}), {1, 2}).value_or_throw()};
  EXPECT_FALSE(opt.step(p, {Tensor::from_vector<float>(Shape({3}), {1, 2, 3}).value_or_throw()}).is_ok());
  EXPECT_FALSE(opt.step(p, {}).is_ok());
}

TEST(TrainOptimizers, SchedulesAndClipping) {
  LrSchedule s;
  EXPECT_EQ(scheduled_lr(s, 0.1f, 57, 10, 3), 0.1f);
  s.kind = "step";
  s.step_size = 2;
  s.gamma = 0.5f;
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 19, 10, 6), 0.1f);    // epoch 1
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 20, 10, 6), 0.05f);   // epoch 2
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 45, 10, 6), 0.025f);  // epoch 4
  s = LrSchedule{};
  s.kind = "cosine";
  s.min_lr = 0.01f;
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 0, 10, 2), 0.1f);
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 10, 10, 2), 0.055f);  // half way
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 20, 10, 2), 0.01f);
  s.warmup = 4;
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 0, 10, 2), 0.025f);
  EXPECT_FLOAT_EQ(scheduled_lr(s, 0.1f, 3, 10, 2), scheduled_lr(LrSchedule{"cosine", 0, 1, 0.1f, 0.01f}, 0.1f, 3, 10, 2));
  EXPECT_FALSE(check_schedule(LrSchedule{"linear"}).is_ok());
  EXPECT_FALSE(check_schedule(LrSchedule{"step", 0, 0}).is_ok());
  std::vector<Tensor> g = {Tensor::from_vector<float>(Shape({2}), {3, 0}).value_or_throw(), Tensor::from_vector<float>(Shape({1}), {4}).value_or_throw()};
  EXPECT_DOUBLE_EQ(clip_grad_norm(g, 10).value_or_throw(), 5.0);  // below the bound: unchanged
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{3, 0}));
  EXPECT_DOUBLE_EQ(clip_grad_norm(g, 1).value_or_throw(), 5.0);
  EXPECT_NEAR(g[0].to_vector<float>()[0], 0.6f, 1e-6f);
  EXPECT_NEAR(g[1].to_vector<float>()[0], 0.8f, 1e-6f);
  EXPECT_FALSE(clip_grad_norm(g, 0).is_ok());
}

TEST(TrainNetBuilder, BuildsClassifiersAndRefusesWhatDoesNotFit) {
  NetBuilder b({1, 8, 8}, 3);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(5).build().value_or_throw();
  EXPECT_EQ(b.parameters(), (std::vector<std::string>{"layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias"}));
  std::vector<std::string> outs;
  for (graph::ValueId v : m.graph.outputs) outs.push_back(m.graph.values[static_cast<std::size_t>(v)].name);
  EXPECT_EQ(outs, (std::vector<std::string>{"loss", "scores"}));
  const std::string scores = graph::to_text(m.graph.values[static_cast<std::size_t>(m.graph.find("scores"))].type);
  EXPECT_EQ(scores.substr(scores.size() - 3), ",5]") << scores;
  const graph::Model again = NetBuilder({1, 8, 8}, 3).conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(5).build().value_or_throw();
  EXPECT_EQ(graph::to_text(m), graph::to_text(again));  // the same seed, the same weights
  EXPECT_NE(NetBuilder({1, 8, 8}, 3).linear(5).build().status().message().find("needs a flat input"), std::string::npos);
  EXPECT_NE(NetBuilder({1, 4, 4}, 3).conv(2, 7).build().status().message().find("larger than its padded input"), std::string::npos);
  EXPECT_NE(NetBuilder({1, 4, 4}, 3).conv(2, 3).build().status().message().find("flat scores"), std::string::npos);
}

// Residual blocks: an identity skip where the block keeps channels and size, a 1x1 projection
// where it changes them; the model learns and its gradients are those autodiff checks by
// finite differences (Conv, Relu, Add, GlobalAveragePool, Flatten, Gemm); feature rows train
// through linear layers.
TEST(TrainNetBuilder, ResidualBlocksAndFeatureRows) {
  const auto count = [](const graph::Model& m, const std::string& op) {
    int n = 0;
    for (const graph::Node& node : m.graph.nodes) n += node.op_type == op;
    return n;
  };
  NetBuilder b({1, 8, 8}, 4);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().residual(4).residual(8, 2).global_avg_pool().linear(4).build().value_or_throw();
  EXPECT_EQ(count(m, "Add"), 2);
  EXPECT_EQ(count(m, "Conv"), 1 + 2 + 3);  // the stem, the identity block, the projected block
  EXPECT_EQ(count(m, "GlobalAveragePool"), 1);
  const TrainResult r = fit(m, b.parameters(), quarters(256, 1), quarters(64, 2), three_adamw_epochs()).value_or_throw();
  EXPECT_LT(r.epochs[2].mean_loss, r.epochs[0].mean_loss);
  EXPECT_GT(r.epochs[2].test_accuracy, 0.9);
  EXPECT_NE(NetBuilder({1, 8, 8}, 3).flatten().residual(4).build().status().message().find("residual after layer 0 needs an image"), std::string::npos);
  EXPECT_NE(NetBuilder({1, 8, 8}, 3).flatten().global_avg_pool().build().status().message().find("needs an image-shaped input"), std::string::npos);
  // Feature rows [F]: linear layers only.
  NetBuilder rows({6}, 1);
  EXPECT_TRUE(rows.linear(8).relu().linear(3).build().is_ok());
  EXPECT_NE(NetBuilder({6}, 1).conv(2, 3).build().status().message().find("needs an image-shaped input"), std::string::npos);
  EXPECT_NE(NetBuilder({1, 2, 3, 4}, 1).linear(2).build().status().message().find("images [C, H, W], sequences [T, F] or feature rows [F]"), std::string::npos);
  // An LSTM over the rows of the images, a layer norm, then the classes: learns too.
  NetBuilder rnn({1, 8, 8}, 9);
  const graph::Model lm = rnn.lstm(16).layer_norm().linear(4).build().value_or_throw();
  TrainOptions o = three_adamw_epochs();
  o.epochs = 4;
  const TrainResult lr = fit(lm, rnn.parameters(), quarters(256, 1), quarters(64, 2), o).value_or_throw();
  EXPECT_GT(lr.epochs[3].test_accuracy, 0.9);
  EXPECT_NE(NetBuilder({1, 8, 8}, 1).lstm(4).lstm(4).build().status().message().find("lstm after layer 1 needs images"), std::string::npos);
  EXPECT_NE(NetBuilder({1, 8, 8}, 1).layer_norm().build().status().message().find("layer_norm after layer 0 needs a flat input"), std::string::npos);
  // Activations by name; Xavier's bound for the weights made after init().
  NetBuilder act({64}, 2);
  const graph::Model am = act.linear(32).activation("Tanh").init(NetBuilder::WeightInit::kXavierUniform).linear(16).activation("Gelu").linear(4).build().value_or_throw();
  EXPECT_EQ(am.graph.nodes[1].op_type, "Tanh");
  const auto largest = [&](const std::string& name) {
    const auto& c = am.graph.values[static_cast<std::size_t>(am.graph.find(name))].constant;
    float most = 0;
    for (float v : exec::tensor_from_constant(*c, name).value_or_throw().to_vector<float>()) most = std::max(most, std::fabs(v));
    return most;
  };
  EXPECT_LE(largest("layer1.weight"), std::sqrt(6.0f / 64));  // Kaiming: fan_in 64
  EXPECT_GT(largest("layer1.weight"), std::sqrt(6.0f / 96));  // ... wider than Xavier's
  EXPECT_LE(largest("layer2.weight"), std::sqrt(6.0f / (32 + 16)));  // Xavier: fan_in 32, fan_out 16
  EXPECT_GT(largest("layer2.weight"), 0.9f * std::sqrt(6.0f / (32 + 16)));
  EXPECT_NE(NetBuilder({4}, 1).activation("Sin").build().status().message().find("activation 'Sin' after layer 0 (Celu, Elu, Gelu"), std::string::npos);
}

TEST(TrainFit, LearnsReproduciblyAndStopsOnADivergingLoss) {
  NetBuilder b({1, 8, 8}, 11);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(4).build().value_or_throw();
  const Dataset train_set = quarters(256, 1), test_set = quarters(64, 2);
  TrainOptions o = three_adamw_epochs();
  const TrainResult r = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  ASSERT_EQ(r.epochs.size(), 3u);
  EXPECT_LT(r.epochs[2].mean_loss, r.epochs[0].mean_loss);
  EXPECT_GT(r.epochs[2].test_accuracy, 0.9);
  // The same seed gives the same weights bit for bit, whatever the thread count.
  o.threads = 1;
  expect_same_parameters(r, fit(m, b.parameters(), train_set, test_set, o).value_or_throw(), b.parameters());
  // The trained model runs as an ordinary model and scores as fit measured.
  exec::Session s = exec::Session::create(r.trained).value_or_throw();
  EXPECT_EQ(accuracy(s, {}, test_set, 10).value_or_throw(), r.epochs[2].test_accuracy);
  o.optimizer.kind = "sgd";
  o.optimizer.lr = 1e30f;
  const Status diverged = fit(m, b.parameters(), train_set, test_set, o).status();
  EXPECT_NE(diverged.message().find("at epoch 1, batch "), std::string::npos) << diverged.message();
  o.batch = 1000;
  EXPECT_NE(fit(m, b.parameters(), train_set, test_set, o).status().message().find("for a batch of 1000"), std::string::npos);
}

// Training two epochs, stopping, and resuming from the checkpoint for a third gives the bits of
// three epochs in one go (seeded order per epoch, the optimiser's moments and step count
// restored, so the schedule and clipping continue where they were); a
// checkpoint of another model, or a file that is not one, is refused by name.
TEST(TrainFit, ResumingFromACheckpointGivesTheUninterruptedBits) {
  TempDir dir;
  NetBuilder b({1, 8, 8}, 5);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(4).build().value_or_throw();
  const Dataset train_set = quarters(128, 3), test_set = quarters(32, 4);
  TrainOptions o = three_adamw_epochs();
  o.schedule.kind = "step";  // (cosine's curve depends on the planned epochs, which differ below)
  o.schedule.gamma = 0.5f;
  o.schedule.warmup = 5;
  o.clip_norm = 1.0f;
  const TrainResult whole = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  const TrainResult resumed = two_epochs_then_a_resumed_third(m, b.parameters(), train_set, test_set, o, dir.file("ck"));
  ASSERT_EQ(resumed.epochs.size(), 1u);
  EXPECT_EQ(resumed.epochs[0].epoch, 3);
  EXPECT_EQ(resumed.epochs[0].mean_loss, whole.epochs[2].mean_loss);
  expect_same_parameters(whole, resumed, b.parameters());
  // The checkpoint is an ONNX model that runs as it is.
  exec::Session s = exec::Session::open(dir.file("ck") + "/checkpoint.onnx").value_or_throw();
  EXPECT_EQ(accuracy(s, {}, test_set, 8).value_or_throw(), resumed.epochs[0].test_accuracy);
  NetBuilder other({1, 8, 8}, 5);
  const graph::Model m2 = other.conv(4, 3, 1, 1).relu().flatten().linear(4).build().value_or_throw();
  EXPECT_NE(load_checkpoint(dir.file("ck") + "/checkpoint.onnx", m2, other.parameters()).status().message().find("checkpoint of another model"), std::string::npos);
  ASSERT_TRUE(graph::save_onnx(m, dir.file("plain.onnx")).is_ok());
  EXPECT_NE(load_checkpoint(dir.file("plain.onnx"), m, b.parameters()).status().message().find("is not a tessera checkpoint"), std::string::npos);
  o.checkpoint_dir = dir.file("none");  // resuming from a folder without a checkpoint
  o.resume = true;
  EXPECT_FALSE(fit(m, b.parameters(), train_set, test_set, o).is_ok());
}

}  // namespace
}  // namespace tessera::train
