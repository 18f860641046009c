// `tessera run`, `explain` and `optimize` on the shipped default model: JSON results with the
// latency figures and output dims; inputs from .npy and outputs written as .npy (softmax rows
// summing to 1, and the same numbers as a session opened in the test); bad arguments and bad
// models as one-line errors with a non-zero exit code.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tessera/core/npy.hpp>
#include <tessera/session.hpp>

#include "cli_run.hpp"

namespace tessera::testing {
namespace {

using nlohmann::json;

TEST(RunCli, DefaultModelRunsAndReports) {
  const Outcome r = run("run --iterations 3 --warmup 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_NE(j["model"].get<std::string>().find("small_cnn.onnx"), std::string::npos);
  EXPECT_EQ(j["outputs"][0]["dims"], json({1, 10}));
  EXPECT_EQ(j["inputs"][0]["source"], "random");
  const json& lat = j["latency_ms"];
  EXPECT_LE(lat["min"].get<double>(), lat["median"].get<double>());
  EXPECT_LE(lat["median"].get<double>(), lat["p90"].get<double>());
  EXPECT_GT(j["throughput_per_s"].get<double>(), 0);
  const Outcome text = run("run --iterations 1");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("latency "), std::string::npos) << text.out;
}

// --profile: a Chrome trace with one run slice per timed run and, inside each, one slice per
// node naming its op, dims and (for convolutions) the implementation; the memory plan reported.
TEST(RunCli, ProfileWritesChromeTrace) {
  TempDir dir;
  const Outcome r = run("run --iterations 2 --warmup 1 --json --profile " + dir.file("trace.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  const json& plan = j["memory_plan"];
  ASSERT_TRUE(plan.is_object()) << r.out;
  EXPECT_GT(plan["planned"].get<int>(), 0);
  EXPECT_LT(plan["arena_bytes"].get<std::size_t>(), plan["naive_bytes"].get<std::size_t>());
  std::ifstream f(dir.file("trace.json"));
  const json trace = json::parse(f);
  int runs = 0, nodes = 0, convs = 0;
  double run_end = 0;
  for (const json& e : trace["traceEvents"]) {
    EXPECT_EQ(e["ph"], "X");
    if (e["cat"] == "run") {
      ++runs;
      EXPECT_TRUE(e["args"]["memory_plan"].get<bool>());  // the warm-up run recorded the sizes
      run_end = e["ts"].get<double>() + e["dur"].get<double>();
      continue;
    }
    ++nodes;
    EXPECT_GE(e["dur"].get<double>(), 0);
    EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(), run_end + 1);
    EXPECT_TRUE(e["args"]["outputs"].is_array());
    if (e["name"] == "tessera:FusedConv") {
      ++convs;
      EXPECT_FALSE(e["args"]["kernel"].get<std::string>().empty());
      EXPECT_EQ(e["args"]["inputs"][0].size(), 4u);
    }
  }
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(nodes % 2, 0);
  EXPECT_GT(convs, 0);
}

TEST(RunCli, InputsFromFilesOutputsToFiles) {
  TempDir dir;
  std::vector<float> x(2 * 3 * 32 * 32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.01f);
  const Tensor image = Tensor::from_vector<float>(Shape{2, 3, 32, 32}, x).value_or_throw();
  ASSERT_TRUE(write_npy(dir.file("image.npy"), image).is_ok());
  const Outcome r = run("run --iterations 1 --warmup 0 --input image=" + dir.file("image.npy") + " --output-dir " + dir.file("out"));
  ASSERT_EQ(r.code, 0) << r.err;
  Result<Tensor> probs = read_npy(dir.file("out/probabilities.npy"));
  ASSERT_TRUE(probs.is_ok()) << probs.status().to_string();
  ASSERT_EQ(probs.value().shape(), (Shape{2, 10}));
  const auto p = probs.value().to_vector<float>();
  for (int n = 0; n < 2; ++n) {
    double sum = 0;
    for (int k = 0; k < 10; ++k) sum += p[static_cast<std::size_t>(n * 10 + k)];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  // The same numbers as a session in this process.
  auto session = exec::Session::open(TESSERA_DEFAULT_MODEL).value_or_throw();
  const auto out = session.run({{"image", image}}).value_or_throw();
  EXPECT_EQ(out[0].tensor.to_vector<float>(), p);
}

TEST(RunCli, BadArgumentsAndModels) {
  TempDir dir;
  Outcome r = run("run --input image");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("expected NAME=FILE.npy"), std::string::npos) << r.err;
  r = run("run --input nope=x.npy");
  EXPECT_EQ(r.code, 1);
  r = run("run " + dir.file("missing.onnx"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
  std::ofstream(dir.file("junk.onnx")) << "not a model";
  r = run("run " + dir.file("junk.onnx"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("not an ONNX model"), std::string::npos) << r.err;
  r = run("run --iterations 0");
  EXPECT_EQ(r.code, 1);
  r = run("explain --opt-level 0 " TESSERA_DEFAULT_MODEL);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("%conv0: f32[N,16,32,32] = Conv(%image, %conv0.w, %conv0.b)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("passes (level 0):\n  none\n"), std::string::npos) << r.out;
  r = run("explain --disable-pass fusion " TESSERA_DEFAULT_MODEL);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no pass is named 'fusion'"), std::string::npos) << r.err;
  r = run("optimize " TESSERA_DEFAULT_MODEL " -o " + dir.file("no/such/dir/out.onnx"));
  EXPECT_EQ(r.code, 1);
}

// The passes as the CLI shows them, and an optimised model written back as ONNX that runs to
// the same numbers as the original.
TEST(RunCli, ExplainAndOptimize) {
  TempDir dir;
  Outcome r = run("explain " TESSERA_DEFAULT_MODEL);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("passes (level 2):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("applied: Conv + Relu -> FusedConv 'relu0'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" channels-last (heuristic: "), std::string::npos) << r.out;  // the layout pass asked the executor
  EXPECT_NE(r.out.find("opsets ai.onnx:17 tessera:1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory plan (one run on random inputs, batch 1): arena "), std::string::npos) << r.out;
  r = run("optimize " TESSERA_DEFAULT_MODEL " -o " + dir.file("opt.onnx"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<float> x(3 * 32 * 32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<float>(i) * 0.02f);
  const Tensor image = Tensor::from_vector<float>(Shape{1, 3, 32, 32}, x).value_or_throw();
  exec::SessionOptions plain;
  plain.opt_level = 0;
  auto original = exec::Session::open(TESSERA_DEFAULT_MODEL).value_or_throw();  // the same passes, in the session
  auto optimised = exec::Session::open(dir.file("opt.onnx"), plain).value_or_throw();
  int fused = 0;
  for (const graph::Node& n : optimised.model().graph.nodes) fused += n.op_type == "FusedConv" && n.domain == "tessera";
  EXPECT_EQ(fused, 3);
  EXPECT_EQ(original.run({{"image", image}}).value_or_throw()[0].tensor.to_vector<float>(),
            optimised.run({{"image", image}}).value_or_throw()[0].tensor.to_vector<float>());
}

}  // namespace
// `tessera train` on a slice of Fashion-MNIST: JSON metrics, an exported model that `tessera
// run` loads, and bad arguments.
TEST(RunCli, TrainExportsAModelThatRuns) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist")) GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  TempDir dir;
  Outcome r = run("train --model mlp --limit 1280 --batch 64 --json --export " + dir.file("mlp.onnx"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["train_samples"], 1280);
  ASSERT_EQ(j["epochs"].size(), 1u);
  EXPECT_GT(j["epochs"][0]["test_accuracy"].get<double>(), 0.5);  // ten classes: chance is 0.1
  r = run("run " + dir.file("mlp.onnx") + " --batch 4 --iterations 2 --json");
  EXPECT_EQ(r.code, 0) << r.err;
  // Fine-tuning the exported model goes on from where it was.
  r = run("train --model " + dir.file("mlp.onnx") + " --limit 1280 --batch 64 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(nlohmann::json::parse(r.out)["epochs"][0]["mean_loss"].get<double>(), j["epochs"][0]["mean_loss"].get<double>());
  r = run("train --model vgg");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--model 'vgg' (lenet, mlp, resnet-small, lstm or a FILE.onnx)"), std::string::npos) << r.err;
  r = run("train --model " TESSERA_DEFAULT_MODEL);  // a classifier of other images
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("takes samples of [3, 32, 32], the data's are [1, 28, 28]"), std::string::npos) << r.err;
  r = run("train --data " + dir.file("nothing"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("holds none of train_images.npy"), std::string::npos) << r.err;
}

// Other data and models: a CSV folder (classes from the labels' range) and resnet-small.
TEST(RunCli, TrainOnCsvAndResnetSmall) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("csv"));
  for (const char* name : {"train.csv", "test.csv"}) {
    std::ofstream f(dir.file(std::string("csv/") + name));
    f << "a,b,label\n";
    for (int i = 0; i < 96; ++i) f << (i % 3) + 0.1 * (i % 7) << "," << (i % 3 == 2 ? 1.0 : -1.0) << "," << i % 3 << "\n";  // three classes
  }
  Outcome r = run("train --model mlp --data " + dir.file("csv") + " --batch 16 --epochs 5 --lr 0.01 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["train_samples"], 96);
  EXPECT_GT(j["epochs"][4]["test_accuracy"].get<double>(), 0.9);
  r = run("train --model lenet --data " + dir.file("csv"));  // rows are not images
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("needs an image-shaped input"), std::string::npos) << r.err;
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist")) GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  // resnet-small, with three of its eight steps profiled: where a step goes, by op, and a
  // trace naming each convolution's algorithm.
  r = run("train --model resnet-small --limit 256 --batch 32 --crop-pad 2 --flip --json --profile " + dir.file("steps.json") +
          " --profile-steps 3");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["epochs"].size(), 1u);
  const nlohmann::json& sp = j["step_profile"];
  EXPECT_EQ(sp["steps"], 3);
  double share = 0;
  bool wgrad = false;
  for (const nlohmann::json& op : sp["ops"]) {
    share += op["share"].get<double>();
    wgrad = wgrad || op["op"] == "tessera:ConvGradWeight";
  }
  EXPECT_TRUE(wgrad) << sp.dump();
  EXPECT_GT(share, 0.5);  // the nodes take most of a step
  EXPECT_LE(share, 1.0 + 1e-9);
  std::ifstream f(dir.file("steps.json"));
  const nlohmann::json trace = nlohmann::json::parse(f);
  int runs = 0, named = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    runs += e["cat"] == "run";
    if (e["name"] == "tessera:ConvGradWeight") named += e["args"]["kernel"].get<std::string>().starts_with("conv_bwd_weights_f32_");
  }
  EXPECT_EQ(runs, 3);
  EXPECT_GT(named, 0);
}

// Any ONNX classifier trains: the default model (image -> ... -> Softmax probabilities) gets
// labels and a loss on its logits, learns a synthetic task from .npy files and exports a model
// that runs.
TEST(RunCli, TrainsAnOnnxClassifier) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("npy"));
  for (const auto& [stem, n] : {std::pair<std::string, std::int64_t>{"train", 128}, {"test", 32}}) {
    std::vector<float> x(static_cast<std::size_t>(n * 3 * 32 * 32));
    std::vector<std::int64_t> y(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {  // the label: which quarter of the image is bright
      const std::int64_t q = (i * 7) % 4;
      y[static_cast<std::size_t>(i)] = q;
      for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t r = 0; r < 32; ++r)
          for (std::int64_t k = 0; k < 32; ++k)
            x[static_cast<std::size_t>(((i * 3 + c) * 32 + r) * 32 + k)] = ((r < 16) == (q < 2) && (k < 16) == (q % 2 == 0)) ? 1.0f : 0.1f * static_cast<float>((i + r + k) % 3);
    }
    ASSERT_TRUE(write_npy(dir.file("npy/" + stem + "_images.npy"), Tensor::from_vector<float>(Shape({n, 3, 32, 32}), x).value_or_throw()).is_ok());
    ASSERT_TRUE(write_npy(dir.file("npy/" + stem + "_labels.npy"), Tensor::from_vector<std::int64_t>(Shape({n}), y).value_or_throw()).is_ok());
  }
  Outcome r = run("train --model " TESSERA_DEFAULT_MODEL " --data " + dir.file("npy") + " --batch 16 --epochs 4 --lr 0.005 --json --export " + dir.file("t.onnx"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_LT(j["epochs"][3]["mean_loss"].get<double>(), j["epochs"][0]["mean_loss"].get<double>());
  EXPECT_GT(j["epochs"][3]["test_accuracy"].get<double>(), 0.9);
  r = run("run " + dir.file("t.onnx") + " --batch 2 --iterations 1 --json");
  EXPECT_EQ(r.code, 0) << r.err;
}

// `mpirun -np 2 tessera train`: two processes with a shard each of every batch of 64 train as
// one process does with the whole batch (to within the order of the gradient sums); rank 0
// alone prints.
TEST(RunCli, TrainUnderMpirunMatchesOneProcess) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist")) GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun (Debian's openmpi-bin) is not installed";
  // Open MPI refuses root without the first two; its own allocations are not ours to
  // leak-check; containers often forbid the cross-memory attach of its shared-memory transport.
  const std::string mpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0 "
                             "mpirun -np 2 --oversubscribe --mca btl_vader_single_copy_mechanism none";
  if (std::system((mpirun + " true > /dev/null 2>&1").c_str()) != 0) GTEST_SKIP() << "mpirun cannot start two processes on this machine";
  const std::string args = "train --model mlp --limit 1280 --batch 64 --threads 1 --json";
  Outcome one = run(args);
  ASSERT_EQ(one.code, 0) << one.err;
  Outcome two = run(args, mpirun);
  ASSERT_EQ(two.code, 0) << two.err;
  const nlohmann::json a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(two.out);  // one JSON document: rank 0's
  EXPECT_EQ(a["ranks"], 1);
  EXPECT_EQ(b["ranks"], 2);
  const double la = a["epochs"][0]["mean_loss"].get<double>(), lb = b["epochs"][0]["mean_loss"].get<double>();
  EXPECT_NEAR(lb, la, 1e-3 * la);
  EXPECT_NEAR(b["epochs"][0]["test_accuracy"].get<double>(), a["epochs"][0]["test_accuracy"].get<double>(), 2.0 / 213);
}

}  // namespace tessera::testing
