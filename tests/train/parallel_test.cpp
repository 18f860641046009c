// Data parallelism: the ring collectives over thread groups (the same bits on every rank, sums
// checked against a plain loop, broadcast from any root, an aborting rank waking the others),
// Session::run's on_output, and fit() on two ranks against one process (the same global batch
// gives the same training to within the order of the sums). The MPI run itself is tested through
// `mpirun -np 2 tessera train` (tests/tools).
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/session.hpp>
#include <tessera/train.hpp>

#include "tasks.hpp"
#include "test_util.hpp"

namespace tessera::train {
namespace {

using testing::TempDir;

// Runs body(rank, comm) on a thread per rank of a new group of n.
void on_ranks(int n, const std::function<void(int, Communicator&)>& body) {
  std::vector<std::unique_ptr<Communicator>> g = thread_group(n);
  std::vector<std::thread> t;
  for (int r = 0; r < n; ++r) t.emplace_back([&, r] { body(r, *g[static_cast<std::size_t>(r)]); });
  for (std::thread& th : t) th.join();
}

TEST(Collectives, AllReduceGivesEveryRankTheSameBits) {
  for (int n = 1; n <= 4; ++n)
    for (std::size_t len : {0u, 1u, 3u, 7u, 1000u}) {
      std::vector<std::vector<float>> data(static_cast<std::size_t>(n)), ints(static_cast<std::size_t>(n));
      std::vector<std::vector<double>> doubles(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) {
        data[static_cast<std::size_t>(r)] = testing::random_floats(len, 17u + static_cast<unsigned>(r));
        for (std::size_t i = 0; i < len; ++i) {
          ints[static_cast<std::size_t>(r)].push_back(static_cast<float>((i * 7 + static_cast<std::size_t>(r) * 3) % 11));
          doubles[static_cast<std::size_t>(r)].push_back(1.0 / static_cast<double>(i + 1 + static_cast<std::size_t>(r)));
        }
      }
      std::vector<double> want(len, 0), want_int(len, 0), want_double(len, 0);
      for (int r = 0; r < n; ++r)
        for (std::size_t i = 0; i < len; ++i) {
          want[i] += data[static_cast<std::size_t>(r)][i];
          want_int[i] += ints[static_cast<std::size_t>(r)][i];
          want_double[i] += doubles[static_cast<std::size_t>(r)][i];
        }
      on_ranks(n, [&](int r, Communicator& c) {
        EXPECT_EQ(c.rank(), r);
        EXPECT_EQ(c.size(), n);
        EXPECT_TRUE(all_reduce_sum(c, std::span<float>(data[static_cast<std::size_t>(r)])).is_ok());
        EXPECT_TRUE(all_reduce_sum(c, std::span<float>(ints[static_cast<std::size_t>(r)])).is_ok());
        EXPECT_TRUE(all_reduce_sum(c, std::span<double>(doubles[static_cast<std::size_t>(r)])).is_ok());
      });
      for (int r = 0; r < n; ++r) {
        const auto k = static_cast<std::size_t>(r);
        if (len > 0) {
          EXPECT_EQ(std::memcmp(data[k].data(), data[0].data(), len * sizeof(float)), 0) << n << " ranks, " << len << ": rank " << r << " differs";
        }
        EXPECT_EQ(doubles[k], doubles[0]);
        for (std::size_t i = 0; i < len; ++i) {
          EXPECT_NEAR(data[k][i], want[i], 1e-5) << n << " ranks, element " << i;
          EXPECT_EQ(ints[k][i], want_int[i]);  // small integers: exact in any order
          EXPECT_NEAR(doubles[k][i], want_double[i], 1e-14);
        }
      }
    }
}

TEST(Collectives, BroadcastFromAnyRootAndErrors) {
  for (int n : {1, 2, 3})
    for (int root = 0; root < n; ++root) {
      std::vector<std::vector<int>> v(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) v[static_cast<std::size_t>(r)] = {r, r * 10, r * 100};
      on_ranks(n, [&](int r, Communicator& c) {
        EXPECT_TRUE(broadcast(c, std::as_writable_bytes(std::span<int>(v[static_cast<std::size_t>(r)])), root).is_ok());
      });
      for (int r = 0; r < n; ++r) EXPECT_EQ(v[static_cast<std::size_t>(r)], (std::vector<int>{root, root * 10, root * 100})) << n << " ranks, root " << root;
    }
  std::unique_ptr<Communicator> one = single_process();
  std::vector<std::byte> b(4);
  EXPECT_NE(broadcast(*one, b, 1).message().find("root 1 is not in a group of 1"), std::string::npos);
  EXPECT_EQ(one->name(), "single process");
  EXPECT_TRUE(thread_group(0).empty());
  // A message of another size than the receiver expects is an error naming both.
  on_ranks(2, [&](int r, Communicator& c) {
    std::vector<std::byte> send(r == 0 ? 8 : 4), recv(4);
    const Status s = c.exchange(1 - r, send, 1 - r, recv);
    if (r == 0) EXPECT_TRUE(s.is_ok());
    else EXPECT_NE(s.message().find("rank 0 sent 8 bytes to rank 1, which expected 4"), std::string::npos) << s.message();
  });
}

TEST(Collectives, AnAbortingRankWakesTheOthers) {
  on_ranks(3, [&](int r, Communicator& c) {
    if (r == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      c.abort("out of memory");
      return;
    }
    std::vector<float> x(10, 1.0f);
    const Status s = all_reduce_sum(c, std::span<float>(x));  // waits on rank 0, which never comes
    EXPECT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("rank 0 aborted: out of memory"), std::string::npos) << s.message();
  });
}

// on_output reports every output once, with the tensor run() returns, before run() returns.
TEST(SessionOutputs, OnOutputReportsEachOutputOnceAsItIsMade) {
  NetBuilder b({1, 8, 8}, 3);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().flatten().linear(4).build().value_or_throw();
  graph::Model grads = differentiate(m, "loss", b.parameters()).value_or_throw();
  exec::Session s = exec::Session::create(grads).value_or_throw();
  const Dataset d = quarters(8, 1);
  std::vector<std::vector<float>> seen(s.outputs().size());
  std::vector<int> calls(s.outputs().size(), 0);
  exec::RunOptions ro;
  ro.on_output = [&](std::size_t k, const Tensor& t) {
    ++calls[k];
    seen[k] = t.to_vector<float>();
  };
  for (int run = 0; run < 2; ++run) {  // the first run learns the memory plan, the second runs in it
    std::fill(calls.begin(), calls.end(), 0);
    const auto out = s.run({{"images", d.images}, {"labels", d.labels}}, ro).value_or_throw();
    for (std::size_t k = 0; k < out.size(); ++k) {
      EXPECT_EQ(calls[k], 1) << out[k].name;
      EXPECT_EQ(seen[k], out[k].tensor.to_vector<float>()) << out[k].name;
    }
  }
}

// Two ranks with a shard each of every batch train as one process does with the whole batch:
// the same losses and parameters to within the order of the sums; both ranks hold the same
// bits, and a second run gives them again.
TEST(TrainParallel, TwoRanksTrainAsOneProcess) {
  NetBuilder b({1, 8, 8}, 11);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(4).build().value_or_throw();
  const Dataset train_set = quarters(256, 1), test_set = quarters(64, 2);
  TrainOptions o;
  o.epochs = 2;
  o.batch = 16;
  o.optimizer.kind = "sgd";
  o.optimizer.lr = 0.05f;
  o.optimizer.momentum = 0.9f;
  o.threads = 1;
  const TrainResult one = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  o.bucket_bytes = 256;  // several buckets, reduced while the backward pass goes on
  std::vector<TrainResult> two[2];
  for (int attempt = 0; attempt < 2; ++attempt)
    on_ranks(2, [&](int r, Communicator& c) {
      TrainOptions mine = o;
      mine.comm = &c;
      Result<TrainResult> res = fit(m, b.parameters(), train_set, test_set, mine);
      ASSERT_TRUE(res.is_ok()) << res.status().to_string();
      two[r].push_back(std::move(res).value());
    });
  ASSERT_EQ(two[0].size(), 2u);
  ASSERT_EQ(two[1].size(), 2u);
  expect_same_parameters(two[0][0], two[1][0], b.parameters());  // the ranks agree
  expect_same_parameters(two[0][0], two[0][1], b.parameters());  // and runs repeat
  for (std::size_t e = 0; e < 2; ++e) {
    EXPECT_NEAR(two[0][0].epochs[e].mean_loss, one.epochs[e].mean_loss, 1e-4 * std::abs(one.epochs[e].mean_loss)) << "epoch " << e + 1;
    EXPECT_EQ(two[0][0].epochs[e].test_accuracy, two[1][0].epochs[e].test_accuracy);
    EXPECT_NEAR(two[0][0].epochs[e].test_accuracy, one.epochs[e].test_accuracy, 2.0 / 64);
  }
  for (const std::string& p : b.parameters()) {
    const auto& a = one.trained.graph.values[static_cast<std::size_t>(one.trained.graph.find(p))].constant;
    const auto& c = two[0][0].trained.graph.values[static_cast<std::size_t>(two[0][0].trained.graph.find(p))].constant;
    const std::size_t n = a->bytes.size() / 4;
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float x, y;
      std::memcpy(&x, a->bytes.data() + 4 * i, 4);
      std::memcpy(&y, c->bytes.data() + 4 * i, 4);
      diff = std::max(diff, static_cast<double>(std::abs(x - y)));
      norm = std::max(norm, static_cast<double>(std::abs(x)));
    }
    EXPECT_LT(diff, 1e-4 * std::max(norm, 1.0)) << p;
  }
  // A batch the ranks cannot share is refused before any work.
  on_ranks(2, [&](int, Communicator& c) {
    TrainOptions mine = o;
    mine.comm = &c;
    mine.batch = 1;
    EXPECT_NE(fit(m, b.parameters(), train_set, test_set, mine).status().message().find("a batch of 1 cannot be shared by 2 ranks"), std::string::npos);
  });
}

