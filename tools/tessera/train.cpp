// `tessera train [--model lenet|mlp] [--data fashion-mnist|DIR] [--epochs N] [--batch B] [--lr X]
// [--optimizer adamw|sgd] [--momentum M] [--weight-decay W] [--schedule constant|step|cosine]
// [--warmup N] [--step-size E] [--gamma G] [--clip-norm X] [--seed S] [--threads T] [--limit N]
// [--checkpoint DIR [--resume]] [--export FILE.onnx] [--json]`: trains a classifier on Fashion-MNIST (Debian's
// dataset-fashion-mnist, or the IDX files in DIR) through tessera's autodiff and sessions,
// printing the loss as it goes and each epoch's mean loss, samples/s and test accuracy;
// `--export` writes the trained model as ONNX that `tessera run` loads.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include <tessera/train.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

struct TrainArgs {
  std::string model = "lenet", data = "fashion-mnist", export_path, checkpoint;
  int epochs = 1, threads = 0;
  std::int64_t batch = 64, limit = 0;
  float lr = 0.0f, momentum = 0.9f, weight_decay = 0.0f;  // lr 0: 0.001 for adamw, 0.02 for sgd
  std::string optimizer = "adamw";
  std::uint64_t seed = 1;
  bool json = false, resume = false;
  train::LrSchedule schedule;
  float clip_norm = 0.0f;
};

Result<graph::Model> make_model(const std::string& name, std::uint64_t seed, std::vector<std::string>& params) {
  train::NetBuilder b({1, 28, 28}, seed);
  if (name == "lenet") {
    b.conv(20, 5).relu().max_pool(2).conv(50, 5).relu().max_pool(2).flatten().linear(500).relu().linear(10);  // Caffe's LeNet
  } else if (name == "mlp") {
    b.flatten().linear(256).relu().linear(10);
  } else {
    return invalid_argument("--model '" + name + "' (lenet or mlp)");
  }
  params = b.parameters();
  return b.build();
}

train::Dataset first(const train::Dataset& d, std::int64_t n) {
  if (n <= 0 || n >= d.size()) return d;
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  return train::gather_batch(d, order, 0, n).value_or_throw();
}

void run_train(const TrainArgs& a) {
  const std::filesystem::path dir = a.data == "fashion-mnist" ? std::filesystem::path("/usr/share/datasets/fashion-mnist") : std::filesystem::path(a.data);
  Result<train::Dataset> tr = train::fashion_mnist(true, dir), te = train::fashion_mnist(false, dir);
  if (!tr.is_ok()) throw CommandError{tr.status().message()};
  if (!te.is_ok()) throw CommandError{te.status().message()};
  const train::Dataset train_set = first(tr.value(), a.limit), test_set = first(te.value(), a.limit > 0 ? std::max<std::int64_t>(a.limit / 6, 1) : 0);
  std::vector<std::string> params;
  Result<graph::Model> model = make_model(a.model, a.seed, params);
  if (!model.is_ok()) throw CommandError{model.status().message()};
  train::TrainOptions o;
  o.epochs = a.epochs;
  o.batch = a.batch;
  o.seed = a.seed;
  o.threads = a.threads;
  o.optimizer.kind = a.optimizer;
  o.optimizer.lr = a.lr > 0 ? a.lr : a.optimizer == "sgd" ? 0.02f : 0.001f;
  o.optimizer.momentum = a.optimizer == "sgd" ? a.momentum : 0.0f;
  o.optimizer.weight_decay = a.weight_decay;
  o.schedule = a.schedule;
  o.clip_norm = a.clip_norm;
  o.checkpoint_dir = a.checkpoint;
  o.resume = a.resume;
  if (!a.json) {
    o.on_batch = [](int epoch, std::int64_t b, std::int64_t n, float loss) {
      if ((b + 1) % std::max<std::int64_t>(n / 10, 1) == 0 || b + 1 == n)
        std::fprintf(stderr, "\repoch %d  [%3lld%%]  loss %.4f", epoch + 1, static_cast<long long>(100 * (b + 1) / n), static_cast<double>(loss));
    };
  }
  Result<train::TrainResult> r = train::fit(model.value(), params, train_set, test_set, o);
  if (!r.is_ok()) throw CommandError{r.status().message()};
  if (!a.export_path.empty()) {
    const Status s = graph::save_onnx(r.value().trained, a.export_path);
    if (!s.is_ok()) throw CommandError{s.message()};
  }
  nlohmann::json j = {{"model", a.model}, {"train_samples", train_set.size()}, {"test_samples", test_set.size()}, {"batch", a.batch}, {"optimizer", a.optimizer}, {"lr", o.optimizer.lr}};
  for (std::size_t e = 0; e < r.value().epochs.size(); ++e) {
    const train::EpochStats& s = r.value().epochs[e];
    j["epochs"].push_back({{"epoch", s.epoch}, {"mean_loss", s.mean_loss}, {"seconds", s.seconds}, {"samples_per_second", s.samples_per_second}, {"test_accuracy", s.test_accuracy}});
    if (!a.json)
      std::printf("\repoch %d: mean loss %.4f, %.0f samples/s, test accuracy %.2f%%\n", s.epoch, s.mean_loss, s.samples_per_second, 100 * s.test_accuracy);
  }
  if (a.json) std::cout << j.dump(2) << "\n";
  else if (!a.export_path.empty()) std::printf("wrote %s\n", a.export_path.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a classifier on Fashion-MNIST with tessera's autodiff");
  auto a = std::make_shared<TrainArgs>();
  cmd->add_option("--model", a->model, "lenet (default) or mlp");
  cmd->add_option("--data", a->data, "fashion-mnist (Debian's dataset-fashion-mnist) or a folder of the four IDX files");
  cmd->add_option("--epochs", a->epochs, "epochs (default 1)")->check(CLI::Range(0, 1000));
  cmd->add_option("--batch", a->batch, "batch size (default 64)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--lr", a->lr, "learning rate (default 0.001 for adamw, 0.02 for sgd)");
  cmd->add_option("--optimizer", a->optimizer, "adamw (default) or sgd (momentum 0.9 unless --momentum)");
  cmd->add_option("--momentum", a->momentum, "SGD momentum (default 0.9)");
  cmd->add_option("--weight-decay", a->weight_decay, "weight decay (default 0)");
  cmd->add_option("--schedule", a->schedule.kind, "learning rate: constant (default), step (--gamma every --step-size epochs) or cosine");
  cmd->add_option("--warmup", a->schedule.warmup, "linear warm-up over the first N steps (default 0)")->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--step-size", a->schedule.step_size, "epochs between step decays (default 1)")->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--gamma", a->schedule.gamma, "step decay factor (default 0.1)");
  cmd->add_option("--clip-norm", a->clip_norm, "clip the gradients' joint L2 norm to X (default: off)");
  cmd->add_option("--seed", a->seed, "initial weights and sample order (default 1)");
  cmd->add_option("--threads", a->threads, "threads per primitive (default: the thread pool)")->check(CLI::Range(0, 1024));
  cmd->add_option("--limit", a->limit, "train on the first N samples only (and test on N/6)")->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--export", a->export_path, "write the trained model as ONNX");
  cmd->add_option("--checkpoint", a->checkpoint, "save parameters and optimiser state to DIR/checkpoint.onnx after every epoch");
  cmd->add_flag("--resume", a->resume, "continue from DIR/checkpoint.onnx (--checkpoint DIR) up to --epochs in all");
  cmd->add_flag("--json", a->json, "print the metrics as JSON");
  cmd->callback([a] { run_train(*a); });
}

}  // namespace tessera::cli
