#include "sweep/journal.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "sweep/status.h"
#include "util/test_dir.h"

namespace sat::sweep {
namespace {

using nlohmann::json;
using run::ExitClass;

std::vector<RunParams> Plan(int n) {
  std::vector<RunParams> runs;
  for (int i = 0; i < n; ++i) {
    runs.push_back(RunParams{i, "key" + std::to_string(1000 + i), json{{"lr", 0.1 * (i + 1)}, {"bs", 32}}});
  }
  return runs;
}

SweepInfo Info(std::string hash = "h1") {
  return SweepInfo{"sweep.yaml", std::move(hash), 42, MetricSpec{"loss", Goal::kMinimize, std::nullopt}};
}

std::unique_ptr<Journal> MustOpen(const std::string& path) {
  auto journal = Journal::Open(path);
  EXPECT_TRUE(journal) << journal.error().message;
  return journal.ok() ? std::move(*journal) : nullptr;
}

std::unique_ptr<Journal> OpenWithPlan(const std::string& path, int n) {
  auto journal = MustOpen(path);
  if (journal) {
    EXPECT_TRUE(journal->EnsureRuns(Info(), Plan(n)));
  }
  return journal;
}

// The queued or retrying run with the lowest index, as the controller picks it; nullopt when none is left.
Result<std::optional<RunRecord>> NextQueued(const Journal& journal) {
  auto runs = journal.Runs();
  if (!runs) return runs.error();
  for (const RunRecord& r : *runs) {
    if (r.state == RunState::kQueued || r.state == RunState::kRetrying) return std::optional<RunRecord>(r);
  }
  return std::optional<RunRecord>();
}

AttemptOutcome Ended(ExitClass c, int exit_code = -1, int signal = 0) {
  AttemptOutcome o;
  o.exit_class = c;
  o.exit_code = exit_code;
  o.term_signal = signal;
  o.detail = std::string(run::ExitClassName(c));
  return o;
}

// Runs `statements` on the database file at `path` on a connection of its own, as another program (or an older
// saturate) would.
void ExecSql(const std::string& path, std::initializer_list<const char*> statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  for (const char* sql : statements) {
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db);
  }
  sqlite3_close(db);
}

// One value of a query on a separate connection, as another process (`sweep status`) would see it.
std::string QueryText(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  sqlite3_stmt* stmt = nullptr;
  std::string out = "<error>";
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

// Makes the journal at `path` what an older saturate wrote at schema `version`: without the columns later
// migrations added.
void Downgrade(const std::string& path, int version) {
  if (version < 4) {
    ExecSql(path, {"ALTER TABLE attempts DROP COLUMN energy_j", "ALTER TABLE runs DROP COLUMN energy_j",
                   "ALTER TABLE runs DROP COLUMN samples"});
  }
  if (version < 3) {
    ExecSql(path, {"ALTER TABLE attempts DROP COLUMN slurm_job", "ALTER TABLE attempts DROP COLUMN slurm_request"});
  }
  if (version < 2) ExecSql(path, {"ALTER TABLE attempts DROP COLUMN error_line"});
  ExecSql(path, {fmt::format("UPDATE schema_version SET version = {}", version).c_str()});
}

TEST(Journal, CreatesSchemaInWalMode) {
  TempDir dir;
  const std::string path = dir.File("j.db");
  auto journal = MustOpen(path);
  ASSERT_TRUE(journal);
  EXPECT_EQ(journal->path(), path);
  EXPECT_EQ(QueryText(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryText(path, "SELECT version FROM schema_version"), "4");
  auto sweep = journal->Sweep();
  ASSERT_TRUE(sweep);
  EXPECT_FALSE(*sweep);
  EXPECT_TRUE(journal->Verify());
  journal.reset();
  EXPECT_TRUE(MustOpen(path));  // reopening migrates nothing
}

TEST(Journal, MigratesAJournalFromBeforeEnergyKeepingItsRuns) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  {
    auto journal = OpenWithPlan(path, 2);
    ASSERT_TRUE(journal);
  }
  Downgrade(path, 3);  // no energy columns
  auto journal = MustOpen(path);
  ASSERT_TRUE(journal);
  EXPECT_EQ(QueryText(path, "SELECT version FROM schema_version"), "4");
  auto runs = journal->Runs();
  ASSERT_TRUE(runs) << runs.error().message;
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_FALSE((*runs)[0].measurements.energy_j);
  EXPECT_FALSE(JoulesPerSample((*runs)[0].measurements));
}

TEST(Journal, RefusesFilesThatAreNotJournals) {
  TempDir dir;
  std::ofstream(dir.File("text.db")) << "not a database, just some text that is long enough to have a header\n";
  EXPECT_FALSE(Journal::Open(dir.File("text.db")));

  ExecSql(dir.File("other.db"), {"CREATE TABLE customers (id INTEGER)"});
  auto other = Journal::Open(dir.File("other.db"));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message, dir.File("other.db") + " is an SQLite database but not a saturate sweep journal");

  { auto journal = MustOpen(dir.File("new.db")); }
  ExecSql(dir.File("new.db"), {"UPDATE schema_version SET version = 99"});
  auto newer = Journal::Open(dir.File("new.db"));
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().message,
            "journal " + dir.File("new.db") + " was written by a newer saturate (schema 99; this one knows up to 4)");
}

