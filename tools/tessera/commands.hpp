// The sub-commands of the `tessera` CLI: each file adds one to the app.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera::cli {

void add_bench_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_selfcheck_command(CLI::App& app);
void add_tune_command(CLI::App& app);

// Thrown by a command to exit with a one-line "tessera: <message>" and status `code`.
struct CommandError {
  std::string message;
  int code = 1;
};

}  // namespace tessera::cli
