#include "slurm/report.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "sweep/journal.h"
#include "util/test_dir.h"

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

RunRecord RunOf(std::string key, int64_t index, double cpu_pct) {
  RunRecord r;
  r.key = std::move(key);
  r.index = index;
  r.state = RunState::kDone;
  r.measurements.cpu_pct = cpu_pct;
  r.measurements.rss_bytes = 100ULL << 20;
  return r;
}

AttemptRecord Attempt(std::string job, const SlurmRequest& request) {
  AttemptRecord a;
  a.slurm_job = std::move(job);
  a.slurm_request = request.ToJson().dump();
  return a;
}

TEST(SlurmReport, GpuHoursAskedAgainstOneGpuPerRun) {
  SlurmRequest whole;
  whole.gpus = 1;
  whole.gpu_fraction = 1;
  whole.cpus = 4;
  SlurmRequest shard;
  shard.shards = 2;
  shard.gpu_fraction = 0.25;
  shard.cpus = 1;
  shard.sized = true;
  const SlurmReport r = BuildSlurmReport({RunOf("a", 0, 50), RunOf("b", 1, 80), RunOf("local", 2, 10)},
                                         {Attempt("40", whole), Attempt("41_0", shard), AttemptRecord{}},
                                         {3600, 7200, 100});
  ASSERT_EQ(r.runs.size(), 2u);  // the local attempt is left out
  EXPECT_EQ(r.sized, 1);
  EXPECT_DOUBLE_EQ(r.gpu_hours_asked, 1 + 2 * 0.25);
  EXPECT_DOUBLE_EQ(r.gpu_hours_one_per_run, 3);
  EXPECT_DOUBLE_EQ(r.cpu_hours_asked, 4 + 2 * 1);
  EXPECT_DOUBLE_EQ(r.cpu_hours_used, 0.5 + 2 * 0.8);
  const std::string text = FormatSlurmReport(r, 0, std::nullopt);
  EXPECT_NE(text.find("1 of 2 runs asked for a request sized from measurement"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU-hours: 1.500 asked, 3.000 with one GPU per run: 1.500 saved (50%)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("shard:2 1 cpu"), std::string::npos) << text;
  EXPECT_EQ(text.find("per GPU-hour"), std::string::npos) << "no price, no money";
  EXPECT_EQ(SlurmReportJson(r, std::nullopt)["gpu_hours_saved"], 1.5);
  EXPECT_TRUE(SlurmReportJson(r, std::nullopt)["cost_asked"].is_null());
  // At a price: the same hours in money.
  EXPECT_NE(FormatSlurmReport(r, 0, 2.5)
                .find("At 2.50 per GPU-hour: 3.75 asked, 7.50 with one GPU per run, 3.75 saved"),
            std::string::npos);
  const nlohmann::json priced = SlurmReportJson(r, 2.5);
  EXPECT_DOUBLE_EQ(priced["cost_asked"].get<double>(), 3.75);
  EXPECT_DOUBLE_EQ(priced["cost_one_per_run"].get<double>(), 7.5);
  EXPECT_DOUBLE_EQ(priced["price_per_gpu_hour"].get<double>(), 2.5);
}

TEST(SlurmReport, AJournalWithoutSlurmAttemptsHasNoReport) {
  TempDir dir;
  auto journal = Journal::Open(dir.File("s.journal"));
  ASSERT_TRUE(journal);
  ASSERT_TRUE((*journal)->EnsureRuns(SweepInfo{"s.yaml", "h", 1, std::nullopt},
                                          {RunParams{0, "k0", nlohmann::json{{"i", 1}}}})
                  .ok());
  auto report = ReadSlurmReport(dir.File("s.journal"));
  ASSERT_TRUE(report);
  EXPECT_FALSE(*report);
}

// A journal written before the Slurm backend gets the new columns when it is opened, and keeps its attempts.
TEST(SlurmReport, OlderJournalsAreMigrated) {
  TempDir dir;
  const std::string path = dir.File("old.journal");
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal);
    ASSERT_TRUE((*journal)->EnsureRuns(SweepInfo{"s.yaml", "h", 1, std::nullopt},
                                            {RunParams{0, "k0", nlohmann::json{{"i", 1}}}})
                    .ok());
    ASSERT_TRUE((*journal)->BeginAttempt("k0", std::nullopt, 0, dir.File("a1")));
  }
  // Back to the schema before the Slurm columns (and the energy columns after them).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE attempts DROP COLUMN slurm_job; ALTER TABLE attempts DROP COLUMN slurm_request; "
                         "ALTER TABLE attempts DROP COLUMN energy_j; ALTER TABLE runs DROP COLUMN energy_j; "
                         "ALTER TABLE runs DROP COLUMN samples; UPDATE schema_version SET version = 2;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << journal.error().message;
  auto attempts = (*journal)->Attempts("k0");
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->size(), 1u);
  EXPECT_EQ(attempts->front().slurm_job, "");
  ASSERT_TRUE((*journal)->SetSlurmJob(attempts->front().id, "41_0", "{\"cpus\": 1}"));
  // This process owns the open attempt already; adopting returns it with its job.
  auto adopted = (*journal)->AdoptOpenAttempts();
  ASSERT_TRUE(adopted) << adopted.error().message;
  ASSERT_EQ(adopted->size(), 1u);
  EXPECT_EQ(adopted->front().slurm_job, "41_0");
  EXPECT_EQ(adopted->front().slurm_request, "{\"cpus\": 1}");
  EXPECT_TRUE((*journal)->Verify());
}

}  // namespace
}  // namespace sat::slurm