TEST(Journal, EnsureRunsIsIdempotentAndRefusesAnotherPlan) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 5);
  ASSERT_TRUE(journal);
  SweepInfo moved = Info();
  moved.spec_path = "moved/sweep.yaml";
  moved.metric->goal = Goal::kMaximize;
  ASSERT_TRUE(journal->EnsureRuns(moved, Plan(5)));
  auto sweep = journal->Sweep();
  ASSERT_TRUE(sweep.ok() && *sweep);
  EXPECT_EQ((*sweep)->spec_path, "moved/sweep.yaml");
  EXPECT_EQ((*sweep)->seed, 42u);
  EXPECT_EQ((*sweep)->metric->goal, Goal::kMaximize);

  auto runs = journal->Runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ((*runs).size(), 5u);
  EXPECT_EQ((*runs)[3].key, "key1003");
  EXPECT_EQ((*runs)[3].params, json({{"lr", 0.1 * 4}, {"bs", 32}}));
  EXPECT_EQ((*runs)[3].state, RunState::kQueued);

  Status changed = journal->EnsureRuns(Info("h2"), Plan(5));
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.error().exit_code, kExitUsage);
  EXPECT_NE(changed.message().find("spec hash h1, this spec h2"), std::string::npos) << changed.message();

  std::vector<RunParams> other = Plan(5);
  other[2].values["bs"] = 64;
  Status mismatch = journal->EnsureRuns(Info(), other);
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.message().find("run key1002 (#2) does not match"), std::string::npos) << mismatch.message();
  EXPECT_EQ((*journal->Runs())[2].params["bs"], 32);  // the failed call changed nothing
}

