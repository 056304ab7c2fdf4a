// A thin layer over SQLite's C API: a database handle, prepared statements with typed binds
// and columns, and a transaction guard. Every failure is a Status naming the database file
// and SQLite's message; nothing throws.
//
// Not thread-safe: a Database (and its statements) is used by one thread at a time; handing it
// to another thread needs a happens-before (a join), as the phase writer's does.
#ifndef STORMARK_CONTROLLER_RESULTS_SQLITE_H_
#define STORMARK_CONTROLLER_RESULTS_SQLITE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::controller::sqlite {

class Database;

// A value Insert binds as a BLOB rather than as text.
struct BlobParam {
  std::string_view bytes;
};

// One prepared statement. Bind parameters are numbered from 1, columns from 0, as in SQLite.
// A statement must not outlive its Database.
class Statement {
 public:
  Statement(Statement&&) noexcept;
  Statement& operator=(Statement&&) noexcept;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Statement& Bind(int index, std::optional<int64_t> value);
  Statement& BindBlob(int index, std::string_view bytes);
  Statement& BindNull(int index);
  Statement& Bind(int index, BlobParam blob) { return BindBlob(index, blob.bytes); }

  // Binds `values` to parameters 1, 2, ... in order and runs the statement: one row of an
  // INSERT without counting parameters by hand. Integers must be int64_t.
  template <typename... Values>
  common::Status Insert(const Values&... values) {
    int index = 0;
    (Bind(++index, values), ...);
    return Run();
  }

  // Advances to the next row: true for a row, false when done. An error (a bind that failed
  // earlier included) is returned as a Status.
  common::StatusOr<bool> Step();
  // Steps a statement that returns no rows (INSERT, UPDATE, DDL) and resets it for reuse.
  common::Status Run();
  // Clears the bindings and rewinds, for the next execution.
  void Reset();

  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  std::string Blob(int column) const;
  bool IsNull(int column) const;

 private:
  friend class Database;
  Statement(const Database* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  const Database* db_;
  sqlite3_stmt* stmt_;
  // The first bind error, reported by the next Step.
  int bind_error_ = SQLITE_OK;
};

// How long a statement waits for another process's lock by default.
inline constexpr int kBusyTimeoutMs = 5000;

class Database {
 public:
  // Opens (creating when `create` is set) the database file at `path`. Waits up to
  // `busy_timeout_ms` for another process's lock before a statement fails with "busy".
  static common::StatusOr<std::unique_ptr<Database>> Open(const std::string& path, bool create,
                                                          int busy_timeout_ms = kBusyTimeoutMs);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more statements that take no parameters and return nothing useful.
  common::Status Exec(const std::string& sql);
  common::StatusOr<Statement> Prepare(const std::string& sql) const;
  // The integer in the first column of the first row of `sql` (PRAGMA user_version, COUNT).
  common::StatusOr<int64_t> QueryInt(const std::string& sql) const;

  // How long a statement waits for another process's lock from now on.
  void SetBusyTimeout(int busy_timeout_ms);

  const std::string& path() const { return path_; }
  // "PATH: MESSAGE (what)" for the last error on this connection.
  common::Status Error(int code, std::string_view what) const;

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
};

// BEGIN IMMEDIATE on construction; Commit() makes it durable; destruction without Commit rolls
// back, so an early return on error leaves the database as it was.
class Transaction {
 public:
  static common::StatusOr<Transaction> Begin(Database* db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  common::Status Commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;  // nullptr once committed or moved from.
};

}  // namespace stormark::controller::sqlite

#endif  // STORMARK_CONTROLLER_RESULTS_SQLITE_H_
