// `tessera train [--model lenet|mlp|resnet-small|lstm|FILE.onnx] [--data fashion-mnist|DIR] [--epochs N] [--batch B] [--lr X]
// [--optimizer adamw|sgd] [--momentum M] [--weight-decay W] [--schedule constant|step|cosine]
// [--warmup N] [--step-size E] [--gamma G] [--clip-norm X] [--seed S] [--threads T] [--limit N]
// [--crop-pad P] [--flip] [--no-prefetch] [--checkpoint DIR [--resume]] [--export FILE.onnx] [--json]`: trains a
// classifier on Fashion-MNIST (Debian's dataset-fashion-mnist) or the .npy, CSV or IDX files in
// DIR through tessera's autodiff and sessions,
// printing the loss as it goes and each epoch's mean loss, samples/s and test accuracy;
// `--export` writes the trained model as ONNX that `tessera run` loads. Started by mpirun
// (`mpirun -np 2 tessera train ...`) it trains data-parallel: each rank a shard of every batch,
// the gradients summed across the ranks; rank 0 prints, checkpoints and exports.
#include <algorithm>
#include <chrono>
#include <memory>
#include <map>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <thread>
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
  train::Augmentation augmentation;
  bool no_prefetch = false;
  std::string profile;
  int profile_steps = 10;
};

// Where a training step's time goes: milliseconds per step by op, largest first.
nlohmann::json step_breakdown(const std::vector<exec::RunProfile>& runs) {
  std::map<std::string, double> us;
  double total = 0;
  for (const exec::RunProfile& r : runs) {
    total += r.duration_us;
    for (const exec::NodeProfile& n : r.nodes) us[n.op] += n.duration_us;
  }
  const double steps = static_cast<double>(std::max<std::size_t>(runs.size(), 1));
  std::vector<std::pair<double, std::string>> by;
  for (const auto& [op, t] : us) by.emplace_back(t, op);
  std::sort(by.begin(), by.end(), std::greater<>());
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& [t, op] : by) ops.push_back({{"op", op}, {"ms", t / steps / 1e3}, {"share", total > 0 ? t / total : 0.0}});
  return {{"steps", runs.size()}, {"step_ms", total / steps / 1e3}, {"ops", ops}};
}

// A model from a file: one tessera train exported, a checkpoint, or any classifier (one input,
// its scores the first output: train::with_classifier_loss adds the labels and the loss). Its
// f32 initializers but batch norm's running statistics are the parameters: fine-tuning.
Result<graph::Model> onnx_model(const std::string& path, std::vector<std::string>& params) {
  TESSERA_ASSIGN_OR_RETURN(graph::Model m, graph::import_onnx(path));
  TESSERA_RETURN_IF_ERROR(graph::infer_types(m));
  Result<graph::Model> trainable = train::with_classifier_loss(m);
  if (!trainable.is_ok()) return Status(trainable.status().code(), "--model '" + path + "': " + trainable.status().message());
  m = std::move(trainable).value();
  m.graph.outputs.resize(2);
  params = train::trainable_parameters(m);
  if (params.empty()) return invalid_argument("--model '" + path + "' has no f32 initializers to train");
  return m;
}

