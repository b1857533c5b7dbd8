#include "sweep/staging.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "run/interrupt.h"
#include "datastore/test_storage_cases.h"
#include "sweep/meter.h"
#include "util/test_dir.h"

namespace sat::sweep {
namespace {

namespace fs = std::filesystem;

// The first run's signals: its wait, CPU and the machine's cores; then, where read, the processes in state 'D', its
// workers and its rate.
FetchSignals Signals(double wait, std::optional<double> cpu_pct, unsigned cores,
                     std::optional<double> blocked = std::nullopt, double workers = 0, double samples_per_s = 0) {
  FetchSignals s;
  s.wait_share = wait;
  s.cpu_pct = cpu_pct;
  s.cores = cores;
  s.blocked = blocked;
  s.workers = workers;
  s.samples_per_s = samples_per_s;
  return s;
}

// A helper report through the real parser: cumulative steps, samples, wait and step seconds of process `pid`.
measure::HelperMessage Report(double t, int64_t steps, double samples, double wait_s, double step_s, int64_t pid) {
  nlohmann::json j = {{"v", 1},          {"type", "progress"}, {"run", "run-1"},   {"pid", pid},  {"t", t},
                      {"steps", steps},  {"samples", samples}, {"wait_s", wait_s}, {"step_s", step_s}};
  auto m = measure::ParseHelperMessage(j.dump());
  EXPECT_TRUE(m) << m.error().message;
  return m.ok() ? *m : measure::HelperMessage{};
}

// The storage rule's scripted loaders (datastore/test_storage_cases.h) as the sweep sees a first run: helper reports at
// the case's rate and data wait, and the controller's tree readings made of the case's ticks, through the run's
// meter (RunMeter::Training) and EvidenceOf. The sweep must find what the rule finds.
class SweepStorageCases : public testing::TestWithParam<datastore::fixtures::StorageCase> {};

TEST_P(SweepStorageCases, TheFirstRunIsJudgedAsTheRuleSays) {
  const datastore::fixtures::StorageCase& c = GetParam();
  MeterOptions options;
  options.warmup_s = 1;
  options.window_s = 1;
  RunMeter meter(0, false, options, "run-1");
  // Start-up (imports: a busy core) until the first step at 2 s: not part of the judgement.
  for (double t = 0.5; t < 2; t += 0.5) meter.AddTree(TreeReading{t, 100.0, 1 << 28, std::nullopt, 0, 0});
  for (int k = 0; k <= 16; ++k) {
    const double t = 2 + 0.25 * k;
    const double loop_s = 0.25 * k;
    meter.Add(Report(t, k + 1, c.samples_per_s * loop_s, c.data_wait_share * loop_s,
                     (1 - c.data_wait_share) * loop_s, 100));
  }
  for (size_t i = 0; i < c.ticks.size(); ++i) {
    const datastore::fixtures::Tick& tick = c.ticks[i];
    meter.AddTree(TreeReading{2 + 0.5 * static_cast<double>(i), tick.cpu_cores * 100, 1 << 28, std::nullopt,
                              static_cast<unsigned>(tick.blocked), static_cast<unsigned>(c.workers)});
  }
  const std::optional<TrainingSoFar> t = meter.Training();
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(t->startup_s, 2, 1e-9);
  EXPECT_GE(t->trained_s, kJudgeAfterS);
  EXPECT_GE(t->readings, kJudgeReadings);
  EXPECT_NEAR(*t->cpu_pct, c.MeanCpu() * 100, 1e-9) << "the start-up's readings are left out";
  EXPECT_NEAR(t->wait_share, c.data_wait_share, 1e-9);
  EXPECT_NEAR(*t->samples_per_s, c.samples_per_s, 1e-6);

  FetchSignals s;
  s.wait_share = t->wait_share;
  s.cpu_pct = t->cpu_pct;
  s.cores = c.cores;
  s.blocked = t->blocked;
  s.workers = t->workers.value_or(0);
  s.samples_per_s = *t->samples_per_s;
  const datastore::StorageWait w = datastore::JudgeStorageWait(EvidenceOf(s, datastore::MountKindOfType(c.fs_type, c.network), c.cold));
  EXPECT_EQ(datastore::StorageFindingName(w.finding), datastore::StorageFindingName(c.finding)) << JudgementText(s, w);
  EXPECT_EQ(w.copy_helps, c.copy_helps) << JudgementText(s, w);
}

INSTANTIATE_TEST_SUITE_P(Cases, SweepStorageCases, testing::ValuesIn(datastore::fixtures::StorageCases()),
                         [](const testing::TestParamInfo<datastore::fixtures::StorageCase>& info) {
                           return info.param.name;
                         });

TEST(EvidenceOf, TheWorkersLoadOrTheTrainerWithinItsWait) {
  datastore::StorageEvidence e = EvidenceOf(Signals(0.9, 30.0, 2, 0.7, 0, 40), datastore::MountKind::kFuse, std::nullopt);
  EXPECT_TRUE(e.loader.in_trainer);
  EXPECT_DOUBLE_EQ(e.loader.processes, 1);
  EXPECT_DOUBLE_EQ(*e.loader.cpu_cores, 0.3);
  EXPECT_DOUBLE_EQ(*e.loader.data_wait_share, 0.9);
  e = EvidenceOf(Signals(0.6, 160.0, 4, 2.4, 4, 900), datastore::MountKind::kNetwork, std::nullopt);
  EXPECT_FALSE(e.loader.in_trainer);
  EXPECT_DOUBLE_EQ(e.loader.processes, 4);
  // The issue's judgement: 100% wait, 3% CPU, never in 'D', on FUSE: storage, said with its evidence.
  const FetchSignals issue = Signals(1.0, 3.0, 2, 0.0, 0, 22);
  const datastore::StorageWait w =
      datastore::JudgeStorageWait(EvidenceOf(issue, datastore::MountKind::kFuse, datastore::fixtures::ColdReads(45, 0.2)));
  EXPECT_EQ(JudgementText(issue, w),
            "the first run waited for data 100% of its loop time; its loading: fetch 97% (cold reads of its files: "
            "44.9 ms a sample), prep 3% (its CPU), other 0%: its loader waits on storage, and a local copy reads "
            "225× faster");
  // A loader that keeps up is no reason to copy anything.
  const datastore::StorageWait up = datastore::JudgeStorageWait(EvidenceOf(Signals(0.05, 3.0, 2), datastore::MountKind::kFuse, {}));
  EXPECT_EQ(up.finding, datastore::StorageFinding::kKeepsUp);
}

TEST(ChooseRestart, SoonerOnTheCopyOrLeftToFinish) {
  // 100 of an 800-sample epoch done at 22 samples/s (32 s left); on the copy 1.5 s of start-up and 800 at 300/s.
  RestartChoice c = ChooseRestart(RunProgress{100, 22, 800, 1.5}, 300);
  EXPECT_TRUE(c.restart);
  EXPECT_NEAR(c.finish_s, 700 / 22.0, 1e-9);
  EXPECT_NEAR(c.restart_s, 1.5 + 800 / 300.0, 1e-9);
  EXPECT_EQ(c.why, "~32 s left on the source at 22.0 samples/s against ~4 s for a new attempt on the copy (1.5 s of "
                   "start-up and 800 samples at ~300 samples/s; at least the 800 samples of its epoch)");
  // Nearly done: it finishes.
  EXPECT_FALSE(ChooseRestart(RunProgress{780, 22, 800, 1.5}, 300).restart);
  // In its second epoch: at least the rest of that one.
  c = ChooseRestart(RunProgress{900, 22, 800, 1.5}, 300);
  EXPECT_NEAR(c.finish_s, 700 / 22.0, 1e-9);
  EXPECT_NEAR(c.restart_s, 1.5 + 1600 / 300.0, 1e-9);
  // Length unknown: as much again as it has trained.
  c = ChooseRestart(RunProgress{100, 22, std::nullopt, 1.5}, 300);
  EXPECT_NEAR(c.finish_s, 100 / 22.0, 1e-9);
  EXPECT_TRUE(c.restart);
  EXPECT_NE(c.why.find("its length unknown"), std::string::npos);
  // A long start-up against a short rest: it finishes. A copy no faster: never.
  EXPECT_FALSE(ChooseRestart(RunProgress{100, 22, std::nullopt, 20}, 300).restart);
  EXPECT_FALSE(ChooseRestart(RunProgress{100, 22, 800, 1.5}, 22).restart);
  EXPECT_FALSE(ChooseRestart(RunProgress{100, 0, 800, 1.5}, 300).restart);
}

class StagerTest : public testing::Test {
 protected:
  StagerTest() {
    fs::create_directories(dir_.File("ds/sub"));
    for (int i = 0; i < 5; ++i) std::ofstream(dir_.File("ds/sub/" + std::to_string(i))) << std::string(1000, 'a' + i);
    options_.paths = {dir_.File("ds") + "/"};
    options_.dir = dir_.File("store");
  }
  // Polls until the copy is done (or failed), as the controller's ticks do.
  static Result<std::optional<std::string>> Finish(Stager& stager) {
    for (int i = 0; i < 500; ++i) {
      auto note = stager.Poll();
      if (!note || *note || stager.Report().decision != "copying") return note;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return Error{"the copy never finished"};
  }

  TempDir dir_;
  StagingOptions options_;
};

TEST_F(StagerTest, AlwaysCopiesBeforeAnyRunAndPointsRunsAtTheCopy) {
  options_.policy = StagePolicy::kAlways;
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager) << stager.error().message;
  EXPECT_FALSE((*stager)->MayStart(0, 0));
  auto note = Finish(**stager);
  ASSERT_TRUE(note) << note.error().message;
  ASSERT_TRUE(*note);
  EXPECT_NE((*note)->find("copied in"), std::string::npos) << **note;
  EXPECT_TRUE((*stager)->MayStart(3, 7));

