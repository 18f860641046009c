// fit and accuracy (train.hpp): mini-batch training of a classifier through its gradient model.
#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <future>
#include <map>

#include "forms.hpp"
#include "reducer.hpp"
#include "splitmix.hpp"
#include "tessera/train.hpp"

namespace tessera::train {

namespace {

// How many of d's samples [first, first + count) the forward model classifies right.
Result<std::int64_t> correct(exec::Session& forward, const std::vector<exec::NamedTensor>& parameters, const Dataset& d, std::int64_t first,
                             std::int64_t count, std::int64_t batch) {
  if (batch < 1) return invalid_argument("accuracy: batch must be >= 1");
  std::vector<std::int64_t> order(static_cast<std::size_t>(d.size()));
  for (std::int64_t i = 0; i < d.size(); ++i) order[static_cast<std::size_t>(i)] = i;
  std::int64_t right = 0;
  for (std::int64_t at = first; at < first + count; at += batch) {
    const std::int64_t n = std::min(batch, first + count - at);
    TESSERA_ASSIGN_OR_RETURN(const Dataset b, gather_batch(d, order, at, n));
    std::vector<exec::NamedTensor> in = parameters;
    in.push_back({"images", b.images});
    in.push_back({"labels", b.labels});
    TESSERA_ASSIGN_OR_RETURN(const std::vector<exec::NamedTensor> out, forward.run(in));
    const Tensor& scores = out[1].tensor;
    const std::int64_t classes = scores.numel() / std::max<std::int64_t>(n, 1);
    const float* s = scores.data<float>();
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t best = 0;
      for (std::int64_t c = 1; c < classes; ++c)
        if (s[i * classes + c] > s[i * classes + best]) best = c;
      right += best == b.labels.data<std::int64_t>()[i];
    }
  }
  return right;
}

// The slice [first, first + count) of n items that rank r of `ranks` takes.
std::pair<std::int64_t, std::int64_t> shard(std::int64_t n, int r, int ranks) {
  const std::int64_t b = n * r / ranks, e = n * (r + 1) / ranks;
  return {b, e - b};
}

// Where a non-finite loss comes from: the first parameter or input holding NaN or Inf, else the
// first node of the forward model (in order, no passes) whose output does, found by running the
// model once more with every value an output.
std::string first_non_finite(const graph::Model& model, const std::vector<std::string>& parameters, const std::vector<exec::NamedTensor>& in) {
  const auto finite = [](const Tensor& t) {
    if (t.dtype() != DType::kF32) return true;
    const float* p = t.data<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(p[i])) return false;
    return true;
  };
  for (const exec::NamedTensor& t : in)
    if (!finite(t.tensor))
      return (std::find(parameters.begin(), parameters.end(), t.name) != parameters.end() ? "the parameter '" : "the input '") + t.name + "' holds NaN or Inf";
  graph::Model probe = model;
  graph::Graph& g = probe.graph;
  for (const graph::Node& n : g.nodes)
    for (graph::ValueId v : n.outputs)
      if (v != graph::kNoValue && std::find(g.outputs.begin(), g.outputs.end(), v) == g.outputs.end()) g.outputs.push_back(v);
  exec::SessionOptions so;
  so.opt_level = 0;
  so.plan_memory = false;
  Result<exec::Session> s = exec::Session::create(probe, so);
  if (!s.is_ok()) return "it could not be traced (" + s.status().message() + ")";
  const Result<std::vector<exec::NamedTensor>> out = s.value().run(in);
  if (!out.is_ok()) return "it could not be traced (" + out.status().message() + ")";
  std::map<std::string, const Tensor*> by_name;
  for (const exec::NamedTensor& t : out.value()) by_name[t.name] = &t.tensor;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (graph::ValueId v : g.nodes[i].outputs) {
      if (v == graph::kNoValue) continue;
      const std::string& name = g.values[static_cast<std::size_t>(v)].name;
      const auto it = by_name.find(name);
      if (it != by_name.end() && !finite(*it->second))
        return "it first appears in the output '" + name + "' of node " + std::to_string(i) + (g.nodes[i].name.empty() ? "" : " '" + g.nodes[i].name + "'") +
               " (" + g.nodes[i].op_type + ")";
    }
  return "this rank's shard of the batch gives finite values everywhere";
}

}  // namespace

