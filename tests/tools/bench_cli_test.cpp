// `tessera bench blas` as users see it: valid JSON with the documented fields, one-line errors,
// replay lines that run again unchanged, and tessera's results matching every anchor's on
// small cases of every op (the cross-check the command prints warnings for). No timings are
// asserted.
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "cli_run.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using nlohmann::json;

using testing::Outcome;
using testing::lines;
using testing::run;

// As short as a measurement can be: one timed sample per library.
constexpr const char* kQuick = " --min-time 0 --repeat 1";

// Runs `bench blas <args> --json` and returns the JSON (a failed expectation if it is not).
json bench_json(const std::string& args, const std::string& env = "") {
  Outcome r = run("bench blas " + args + kQuick + " --json", env);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  EXPECT_EQ(r.err, "") << args;  // no warning: tessera matches every anchor
  if (r.code != 0) return json::object();
  return json::parse(r.out);  // throws (fails) on invalid JSON
}

// The arguments of a replay line after "tessera bench blas ".
std::string replay_args(const std::string& command) {
  const std::string prefix = "tessera bench blas ";
  EXPECT_EQ(command.rfind(prefix, 0), 0u) << command;
  return command.substr(prefix.size());
}

TEST(BenchBlas, GemmJsonHasTheFields) {
  json j = bench_json("gemm --dtype f32 --m 37 --n 29 --k 41 --trans nt --ldb 40 --threads 1");
  ASSERT_TRUE(j.contains("results")) << j.dump();
  EXPECT_GT(j["peak_gflops"]["f32"].get<double>(), 0);
  EXPECT_GT(j["peak_gflops"]["f64"].get<double>(), 0);
  EXPECT_FALSE(j["peak"]["isa"].get<std::string>().empty());
  EXPECT_EQ(j["threads"], json::array({1}));
  ASSERT_EQ(j["results"].size(), 1u);
  const json& r = j["results"][0];
  EXPECT_EQ(r["op"], "gemm");
  EXPECT_EQ(r["dtype"], "f32");
  EXPECT_EQ(r["threads"], 1);
  EXPECT_EQ(r["unit"], "GFLOPS");
  EXPECT_EQ(r["args"]["m"], 37);
  EXPECT_EQ(r["args"]["n"], 29);
  EXPECT_EQ(r["args"]["k"], 41);
  EXPECT_EQ(r["args"]["transa"], "n");
  EXPECT_EQ(r["args"]["transb"], "t");
  EXPECT_EQ(r["args"]["lda"], 37);  // tight unless given
  EXPECT_EQ(r["args"]["ldb"], 40);
  EXPECT_EQ(r["args"]["ldc"], 37);
  EXPECT_DOUBLE_EQ(r["work_per_call"].get<double>(), 2.0 * 37 * 29 * 41);
  EXPECT_GT(r["tessera"]["rate"].get<double>(), 0);
  EXPECT_GE(r["tessera"]["rate_best"].get<double>(), r["tessera"]["rate"].get<double>());
  EXPECT_GE(r["tessera"]["samples"].get<int>(), 1);
  EXPECT_GT(r["peak_gflops"].get<double>(), 0);
  EXPECT_GT(r["percent_peak"].get<double>(), 0);
  EXPECT_EQ(r["command"],
            "tessera bench blas gemm --dtype f32 --trans nt --m 37 --n 29 --k 41 --lda 37 "
            "--ldb 40 --ldc 37 --alpha 1 --beta 0 --threads 1");
  // Every anchor that was found has a column: a rate, a ratio and a matching result.
  for (const json& a : j["anchors"]) {
    const std::string name = a["name"];
    ASSERT_TRUE(r["anchors"].contains(name)) << name;
    const json& ar = r["anchors"][name];
    EXPECT_TRUE(ar["available"].get<bool>()) << name;
    EXPECT_GT(ar["rate"].get<double>(), 0) << name;
    EXPECT_GT(ar["ratio"].get<double>(), 0) << name;
    EXPECT_TRUE(ar["matches"].get<bool>()) << name << ": " << ar.dump();
  }
}

