// tessera: one CLI for the whole stack. Each sub-command lives in its own file.
#include <cstdio>
#include <iostream>

#include <tessera/core/status.hpp>
#include <tessera/version.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tessera: an open, portable deep-learning compute stack", "tessera"};
  app.set_version_flag("--version", std::string("tessera ") + tessera::kVersion + " (" +
                                        tessera::kBuildType + ", " + tessera::kCompiler + ")");
  app.require_subcommand(0, 1);
  tessera::cli::add_bench_command(app);
  tessera::cli::add_conformance_command(app);
  tessera::cli::add_explain_command(app);
  tessera::cli::add_optimize_command(app);
  tessera::cli::add_info_command(app);
  tessera::cli::add_run_command(app);
  tessera::cli::add_selfcheck_command(app);
  tessera::cli::add_train_command(app);
  tessera::cli::add_tune_command(app);
  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::cout << app.help();
      return 0;
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tessera: %s (see 'tessera --help')\n", e.what());
    return 2;
  } catch (const tessera::cli::CommandError& e) {
    std::fprintf(stderr, "tessera: %s\n", e.message.c_str());
    return e.code;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: unexpected error: %s\n", e.what());
    return 1;
  }
  return 0;
}
