#include "tune/cache.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "util/atomic_file.h"
#include "util/json_text.h"
#include "util/redact.h"

namespace sat::tune {
namespace {

using sqlite::Statement;

constexpr int kSchemaVersion = 1;
// Trials without estimate quality (settled, steady observations) were format 1; without the script's parsed
// options (flags) format 2.
constexpr int kTrialFormat = 3;

}  // namespace

std::string TrialKey(const std::vector<std::string>& argv, bool shell, const std::string& parse,
                     const TrialRequest& r, const MeasureSetup& setup, const CommandIdentity& identity) {
  auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json key = {{"format", kTrialFormat},
                        {"argv", RedactCommand(argv, shell)},  // the file keeps no secret
                        {"command", IdentityJson(identity)},
                        {"shell", shell},
                        {"parse", parse},
                        {"auto", setup.auto_instrument},
                        {"samples_per_step", optional(setup.samples_per_step)},
                        {"parse_batch_size", optional(setup.parse_batch_size)},
                        {"mode", core::StageName(r.mode)},
                        {"knobs", r.knobs},
                        {"repeat", r.repeat}};
  if (!r.flags.empty()) {
    nlohmann::json flags = nlohmann::json::object();
    for (const auto& [name, flag] : r.flags) flags[name] = flag.option;
    key["flags"] = flags;
  }
  return JsonText(key);
}

Result<std::string> CachePathFrom(const CacheHomes& homes) {
  if (auto dir = SaturateCacheDir(homes)) return *dir + "/tune.db";
  return Error{"no trial cache: neither XDG_CACHE_HOME nor HOME is set and this user has no home folder in the "
               "password database (saturate keeps no cache in a shared folder); give --cache PATH to keep trials"};
}

Result<std::string> DefaultCachePath() {
  return CachePathFrom(CacheHomesOfThisProcess());
}

namespace {

// The cache holds commands: its folder must be this user's and writable by no one else (else another user could
// read trials or plant a file or link in their place), and the file, never reached through a link, becomes this
// user's alone (0600; SQLite gives its journal file the same bits).
Status MakeCacheFilePrivate(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path).parent_path();
  const std::string folder = parent.empty() ? "." : parent.string();
  std::string why = PrivateFolderProblem(folder);
  struct stat st {};
  if (!why.empty()) {
    return Error{fmt::format("tune cache {}: its folder {}: {} (the cache holds commands, so only a folder of yours "
                             "that no one else may write will do); give --cache a path in such a folder",
                             path, folder, why)};
  }
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, kPrivateFileMode);
  if (fd < 0) {
    const std::string reason = errno == ELOOP ? "it is a symbolic link, which saturate does not follow"
                                              : std::strerror(errno);
    return Error{fmt::format("tune cache {}: cannot open: {}", path, reason)};
  }
  why.clear();
  if (fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (st.st_uid != geteuid()) {
    why = fmt::format("it belongs to user {}, not to you", st.st_uid);
  } else if ((st.st_mode & 077) != 0 && fchmod(fd, kPrivateFileMode) != 0) {  // an older saturate's 0644
    why = std::strerror(errno);
  }
  close(fd);
  if (!why.empty()) return Error{fmt::format("tune cache {}: cannot use it: {}", path, why)};
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<TrialCache>> TrialCache::Open(const std::string& path) {
  if (Status s = MakeCacheFilePrivate(path); !s) return s.error();
  std::unique_ptr<TrialCache> cache(new TrialCache());
  sqlite::Database& db = cache->db_;
  if (Status s = db.Open("tune cache", path); !s) return s.error();

  Statement version(db.handle(), "PRAGMA user_version");
  if (version.Step() != SQLITE_ROW) return db.Fail("not an SQLite file");
  int64_t v = version.Int(0);
  if (v != 0 && v != kSchemaVersion)
    return Error{fmt::format("tune cache {}: schema version {} is not {}; use another --cache", path, v, kSchemaVersion)};
  const char* schema =
      "CREATE TABLE IF NOT EXISTS trials ("
      "  key TEXT NOT NULL, machine TEXT NOT NULL, command TEXT NOT NULL, created_unix REAL NOT NULL,"
      "  trial TEXT NOT NULL, PRIMARY KEY (key, machine));"
      "PRAGMA user_version = 1;";
  if (Status s = db.Exec(schema, "cannot create the table"); !s) return s.error();
  return cache;
}

TrialCache::~TrialCache() = default;

Result<std::optional<Trial>> TrialCache::Find(const std::string& key, const std::string& machine) {
  Statement s(db_.handle(), "SELECT trial FROM trials WHERE key = ?1 AND machine = ?2");
  s.Bind(1, key).Bind(2, machine);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<Trial>();
  if (rc != SQLITE_ROW) return db_.Fail("cannot read");
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
  Statement s(db_.handle(),
              "INSERT OR REPLACE INTO trials (key, machine, command, created_unix, trial) VALUES (?1, ?2, ?3, ?4, ?5)");
  s.Bind(1, key).Bind(2, machine).Bind(3, command).Bind(4, static_cast<double>(std::time(nullptr)));
  s.Bind(5, JsonText(TrialToJson(stored)));
  if (s.Step() != SQLITE_DONE) return db_.Fail("cannot write");
  return Status::Ok();
}

Result<int> TrialCache::Count(const std::string& machine) {
  Statement s(db_.handle(), "SELECT COUNT(*) FROM trials WHERE machine = ?1");
  s.Bind(1, machine);
  if (s.Step() != SQLITE_ROW) return db_.Fail("cannot read");
  return static_cast<int>(s.Int(0));
}

}  // namespace sat::tune
