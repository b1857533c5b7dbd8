#include "sweep/journal.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <type_traits>

#include "run/process_tree.h"
#include "sweep/retry.h"
#include "util/json_text.h"
#include "util/sqlite.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

// Schema migrations, applied in order; the schema_version table holds how many have been applied. A new
// version appends an entry and never edits an old one.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE sweep (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  spec_path TEXT NOT NULL,
  spec_hash TEXT NOT NULL,
  seed INTEGER NOT NULL,  -- the uint64 seed's bits
  metric_name TEXT,
  metric_goal TEXT CHECK (metric_goal IN ('minimize', 'maximize')),
  created_unix REAL NOT NULL
);
CREATE TABLE runs (
  key TEXT PRIMARY KEY,
  idx INTEGER NOT NULL UNIQUE,
  params_json TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed', 'retrying')),
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
  best_metrics_json TEXT NOT NULL DEFAULT '{}',
  throughput_samples_per_s REAL,
  peak_gpu_memory_bytes INTEGER,
  cpu_pct REAL,
  rss_bytes INTEGER,
  gpu_index INTEGER,
  started_unix REAL,
  finished_unix REAL
);
CREATE TABLE attempts (
  id INTEGER PRIMARY KEY,
  run_key TEXT NOT NULL REFERENCES runs(key),
  attempt_no INTEGER NOT NULL CHECK (attempt_no >= 1),
  started_unix REAL NOT NULL,
  ended_unix REAL,
  exit_class TEXT,
  exit_code INTEGER,
  signal INTEGER,
  detail TEXT NOT NULL DEFAULT '',
  log_dir TEXT NOT NULL,
  gpu_index INTEGER,
  pid INTEGER NOT NULL,
  owner_pid INTEGER NOT NULL,
  owner_start_ticks INTEGER NOT NULL,
  owner_boot_id TEXT NOT NULL,
  UNIQUE (run_key, attempt_no)
);
CREATE INDEX attempts_open ON attempts (run_key) WHERE ended_unix IS NULL;
CREATE TABLE metrics (
  id INTEGER PRIMARY KEY,
  run_key TEXT NOT NULL REFERENCES runs(key),
  attempt_id INTEGER NOT NULL REFERENCES attempts(id),
  name TEXT NOT NULL,
  value REAL NOT NULL,
  step INTEGER,
  time_unix REAL NOT NULL
);
CREATE INDEX metrics_by_run ON metrics (run_key);
)sql",
    // The retry rule (sweep/retry.h) compares an attempt's last error line with the previous attempt's.
    "ALTER TABLE attempts ADD COLUMN error_line TEXT NOT NULL DEFAULT '';",
    // The Slurm backend (slurm/slurm_backend.h): each attempt's job id and what it asked Slurm for.
    "ALTER TABLE attempts ADD COLUMN slurm_job TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE attempts ADD COLUMN slurm_request TEXT NOT NULL DEFAULT '';",
    // Energy (sweep/energy_ledger.h): each attempt's joules; on the run, its latest attempt's joules and samples.
    "ALTER TABLE attempts ADD COLUMN energy_j REAL;"
    "ALTER TABLE runs ADD COLUMN energy_j REAL;"
    "ALTER TABLE runs ADD COLUMN samples REAL;",
};
constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));

// The columns each migration added, and what a reader shows for them on a journal from before it (`sweep status`
// reads without migrating): the column's default, NULL for a measurement not taken. A migration that adds a column
// adds it here too; journal_test's OldSchemasAreReadAsTheyAre reads every version.
struct AddedColumn {
  int version;  // the schema version that has it
  const char* table;
  const char* column;
  const char* value;
};
constexpr AddedColumn kAddedColumns[] = {
    {2, "attempts", "error_line", "''"},
    {3, "attempts", "slurm_job", "''"},
    {3, "attempts", "slurm_request", "''"},
    {4, "attempts", "energy_j", "NULL"},
    {4, "runs", "energy_j", "NULL"},
    {4, "runs", "samples", "NULL"},
};

constexpr std::string_view kInterrupted = "interrupted";
constexpr std::string_view kStoppedEarly = "stopped_early";