Result<double> accuracy(exec::Session& forward, const std::vector<exec::NamedTensor>& parameters, const Dataset& d, std::int64_t batch) {
  TESSERA_ASSIGN_OR_RETURN(const std::int64_t right, correct(forward, parameters, d, 0, d.size(), batch));
  return d.size() == 0 ? 0.0 : static_cast<double>(right) / static_cast<double>(d.size());
}

namespace {

// shared_stop: set when every rank stops with the same error (no rank is left waiting).
Result<TrainResult> fit_on(Communicator& comm, const graph::Model& model, const std::vector<std::string>& parameters, const Dataset& train_set,
                           const Dataset& test_set, const TrainOptions& o, bool* shared_stop) {
  if (o.epochs < 0 || o.batch < 1) return invalid_argument("fit: epochs must be >= 0 and batch >= 1");
  const int ranks = comm.size(), rank = comm.rank();
  if (o.batch < ranks) return invalid_argument("fit: a batch of " + std::to_string(o.batch) + " cannot be shared by " + std::to_string(ranks) + " ranks");
  if (train_set.size() < o.batch) return invalid_argument("fit: " + std::to_string(train_set.size()) + " training samples for a batch of " + std::to_string(o.batch));
  // Batch norm trains in training mode, its running statistics state carried from step to step
  // (outputs of the step after the gradients); dropout draws its masks at the step; the
  // accuracy is measured in inference mode.
  TESSERA_ASSIGN_OR_RETURN(const detail::TrainingForm form, detail::training_form(model));
  TESSERA_ASSIGN_OR_RETURN(graph::Model grads, differentiate(form.model, "loss", parameters));
  for (const std::string& u : form.updates) grads.graph.outputs.push_back(grads.graph.find(u));
  exec::SessionOptions so;
  so.threads = o.threads;
  TESSERA_ASSIGN_OR_RETURN(exec::Session step, exec::Session::create(grads, so));
  TESSERA_ASSIGN_OR_RETURN(exec::Session forward, exec::Session::create(form.inference, so));
  // What checkpoints and the trained model hold: the parameters, then the state.
  std::vector<std::string> kept = parameters;
  kept.insert(kept.end(), form.state.begin(), form.state.end());
  TESSERA_ASSIGN_OR_RETURN(Optimizer opt, Optimizer::create(o.optimizer));
  TESSERA_RETURN_IF_ERROR(check_schedule(o.schedule));
  std::vector<Tensor> params, state;
  for (const std::string& name : kept) {
    const graph::ValueId v = model.graph.find(name);
    if (v == graph::kNoValue || !model.graph.values[static_cast<std::size_t>(v)].constant) return invalid_argument("fit: '" + name + "' is not an initializer");
    TESSERA_ASSIGN_OR_RETURN(Tensor t, exec::tensor_from_constant(*model.graph.values[static_cast<std::size_t>(v)].constant, name));
    (params.size() < parameters.size() ? params : state).push_back(std::move(t));
  }
  const auto named = [&] {
    std::vector<exec::NamedTensor> in;
    for (std::size_t k = 0; k < params.size(); ++k) in.push_back({parameters[k], params[k]});
    for (std::size_t k = 0; k < state.size(); ++k) in.push_back({form.state[k], state[k]});
    return in;
  };
  const auto everything = [&] {
    std::vector<Tensor> all = params;
    all.insert(all.end(), state.begin(), state.end());
    return all;
  };
  const std::filesystem::path checkpoint = o.checkpoint_dir / "checkpoint.onnx";
  int start = 0;
  if (o.resume) {
    if (o.checkpoint_dir.empty()) return invalid_argument("fit: resume needs a checkpoint folder");
    TESSERA_ASSIGN_OR_RETURN(Checkpoint c, load_checkpoint(checkpoint, model, kept));
    state.assign(c.values.begin() + static_cast<std::ptrdiff_t>(parameters.size()), c.values.end());
    c.values.resize(parameters.size());
    params = std::move(c.values);
    c.state.m.resize(std::min(c.state.m.size(), parameters.size()));  // the state has no moments
    c.state.v.resize(std::min(c.state.v.size(), parameters.size()));
    TESSERA_RETURN_IF_ERROR(opt.restore(std::move(c.state)));
    start = static_cast<int>(std::min<std::int64_t>(c.epochs_done, o.epochs));
  }
  std::unique_ptr<detail::GradientReducer> reducer;
  if (ranks > 1) {  // every rank starts from rank 0's parameters
    std::vector<std::vector<std::int64_t>> dims;
    for (Tensor& p : params) {
      TESSERA_RETURN_IF_ERROR(broadcast(comm, std::span<std::byte>(static_cast<std::byte*>(p.data()), p.nbytes()), 0).with_context("fit"));
      dims.push_back(p.shape().dims());
    }
    for (Tensor& t : state) TESSERA_RETURN_IF_ERROR(broadcast(comm, std::span<std::byte>(static_cast<std::byte*>(t.data()), t.nbytes()), 0).with_context("fit"));
    reducer = std::make_unique<detail::GradientReducer>(comm, dims, o.bucket_bytes);
  }
  TrainResult result;
  const std::int64_t first_step = opt.steps();
  const std::int64_t batches = train_set.size() / o.batch;
  for (int epoch = start; epoch < o.epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::int64_t> order = shuffled(train_set.size(), o.seed + static_cast<std::uint64_t>(epoch));
    double loss_sum = 0;
    const auto [first, count] = shard(o.batch, rank, ranks);
    // This rank's shard of batch bi, augmented with choices drawn per epoch and sample.
    const auto make_batch = [&, first = first, count = count, epoch = epoch](std::int64_t bi) -> Result<Dataset> {
      const std::int64_t at = bi * o.batch + first;
      TESSERA_ASSIGN_OR_RETURN(Dataset b, gather_batch(train_set, order, at, count));
      const std::span<const std::int64_t> ids(order.data() + at, static_cast<std::size_t>(count));
      TESSERA_RETURN_IF_ERROR(augment(b, ids, o.augmentation, detail::splitmix64_mix(o.seed + 0x5851f42d4c957f2dULL * static_cast<std::uint64_t>(epoch + 1))));
      return b;
    };
    std::future<Result<Dataset>> next;  // the next batch, made on a thread while this one trains
    if (o.prefetch && batches > 0) next = std::async(std::launch::async, make_batch, std::int64_t{0});
    for (std::int64_t bi = 0; bi < batches; ++bi) {
      Result<Dataset> made = o.prefetch ? next.get() : make_batch(bi);
      if (o.prefetch && bi + 1 < batches) next = std::async(std::launch::async, make_batch, bi + 1);
      TESSERA_ASSIGN_OR_RETURN(const Dataset b, std::move(made));
      std::vector<exec::NamedTensor> in = named();
      in.push_back({"images", b.images});
      in.push_back({"labels", b.labels});
      if (!form.step_input.empty()) {  // dropout's masks: drawn at the step (and rank), so a resumed run draws the same
        TESSERA_ASSIGN_OR_RETURN(Tensor t, Tensor::from_vector<std::int64_t>(Shape(std::vector<std::int64_t>{}), {opt.steps() * ranks + rank}));
        in.push_back({form.step_input, std::move(t)});
      }
      std::vector<Tensor> g;
      float loss = 0;
      const std::int64_t done = opt.steps() - first_step;  // steps taken by this call
      exec::RunOptions ro;
      ro.profile = done >= 1 && done <= o.profile_steps;
      if (reducer) {  // the shard's mean loss and gradients, weighted by its share and summed over the ranks
        const float share = static_cast<float>(count) / static_cast<float>(o.batch);
        reducer->start(share);
        ro.on_output = [&](std::size_t k, const Tensor& t) {
          if (k > 0 && k <= params.size()) reducer->ready(k - 1, t);
        };
        TESSERA_ASSIGN_OR_RETURN(const std::vector<exec::NamedTensor> out, step.run(in, ro));
        TESSERA_ASSIGN_OR_RETURN(g, reducer->finish());
        double l = static_cast<double>(out[0].tensor.to_vector<float>()[0]) * share;
        TESSERA_RETURN_IF_ERROR(all_reduce_sum(comm, std::span<double>(&l, 1)).with_context("fit"));
        loss = static_cast<float>(l);
        for (std::size_t k = 0; k < state.size(); ++k) {  // each rank's running statistics, averaged
          TESSERA_ASSIGN_OR_RETURN(state[k], out[1 + params.size() + k].tensor.clone());
          float* v = state[k].data<float>();
          const std::span<float> span(v, static_cast<std::size_t>(state[k].numel()));
          for (float& x : span) x *= share;
          TESSERA_RETURN_IF_ERROR(all_reduce_sum(comm, span).with_context("fit"));
        }
      } else {
        TESSERA_ASSIGN_OR_RETURN(const std::vector<exec::NamedTensor> out, step.run(in, ro));
        loss = out[0].tensor.to_vector<float>()[0];
        for (std::size_t k = 0; k < params.size(); ++k) g.push_back(out[k + 1].tensor);
        for (std::size_t k = 0; k < state.size(); ++k) state[k] = out[1 + params.size() + k].tensor;
      }
      if (!std::isfinite(loss)) {  // every rank sees the same summed loss: they stop together
        *shared_stop = true;
        const std::string what = std::isnan(loss) ? "NaN" : loss > 0 ? "+Inf" : "-Inf";
        return invalid_argument("fit: the loss is " + what + " at epoch " + std::to_string(epoch + 1) + ", batch " + std::to_string(bi + 1) +
                                " (step " + std::to_string(opt.steps() + 1) + "); " + first_non_finite(form.model, parameters, in) +
                                " (the parameters before this batch are kept" + (o.checkpoint_dir.empty() ? "" : ", and the last checkpoint") + ")");
      }
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
    const auto [tfirst, tcount] = shard(test_set.size(), rank, ranks);
    TESSERA_ASSIGN_OR_RETURN(const std::int64_t right, correct(forward, named(), test_set, tfirst, tcount, 500));
    double tally = static_cast<double>(right);
    if (ranks > 1) TESSERA_RETURN_IF_ERROR(all_reduce_sum(comm, std::span<double>(&tally, 1)).with_context("fit"));
    s.test_accuracy = test_set.size() == 0 ? 0.0 : tally / static_cast<double>(test_set.size());
    result.epochs.push_back(s);
    if (!o.checkpoint_dir.empty()) {
      Status saved = rank == 0 ? save_checkpoint(checkpoint, model, kept, everything(), opt.state(), epoch + 1) : Status::ok();
      if (ranks > 1) {  // the others wait for rank 0's file and stop with it when it failed
        double ok = rank == 0 && saved.is_ok() ? 1 : 0;
        TESSERA_RETURN_IF_ERROR(all_reduce_sum(comm, std::span<double>(&ok, 1)).with_context("fit"));
        if (ok == 0 && saved.is_ok()) saved = io_error("fit: rank 0 could not write the checkpoint " + checkpoint.string());
        *shared_stop = !saved.is_ok();
      }
      TESSERA_RETURN_IF_ERROR(saved);
    }
  }
  result.trained = model;
  result.step_profiles = step.profiles();
  const std::vector<Tensor> values = everything();
  for (std::size_t k = 0; k < kept.size(); ++k) {
    graph::Value& v = result.trained.graph.values[static_cast<std::size_t>(result.trained.graph.find(kept[k]))];
    auto c = std::make_shared<graph::Constant>(*v.constant);
    std::memcpy(c->bytes.data(), values[k].data(), c->bytes.size());
    v.constant = std::move(c);
  }
  return result;
}

}  // namespace

Result<TrainResult> fit(const graph::Model& model, const std::vector<std::string>& parameters, const Dataset& train_set,
                        const Dataset& test_set, const TrainOptions& o) {
  if (!o.comm) {
    const std::unique_ptr<Communicator> one = single_process();
    bool shared = false;
    return fit_on(*one, model, parameters, train_set, test_set, o, &shared);
  }
  bool shared = false;
  Result<TrainResult> r = fit_on(*o.comm, model, parameters, train_set, test_set, o, &shared);
  // A rank that stops alone would leave the others waiting for it; a stop they all saw (a
  // NaN loss, a failed checkpoint) ends them all anyway.
  if (!r.is_ok() && !shared && o.comm->size() > 1) o.comm->abort(r.status().message());
  return r;
}

}  // namespace tessera::train
