// `tessera tune list|explain|export|import|clear`: the tuning database from the command line;
// `tessera tune blas` measures GEMM blocking sizes and stores them there; `tessera tune dnn`
// (tune_dnn.cpp) runs convolution Find mode over a network suite.
// `--db PATH` (anywhere after `tune`) overrides the default path (tune::default_db_path()).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <tessera/blas.hpp>
#include <tessera/tune/tune_db.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

struct TuneOptions {
  std::string db;
  tune::Filter filter;
  bool json = false;
  bool yes = false;
  std::string output;
  std::string input;
};

[[noreturn]] void fail(const Status& status) {
  throw CommandError{status.message(), 1};
}

std::string db_path(const TuneOptions& o) {
  return o.db.empty() ? tune::default_db_path() : o.db;
}

tune::TuneDb open_db(const std::string& path) {
  auto db = tune::TuneDb::open(path);
  if (!db.is_ok()) fail(db.status());
  return std::move(db).value();
}

// Reading commands do not create a database that is not there yet.
bool db_missing(const std::string& path) {
  std::error_code ec;
  return !std::filesystem::exists(path, ec);
}

std::vector<tune::TuneRecord> list_entries(const TuneOptions& o) {
  const std::string path = db_path(o);
  if (db_missing(path)) return {};
  auto records = open_db(path).list(o.filter);
  if (!records.is_ok()) fail(records.status());
  return std::move(records).value();
}

bool has_filter(const tune::Filter& f) {
  return !f.library.empty() || !f.primitive.empty() || !f.device.empty();
}

void print_nothing_found(const TuneOptions& o) {
  const std::string path = db_path(o);
  if (db_missing(path))
    std::cout << "no tuning entries (" << path << " does not exist yet)\n";
  else if (has_filter(o.filter))
    std::cout << "no tuning entries match the filter in " << path << "\n";
  else
    std::cout << "no tuning entries in " << path << "\n";
}

std::string winner_time(const tune::TuneRecord& r) {
  for (const tune::Candidate& c : r.candidates) {
    if (c.accepted && c.solution == r.solution && c.params == r.params) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", c.median_us);
      return buf;
    }
  }
  return "-";
}

void run_list(const TuneOptions& o) {
  if (o.json) {
    const std::string path = db_path(o);
    auto db = open_db(db_missing(path) ? ":memory:" : path);
    auto text = db.export_json(o.filter);
    if (!text.is_ok()) fail(text.status());
    std::cout << *text;
    return;
  }
  std::vector<tune::TuneRecord> records = list_entries(o);
  if (records.empty()) return print_nothing_found(o);
  std::vector<std::vector<std::string>> rows = {{"LIBRARY", "PRIMITIVE", "SIGNATURE", "VERSION",
                                                 "DETERMINISM", "WINNER", "TIME_US", "DEVICE"}};
  for (const tune::TuneRecord& r : records) {
    std::string winner = r.solution;
    if (r.params != "{}") winner += " " + r.params;
    rows.push_back({r.key.library, r.key.primitive, r.key.signature, r.key.version,
                    r.key.determinism, winner, winner_time(r), r.key.device});
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  }
  std::cout << records.size() << (records.size() == 1 ? " entry" : " entries") << " in "
            << db_path(o) << "\n";
}

void run_explain(const TuneOptions& o) {
  std::vector<tune::TuneRecord> records = list_entries(o);
  if (records.empty()) return print_nothing_found(o);
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (i > 0) std::cout << "\n";
    std::cout << tune::explain(records[i]);
    if (records[i].key.library == "dnn" && records[i].key.primitive == "conv")
      if (std::string line = conv_replay_line(records[i].key.signature); !line.empty())
        std::cout << "  replay       " << line << "\n";
  }
}

// Writes `text` to `path` through a temporary file in the same directory and a rename, so a
// reader never sees half a file.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw CommandError{"cannot write " + tmp, 1};
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw CommandError{"cannot rename " + tmp + " to " + path + ": " + ec.message(), 1};
  }
}

void run_export(const TuneOptions& o) {
  const std::string path = db_path(o);
  auto db = open_db(db_missing(path) ? ":memory:" : path);
  auto text = db.export_json(o.filter);
  if (!text.is_ok()) fail(text.status());
  if (o.output.empty() || o.output == "-") {
    std::cout << *text;
    return;
  }
  write_atomically(o.output, *text);
  auto n = db.count(o.filter);
  std::cout << "exported " << (n.is_ok() ? *n : 0) << " entries to " << o.output << "\n";
}

void run_import(const TuneOptions& o) {
  std::string text;
  if (o.input == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(o.input, std::ios::binary);
    if (!in) throw CommandError{"cannot read " + o.input, 1};
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw CommandError{"cannot read " + o.input, 1};
    text = ss.str();
  }
  const std::string path = db_path(o);
  auto n = open_db(path).import_json(text);
  if (!n.is_ok()) fail(n.status());
  std::cout << "imported " << *n << (*n == 1 ? " entry" : " entries") << " into " << path << "\n";
}