// Batch norm's running statistics are state: trained (they leave their initial values), used by
// the test accuracy and the trained model (inference mode), kept in checkpoints (a resumed run
// gives the uninterrupted bits) and averaged over the ranks (which then agree bit for bit).
TEST(TrainFit, BatchNormStatisticsAreStateThatTrainsSavesAndSyncs) {
  TempDir dir;
  NetBuilder b({1, 8, 8}, 6);
  const graph::Model m = b.conv(4, 3, 1, 1).batch_norm().relu().residual(8, 2).global_avg_pool().linear(4).build().value_or_throw();
  const Dataset train_set = quarters(128, 3), test_set = quarters(32, 4);
  TrainOptions o = three_adamw_epochs();
  const TrainResult whole = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  EXPECT_GT(whole.epochs[2].test_accuracy, 0.9);
  const graph::Value& mean = whole.trained.graph.values[static_cast<std::size_t>(whole.trained.graph.find("layer2.running_mean"))];
  const std::vector<float> trained_mean = exec::tensor_from_constant(*mean.constant, "mean").value_or_throw().to_vector<float>();
  EXPECT_NE(trained_mean, std::vector<float>(4, 0.0f));
  exec::Session s = exec::Session::create(whole.trained).value_or_throw();  // inference mode, the trained statistics
  EXPECT_EQ(accuracy(s, {}, test_set, 8).value_or_throw(), whole.epochs[2].test_accuracy);
  const TrainResult resumed = two_epochs_then_a_resumed_third(m, b.parameters(), train_set, test_set, o, dir.file("ck"));
  std::vector<std::string> all = b.parameters();  // and the running statistics
  for (graph::ValueId v : m.graph.initializers) all.push_back(m.graph.values[static_cast<std::size_t>(v)].name);
  expect_same_parameters(resumed, whole, all);
  std::vector<TrainResult> two(2);
  o = three_adamw_epochs();
  o.epochs = 1;
  on_ranks(2, [&](int r, Communicator& c) {
    TrainOptions mine = o;
    mine.comm = &c;
    two[static_cast<std::size_t>(r)] = fit(m, b.parameters(), train_set, test_set, mine).value_or_throw();
  });
  expect_same_parameters(two[0], two[1], all);
}

