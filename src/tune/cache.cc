#include "tune/cache.h"

#include <fmt/core.h>
#include <sqlite3.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace sat::tune {
namespace {

// A prepared statement, finalised on destruction. Binding and stepping errors surface from Step.
class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql) {
    rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(int i, std::string_view v) {
    if (rc_ == SQLITE_OK) rc_ = sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, double v) {
    if (rc_ == SQLITE_OK) rc_ = sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  int Step() { return rc_ == SQLITE_OK ? sqlite3_step(stmt_) : rc_; }
  std::string Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

constexpr int kSchemaVersion = 1;
// Trials without estimate quality (settled, steady observations) were format 1.
constexpr int kTrialFormat = 2;

}  // namespace

std::string TrialKey(const std::vector<std::string>& argv, bool shell, const std::string& parse,
                     const TrialRequest& r, const MeasureSetup& setup) {
  auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json key = {{"format", kTrialFormat},
                        {"argv", argv},
                        {"shell", shell},
                        {"parse", parse},
                        {"auto", setup.auto_instrument},
                        {"samples_per_step", optional(setup.samples_per_step)},
                        {"parse_batch_size", optional(setup.parse_batch_size)},
                        {"mode", probe::StageName(r.mode)},
                        {"knobs", r.knobs},
                        {"repeat", r.repeat}};
  return key.dump();
}

std::string DefaultCachePath() {
  namespace fs = std::filesystem;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "saturate/tune.db").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache/saturate/tune.db").string();
}

Error TrialCache::Fail(std::string_view what) const {
  return Error{fmt::format("tune cache {}: {}: {}", path_, what, sqlite3_errmsg(db_))};
}

Result<std::unique_ptr<TrialCache>> TrialCache::Open(const std::string& path) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return Error{fmt::format("tune cache {}: cannot create its folder: {}", path, ec.message())};
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<TrialCache> cache(new TrialCache(path, db));
  if (rc != SQLITE_OK) return cache->Fail("cannot open");
  sqlite3_busy_timeout(db, 10000);

  Stmt version(db, "PRAGMA user_version");
  if (version.Step() != SQLITE_ROW) return cache->Fail("not an SQLite file");
  int64_t v = version.Int(0);
  if (v != 0 && v != kSchemaVersion)
    return Error{fmt::format("tune cache {}: schema version {} is not {}; use another --cache", path, v, kSchemaVersion)};
  const char* schema =
      "CREATE TABLE IF NOT EXISTS trials ("
      "  key TEXT NOT NULL, machine TEXT NOT NULL, command TEXT NOT NULL, created_unix REAL NOT NULL,"
      "  trial TEXT NOT NULL, PRIMARY KEY (key, machine));"
      "PRAGMA user_version = 1;";
  if (sqlite3_exec(db, schema, nullptr, nullptr, nullptr) != SQLITE_OK) return cache->Fail("cannot create the table");
  return cache;
}

TrialCache::~TrialCache() { sqlite3_close_v2(db_); }

Result<std::optional<Trial>> TrialCache::Find(const std::string& key, const std::string& machine) {
  Stmt s(db_, "SELECT trial FROM trials WHERE key = ?1 AND machine = ?2");
  s.Bind(1, key).Bind(2, machine);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<Trial>();
  if (rc != SQLITE_ROW) return Fail("cannot read");
  auto j = nlohmann::json::parse(s.Text(0), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::optional<Trial>();  // a damaged row is measured again
  auto trial = TrialFromJson(j);
  if (!trial) return std::optional<Trial>();
  trial->cached = true;
  return std::optional<Trial>(std::move(*trial));
}

Status TrialCache::Put(const std::string& key, const std::string& machine, const std::string& command,
                       const Trial& trial) {
  Trial stored = trial;
  stored.cached = false;
  Stmt s(db_, "INSERT OR REPLACE INTO trials (key, machine, command, created_unix, trial) VALUES (?1, ?2, ?3, ?4, ?5)");
  s.Bind(1, key).Bind(2, machine).Bind(3, command).Bind(4, static_cast<double>(std::time(nullptr)));
  s.Bind(5, TrialToJson(stored).dump());
  if (s.Step() != SQLITE_DONE) return Fail("cannot write");
  return Status::Ok();
}

Result<int> TrialCache::Count(const std::string& machine) {
  Stmt s(db_, "SELECT COUNT(*) FROM trials WHERE machine = ?1");
  s.Bind(1, machine);
  if (s.Step() != SQLITE_ROW) return Fail("cannot read");
  return static_cast<int>(s.Int(0));
}

}  // namespace sat::tune
