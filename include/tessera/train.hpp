// tessera training (docs/train.md): reverse-mode differentiation of a model's graph, data (IDX,
// .npy, CSV; augmentation, prefetching), optimisers and schedules, a layer builder and ONNX
// classifiers, fit() with checkpoints, and data parallelism across processes (MPI).
//
//   graph::Model m = graph::import_onnx("net.onnx").value_or_throw();
//   graph::infer_types(m);
//   graph::Model t = train::differentiate(m, "loss", {"w1", "b1"}).value_or_throw();
//   exec::Session s = exec::Session::create(t).value_or_throw();
//   auto out = s.run({{"x", x}, {"labels", y}, {"w1", w1}, {"b1", b1}});  // loss, w1_grad, b1_grad
//
// The gradient graph is an ordinary model: the backward nodes are ai.onnx ops (Gemm, MatMul,
// Transpose, ReduceSum, Reshape, Mul, ...) and tessera's gradient ops (ConvGradData,
// ConvGradWeight, PoolGrad, ActivationGrad, BatchNormGrad, LayerNormGrad, RNNGrad, ...:
// docs/exec.md), so it goes through the same passes, memory plan and executor as inference.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/status.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/graph.hpp"
#include "tessera/session.hpp"

namespace tessera::train {

// ---- data -------------------------------------------------------------------------------------

// Labelled samples: images f32 [N, ...] (images [N, C, H, W], in [0, 1] when read from u8;
// feature rows [N, F] from CSV), labels i64 [N] (class numbers).
struct Dataset {
  Tensor images;
  Tensor labels;
  std::int64_t size() const { return labels.defined() ? labels.numel() : 0; }
};

// Reads an IDX pair (the MNIST / Fashion-MNIST format: big-endian header, magic 0x0803 for
// u8 images [N, H, W], 0x0801 for u8 labels [N]), gzip-compressed (.gz) or not. Images become
// [N, 1, H, W] f32 divided by 255. A missing or unreadable file, a bad magic number, a header
// that does not match the file's length, or label and image counts that differ is an error
// naming the file.
Result<Dataset> read_idx(const std::filesystem::path& images, const std::filesystem::path& labels);

// Fashion-MNIST's training (60000) or test (10000) set from `dir` (default: Debian's
// dataset-fashion-mnist, /usr/share/datasets/fashion-mnist).
Result<Dataset> fashion_mnist(bool train, const std::filesystem::path& dir = "/usr/share/datasets/fashion-mnist");

// A pair of .npy files: samples of u8 (divided by 255), f32 or f64 with a leading sample axis
// ([N, H, W] gains a channel axis: [N, 1, H, W]) and labels of an integer type [N], >= 0. A
// wrong dtype, rank, a negative label or counts that differ is an error naming the file.
Result<Dataset> read_npy_dataset(const std::filesystem::path& samples, const std::filesystem::path& labels);
// A CSV table of numbers, one sample per row: the features [N, F] and the label column (by
// default the last; negative counts from the end), class numbers >= 0. A first row with no
// number is a header; empty lines are skipped; quoting is not supported. A row of another
// length, a field that is not a number or a label that is not a class number is an error
// naming the line and column.
Result<Dataset> read_csv(const std::filesystem::path& path, int label_column = -1);
// The training (or test) set in `dir`: train_images.npy + train_labels.npy (test_...), else
// train.csv (test.csv), else the IDX files of (Fashion-)MNIST.
Result<Dataset> load_dataset(const std::filesystem::path& dir, bool train);

// Image augmentation of a batch [N, C, H, W] in place: a random crop (the image padded with
// zeros by crop_pad on each side, then cut back to its size at a random offset) and a random
// horizontal flip (half of the samples). Each sample's choices come from (seed, ids[i]), its
// index in the dataset: the same for any batching, rank count or thread count.
struct Augmentation {
  std::int64_t crop_pad = 0;
  bool flip = false;
};
Status augment(Dataset& batch, std::span<const std::int64_t> ids, const Augmentation& a, std::uint64_t seed);

// Samples [first, first + count) of `order` (indices into d) gathered into a batch.
Result<Dataset> gather_batch(const Dataset& d, const std::vector<std::int64_t>& order, std::int64_t first, std::int64_t count);

// A permutation of [0, n) from a seed: the same seed gives the same order on every machine
// (splitmix64 keys, sorted).
std::vector<std::int64_t> shuffled(std::int64_t n, std::uint64_t seed);

// ---- optimisers ---------------------------------------------------------------------------------

// Updates parameters in place from their gradients, with PyTorch's formulas:
//   sgd:   g = grad + weight_decay p; b = momentum b + g (b = g at the first step);
//          p -= lr (nesterov ? g + momentum b : b)            (momentum 0: p -= lr g)
//   adamw: p *= 1 - lr weight_decay; m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
//          p -= lr (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
// Parameters and gradients are f32 tensors of equal dims, in the same order at every step.
struct OptimizerOptions {
  std::string kind = "sgd";  // "sgd" or "adamw"
  float lr = 0.01f;
  float momentum = 0.0f;
  bool nesterov = false;
  float weight_decay = 0.0f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};
class Optimizer {
 public:
  static Result<Optimizer> create(const OptimizerOptions& o);
  Status step(std::vector<Tensor>& params, const std::vector<Tensor>& grads);
  void set_lr(float lr) { o_.lr = lr; }
  float lr() const { return o_.lr; }
  std::int64_t steps() const { return t_; }
  // The state checkpoints keep: the step count and, per parameter, the momentum buffer or
  // Adam's first and second moments (empty until the first step that uses them).
  struct State {
    std::int64_t steps = 0;
    std::vector<std::vector<float>> m, v;
  };
  const State state() const { return State{t_, m_, v_}; }
  Status restore(State s);