TEST(BenchBlas, TextTableHasAHeaderAndOneRow) {
  Outcome r = run(std::string("bench blas gemm --m 16 --threads 1 --vs none") + kQuick);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("peak per core"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("anchors: none"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nop "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ngemm   f32    16x16x16 nn"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("openblas"), std::string::npos) << "--vs none: " << r.out;
}

TEST(BenchBlas, BadOptionsGiveOneLineAndNonZeroExit) {
  for (const char* args : {
           "bench",                                   // no library
           "bench blas",                              // no op
           "bench blas frobnicate",                   // unknown op
           "bench blas gemm --dtype f8",              // unknown dtype
           "bench blas axpy --dtype int8",            // dtype the op lacks
           "bench blas gemm --m -5",                  // negative size
           "bench blas gemm --vs mkl",                // unknown anchor
           "bench blas gemm --trans n",               // gemm takes two letters
           "bench blas gemm --alpha x",               // not a number
           "bench blas gemm --alpha 1,2",             // complex alpha for a real type
           "bench blas gemm --threads 1,0",           // no threads
           "bench blas gemm --dtype bf16 --batch 2",  // no batched bf16 gemm
           "bench blas gemm --uplo u",                // an option gemm does not take
           "bench blas gemm --suite",                 // suite with an op
           "bench blas --suite --m 3",                // suite with case options
           "bench blas gemm --m 5 --lda 3",           // refused by the library itself
       }) {
    Outcome r = run(std::string(args) + kQuick);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tessera: ", 0), 0u) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
  }
  Outcome lda = run(std::string("bench blas gemm --m 5 --lda 3") + kQuick);
  EXPECT_NE(lda.err.find("lda"), std::string::npos) << lda.err;
}

// The example of issue 3 runs as written, and the command a result carries is that same line.
TEST(BenchBlas, LibraryLineFormatRoundTrips) {
  const std::string line =
      "tessera bench blas gemm --dtype f32 --trans nn --m 128 --n 768 --k 768 --lda 128 "
      "--ldb 768 --ldc 128 --alpha 1 --beta 0 --threads 2";
  json j = bench_json(replay_args(line) + " --vs none");
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["command"], line);
}

// A result's command reproduces the case exactly, for every kind of option.
TEST(BenchBlas, ReplayCommandsRunAgainUnchanged) {
  for (const char* args : {
           "gemm --dtype c64 --trans tc --m 5 --n 6 --k 7 --lda 9 --alpha 1,0.5 --beta 0.25,-1 "
           "--batch 3 --threads 1",
           "gemm --dtype f64 --m 3 --n 0 --threads 1,2",
           "trsv --dtype c128 --n 5 --uplo l --trans c --diag u --incx -2 --lda 7",
           "gemm --dtype int8 --m 8 --n 8 --k 8 --alpha 2 --beta 1 --threads 1",
       }) {
    json first = bench_json(std::string(args) + " --vs none");
    ASSERT_FALSE(first["results"].empty()) << args;
    for (const json& r : first["results"]) {
      const std::string command = r["command"];
      json again = bench_json(replay_args(command) + " --vs none");
      ASSERT_EQ(again["results"].size(), 1u) << command;
      EXPECT_EQ(again["results"][0]["command"], command);
      EXPECT_EQ(again["results"][0]["args"], r["args"]) << command;
    }
  }
}

// TESSERA_LOG=bench makes the library print one line per call. The first line of each op
// runs as given and describes the case the command was run with.
TEST(BenchBlas, LinesTheLibraryLogsReplay) {
  for (const char* args : {
           "gemm --dtype f32 --trans tn --m 9 --n 8 --k 7 --ldb 10 --beta 0.5",
           "gemm --dtype c64 --m 4 --n 5 --k 6 --alpha 2,1 --beta 0,1 --batch 2",
           "trsm --dtype f64 --m 6 --n 5 --side r --uplo l --trans t --diag u --lda 7",
           "syrk --dtype c128 --n 6 --k 3 --uplo l --trans t",
           "trtri --dtype f32 --n 7 --uplo l --diag u --batch 2",
           "gemv --dtype c64 --m 7 --n 5 --trans c --incx -2 --incy 3 --lda 9",
           "trsv --dtype c128 --n 8 --uplo l --trans c --diag u --incx -1",
           "dot --dtype c128 --n 50 --incx -3",
       }) {
    std::string op = std::string(args).substr(0, std::string(args).find(' '));
    if (op == "trtri") op = "trtri_strided_batched";
    Outcome r = run(std::string("bench blas ") + args + " --threads 1 --vs none --json" + kQuick,
                    "TESSERA_LOG=bench");
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    const json original = json::parse(r.out)["results"][0];
    std::istringstream err(r.err);
    std::string line;
    while (std::getline(err, line) && line.rfind("tessera bench blas " + op + " ", 0) != 0) {
    }
    ASSERT_FALSE(line.empty()) << args << ": the library logged no " << op << " line";
    json j = bench_json(replay_args(line) + " --vs none");
    ASSERT_EQ(j["results"].size(), 1u) << line;
    EXPECT_EQ(j["results"][0]["dtype"], original["dtype"]) << line;
    EXPECT_EQ(j["results"][0]["args"], original["args"]) << line;
  }
}

