#include "util/sqlite.h"

#include <sys/vfs.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include <fmt/core.h>

namespace sat::sqlite {

Statement::Statement(sqlite3* db, std::string_view sql) {
  rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Check(int rc) {
  if (rc_ == SQLITE_OK) rc_ = rc;
  return *this;
}

Statement& Statement::Bind(int i, int64_t v) {
  return rc_ == SQLITE_OK ? Check(sqlite3_bind_int64(stmt_, i, v)) : *this;
}

Statement& Statement::Bind(int i, double v) {
  return rc_ == SQLITE_OK ? Check(sqlite3_bind_double(stmt_, i, v)) : *this;
}

Statement& Statement::Bind(int i, std::string_view v) {
  if (rc_ != SQLITE_OK) return *this;
  return Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
}

Statement& Statement::Bind(int i, std::nullopt_t) {
  return rc_ == SQLITE_OK ? Check(sqlite3_bind_null(stmt_, i)) : *this;
}

void Statement::Reset() {
  if (stmt_ == nullptr) return;  // a failed prepare stays failed
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  rc_ = SQLITE_OK;
}

int Statement::Step() { return rc_ == SQLITE_OK ? sqlite3_step(stmt_) : rc_; }

bool Statement::Null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::Real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
}

bool IsNetworkFileSystem(long f_type) {
  // Magic numbers from statfs(2) and linux/magic.h; FUSE covers GlusterFS, sshfs and other user-space mounts.
  switch (static_cast<unsigned long>(f_type) & 0xFFFFFFFFul) {
    case 0x6969:        // NFS
    case 0x517B:        // SMB
    case 0xFF534D42:    // CIFS
    case 0xFE534D42:    // SMB2
    case 0x0BD00BD0:    // Lustre
    case 0x47504653:    // GPFS
    case 0x00C36400:    // CephFS
    case 0x19830326:    // BeeGFS
    case 0x65735546:    // FUSE
    case 0x5346414F:    // AFS
    case 0x01021997:    // 9p (v9fs)
      return true;
    default:
      return false;
  }
}

namespace {

// "file:/abs/path?immutable=1", with the characters a URI gives meaning to escaped; "" when the path does not
// resolve.
std::string ImmutableUri(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return "";
  std::string uri = "file:";
  for (const char c : std::string_view(resolved)) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Database::~Database() { sqlite3_close_v2(handle_); }

Status Database::OpenReadOnly(const std::string& path, int busy_timeout_ms) {
  if (sqlite3_open_v2(path.c_str(), &handle_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    return Fail("cannot open");
  }
  sqlite3_busy_timeout(handle_, busy_timeout_ms);
  // SQLite reads the file first here: a WAL file whose -shm this user cannot create fails as "readonly".
  if (sqlite3_exec(handle_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) == SQLITE_OK ||
      (sqlite3_errcode(handle_) != SQLITE_READONLY && sqlite3_errcode(handle_) != SQLITE_CANTOPEN)) {
    return Status::Ok();
  }
  // Without a -wal file no writer has the journal open and nothing is pending outside the file itself.
  std::error_code ec;
  const std::string uri = ImmutableUri(path);
  if (std::filesystem::exists(path + "-wal", ec) || uri.empty()) return Fail("cannot read");
  sqlite3_close_v2(handle_);
  handle_ = nullptr;
  if (sqlite3_open_v2(uri.c_str(), &handle_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    return Fail("cannot open");
  }
  sqlite3_busy_timeout(handle_, busy_timeout_ms);
  return Status::Ok();
}

Status Database::Open(std::string_view label, const std::string& path, const OpenOptions& options) {
  label_ = label;
  path_ = path;
  if (options.read_only) return OpenReadOnly(path, options.busy_timeout_ms);
  if (sqlite3_open_v2(path.c_str(), &handle_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    return Fail("cannot open");
  }
  sqlite3_busy_timeout(handle_, options.busy_timeout_ms);
  if (!options.durable) return Status::Ok();

  // WAL keeps readers from blocking the writer, on one host; it must be set outside a transaction.
  bool network = options.network_fs.value_or(false);
  if (!options.network_fs) {
    struct statfs fs {};
    std::string folder = std::filesystem::path(path).parent_path().string();
    if (statfs(folder.empty() ? "." : folder.c_str(), &fs) == 0) network = IsNetworkFileSystem(fs.f_type);
  }
  if (network) {
    Statement rollback(handle_, "PRAGMA journal_mode = DELETE");
    if (rollback.Step() != SQLITE_ROW) return Fail("cannot open");
    return Exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", "cannot configure");
  }
  Statement wal(handle_, "PRAGMA journal_mode = WAL");
  if (wal.Step() != SQLITE_ROW) return Fail("cannot open");
  if (wal.Text(0) != "wal") {
    return Error{fmt::format("{} {}: this file system does not support SQLite's WAL mode (journal mode '{}'); put "
                             "the {} on a local disk",
                             label_, path_, wal.Text(0), label_)};
  }
  return Exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", "cannot configure");
}

Error Database::Fail(std::string_view what) const {
  return Error{fmt::format("{} {}: {}: {}", label_, path_, what, sqlite3_errmsg(handle_)), kExitFailure};
}

Status Database::Exec(const char* sql, std::string_view what) {
  if (sqlite3_exec(handle_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Fail(what);
  return Status::Ok();
}

Status Database::Transaction(const std::function<Status()>& body) {
  if (Status s = Exec("BEGIN IMMEDIATE", "cannot start a transaction"); !s) return s;
  Status result = body();
  if (result) result = Exec("COMMIT", "cannot commit");
  if (!result) sqlite3_exec(handle_, "ROLLBACK", nullptr, nullptr, nullptr);
  return result;
}

int64_t Database::Changes() const { return sqlite3_changes(handle_); }
int64_t Database::LastInsertRowid() const { return sqlite3_last_insert_rowid(handle_); }

}  // namespace sat::sqlite
