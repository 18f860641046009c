// `tessera bench fft` as users see it: valid JSON with the documented fields, tessera's output
// matching FFTW's where FFTW is installed (the command fails otherwise), replay lines that run
// again unchanged, the suite's cases, and one-line errors for bad options. Problems are tiny
// and timings are never asserted.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using nlohmann::json;
using testing::lines;
using testing::Outcome;
using testing::run;

// As short as a measurement can be.
constexpr const char* kQuick = " --min-time 0 --repeat 1";

// A tuning database of this test's own (measure mode writes one).
std::string db_env() {
  static testing::TempDir dir;
  return "TESSERA_TUNE_DB=" + dir.file("tune.sqlite");
}

// Runs `bench fft <args> --json` (one thread unless args say otherwise) and returns the JSON.
json bench_json(const std::string& args, const std::string& env = "") {
  const bool threads = args.find("--threads") != std::string::npos;
  Outcome r = run("bench fft " + args + kQuick + (threads ? "" : " --threads 1") + " --json",
                  db_env() + " " + env);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  EXPECT_EQ(r.err, "") << args;
  if (r.code != 0) return json::object();
  return json::parse(r.out);  // throws (fails) on invalid JSON
}

std::string replay_args(const std::string& command) {
  const std::string prefix = "tessera bench fft ";
  EXPECT_EQ(command.rfind(prefix, 0), 0u) << command;
  return command.substr(prefix.size());
}

bool has_fftw(const json& top) {
  return top.contains("anchor") && !top["anchor"].is_null();
}

// With FFTW, its result matches tessera's; without, the result says why there is none.
void expect_anchor(const json& top, const json& r) {
  const json& f = r["fftw"];
  if (!has_fftw(top)) {
    EXPECT_FALSE(f["available"].get<bool>()) << r.dump();
    EXPECT_FALSE(f["reason"].get<std::string>().empty()) << r.dump();
    return;
  }
  ASSERT_TRUE(f["available"].get<bool>()) << r.dump();
  EXPECT_TRUE(f["matches"].get<bool>()) << r.dump();
  EXPECT_LE(f["max_rel_error"].get<double>(), f["tolerance"].get<double>()) << r.dump();
  EXPECT_GT(f["median_ms"].get<double>(), 0) << r.dump();
  EXPECT_GT(f["ratio"].get<double>(), 0) << r.dump();
  EXPECT_GE(f["plan_ms"].get<double>(), 0) << r.dump();
  EXPECT_EQ(f["planning"], "FFTW_MEASURE") << r.dump();
  EXPECT_FALSE(r.contains("error")) << r.dump();
}

TEST(BenchFft, JsonHasTheFields) {
  json j = bench_json("--length 64");
  ASSERT_EQ(j["results"].size(), 1u) << j.dump();
  EXPECT_EQ(j["threads"], json::array({1}));
  EXPECT_EQ(j["suite"], false);
  EXPECT_EQ(j["precision"], "single");
  const json& r = j["results"][0];
  EXPECT_EQ(r["transform"], "c2c fwd");
  EXPECT_EQ(r["shape"], "64");
  EXPECT_EQ(r["n"], 64);
  EXPECT_EQ(r["unit"], "GFLOPS");
  EXPECT_DOUBLE_EQ(r["work_per_call"].get<double>(), 5.0 * 64 * 6);
  EXPECT_EQ(r["args"], json({{"kind", "c2c"},
                             {"dir", "fwd"},
                             {"lengths", {64}},
                             {"batch", 1},
                             {"precision", "single"},
                             {"in_place", false},
                             {"planning", "estimate"}}));
  EXPECT_EQ(r["command"],
            "tessera bench fft --lengths 64 --dir fwd --batch 1 --precision single --planning "
            "estimate --threads 1");
  const json& t = r["tessera"];
  EXPECT_GT(t["median_ms"].get<double>(), 0);
  EXPECT_GE(t["median_ms"].get<double>(), t["best_ms"].get<double>());
  EXPECT_GT(t["rate"].get<double>(), 0);
  EXPECT_GE(t["plan_ms"].get<double>(), 0);
  EXPECT_FALSE(t["plan"].get<std::string>().empty());
  expect_anchor(j, r);
  if (has_fftw(j)) {
    EXPECT_EQ(j["anchor"]["name"], "fftw");
    EXPECT_NE(j["anchor"]["version"].get<std::string>().find("fftw-3"), std::string::npos);
    EXPECT_EQ(j["anchor"]["planning"], "FFTW_MEASURE");
  } else {
    EXPECT_FALSE(j["anchor_reason"].get<std::string>().empty());
  }
}

