// The tuning database: one SQLite file for every library (BLAS, FFT, DNN) that remembers which
// solution won for a problem on a device, and why the others lost.
//
// An entry is keyed by TuneKey (library, primitive, problem signature, device fingerprint, library
// version, determinism level). It stores the winning solution and its parameters, every candidate
// that was considered with its measured time (median and spread over `samples` runs) and, for
// rejected candidates, the reason. docs/tune.md describes the schema and the JSON export format.
//
// Concurrency: the file is in WAL mode with a busy timeout, and every write is one
// `BEGIN IMMEDIATE` transaction retried while another writer holds the lock, so any number of
// processes and threads may read and write the same file at once. One TuneDb (one connection)
// must not be used by two threads at the same time; open one per thread. Never use a TuneDb
// across fork(): open a new one in the child.
//
// Errors are values: bad records are invalid_argument, malformed imports parse_error (naming the
// location, e.g. "entries[3].candidates[1].median_us: expected a number"), a file that is not a
// tessera tuning database parse_error or unsupported (newer schema), OS failures io_error; every
// message names the database path. A failed write leaves the database unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tessera/core/status.hpp>

struct sqlite3;

namespace tessera::tune {

// What an entry is about. Every field is a non-empty string chosen by the calling library:
//   library      "blas", "fft", "dnn"
//   primitive    "gemm", "conv2d_fwd", ...
//   signature    the problem, canonical and complete: "f32 m=512 n=512 k=512 ta=n tb=n"
//   device       the fingerprint computed by hal (model, ISA, driver, ...)
//   version      the library version whose solutions were measured ("0.1.0")
//   determinism  the determinism level the solution honours ("bitwise", "run_to_run", "none")
struct TuneKey {
  std::string library;
  std::string primitive;
  std::string signature;
  std::string device;
  std::string version;
  std::string determinism;
  bool operator==(const TuneKey&) const = default;
};

// One solution that was considered for a key.
//   params     JSON text (usually an object; "" means "{}"); stored in canonical compact form
//              (keys sorted, no spaces), so what lookup() returns may differ in spelling.
//   median_us  median time in microseconds over `samples` runs; finite and >= 0.
//   spread_us  spread of those runs (e.g. inter-quartile range) in microseconds; finite, >= 0.
//   samples    number of timed runs. An accepted candidate needs samples >= 1; a rejected one
//              may have 0 (never measured, e.g. it refused the problem), then its times are 0.
//   reason     why a rejected candidate was rejected (required, non-empty); optional note for
//              an accepted one.
struct Candidate {
  std::string solution;
  std::string params;
  double median_us = 0.0;
  double spread_us = 0.0;
  std::int64_t samples = 0;
  bool accepted = false;
  std::string reason;
  bool operator==(const Candidate&) const = default;
};

// One entry: the winner for `key` and every candidate, in the order the caller measured them.
//   solution/params  the winner. If `solution` is empty, the fastest accepted candidate wins
//                    (first on ties) and its params are taken; `params` must then be empty too.
//                    If `solution` is given it must name an accepted candidate (with equal params
//                    when `params` is non-empty; when `params` is empty, those of the fastest
//                    accepted candidate of that name).
//   created_at       seconds since the Unix epoch; 0 means "now" when recorded.
struct TuneRecord {
  TuneKey key;
  std::string solution;
  std::string params;
  std::vector<Candidate> candidates;
  std::int64_t created_at = 0;
  bool operator==(const TuneRecord&) const = default;
};

// Selects entries. An empty field matches everything. `library` and `primitive` match exactly;
// `device` matches any fingerprint that contains it (fingerprints are long; "avx512" is handy).
struct Filter {
  std::string library;
  std::string primitive;
  std::string device;
};

// A connection to one tuning database file. Movable, not copyable; closes the file when destroyed.
class TuneDb {
 public:
  // The schema this build reads and writes (stored in the `meta` table of every database).
  static constexpr int kSchemaVersion = 1;

  // Opens `path`, creating the file, its parent directories and the schema when missing.
  // ":memory:" opens a private in-memory database. Fails (naming the path) when the file is not
  // a SQLite database, is a SQLite database without tessera's tables, has a newer schema, or
  // cannot be created.
  static Result<TuneDb> open(const std::string& path);

  TuneDb(TuneDb&& other) noexcept;
  TuneDb& operator=(TuneDb&& other) noexcept;
  TuneDb(const TuneDb&) = delete;
  TuneDb& operator=(const TuneDb&) = delete;
  ~TuneDb();

  const std::string& path() const { return path_; }

  // Stores `record`, replacing any entry with the same key, in one transaction. The winner is
  // resolved as described at TuneRecord. invalid_argument (nothing written) when a key field is
  // empty, params are not JSON, a time is negative or not finite, a rejected candidate has no
  // reason, no candidate is accepted, or the named winner is not an accepted candidate.
  Status record(const TuneRecord& record);

  // The entry for `key`, or an empty optional when there is none.
  Result<std::optional<TuneRecord>> lookup(const TuneKey& key);

  // Entries matching `filter`, ordered by key (library, primitive, signature, device, version,
  // determinism).
  Result<std::vector<TuneRecord>> list(const Filter& filter = {});

  // Number of entries matching `filter`.
  Result<std::int64_t> count(const Filter& filter = {});

  // Deletes the entries matching `filter` (all of them for an empty filter); returns how many.
  Result<std::int64_t> clear(const Filter& filter = {});

  // The entries matching `filter` as a JSON document (docs/tune.md):
  //   {"format": "tessera-tune", "version": 1, "entries": [ ... ]}
  Result<std::string> export_json(const Filter& filter = {});

  // Imports a document written by export_json. Everything is validated before anything is
  // written; on any error the result is parse_error naming the location
  // ("entries[3].candidates[1].median_us: expected a number") and the database is unchanged.
  // Imported entries replace those with equal keys; two entries with one key in the document are
  // an error. All entries are written in one transaction. Returns the number of entries imported.
  Result<std::int64_t> import_json(std::string_view text);

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  TuneDb(std::string path, sqlite3* db);

  // Replaces the entries of `records` (already validated and resolved) in one write transaction.
  Status write_records(const std::vector<TuneRecord>& records);

  std::string path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

// A readable multi-line explanation of an entry: its key, the winner, the accepted candidates
// from fastest to slowest with their ratio to the winner, and the rejected ones with reasons.
std::string explain(const TuneRecord& record);

// The database the libraries and the CLI use: $TESSERA_TUNE_DB when set, else
// $XDG_CACHE_HOME/tessera/tune.sqlite, else $HOME/.cache/tessera/tune.sqlite.
std::string default_db_path();

}  // namespace tessera::tune