TEST(Journal, AttemptLifecycleRecordsEverything) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 3);
  ASSERT_TRUE(journal);
  auto next = NextQueued(*journal);
  ASSERT_TRUE(next && *next);
  EXPECT_EQ((*next)->key, "key1000");

  auto attempt = journal->BeginAttempt("key1000", 1, 4321, "logs/key1000/1");
  ASSERT_TRUE(attempt) << attempt.error().message;
  auto running = *journal->Run("key1000");
  EXPECT_EQ(running->state, RunState::kRunning);
  EXPECT_EQ(running->attempts, 1);
  EXPECT_EQ(running->gpu_index, 1);
  EXPECT_TRUE(running->started_unix);
  EXPECT_FALSE(running->finished_unix);
  EXPECT_EQ((*NextQueued(*journal))->key, "key1001");
  EXPECT_FALSE(journal->BeginAttempt("key1000", 0, 1, "x"));  // already running

  const std::vector<MetricPoint> metrics = {
      {"loss", 0.9, 1, 100.0}, {"loss", 0.4, 2, 101.0}, {"loss", 0.5, 3, 102.0}, {"acc", 0.7, 3, 102.0}};
  Measurements ms;
  ms.throughput_samples_per_s = 850.5;
  ms.peak_gpu_memory_bytes = 12ULL << 30;
  ms.rss_bytes = 3ULL << 30;
  ms.samples = 12000;
  ms.energy_j = 3000;
  auto state = journal->EndAttempt(*attempt, Ended(ExitClass::kFinished, 0), metrics, ms, RetryPolicy{});
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_EQ(*state, RunState::kDone);

  const RunRecord done = **journal->Run("key1000");
  EXPECT_EQ(done.state, RunState::kDone);
  EXPECT_EQ(done.best_metrics, json({{"loss", 0.4}, {"acc", 0.7}}));  // best loss (minimize), last acc
  EXPECT_EQ(done.measurements.throughput_samples_per_s, 850.5);
  EXPECT_EQ(done.measurements.peak_gpu_memory_bytes, 12ULL << 30);
  EXPECT_FALSE(done.measurements.cpu_pct);
  EXPECT_EQ(done.measurements.rss_bytes, 3ULL << 30);
  EXPECT_EQ(done.measurements.samples, 12000);
  EXPECT_EQ(done.measurements.energy_j, 3000);
  EXPECT_EQ(JoulesPerSample(done.measurements), 0.25);
  EXPECT_TRUE(done.finished_unix);

  const auto attempts = *journal->Attempts("key1000");
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].attempt_no, 1);
  EXPECT_EQ(attempts[0].exit_class, "finished");
  EXPECT_EQ(attempts[0].exit_code, 0);
  EXPECT_FALSE(attempts[0].term_signal);
  EXPECT_EQ(attempts[0].log_dir, "logs/key1000/1");
  EXPECT_EQ(attempts[0].energy_j, 3000);
  EXPECT_EQ(attempts[0].pid, 4321);
  EXPECT_EQ(attempts[0].owner_pid, getpid());
  EXPECT_GT(attempts[0].owner_start_ticks, 0u);
  EXPECT_TRUE(attempts[0].ended_unix);
  EXPECT_EQ((*journal->LastAttemptMetrics("key1000")).size(), 4u);
  EXPECT_EQ((*journal->LastAttemptMetrics("key1000"))[1].step, 2);

  // Ending twice, or an unknown attempt, is an error.
  EXPECT_FALSE(journal->EndAttempt(*attempt, Ended(ExitClass::kFinished, 0), {}, {}, {}));
  EXPECT_FALSE(journal->EndAttempt(999, Ended(ExitClass::kFinished, 0), {}, {}, {}));
  EXPECT_FALSE(journal->BeginAttempt("nope", 0, 1, "x"));
  EXPECT_FALSE(journal->BeginAttempt("key1000", 0, 1, "x"));  // done

  const StateCounts counts = *journal->Counts();
  EXPECT_EQ(counts.done, 1);
  EXPECT_EQ(counts.queued, 2);
  EXPECT_EQ(counts.total(), 3);
  EXPECT_TRUE(journal->Verify());
}

TEST(Journal, FailedAttemptsAreRetriedWithinTheBudget) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 1);
  ASSERT_TRUE(journal);
  const RetryPolicy policy{2};
  const std::vector<RunState> expected = {RunState::kRetrying, RunState::kRetrying, RunState::kFailed};
  for (RunState want : expected) {
    auto next = *NextQueued(*journal);
    ASSERT_TRUE(next);
    auto id = journal->BeginAttempt(next->key, 0, 100, "logs");
    ASSERT_TRUE(id);
    EXPECT_EQ(*journal->EndAttempt(*id, Ended(ExitClass::kGpuOom, 1), {}, {}, policy), want);
  }
  EXPECT_FALSE(*NextQueued(*journal));
  const RunRecord r = (*journal->Runs())[0];
  EXPECT_EQ(r.state, RunState::kFailed);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.failures, 3);
  EXPECT_TRUE(journal->Verify());
}

TEST(Journal, StoppedAttemptsRequeueWithoutSpendingRetries) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 1);
  ASSERT_TRUE(journal);
  auto id = journal->BeginAttempt("key1000", 0, 100, "logs");
  EXPECT_EQ(*journal->EndAttempt(*id, Ended(ExitClass::kStopped, -1, SIGINT), {}, {}, RetryPolicy{0}),
            RunState::kQueued);
  const RunRecord r = (*journal->Runs())[0];
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ((*journal->Attempts("key1000"))[0].term_signal, SIGINT);
  EXPECT_FALSE((*journal->Attempts("key1000"))[0].exit_code);
}