  const StagingReport report = (*stager)->Report();
  EXPECT_EQ(report.decision, "staged");
  ASSERT_EQ(report.sources.size(), 1u);
  const std::string local = report.sources[0].local;
  EXPECT_TRUE(local.starts_with(dir_.File("store") + "/")) << local;
  EXPECT_EQ(report.sources[0].files, 5u);
  EXPECT_EQ(report.sources[0].bytes, 5000u);

  std::vector<std::string> argv = {"python3", "t.py",  dir_.File("ds"), dir_.File("ds/sub/1"), "--data=" + dir_.File("ds"),
                                   "--root", "${stage:0}/sub", dir_.File("dsx"), "--other=" + dir_.File("ds2")};
  std::map<std::string, std::string> env;
  EXPECT_TRUE((*stager)->Rewrite(&argv, &env));
  EXPECT_EQ(argv[2], local);
  EXPECT_EQ(argv[3], local + "/sub/1");
  EXPECT_EQ(argv[4], "--data=" + local);
  EXPECT_EQ(argv[6], local + "/sub");
  EXPECT_EQ(argv[7], dir_.File("dsx")) << "a path that only starts with the same letters is another path";
  EXPECT_EQ(argv[8], "--other=" + dir_.File("ds2"));
  EXPECT_EQ(env["SATURATE_STAGED_0"], local);
  std::ifstream copied(argv[3]);
  std::string text;
  copied >> text;
  EXPECT_EQ(text, std::string(1000, 'b'));
}

// auto as on a FUSE mount without cold reads (the test folder is one local filesystem).
StagerSeams OnFuse() {
  StagerSeams seams;
  seams.mount = datastore::MountKind::kFuse;
  seams.same_filesystem_ok = true;
  seams.cold_reads = nullptr;
  return seams;
}

// ... with scripted cold reads: the source's files at `source_ms` each, a copy's at `local_ms`.
StagerSeams OnFuseReading(double source_ms, double local_ms) {
  StagerSeams seams = OnFuse();
  seams.cold_reads = [=](const std::vector<std::string>& files, const datastore::ColdReadOptions& o) {
    EXPECT_FALSE(files.empty());
    EXPECT_EQ(o.local_dirs.size(), 1u);
    return Result<datastore::ColdReadComparison>(datastore::fixtures::ColdReads(source_ms, local_ms, 5));
  };
  return seams;
}

// Polls as the controller's ticks do, until the cold reads are in and `stager` acted on them.
void AwaitColdReads(Stager& stager) {
  for (int i = 0; i < 200; ++i) {
    auto note = stager.Poll();
    if (!note || *note || stager.Report().decision != "undecided") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST_F(StagerTest, AutoLetsTheFirstRunJudgeAlone) {
  auto stager = Stager::Start(options_, OnFuse());
  ASSERT_TRUE(stager) << stager.error().message;
  Stager& s = **stager;
  EXPECT_TRUE(s.Undecided());
  EXPECT_TRUE(s.MayStart(0, 0));
  EXPECT_FALSE(s.MayStart(1, 1)) << "a second run before the first is judged";
  EXPECT_FALSE(s.MayStart(0, 1)) << "the first run ended unjudged: the controller judges it at its end";

  // Waiting for data 90% at 5% of a core, 80% of the time in 'D': storage, on a FUSE mount a copy helps.
  EXPECT_TRUE(s.Judge(Signals(0.9, 5.0, 2, 0.8, 0, 40), false));
  EXPECT_EQ(s.Report().decision, "copying") << s.Report().reason;
  EXPECT_NE(s.Report().reason.find("its loader waits on storage"), std::string::npos) << s.Report().reason;
  EXPECT_FALSE(s.MayStart(1, 1)) << "runs wait for the copy";
  auto note = Finish(s);
  ASSERT_TRUE(note && *note);
  EXPECT_TRUE(s.MayStart(1, 1));
  // The first run, still on the source: without cold reads of a copy no rate on it is known, so it finishes.
  const RestartChoice choice = s.OnSource(0, "k0", RunProgress{100, 40, 800, 1.5});
  EXPECT_FALSE(choice.restart);
  ASSERT_EQ(s.Report().on_source.size(), 1u);
  EXPECT_NE(StagingText(s.Report()).find("run 0 (k0) finished on the source (no rate on the copy"), std::string::npos)
      << StagingText(s.Report());

  // A later sweep of the same data finds the copy at once and decides nothing.
  auto again = Stager::Start(options_);
  ASSERT_TRUE(again);
  auto found = (*again)->Poll();
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*again)->Report().decision, "staged");
  EXPECT_TRUE((*again)->Report().sources[0].reused);
}

TEST_F(StagerTest, AutoLeavesADataSetOnTheStoresOwnFilesystem) {
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager);
  EXPECT_EQ((*stager)->Report().decision, "source");
  EXPECT_NE((*stager)->Report().reason.find("the store's own filesystem"), std::string::npos);
  EXPECT_TRUE((*stager)->MayStart(3, 4));
}

// bench/stage_sweep.sh with SOURCE=tmpfs: judging the first run alone cost 0.5-1.3 s over never in every round, for
// a copy that could never read faster than memory.
TEST_F(StagerTest, AutoLeavesADataSetInMemory) {
  if (!datastore::InMemoryAt("/dev/shm")) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
  std::string tmpl = "/dev/shm/saturate_test_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  struct Remove {
    std::string path;
    ~Remove() { fs::remove_all(path); }
  } shm{tmpl};
  fs::create_directories(shm.path + "/ds");
  std::ofstream(shm.path + "/ds/0") << "sample";
  struct stat a {}, b {};
  ASSERT_EQ(::stat(shm.path.c_str(), &a), 0);
  ASSERT_EQ(::stat(dir_.path().c_str(), &b), 0);
  if (a.st_dev == b.st_dev) GTEST_SKIP() << "the test folder is on /dev/shm's filesystem";
  options_.paths = {shm.path + "/ds"};
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager) << stager.error().message;
  EXPECT_EQ((*stager)->Report().decision, "source");
  EXPECT_NE((*stager)->Report().reason.find("the data is in memory"), std::string::npos) << (*stager)->Report().reason;
  EXPECT_TRUE((*stager)->MayStart(3, 4));
}