 private:
  explicit Optimizer(const OptimizerOptions& o) : o_(o) {}
  OptimizerOptions o_;
  std::int64_t t_ = 0;
  std::vector<std::vector<float>> m_, v_;  // per parameter: momentum buffer / Adam's moments
};

// The learning rate of optimiser step `step` (from 0) of a run of `steps_per_epoch` x `epochs`
// steps, from the base rate: "constant"; "step": times gamma every `step_size` epochs;
// "cosine": from base down to min_lr over the run, (min + (base - min)(1 + cos(pi t / T)) / 2).
// A linear warm-up multiplies the first `warmup` steps by (step + 1) / warmup.
struct LrSchedule {
  std::string kind = "constant";
  std::int64_t warmup = 0;     // steps
  std::int64_t step_size = 1;  // epochs ("step")
  float gamma = 0.1f;          // "step"
  float min_lr = 0.0f;         // "cosine"
};
Status check_schedule(const LrSchedule& s);
float scheduled_lr(const LrSchedule& s, float base, std::int64_t step, std::int64_t steps_per_epoch, std::int64_t epochs);

// Scales the gradients so that their joint L2 norm is at most max_norm (PyTorch's
// clip_grad_norm_: by max_norm / (norm + 1e-6) when that is below 1); returns the norm before,
// summed in double in a fixed order (the same for any thread count).
Result<double> clip_grad_norm(std::vector<Tensor>& grads, double max_norm);

// ---- model definition ---------------------------------------------------------------------------

// Layers appended one after another to a classifier over images [N, C, H, W] (or feature rows
// [N, F]: linear layers only), built as a graph
// (ai.onnx ops, opset 17) whose parameters are initializers that are also graph inputs (so a
// session takes updated values): weights from Kaiming-uniform (bound sqrt(6 / fan_in)), biases
// zero, drawn from `seed` (the same seed gives the same bits everywhere).
//
//   auto m = NetBuilder({1, 28, 28}, 7).conv(6, 5, 1, 2).relu().max_pool(2).conv(16, 5).relu()
//                .max_pool(2).flatten().linear(120).relu().linear(84).relu().linear(10).build();
//
// The model's inputs: "images" [N, C, H, W] f32 and "labels" [N] i64; outputs: "loss" (softmax
// cross-entropy, mean over the batch) and "scores" [N, classes].
class NetBuilder {
 public:
  NetBuilder(std::vector<std::int64_t> image_dims, std::uint64_t seed);
  NetBuilder& conv(std::int64_t channels, std::int64_t kernel, std::int64_t stride = 1, std::int64_t pad = 0);
  NetBuilder& linear(std::int64_t features);
  NetBuilder& relu();
  // An activation by its ONNX op: Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Elu, Selu, Celu,
  // Softplus, Softsign, HardSigmoid, HardSwish, Mish (their default attributes).
  NetBuilder& activation(const std::string& op);
  // The initialiser of the conv and linear weights made after it: Kaiming-uniform (the
  // default, bound sqrt(6 / fan_in)) or Xavier-uniform (bound sqrt(6 / (fan_in + fan_out))).
  enum class WeightInit { kKaimingUniform, kXavierUniform };
  NetBuilder& init(WeightInit w);
  NetBuilder& max_pool(std::int64_t kernel);  // stride = kernel
  // Batch normalisation over the channels: scale (ones) and bias (zeros) are parameters; the
  // running mean (zeros) and variance (ones) are initializers that fit keeps as state (the
  // model is built in inference mode; fit trains it in training mode).
  NetBuilder& batch_norm();
  // A residual block (He et al.): conv 3x3 (stride) -> [batch norm] -> relu -> conv 3x3 ->
  // [batch norm], plus the block's input (through a 1x1 convolution of that stride [and batch
  // norm] when the channels or the size change), then relu.
  NetBuilder& residual(std::int64_t channels, std::int64_t stride = 1, bool norm = true);
  NetBuilder& global_avg_pool();  // [C, H, W] -> [C]
  // An LSTM over the rows (images [C, H, W]: H steps of C*W features; or sequences [T, F]);
  // its last hidden state [hidden] goes on. Weights U(-1/sqrt(hidden), 1/sqrt(hidden)), biases 0.
  NetBuilder& lstm(std::int64_t hidden);
  NetBuilder& layer_norm();  // over a flat input; scale ones and bias zeros are parameters
  // Dropout (inference mode in the model; fit trains it with masks drawn per step).
  NetBuilder& dropout(float ratio);
  NetBuilder& flatten();
  // The model, or the first error of a layer that does not fit what came before.
  Result<graph::Model> build();
  // The parameters' names, in the order they were made.
  const std::vector<std::string>& parameters() const { return params_; }

