// `tessera bench dnn` and `tessera tune dnn` as users see them: valid JSON with the documented
// fields, replay lines (the tool's and the library's TESSERA_LOG=bench lines) that run again
// unchanged, one-line errors for bad options, suites with total rows, and tessera's results
// matching oneDNN's on small problems where oneDNN is installed (the cross-check the command
// warns about). Problems are tiny and timings are never asserted.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

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

// As short as a measurement can be, and no tuning database (immediate mode's heuristic).
constexpr const char* kQuick = " --min-time 0 --repeat 1 --threads 1";

std::string no_db_env() {
  static testing::TempDir dir;
  return "TESSERA_TUNE_DB=" + dir.file("absent.sqlite");
}

// Runs `bench dnn <args> --json` and returns the JSON (a failed expectation if it is not).
json bench_json(const std::string& args, const std::string& env = "") {
  Outcome r = run("bench dnn " + args + kQuick + " --json", no_db_env() + " " + env);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  EXPECT_EQ(r.err, "") << args;  // no warning: tessera matches oneDNN
  if (r.code != 0) return json::object();
  return json::parse(r.out);  // throws (fails) on invalid JSON
}

std::string replay_args(const std::string& command) {
  const std::string prefix = "tessera bench dnn ";
  EXPECT_EQ(command.rfind(prefix, 0), 0u) << command;
  return command.substr(prefix.size());
}

// Whether the run had oneDNN (installed, and the tool built with its header).
bool has_onednn(const json& top) {
  return top.contains("anchor") && !top["anchor"].is_null();
}

// Where oneDNN runs the case, its result matches tessera's; where it cannot, it says why.
void expect_anchor(const json& top, const json& r, bool onednn_has_it = true) {
  const json& a = r["onednn"];
  if (!has_onednn(top) || !onednn_has_it) {
    EXPECT_FALSE(a["available"].get<bool>()) << r.dump();
    EXPECT_FALSE(a["reason"].get<std::string>().empty()) << r.dump();
    return;
  }
  ASSERT_TRUE(a["available"].get<bool>()) << r.dump();
  EXPECT_TRUE(a["matches"].get<bool>()) << r.dump();
  EXPECT_GT(a["median_ms"].get<double>(), 0) << r.dump();
  EXPECT_GT(a["ratio"].get<double>(), 0) << r.dump();
  EXPECT_FALSE(a["impl"].get<std::string>().empty()) << r.dump();
}

TEST(BenchDnn, ConvJsonHasTheFields) {
  json j = bench_json(
      "conv --dir fwd --layout nhwc --mb 2 --ic 6 --oc 10 --in 9x8 --kernel 3x3 --stride 2x1 "
      "--pad-begin 1x0 --pad-end 0x1");
  ASSERT_EQ(j["results"].size(), 1u) << j.dump();
  EXPECT_EQ(j["threads"], json::array({1}));
  EXPECT_EQ(j["suite"], false);
  const json& r = j["results"][0];
  EXPECT_EQ(r["primitive"], "conv");
  EXPECT_EQ(r["dtype"], "f32");
  EXPECT_EQ(r["unit"], "GFLOPS");
  EXPECT_EQ(r["args"]["in"], json::array({9, 8}));
  EXPECT_EQ(r["args"]["pad_end"], json::array({0, 1}));
  // y is 2 x 10 x 4 x 7; each output sums 6 channels x 9 taps.
  EXPECT_DOUBLE_EQ(r["work_per_call"].get<double>(), 2.0 * 2 * 10 * 4 * 7 * 6 * 9);
  EXPECT_GT(r["tessera"]["median_ms"].get<double>(), 0);
  EXPECT_GE(r["tessera"]["median_ms"].get<double>(), r["tessera"]["best_ms"].get<double>());
  EXPECT_GT(r["tessera"]["rate"].get<double>(), 0);
  EXPECT_EQ(r["tessera"]["source"], "heuristic");
  EXPECT_FALSE(r["tessera"]["algo"].get<std::string>().empty());
  EXPECT_EQ(r["command"],
            "tessera bench dnn conv --dir fwd --dtype f32 --layout nhwc --mb 2 --ic 6 --oc 10 "
            "--in 9x8 --kernel 3x3 --stride 2x1 --dilation 1x1 --pad-begin 1x0 --pad-end 0x1 "
            "--groups 1 --algo auto --threads 1");
  expect_anchor(j, r);
  if (has_onednn(j))
    EXPECT_NE(j["anchor"]["version"].get<std::string>().find("oneDNN"), std::string::npos);
  else
    EXPECT_FALSE(j["anchor_reason"].get<std::string>().empty());
}

