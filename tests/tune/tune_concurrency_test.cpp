// Several processes and threads writing one database file at once: every write lands exactly
// once and the file stays intact. No timing assertions.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "tune/tune_test_util.hpp"

namespace tessera::tune {
namespace {

using testing_util::raw_query;
using testing_util::ScratchDir;

constexpr int kWriters = 4;
constexpr int kOwnEntries = 100;
constexpr int kSharedKeys = 10;

TuneRecord writer_record(const std::string& signature, int writer, int i) {
  TuneRecord r;
  r.key = {"blas", "gemm", signature, "cpu test device", "0.1.0", "bitwise"};
  const double t = 1.0 + writer + i * 0.01;
  r.candidates = {
      {"writer_" + std::to_string(writer), R"({"i":)" + std::to_string(i) + "}", t, 0.1, 5, true,
       ""},
      {"slow", "", t * 2, 0.1, 5, true, ""},
      {"refused", "", 0.0, 0.0, 0, false, "does not apply"},
  };
  return r;
}

// The work of one writer: its own entries, interleaved with writes to keys all writers share.
// Returns an error message, or "" on success.
std::string write_entries(const std::string& path, int writer) {
  auto db = TuneDb::open(path);
  if (!db.is_ok()) return db.status().to_string();
  for (int i = 0; i < kOwnEntries; ++i) {
    std::string signature = "own w=" + std::to_string(writer) + " i=" + std::to_string(i);
    Status s = db->record(writer_record(signature, writer, i));
    if (!s.is_ok()) return s.to_string();
    if (i % (kOwnEntries / kSharedKeys) == 0) {
      int shared = i / (kOwnEntries / kSharedKeys);
      s = db->record(writer_record("shared " + std::to_string(shared), writer, shared));
      if (!s.is_ok()) return s.to_string();
    }
    auto found = db->lookup(writer_record(signature, writer, i).key);
    if (!found.is_ok()) return found.status().to_string();
    if (!found->has_value()) return "own entry missing right after recording it";
  }
  return "";
}

// After all writers: the exact count, consistent shared entries, an intact file.
void check_database(const std::string& path, int writers) {
  auto db = TuneDb::open(path);
  ASSERT_TRUE(db.is_ok()) << db.status().to_string();
  auto n = db->count();
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  EXPECT_EQ(*n, writers * kOwnEntries + kSharedKeys);
  for (int k = 0; k < kSharedKeys; ++k) {
    auto found = db->lookup(writer_record("shared " + std::to_string(k), 0, k).key);
    ASSERT_TRUE(found.is_ok() && found->has_value()) << "shared " << k;
    const TuneRecord& r = **found;
    // One writer's record, whole: its winner is its own first candidate.
    ASSERT_EQ(r.candidates.size(), 3u);
    EXPECT_EQ(r.solution, r.candidates[0].solution);
    EXPECT_EQ(r.params, r.candidates[0].params);
  }
  EXPECT_EQ(raw_query(path, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(raw_query(path, "PRAGMA foreign_key_check"), "");
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM candidates"),
            std::to_string((writers * kOwnEntries + kSharedKeys) * 3));
}

TEST(TuneConcurrency, ForkedProcessesWriteOneFile) {
  ScratchDir dir;
  // The writers also race to create the file and its schema.
  const std::string path = dir.file("shared/tune.sqlite");
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      std::string error = write_entries(path, w);
      if (!error.empty()) std::fprintf(stderr, "writer %d: %s\n", w, error.c_str());
      _exit(error.empty() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (std::size_t w = 0; w < children.size(); ++w) {
    int status = 0;
    ASSERT_EQ(waitpid(children[w], &status, 0), children[w]);
    EXPECT_TRUE(WIFEXITED(status)) << "writer " << w << " did not exit normally";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "writer " << w << " failed (see its stderr)";
  }
  check_database(path, kWriters);
}

TEST(TuneConcurrency, ProcessesOpeningANewFileTogetherCreateItOnce) {
  ScratchDir dir;
  constexpr int kRounds = 5;
  constexpr int kProcesses = 6;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = dir.file("round" + std::to_string(round) + "/tune.sqlite");
    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
      pid_t pid = fork();
      ASSERT_GE(pid, 0) << "fork failed";
      if (pid == 0) {
        auto db = TuneDb::open(path);
        Status s =
            db.is_ok() ? db->record(writer_record("sig " + std::to_string(p), p, 0)) : db.status();
        if (!s.is_ok()) std::fprintf(stderr, "process %d: %s\n", p, s.to_string().c_str());
        _exit(s.is_ok() ? 0 : 1);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
    auto db = TuneDb::open(path);
    ASSERT_TRUE(db.is_ok()) << db.status().to_string();
    EXPECT_EQ(testing_util::value_of(db->count()), kProcesses);
    EXPECT_EQ(raw_query(path, "SELECT count(*) FROM meta"), "2");
  }
}

TEST(TuneConcurrency, ThreadsWithSeparateConnections) {
  ScratchDir dir;
  const std::string path = dir.file("tune.sqlite");
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] { errors[static_cast<std::size_t>(w)] = write_entries(path, w); });
  for (auto& t : threads) t.join();
  for (int w = 0; w < kWriters; ++w)
    EXPECT_EQ(errors[static_cast<std::size_t>(w)], "") << "writer " << w;
  check_database(path, kWriters);
}

TEST(TuneConcurrency, ReaderSeesWholeEntriesWhileWritersRun) {
  ScratchDir dir;
  const std::string path = dir.file("tune.sqlite");
  ASSERT_TRUE(TuneDb::open(path).is_ok());
  std::string writer_error;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    writer_error = write_entries(path, 0);
    done = true;
  });
  auto db = TuneDb::open(path);
  ASSERT_TRUE(db.is_ok());
  std::size_t seen = 0;
  for (;;) {
    const bool finished = done.load();
    auto all = db->list();
    ASSERT_TRUE(all.is_ok()) << all.status().to_string();
    for (const TuneRecord& r : *all) ASSERT_EQ(r.candidates.size(), 3u);
    EXPECT_GE(all->size(), seen);  // a snapshot never goes back
    seen = all->size();
    if (finished) break;
  }
  writer.join();
  EXPECT_EQ(writer_error, "");
  EXPECT_EQ(seen, static_cast<std::size_t>(kOwnEntries + kSharedKeys));
}

}  // namespace
}  // namespace tessera::tune