void run_clear(const TuneOptions& o) {
  const std::string path = db_path(o);
  if (db_missing(path)) {
    std::cout << "nothing to clear (" << path << " does not exist)\n";
    return;
  }
  tune::TuneDb db = open_db(path);
  if (!has_filter(o.filter) && !o.yes) {
    auto n = db.count();
    if (!n.is_ok()) fail(n.status());
    if (*n == 0) {
      std::cout << "no tuning entries in " << path << "\n";
      return;
    }
    throw CommandError{"refusing to clear all " + std::to_string(*n) + " entries of " + path +
                           " without --yes (or narrow it with --library/--primitive/--device)",
                       1};
  }
  auto n = db.clear(o.filter);
  if (!n.is_ok()) fail(n.status());
  std::cout << "cleared " << *n << (*n == 1 ? " entry" : " entries") << " from " << path << "\n";
}

struct TuneBlasOptions {
  std::vector<std::string> dtypes;
  std::int64_t size = 1024;
  double min_time = 0.05;
  bool dry_run = false;
  bool json = false;
};

void run_tune_blas(const TuneOptions& o, const TuneBlasOptions& b) {
  blas::GemmTuneOptions opt;
  if (!b.dtypes.empty()) opt.dtypes = b.dtypes;
  opt.size = b.size;
  opt.min_seconds_per_candidate = b.min_time;
  opt.write = !b.dry_run;
  opt.db_path = db_path(o);
  blas::Handle h;
  auto results = blas::tune_gemm_blocking(h, opt);
  if (!results.is_ok()) fail(results.status());
  if (b.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : *results)
      out.push_back({{"dtype", r.dtype}, {"kernel", r.kernel}, {"heuristic", r.heuristic},
                     {"chosen", r.chosen}, {"heuristic_gflops", r.heuristic_gflops},
                     {"chosen_gflops", r.chosen_gflops}, {"candidates", r.candidates}});
    std::cout << out.dump(2) << "\n";
    return;
  }
  for (const auto& r : *results)
    std::printf("%-5s %-30s heuristic %-24s %7.1f GFLOPS -> chosen %-24s %7.1f GFLOPS (%d candidates)\n",
                r.dtype.c_str(), r.kernel.c_str(), r.heuristic.c_str(), r.heuristic_gflops,
                r.chosen.c_str(), r.chosen_gflops, r.candidates);
  if (!b.dry_run) std::printf("stored in %s\n", db_path(o).c_str());
}

void add_filter_options(CLI::App* cmd, TuneOptions& o) {
  cmd->add_option("--library", o.filter.library, "Only this library (exact: blas, fft, dnn)");
  cmd->add_option("--primitive", o.filter.primitive, "Only this primitive (exact: gemm, ...)");
  cmd->add_option("--device", o.filter.device, "Only devices whose fingerprint contains this");
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* tune = app.add_subcommand("tune", "Inspect and edit the tuning database");
  tune->require_subcommand(1);
  // Inherited by the sub-commands: `tessera tune list --db x` works as well as `tune --db x list`.
  tune->fallthrough();
  tune->add_option("--db", o->db, "Tuning database (default: $TESSERA_TUNE_DB, else the cache)");

  CLI::App* list = tune->add_subcommand("list", "One line per entry: key, winner and its time");
  add_filter_options(list, *o);
  list->add_flag("--json", o->json, "Print the entries in the export format");
  list->callback([o] { run_list(*o); });

  CLI::App* explain =
      tune->add_subcommand("explain", "Every candidate of each entry, its time and verdict");
  add_filter_options(explain, *o);
  explain->callback([o] { run_explain(*o); });

  CLI::App* exp = tune->add_subcommand("export", "Write the entries as JSON (docs/tune.md)");
  add_filter_options(exp, *o);
  exp->add_option("-o,--output", o->output, "Output file (default: stdout), written atomically");
  exp->callback([o] { run_export(*o); });

  CLI::App* imp = tune->add_subcommand("import", "Add entries from an export; replaces equal keys");
  imp->add_option("file", o->input, "JSON file written by `tessera tune export` ('-': stdin)")
      ->required();
  imp->callback([o] { run_import(*o); });

  CLI::App* clear = tune->add_subcommand("clear", "Delete entries (all of them needs --yes)");
  add_filter_options(clear, *o);
  clear->add_flag("--yes", o->yes, "Confirm clearing every entry when no filter is given");
  clear->callback([o] { run_clear(*o); });

  auto bo = std::make_shared<TuneBlasOptions>();
  CLI::App* blas_cmd = tune->add_subcommand(
      "blas", "Search the GEMM blocking sizes for this machine and store them");
  blas_cmd->add_option("--dtype", bo->dtypes, "f32, f64, bf16, int8 (default: all)")
      ->delimiter(',');
  blas_cmd->add_option("--size", bo->size, "Tune on size x size x size gemm (default 1024)");
  blas_cmd->add_option("--min-time", bo->min_time, "Seconds of timing per candidate (default 0.05)");
  blas_cmd->add_flag("--dry-run", bo->dry_run, "Measure and report, store nothing");
  blas_cmd->add_flag("--json", bo->json, "Print the results as JSON");
  blas_cmd->callback([o, bo] { run_tune_blas(*o, *bo); });

  add_tune_dnn_command(*tune, [o] { return db_path(*o); });
}

}  // namespace tessera::cli