TEST_F(StagerTest, AutoMakesAShortCopyBeforeTheFirstRun) {
  // 45 ms a file on the mount, 0.2 ms from the store's drive, five small files: a copy of ~0.05 s. The cold reads
  // wait for the test's word, to see the first run held for them.
  std::atomic<bool> go{false};
  StagerSeams seams = OnFuseReading(45, 0.2);
  auto scripted = seams.cold_reads;
  seams.cold_reads = [&](const std::vector<std::string>& files, const datastore::ColdReadOptions& o) {
    while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return scripted(files, o);
  };
  auto stager = Stager::Start(options_, seams);
  ASSERT_TRUE(stager);
  Stager& s = **stager;
  auto note = s.Poll();
  ASSERT_TRUE(note && !*note);
  EXPECT_FALSE(s.MayStart(0, 0)) << "the first run waits for the cold reads";
  EXPECT_FALSE(s.HasNews());
  go = true;
  for (int i = 0; i < 400 && !s.HasNews(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(s.HasNews()) << "the cold reads are in: the controller acts on them without waiting for its tick";
  AwaitColdReads(s);
  EXPECT_NE(s.Report().reason.find("is made before the first run starts"), std::string::npos) << s.Report().reason;
  EXPECT_FALSE(s.MayStart(0, 0)) << "the first run waits for the short copy";
  note = Finish(s);
  ASSERT_TRUE(note && *note);
  EXPECT_EQ(s.Report().decision, "staged");
  EXPECT_FALSE(s.Undecided()) << "every run reads the copy: nothing is left to judge";
  EXPECT_TRUE(s.MayStart(3, 4));
  std::vector<std::string> argv = {dir_.File("ds")};
  std::map<std::string, std::string> env;
  EXPECT_TRUE(s.Rewrite(&argv, &env));
  EXPECT_TRUE(s.RestartDue());
  EXPECT_TRUE(s.Report().on_source.empty());
}

TEST_F(StagerTest, AutoCopiesAtOnceWhereTheColdReadsSayAndTheFirstRunConfirms) {
  // 45 ms a file on the mount, 0.2 ms from the store's drive: the copy begins before the first run is judged; a copy
  // longer than copy_first_s (here ~0.05 s against 0.01 s) is not waited for.
  options_.copy_first_s = 0.01;
  auto stager = Stager::Start(options_, OnFuseReading(45, 0.2));
  ASSERT_TRUE(stager);
  Stager& s = **stager;
  AwaitColdReads(s);
  EXPECT_NE(s.Report().reason.find("the copy began at once"), std::string::npos) << s.Report().reason;
  EXPECT_TRUE(s.Undecided());
  EXPECT_TRUE(s.MayStart(0, 0)) << "the first run starts on the source beside the copy";
  EXPECT_FALSE(s.MayStart(1, 1));
  auto note = Finish(s);
  ASSERT_TRUE(note && *note);
  EXPECT_EQ(s.Report().decision, "staged");
  EXPECT_FALSE(s.MayStart(1, 1)) << "staged, but the first run is not judged yet";
  EXPECT_FALSE(s.RestartDue());
  // The first seconds: 100% waiting at 3% of a core, never in 'D' (a direct-I/O FUSE mount): storage, confirmed.
  EXPECT_TRUE(s.Judge(Signals(1.0, 3.0, 2, 0.0, 0, 22), false));
  EXPECT_EQ(s.Report().decision, "staged");
  EXPECT_TRUE(s.MayStart(1, 1));
  EXPECT_TRUE(s.RestartDue());
  EXPECT_FALSE(s.RestartDue()) << "once";
  // The first run, 30 samples into its 800-sample epoch at 22 samples/s: restarted, at the copy's estimated rate.
  const RestartChoice choice = s.OnSource(0, "k0", RunProgress{30, 22, 800, 1.5});
  EXPECT_TRUE(choice.restart) << choice.why;
  EXPECT_NE(StagingText(s.Report()).find("run 0 (k0) was restarted on the copy (~35 s left on the source"),
            std::string::npos)
      << StagingText(s.Report());
  nlohmann::json j = StagingJson(s.Report());
  EXPECT_EQ(j["on_source"][0]["restarted"], true);
  EXPECT_EQ(StagingJson(*StagingFromJson(j)), j);
}

TEST_F(StagerTest, AutoStopsTheCopyBegunAtOnceWhenTheLoaderComputes) {
  // A copy begun at once, then the first run shows a loader busy at a full core: the copy is stopped.
  StagingOptions big = options_;
  big.copy_first_s = 0;  // judged on the first run, not waited for
  std::ofstream(dir_.File("ds/sub/big")) << std::string(32 << 20, 'x');  // long enough to be under way
  auto stager = Stager::Start(big, OnFuseReading(45, 0.2));
  ASSERT_TRUE(stager);
  Stager& s = **stager;
  AwaitColdReads(s);
  ASSERT_EQ(s.Report().decision, "copying");
  EXPECT_TRUE(s.Judge(Signals(0.7, 100.0, 2, 0.0, 0, 300), false));
  EXPECT_EQ(s.Report().decision, "source") << s.Report().reason;
  EXPECT_NE(s.Report().reason.find("its loader computes"), std::string::npos) << s.Report().reason;
  EXPECT_NE(s.Report().reason.find("the copy begun at once was stopped"), std::string::npos) << s.Report().reason;
  EXPECT_TRUE(s.MayStart(3, 4));
  std::vector<std::string> argv = {dir_.File("ds")};
  std::map<std::string, std::string> env;
  EXPECT_FALSE(s.Rewrite(&argv, &env));
  EXPECT_FALSE(s.RestartDue());
  auto note = s.Poll();
  ASSERT_TRUE(note) << "a stopped copy is no failure";
}

TEST_F(StagerTest, AutoReadsASampleColdAndJudgesWithIt) {
  StagerSeams seams = OnFuse();
  seams.mount = datastore::MountKind::kLocal;  // no copy at once
  seams.cold_reads = [](const std::vector<std::string>& files, datastore::ColdReadOptions o) {
    o.require_other_filesystem = false;  // the test folder is one filesystem
    return datastore::CompareColdReads(files, o);
  };
  auto stager = Stager::Start(options_, seams);
  ASSERT_TRUE(stager);
  // The same 'D' waits as above; the cold reads, once made, find the files read in well under a millisecond from
  // either place (one disk): storage, but a copy would save next to nothing.
  Stager& s = **stager;
  for (int i = 0; i < 500 && !s.Judge(Signals(0.9, 5.0, 2, 0.8, 0, 40), false); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(s.Report().decision, "source") << s.Report().reason;
  EXPECT_NE(s.Report().reason.find("a copy would not"), std::string::npos) << s.Report().reason;
  EXPECT_FALSE(fs::exists(dir_.File("store/ds")));
  for (const auto& entry : fs::directory_iterator(dir_.File("store"))) ADD_FAILURE() << "left " << entry.path();
}

TEST_F(StagerTest, AutoLeavesACpuBoundLoaderOnTheSource) {
  auto stager = Stager::Start(options_, OnFuse());
  ASSERT_TRUE(stager);
  EXPECT_TRUE((*stager)->Judge(Signals(0.7, 100.0, 2, 0.0, 0, 300), true));
  EXPECT_EQ((*stager)->Report().decision, "source");
  EXPECT_TRUE((*stager)->MayStart(3, 4));
  std::vector<std::string> argv = {dir_.File("ds"), "${stage:0}"};
  std::map<std::string, std::string> env;
  EXPECT_FALSE((*stager)->Rewrite(&argv, &env));
  EXPECT_EQ(argv[0], dir_.File("ds"));
  EXPECT_EQ(argv[1], dir_.File("ds"));
  EXPECT_EQ(env["SATURATE_STAGED_0"], dir_.File("ds"));
  EXPECT_FALSE(fs::exists(dir_.File("store")));
}

TEST_F(StagerTest, NeverCopiesNothing) {
  options_.policy = StagePolicy::kNever;
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager);
  EXPECT_TRUE((*stager)->MayStart(0, 0));
  EXPECT_TRUE((*stager)->MayStart(5, 9));
  EXPECT_EQ((*stager)->Report().decision, "source");
}

TEST_F(StagerTest, AMissingPathStopsTheSweepBeforeItsFirstRun) {
  options_.paths.push_back(dir_.File("nope"));
  auto stager = Stager::Start(options_);
  ASSERT_FALSE(stager);
  EXPECT_EQ(stager.error().exit_code, kExitUsage);
  EXPECT_EQ(stager.error().message, "stage path " + dir_.File("nope") + " does not exist");
}

TEST_F(StagerTest, AFailedCopyStopsAnAlwaysSweepAndLeavesAnAutoSweepOnTheSource) {
  // A store folder that is a file cannot hold copies.
  std::ofstream(dir_.File("blocker")) << "x";
  options_.dir = dir_.File("blocker");
  options_.policy = StagePolicy::kAlways;
  auto always = Stager::Start(options_);
  ASSERT_TRUE(always);
  auto failed = Finish(**always);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find(dir_.File("blocker")), std::string::npos) << failed.error().message;

  options_.policy = StagePolicy::kAuto;
  auto automatic = Stager::Start(options_);
  ASSERT_FALSE(automatic) << "auto looks for an existing copy first, in a store that cannot be one";
}

// Issue 45: what used to escape the copying thread (an abort, exit 134) is a staged copy, or a warning.
TEST_F(StagerTest, ANameThatIsNotUtf8AndAMalformedStoreEntryNeitherAbortTheSweep) {
  std::ofstream(dir_.File("ds/sub/\xff\xfe-latin1-\xe9.bin")) << "bytes that are no UTF-8 in the name";
  // A store of this user's, holding an entry whose "manifest" is a number.
  fs::create_directories(dir_.File("other"));
  std::ofstream(dir_.File("other/x")) << "x";
  datastore::StoreOptions store;
  store.root = options_.dir;
  ASSERT_TRUE(datastore::Acquire(dir_.File("other"), store));
  std::ofstream(options_.dir + "/planted-0123456789abcdef.json") << R"({"manifest": 5})";

  options_.policy = StagePolicy::kAlways;
  options_.cap_bytes = 1ull << 30;
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager) << stager.error().message;
  auto note = Finish(**stager);
  ASSERT_TRUE(note) << note.error().message;
  ASSERT_TRUE(*note);
  EXPECT_NE((*note)->find("warning: stage store: " + options_.dir + "/planted-0123456789abcdef.json is not a record"),
            std::string::npos)
      << **note;
  const StagingReport report = (*stager)->Report();
  EXPECT_EQ(report.decision, "staged");
  std::ifstream copied(report.sources.at(0).local + "/sub/\xff\xfe-latin1-\xe9.bin");
  std::string text;
  std::getline(copied, text);
  EXPECT_EQ(text, "bytes that are no UTF-8 in the name");

  // A second sweep finds the copy: the name went into the record and came back exactly.
  options_.policy = StagePolicy::kAuto;
  auto again = Stager::Start(options_);
  ASSERT_TRUE(again) << again.error().message;
  auto found = (*again)->Poll();
  ASSERT_TRUE(found && *found);
  EXPECT_TRUE((*again)->Report().sources.at(0).reused);
}