// Every kind and direction, in and out of place, odd and even last lengths (the Hermitian
// input of c2r), primes, ranks 1 to 3, batches, both precisions, measure planning: tessera
// matches FFTW (bench_json fails on the error line otherwise).
TEST(BenchFft, TransformsMatchFftw) {
  for (const char* args : {
           "--length 60 --dir inv",
           "--length 127 --in-place",
           "--length 1000 --real",
           "--length 999 --real --dir inv",
           "--length 16 --real --dir inv --in-place --batch 3",
           "--length 1 --real --dir inv",
           "--lengths 12x10 --real --in-place",
           "--lengths 6x5x7 --real --dir inv --batch 2 --precision double",
           "--lengths 8x12 --batch 4 --precision double --dir inv --in-place",
           "--lengths 4x6x10 --threads 2",
           "--length 210 --planning measure",
       }) {
    json j = bench_json(args);
    ASSERT_EQ(j["results"].size(), 1u) << args;
    SCOPED_TRACE(args);
    expect_anchor(j, j["results"][0]);
  }
}

TEST(BenchFft, RealTransformsCountHalfTheFlops) {
  json j = bench_json("--lengths 8x16 --real --batch 3 --vs none");
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["transform"], "r2c fwd");
  EXPECT_DOUBLE_EQ(j["results"][0]["work_per_call"].get<double>(), 2.5 * 128 * 7 * 3);
  json inv = bench_json("--length 32 --real --dir inv --in-place --vs none");
  EXPECT_EQ(inv["results"][0]["transform"], "c2r inv");
  EXPECT_EQ(inv["results"][0]["shape"], "32 in-place");
}

TEST(BenchFft, VsNoneHasNoAnchor) {
  json j = bench_json("--lengths 9x10 --vs none");
  EXPECT_TRUE(j["anchor"].is_null());
  EXPECT_EQ(j["anchor_reason"], "--vs none");
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["fftw"], json({{"available", false}, {"reason", "--vs none"}}));

  Outcome r = run(std::string("bench fft --length 48 --vs none --threads 1") + kQuick, db_env());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("anchor: none (--vs none)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" n/a "), std::string::npos) << r.out;
}