 private:
  // An f32 initializer named layer<N>.<kind>: Kaiming-uniform for fan_in > 0, else `fill`.
  std::string add_initializer(const std::string& kind, const std::vector<std::int64_t>& dims, std::int64_t fan_in, float fill);
  std::string add_param(const std::string& kind, const std::vector<std::int64_t>& dims, std::int64_t fan_in, float fill = 0.0f);
  std::string add_state(const std::string& kind, const std::vector<std::int64_t>& dims, float fill);
  // A node of one output (at position `slot`, the others omitted), the running value from then on.
  std::string add_node(const std::string& op, std::vector<std::string> inputs, std::map<std::string, graph::Attribute> attrs = {}, std::size_t slot = 0);
  std::string add_ints(const std::string& kind, const std::vector<std::int64_t>& v);  // an i64 initializer
  std::string add_weight(const std::vector<std::int64_t>& dims, std::int64_t fan_in, std::int64_t fan_out);
  graph::Model m_;
  std::vector<std::int64_t> dims_;  // the running value's dims without the batch
  std::string x_;                   // the running value's name
  std::vector<std::string> params_;
  std::uint64_t seed_, draws_ = 0;
  WeightInit init_ = WeightInit::kKaimingUniform;
  int layer_ = 0;
  std::string error_;
};

// ---- data parallelism ---------------------------------------------------------------------------

// The processes of a data-parallel run, ranks 0 .. size-1, and the one operation the collectives
// below are built from. A rank that fails calls abort(): the others' pending and later
// exchanges fail (thread groups) or the whole job ends (MPI) instead of waiting forever.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "single process", "MPI (Open MPI v4.1.4), 2 ranks", ...
  // Sends `send` to rank `to` (none when to < 0) and receives one message of exactly
  // recv.size() bytes from rank `from` (none when from < 0), blocking until both are done.
  // Messages between two ranks arrive in the order they were sent.
  virtual Status exchange(int to, std::span<const std::byte> send, int from, std::span<std::byte> recv) = 0;
  virtual void abort(const std::string& why) = 0;
};