// Dropout trains with a mask per step (drawn at the optimiser step, so a resumed run draws what
// an uninterrupted one does) and is the identity in the trained model.
TEST(TrainFit, DropoutTrainsWithMasksPerStepAndResumes) {
  TempDir dir;
  NetBuilder b({1, 8, 8}, 8);
  const graph::Model m = b.conv(4, 3, 1, 1).relu().max_pool(2).flatten().dropout(0.25f).linear(4).build().value_or_throw();
  const Dataset train_set = quarters(128, 5), test_set = quarters(32, 6);
  TrainOptions o = three_adamw_epochs();
  const TrainResult whole = fit(m, b.parameters(), train_set, test_set, o).value_or_throw();
  EXPECT_GT(whole.epochs[2].test_accuracy, 0.85);
  expect_same_parameters(whole, two_epochs_then_a_resumed_third(m, b.parameters(), train_set, test_set, o, dir.file("ck")), b.parameters());
  exec::Session s = exec::Session::create(whole.trained).value_or_throw();  // the identity: the reported accuracy
  EXPECT_EQ(accuracy(s, {}, test_set, 8).value_or_throw(), whole.epochs[2].test_accuracy);
  NetBuilder plain({1, 8, 8}, 8);  // the same weights without dropout train otherwise
  const graph::Model pm = plain.conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(4).build().value_or_throw();
  EXPECT_NE(fit(pm, plain.parameters(), train_set, test_set, o).value_or_throw().epochs[0].mean_loss, whole.epochs[0].mean_loss);
  EXPECT_NE(NetBuilder({4}, 1).dropout(1.0f).build().status().message().find("needs a ratio in [0, 1)"), std::string::npos);
}