TEST(BenchFft, TextTableShowsTimesRatioAndReplay) {
  Outcome r = run(std::string("bench fft --lengths 16x16 --threads 1") + kQuick, db_env());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* s : {"tessera bench fft on ", "transform", "tessera us", "FFTW us", "ratio",
                        "rel err", "replay", "\nc2c fwd    16x16 ",
                        " tessera bench fft --lengths 16x16 --dir fwd --batch 1 --precision "
                        "single --planning estimate --threads 1\n"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

// A result's command reproduces the case exactly.
TEST(BenchFft, ReplayCommandsRunAgainUnchanged) {
  for (const char* args : {
           "--length 30 --real --dir inv --in-place --batch 2 --precision double",
           "--lengths 4x8x2 --rank 3 --planning measure",
       }) {
    json first = bench_json(std::string(args) + " --vs none");
    ASSERT_EQ(first["results"].size(), 1u) << args;
    const std::string command = first["results"][0]["command"];
    json again = bench_json(replay_args(command) + " --vs none");
    ASSERT_EQ(again["results"].size(), 1u) << command;
    EXPECT_EQ(again["results"][0]["command"], command);
    EXPECT_EQ(again["results"][0]["args"], first["results"][0]["args"]) << command;
  }
}

TEST(BenchFft, ThreadListRunsEveryCount) {
  json j = bench_json("--length 64 --batch 8 --threads 1,2");
  EXPECT_EQ(j["threads"], json::array({1, 2}));
  ASSERT_EQ(j["results"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(j["results"][i]["threads"], i + 1);
    expect_anchor(j, j["results"][i]);
  }
}

// The suite holds issue 6's sizes, each a valid single case.
TEST(BenchFft, SuiteListsTheIssueSizes) {
  Outcome r = run("bench fft --suite --list --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json cases = json::parse(r.out)["cases"];
  std::map<std::string, int> groups;
  std::set<std::string> commands;
  for (const json& c : cases) {
    ++groups[c["group"].get<std::string>()];
    commands.insert(c["command"].get<std::string>());
    EXPECT_EQ(c["transform"], "c2c fwd");
  }
  EXPECT_EQ(groups,
            (std::map<std::string, int>{
                {"pow2", 17}, {"mixed", 5}, {"prime", 3}, {"2d", 6}, {"3d", 1}, {"batched", 1}}));
  EXPECT_EQ(commands.size(), cases.size());
  for (const char* c : {"--lengths 16 ", "--lengths 1048576 ", "--lengths 15015 ",
                        "--lengths 1155 ", "--lengths 65537 ", "--lengths 2048x2048 ",
                        "--lengths 64x64x64 ", "--lengths 1024 --dir fwd --batch 1000 "})
    EXPECT_TRUE(std::any_of(commands.begin(), commands.end(), [&](const std::string& s) {
      return s.find(c) != std::string::npos;
    })) << c;

  Outcome real = run("bench fft --suite --list --real --precision double --in-place");
  ASSERT_EQ(real.code, 0) << real.err;
  EXPECT_EQ(lines(real.out), 33);
  EXPECT_NE(real.out.find("--lengths 512x512 --real --dir fwd --batch 1 --precision double "
                          "--in-place"),
            std::string::npos)
      << real.out;
  // A listed line runs as a single case.
  json one = bench_json(replay_args(cases[3]["command"]) + " --vs none");
  EXPECT_EQ(one["results"][0]["command"], cases[3]["command"].get<std::string>() + " --threads 1");
}

// With TESSERA_LOG=bench the library may print one `tessera bench fft` line per plan; each
// runs as given.
TEST(BenchFft, LinesTheLibraryLogsReplay) {
  Outcome r = run(std::string("bench fft --lengths 6x10 --real --vs none --threads 1") + kQuick,
                  db_env() + " TESSERA_LOG=bench");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream err(r.err);
  int replayed = 0;
  for (std::string line; std::getline(err, line);) {
    if (line.rfind("tessera bench fft ", 0) != 0) continue;
    json j = bench_json(replay_args(line) + " --vs none");
    EXPECT_EQ(j["results"].size(), 1u) << line;
    ++replayed;
  }
  if (replayed == 0) GTEST_SKIP() << "the FFT library logs no TESSERA_LOG=bench lines";
}

TEST(BenchFft, BadOptionsGiveOneLineAndNonZeroExit) {
  std::map<std::string, std::string> errors;
  for (const char* args : {
           "bench fft",                         // no size, no suite
           "bench fft --length 0",              // bad length
           "bench fft --length abc",            // not a number
           "bench fft --lengths 8xx8",          // bad lengths
           "bench fft --lengths 4x4x4x4",       // rank 4
           "bench fft --length 8 --lengths 8",  // both
           "bench fft --lengths 8x8 --rank 3",  // rank mismatch
           "bench fft --length 8 --dir sideways", "bench fft --length 8 --precision half",
           "bench fft --length 8 --planning patient", "bench fft --length 8 --batch 0",
           "bench fft --length 8 --vs mkl", "bench fft --length 8 --threads 0",
           "bench fft --length 8 --bogus",
           "bench fft --suite --lengths 8x8",           // suite with a size
           "bench fft --list",                          // list without suite
           "bench fft --lengths 100000x100000x100000",  // too many elements
       }) {
    Outcome r = run(std::string(args) + kQuick, db_env());
    EXPECT_NE(r.code, 0) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tessera: ", 0), 0u) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
    errors[args] = r.err;
  }
  // The messages name the option.
  EXPECT_NE(errors["bench fft --length 0"].find("--length"), std::string::npos);
  EXPECT_NE(errors["bench fft --lengths 8xx8"].find("--lengths"), std::string::npos);
  EXPECT_NE(errors["bench fft --lengths 8x8 --rank 3"].find("--rank 3"), std::string::npos);
  EXPECT_NE(errors["bench fft --length 8 --dir sideways"].find("--dir"), std::string::npos);
  EXPECT_NE(errors["bench fft --length 8 --vs mkl"].find("--vs"), std::string::npos);
  EXPECT_NE(errors["bench fft --suite --lengths 8x8"].find("--lengths"), std::string::npos);
}

}  // namespace
}  // namespace tessera
