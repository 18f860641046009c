// Helpers of the tune tests: a scratch directory per test and sample records.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <tessera/tune/tune_db.hpp>

#include "test_util.hpp"

namespace tessera::tune::testing_util {

// A fresh directory under testing::TempDir(), removed with everything in it at the end.
using ScratchDir = tessera::testing::TempDir;

// Opens a database that must open (the test fails otherwise).
inline TuneDb open_ok(const std::string& path) {
  auto db = TuneDb::open(path);
  EXPECT_TRUE(db.is_ok()) << db.status().to_string();
  return std::move(db).value();
}

inline TuneKey gemm_key(const std::string& signature = "f32 m=64 n=64 k=64 ta=n tb=n",
                        const std::string& device = "cpu x86_64 avx512 48c") {
  return {"blas", "gemm", signature, device, "0.1.0", "bitwise"};
}

// Three accepted candidates (avx512 fastest), one rejected after measuring, one never measured.
inline TuneRecord gemm_record(const TuneKey& key = gemm_key()) {
  TuneRecord r;
  r.key = key;
  r.candidates = {
      {"gemm_f32_avx2_6x16", R"({"kc": 256})", 20.0, 0.5, 10, true, ""},
      {"gemm_f32_avx512_6x32", R"({"mc": 96, "kc": 384})", 12.5, 0.25, 10, true, ""},
      {"gemm_f32_avx512_6x32", R"({"mc": 48, "kc": 384})", 14.0, 0.25, 10, true, "smaller mc"},
      {"gemm_f32_avx512_k_split", "", 9.0, 0.5, 10, false, "not bitwise deterministic"},
      {"gemm_gpu", "", 0.0, 0.0, 0, false, "no GPU on this machine"},
  };
  return r;
}

// The value of an ok Result; a failed expectation (and T{}) otherwise.
template <typename T>
T value_of(Result<T> result) {
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  return result.is_ok() ? std::move(result).value() : T{};
}

// Runs one SQL statement with a separate raw connection and returns the first column of the
// first row ("" when none).
inline std::string raw_query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr)
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
  } else {
    out = "cannot open";
  }
  sqlite3_close(db);
  return out;
}

}  // namespace tessera::tune::testing_util