TEST(Journal, TheSameErrorTwiceFailsTheRunAndSaysWhy) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 2);
  ASSERT_TRUE(journal);
  AttemptOutcome raised = Ended(ExitClass::kFailed, 1);
  raised.error_line = "ValueError: always";
  auto first = journal->BeginAttempt("key1000", 0, 100, "logs");
  EXPECT_EQ(*journal->EndAttempt(*first, raised, {}, {}, RetryPolicy{2}), RunState::kRetrying);
  auto second = journal->BeginAttempt("key1000", 0, 100, "logs");
  EXPECT_EQ(*journal->EndAttempt(*second, raised, {}, {}, RetryPolicy{2}), RunState::kFailed);
  const auto attempts = *journal->Attempts("key1000");
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].error_line, "ValueError: always");
  EXPECT_EQ(attempts[1].detail, "failed; the same error as attempt 1 (failed: ValueError: always): not retried");

  // A different error the second time keeps the retry.
  ASSERT_TRUE(
      journal->EndAttempt(*journal->BeginAttempt("key1001", 0, 100, "logs"), raised, {}, {}, RetryPolicy{2})
          .ok());
  raised.error_line = "KeyError: 'x'";
  auto other = journal->BeginAttempt("key1001", 0, 100, "logs");
  EXPECT_EQ(*journal->EndAttempt(*other, raised, {}, {}, RetryPolicy{2}), RunState::kRetrying);
  EXPECT_TRUE(journal->Verify());
}

TEST(Journal, StoppedEarlyIsDoneNotFailedAndKeepsItsMetrics) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 1);
  ASSERT_TRUE(journal);
  auto failed = journal->BeginAttempt("key1000", 0, 100, "logs");
  ASSERT_TRUE(
      journal->EndAttempt(*failed, Ended(ExitClass::kFailed, 1), {{"loss", 9, 1, 1.0}}, {}, RetryPolicy{2})
          .ok());
  AttemptOutcome stopped = Ended(ExitClass::kStopped, -1, SIGINT);
  stopped.stopped_early = true;
  auto id = journal->BeginAttempt("key1000", 0, 100, "logs");
  const std::vector<MetricPoint> points = {{"loss", 3, 1, 2.0}, {"acc", 0.5, 1, 2.0}, {"loss", 2, 2, 3.0}};
  EXPECT_EQ(*journal->EndAttempt(*id, stopped, points, {}, RetryPolicy{2}), RunState::kDone);
  const RunRecord r = (*journal->Runs())[0];
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.failures, 1);
  EXPECT_EQ((*journal->Attempts("key1000"))[1].exit_class, "stopped_early");
  const auto last = *journal->LastAttemptMetrics("key1000");
  ASSERT_EQ(last.size(), 3u);
  EXPECT_EQ(last[0].value, 3);
  EXPECT_EQ(last[2].value, 2);
  EXPECT_TRUE(journal->Verify()) << journal->Verify().error().message;
}

TEST(Journal, RunsPlannedWithoutValuesGetThemOnce) {
  TempDir dir;
  auto journal = MustOpen(dir.File("j.db"));
  ASSERT_TRUE(journal);
  const std::vector<RunParams> plan = {RunParams{0, "b0", nullptr}, RunParams{1, "b1", nullptr}};
  ASSERT_TRUE(journal->EnsureRuns(Info(), plan));
  ASSERT_TRUE(journal->SetParams("b0", json{{"lr", 0.01}}));
  EXPECT_FALSE(journal->SetParams("b0", json{{"lr", 0.02}}));
  // The same plan again (a resume) keeps the values given.
  ASSERT_TRUE(journal->EnsureRuns(Info(), plan));
  EXPECT_EQ((*journal->Runs())[0].params, (json{{"lr", 0.01}}));
  EXPECT_TRUE((*journal->Runs())[1].params.is_null());
}