constexpr const char* kRunColumns =
    "key, idx, params_json, state, attempts, failures, best_metrics_json, throughput_samples_per_s, "
    "peak_gpu_memory_bytes, cpu_pct, rss_bytes, gpu_index, started_unix, finished_unix, "
    "(SELECT exit_class FROM attempts WHERE run_key = runs.key ORDER BY attempt_no DESC LIMIT 1) = 'stopped_early', "
    "energy_j, samples";

constexpr const char* kAttemptColumns =
    "id, run_key, attempt_no, started_unix, ended_unix, exit_class, exit_code, signal, detail, log_dir, gpu_index, "
    "pid, owner_pid, owner_start_ticks, owner_boot_id, error_line, slurm_job, slurm_request, energy_j";

std::optional<RunState> RunStateFromName(std::string_view name) {
  for (RunState s : {RunState::kQueued, RunState::kRunning, RunState::kDone, RunState::kFailed, RunState::kRetrying}) {
    if (RunStateName(s) == name) return s;
  }
  return std::nullopt;
}

// The saturate process that owns an attempt: pid and start time identify it across pid reuse, the boot id
// across reboots.
struct Owner {
  pid_t pid = 0;
  uint64_t start_ticks = 0;
  std::string boot_id;
};

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return std::string(Trim(id));
}

Owner Self() {
  Owner self;
  self.pid = getpid();
  if (auto entry = run::ReadProcEntry(self.pid)) self.start_ticks = entry->start_ticks;
  self.boot_id = BootId();
  return self;
}

bool SameOwner(const AttemptRecord& a, const Owner& o) {
  return a.owner_pid == o.pid && a.owner_start_ticks == o.start_ticks && a.owner_boot_id == o.boot_id;
}

bool OwnerAlive(const AttemptRecord& a) {
  const std::string boot = BootId();
  if (!boot.empty() && a.owner_boot_id != boot) return false;
  return run::SameProcessRunning(a.owner_pid, a.owner_start_ticks);
}

using Stmt = sqlite::Statement;

std::string FirstColumn(const Stmt& s) { return s.Text(0); }

RunRecord ReadRun(const Stmt& s) {
  RunRecord r;
  r.key = s.Text(0);
  r.index = s.Int(1);
  r.params = nlohmann::json::parse(s.Text(2), nullptr, /*allow_exceptions=*/false);
  r.state = RunStateFromName(s.Text(3)).value_or(RunState::kQueued);
  r.attempts = static_cast<int>(s.Int(4));
  r.failures = static_cast<int>(s.Int(5));
  r.best_metrics = nlohmann::json::parse(s.Text(6), nullptr, /*allow_exceptions=*/false);
  if (!r.best_metrics.is_object()) r.best_metrics = nlohmann::json::object();
  r.measurements.throughput_samples_per_s = s.OptReal(7);
  if (auto v = s.OptInt(8)) r.measurements.peak_gpu_memory_bytes = static_cast<uint64_t>(*v);
  r.measurements.cpu_pct = s.OptReal(9);
  if (auto v = s.OptInt(10)) r.measurements.rss_bytes = static_cast<uint64_t>(*v);
  r.gpu_index = s.OptInt32(11);
  r.started_unix = s.OptReal(12);
  r.finished_unix = s.OptReal(13);
  r.stopped_early = s.Int(14) != 0;
  r.measurements.energy_j = s.OptReal(15);
  r.measurements.samples = s.OptReal(16);
  return r;
}

AttemptRecord ReadAttempt(const Stmt& s) {
  AttemptRecord a;
  a.id = s.Int(0);
  a.run_key = s.Text(1);
  a.attempt_no = static_cast<int>(s.Int(2));
  a.started_unix = s.Real(3);
  a.ended_unix = s.OptReal(4);
  a.exit_class = s.Text(5);
  a.exit_code = s.OptInt32(6);
  a.term_signal = s.OptInt32(7);
  a.detail = s.Text(8);
  a.log_dir = s.Text(9);
  a.gpu_index = s.OptInt32(10);
  a.pid = static_cast<pid_t>(s.Int(11));
  a.owner_pid = static_cast<pid_t>(s.Int(12));
  a.owner_start_ticks = static_cast<uint64_t>(s.Int(13));
  a.owner_boot_id = s.Text(14);
  a.error_line = s.Text(15);
  a.slurm_job = s.Text(16);
  a.slurm_request = s.Text(17);
  a.energy_j = s.OptReal(18);
  return a;
}

