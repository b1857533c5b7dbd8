#include "sweep/staging.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "run/interrupt.h"
#include "util/test_dir.h"

namespace sat::sweep {
namespace {

namespace fs = std::filesystem;

// The first run's signals: its wait, CPU, processes and the machine's cores; then, where read, the processes in
// state 'D', its workers and its rate.
FetchSignals Signals(double wait, std::optional<double> cpu_pct, unsigned processes, unsigned cores,
                     std::optional<double> blocked = std::nullopt, double workers = 0, double samples_per_s = 0) {
  FetchSignals s;
  s.wait_share = wait;
  s.cpu_pct = cpu_pct;
  s.processes = processes;
  s.cores = cores;
  s.blocked = blocked;
  s.workers = workers;
  s.samples_per_s = samples_per_s;
  return s;
}

TEST(FetchBound, TheLoaderWaitingOffTheCpuIsStorage) {
  std::string why;
  // One process reading files from a slow mount: waits 80% of the time, 8% of a core busy.
  EXPECT_TRUE(FetchBound(Signals(0.8, 8.0, 1, 2), &why));
  EXPECT_NE(why.find("waits on storage"), std::string::npos) << why;
  // The same wait, one process decoding at a full core: the CPU side.
  EXPECT_FALSE(FetchBound(Signals(0.8, 98.0, 1, 2), &why));
  EXPECT_NE(why.find("computes"), std::string::npos) << why;
  // Five processes on two cores, both cores busy: computing, however many processes there are.
  EXPECT_FALSE(FetchBound(Signals(0.6, 190.0, 5, 2), &why));
  // Five processes on two cores mostly asleep: storage.
  EXPECT_TRUE(FetchBound(Signals(0.6, 30.0, 5, 2), &why));
  // A loader that keeps up is no reason to copy anything.
  EXPECT_FALSE(FetchBound(Signals(0.05, 3.0, 1, 2), &why));
  EXPECT_NE(why.find("keeps up"), std::string::npos) << why;
  EXPECT_FALSE(FetchBound(Signals(0.9, std::nullopt, 1, 2), &why));
}

TEST(FetchBound, WithTheProcessStatesTheLoadersTimeSplitsAsProbesDoes) {
  std::string why;
  // The trainer reads for itself, waiting for data 90% of its loop: 70% of its ticks in state 'D' is 78% of the
  // wait fetching, 22% preparing.
  EXPECT_TRUE(FetchBound(Signals(0.9, 30.0, 1, 2, 0.7, 0, 40), &why));
  EXPECT_NE(why.find("78% fetching"), std::string::npos) << why;
  EXPECT_NE(why.find("waits on storage"), std::string::npos) << why;
  // The same wait and CPU, never in 'D' (a loader waiting on a lock, a queue or a socket): the CPU rule alone would
  // have said storage; the states say otherwise.
  EXPECT_TRUE(FetchBound(Signals(0.9, 30.0, 1, 2), &why));
  EXPECT_FALSE(FetchBound(Signals(0.9, 30.0, 1, 2, 0.0, 0, 40), &why));
  EXPECT_NE(why.find("a copy would not help"), std::string::npos) << why;
  // Four workers on four cores, the trainer busy 40% of its loop: their CPU is 1.6 - 0.4 = 1.2 cores (30% each),
  // 2.4 of them in 'D' (60%): fetch binds.
  EXPECT_TRUE(FetchBound(Signals(0.6, 160.0, 5, 4, 2.4, 4, 900), &why));
  // The same workers with 3.8 cores busy (3.4 of them theirs: 85% each preparing) and 0.4 in 'D': prep binds.
  EXPECT_FALSE(FetchBound(Signals(0.6, 380.0, 5, 4, 0.4, 4, 900), &why));
  // Without a rate the split is not made: the CPU rule decides.
  EXPECT_TRUE(FetchBound(Signals(0.9, 30.0, 1, 2, 0.0, 0, 0), &why));
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
  StageOptions options_;
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

TEST_F(StagerTest, AutoLetsTheFirstRunJudgeAlone) {
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager) << stager.error().message;
  Stager& s = **stager;
  EXPECT_TRUE(s.Undecided());
  EXPECT_TRUE(s.MayStart(0, 0));
  EXPECT_FALSE(s.MayStart(1, 1)) << "a second run before the first is judged";
  EXPECT_FALSE(s.MayStart(0, 1)) << "the first run ended unjudged: the controller judges it at its end";

  s.Judge(Signals(0.9, 5.0, 1, 2));
  EXPECT_EQ(s.Report().decision, "copying");
  EXPECT_FALSE(s.MayStart(1, 1)) << "runs wait for the copy";
  auto note = Finish(s);
  ASSERT_TRUE(note && *note);
  EXPECT_TRUE(s.MayStart(1, 1));

  // A later sweep of the same data finds the copy at once and decides nothing.
  auto again = Stager::Start(options_);
  ASSERT_TRUE(again);
  auto found = (*again)->Poll();
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*again)->Report().decision, "staged");
  EXPECT_TRUE((*again)->Report().sources[0].reused);
}

TEST_F(StagerTest, AutoLeavesACpuBoundLoaderOnTheSource) {
  auto stager = Stager::Start(options_);
  ASSERT_TRUE(stager);
  (*stager)->Judge(Signals(0.7, 100.0, 1, 2));
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
  stage::StoreOptions store;
  store.root = options_.dir;
  ASSERT_TRUE(stage::Acquire(dir_.File("other"), store));
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

TEST(StageOptionsJson, CarriesTheSettingsToASlurmJob) {
  StageOptions o;
  o.paths = {"/nfs/ds"};
  o.policy = StagePolicy::kAlways;
  o.dir = "/scratch/me";
  o.cap_bytes = 5;
  o.verify_checksums = true;
  const StageOptions back = StageOptionsFromJson(StageOptionsJson(o));
  EXPECT_EQ(back.paths, o.paths);
  EXPECT_EQ(back.policy, o.policy);
  EXPECT_EQ(back.dir, o.dir);
  EXPECT_EQ(back.cap_bytes, o.cap_bytes);
  EXPECT_TRUE(back.verify_checksums);
}

TEST(StagingReport, RoundTripsAndReads) {
  StagingReport r;
  r.policy = StagePolicy::kAuto;
  r.decision = "staged";
  r.reason = "the first run waited for data 80% of its loop time";
  r.store = "/cache";
  r.sources.push_back({"/nfs/ds", "/nfs/ds", "/cache/ds-1/ds", 1 << 20, 300, false, 3.5});
  r.progress.phase = stage::Progress::Phase::kDone;
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
  r.progress = {stage::Progress::Phase::kCopying, 1 << 19, 1 << 20, 150, 300, 2.0};
  EXPECT_EQ(StagingText(r),
            "Staging: copying 512 KiB of 1.0 MiB (150 of 300 files) at 256 KiB/s, ETA 2 s, to /cache; runs wait for "
            "the copy\n");
  EXPECT_FALSE(StagingFromJson(nlohmann::json{{"policy", "auto"}}));
}

}  // namespace
}  // namespace sat::sweep
