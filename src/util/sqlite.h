// SQLite files that saturate keeps (tune's trial cache, sweep's journal): one connection type and one prepared
// statement type, with errors as values that name the file.
//
// A Database is opened read-write (created when missing) or read-only, with a busy timeout, so a second process
// that holds the lock is waited on rather than failed; optionally in WAL mode with synchronous=FULL and foreign keys on (the
// journal's durability). Errors read "<label> <path>: <what>: <SQLite's message>", e.g.
// "journal lr.journal: cannot record runs: database is locked".
//
// Threads: neither type locks (SQLITE_OPEN_NOMUTEX); one owner at a time, or the owner's own mutex. A Statement
// must not outlive its Database.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace sat::sqlite {

// A prepared statement, finalised on destruction. A failure to prepare or bind is kept and returned by the next
// Step, so a chain of Binds needs one check. Parameters are 1-based, columns 0-based.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int i, int64_t v);
  Statement& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Statement& Bind(int i, uint64_t v) { return Bind(i, static_cast<int64_t>(v)); }  // stored as its 64 bits
  Statement& Bind(int i, double v);
  Statement& Bind(int i, std::string_view v);  // copied (SQLITE_TRANSIENT)
  Statement& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Statement& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Statement& Bind(int i, std::nullopt_t);
  template <class T>
  Statement& Bind(int i, const std::optional<T>& v) {
    return v ? Bind(i, *v) : Bind(i, std::nullopt);
  }

  // Makes the statement ready to bind and step again; bindings are cleared.
  void Reset();

  // SQLITE_ROW, SQLITE_DONE, or an error code (also for an earlier prepare or bind failure).
  int Step();

  bool Null(int col) const;
  int64_t Int(int col) const;
  double Real(int col) const;
  std::string Text(int col) const;  // "" for NULL
  std::optional<int64_t> OptInt(int col) const { return Null(col) ? std::nullopt : std::optional(Int(col)); }
  std::optional<int> OptInt32(int col) const {
    return Null(col) ? std::nullopt : std::optional(static_cast<int>(Int(col)));
  }
  std::optional<double> OptReal(int col) const { return Null(col) ? std::nullopt : std::optional(Real(col)); }

 private:
  Statement& Check(int rc);
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

struct OpenOptions {
  int busy_timeout_ms = 10000;
  // WAL (readers never block the writer), synchronous=FULL and foreign keys on. On a network file system (NFS,
  // SMB, Lustre, GPFS, CephFS, BeeGFS...: a sweep folder shared with Slurm nodes) WAL is unsafe, because its index
  // lives in shared memory that other hosts cannot see: there the rollback journal (journal_mode DELETE) is used,
  // whose locks go through the file system. A local file system without WAL support is an error.
  bool durable = false;
  // Whether the file lives on a network file system; nullopt: ask statfs of its folder (IsNetworkFileSystem).
  std::optional<bool> network_fs;
  // SQLITE_OPEN_READONLY: the file must exist, and this connection never writes it or creates it (`durable` is
  // not applied). A WAL file whose -shm cannot be made (another user's journal in a folder this user cannot
  // write, with no writer open on it) is read as immutable, which SQLite allows only without a -wal beside it.
  bool read_only = false;
};

// Whether a statfs f_type is a file system shared over the network (NFS, SMB/CIFS, Lustre, GPFS, CephFS, BeeGFS,
// GlusterFS and other FUSE mounts, AFS, 9p).
bool IsNetworkFileSystem(long f_type);

class Database {
 public:
  Database() = default;
  ~Database();  // closes the connection; statements must be gone
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Opens (or creates) `path`. `label` names the kind of file in errors ("journal", "tune cache"). Error (exit
  // code 1) when it cannot be opened or configured. Call once.
  Status Open(std::string_view label, const std::string& path, const OpenOptions& options = {});

  // The error "<label> <path>: <what>: <SQLite's latest message>", exit code 1.
  Error Fail(std::string_view what) const;

  // Runs one or more statements without results; Fail(what) when one fails.
  Status Exec(const char* sql, std::string_view what);

  // Runs `body` as one write transaction (BEGIN IMMEDIATE takes the write lock up front, so two processes never
  // both read and then fail to upgrade); commits when it succeeds, rolls back when it (or the commit) fails.
  Status Transaction(const std::function<Status()>& body);

  int64_t Changes() const;          // rows changed by the latest INSERT, UPDATE or DELETE
  int64_t LastInsertRowid() const;  // the rowid of the latest INSERT

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return handle_; }

 private:
  Status OpenReadOnly(const std::string& path, int busy_timeout_ms);

  std::string label_, path_;
  sqlite3* handle_ = nullptr;
};

}  // namespace sat::sqlite