// Per metric name: the best value by `metric`'s goal for the sweep's metric, the last value for the others.
nlohmann::json Summarise(const std::vector<MetricPoint>& points, const std::optional<MetricSpec>& metric) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : points) {
    const bool ranked = metric && metric->name == p.name && out.contains(p.name);
    if (ranked) {
      const double best = out[p.name].get<double>();
      const bool better = metric->goal == Goal::kMinimize ? p.value < best : p.value > best;
      if (better) out[p.name] = p.value;
    } else {
      out[p.name] = p.value;
    }
  }
  return out;
}

}  // namespace

// The connection (sqlite::Database: path, handle, Fail, Exec, Transaction) and the reads several calls share.
class Journal::Db : public sqlite::Database {
 public:
  mutable std::mutex mu;

  Status Migrate() {
    return Transaction([&]() -> Status {
      if (auto s = Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", "cannot read schema");
          !s) {
        return s;
      }
      auto version = ReadSchemaVersion();
      if (!version) return version.error();
      for (int v = *version; v < kSchemaVersion; ++v) {
        if (auto s = Exec(kMigrations[v], "cannot create the schema"); !s) return s;
      }
      if (*version == kSchemaVersion) return Status::Ok();
      Stmt set(handle(), *version == 0 ? "INSERT INTO schema_version (version) VALUES (?)"
                                       : "UPDATE schema_version SET version = ?");
      if (set.Bind(1, kSchemaVersion).Step() != SQLITE_DONE) return Fail("cannot record the schema version");
      return Status::Ok();
    });
  }

