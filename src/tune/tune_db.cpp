// TuneDb: opening (schema creation and checks), transactions with retry, and the record
// operations. JSON export/import live in json_io.cpp, explain() in explain.cpp.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include <unistd.h>

#include <tessera/core/log.hpp>

#include "internal.hpp"

namespace tessera::tune {

using detail::exec;
using detail::Statement;

namespace {

constexpr int kBusyTimeoutMs = 5000;
// A write waits up to kBusyTimeoutMs for the lock per attempt, then starts over.
constexpr int kWriteAttempts = 12;
constexpr int kJournalModeAttempts = 100;  // with back_off(): up to about 4 s
constexpr char kFormatTag[] = "tessera-tune";

constexpr char kSchemaSql[] = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries (
  id INTEGER PRIMARY KEY,
  library TEXT NOT NULL, primitive TEXT NOT NULL, signature TEXT NOT NULL,
  device TEXT NOT NULL, version TEXT NOT NULL, determinism TEXT NOT NULL,
  solution TEXT NOT NULL, params TEXT NOT NULL, created_at INTEGER NOT NULL,
  UNIQUE (library, primitive, signature, device, version, determinism));
CREATE TABLE candidates (
  entry_id INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  solution TEXT NOT NULL, params TEXT NOT NULL,
  median_us REAL NOT NULL, spread_us REAL NOT NULL, samples INTEGER NOT NULL,
  accepted INTEGER NOT NULL, reason TEXT NOT NULL,
  PRIMARY KEY (entry_id, position)) WITHOUT ROWID;
)sql";

constexpr char kEntryColumns[] =
    "SELECT id, library, primitive, signature, device, version, determinism, solution, params, "
    "created_at FROM entries ";
constexpr char kKeyWhere[] =
    "library = ?1 AND primitive = ?2 AND signature = ?3 AND device = ?4 AND version = ?5 AND "
    "determinism = ?6";
constexpr char kFilterWhere[] =
    "(?1 = '' OR library = ?1) AND (?2 = '' OR primitive = ?2) AND (?3 = '' OR instr(device, ?3) "
    "> 0)";
constexpr char kKeyOrder[] =
    " ORDER BY library, primitive, signature, device, version, determinism";

std::string context_of(const std::string& path) {
  return "tuning database " + path;
}

std::int64_t now_seconds() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

Status bind_key(Statement& s, const TuneKey& k) {
  TESSERA_RETURN_IF_ERROR(s.bind(1, k.library));
  TESSERA_RETURN_IF_ERROR(s.bind(2, k.primitive));
  TESSERA_RETURN_IF_ERROR(s.bind(3, k.signature));
  TESSERA_RETURN_IF_ERROR(s.bind(4, k.device));
  TESSERA_RETURN_IF_ERROR(s.bind(5, k.version));
  return s.bind(6, k.determinism);
}

Status bind_filter(Statement& s, const Filter& f) {
  TESSERA_RETURN_IF_ERROR(s.bind(1, f.library));
  TESSERA_RETURN_IF_ERROR(s.bind(2, f.primitive));
  return s.bind(3, f.device);
}

void rollback_if_open(sqlite3* db) {
  if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
}

// Sleeps before retry `attempt` (>= 1): growing, capped at 50 ms, with per-process jitter so
// processes that collided once do not collide again in lock step.
void back_off(int attempt) {
  static thread_local std::minstd_rand jitter(static_cast<unsigned>(::getpid()) * 2654435761u);
  const int ms = std::min(50, 2 * attempt) + static_cast<int>(jitter() % 5);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Runs `fn` inside BEGIN IMMEDIATE ... COMMIT; starts over while another writer holds the lock.
template <typename Fn>
Status with_write_transaction(sqlite3* db, Fn&& fn) {
  Status last;
  for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
    if (attempt > 0) {
      TESSERA_VLOG(kTune) << "database busy, retrying a write (attempt " << attempt + 1 << ")";
      back_off(attempt);
    }
    last = exec(db, "BEGIN IMMEDIATE");
    if (last.is_ok()) last = fn();
    if (last.is_ok()) last = exec(db, "COMMIT");
    if (last.is_ok()) return last;
    rollback_if_open(db);
    if (last.code() != StatusCode::kUnavailable) return last;
  }
  return last;
}

// Runs `fn` inside one read transaction, so it sees one consistent snapshot.
template <typename Fn>
Status with_read_transaction(sqlite3* db, Fn&& fn) {
  TESSERA_RETURN_IF_ERROR(exec(db, "BEGIN"));
  Status s = fn();
  rollback_if_open(db);
  return s;
}

// Reads the entries selected by `entries` (built on kEntryColumns) with their candidates.
Result<std::vector<TuneRecord>> read_records(sqlite3* db, Statement& entries) {
  std::vector<TuneRecord> records;
  std::vector<std::int64_t> ids;
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(bool row, entries.step());
    if (!row) break;
    TuneRecord r;
    ids.push_back(entries.column_int(0));
    r.key = {entries.column_text(1), entries.column_text(2), entries.column_text(3),
             entries.column_text(4), entries.column_text(5), entries.column_text(6)};
    r.solution = entries.column_text(7);
    r.params = entries.column_text(8);
    r.created_at = entries.column_int(9);
    records.push_back(std::move(r));
  }
  TESSERA_ASSIGN_OR_RETURN(
      Statement candidates,
      Statement::prepare(db,
                         "SELECT solution, params, median_us, spread_us, samples, accepted, reason "
                         "FROM candidates WHERE entry_id = ?1 ORDER BY position"));
  for (std::size_t i = 0; i < records.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(candidates.bind(1, ids[i]));
    for (;;) {
      TESSERA_ASSIGN_OR_RETURN(bool row, candidates.step());
      if (!row) break;
      records[i].candidates.push_back({candidates.column_text(0), candidates.column_text(1),
                                       candidates.column_double(2), candidates.column_double(3),
                                       candidates.column_int(4), candidates.column_int(5) != 0,
                                       candidates.column_text(6)});
    }
    TESSERA_RETURN_IF_ERROR(candidates.reset());
  }
  return records;
}