TEST_F(StagerTest, AStoreFolderThatIsNotAStoreStopsTheSweepAsAUsageError) {
  fs::create_directories(dir_.File("proj"));
  std::ofstream(dir_.File("proj/config.json")) << "{}";
  options_.dir = dir_.File("proj");
  auto automatic = Stager::Start(options_);
  ASSERT_FALSE(automatic);
  EXPECT_EQ(automatic.error().exit_code, kExitUsage);
  options_.policy = StagePolicy::kAlways;
  auto always = Stager::Start(options_);
  ASSERT_TRUE(always);
  auto failed = Finish(**always);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().exit_code, kExitUsage) << failed.error().message;
  EXPECT_TRUE(fs::exists(dir_.File("proj/config.json")));
}

TEST_F(StagerTest, ASigtermStopsTheCopyItself) {
  // The signal arrives while the sweep waits for its copy: the copy stops then (130), not only when the sweep ends.
  run::InstallInterruptHandlers();
  run::ClearInterrupt();
  raise(SIGTERM);
  options_.policy = StagePolicy::kAlways;
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager) << stager.error().message;
  auto stopped = Finish(**stager);
  run::ClearInterrupt();
  ASSERT_FALSE(stopped) << "the copy went on through SIGTERM";
  EXPECT_EQ(stopped.error().exit_code, kExitInterrupted) << stopped.error().message;
}

