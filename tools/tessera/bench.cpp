// `tessera bench <library>`: side-by-side measurements of tessera and the libraries it is
// compared with (the anchors), on this machine, in one run.
#include "bench_common.hpp"
#include "bench_dnn.hpp"
#include "commands.hpp"

namespace tessera::cli {

void add_bench_fft_command(CLI::App& bench);  // bench_fft.cpp

void add_bench_command(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Measure tessera against other libraries on this machine");
  bench->require_subcommand(1);
  add_bench_blas_command(*bench);
  add_bench_dnn_command(*bench);
  add_bench_fft_command(*bench);
}

}  // namespace tessera::cli