// A communicator of one rank.
std::unique_ptr<Communicator> single_process();
// `n` communicators of one group whose ranks are threads of this process (tests; a machine
// without MPI): rank k is element k.
std::vector<std::unique_ptr<Communicator>> thread_group(int n);
// The ranks mpirun started (MPI_COMM_WORLD). MPI is initialised by the first call (and
// finalised at exit); kUnsupported when tessera was built without MPI.
Result<std::unique_ptr<Communicator>> mpi_world();
// Whether this process was started by mpirun / mpiexec (Open MPI's or a PMI environment).
bool launched_by_mpi();

// Sums `data` element-wise over the ranks, in place on each. A ring: reduce-scatter, then
// all-gather, each chunk summed in one fixed rank order and then copied, so every rank gets
// the same bits, and the same bits on every run with the same number of ranks.
Status all_reduce_sum(Communicator& c, std::span<float> data);
Status all_reduce_sum(Communicator& c, std::span<double> data);
// Copies root's `data` to every rank (along the ring).
Status broadcast(Communicator& c, std::span<std::byte> data, int root);

// ---- models from ONNX ---------------------------------------------------------------------------

// A classifier (one f32 input [N, ...] that is not an initializer, the first output its scores
// [N, classes]) in the form fit trains: the input renamed "images", the scores "scores", a new
// i64 input "labels" [N] and a SoftmaxCrossEntropyLoss (mean) "loss"; outputs loss, scores. When
// the output is a Softmax's, its input is the scores (the Softmax is left unused). A model that
// is already in that form is returned as it is. Other forms, or names that clash,
// are an error saying what is expected.
Result<graph::Model> with_classifier_loss(const graph::Model& m);
// The initializers fit should train: the f32 ones except BatchNormalization's running
// statistics (state) and a checkpoint's own (tessera.checkpoint.*); they become graph inputs
// with their values as defaults.
std::vector<std::string> trainable_parameters(graph::Model& m);

// ---- training -----------------------------------------------------------------------------------

struct TrainOptions {
  int epochs = 1;  // in all: a resumed run trains the epochs the checkpoint has not done
  // When set, after every epoch the parameters, the optimiser's state and the epoch are
  // written to <checkpoint_dir>/checkpoint.onnx (a new file renamed over the old one, so a
  // crash mid-save leaves the previous checkpoint whole); with `resume`, fit starts from it.
  std::filesystem::path checkpoint_dir;
  bool resume = false;
  std::int64_t batch = 64;
  OptimizerOptions optimizer;
  LrSchedule schedule;     // of optimizer.lr
  float clip_norm = 0.0f;  // > 0: the gradients' joint norm clipped to it before each step
  std::uint64_t seed = 1;  // the order of the samples in each epoch, and the augmentation
  Augmentation augmentation;  // of each training batch, drawn anew every epoch
  bool prefetch = true;       // gather (and augment) the next batch on a thread while this one trains
  int threads = 0;         // per primitive; 0: the thread pool
  // Data parallelism: with a communicator of several ranks, every rank runs fit on the same
  // data and model; each takes its shard of every batch (`batch` is the global batch), and
  // the gradients are summed over the ranks (weighted by shard size) in buckets of
  // `bucket_bytes`, each reduced by a thread of its own as soon as the backward pass has made
  // its gradients, while the rest of the backward pass runs. Every rank then takes the same
  // optimiser step. The test accuracy is measured in shards too. Rank 0 writes the
  // checkpoints. Null: one process.
  Communicator* comm = nullptr;
  std::size_t bucket_bytes = 1 << 20;
  // Called after each batch: epoch, batch index, batches per epoch, the batch's loss.
  std::function<void(int, std::int64_t, std::int64_t, float)> on_batch;
  // > 0: the training steps (forward, backward and state updates, one run of the gradient
  // model) of this many batches after the first (which plans the memory) are profiled node by
  // node into TrainResult::step_profiles. The optimiser's update is not in them.
  int profile_steps = 0;
};
struct EpochStats {
  int epoch = 0;  // counted from 1 (a resumed run starts past the checkpoint's)
  double mean_loss = 0;
  double seconds = 0;
  double samples_per_second = 0;
  double test_accuracy = 0;  // on `test` after the epoch
};
struct TrainResult {
  std::vector<EpochStats> epochs;
  graph::Model trained;  // the model with the trained parameters as its initializers
  std::vector<exec::RunProfile> step_profiles;  // with TrainOptions::profile_steps
};
// Trains `model` (a NetBuilder model, or any model with inputs "images" and "labels" and
// outputs "loss" and "scores") on `train_set` with mini-batches in a seeded order (the last
// partial batch is dropped), differentiating the loss with respect to `parameters`; the test
// accuracy is measured after each epoch. BatchNormalization nodes (inference mode in `model`)
// train in training mode; their running statistics are state: updated every step, used by the
// test accuracy, checkpointed and written into the trained model. A NaN or infinite loss stops training with an error
// naming the epoch and batch.
Result<TrainResult> fit(const graph::Model& model, const std::vector<std::string>& parameters, const Dataset& train_set,
                        const Dataset& test_set, const TrainOptions& options);
