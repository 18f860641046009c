// TuneDb: record/lookup, winner selection, replacement, filters, bad files, default path, explain.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <optional>

#include "tune/tune_test_util.hpp"

namespace tessera::tune {
namespace {

using testing_util::gemm_key;
using testing_util::gemm_record;
using testing_util::open_ok;
using testing_util::raw_query;
using testing_util::ScratchDir;
using testing_util::value_of;

TuneRecord lookup_ok(TuneDb& db, const TuneKey& key) {
  auto found = db.lookup(key);
  EXPECT_TRUE(found.is_ok()) << found.status().to_string();
  EXPECT_TRUE(found->has_value());
  return found->value_or(TuneRecord{});
}

TEST(TuneDb, RecordLookupRoundTrip) {
  ScratchDir dir;
  const std::string path = dir.file("deep/er/tune.sqlite");  // parents are created
  TuneDb db = open_ok(path);
  EXPECT_EQ(db.path(), path);
  EXPECT_TRUE(std::filesystem::exists(path));

  ASSERT_TRUE(db.record(gemm_record()).is_ok());
  TuneRecord got = lookup_ok(db, gemm_key());
  EXPECT_EQ(got.key, gemm_key());
  EXPECT_EQ(got.solution, "gemm_f32_avx512_6x32");
  EXPECT_EQ(got.params, R"({"kc":384,"mc":96})");  // canonical: sorted, compact
  EXPECT_GT(got.created_at, 0);
  ASSERT_EQ(got.candidates.size(), 5u);
  const TuneRecord sent = gemm_record();
  for (std::size_t i = 0; i < sent.candidates.size(); ++i) {
    const Candidate& a = sent.candidates[i];
    const Candidate& b = got.candidates[i];
    EXPECT_EQ(a.solution, b.solution);
    EXPECT_EQ(a.median_us, b.median_us);
    EXPECT_EQ(a.spread_us, b.spread_us);
    EXPECT_EQ(a.samples, b.samples);
    EXPECT_EQ(a.accepted, b.accepted);
    EXPECT_EQ(a.reason, b.reason);
  }
  EXPECT_EQ(got.candidates[0].params, R"({"kc":256})");
  EXPECT_EQ(got.candidates[3].params, "{}");

  // Another connection sees it; a key differing in one field does not exist.
  TuneDb other = open_ok(path);
  EXPECT_EQ(lookup_ok(other, gemm_key()), got);
  TuneKey missing = gemm_key();
  missing.determinism = "none";
  auto none = other.lookup(missing);
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
}

TEST(TuneDb, InMemoryAndMove) {
  auto opened = TuneDb::open(":memory:");
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
  TuneDb db = std::move(opened).value();
  TuneDb moved = std::move(db);
  ASSERT_TRUE(moved.record(gemm_record()).is_ok());
  EXPECT_EQ(value_of(moved.count()), 1);
}

TEST(TuneDb, FastestAcceptedCandidateWins) {
  TuneDb db = open_ok(":memory:");
  TuneRecord r = gemm_record();
  ASSERT_TRUE(db.record(r).is_ok());
  // The rejected k-split is faster (9 us) but was rejected, so it cannot win.
  EXPECT_EQ(lookup_ok(db, r.key).solution, "gemm_f32_avx512_6x32");

  // Ties go to the first candidate measured.
  r.candidates[0].median_us = 12.5;
  ASSERT_TRUE(db.record(r).is_ok());
  TuneRecord tie = lookup_ok(db, r.key);
  EXPECT_EQ(tie.solution, "gemm_f32_avx2_6x16");
  EXPECT_EQ(tie.params, R"({"kc":256})");
}

TEST(TuneDb, NamedWinnerIsHonoured) {
  TuneDb db = open_ok(":memory:");
  TuneRecord r = gemm_record();
  r.solution = "gemm_f32_avx2_6x16";  // slower, but the caller prefers it
  ASSERT_TRUE(db.record(r).is_ok());
  TuneRecord got = lookup_ok(db, r.key);
  EXPECT_EQ(got.solution, "gemm_f32_avx2_6x16");
  EXPECT_EQ(got.params, R"({"kc":256})");

  // A name with several parameter sets: without params the fastest of them, else the one given.
  r.solution = "gemm_f32_avx512_6x32";
  ASSERT_TRUE(db.record(r).is_ok());
  EXPECT_EQ(lookup_ok(db, r.key).params, R"({"kc":384,"mc":96})");
  r.params = R"({ "kc": 384, "mc": 48 })";
  ASSERT_TRUE(db.record(r).is_ok());
  EXPECT_EQ(lookup_ok(db, r.key).params, R"({"kc":384,"mc":48})");
}

TEST(TuneDb, InvalidRecordsAreRefusedAndNothingIsWritten) {
  TuneDb db = open_ok(":memory:");
  struct Case {
    const char* what;
    void (*edit)(TuneRecord&);
    const char* message;
  };
  const Case cases[] = {
      {"empty library", [](TuneRecord& r) { r.key.library.clear(); }, "library: must not be empty"},
      {"empty device", [](TuneRecord& r) { r.key.device.clear(); }, "device: must not be empty"},
      {"no candidates", [](TuneRecord& r) { r.candidates.clear(); }, "no candidate is accepted"},
      {"none accepted",
       [](TuneRecord& r) {
         for (auto& c : r.candidates) c.accepted = false, c.reason = "slow";
       },
       "candidates: no candidate is accepted"},
      {"negative time", [](TuneRecord& r) { r.candidates[1].median_us = -1.0; },
       "candidates[1].median_us: must be finite and >= 0"},
      {"NaN time",
       [](TuneRecord& r) { r.candidates[0].median_us = std::numeric_limits<double>::quiet_NaN(); },
       "candidates[0].median_us: must be finite"},
      {"infinite spread",
       [](TuneRecord& r) { r.candidates[2].spread_us = std::numeric_limits<double>::infinity(); },
       "candidates[2].spread_us: must be finite"},
      {"negative samples", [](TuneRecord& r) { r.candidates[4].samples = -2; },
       "candidates[4].samples: must be >= 0"},
      {"accepted, never measured", [](TuneRecord& r) { r.candidates[0].samples = 0; },
       "candidates[0].samples: an accepted candidate must have been measured"},
      {"rejected without reason", [](TuneRecord& r) { r.candidates[3].reason.clear(); },
       "candidates[3].reason: a rejected candidate needs a reason"},
      {"params not JSON", [](TuneRecord& r) { r.candidates[0].params = "{kc: 256"; },
       "candidates[0].params: not valid JSON"},
      {"unknown winner", [](TuneRecord& r) { r.solution = "gemm_magic"; },
       "solution: 'gemm_magic' is not an accepted candidate"},
      {"rejected winner", [](TuneRecord& r) { r.solution = "gemm_gpu"; },
       "solution: 'gemm_gpu' is not an accepted candidate"},
      {"winner params not measured",
       [](TuneRecord& r) {
         r.solution = "gemm_f32_avx2_6x16";
         r.params = R"({"kc":128})";
       },
       "is not an accepted candidate"},
      {"params without solution", [](TuneRecord& r) { r.params = "{}"; },
       "params: given without a solution"},
      {"invalid UTF-8", [](TuneRecord& r) { r.key.signature = "f32 \xff\xfe"; },
       "signature: not valid UTF-8"},
  };
  for (const Case& c : cases) {
    TuneRecord r = gemm_record();
    c.edit(r);
    Status s = db.record(r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.what << ": " << s.to_string();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s.message();
    EXPECT_NE(s.message().find(":memory:"), std::string::npos) << s.message();
  }
  EXPECT_EQ(value_of(db.count()), 0);
}

TEST(TuneDb, RecordReplacesTheEntryOfItsKey) {
  ScratchDir dir;
  TuneDb db = open_ok(dir.file("tune.sqlite"));
  ASSERT_TRUE(db.record(gemm_record()).is_ok());

  TuneRecord second;
  second.key = gemm_key();
  second.created_at = 1700000000;
  second.candidates = {{"gemm_f32_generic_4x4", "", 50.0, 1.0, 5, true, ""}};
  ASSERT_TRUE(db.record(second).is_ok());
  EXPECT_EQ(value_of(db.count()), 1);
  TuneRecord got = lookup_ok(db, gemm_key());
  EXPECT_EQ(got.solution, "gemm_f32_generic_4x4");
  EXPECT_EQ(got.params, "{}");
  EXPECT_EQ(got.created_at, 1700000000);
  ASSERT_EQ(got.candidates.size(), 1u);  // the old candidates went with the old entry
  EXPECT_EQ(raw_query(dir.file("tune.sqlite"), "SELECT count(*) FROM candidates"), "1");

  // A key that differs only in version or determinism is a different entry.
  TuneRecord other_version = gemm_record();
  other_version.key.version = "0.2.0";
  TuneRecord other_level = gemm_record();
  other_level.key.determinism = "run_to_run";
  ASSERT_TRUE(db.record(other_version).is_ok());
  ASSERT_TRUE(db.record(other_level).is_ok());
  EXPECT_EQ(value_of(db.count()), 3);
  EXPECT_EQ(lookup_ok(db, gemm_key()).solution, "gemm_f32_generic_4x4");
}

TEST(TuneDb, ListFilterCountClear) {
  TuneDb db = open_ok(":memory:");
  auto add = [&](const char* library, const char* primitive, const char* signature,
                 const char* device) {
    TuneRecord r = gemm_record({library, primitive, signature, device, "0.1.0", "bitwise"});
    ASSERT_TRUE(db.record(r).is_ok());
  };
  add("fft", "c2c_1d", "c64 n=1024 batch=8", "cpu x86_64 avx2 8c");
  add("blas", "gemm", "f32 m=64 n=64 k=64", "cpu x86_64 avx512 48c");
  add("blas", "gemm", "f32 m=64 n=64 k=64", "cpu x86_64 avx2 8c");
  add("blas", "trsm", "f64 m=32 n=32 left lower", "cpu x86_64 avx512 48c");
  add("dnn", "conv2d_fwd", "f32 n=1 c=64 h=56 w=56 k=64 r=3 s=3", "gpu sm_90 h100");

  auto all = db.list();
  ASSERT_TRUE(all.is_ok());
  ASSERT_EQ(all->size(), 5u);
  // Ordered by key: library, primitive, signature, device, ...
  EXPECT_EQ((*all)[0].key.library, "blas");
  EXPECT_EQ((*all)[0].key.device, "cpu x86_64 avx2 8c");
  EXPECT_EQ((*all)[1].key.device, "cpu x86_64 avx512 48c");
  EXPECT_EQ((*all)[2].key.primitive, "trsm");
  EXPECT_EQ((*all)[3].key.library, "dnn");
  EXPECT_EQ((*all)[4].key.library, "fft");
  EXPECT_EQ((*all)[0].candidates.size(), 5u);

  EXPECT_EQ(value_of(db.count()), 5);
  EXPECT_EQ(value_of(db.count({.library = "blas"})), 3);
  EXPECT_EQ(value_of(db.count({.library = "bla"})), 0);  // library and primitive match exactly
  EXPECT_EQ(value_of(db.count({.primitive = "gemm"})), 2);
  EXPECT_EQ(value_of(db.count({.device = "avx2"})), 2);  // device matches a substring
  EXPECT_EQ(value_of(db.count({.library = "blas", .device = "avx512"})), 2);
  EXPECT_EQ(value_of(db.count({.library = "blas", .primitive = "gemm", .device = "avx512"})), 1);
  auto gpu = db.list({.device = "sm_90"});
  ASSERT_TRUE(gpu.is_ok());
  ASSERT_EQ(gpu->size(), 1u);
  EXPECT_EQ((*gpu)[0].key.primitive, "conv2d_fwd");

  EXPECT_EQ(value_of(db.clear({.library = "nothing"})), 0);
  EXPECT_EQ(value_of(db.clear({.library = "blas", .primitive = "gemm"})), 2);
  EXPECT_EQ(value_of(db.count()), 3);
  EXPECT_EQ(value_of(db.count({.library = "blas"})), 1);
  EXPECT_EQ(value_of(db.clear()), 3);
  EXPECT_EQ(value_of(db.count()), 0);
  auto empty = db.list();
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->empty());
}

TEST(TuneDb, FileThatIsNotSqliteIsAClearError) {
  ScratchDir dir;
  const std::string path = dir.file("notes.txt");
  {
    std::ofstream out(path);
    for (int i = 0; i < 200; ++i) out << "this is a text file, not a database\n";
  }
  const auto size = std::filesystem::file_size(path);
  auto db = TuneDb::open(path);
  ASSERT_FALSE(db.is_ok());
  EXPECT_EQ(db.status().code(), StatusCode::kParseError);
  EXPECT_NE(db.status().message().find(path), std::string::npos) << db.status().message();
  EXPECT_NE(db.status().message().find("not a SQLite database"), std::string::npos)
      << db.status().message();
  EXPECT_EQ(std::filesystem::file_size(path), size);  // left alone
}

TEST(TuneDb, ForeignSqliteDatabaseIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("other.sqlite");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE photos (id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto db = TuneDb::open(path);
  ASSERT_FALSE(db.is_ok());
  EXPECT_EQ(db.status().code(), StatusCode::kParseError);
  EXPECT_NE(db.status().message().find("not a tessera tuning database"), std::string::npos)
      << db.status().message();
  EXPECT_NE(db.status().message().find(path), std::string::npos);
  // Left as it was: not switched to WAL, no tables added.
  EXPECT_EQ(raw_query(path, "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM sqlite_master"), "1");
}

TEST(TuneDb, NewerSchemaIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("tune.sqlite");
  {
    TuneDb db = open_ok(path);
    ASSERT_TRUE(db.record(gemm_record()).is_ok());
  }
  raw_query(path, "UPDATE meta SET value = '7' WHERE key = 'schema_version'");
  auto db = TuneDb::open(path);
  ASSERT_FALSE(db.is_ok());
  EXPECT_EQ(db.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(db.status().message().find("schema version 7 is newer"), std::string::npos)
      << db.status().message();
  EXPECT_NE(db.status().message().find(path), std::string::npos);

  raw_query(path, "UPDATE meta SET value = 'one' WHERE key = 'schema_version'");
  auto garbled = TuneDb::open(path);
  ASSERT_FALSE(garbled.is_ok());
  EXPECT_EQ(garbled.status().code(), StatusCode::kParseError);
}

TEST(TuneDb, UnwritablePathIsAClearError) {
  ScratchDir dir;
  // A regular file where a directory should be: fails even for root.
  const std::string blocker = dir.file("blocker");
  std::ofstream(blocker) << "x";
  const std::string path = blocker + "/sub/tune.sqlite";
  auto db = TuneDb::open(path);
  ASSERT_FALSE(db.is_ok());
  EXPECT_EQ(db.status().code(), StatusCode::kIoError) << db.status().to_string();
  EXPECT_NE(db.status().message().find(path), std::string::npos) << db.status().message();

  // A directory where the file should be.
  auto on_dir = TuneDb::open(dir.path().string());
  ASSERT_FALSE(on_dir.is_ok());
  EXPECT_NE(on_dir.status().message().find(dir.path().string()), std::string::npos);

  EXPECT_EQ(TuneDb::open("").status().code(), StatusCode::kInvalidArgument);
}

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  void set(const char* name, const char* value) {
    if (saved_.find(name) == saved_.end()) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(TuneDb, DefaultPathHonoursEnvironment) {
  ScopedEnv env;
  env.set("TESSERA_TUNE_DB", "/srv/tuning/shared.sqlite");
  env.set("XDG_CACHE_HOME", "/xdg/cache");
  env.set("HOME", "/home/ada");
  EXPECT_EQ(default_db_path(), "/srv/tuning/shared.sqlite");
  env.set("TESSERA_TUNE_DB", "");  // empty counts as unset
  EXPECT_EQ(default_db_path(), "/xdg/cache/tessera/tune.sqlite");
  env.set("XDG_CACHE_HOME", "relative/cache");  // ignored, as the XDG spec says
  EXPECT_EQ(default_db_path(), "/home/ada/.cache/tessera/tune.sqlite");
  env.set("XDG_CACHE_HOME", nullptr);
  env.set("TESSERA_TUNE_DB", nullptr);
  EXPECT_EQ(default_db_path(), "/home/ada/.cache/tessera/tune.sqlite");

  ScratchDir dir;
  env.set("TESSERA_TUNE_DB", dir.file("from_env/tune.sqlite").c_str());
  TuneDb db = open_ok(default_db_path());
  EXPECT_TRUE(std::filesystem::exists(dir.file("from_env/tune.sqlite")));
}

TEST(TuneDb, DatabaseIsInWalMode) {
  ScratchDir dir;
  const std::string path = dir.file("tune.sqlite");
  TuneDb db = open_ok(path);
  EXPECT_EQ(raw_query(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_query(path, "SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(TuneDb::kSchemaVersion));
}

TEST(TuneDb, ExplainShowsWinnerRatiosAndReasons) {
  TuneDb db = open_ok(":memory:");
  ASSERT_TRUE(db.record(gemm_record()).is_ok());
  std::string text = explain(lookup_ok(db, gemm_key()));
  for (const char* part :
       {"blas/gemm", "f32 m=64 n=64 k=64 ta=n tb=n", "cpu x86_64 avx512 48c", "0.1.0", "bitwise",
        "winner       gemm_f32_avx512_6x32 {\"kc\":384,\"mc\":96}", "12.50 us", "1.00x", "1.12x",
        "1.60x", "<- winner", "note: smaller mc", "not bitwise deterministic",
        "no GPU on this machine", "not measured"})
    EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in\n" << text;
  // Fastest first: the winner, then mc=48 (14 us), then avx2 (20 us).
  auto winner = text.find("1.00x");
  auto second = text.find("1.12x");
  auto third = text.find("1.60x");
  EXPECT_LT(winner, second);
  EXPECT_LT(second, third);
  EXPECT_LT(text.find("rejected"), text.find("no GPU"));
}

}  // namespace
}  // namespace tessera::tune
