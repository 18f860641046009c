// Pieces shared by the files of the tune layer: a thin RAII layer over sqlite3 statements and
// the validation of records (used by record() and import_json()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include <tessera/core/status.hpp>
#include <tessera/tune/tune_db.hpp>

namespace tessera::tune::detail {

// SQLITE_BUSY / SQLITE_LOCKED become `unavailable` (the write loop retries those); a file that
// is not a database becomes parse_error; everything else io_error. `what` says what was tried.
Status sqlite_status(sqlite3* db, int rc, std::string_view what);

// Runs SQL without results (pragmas, schema, BEGIN/COMMIT).
Status exec(sqlite3* db, const char* sql);

// A prepared statement. Text is bound and read with explicit lengths, so any bytes round-trip.
class Statement {
 public:
  static Result<Statement> prepare(sqlite3* db, std::string_view sql);
  Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
  }
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Binds parameter `index` (1-based).
  Status bind(int index, std::string_view text);
  Status bind(int index, std::int64_t value);
  Status bind(int index, double value);

  // Advances: true with a row, false when done.
  Result<bool> step();
  // Runs to completion, ignoring rows, and resets for the next use.
  Status run();
  Status reset();

  std::string column_text(int index) const;
  std::int64_t column_int(int index) const;
  double column_double(int index) const;

 private:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// JSON nested deeper than this is refused: nlohmann's dump and comparisons recurse.
constexpr int kMaxJsonDepth = 64;

// Whether the brackets of `text` (outside strings) nest at most `max_depth` deep. A cheap scan
// made before parsing untrusted text.
bool nesting_within(std::string_view text, int max_depth);

// Parses `params` as JSON and returns its canonical compact spelling ("" becomes "{}").
// The error message says what is wrong, without location.
Result<std::string> canonical_params(std::string_view params);

// Checks `record` against the contract in tune_db.hpp and resolves it in place: canonical params,
// winner filled in. Errors are invalid_argument with messages relative to the record, such as
// "candidates[1].reason: a rejected candidate needs a reason".
Status validate_and_resolve(TuneRecord& record);

// "blas/gemm [f32 m=4 n=4 k=4] on <device> v0.1.0 (bitwise)": for messages and logs.
std::string describe_key(const TuneKey& key);

}  // namespace tessera::tune::detail
