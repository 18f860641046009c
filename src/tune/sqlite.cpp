// The RAII statement wrapper and the mapping of SQLite result codes to Status.
#include <limits>

#include "internal.hpp"

namespace tessera::tune::detail {

Status sqlite_status(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += (db != nullptr && sqlite3_errcode(db) == rc) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return unavailable(std::move(message));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return parse_error(std::move(message));
    case SQLITE_NOMEM:
      return out_of_memory(std::move(message));
    default:
      return io_error(std::move(message));
  }
}

Status exec(sqlite3* db, const char* sql) {
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqlite_status(db, rc, sql);
  return Status::ok();
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sqlite_status(db, rc, "preparing a statement");
  }
  return Statement(db, stmt);
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Status Statement::bind(int index, std::string_view text) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return invalid_argument("text too long for the tuning database");
  // An empty view may have a null data(); SQLite would then store NULL instead of "".
  const char* data = text.empty() ? "" : text.data();
  int rc = sqlite3_bind_text(stmt_, index, data, static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) return sqlite_status(db_, rc, "binding a value");
  return Status::ok();
}

Status Statement::bind(int index, std::int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) return sqlite_status(db_, rc, "binding a value");
  return Status::ok();
}

Status Statement::bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) return sqlite_status(db_, rc, "binding a value");
  return Status::ok();
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_status(db_, rc, "running a statement");
}

Status Statement::run() {
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(bool row, step());
    if (!row) break;
  }
  return reset();
}

Status Statement::reset() {
  int rc = sqlite3_reset(stmt_);
  if (rc != SQLITE_OK) return sqlite_status(db_, rc, "resetting a statement");
  sqlite3_clear_bindings(stmt_);
  return Status::ok();
}

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  int bytes = sqlite3_column_bytes(stmt_, index);
  if (text == nullptr || bytes <= 0) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(bytes));
}

std::int64_t Statement::column_int(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

double Statement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}

}  // namespace tessera::tune::detail