// Every direction, both layouts, groups, depthwise, dilation, 1-D and 3-D, bf16: tessera
// matches oneDNN (bench_json fails on the warning otherwise).
TEST(BenchDnn, ConvolutionsMatchOneDnn) {
  std::vector<std::string> cases;
  for (const char* dir : {"fwd", "bwd-data", "bwd-weights"})
    for (const char* shape : {
             "--layout nchw --mb 2 --ic 5 --oc 7 --in 11x10 --kernel 3x3 --pad 1",
             "--layout nhwc --mb 1 --ic 8 --oc 6 --in 9x9 --kernel 3x3 --stride 2 --groups 2",
             "--layout nhwc --mb 2 --ic 16 --oc 16 --in 8x7 --kernel 3x3 --pad 1x1 --groups 16",
             "--layout nchw --mb 1 --ic 3 --oc 4 --in 5x6x4 --kernel 3x1x3 --pad 1x0x1",
         })
      cases.push_back(std::string("--dir ") + dir + " " + shape);
  cases.push_back(
      "--layout nchw --mb 1 --ic 4 --oc 8 --in 12x12 --kernel 3x3 --dilation 2 --pad 2x1");
  cases.push_back("--layout nhwc --mb 1 --ic 3 --oc 5 --in 20 --kernel 5 --stride 2 --pad 1x2");
  cases.push_back("--layout nhwc --dtype bf16 --mb 1 --ic 16 --oc 32 --in 7x7 --kernel 1x1");
  for (const std::string& c : cases) {
    json j = bench_json("conv " + c);
    ASSERT_EQ(j["results"].size(), 1u) << c;
    SCOPED_TRACE(c);
    // oneDNN's CPU bf16 convolutions need AVX-512; without it oneDNN refuses them, and the
    // bench says so.
    const bool bf16 = c.find("--dtype bf16") != std::string::npos;
    expect_anchor(j, j["results"][0], !bf16 || __builtin_cpu_supports("avx512f"));
  }
}

TEST(BenchDnn, TextTableShowsTimesRatioAndReplay) {
  Outcome r = run(
      std::string("bench dnn conv --mb 1 --ic 4 --oc 4 --in 6x6 --kernel 3x3 --vs none") + kQuick,
      no_db_env());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("anchor: none (--vs none)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tessera ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ratio"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nconv            mb1 ic4 oc4 6x6 k3x3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" n/a "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tessera bench dnn conv --dir fwd --dtype f32 --layout nchw --mb 1 --ic 4 "),
            std::string::npos)
      << r.out;
}

// The line conv_forward logs (api.cpp) is accepted as is, and is the command of its result.
TEST(BenchDnn, LibraryConvLineRoundTrips) {
  const std::string line =
      "tessera bench dnn conv --dir bwd-weights --dtype f32 --layout nhwc --mb 1 --ic 8 --oc 8 "
      "--in 10x10 --kernel 3x3 --stride 1x1 --dilation 1x1 --pad-begin 1x1 --pad-end 1x1 "
      "--groups 1 --algo im2col --threads 1";
  json j = bench_json(replay_args(line));
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["command"], line);
  EXPECT_EQ(j["results"][0]["tessera"]["algo"], "im2col");
}

