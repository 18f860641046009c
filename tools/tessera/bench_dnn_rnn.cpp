// `tessera bench dnn rnn ...`: a recurrent network's training step (forward with the reserve,
// then backward) or inference forward, timed. The anchor is PyTorch's CPU LSTM/GRU, timed by
// tools/rnn_vs_torch.py (PyTorch is not linked anywhere), which runs this command with --json
// and prints both times and their ratio.
#include <memory>
#include <random>
#include <vector>

#include "bench_dnn.hpp"
#include "commands.hpp"

namespace tessera::cli::dnn_bench {
namespace {

using nlohmann::json;

struct RnnArgs {
  std::string cell = "lstm", dir = "fwd-bwd";
  std::int64_t seq = 64, batch = 32, input = 512, hidden = 512;
  int layers = 2;
  bool bidirectional = false;
};

void run_rnn(const RnnArgs& a, const BenchOptions& o) {
  check_bench_options(o);
  dnn::RnnDesc d;
  const auto cell = dnn::parse_rnn_cell(a.cell);
  if (!cell) bad("--cell: rnn_tanh, rnn_relu, lstm or gru");
  if (a.dir != "fwd" && a.dir != "fwd-bwd") bad("--dir: fwd or fwd-bwd");
  d.cell = *cell;
  d.input_size = a.input;
  d.hidden_size = a.hidden;
  d.layers = a.layers;
  d.bidirectional = a.bidirectional;
  d.linear_before_reset = d.cell == dnn::RnnCell::kGru;  // PyTorch's GRU
  auto nw = dnn::rnn_weights_size(d);
  if (!nw.is_ok()) bad(nw.status().message());
  auto nr = dnn::rnn_reserve_size(d, a.seq, a.batch);
  if (!nr.is_ok()) bad(nr.status().message());
  const std::int64_t dirs = a.bidirectional ? 2 : 1;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  auto vec = [&](std::int64_t n, bool random) {
    std::vector<float> v(static_cast<std::size_t>(n));
    if (random)
      for (float& e : v) e = u(rng);
    return v;
  };
  auto x = vec(a.seq * a.batch * a.input, true), w = vec(nw.value(), true), y = vec(a.seq * a.batch * dirs * a.hidden, false);
  auto dy = vec(static_cast<std::int64_t>(y.size()), true), res = vec(nr.value(), false), dx = vec(static_cast<std::int64_t>(x.size()), false);
  auto dw = vec(nw.value(), false);
  const bool train = a.dir == "fwd-bwd";
  json rows = json::array();
  const std::string what = "tessera bench dnn rnn --cell " + a.cell + " --seq " + std::to_string(a.seq) + " --batch " +
                           std::to_string(a.batch) + " --input " + std::to_string(a.input) + " --hidden " + std::to_string(a.hidden) +
                           " --layers " + std::to_string(a.layers) + (a.bidirectional ? " --bidirectional" : "") + " --dir " + a.dir;
  Table t({{"case", 70, true}, {"threads", 7}, {"tessera ms", 11}, {"median ms", 10}});
  if (!o.json) t.print_header();
  for (int threads : thread_counts(o)) {
    use_threads(threads);
    dnn::Handle h;
    if (Status s = h.set_num_threads(threads); !s.is_ok()) throw CommandError{s.message(), 1};
    auto step = [&] {
      Status s = dnn::rnn_forward(h, d, a.seq, a.batch, x.data(), nullptr, w.data(), nullptr, nullptr, y.data(), nullptr, nullptr,
                                  train ? res.data() : nullptr);
      if (s.is_ok() && train)
        s = dnn::rnn_backward(h, d, a.seq, a.batch, x.data(), nullptr, w.data(), nullptr, nullptr, res.data(), dy.data(), nullptr,
                              nullptr, dx.data(), nullptr, nullptr, dw.data());
      if (!s.is_ok()) throw CommandError{s.message(), 1};
    };
    step();
    const Timing tm = measure(step, nullptr, o);
    const std::string line = what + " --threads " + std::to_string(threads);
    if (o.json) {
      rows.push_back({{"command", line}, {"threads", threads}, {"best_ms", tm.best_s * 1e3}, {"median_ms", tm.median_s * 1e3}});
    } else {
      t.print_row({a.cell + " " + a.dir + " seq " + std::to_string(a.seq) + " batch " + std::to_string(a.batch) + " hidden " +
                       std::to_string(a.hidden) + " layers " + std::to_string(a.layers) + (a.bidirectional ? " bidir" : ""),
                   std::to_string(threads), format_rate(tm.best_s * 1e3), format_rate(tm.median_s * 1e3)});
    }
  }
  if (o.json) std::printf("%s\n", json{{"results", rows}}.dump(2).c_str());
}

}  // namespace

void add_rnn_command(CLI::App& dnn) {
  auto args = std::make_shared<RnnArgs>();
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = dnn.add_subcommand("rnn", "RNN / LSTM / GRU training step or inference forward (anchor: tools/rnn_vs_torch.py)");
  cmd->add_option("--cell", args->cell, "rnn_tanh, rnn_relu, lstm (default), gru");
  cmd->add_option("--seq", args->seq, "Sequence length (default 64)");
  cmd->add_option("--batch", args->batch, "Batch (default 32)");
  cmd->add_option("--input", args->input, "Input size (default 512)");
  cmd->add_option("--hidden", args->hidden, "Hidden size (default 512)");
  cmd->add_option("--layers", args->layers, "Layers (default 2)");
  cmd->add_flag("--bidirectional", args->bidirectional, "Both directions");
  cmd->add_option("--dir", args->dir, "fwd-bwd (default: forward with the reserve, then backward) or fwd (inference)");
  add_bench_options(cmd, *opts);
  cmd->callback([args, opts] { run_rnn(*args, *opts); });
}

}  // namespace tessera::cli::dnn_bench