TEST(StateAfterAttempt, Rules) {
  const RetryPolicy two{2};
  EXPECT_EQ(StateAfterAttempt(ExitClass::kFinished, 5, two), RunState::kDone);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kStopped, 5, two), RunState::kQueued);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kStartFailed, 0, two), RunState::kFailed);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kTimedOut, 0, two), RunState::kRetrying);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kTimedOut, 2, two), RunState::kFailed);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kFailed, 0, two), RunState::kRetrying);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kHostOom, 1, two), RunState::kRetrying);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kWorkerKilled, 2, two), RunState::kFailed);
  EXPECT_EQ(StateAfterAttempt(ExitClass::kFailed, 0, RetryPolicy{0}), RunState::kFailed);
  EXPECT_FALSE(CountsAsFailure(ExitClass::kStopped));
  EXPECT_TRUE(CountsAsFailure(ExitClass::kTimedOut));
}

TEST(StateAfterOutcome, OutOfMemoryWhilePackedIsRequeuedWithoutCharge) {
  const RetryPolicy none{0};
  AttemptOutcome oom = Ended(ExitClass::kGpuOom, 1);
  EXPECT_EQ(StateAfterOutcome(oom, 0, none), RunState::kFailed);
  EXPECT_TRUE(CountsAsFailure(oom));
  oom.oom_while_packed = true;
  EXPECT_EQ(StateAfterOutcome(oom, 0, none), RunState::kQueued);
  EXPECT_FALSE(CountsAsFailure(oom));
  // Only an out-of-memory failure is excused by packing.
  AttemptOutcome crash = Ended(ExitClass::kFailed, 1);
  crash.oom_while_packed = true;
  EXPECT_EQ(StateAfterOutcome(crash, 0, none), RunState::kFailed);
  EXPECT_TRUE(CountsAsFailure(crash));
}

// fork or pipe failing for want of processes or descriptors is retried apart from the retry budget, up to its own
// bound, counted from the journal's attempts; a missing program fails at once.
TEST(Journal, TransientStartFailuresAreRetriedUpToTheirOwnBound) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 1);
  ASSERT_TRUE(journal);
  AttemptOutcome busy = Ended(ExitClass::kStartFailed, -1);
  busy.start_transient = true;
  RetryPolicy policy{0};
  policy.transient_starts = 3;
  std::vector<RunState> states;
  for (int i = 0; i < 4; ++i) {
    auto id = journal->BeginAttempt("key1000", std::nullopt, 10, "logs");
    ASSERT_TRUE(id) << id.error().message;
    states.push_back(*journal->EndAttempt(*id, busy, {}, {}, policy));
  }
  EXPECT_EQ(states, (std::vector<RunState>{RunState::kRetrying, RunState::kRetrying, RunState::kRetrying,
                                           RunState::kFailed}));
  EXPECT_EQ((*journal->Run("key1000"))->failures, 0) << "not counted against the retries";
  EXPECT_EQ(StateAfterOutcome(Ended(ExitClass::kStartFailed, -1), 0, RetryPolicy{2}), RunState::kFailed);
}

TEST(Journal, OutOfMemoryWhilePackedRunsAgainWithoutUsingARetry) {
  TempDir dir;
  auto journal = OpenWithPlan(dir.File("j.db"), 1);
  ASSERT_TRUE(journal);
  AttemptOutcome oom = Ended(ExitClass::kHostOom, 1);
  oom.oom_while_packed = true;
  auto first = journal->BeginAttempt("key1000", std::nullopt, 10, "logs/1");
  ASSERT_TRUE(first);
  EXPECT_EQ(*journal->EndAttempt(*first, oom, {}, {}, RetryPolicy{0}), RunState::kQueued);
  auto second = journal->BeginAttempt("key1000", std::nullopt, 11, "logs/2");
  ASSERT_TRUE(second);
  EXPECT_EQ(*journal->EndAttempt(*second, Ended(ExitClass::kFinished, 0), {}, {}, RetryPolicy{0}),
            RunState::kDone);
  const RunRecord r = **journal->Run("key1000");
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ((*journal->Attempts("key1000"))[0].exit_class, "host_oom");
  EXPECT_TRUE(journal->Verify());
}

// Runs `body` in a child process and returns its pid; the child never returns into the test.
template <class Body>
pid_t Fork(Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  return pid;
}