// `dims`: one sample's (the data's dims without the batch).
Result<graph::Model> make_model(const std::string& name, const std::vector<std::int64_t>& dims, std::int64_t classes, std::uint64_t seed,
                                std::vector<std::string>& params) {
  train::NetBuilder b(dims, seed);
  if (name == "lenet") {
    b.conv(20, 5).relu().max_pool(2).conv(50, 5).relu().max_pool(2).flatten().linear(500).relu().linear(classes);  // Caffe's LeNet
  } else if (name == "mlp") {
    b.flatten().linear(256).relu().linear(classes);
  } else if (name == "lstm") {  // the image's rows as a sequence
    b.lstm(128).linear(classes);
  } else if (name == "resnet-small") {  // three residual stages of 16, 32 and 64 channels
    b.conv(16, 3, 1, 1).relu().residual(16).residual(32, 2).residual(64, 2).global_avg_pool().linear(classes);
  } else if (name.size() > 5 && name.substr(name.size() - 5) == ".onnx") {
    return onnx_model(name, params);
  } else {
    return invalid_argument("--model '" + name + "' (lenet, mlp, resnet-small, lstm or a FILE.onnx)");
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
  std::unique_ptr<train::Communicator> comm;
  if (train::launched_by_mpi()) {
    Result<std::unique_ptr<train::Communicator>> w = train::mpi_world();
    if (!w.is_ok()) throw CommandError{"started by mpirun, but " + w.status().message()};
    comm = std::move(w).value();
  }
  const int ranks = comm ? comm->size() : 1;
  const bool lead = !comm || comm->rank() == 0;
  int threads = a.threads;
  if (threads == 0 && ranks > 1) {  // the ranks on this machine share its cores
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int here = local ? std::max(std::atoi(local), 1) : ranks;
    threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / here);
  }
  Result<train::Dataset> tr = a.data == "fashion-mnist" ? train::fashion_mnist(true) : train::load_dataset(a.data, true);
  Result<train::Dataset> te = a.data == "fashion-mnist" ? train::fashion_mnist(false) : train::load_dataset(a.data, false);
  if (!tr.is_ok()) throw CommandError{tr.status().message()};
  if (!te.is_ok()) throw CommandError{te.status().message()};
  const train::Dataset train_set = first(tr.value(), a.limit), test_set = first(te.value(), a.limit > 0 ? std::max<std::int64_t>(a.limit / 6, 1) : 0);
  std::vector<std::string> params;
  std::vector<std::int64_t> dims = train_set.images.shape().dims();
  dims.erase(dims.begin());
  std::int64_t classes = 2;  // the labels' range
  for (const train::Dataset* d : {&train_set, &test_set})
    for (std::int64_t y : d->labels.to_vector<std::int64_t>()) classes = std::max(classes, y + 1);
  Result<graph::Model> model = make_model(a.model, dims, classes, a.seed, params);
  if (!model.is_ok()) throw CommandError{model.status().message()};
  if (const auto want = model.value().graph.values[static_cast<std::size_t>(model.value().graph.find("images"))].type.shape) {
    std::vector<std::int64_t> sample;  // the model's dims of one sample (-1 where symbolic)
    for (std::size_t i = 1; i < want->size(); ++i) sample.push_back((*want)[i].has_size() ? (*want)[i].size : -1);
    bool fits = sample.size() == dims.size();
    for (std::size_t i = 0; fits && i < dims.size(); ++i) fits = sample[i] < 0 || sample[i] == dims[i];
    if (!fits) throw CommandError{"--model '" + a.model + "' takes samples of " + Shape(sample).to_string() + ", the data's are " + Shape(dims).to_string()};
  }
  train::TrainOptions o;
  o.epochs = a.epochs;
  o.batch = a.batch;
  o.seed = a.seed;
  o.threads = threads;
  o.comm = ranks > 1 ? comm.get() : nullptr;
  if (ranks > 1 && lead && !a.json)
    std::fprintf(stderr, "data parallel: %s, %d thread%s each, global batch %lld\n", comm->name().c_str(), threads, threads == 1 ? "" : "s",
                 static_cast<long long>(a.batch));
  o.optimizer.kind = a.optimizer;
  o.optimizer.lr = a.lr > 0 ? a.lr : a.optimizer == "sgd" ? 0.02f : 0.001f;
  o.optimizer.momentum = a.optimizer == "sgd" ? a.momentum : 0.0f;
  o.optimizer.weight_decay = a.weight_decay;
  o.schedule = a.schedule;
  o.clip_norm = a.clip_norm;
  o.checkpoint_dir = a.checkpoint;
  o.resume = a.resume;
  o.augmentation = a.augmentation;
  o.prefetch = !a.no_prefetch;
  o.profile_steps = a.profile.empty() ? 0 : a.profile_steps;
  if (!a.json && lead) {
    // A bar per epoch: how far, the samples per second so far, the batch's loss (the test
    // accuracy follows the epoch).
    auto started = std::make_shared<std::chrono::steady_clock::time_point>();
    o.on_batch = [started, batch = a.batch](int epoch, std::int64_t b, std::int64_t n, float loss) {
      if (b == 0) *started = std::chrono::steady_clock::now();
      if ((b + 1) % std::max<std::int64_t>(n / 20, 1) != 0 && b + 1 != n) return;
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - *started).count();
      const int filled = static_cast<int>(20 * (b + 1) / n);
      std::fprintf(stderr, "\repoch %d [%-20s] %3lld%%  %6.0f samples/s  loss %.4f", epoch + 1, std::string(static_cast<std::size_t>(filled), '#').c_str(),
                   static_cast<long long>(100 * (b + 1) / n), static_cast<double>((b + 1) * batch) / std::max(seconds, 1e-9), static_cast<double>(loss));
    };
  }
  Result<train::TrainResult> r = train::fit(model.value(), params, train_set, test_set, o);
  if (!r.is_ok()) throw CommandError{(ranks > 1 ? "rank " + std::to_string(comm->rank()) + ": " : std::string()) + r.status().message()};
  if (!lead) return;
  if (!a.export_path.empty()) {
    const Status s = graph::save_onnx(r.value().trained, a.export_path);
    if (!s.is_ok()) throw CommandError{s.message()};
  }
  if (!a.profile.empty()) write_trace(a.profile, r.value().step_profiles);
  nlohmann::json j = {{"model", a.model}, {"train_samples", train_set.size()}, {"test_samples", test_set.size()}, {"batch", a.batch}, {"optimizer", a.optimizer}, {"lr", o.optimizer.lr},
                    {"ranks", ranks}, {"threads", threads}};
  for (std::size_t e = 0; e < r.value().epochs.size(); ++e) {
    const train::EpochStats& s = r.value().epochs[e];
    j["epochs"].push_back({{"epoch", s.epoch}, {"mean_loss", s.mean_loss}, {"seconds", s.seconds}, {"samples_per_second", s.samples_per_second}, {"test_accuracy", s.test_accuracy}});
    if (!a.json)
      std::printf("\repoch %d: mean loss %.4f, %.0f samples/s, test accuracy %.2f%%\n", s.epoch, s.mean_loss, s.samples_per_second, 100 * s.test_accuracy);
  }
  if (!a.profile.empty()) {
    j["step_profile"] = step_breakdown(r.value().step_profiles);
    const nlohmann::json& sp = j["step_profile"];
    if (!a.json) {
      std::printf("wrote %s: %zu profiled steps, %.2f ms each (the optimiser's update not included); by op:\n", a.profile.c_str(),
                  sp["steps"].get<std::size_t>(), sp["step_ms"].get<double>());
      for (const auto& op : sp["ops"])
        std::printf("  %-28s %8.3f ms  %5.1f%%\n", op["op"].get<std::string>().c_str(), op["ms"].get<double>(), 100 * op["share"].get<double>());
    }
  }
  if (a.json) std::cout << j.dump(2) << "\n";
  else if (!a.export_path.empty()) std::printf("wrote %s\n", a.export_path.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a classifier on Fashion-MNIST with tessera's autodiff");
  auto a = std::make_shared<TrainArgs>();
  cmd->add_option("--model", a->model, "lenet (default), mlp, resnet-small, lstm (over the image's rows), or a FILE.onnx with inputs images and labels and outputs loss and scores (an exported model or a checkpoint: fine-tuning)");
  cmd->add_option("--data", a->data,
                  "fashion-mnist (Debian's dataset-fashion-mnist) or a folder holding train_images.npy + train_labels.npy and test_..., "
                  "or train.csv and test.csv (label last), or the four IDX files");
  cmd->add_option("--crop-pad", a->augmentation.crop_pad, "augment: random crops of the images padded by P (default 0: off)")->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--flip", a->augmentation.flip, "augment: flip half of the images horizontally");
  cmd->add_flag("--no-prefetch", a->no_prefetch, "make each batch when it is needed instead of on a thread ahead of time");
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
  cmd->add_option("--threads", a->threads, "threads per primitive (default: the thread pool; under mpirun the cores shared by the ranks)")->check(CLI::Range(0, 1024));
  cmd->add_option("--limit", a->limit, "train on the first N samples only (and test on N/6)")->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--export", a->export_path, "write the trained model as ONNX");
  cmd->add_option("--checkpoint", a->checkpoint, "save parameters and optimiser state to DIR/checkpoint.onnx after every epoch");
  cmd->add_flag("--resume", a->resume, "continue from DIR/checkpoint.onnx (--checkpoint DIR) up to --epochs in all");
  cmd->add_flag("--json", a->json, "print the metrics as JSON");
  cmd->add_option("--profile", a->profile, "write a Chrome trace (Perfetto) of training steps (one slice per node) and print where a step's time goes by op");
  cmd->add_option("--profile-steps", a->profile_steps, "steps to profile, after the first (default 10)")->check(CLI::Range(1, 1 << 20));
  cmd->callback([a] { run_train(*a); });
}

}  // namespace tessera::cli