// The value of meta[key], or nullopt.
Result<std::optional<std::string>> read_meta(sqlite3* db, const char* key) {
  TESSERA_ASSIGN_OR_RETURN(Statement s,
                           Statement::prepare(db, "SELECT value FROM meta WHERE key = ?1"));
  TESSERA_RETURN_IF_ERROR(s.bind(1, std::string_view(key)));
  TESSERA_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.column_text(0));
}

// Which tables the file has, read in one statement so that both counts come from one snapshot
// (another process may be creating the schema meanwhile).
struct Tables {
  bool meta = false;
  bool any = false;
};
Result<Tables> read_tables(sqlite3* db) {
  TESSERA_ASSIGN_OR_RETURN(
      Statement s,
      Statement::prepare(db,
                         "SELECT sum(name = 'meta'), count(*) FROM sqlite_master WHERE "
                         "type = 'table' AND name NOT LIKE 'sqlite_%'"));
  TESSERA_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return Tables{};
  return Tables{s.column_int(0) > 0, s.column_int(1) > 0};
}

// Checks the meta table of an existing tessera database.
Status check_schema(sqlite3* db) {
  TESSERA_ASSIGN_OR_RETURN(auto format, read_meta(db, "format"));
  TESSERA_ASSIGN_OR_RETURN(auto version, read_meta(db, "schema_version"));
  if (!format || *format != kFormatTag || !version)
    return parse_error("a SQLite database, but not a tessera tuning database (bad meta table)");
  long long v = 0;
  try {
    std::size_t used = 0;
    v = std::stoll(*version, &used);
    if (used != version->size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    return parse_error("schema version '" + *version + "' is not a number");
  }
  if (v > TuneDb::kSchemaVersion)
    return unsupported("schema version " + std::to_string(v) + " is newer than this tessera " +
                       "supports (" + std::to_string(TuneDb::kSchemaVersion) +
                       "); upgrade tessera or point TESSERA_TUNE_DB elsewhere");
  if (v < TuneDb::kSchemaVersion)
    return unsupported("schema version " + std::to_string(v) + " is not supported");
  return Status::ok();
}

// Refuses files that are not ours before anything is written to them.
Result<bool> inspect_schema(sqlite3* db) {
  // Reading the schema first gives "file is not a database" a clear place to surface.
  TESSERA_ASSIGN_OR_RETURN(Tables tables, read_tables(db));
  if (tables.meta) {
    TESSERA_RETURN_IF_ERROR(check_schema(db));
    return true;
  }
  if (tables.any)
    return parse_error("a SQLite database, but not a tessera tuning database (no meta table)");
  return false;
}

// Creates the schema in an empty database under the write lock, so processes opening a new
// file together create it once.
Status create_schema(sqlite3* db) {
  return with_write_transaction(db, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(bool exists, inspect_schema(db));
    if (exists) return Status::ok();
    TESSERA_RETURN_IF_ERROR(exec(db, kSchemaSql));
    TESSERA_ASSIGN_OR_RETURN(Statement s,
                             Statement::prepare(db, "INSERT INTO meta VALUES (?1, ?2), (?3, ?4)"));
    TESSERA_RETURN_IF_ERROR(s.bind(1, std::string_view("format")));
    TESSERA_RETURN_IF_ERROR(s.bind(2, std::string_view(kFormatTag)));
    TESSERA_RETURN_IF_ERROR(s.bind(3, std::string_view("schema_version")));
    TESSERA_RETURN_IF_ERROR(s.bind(4, std::to_string(TuneDb::kSchemaVersion)));
    return s.run();
  });
}