TEST(Journal, RequeueInterruptedRequeuesRunsOfDeadOwnersOnly) {
  TempDir dir;
  const std::string path = dir.File("j.db");
  auto journal = OpenWithPlan(path, 3);
  ASSERT_TRUE(journal);
  // key1000 done here; key1001 begun by a process that then exits without ending it.
  auto done = journal->BeginAttempt("key1000", 0, 1, "logs");
  ASSERT_TRUE(journal->EndAttempt(*done, Ended(ExitClass::kFinished, 0), {}, {}, {}));
  const pid_t child = Fork([&] {
    auto j = Journal::Open(path);
    if (j) (void)(*j)->BeginAttempt("key1001", 0, 2, "logs");
  });
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // key1002 begun by this very process: still ours, so left alone.
  ASSERT_TRUE(journal->BeginAttempt("key1002", 1, 3, "logs"));

  auto requeued = journal->RequeueInterrupted();
  ASSERT_TRUE(requeued) << requeued.error().message;
  EXPECT_EQ(*requeued, 1);
  const auto runs = *journal->Runs();
  EXPECT_EQ(runs[0].state, RunState::kDone);
  EXPECT_EQ(runs[1].state, RunState::kQueued);
  EXPECT_EQ(runs[1].attempts, 1);
  EXPECT_EQ(runs[1].failures, 0);
  EXPECT_EQ(runs[2].state, RunState::kRunning);
  const auto attempts = *journal->Attempts("key1001");
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].exit_class, "interrupted");
  EXPECT_EQ(attempts[0].owner_pid, child);
  EXPECT_EQ(attempts[0].detail, "saturate (pid " + std::to_string(child) + ") ended before the attempt did");
  EXPECT_TRUE(journal->Verify());
  EXPECT_EQ(*journal->RequeueInterrupted(), 0);
}

TEST(Journal, RequeueInterruptedRefusesWhileAnotherSaturateIsAlive) {
  TempDir dir;
  const std::string path = dir.File("j.db");
  ASSERT_TRUE(OpenWithPlan(path, 2));
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = Fork([&] {
    auto j = Journal::Open(path);
    if (j.ok() && (*j)->BeginAttempt("key1000", 0, 2, "logs").ok()) (void)!write(ready[1], "x", 1);
    pause();
  });
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);

  auto journal = MustOpen(path);
  auto refused = journal->RequeueInterrupted();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().exit_code, kExitUsage);
  EXPECT_EQ(refused.error().message, "journal " + path + " is in use: saturate (pid " + std::to_string(child) +
                                         ") is still running run key1000; stop it before resuming");
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(*journal->RequeueInterrupted(), 1);
}

TEST(Journal, VerifyReportsBrokenInvariants) {
  TempDir dir;
  const std::string path = dir.File("j.db");
  auto journal = OpenWithPlan(path, 2);
  ASSERT_TRUE(journal);
  ExecSql(path, {"UPDATE runs SET attempts = 2, state = 'running' WHERE key = 'key1001'"});
  Status s = journal->Verify();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "journal " + path +
                             " is inconsistent:\n  key1001: attempt count differs from its attempts\n  key1001: "
                             "running state disagrees with its open attempts");
}

// The crash-consistency claim: a child loops through attempts on a real file and is killed with SIGKILL at a
// random instant, again and again; after each kill the journal must open, hold its invariants, and resume.
// Begins and ends attempts until killed; writes a byte to `progress_fd` after each attempt ends.
// Begins and ends attempts, writing '+' after each end. With `hold_after` > 0, the attempt after that many is left
// open: 'b' is written once it has begun, and the child waits for its kill there.
void AttemptLoop(const std::string& path, unsigned seed, int progress_fd, int hold_after) {
  auto journal = Journal::Open(path);
  if (!journal) _exit(3);
  std::mt19937 rng(seed);
  const ExitClass outcomes[] = {ExitClass::kFinished, ExitClass::kFinished, ExitClass::kFailed, ExitClass::kGpuOom,
                                ExitClass::kStopped};
  while (true) {
    auto next = NextQueued(**journal);
    if (!next) _exit(4);
    if (!*next) pause();  // all done: wait for the kill like a busy child would
    auto id = (*journal)->BeginAttempt((*next)->key, 0, 1, "logs");
    if (!id) _exit(5);
    if (hold_after > 0 && hold_after-- == 1) {
      if (write(progress_fd, "b", 1) != 1) _exit(7);
      pause();
    }
    const std::vector<MetricPoint> metrics = {{"loss", static_cast<double>(rng() % 100), 1, 1.0}};
    Measurements ms;
    ms.throughput_samples_per_s = 100;
    if (!(*journal)->EndAttempt(*id, Ended(outcomes[rng() % 5], 1), metrics, ms, RetryPolicy{1})) {
      _exit(6);
    }
    if (write(progress_fd, "+", 1) != 1) _exit(7);
  }
}

