// The `tessera` binary as users see it: exit codes, one-line errors, valid JSON.
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <tessera/core/cpu.hpp>

#include "cli_run.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::Outcome;
using testing::lines;
using testing::run;

TEST(Cli, VersionAndHelp) {
  Outcome v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("tessera 0.", 0), 0u) << v.out;
  Outcome h = run("--help");
  EXPECT_EQ(h.code, 0);
  for (const char* cmd : {"info", "selfcheck", "tune"})
    EXPECT_NE(h.out.find(cmd), std::string::npos) << cmd;
  EXPECT_EQ(run("info --help").code, 0);
}

TEST(Cli, BadInputGivesOneLineAndNonZeroExit) {
  for (const char* args : {"frobnicate", "info --bogus", "info --json extra", "tune nosuch"}) {
    Outcome r = run(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tessera: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST(Cli, InfoJsonIsValidAndComplete) {
  testing::TempDir dir;
  Outcome r = run("info --json", "TESSERA_TUNE_DB=" + dir.file("none.sqlite"));
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails) on invalid JSON
  EXPECT_EQ(j["cpu"]["isa_detected"], std::string(isa_name(cpu_info().detected_isa)));
  EXPECT_GE(j["cpu"]["logical_cpus"].get<int>(), 1);
  EXPECT_TRUE(j["cpu"]["features"].contains("avx2"));
  EXPECT_FALSE(j["cpu"]["caches"].empty());
  EXPECT_GT(j["memory"]["total_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(j["backends"][0]["name"], "cpu");
  EXPECT_EQ(j["backends"][0]["devices"][0]["id"], "cpu:0");
  EXPECT_EQ(j["backends"][1]["name"], "cuda");
  EXPECT_FALSE(j["backends"][1]["detail"].get<std::string>().empty());
  EXPECT_EQ(j["tune_db"]["path"], dir.file("none.sqlite"));
  EXPECT_EQ(j["tune_db"]["exists"], false);
  EXPECT_TRUE(j.contains("threads") && j.contains("version") && j.contains("compiler"));
}

TEST(Cli, MaxIsaCapIsShown) {
  Outcome r = run("info --json", "TESSERA_MAX_ISA=avx2");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cpu"]["max_isa_env"], "avx2");
  EXPECT_EQ(j["cpu"]["isa_used"],
            std::string(isa_name(std::min(Isa::kAvx2, cpu_info().detected_isa))));
  EXPECT_FALSE(j["cpu"]["features"]["avx512f"]["usable"].get<bool>());
  Outcome text = run("info", "TESSERA_MAX_ISA=avx2 TESSERA_NUM_THREADS=3");
  EXPECT_NE(text.out.find("TESSERA_MAX_ISA=avx2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("pool of 3 threads"), std::string::npos) << text.out;
  Outcome bad = run("info --json", "TESSERA_MAX_ISA=sse9");
  EXPECT_EQ(bad.code, 0);
  EXPECT_NE(bad.err.find("TESSERA_MAX_ISA='sse9'"), std::string::npos) << bad.err;
}

TEST(Cli, SelfcheckPasses) {
  Outcome r = run("selfcheck --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["passed"], j["total"]);
  EXPECT_GE(j["total"].get<int>(), 6);
}

TEST(Cli, TuneCommandsRoundTripADatabase) {
  testing::TempDir dir;
  const std::string db = "tune --db " + dir.file("t.sqlite") + " ";
  const char* data = std::getenv("TESSERA_TEST_DATA");
  if (data == nullptr) GTEST_SKIP() << "TESSERA_TEST_DATA is not set (ctest sets it to tests/)";
  const std::string seeds = std::string(data) + "/fuzz/corpus/tune_import/";
  Outcome empty = run(db + "list");
  EXPECT_EQ(empty.code, 0);
  EXPECT_NE(empty.out.find("does not exist"), std::string::npos) << empty.out;
  Outcome imp = run(db + "import " + seeds + "valid_two_entries.json");
  ASSERT_EQ(imp.code, 0) << imp.err;
  nlohmann::json listed = nlohmann::json::parse(run(db + "list --json").out);
  ASSERT_EQ(listed["entries"].size(), 2u) << listed.dump();
  Outcome explain = run(db + "explain --library blas");
  EXPECT_NE(explain.out.find("winner"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("rejected"), std::string::npos) << explain.out;
  Outcome bad = run(db + "import " + seeds + "broken_types.json");
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_EQ(nlohmann::json::parse(run(db + "list --json").out)["entries"].size(), 2u)
      << "a bad import writes nothing";
  ASSERT_EQ(run(db + "export -o " + dir.file("out.json")).code, 0);
  Outcome refused = run(db + "clear");
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("--yes"), std::string::npos) << refused.err;
  ASSERT_EQ(run(db + "clear --yes").code, 0);
  EXPECT_EQ(nlohmann::json::parse(run(db + "list --json").out)["entries"].size(), 0u);
  ASSERT_EQ(run(db + "import " + dir.file("out.json")).code, 0) << "an export imports back";
  EXPECT_EQ(nlohmann::json::parse(run(db + "list --json").out), listed);
  nlohmann::json info =
      nlohmann::json::parse(run("info --json", "TESSERA_TUNE_DB=" + dir.file("t.sqlite")).out);
  EXPECT_EQ(info["tune_db"]["entries"], 2);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Cli, TuneBlasStoresBlockingThatTheLibraryReads) {
  testing::TempDir dir;
  const std::string db = dir.file("tune.sqlite");
  Outcome t = run("tune blas --dtype f32 --size 64 --min-time 0.001 --json --db " + db);
  ASSERT_EQ(t.code, 0) << t.err;
  auto j = nlohmann::json::parse(t.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["dtype"], "f32");
  EXPECT_NE(j[0]["chosen"].get<std::string>().find("kc="), std::string::npos);
  EXPECT_GE(j[0]["candidates"].get<int>(), 10);
  Outcome l = run("tune list --library blas --db " + db);
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.out.find("gemm_blocking"), std::string::npos) << l.out;
  // A new process reads the stored blocking for its first gemm (`selfcheck` describes it).
  Outcome s = run("selfcheck --json", "TESSERA_TUNE_DB=" + db + " TESSERA_VERBOSE=dispatch");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(s.err.find("(tuned)"), std::string::npos) << s.err;
  Outcome bad = run("tune blas --dtype f33 --dry-run");
  EXPECT_NE(bad.code, 0);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

}  // namespace
}  // namespace tessera