// A result's command reproduces the case exactly, for every primitive.
TEST(BenchDnn, ReplayCommandsRunAgainUnchanged) {
  for (const char* args : {
           "conv --mb 2 --ic 4 --oc 6 --in 7x5 --kernel 3x2 --pad 1x0x0x1 --algo reference",
           "pool --kind avg-include-pad --dims 2x5x9x9 --layout nhwc --kernel 3x3 --stride 2 "
           "--pad 1 --ceil",
           "pool --kind max --dims 1x3x8x8 --kernel 2x2 --stride 2 --indices --dir bwd",
           "act --kind leaky_relu --alpha 0.2 --dims 3x4x5 --dir bwd",
           "softmax --axis -1 --mode log --dims 4x33",
           "norm --kind batch --dims 4x6x5x5 --layout nhwc --dir fwd-inference --eps 0.001",
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

// TESSERA_LOG=bench makes the library print one line per call; each primitive's line runs as
// given (the bench itself calls the library, so its own run logs them).
TEST(BenchDnn, LinesTheLibraryLogsReplay) {
  for (const char* args : {
           "conv --dir bwd-data --layout nhwc --mb 1 --ic 4 --oc 6 --in 6x5 --kernel 3x3 "
           "--stride 2 --pad 1",
           "pool --kind max --dims 2x3x7x7 --layout nhwc --kernel 3x3 --stride 2 --pad 1",
           "act --kind prelu --dims 2x3x4x4 --slopes 3 --layout nhwc --dir bwd",
           "softmax --axis 1 --dims 2x7x3 --mode log --dir bwd",
           "norm --kind batch --mode per-activation --dims 3x4x2x2 --dir bwd",
           "norm --kind instance --dims 2x3x4x4 --dir bwd",
           "norm --kind lrn --lrn-mode within --size 3 --dims 1x2x5x5",
       }) {
    const std::string primitive = std::string(args).substr(0, std::string(args).find(' '));
    Outcome r = run(std::string("bench dnn ") + args + " --vs none --json" + kQuick,
                    no_db_env() + " TESSERA_LOG=bench");
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    const json original = json::parse(r.out)["results"][0];
    std::istringstream err(r.err);
    std::string line;
    // Backward runs call the forward first (for statistics, indices): take the logged line of
    // the direction that was asked for.
    const std::string dir = " --dir " + original["args"]["dir"].get<std::string>();
    while (std::getline(err, line) &&
           (line.rfind("tessera bench dnn " + primitive + " ", 0) != 0 ||
            (line.find(dir + " ") == std::string::npos && !line.ends_with(dir)))) {
    }
    ASSERT_FALSE(line.empty()) << args << ": the library logged no " << primitive << " line";
    json j = bench_json(replay_args(line) + " --vs none");
    ASSERT_EQ(j["results"].size(), 1u) << line;
    EXPECT_EQ(j["results"][0]["shape"], original["shape"]) << line;
    EXPECT_EQ(j["results"][0]["args"], original["args"]) << line;
  }
}

// The memory-bound primitives: GB/s, and oneDNN's result matches where it has the primitive.
TEST(BenchDnn, MemoryBoundPrimitivesMatchOneDnn) {
  struct Case {
    const char* args;
    bool onednn_has_it;
  };
  for (const Case& c : {
           Case{"pool --kind max --dims 2x17x9x9 --layout nhwc --kernel 3x3 --stride 2 --pad 1",
                true},
           Case{"pool --kind avg-exclude-pad --dims 2x5x8x8 --kernel 3x3 --stride 2 --pad 1x1x0x0 "
                "--ceil --dir bwd",
                true},
           Case{"act --kind elu --dims 4x9x5x5 --layout nhwc --dir bwd", true},
           Case{"act --kind clip --alpha -1 --beta 0.5 --dims 33 --dir bwd", true},
           Case{"act --kind selu --dims 5x5", false},
           Case{"act --kind crelu --dims 2x3x5", false},
           Case{"softmax --axis 1 --dims 3x17x4", true},
           Case{"softmax --axis 2 --dims 3x4x19 --mode log --dir bwd", true},
           Case{"norm --kind batch --dims 4x17x3x3 --layout nhwc", true},
           Case{"norm --kind batch --dims 4x5x3x3 --dir bwd", true},
           Case{"norm --kind layer --axis 1 --dims 6x40 --dir bwd", true},
           Case{"norm --kind layer --axis 1 --dims 2x4x3x3 --layout nhwc", false},
           Case{"norm --kind group --groups 2 --dims 2x4x3x3 --dir bwd", false},
           Case{"norm --kind lrn --lrn-mode across --size 5 --dims 2x9x4x4", true},
       }) {
    json j = bench_json(c.args);
    ASSERT_EQ(j["results"].size(), 1u) << c.args;
    const json& r = j["results"][0];
    EXPECT_EQ(r["unit"], "GB/s") << c.args;
    EXPECT_GT(r["work_per_call"].get<double>(), 0) << c.args;
    SCOPED_TRACE(c.args);
    expect_anchor(j, r, c.onednn_has_it);
  }
}

// `bench dnn train`: the documented JSON fields, and the line the library logs for each call
// (dropout, every loss, both directions) runs again as given.
TEST(BenchDnn, TrainingOpsReportAgainstACopyAndTheirLoggedLinesReplay) {
  for (const char* args : {
           "--op dropout --dims 3x70 --ratio 0.25",
           "--op dropout --dims 3x70 --dir bwd --dtype bf16",
           "--op softmax_ce --dims 5x33 --smoothing 0.1",
           "--op softmax_ce --dims 5x33 --dir bwd --reduction none",
           "--op nll --dims 4x9 --dir bwd",
           "--op mse --dims 40 --reduction sum",
           "--op bce_with_logits --dims 6x7 --dir bwd --dtype f16",
       }) {
    Outcome r = run(std::string("bench dnn train ") + args + " --json" + kQuick, no_db_env() + " TESSERA_LOG=bench");
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    const json top = json::parse(r.out);
    ASSERT_EQ(top["results"].size(), 1u) << args;
    const json& row = top["results"][0];
    for (const char* field : {"command", "bytes", "best_ms", "copy_best_ms", "gbs", "copy_gbs", "ratio"})
      EXPECT_TRUE(row.contains(field)) << args << ": no " << field;
    EXPECT_GT(row["bytes"].get<double>(), 0) << args;
    // The library's own line for the direction asked for (a backward bench calls the forward
    // once to draw its mask).
    const std::string dir = std::string(args).find("--dir bwd") != std::string::npos ? "bwd" : "fwd";
    std::istringstream err(r.err);
    std::string line;
    while (std::getline(err, line) &&
           (line.rfind("tessera bench dnn train ", 0) != 0 || line.find("--dir " + dir) == std::string::npos)) {
    }
    ASSERT_FALSE(line.empty()) << args << ": the library logged no train line";
    const std::string threads = " --threads ";
    ASSERT_NE(line.rfind(threads), std::string::npos) << line;
    Outcome again = run("bench dnn " + replay_args(line.substr(0, line.rfind(threads))) + " --json" + kQuick, no_db_env());
    EXPECT_EQ(again.code, 0) << line << "\n" << again.err;
  }
}

// `bench dnn move` on the movement and indexing operations: each case runs and reports its bytes
// against a copy, and the line the library logs for the call runs again as given; a k beyond the
// axis is refused by the tool with a one-line message.
TEST(BenchDnn, MoveOpsReportAgainstACopyAndTheirLoggedLinesReplay) {
  for (const char* args : {
           "--op transpose --dims 4x5x6 --perm 0x2x1",
           "--op cast --dims 6x40 --to f16",
           "--op pad --dims 2x6x7 --mode reflect",
           "--op gather --dims 50x8 --index-dims 3x4",
           "--op gather --dims 6x40 --axis 1 --index-dims 20",
           "--op gather_elements --dims 6x40 --axis 1",
           "--op gather_elements --dims 6x40 --axis 0 --dtype f16",
           "--op gather_elements --dims 6x40 --axis 0 --index-dims 9x20",
           "--op scatter_elements --dims 6x40 --axis 0 --reduce add",
           "--op scatter_elements --dims 6x40 --axis 1 --dtype i32",
           "--op scatter_elements --dims 6x40x5 --axis 1 --index-dims 4x50x3 --reduce add",
           "--op gather_nd --dims 6x40x3 --index-dims 50x2",
           "--op gather_nd --dims 6x40x3 --index-dims 6x7x1 --batch-dims 1 --dtype f16",
           "--op scatter_nd --dims 6x40 --index-dims 30x1 --reduce max",
           "--op one_hot --dims 17 --depth 9",
           "--op cumsum --dims 6x40 --axis 1",
           "--op top_k --dims 6x40 --axis 1 --k 5",
           "--op top_k --dims 40x6 --axis 0 --k 3 --dtype f64",
       }) {
    Outcome r = run(std::string("bench dnn move ") + args + " --vs none --json" + kQuick, no_db_env() + " TESSERA_LOG=bench");
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    const json top = json::parse(r.out);
    ASSERT_EQ(top["results"].size(), 1u) << args;
    const json& row = top["results"][0];
    for (const char* field : {"command", "bytes", "best_ms", "copy_best_ms", "ratio"})
      EXPECT_TRUE(row.contains(field)) << args << ": no " << field;
    EXPECT_GT(row["bytes"].get<double>(), 0) << args;
    const std::string op = std::string(args).substr(0, std::string(args).find(" --dims"));  // "--op gather"
    std::istringstream err(r.err);
    std::string line;
    while (std::getline(err, line) && line.rfind("tessera bench dnn move " + op + " ", 0) != 0) {
    }
    ASSERT_FALSE(line.empty()) << args << ": the library logged no move line";
    const std::string threads = " --threads ";
    ASSERT_NE(line.rfind(threads), std::string::npos) << line;
    Outcome again = run("bench dnn " + replay_args(line.substr(0, line.rfind(threads))) + " --vs none --json" + kQuick, no_db_env());
    EXPECT_EQ(again.code, 0) << line << "\n" << again.err;
  }
  Outcome bad = run("bench dnn move --op top_k --dims 6x4 --axis 1 --k 5 --vs none" + std::string(kQuick), no_db_env());
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--k"), std::string::npos) << bad.err;
  Outcome no_tuples = run("bench dnn move --op gather_nd --dims 6x4 --vs none" + std::string(kQuick), no_db_env());
  EXPECT_NE(no_tuples.code, 0);
  EXPECT_NE(no_tuples.err.find("--index-dims"), std::string::npos) << no_tuples.err;
}

TEST(BenchDnn, BadOptionsGiveOneLineAndNonZeroExit) {
  std::map<std::string, std::string> errors;
  for (const char* args : {
           "bench dnn",                                                    // no primitive, no suite
           "bench dnn conv --ic 4 --oc 4 --in 8x8",                        // no kernel
           "bench dnn conv --ic 4 --oc 4 --in 8xx8 --kernel 3",            // bad dims
           "bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 3x3x3",         // rank mismatch
           "bench dnn conv --ic 4 --oc 6 --in 8x8 --kernel 3 --groups 4",  // groups
           "bench dnn conv --ic 4 --oc 4 --in 2x2 --kernel 3",             // empty output
           "bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 3 --dir sideways",
           "bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 3 --algo fastest",
           "bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 3 --pad 1 --pad-end 1",
           "bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 3 --vs mkl",
           "bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 3 --threads 0",
           "bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 5x5 --algo winograd_f4x3",  // refuses
           "bench dnn conv --suite resnet50 --ic 4",           // suite with a shape
           "bench dnn --suite resnet50 --layer res9z --list",  // unknown layer
           "bench dnn pool --dims 1x2x4x4",                    // no kernel
           "bench dnn pool --dims 1x2x4x4 --kernel 2 --kind median",
           "bench dnn act --kind swishy --dims 4x4",
           "bench dnn act --kind relu --dims 4x4 --slopes 4",  // relu takes no slopes
           "bench dnn softmax --dims 4x4 --axis 2",
           "bench dnn norm --kind batch --dims 2x4x3x3 --groups 2",
           "bench dnn norm --dims 2x4x3x3 --layout nhwc --dir fwd --kind whitening",
       }) {
    const bool threads = std::string(args).find("--threads") != std::string::npos;
    Outcome r =
        run(std::string(args) + (threads ? " --min-time 0 --repeat 1" : kQuick), no_db_env());
    EXPECT_NE(r.code, 0) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tessera: ", 0), 0u) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
    errors[args] = r.err;
  }
  // The messages name the problem: ours, and the library's refusal passed on.
  EXPECT_NE(errors["bench dnn conv --ic 4 --oc 6 --in 8x8 --kernel 3 --groups 4"].find(
                "--groups 4 must divide"),
            std::string::npos);
  EXPECT_NE(errors["bench dnn conv --ic 4 --oc 4 --in 8x8 --kernel 5x5 --algo winograd_f4x3"].find(
                "winograd"),
            std::string::npos);
}

// The suites list every convolution of the networks (counts add up to the layer count) and
// each listed line is a valid single case.
TEST(BenchDnn, SuitesListEveryConvolution) {
  struct Net {
    const char* suite;
    int distinct, layers;
  };
  for (const Net& n : {Net{"resnet50", 23, 53}, Net{"mobilenet_v2", 30, 52}}) {
    Outcome r = run(std::string("bench dnn --suite ") + n.suite + " --list --json", no_db_env());
    ASSERT_EQ(r.code, 0) << r.err;
    const json cases = json::parse(r.out)["cases"];
    ASSERT_EQ(cases.size(), 2u * n.distinct) << n.suite;  // batch 1 and 8
    int layers = 0;
    std::set<std::string> commands;
    for (const json& c : cases) {
      if (c["group"] == std::string(n.suite) + " fwd mb1") layers += c["count"].get<int>();
      commands.insert(c["command"].get<std::string>());
      EXPECT_NE(c["command"].get<std::string>().find("--layout nhwc"), std::string::npos);
    }
    EXPECT_EQ(layers, n.layers) << n.suite;
    EXPECT_EQ(commands.size(), cases.size()) << n.suite << ": every case distinct";
  }
  Outcome dw = run("bench dnn conv --suite mobilenet_v2 --list --mb 1 --layer b14_dw");
  ASSERT_EQ(dw.code, 0) << dw.err;
  EXPECT_NE(dw.out.find("--ic 576 --oc 576 --in 14x14 --kernel 3x3 --stride 2x2"),
            std::string::npos)
      << dw.out;
  EXPECT_NE(dw.out.find("--groups 576"), std::string::npos) << dw.out;
}

// A suite run (two small layers, two batches): rows per layer and batch, and per batch a
// total whose times are the sums of the rows.
TEST(BenchDnn, SuiteRowsAndTotals) {
  json j = bench_json("--suite mobilenet_v2 --layer b15_dw,b17_project --mb 1,2 --dir bwd-data");
  ASSERT_EQ(j["results"].size(), 4u) << j.dump();
  ASSERT_EQ(j["totals"].size(), 2u) << j.dump();
  for (int b = 0; b < 2; ++b) {
    const json& t = j["totals"][b];
    EXPECT_EQ(t["group"], std::string("mobilenet_v2 bwd-data mb") + (b == 0 ? "1" : "2"));
    EXPECT_EQ(t["rows"], 2);
    EXPECT_EQ(t["layers"], 3 + 1);
    double sum = 0;
    for (int i = 0; i < 2; ++i) {
      const json& r = j["results"][2 * b + i];
      EXPECT_EQ(r["group"], t["group"]);
      expect_anchor(j, r);
      sum += r["tessera"]["median_ms"].get<double>();
    }
    EXPECT_NEAR(t["tessera_ms"].get<double>(), sum, 1e-9 * sum);
    if (has_onednn(j)) {
      EXPECT_NEAR(t["distinct"]["tessera_ms"].get<double>(), sum, 1e-9 * sum);
      EXPECT_GT(t["network"]["ratio"].get<double>(), 0);
      // Best samples: each at most the median, summed with the same counts.
      EXPECT_LE(t["network"]["tessera_best_ms"].get<double>(), t["network"]["tessera_ms"].get<double>());
      EXPECT_LE(t["network"]["onednn_best_ms"].get<double>(), t["network"]["onednn_ms"].get<double>());
      double best = 0;
      for (int i = 0; i < 2; ++i) {
        const json& r = j["results"][2 * b + i];
        best += r["count"].get<int>() * r["tessera"]["best_ms"].get<double>();
      }
      EXPECT_NEAR(t["network"]["tessera_best_ms"].get<double>(), best, 1e-9 * best);
    }
  }
  Outcome text =
      run(std::string("bench dnn --suite resnet50 --layer res5b_branch2a --mb 1") + kQuick,
          no_db_env());
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("\nres5b_branch2a "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\ntotal           resnet50 fwd mb1, 1 distinct"), std::string::npos)
      << text.out;
  if (text.out.find("\nnetwork         ") != std::string::npos) {  // (with oneDNN installed)
    EXPECT_NE(text.out.find("\nnetwork best    resnet50 fwd mb1, "), std::string::npos) << text.out;
  }
}

// `tune dnn` stores Find-mode winners; immediate mode then runs them ("tune-db"), and `tune
// explain` shows every candidate with a replay line.
TEST(TuneDnn, StoresWinnersThatImmediateModeUses) {
  testing::TempDir dir;
  const std::string db = dir.file("tune.sqlite");
  Outcome t = run("tune --db " + db +
                  " dnn --suite mobilenet_v2 --layer b15_project --mb 1 --min-time 0 --threads 1");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("b15_project"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("stored 1 entries"), std::string::npos) << t.out;

  Outcome e = run("tune --db " + db + " explain --library dnn");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("dnn/conv  fwd f32 x[1,960,7,7]nhwc"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("<- winner"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("rejected:"), std::string::npos) << e.out;
  const std::string replay =
      "tessera bench dnn conv --dir fwd --dtype f32 --layout nhwc --mb 1 --ic 960 --oc 160 "
      "--in 7x7 --kernel 1x1 --stride 1x1 --dilation 1x1 --pad-begin 0x0 --pad-end 0x0 "
      "--groups 1 --algo auto";
  EXPECT_NE(e.out.find("  replay       " + replay + "\n"), std::string::npos) << e.out;

  Outcome b = run("bench dnn " + replay_args(replay) + kQuick + " --vs none --json",
                  "TESSERA_TUNE_DB=" + db);
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(json::parse(b.out)["results"][0]["tessera"]["source"], "tune-db") << b.out;

  Outcome dry =
      run("tune --db " + dir.file("other.sqlite") +
          " dnn --suite mobilenet_v2 --layer b15_dw --mb 1 --min-time 0 --dry-run --json");
  ASSERT_EQ(dry.code, 0) << dry.err;
  const json dj = json::parse(dry.out);
  EXPECT_EQ(dj["stored"], 0);
  ASSERT_EQ(dj["results"].size(), 1u);
  EXPECT_FALSE(dj["results"][0]["candidates"].empty());
  EXPECT_FALSE(std::filesystem::exists(dir.file("other.sqlite")));

  Outcome bad = run("tune --db " + db + " dnn --suite resnet50 --dir sideways");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

}  // namespace
}  // namespace tessera