// Checks the file, switches it to WAL and creates the schema when it is new. Changing the
// journal mode needs the lock, so it is retried like a write.
Status prepare_connection(sqlite3* db) {
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  TESSERA_ASSIGN_OR_RETURN(bool has_schema, inspect_schema(db));
  Status s;
  // SQLite answers "locked" here at once, without its busy handler, while another process
  // is converting the same new file: back off and try again.
  for (int attempt = 0; attempt < kJournalModeAttempts; ++attempt) {
    if (attempt > 0) back_off(attempt);
    s = exec(db, "PRAGMA journal_mode = WAL");
    if (s.code() != StatusCode::kUnavailable) break;
  }
  TESSERA_RETURN_IF_ERROR(s);
  TESSERA_RETURN_IF_ERROR(exec(db, "PRAGMA synchronous = NORMAL"));
  TESSERA_RETURN_IF_ERROR(exec(db, "PRAGMA foreign_keys = ON"));
  return has_schema ? Status::ok() : create_schema(db);
}

}  // namespace

void TuneDb::Closer::operator()(sqlite3* db) const {
  sqlite3_close_v2(db);
}

TuneDb::TuneDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
TuneDb::TuneDb(TuneDb&& other) noexcept = default;
TuneDb& TuneDb::operator=(TuneDb&& other) noexcept = default;
TuneDb::~TuneDb() = default;

Result<TuneDb> TuneDb::open(const std::string& path) {
  const std::string context = context_of(path);
  if (path.empty()) return invalid_argument("tuning database: empty path");
  if (path != ":memory:") {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
      std::filesystem::create_directories(parent, ec);
      if (ec)
        return io_error("cannot create directory " + parent.string() + ": " + ec.message())
            .with_context(context);
    }
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  TuneDb db(path, raw);  // owns the handle even when opening failed
  if (rc != SQLITE_OK) return detail::sqlite_status(raw, rc, "cannot open").with_context(context);
  Status s = prepare_connection(raw);
  if (!s.is_ok()) {
    if (s.message().find("file is not a database") != std::string::npos)
      return parse_error("not a SQLite database").with_context(context);
    return s.with_context(context);
  }
  TESSERA_VLOG(kTune) << "opened " << path;
  return db;
}

Status TuneDb::record(const TuneRecord& record) {
  TuneRecord resolved = record;
  Status s = detail::validate_and_resolve(resolved);
  if (!s.is_ok())
    return s.with_context(context_of(path_) + ": recording " + detail::describe_key(record.key));
  if (resolved.created_at == 0) resolved.created_at = now_seconds();
  TESSERA_RETURN_IF_ERROR(write_records({resolved}));
  TESSERA_VLOG(kTune) << "recorded " << detail::describe_key(resolved.key) << ": "
                      << resolved.solution << " " << resolved.params << " ("
                      << resolved.candidates.size() << " candidates)";
  return Status::ok();
}

