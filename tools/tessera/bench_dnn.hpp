// `tessera bench dnn <primitive>`: one case (a primitive with its arguments), the plan that runs
// it on tessera and on oneDNN, and the runner that times both and prints the rows.
// bench_dnn.cpp: the command, the runner, the output; bench_dnn_conv.cpp: convolution and the
// network suites; bench_dnn_ops.cpp: pooling, activations, softmax (and the commands of all
// four memory-bound primitives); bench_dnn_norm.cpp: normalisations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tessera/dnn.hpp>

#include "anchor_onednn.hpp"
#include "bench_common.hpp"

namespace tessera::cli {

// Adds `tessera bench dnn` to `tessera bench`.
void add_bench_dnn_command(CLI::App& bench);

namespace dnn_bench {

// How to run one case on tessera and on oneDNN; built by Case::plan, buffers in `storage`.
struct Plan {
  double work = 0;         // floating-point operations per call, or bytes (bandwidth)
  bool bandwidth = false;  // report GB/s
  double tolerance = 0;    // largest relative difference allowed between the two results
  std::function<Status()> tessera;
  std::string algo;  // tessera's algorithm (convolution), "" otherwise
  nlohmann::json info = nlohmann::json::object();  // more about tessera's choice, for JSON
  onednn::PrimitivePtr anchor;                     // null when oneDNN cannot run the case
  std::string anchor_missing;                      // why not
  // Outputs compared after one run of each: tessera's and the anchor's copy, alike laid out.
  struct Check {
    std::string name;
    const void* tessera;
    const void* anchor;
    DType dtype;
    std::int64_t count;  // elements spanned
  };
  std::vector<Check> checks;
  std::vector<AlignedBuffer> storage;

  // An uninitialised block for `count` elements of `dtype`.
  void* alloc(DType dtype, std::int64_t count, const std::string& what);
  // A block holding uniform random values in [lo, hi] (fixed seed per call order).
  void* random(DType dtype, std::int64_t count, const std::string& what, float lo = -1.0f,
               float hi = 1.0f);
  void check(std::string name, const void* t, const void* a, DType dtype, std::int64_t count) {
    checks.push_back({std::move(name), t, a, dtype, count});
  }
  std::uint32_t seed = 1;
};

// One case: a primitive with its arguments, or one layer of a suite.
struct Case {
  std::string primitive;  // "conv", "pool", "act", "softmax", "norm"
  std::string layer;      // the suite's layer name ("" outside a suite)
  std::string group;      // rows with the same group get a total row ("resnet50 mb1")
  int count = 1;          // how often the layer occurs in its network
  std::string shape;      // the table's shape column
  DType dtype = DType::kF32;
  std::string command;  // the line that replays it (without --threads)
  nlohmann::json args;
  // Builds the plan; `anchor`: also build oneDNN's side. Throws CommandError on a bad case.
  std::function<void(dnn::Handle& h, bool anchor, Plan& p)> plan;
};

// Options every `bench dnn` command takes (BenchOptions::vs: "onednn" or "none").
void add_dnn_bench_options(CLI::App* cmd, BenchOptions& o);
// Times the cases at every thread count and prints rows, totals and a header (or JSON).
void run_cases(const std::vector<Case>& cases, const BenchOptions& o, bool suite);

// ---- Parsing helpers shared by the primitives (throw CommandError, code 2) ---------------
[[noreturn]] void bad(const std::string& message);
// "56x56" -> {56, 56}; each value >= min.
std::vector<std::int64_t> parse_dims(const std::string& flag, const std::string& text,
                                     std::int64_t min);
std::string join_dims(const std::vector<std::int64_t>& v);  // {56, 56} -> "56x56"
DType parse_dnn_dtype(const std::string& text);             // f32, bf16, f16
dnn::Layout parse_layout(const std::string& text);
// The shortest text that reads back as exactly v ("0.01", "1e-05").
std::string format_number(double v);
// Bytes of `count` elements of `dtype`.
double bytes(DType dtype, std::int64_t count);

// ---- The primitives ----------------------------------------------------------------------
void add_conv_command(CLI::App& dnn);
void add_ops_commands(CLI::App& dnn);     // pool, act, softmax, norm
void add_tensor_commands(CLI::App& dnn);  // eltwise, reduce, move (against a memory copy)
void add_rnn_command(CLI::App& dnn);      // rnn (anchor: tools/rnn_vs_torch.py)

// A convolution problem as the command line gives it.
struct ConvProblem {
  dnn::ConvDir dir = dnn::ConvDir::kForward;
  DType dtype = DType::kF32;
  dnn::Layout layout = dnn::Layout::kNCHW;  // of x and y; weights OIHW (nchw) or OHWI (nhwc)
  std::int64_t mb = 1, ic = 0, oc = 0, groups = 1;
  std::vector<std::int64_t> in, kernel, stride, dilation, pad_begin, pad_end;  // per spatial dim
  dnn::ConvAlgo algo = dnn::ConvAlgo::kAuto;

  dnn::ConvDesc desc() const;
  dnn::TensorDesc x_desc() const;
  dnn::TensorDesc w_desc() const;
  dnn::TensorDesc y_desc() const;  // throws CommandError when the output would be empty
  std::string command() const;     // the replay line, as the library logs it
  std::string shape() const;       // "mb1 ic64 oc64 56x56 k3x3 s2x2 p1x1" (defaults left out)
  double flops() const;            // 2 * N * K * output spatial * C/groups * kernel taps
};

// The distinct convolutions of a network at 224x224 (square images and kernels, symmetric
// padding), shared with `tessera tune dnn`.
struct ConvShape {
  const char* layer;
  std::int64_t ic, oc, in, kernel, stride, pad, groups;
  int count;  // occurrences in the network
};
const std::vector<ConvShape>* suite_shapes(std::string_view suite);  // nullptr: unknown
std::string suite_names();                                           // "resnet50, mobilenet_v2"
ConvProblem suite_problem(const ConvShape& s, std::int64_t mb, dnn::ConvDir dir, DType dtype,
                          dnn::Layout layout, dnn::ConvAlgo algo);
// The layers named in `names` (a comma-separated list; all of them when empty).
std::vector<ConvShape> select_layers(const std::vector<ConvShape>& shapes, const std::string& suite,
                                     const std::string& names);
// "1,8" -> {1, 8} (each >= 1).
std::vector<std::int64_t> parse_batches(const std::string& text);

}  // namespace dnn_bench
}  // namespace tessera::cli
