// fit and accuracy (train.hpp): mini-batch training of a classifier through its gradient model.
#include <chrono>
#include <cmath>
#include <cstring>

#include "tessera/train.hpp"

namespace tessera::train {

Result<double> accuracy(exec::Session& forward, const std::vector<exec::NamedTensor>& parameters, const Dataset& d, std::int64_t batch) {
  if (batch < 1) return invalid_argument("accuracy: batch must be >= 1");
  std::vector<std::int64_t> order(static_cast<std::size_t>(d.size()));
  for (std::int64_t i = 0; i < d.size(); ++i) order[static_cast<std::size_t>(i)] = i;
  std::int64_t right = 0;
  for (std::int64_t first = 0; first < d.size(); first += batch) {
    const std::int64_t count = std::min(batch, d.size() - first);
    TESSERA_ASSIGN_OR_RETURN(const Dataset b, gather_batch(d, order, first, count));
    std::vector<exec::NamedTensor> in = parameters;
    in.push_back({"images", b.images});
    in.push_back({"labels", b.labels});
    TESSERA_ASSIGN_OR_RETURN(const std::vector<exec::NamedTensor> out, forward.run(in));
    const Tensor& scores = out[1].tensor;
    const std::int64_t classes = scores.numel() / std::max<std::int64_t>(count, 1);
    const float* s = scores.data<float>();
    for (std::int64_t i = 0; i < count; ++i) {
      std::int64_t best = 0;
      for (std::int64_t c = 1; c < classes; ++c)
        if (s[i * classes + c] > s[i * classes + best]) best = c;
      right += best == b.labels.data<std::int64_t>()[i];
    }
  }
  return d.size() == 0 ? 0.0 : static_cast<double>(right) / static_cast<double>(d.size());
}

Result<TrainResult> fit(const graph::Model& model, const std::vector<std::string>& parameters, const Dataset& train_set,
                        const Dataset& test_set, const TrainOptions& o) {
  if (o.epochs < 0 || o.batch < 1) return invalid_argument("fit: epochs must be >= 0 and batch >= 1");
  if (train_set.size() < o.batch) return invalid_argument("fit: " + std::to_string(train_set.size()) + " training samples for a batch of " + std::to_string(o.batch));
  TESSERA_ASSIGN_OR_RETURN(const graph::Model grads, differentiate(model, "loss", parameters));
  exec::SessionOptions so;
  so.threads = o.threads;
  TESSERA_ASSIGN_OR_RETURN(exec::Session step, exec::Session::create(grads, so));
  TESSERA_ASSIGN_OR_RETURN(exec::Session forward, exec::Session::create(model, so));
  TESSERA_ASSIGN_OR_RETURN(Optimizer opt, Optimizer::create(o.optimizer));
  TESSERA_RETURN_IF_ERROR(check_schedule(o.schedule));
  std::vector<Tensor> params;
  for (const std::string& name : parameters) {
    const graph::ValueId v = model.graph.find(name);
    if (v == graph::kNoValue || !model.graph.values[static_cast<std::size_t>(v)].constant) return invalid_argument("fit: '" + name + "' is not an initializer");
    TESSERA_ASSIGN_OR_RETURN(Tensor t, exec::tensor_from_constant(*model.graph.values[static_cast<std::size_t>(v)].constant, name));
    params.push_back(std::move(t));
  }
  const auto named = [&] {
    std::vector<exec::NamedTensor> in;
    for (std::size_t k = 0; k < params.size(); ++k) in.push_back({parameters[k], params[k]});
    return in;
  };
  const std::filesystem::path checkpoint = o.checkpoint_dir / "checkpoint.onnx";
  int start = 0;
  if (o.resume) {
    if (o.checkpoint_dir.empty()) return invalid_argument("fit: resume needs a checkpoint folder");
    TESSERA_ASSIGN_OR_RETURN(Checkpoint c, load_checkpoint(checkpoint, model, parameters));
    params = std::move(c.values);
    TESSERA_RETURN_IF_ERROR(opt.restore(std::move(c.state)));
    start = static_cast<int>(std::min<std::int64_t>(c.epochs_done, o.epochs));
  }
  TrainResult result;
  const std::int64_t batches = train_set.size() / o.batch;
  for (int epoch = start; epoch < o.epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::int64_t> order = shuffled(train_set.size(), o.seed + static_cast<std::uint64_t>(epoch));
    double loss_sum = 0;
    for (std::int64_t bi = 0; bi < batches; ++bi) {
      TESSERA_ASSIGN_OR_RETURN(const Dataset b, gather_batch(train_set, order, bi * o.batch, o.batch));
      std::vector<exec::NamedTensor> in = named();
      in.push_back({"images", b.images});
      in.push_back({"labels", b.labels});
      TESSERA_ASSIGN_OR_RETURN(const std::vector<exec::NamedTensor> out, step.run(in));
      const float loss = out[0].tensor.to_vector<float>()[0];
      if (!std::isfinite(loss))
        return invalid_argument("fit: the loss is " + std::to_string(loss) + " at epoch " + std::to_string(epoch + 1) + ", batch " + std::to_string(bi + 1) +
                                " (the parameters before this batch are kept)");
      std::vector<Tensor> g;
      for (std::size_t k = 0; k < params.size(); ++k) g.push_back(out[k + 1].tensor);
      if (o.clip_norm > 0) TESSERA_RETURN_IF_ERROR(clip_grad_norm(g, o.clip_norm).status());
      opt.set_lr(scheduled_lr(o.schedule, o.optimizer.lr, opt.steps(), batches, o.epochs));
      TESSERA_RETURN_IF_ERROR(opt.step(params, g));
      loss_sum += loss;
      if (o.on_batch) o.on_batch(epoch, bi, batches, loss);
    }
    EpochStats s;
    s.epoch = epoch + 1;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.mean_loss = loss_sum / static_cast<double>(std::max<std::int64_t>(batches, 1));
    s.samples_per_second = static_cast<double>(batches * o.batch) / std::max(s.seconds, 1e-9);
    TESSERA_ASSIGN_OR_RETURN(s.test_accuracy, accuracy(forward, named(), test_set, 500));
    result.epochs.push_back(s);
    if (!o.checkpoint_dir.empty()) TESSERA_RETURN_IF_ERROR(save_checkpoint(checkpoint, model, parameters, params, opt.state(), epoch + 1));
  }
  result.trained = model;
  for (std::size_t k = 0; k < params.size(); ++k) {
    graph::Value& v = result.trained.graph.values[static_cast<std::size_t>(result.trained.graph.find(parameters[k]))];
    auto c = std::make_shared<graph::Constant>(*v.constant);
    std::memcpy(c->bytes.data(), params[k].data(), c->bytes.size());
    v.constant = std::move(c);
  }
  return result;
}

}  // namespace tessera::train