Status TuneDb::write_records(const std::vector<TuneRecord>& records) {
  sqlite3* db = db_.get();
  Status s = with_write_transaction(db, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(
        Statement remove,
        Statement::prepare(db, std::string("DELETE FROM entries WHERE ") + kKeyWhere));
    TESSERA_ASSIGN_OR_RETURN(
        Statement insert_entry,
        Statement::prepare(db,
                           "INSERT INTO entries (library, primitive, signature, device, version, "
                           "determinism, solution, params, created_at) VALUES "
                           "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
    TESSERA_ASSIGN_OR_RETURN(Statement orphans,
                             Statement::prepare(db, "DELETE FROM candidates WHERE entry_id = ?1"));
    TESSERA_ASSIGN_OR_RETURN(
        Statement insert_candidate,
        Statement::prepare(db,
                           "INSERT INTO candidates VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
    for (const TuneRecord& r : records) {
      TESSERA_RETURN_IF_ERROR(bind_key(remove, r.key));
      TESSERA_RETURN_IF_ERROR(remove.run());
      TESSERA_RETURN_IF_ERROR(bind_key(insert_entry, r.key));
      TESSERA_RETURN_IF_ERROR(insert_entry.bind(7, r.solution));
      TESSERA_RETURN_IF_ERROR(insert_entry.bind(8, r.params));
      TESSERA_RETURN_IF_ERROR(insert_entry.bind(9, r.created_at));
      TESSERA_RETURN_IF_ERROR(insert_entry.run());
      const std::int64_t id = sqlite3_last_insert_rowid(db);
      // Candidates left behind by a tool that deleted entries without foreign keys enabled.
      TESSERA_RETURN_IF_ERROR(orphans.bind(1, id));
      TESSERA_RETURN_IF_ERROR(orphans.run());
      for (std::size_t i = 0; i < r.candidates.size(); ++i) {
        const Candidate& c = r.candidates[i];
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(1, id));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(2, static_cast<std::int64_t>(i)));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(3, c.solution));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(4, c.params));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(5, c.median_us));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(6, c.spread_us));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(7, c.samples));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(8, std::int64_t{c.accepted ? 1 : 0}));
        TESSERA_RETURN_IF_ERROR(insert_candidate.bind(9, c.reason));
        TESSERA_RETURN_IF_ERROR(insert_candidate.run());
      }
    }
    return Status::ok();
  });
  return s.with_context(context_of(path_));
}

Result<std::optional<TuneRecord>> TuneDb::lookup(const TuneKey& key) {
  sqlite3* db = db_.get();
  std::vector<TuneRecord> found;
  Status s = with_read_transaction(db, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(Statement select, Statement::prepare(db, std::string(kEntryColumns) +
                                                                          "WHERE " + kKeyWhere));
    TESSERA_RETURN_IF_ERROR(bind_key(select, key));
    TESSERA_ASSIGN_OR_RETURN(found, read_records(db, select));
    return Status::ok();
  });
  if (!s.is_ok()) return s.with_context(context_of(path_));
  if (found.empty()) {
    TESSERA_VLOG(kTune) << "lookup " << detail::describe_key(key) << ": miss";
    return std::optional<TuneRecord>();
  }
  TESSERA_VLOG(kTune) << "lookup " << detail::describe_key(key) << ": " << found[0].solution << " "
                      << found[0].params;
  return std::optional<TuneRecord>(std::move(found[0]));
}

Result<std::vector<TuneRecord>> TuneDb::list(const Filter& filter) {
  sqlite3* db = db_.get();
  std::vector<TuneRecord> found;
  Status s = with_read_transaction(db, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(
        Statement select,
        Statement::prepare(db, std::string(kEntryColumns) + "WHERE " + kFilterWhere + kKeyOrder));
    TESSERA_RETURN_IF_ERROR(bind_filter(select, filter));
    TESSERA_ASSIGN_OR_RETURN(found, read_records(db, select));
    return Status::ok();
  });
  if (!s.is_ok()) return s.with_context(context_of(path_));
  return found;
}

Result<std::int64_t> TuneDb::count(const Filter& filter) {
  sqlite3* db = db_.get();
  std::int64_t n = 0;
  Status s = [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(
        Statement select,
        Statement::prepare(db, std::string("SELECT count(*) FROM entries WHERE ") + kFilterWhere));
    TESSERA_RETURN_IF_ERROR(bind_filter(select, filter));
    TESSERA_ASSIGN_OR_RETURN(bool row, select.step());
    if (row) n = select.column_int(0);
    return Status::ok();
  }();
  if (!s.is_ok()) return s.with_context(context_of(path_));
  return n;
}

Result<std::int64_t> TuneDb::clear(const Filter& filter) {
  sqlite3* db = db_.get();
  std::int64_t n = 0;
  Status s = with_write_transaction(db, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(
        Statement remove,
        Statement::prepare(db, std::string("DELETE FROM entries WHERE ") + kFilterWhere));
    TESSERA_RETURN_IF_ERROR(bind_filter(remove, filter));
    TESSERA_RETURN_IF_ERROR(remove.run());
    n = sqlite3_changes64(db);
    return Status::ok();
  });
  if (!s.is_ok()) return s.with_context(context_of(path_));
  TESSERA_VLOG(kTune) << "cleared " << n << " entries from " << path_;
  return n;
}

}  // namespace tessera::tune