TEST(StagingOptionsJson, CarriesTheSettingsToASlurmJob) {
  StagingOptions o;
  o.paths = {"/nfs/ds"};
  o.policy = StagePolicy::kAlways;
  o.dir = "/scratch/me";
  o.cap_bytes = 5;
  o.verify_checksums = true;
  o.copy_first_s = 2.5;
  const StagingOptions back = StagingOptionsFromJson(StagingOptionsJson(o));
  EXPECT_EQ(back.paths, o.paths);
  EXPECT_EQ(back.policy, o.policy);
  EXPECT_EQ(back.dir, o.dir);
  EXPECT_EQ(back.cap_bytes, o.cap_bytes);
  EXPECT_TRUE(back.verify_checksums);
  EXPECT_EQ(back.copy_first_s, 2.5);
}

TEST(StagingReport, RoundTripsAndReads) {
  StagingReport r;
  r.policy = StagePolicy::kAuto;
  r.decision = "staged";
  r.reason = "the first run waited for data 80% of its loop time";
  r.store = "/cache";
  r.sources.push_back({"/nfs/ds", "/nfs/ds", "/cache/ds-1/ds", 1 << 20, 300, false, 3.5});
  r.progress.phase = datastore::Progress::Phase::kDone;
  r.copy_wall_s = 3.6;
  r.source_rate = 50;
  r.copy_rate = 400;
  r.saved_s = 120.4;
  auto back = StagingFromJson(StagingJson(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(StagingJson(*back), StagingJson(r));
  EXPECT_EQ(StagingText(r),
            "Staging: /nfs/ds (300 files, 1.0 MiB) copied to /cache/ds-1/ds; the copy took 3.6 s of the sweep (the "
            "first run waited for data 80% of its loop time); runs on the copy trained at 400 samples/s against 50.0 "
            "samples/s on the source (8.00×), about 120 s of makespan saved net of the copy\n");
  r.decision = "copying";
  r.progress = {datastore::Progress::Phase::kCopying, 1 << 19, 1 << 20, 150, 300, 2.0};
  EXPECT_EQ(StagingText(r),
            "Staging: copying 512 KiB of 1.0 MiB (150 of 300 files) at 256 KiB/s, ETA 2 s, to /cache; runs wait for "
            "the copy\n");
  EXPECT_FALSE(StagingFromJson(nlohmann::json{{"policy", "auto"}}));
}

}  // namespace
}  // namespace sat::sweep