TEST(JournalCrash, KillNineAtRandomInstantsLeavesAConsistentJournal) {
  TempDir dir;
  const std::string path = dir.File("j.db");
  constexpr int kRuns = 2000;
  ASSERT_TRUE(OpenWithPlan(path, kRuns));
  std::mt19937 pick(20240601);
  int killed_mid_run = 0;
  int64_t attempts_seen = 0;
  for (int round = 0; round < 30; ++round) {
    int progress[2];
    ASSERT_EQ(pipe(progress), 0);
    // Let the child end one to three attempts (however slow the disk), then kill it at a random instant of the
    // next ones; every third round, while the next one is certainly open (on a busy machine a random instant may
    // always find the child between attempts, where it was when it last wrote).
    const int wanted = 1 + static_cast<int>(pick() % 3);
    const bool hold = round % 3 == 0;
    const pid_t child =
        Fork([&] { AttemptLoop(path, static_cast<unsigned>(round), progress[1], hold ? wanted + 1 : 0); });
    close(progress[1]);
    char byte;
    for (int i = 0; i < wanted; ++i) ASSERT_EQ(read(progress[0], &byte, 1), 1);
    if (hold) {
      ASSERT_EQ(read(progress[0], &byte, 1), 1);
      ASSERT_EQ(byte, 'b');
    } else {
      usleep(pick() % 15000);
    }
    kill(child, SIGKILL);
    close(progress[0]);
    attempts_seen += wanted;
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child ended on its own with " << WEXITSTATUS(status);

    auto journal = MustOpen(path);
    ASSERT_TRUE(journal);
    Status verified = journal->Verify();
    ASSERT_TRUE(verified) << "round " << round << ": " << verified.message();
    auto requeued = journal->RequeueInterrupted();
    ASSERT_TRUE(requeued) << requeued.error().message;
    EXPECT_LE(*requeued, 1);
    killed_mid_run += *requeued;
    ASSERT_TRUE(journal->Verify());
    const StateCounts counts = *journal->Counts();
    EXPECT_EQ(counts.running, 0);
    EXPECT_EQ(counts.total(), kRuns);
  }
  auto journal = MustOpen(path);
  const std::vector<RunRecord> runs = *journal->Runs();
  int64_t attempts = 0;
  for (const auto& r : runs) attempts += r.attempts;
  RecordProperty("attempts", static_cast<int>(attempts));
  RecordProperty("kills_during_an_attempt", killed_mid_run);
  EXPECT_GE(attempts, attempts_seen);  // the children did real work between kills
  EXPECT_GT(killed_mid_run, 0);  // and some kills landed while an attempt was open
}

void WriteSweep(const std::string& path) {
  auto journal = OpenWithPlan(path, 2);
  ASSERT_TRUE(journal);
  auto attempt = journal->BeginAttempt("key1000", 0, 4321, "logs/key1000/1");
  ASSERT_TRUE(attempt);
  Measurements ms;
  ms.throughput_samples_per_s = 850.5;
  ms.energy_j = 3000;
  ASSERT_TRUE(journal->EndAttempt(*attempt, Ended(ExitClass::kFinished, 0), {{"loss", 0.4, 1, 100.0}}, ms, {}));
}

// What a reader must leave as it was: the file's bytes and its modification time.
std::string Fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  struct stat st {};
  stat(path.c_str(), &st);
  return fmt::format("mtime {}.{}, {} bytes hashing to {:x}", st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                     bytes.str().size(), std::hash<std::string>{}(bytes.str()));
}

