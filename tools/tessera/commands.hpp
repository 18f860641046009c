// The sub-commands of the `tessera` CLI: each file adds one to the app.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <random>

#include <tessera/session.hpp>

namespace tessera::cli {

void add_bench_command(CLI::App& app);
void add_conformance_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_optimize_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_selfcheck_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_tune_command(CLI::App& app);
// `tessera tune dnn` (tune_dnn.cpp), under `tune`; db_path gives the database `--db` selects.
void add_tune_dnn_command(CLI::App& tune, std::function<std::string()> db_path);
// The `tessera bench dnn conv ...` line of a convolution's tuning-database signature ("" when
// the signature is not one).
std::string conv_replay_line(const std::string& signature);

// A tensor for an input given no file (run.cpp): symbolic and unknown dims take `batch` (the
// first) or 1; floats uniform in [-1, 1), integers in [0, 10), bools half true.
Tensor random_input(const exec::IoInfo& io, std::int64_t batch, std::mt19937& rng);
// A session's memory plan in one line: arena vs the naive sum, counts.
std::string memory_plan_line(const exec::MemoryPlanReport& p);
// Profiled runs as a Chrome trace (run.cpp), written whole or not at all.
void write_trace(const std::string& file, const std::vector<exec::RunProfile>& runs);

// Thrown by a command to exit with a one-line "tessera: <message>" and status `code`.
struct CommandError {
  std::string message;
  int code = 1;
};

}  // namespace tessera::cli
