#include "controller/results/sqlite.h"

#include <utility>

#include "common/strings.h"

namespace stormark::controller::sqlite {

using common::Status;
using common::StatusOr;
using common::StrCat;

namespace {

// SQLite's result codes mapped onto the Status codes a caller acts on.
absl::StatusCode CodeFor(int code) {
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kNotFound;
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
      return absl::StatusCode::kDataLoss;
    case SQLITE_CONSTRAINT:
      return absl::StatusCode::kAlreadyExists;
    case SQLITE_FULL:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kInternal;
  }
}

// Remembers the first failed bind, which the next Step reports.
void Keep(int* first_error, int code) {
  if (*first_error == SQLITE_OK && code != SQLITE_OK) *first_error = code;
}

}  // namespace

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int index, int64_t value) {
  Keep(&bind_error_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  Keep(&bind_error_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  Keep(&bind_error_,
       sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::Bind(int index, std::optional<int64_t> value) {
  return value ? Bind(index, *value) : BindNull(index);
}

Statement& Statement::BindBlob(int index, std::string_view bytes) {
  // A zero-length blob is bound as such, not as NULL: "" and "absent" differ.
  Keep(&bind_error_, bytes.empty() ? sqlite3_bind_zeroblob(stmt_, index, 0)
                                   : sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(),
                                                         SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::BindNull(int index) {
  Keep(&bind_error_, sqlite3_bind_null(stmt_, index));
  return *this;
}

StatusOr<bool> Statement::Step() {
  if (bind_error_ != SQLITE_OK) {
    return db_->Error(bind_error_, StrCat("binding ", sqlite3_sql(stmt_)));
  }
  const int code = sqlite3_step(stmt_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  return db_->Error(code, sqlite3_sql(stmt_));
}

Status Statement::Run() {
  StatusOr<bool> stepped = Step();
  Reset();
  return stepped.status();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = SQLITE_OK;
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text == nullptr
             ? std::string()
             : std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Statement::Blob(int column) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  return data == nullptr
             ? std::string()
             : std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path, bool create,
                                                   int busy_timeout_ms) {
  sqlite3* handle = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  const int code = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (code != SQLITE_OK) {
    Status error = absl::Status(
        CodeFor(code),
        StrCat(path, ": ", handle != nullptr ? sqlite3_errmsg(handle) : sqlite3_errstr(code)));
    sqlite3_close(handle);  // Allocated even when the open failed.
    return error;
  }
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, busy_timeout_ms);
  return std::unique_ptr<Database>(new Database(handle, path));
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::SetBusyTimeout(int busy_timeout_ms) { sqlite3_busy_timeout(db_, busy_timeout_ms); }

Status Database::Error(int code, std::string_view what) const {
  return absl::Status(CodeFor(code), StrCat(path_, ": ", sqlite3_errmsg(db_), " (", what, ")"));
}

Status Database::Exec(const std::string& sql) {
  char* message = nullptr;
  const int code = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (code == SQLITE_OK) return absl::OkStatus();
  Status error = absl::Status(
      CodeFor(code), StrCat(path_, ": ", message != nullptr ? message : sqlite3_errstr(code)));
  sqlite3_free(message);
  return error;
}

StatusOr<Statement> Database::Prepare(const std::string& sql) const {
  sqlite3_stmt* stmt = nullptr;
  const int code =
      sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (code != SQLITE_OK) return Error(code, sql);
  return Statement(this, stmt);
}

StatusOr<int64_t> Database::QueryInt(const std::string& sql) const {
  ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::NotFoundError(StrCat(path_, ": no row from ", sql));
  return stmt.Int(0);
}

StatusOr<Transaction> Transaction::Begin(Database* db) {
  RETURN_IF_ERROR(db->Exec("BEGIN IMMEDIATE"));
  return Transaction(db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) db_->Exec("ROLLBACK").IgnoreError();
}

Status Transaction::Commit() {
  Database* db = std::exchange(db_, nullptr);
  Status committed = db->Exec("COMMIT");
  if (!committed.ok()) db->Exec("ROLLBACK").IgnoreError();
  return committed;
}

}  // namespace stormark::controller::sqlite