// A non-finite loss names the step and where the first non-finite value came from.
TEST(TrainFit, ANonFiniteLossNamesWhereItFirstAppeared) {
  NetBuilder b({1, 8, 8}, 11);
  graph::Model m = b.conv(4, 3, 1, 1).relu().max_pool(2).flatten().linear(4).build().value_or_throw();
  const Dataset train_set = quarters(64, 1), test_set = quarters(16, 2);
  TrainOptions o = three_adamw_epochs();
  // A parameter that is NaN from the start.
  graph::Model broken = m;
  graph::Value& w = broken.graph.values[static_cast<std::size_t>(broken.graph.find(b.parameters()[2]))];
  auto c = std::make_shared<graph::Constant>(*w.constant);
  const float nan = std::nanf("");
  std::memcpy(c->bytes.data() + 4, &nan, 4);
  w.constant = c;
  Status s = fit(broken, b.parameters(), train_set, test_set, o).status();
  EXPECT_NE(s.message().find("the loss is NaN at epoch 1, batch 1 (step 1); the parameter '" + b.parameters()[2] + "' holds NaN or Inf"), std::string::npos)
      << s.message();
  // Finite inputs whose products overflow: the first node whose output is not finite.
  Dataset huge = train_set;
  std::vector<float> x(static_cast<std::size_t>(huge.images.numel()), 3e38f);
  huge.images = Tensor::from_vector<float>(huge.images.shape(), x).value_or_throw();
  s = fit(m, b.parameters(), huge, test_set, o).status();
  EXPECT_NE(s.message().find("(step 1); it first appears in the output 'layer1.Conv.out' of node 0 'layer1.Conv' (Conv)"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::train