// The checkpoint fit writes: `model` with `parameters` set to `values`, and the optimiser's
// state and the number of epochs done as initializers named "tessera.checkpoint.*" (the
// file is an ONNX model that tessera run and other runtimes load). Written atomically.
Status save_checkpoint(const std::filesystem::path& path, const graph::Model& model, const std::vector<std::string>& parameters,
                       const std::vector<Tensor>& values, const Optimizer::State& state, std::int64_t epochs_done);
// Reads one back for `model`: the parameters' values (in `parameters` order), the optimiser's
// state and the epochs done. A file that is not a checkpoint, or one of another model (other
// ops, a parameter missing or of other dims), is an error naming the file and the difference.
struct Checkpoint {
  std::vector<Tensor> values;
  Optimizer::State state;
  std::int64_t epochs_done = 0;
};
Result<Checkpoint> load_checkpoint(const std::filesystem::path& path, const graph::Model& model, const std::vector<std::string>& parameters);

// The fraction of `d` whose largest score is the label, batch by batch.
Result<double> accuracy(exec::Session& forward, const std::vector<exec::NamedTensor>& parameters, const Dataset& d, std::int64_t batch);

// ---- differentiation ----------------------------------------------------------------------------

// The model extended with the gradient of the scalar value `loss` (one element) with respect
// to each value named in `wrt` (initializers or graph inputs, f32). The result's outputs are
// the loss, then d loss / d wrt[i] as "<wrt[i]>_grad" (zeros where the loss does not depend on
// it); initializers named in `wrt` become graph inputs that keep their value as the default,
// so a training loop can pass updated parameters to each run. `model` must have inferred types
// (graph::infer_types).
//
// Differentiated ops: Add, Sub, Mul, Div (NumPy broadcasting: the gradient is summed over the
// broadcast axes), Neg, Gemm, MatMul (rank >= 2), Conv (2-D and 1-D/3-D, groups, bias),
// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, the activations Relu, LeakyRelu,
// Sigmoid, Tanh, Elu, Softplus, Softsign, Gelu, HardSigmoid, HardSwish, Mish, Selu, Celu,
// Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Identity, ReduceSum and ReduceMean (known
// dims), SoftmaxCrossEntropyLoss (no weights), BatchNormalization in training mode (X, scale,
// bias; the batch's statistics), LayerNormalization (scale and bias of the normalised dims; the
// node gains its Mean and InvStdDev outputs), Dropout (the identity, or in training mode with a
// constant ratio the node's mask over 1 - ratio: the node gains its mask output), Softmax and
// LogSoftmax (opset 13+), Exp, Log, Sqrt, Abs, Reciprocal, Pow by a constant scalar, Concat,
// Split, Slice (constant starts/ends/axes, unit steps), Pad (constant mode and pads), RNN,
// LSTM and GRU (X, W, R, B, P, the initial states; from Y, Y_h and Y_c), Gather (the data:
// embeddings), InstanceNormalization, ReduceMax and ReduceMin (to every tie),
// NegativeLogLikelihoodLoss (no weights). A node on a path from a `wrt` value to the loss
// with another op is kUnsupported naming the node; so is a `wrt` name the graph lacks, or a
// loss that is not one f32 element.
Result<graph::Model> differentiate(const graph::Model& model, const std::string& loss, const std::vector<std::string>& wrt);

}  // namespace tessera::train