  // The schema version the file records: 0 for a file without saturate's tables. Errors for a journal from a
  // newer saturate, and for an SQLite file with other tables.
  Result<int> ReadSchemaVersion() const {
    Stmt has(handle(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
    if (has.Step() != SQLITE_ROW) return Fail("cannot read schema");
    int version = 0;
    if (has.Int(0) > 0) {
      Stmt get(handle(), "SELECT version FROM schema_version");
      const int rc = get.Step();
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Fail("cannot read the schema version");
      if (rc == SQLITE_ROW) version = static_cast<int>(get.Int(0));
    }
    if (version > kSchemaVersion) {
      return Error{fmt::format("journal {} was written by a newer saturate (schema {}; this one knows up to {})",
                               path(), version, kSchemaVersion),
                   kExitUsage};
    }
    if (version == 0) {
      Stmt others(handle(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name != 'schema_version'");
      if (others.Step() != SQLITE_ROW) return Fail("cannot list tables");
      if (others.Int(0) > 0) {
        return Error{fmt::format("{} is an SQLite database but not a saturate sweep journal", path()), kExitUsage};
      }
    }
    return version;
  }

  // For a reader of a journal at an older schema `version`: temporary views named like the tables, with the
  // columns later migrations added as kAddedColumns says, so every read works unchanged. They live in this
  // connection's TEMP schema (memory), not in the file.
  Status PresentAsCurrent(int version) {
    if (auto s = Exec("PRAGMA temp_store = MEMORY", "cannot read schema"); !s) return s;
    for (const char* table : {"runs", "attempts"}) {
      std::string added;
      for (const AddedColumn& c : kAddedColumns) {
        if (c.version > version && std::string_view(c.table) == table) {
          added += fmt::format(", {} AS {}", c.value, c.column);
        }
      }
      if (added.empty()) continue;
      const std::string view = fmt::format("CREATE TEMP VIEW {0} AS SELECT *{1} FROM main.{0}", table, added);
      if (auto s = Exec(view.c_str(), "cannot read an older schema"); !s) return s;
    }
    return Status::Ok();
  }

  Result<std::optional<SweepInfo>> ReadSweep() const {
    Stmt s(handle(), "SELECT spec_path, spec_hash, seed, metric_name, metric_goal FROM sweep WHERE id = 1");
    const int rc = s.Step();
    if (rc == SQLITE_DONE) return std::optional<SweepInfo>();
    if (rc != SQLITE_ROW) return Fail("cannot read the sweep");
    SweepInfo info{s.Text(0), s.Text(1), static_cast<uint64_t>(s.Int(2)), std::nullopt};
    if (!s.Null(3)) {
      info.metric = MetricSpec{s.Text(3), s.Text(4) == "maximize" ? Goal::kMaximize : Goal::kMinimize, std::nullopt};
    }
    return std::optional<SweepInfo>(std::move(info));
  }

  // Every row of `sql`, with `key` bound to its parameter if given, each read by `read`.
  template <class T>
  Result<std::vector<T>> Rows(const std::string& sql, std::optional<std::string_view> key,
                              T (*read)(const Stmt&)) const {
    Stmt s(handle(), sql);
    if (key) s.Bind(1, *key);
    std::vector<T> rows;
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) rows.push_back(read(s));
    if (rc != SQLITE_DONE) return Fail("cannot read the journal");
    return rows;
  }

  Result<std::vector<RunRecord>> ReadRuns(std::string_view where, std::optional<std::string_view> key) const {
    return Rows(fmt::format("SELECT {} FROM runs {} ORDER BY idx", kRunColumns, where), key, ReadRun);
  }

  Result<std::vector<AttemptRecord>> ReadAttempts(std::string_view where, std::optional<std::string_view> key) const {
    return Rows(fmt::format("SELECT {} FROM attempts {} ORDER BY run_key, attempt_no", kAttemptColumns, where), key,
                ReadAttempt);
  }
};

Journal::Journal(std::unique_ptr<Db> db) : db_(std::move(db)) {}
Journal::~Journal() = default;

const std::string& Journal::path() const { return db_->path(); }

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& path) {
  auto db = std::make_unique<Db>();
  // WAL keeps readers (`sweep status`) from blocking the writer.
  sqlite::OpenOptions durable;
  durable.durable = true;
  if (Status s = db->Open("journal", path, durable); !s) return s.error();
  if (auto s = db->Migrate(); !s) return s.error();
  return std::unique_ptr<Journal>(new Journal(std::move(db)));
}

Result<std::unique_ptr<const Journal>> Journal::OpenReadOnly(const std::string& path) {
  auto db = std::make_unique<Db>();
  sqlite::OpenOptions read_only;
  read_only.read_only = true;
  if (Status s = db->Open("journal", path, read_only); !s) return s.error();
  auto version = db->ReadSchemaVersion();
  if (!version) return version.error();
  if (*version == 0) return UsageError(fmt::format("journal {} holds no sweep yet", path));
  if (*version < kSchemaVersion) {
    if (auto s = db->PresentAsCurrent(*version); !s) return s.error();
  }
  return std::unique_ptr<const Journal>(new Journal(std::move(db)));
}

Status Journal::EnsureRuns(const SweepInfo& sweep, const std::vector<RunParams>& runs) {
  std::lock_guard lock(db_->mu);
  sqlite3* h = db_->handle();
  return db_->Transaction([&]() -> Status {
    auto existing = db_->ReadSweep();
    if (!existing) return existing.error();
    const std::optional<std::string> metric_name = sweep.metric ? std::optional(sweep.metric->name) : std::nullopt;
    const std::optional<std::string> metric_goal =
        sweep.metric ? std::optional(std::string(GoalName(sweep.metric->goal))) : std::nullopt;
    if (!*existing) {
      Stmt insert(h,
                  "INSERT INTO sweep (id, spec_path, spec_hash, seed, metric_name, metric_goal, created_unix) "
                  "VALUES (1, ?, ?, ?, ?, ?, ?)");
      insert.Bind(1, sweep.spec_path).Bind(2, sweep.spec_hash).Bind(3, sweep.seed).Bind(4, metric_name);
      if (insert.Bind(5, metric_goal).Bind(6, NowUnix()).Step() != SQLITE_DONE) {
        return db_->Fail("cannot record the sweep");
      }
    } else if ((*existing)->spec_hash != sweep.spec_hash) {
      return UsageError(fmt::format(
          "journal {} belongs to a different sweep plan (spec hash {}, this spec {}): the parameters, run count, "
          "seed, program or command changed since it was started. Resume with the spec it was started with, or "
          "start a new journal",
          db_->path(), (*existing)->spec_hash, sweep.spec_hash));
    } else {
      Stmt update(h, "UPDATE sweep SET spec_path = ?, metric_name = ?, metric_goal = ? WHERE id = 1");
      if (update.Bind(1, sweep.spec_path).Bind(2, metric_name).Bind(3, metric_goal).Step() != SQLITE_DONE) {
        return db_->Fail("cannot update the sweep");
      }
    }
    Stmt insert(h, "INSERT OR IGNORE INTO runs (key, idx, params_json) VALUES (?, ?, ?)");
    Stmt check(h, "SELECT idx, params_json FROM runs WHERE key = ?");
    for (const auto& run : runs) {
      const std::string params = JsonText(run.values);
      insert.Reset();
      if (insert.Bind(1, run.key).Bind(2, run.index).Bind(3, params).Step() != SQLITE_DONE) {
        return db_->Fail("cannot record runs");
      }
      check.Reset();
      const int rc = check.Bind(1, run.key).Step();
      // A run planned without values (bayes) gets them when it starts.
      const bool same_params = run.values.is_null() || check.Text(1) == params;
      if (rc != SQLITE_ROW || check.Int(0) != run.index || !same_params) {
        return Error{
            fmt::format("journal {}: run {} (#{}) does not match the journal's plan", db_->path(), run.key, run.index),
            kExitUsage};
      }
    }
    Stmt count(h, "SELECT count(*) FROM runs");
    if (count.Step() != SQLITE_ROW) return db_->Fail("cannot count runs");
    if (count.Int(0) != static_cast<int64_t>(runs.size())) {
      return Error{fmt::format("journal {} holds {} runs, the plan {}", db_->path(), count.Int(0), runs.size()),
                   kExitUsage};
    }
    return Status::Ok();
  });
}

Result<std::optional<SweepInfo>> Journal::Sweep() const {
  std::lock_guard lock(db_->mu);
  return db_->ReadSweep();
}

Result<std::vector<RunRecord>> Journal::Runs() const {
  std::lock_guard lock(db_->mu);
  return db_->ReadRuns("", std::nullopt);
}

Result<std::optional<RunRecord>> Journal::Run(std::string_view key) const {
  std::lock_guard lock(db_->mu);
  auto runs = db_->ReadRuns("WHERE key = ?", key);
  if (!runs) return runs.error();
  if ((*runs).empty()) return std::optional<RunRecord>();
  return std::optional<RunRecord>(std::move((*runs).front()));
}

Result<StateCounts> Journal::Counts() const {
  std::lock_guard lock(db_->mu);
  Stmt s(db_->handle(), "SELECT state, count(*) FROM runs GROUP BY state");
  StateCounts counts;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    const auto state = RunStateFromName(s.Text(0));
    const int64_t n = s.Int(1);
    if (state == RunState::kQueued) counts.queued = n;
    if (state == RunState::kRunning) counts.running = n;
    if (state == RunState::kDone) counts.done = n;
    if (state == RunState::kFailed) counts.failed = n;
    if (state == RunState::kRetrying) counts.retrying = n;
  }
  if (rc != SQLITE_DONE) return db_->Fail("cannot count runs");
  return counts;
}

Result<std::vector<AttemptRecord>> Journal::Attempts(std::string_view run_key) const {
  std::lock_guard lock(db_->mu);
  return db_->ReadAttempts("WHERE run_key = ?", run_key);
}

Result<std::vector<MetricPoint>> Journal::LastAttemptMetrics(std::string_view run_key) const {
  std::lock_guard lock(db_->mu);
  return db_->Rows<MetricPoint>(
      "SELECT name, value, step, time_unix FROM metrics WHERE attempt_id = (SELECT max(id) FROM attempts "
      "WHERE run_key = ?1 AND ended_unix IS NOT NULL) ORDER BY id",
      run_key, [](const Stmt& s) { return MetricPoint{s.Text(0), s.Real(1), s.OptInt(2), s.Real(3)}; });
}

Status Journal::SetParams(std::string_view run_key, const nlohmann::json& params) {
  std::lock_guard lock(db_->mu);
  Stmt set(db_->handle(), "UPDATE runs SET params_json = ? WHERE key = ? AND params_json = 'null' AND attempts = 0");
  if (set.Bind(1, JsonText(params)).Bind(2, run_key).Step() != SQLITE_DONE) return db_->Fail("cannot set parameters");
  if (db_->Changes() != 1) {
    return Error{fmt::format("journal {}: run {} already has its parameters", db_->path(), run_key)};
  }
  return Status::Ok();
}

Result<int64_t> Journal::BeginAttempt(std::string_view run_key, std::optional<int> gpu_index, pid_t pid,
                                      std::string_view log_dir) {
  std::lock_guard lock(db_->mu);
  sqlite3* h = db_->handle();
  const Owner self = Self();
  int64_t attempt_id = 0;
  Status s = db_->Transaction([&]() -> Status {
    Stmt get(h, "SELECT state, attempts FROM runs WHERE key = ?");
    const int rc = get.Bind(1, run_key).Step();
    if (rc == SQLITE_DONE) return Error{fmt::format("journal {}: no run {}", db_->path(), run_key)};
    if (rc != SQLITE_ROW) return db_->Fail("cannot read the run");
    const std::string state = get.Text(0);
    if (state != RunStateName(RunState::kQueued) && state != RunStateName(RunState::kRetrying)) {
      return Error{fmt::format("journal {}: run {} is {}, not queued", db_->path(), run_key, state)};
    }
    const double now = NowUnix();
    Stmt update(h,
                "UPDATE runs SET state = 'running', attempts = attempts + 1, gpu_index = ?, started_unix = ?, "
                "finished_unix = NULL WHERE key = ?");
    if (update.Bind(1, gpu_index).Bind(2, now).Bind(3, run_key).Step() != SQLITE_DONE) {
      return db_->Fail("cannot start the run");
    }
    Stmt insert(h,
                "INSERT INTO attempts (run_key, attempt_no, started_unix, log_dir, gpu_index, pid, owner_pid, "
                "owner_start_ticks, owner_boot_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.Bind(1, run_key).Bind(2, get.Int(1) + 1).Bind(3, now).Bind(4, log_dir).Bind(5, gpu_index);
    insert.Bind(6, static_cast<int64_t>(pid)).Bind(7, static_cast<int64_t>(self.pid)).Bind(8, self.start_ticks);
    if (insert.Bind(9, self.boot_id).Step() != SQLITE_DONE) return db_->Fail("cannot record the attempt");
    attempt_id = db_->LastInsertRowid();
    return Status::Ok();
  });
  if (!s) return s.error();
  return attempt_id;
}

Result<RunState> Journal::EndAttempt(int64_t attempt_id, const AttemptOutcome& outcome,
                                     const std::vector<MetricPoint>& metrics, const Measurements& measurements,
                                     const RetryPolicy& policy) {
  std::lock_guard lock(db_->mu);
  sqlite3* h = db_->handle();
  RunState next = RunState::kFailed;
  Status s = db_->Transaction([&]() -> Status {
    Stmt get(h,
             "SELECT a.run_key, a.ended_unix IS NOT NULL, r.state, r.failures FROM attempts a "
             "JOIN runs r ON r.key = a.run_key WHERE a.id = ?");
    const int rc = get.Bind(1, attempt_id).Step();
    if (rc == SQLITE_DONE) return Error{fmt::format("journal {}: no attempt {}", db_->path(), attempt_id)};
    if (rc != SQLITE_ROW) return db_->Fail("cannot read the attempt");
    const std::string key = get.Text(0);
    if (get.Int(1) != 0) return Error{fmt::format("journal {}: attempt {} has already ended", db_->path(), attempt_id)};
    if (get.Text(2) != RunStateName(RunState::kRunning)) {
      return Error{fmt::format("journal {}: run {} is {}, not running", db_->path(), key, get.Text(2))};
    }
    const int failures = static_cast<int>(get.Int(3));
    // A run's earlier start failures were all transient: one that was not failed the run.
    Stmt starts(h, "SELECT count(*) FROM attempts WHERE run_key = ? AND exit_class = ? AND id != ?");
    starts.Bind(1, key).Bind(2, std::string(run::ExitClassName(run::ExitClass::kStartFailed)));
    if (starts.Bind(3, attempt_id).Step() != SQLITE_ROW) return db_->Fail("cannot count the run's start failures");
    next = StateAfterOutcome(outcome, failures, policy, static_cast<int>(starts.Int(0)));
    const std::string exit_class(outcome.stopped_early ? kStoppedEarly : run::ExitClassName(outcome.exit_class));
    const FailureFacts facts{exit_class, outcome.term_signal, outcome.oom_while_packed, outcome.error_line};
    const std::string error_line = RepeatableFailure(facts) ? outcome.error_line : "";
    std::string detail = outcome.detail;
    // A failure that repeats the previous attempt's exactly would repeat again: no retry for it.
    if (next == RunState::kRetrying) {
      Stmt prev(h,
                "SELECT p.attempt_no, p.exit_class, p.signal, p.error_line FROM attempts p JOIN attempts a "
                "ON a.run_key = p.run_key AND p.attempt_no = a.attempt_no - 1 WHERE a.id = ?");
      if (prev.Bind(1, attempt_id).Step() == SQLITE_ROW) {
        const FailureFacts before{prev.Text(1), prev.OptInt32(2).value_or(0), false, prev.Text(3)};
        if (auto why = SameFailureAgain(before, static_cast<int>(prev.Int(0)), facts)) {
          next = RunState::kFailed;
          detail += "; " + *why;
        }
      }
    }
    auto sweep = db_->ReadSweep();
    if (!sweep) return sweep.error();
    const std::optional<MetricSpec> metric = *sweep ? (*sweep)->metric : std::nullopt;

    const double now = NowUnix();
    Stmt end(h,
             "UPDATE attempts SET ended_unix = ?, exit_class = ?, exit_code = ?, signal = ?, detail = ?, "
             "error_line = ?, energy_j = ? WHERE id = ?");
    end.Bind(1, now).Bind(2, exit_class);
    end.Bind(3, outcome.exit_code >= 0 ? std::optional(outcome.exit_code) : std::nullopt);
    end.Bind(4, outcome.term_signal > 0 ? std::optional(outcome.term_signal) : std::nullopt);
    end.Bind(5, detail).Bind(6, error_line).Bind(7, measurements.energy_j);
    if (end.Bind(8, attempt_id).Step() != SQLITE_DONE) {
      return db_->Fail("cannot end the attempt");
    }
    for (const auto& m : metrics) {
      Stmt insert(h,
                  "INSERT INTO metrics (run_key, attempt_id, name, value, step, time_unix) VALUES (?, ?, ?, ?, ?, ?)");
      insert.Bind(1, key).Bind(2, attempt_id).Bind(3, m.name).Bind(4, m.value).Bind(5, m.step);
      if (insert.Bind(6, m.time_unix).Step() != SQLITE_DONE) return db_->Fail("cannot record metrics");
    }
    Stmt update(h,
                "UPDATE runs SET state = ?, failures = failures + ?, best_metrics_json = ?, "
                "throughput_samples_per_s = ?, peak_gpu_memory_bytes = ?, cpu_pct = ?, rss_bytes = ?, "
                "energy_j = ?, samples = ?, finished_unix = ? WHERE key = ?");
    update.Bind(1, RunStateName(next)).Bind(2, CountsAsFailure(outcome) ? 1 : 0);
    update.Bind(3, JsonText(Summarise(metrics, metric))).Bind(4, measurements.throughput_samples_per_s);
    update.Bind(5, measurements.peak_gpu_memory_bytes).Bind(6, measurements.cpu_pct);
    update.Bind(7, measurements.rss_bytes).Bind(8, measurements.energy_j).Bind(9, measurements.samples);
    if (update.Bind(10, now).Bind(11, key).Step() != SQLITE_DONE) return db_->Fail("cannot update the run");
    return Status::Ok();
  });
  if (!s) return s.error();
  return next;
}

Result<int> Journal::RequeueInterrupted() {
  std::lock_guard lock(db_->mu);
  sqlite3* h = db_->handle();
  const Owner self = Self();
  int requeued = 0;
  Status s = db_->Transaction([&]() -> Status {
    auto open = db_->ReadAttempts("WHERE ended_unix IS NULL", std::nullopt);
    if (!open) return open.error();
    for (const auto& a : *open) {
      if (SameOwner(a, self)) continue;
      if (OwnerAlive(a)) {
        return UsageError(
            fmt::format("journal {} is in use: saturate (pid {}) is still running run {}; stop it "
                        "before resuming",
                        db_->path(), a.owner_pid, a.run_key));
      }
      Stmt end(h, "UPDATE attempts SET ended_unix = ?, exit_class = ?, detail = ? WHERE id = ?");
      end.Bind(1, NowUnix()).Bind(2, kInterrupted);
      end.Bind(3, fmt::format("saturate (pid {}) ended before the attempt did", a.owner_pid));
      if (end.Bind(4, a.id).Step() != SQLITE_DONE) return db_->Fail("cannot end the attempt");
      Stmt requeue(h, "UPDATE runs SET state = 'queued', finished_unix = NULL WHERE key = ? AND state = 'running'");
      if (requeue.Bind(1, a.run_key).Step() != SQLITE_DONE) return db_->Fail("cannot requeue the run");
      requeued += db_->Changes();
    }
    return Status::Ok();
  });
  if (!s) return s.error();
  return requeued;
}

Status Journal::SetSlurmJob(int64_t attempt_id, std::string_view job_id, std::string_view request_json) {
  std::lock_guard lock(db_->mu);
  Stmt set(db_->handle(), "UPDATE attempts SET slurm_job = ?, slurm_request = ? WHERE id = ?");
  if (set.Bind(1, job_id).Bind(2, request_json).Bind(3, attempt_id).Step() != SQLITE_DONE) {
    return db_->Fail("cannot record the Slurm job");
  }
  return Status::Ok();
}

Result<std::vector<AttemptRecord>> Journal::AdoptOpenAttempts() {
  std::lock_guard lock(db_->mu);
  sqlite3* h = db_->handle();
  const Owner self = Self();
  std::vector<AttemptRecord> adopted;
  Status s = db_->Transaction([&]() -> Status {
    auto open = db_->ReadAttempts("WHERE ended_unix IS NULL", std::nullopt);
    if (!open) return open.error();
    for (AttemptRecord& a : *open) {
      if (!SameOwner(a, self) && OwnerAlive(a)) {
        return UsageError(fmt::format("journal {} is in use: saturate (pid {}) is still watching run {}; stop it "
                                      "before resuming",
                                      db_->path(), a.owner_pid, a.run_key));
      }
      Stmt own(h, "UPDATE attempts SET owner_pid = ?, owner_start_ticks = ?, owner_boot_id = ? WHERE id = ?");
      own.Bind(1, static_cast<int64_t>(self.pid)).Bind(2, self.start_ticks).Bind(3, self.boot_id);
      if (own.Bind(4, a.id).Step() != SQLITE_DONE) return db_->Fail("cannot take over the attempt");
      a.owner_pid = self.pid;
      a.owner_start_ticks = self.start_ticks;
      a.owner_boot_id = self.boot_id;
      adopted.push_back(std::move(a));
    }
    return Status::Ok();
  });
  if (!s) return s.error();
  return adopted;
}

Status Journal::Verify() const {
  std::lock_guard lock(db_->mu);
  auto integrity = db_->Rows<std::string>("PRAGMA integrity_check", std::nullopt, FirstColumn);
  if (!integrity) return integrity.error();
  std::vector<std::string> problems;
  if (*integrity != std::vector<std::string>{"ok"}) {
    problems.push_back("SQLite integrity check: " + (*integrity).front());
  }
  struct Check {
    const char* sql;
    const char* what;
  };
  const Check checks[] = {
      {"SELECT \"table\" FROM pragma_foreign_key_check", "dangling reference from table"},
      {"SELECT r.key FROM runs r LEFT JOIN attempts a ON a.run_key = r.key GROUP BY r.key "
       "HAVING r.attempts != count(a.id)",
       "attempt count differs from its attempts"},
      {"SELECT key FROM runs WHERE failures > attempts", "more failures than attempts"},
      {"SELECT r.key FROM runs r LEFT JOIN attempts a ON a.run_key = r.key GROUP BY r.key "
       "HAVING (r.state = 'running') != (sum(a.id IS NOT NULL AND a.ended_unix IS NULL) = 1) "
       "OR sum(a.id IS NOT NULL AND a.ended_unix IS NULL) > 1",
       "running state disagrees with its open attempts"},
      {"SELECT r.key FROM runs r WHERE r.state = 'done' AND (SELECT exit_class FROM attempts WHERE run_key = r.key "
       "ORDER BY attempt_no DESC LIMIT 1) NOT IN ('finished', 'stopped_early')",
       "done, but its last attempt did not finish"},
      {"SELECT a.run_key FROM attempts a JOIN runs r ON r.key = a.run_key WHERE a.attempt_no > r.attempts",
       "attempt number beyond the run's count"},
  };
  for (const auto& check : checks) {
    auto keys = db_->Rows<std::string>(check.sql, std::nullopt, FirstColumn);
    if (!keys) return keys.error();
    for (const auto& key : *keys) problems.push_back(fmt::format("{}: {}", key, check.what));
  }
  if (problems.empty()) return Status::Ok();
  if (problems.size() > 10) problems.resize(10);
  std::string message = fmt::format("journal {} is inconsistent:", db_->path());
  for (const auto& p : problems) message += "\n  " + p;
  return Error{message, kExitFailure};
}

}  // namespace sat::sweep