// Small cases of every op, with non-default options: tessera's result must match each
// anchor's within the command's tolerance (bench_json fails on the warning otherwise).
TEST(BenchBlas, EveryOpMatchesTheAnchors) {
  for (const char* args : {
           "gemm --dtype f32 --trans tn --m 33 --n 17 --k 65 --lda 70 --beta 0.5",
           "gemm --dtype c128 --trans cn --m 9 --n 5 --k 12 --alpha 0.5,1 --beta 1,1 --batch 2",
           "gemm --dtype bf16 --m 30 --n 20 --k 40 --beta -1",
           "gemm --dtype int8 --m 19 --n 23 --k 64 --beta 1",
           "trsm --dtype f32 --m 40 --n 9 --side l --uplo l --trans t --alpha 2",
           "trsm --dtype c64 --m 7 --n 30 --side r --uplo u --trans c --diag u",
           "trmm --dtype f64 --m 25 --n 17 --side r --uplo l --ldb 30",
           "syrk --dtype f32 --n 33 --k 20 --uplo l --trans t --beta 2",
           "trtri --dtype f64 --n 50 --uplo l",
           "trtri_batched --dtype c64 --n 20 --diag u --batch 3",
           "gemv --dtype f32 --m 100 --n 37 --trans t --incx -1 --beta 1.5",
           "ger --dtype f64 --m 30 --n 20 --incx 2 --lda 40",
           "geru --dtype c64 --m 11 --n 13 --alpha 1,-1",
           "gerc --dtype c128 --m 13 --n 11 --incy -2",
           "symv --dtype f32 --n 60 --uplo l --beta 0.5",
           "hemv --dtype c64 --n 40 --incx -1 --beta 0,1",
           "trsv --dtype f64 --n 70 --trans t --diag u",
           "trmv --dtype c64 --n 33 --uplo l --trans c --incx 2",
           "axpy --dtype f32 --n 1001 --alpha -2 --incx 2 --incy -1",
           "dot --dtype f64 --n 3001 --incy -2",
           "dotc --dtype c128 --n 123 --incx 3",
           "nrm2 --dtype c64 --n 999 --incx 2",
           "asum --dtype f64 --n 1000",
           "scal --dtype c64 --n 500 --alpha 0.5,2",
           "scal_real --dtype c128 --n 300 --alpha 3",
           "rot --dtype f32 --n 400 --incx -1",
           "copy --dtype c128 --n 100 --incx -2",
           "swap --dtype f32 --n 999 --incy 3",
           "iamax --dtype c128 --n 1000",
           "iamin --dtype f32 --n 1000 --incx 2",
       }) {
    json j = bench_json(std::string(args) + " --threads 1");
    if (j.empty()) continue;
    const json& r = j["results"][0];
    int compared = 0;
    for (const json& a : j["anchors"]) {
      const json& ar = r["anchors"][a["name"].get<std::string>()];
      if (!ar["available"].get<bool>()) continue;
      EXPECT_TRUE(ar["matches"].get<bool>()) << args << ": " << ar.dump();
      ++compared;
    }
    if (r.contains("vs_sgemm")) {
      EXPECT_TRUE(r["vs_sgemm"]["matches"].get<bool>()) << args;
      ++compared;
    }
    if (!j["anchors"].empty()) {
      EXPECT_GT(compared, 0) << args << ": nothing to compare with";
    }
  }
}

}  // namespace
}  // namespace tessera