TEST(JournalReaders, OldSchemasAreReadAsTheyAreWithoutWriting) {
  for (int version = 1; version <= 4; ++version) {
    SCOPED_TRACE(fmt::format("schema {}", version));
    TempDir dir;
    const std::string path = dir.File("j.db");
    WriteSweep(path);
    Downgrade(path, version);
    const std::string before = Fingerprint(path);

    auto journal = Journal::OpenReadOnly(path);
    ASSERT_TRUE(journal) << journal.error().message;
    auto runs = (*journal)->Runs();
    ASSERT_TRUE(runs) << runs.error().message;
    ASSERT_EQ(runs->size(), 2u);
    EXPECT_EQ((*runs)[0].state, RunState::kDone);
    EXPECT_EQ((*runs)[0].measurements.throughput_samples_per_s, 850.5);
    EXPECT_EQ((*runs)[0].measurements.energy_j.has_value(), version >= 4);  // unknown before version 4
    auto attempts = (*journal)->Attempts("key1000");
    ASSERT_TRUE(attempts) << attempts.error().message;
    ASSERT_EQ(attempts->size(), 1u);
    EXPECT_EQ((*attempts)[0].exit_class, "finished");
    EXPECT_EQ((*attempts)[0].slurm_job, "");
    EXPECT_EQ((*journal)->Counts()->done, 1);
    EXPECT_EQ((*journal)->LastAttemptMetrics("key1000")->size(), 1u);
    EXPECT_TRUE((*journal)->Verify());
    // The connection cannot write, root or not (SQLite's read-only open).
    const Status write = const_cast<Journal&>(**journal).EnsureRuns(Info(), Plan(2));
    ASSERT_FALSE(write);
    EXPECT_NE(write.message().find("readonly"), std::string::npos) << write.message();
    journal->reset();
    EXPECT_EQ(Fingerprint(path), before);
  }
}

TEST(JournalReaders, ReadOnlyRefusesWhatIsNotAReadableJournal) {
  TempDir dir;
  EXPECT_FALSE(Journal::OpenReadOnly(dir.File("missing.db")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("missing.db")));
  ExecSql(dir.File("other.db"), {"CREATE TABLE customers (id INTEGER)"});
  auto other = Journal::OpenReadOnly(dir.File("other.db"));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().exit_code, kExitUsage);
  { auto journal = MustOpen(dir.File("new.db")); }
  ExecSql(dir.File("new.db"), {"UPDATE schema_version SET version = 99"});
  auto newer = Journal::OpenReadOnly(dir.File("new.db"));
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message.find("newer saturate"), std::string::npos);
}

// `sweep status` and `sweep export` once opened the journal read-write and migrated an older schema, without the
// controller's lock.
TEST(JournalReaders, StatusOfAnOlderJournalLeavesItAsItWas) {
  TempDir dir;
  const std::string path = dir.File("old.journal");
  WriteSweep(path);
  Downgrade(path, 1);
  const std::string before = Fingerprint(path);
  auto status = ReadStatus(path);
  ASSERT_TRUE(status) << status.error().message;
  ASSERT_EQ(status->runs.size(), 2u);
  EXPECT_EQ(status->counts.done, 1);
  EXPECT_TRUE(status->problems.empty()) << status->problems;
  EXPECT_EQ(Fingerprint(path), before);
  EXPECT_EQ(QueryText(path, "SELECT version FROM schema_version"), "1");
}

// A journal another user owns, in a folder this user cannot write (so SQLite cannot make its -shm file): status
// reads it. Tests run as root, whom permissions do not stop, so the reader is a child that becomes nobody.
TEST(JournalReaders, StatusReadsAJournalThisUserMayOnlyRead) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  TempDir dir;
  const std::string folder = dir.File("shared");
  ASSERT_TRUE(std::filesystem::create_directory(folder));
  const std::string path = folder + "/ro.journal";
  WriteSweep(path);
  ASSERT_FALSE(std::filesystem::exists(path + "-shm"));
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  ASSERT_EQ(chmod(folder.c_str(), 0555), 0);
  ASSERT_EQ(chmod(std::filesystem::path(folder).parent_path().c_str(), 0755), 0);
  const std::string before = Fingerprint(path);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    auto status = ReadStatus(path);
    if (!status) fmt::print(stderr, "{}\n", status.error().message);
    _exit(status.ok() && status->counts.done == 1 && status->runs.size() == 2 ? 0 : 1);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "status as another user failed";
  EXPECT_EQ(Fingerprint(path), before);
  ASSERT_EQ(chmod(folder.c_str(), 0755), 0);  // so TempDir can remove it
}

}  // namespace
}  // namespace sat::sweep
