#include "sweep/html_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "sweep/journal.h"
#include "sweep/sweep_journal.h"
#include "util/test_dir.h"
#include "sweep/test_page.h"

namespace sat::sweep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = s.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

TEST(SweepReport, PathBesideTheJournal) {
  EXPECT_EQ(ReportPathFor("/x/sweep.journal"), "/x/sweep.report.html");
  EXPECT_EQ(ReportPathFor("/x/j.db"), "/x/j.db.report.html");
}

TEST(SweepReport, OutcomeOfAnAttempt) {
  AttemptRecord a;
  EXPECT_EQ(AttemptOutcomeName(a, false), "running");
  a.ended_unix = 1;
  for (auto [cls, later, want] : {std::tuple("finished", false, "done"), std::tuple("stopped_early", false, "early-stopped"),
                                  std::tuple("gpu_oom", false, "oom"), std::tuple("host_oom", true, "oom"),
                                  std::tuple("interrupted", true, "interrupted"), std::tuple("failed", true, "retried"),
                                  std::tuple("timed_out", false, "failed")}) {
    a.exit_class = cls;
    EXPECT_EQ(AttemptOutcomeName(a, later), want) << cls;
  }
}

TEST(SweepReport, LanesByDeviceOrNode) {
  AttemptRecord a;
  EXPECT_EQ(LaneOf(a, {}), "CPU pool");
  a.gpu_index = 3;
  EXPECT_EQ(LaneOf(a, {}), "GPU 3");
  a.slurm_job = "41_2";
  EXPECT_EQ(LaneOf(a, {}), "Slurm");
  EXPECT_EQ(LaneOf(a, [](const AttemptRecord&) { return std::string("gpu-07"); }), "node gpu-07");
}

TEST(SweepReport, OneBarPerAttemptAndTheTimings) {
  SweepPage p = testing::PackedSweep(40, 2, 2);
  std::string html = SweepHtml(p);
  EXPECT_EQ(Count(html, "<rect class=\"bar attempt"), p.attempts.size());
  EXPECT_EQ(Count(html, "class=\"bar attempt retried\""), 4u);  // runs 3, 13, 23, 33 failed once
  EXPECT_EQ(Count(html, "class=\"bar attempt oom\""), 1u);      // run 7
  EXPECT_GE(Count(html, "class=\"bar attempt early-stopped\""), 1u);
  EXPECT_THAT(html, HasSubstr(">GPU 0</text>"));
  EXPECT_THAT(html, HasSubstr(">GPU 1</text>"));
  EXPECT_THAT(html, HasSubstr("Packing over time"));
  EXPECT_THAT(html, HasSubstr("<table id=\"runs\" class=\"sortable\">"));
  EXPECT_THAT(html, HasSubstr("<th>loss (min)</th>"));
  EXPECT_THAT(html, Not(HasSubstr("nan")));
  EXPECT_THAT(html, Not(HasSubstr("http-equiv")));
  const SweepTiming t = TimingOf(p);
  EXPECT_EQ(t.attempts, static_cast<int>(p.attempts.size()));
  // Four slots run at once: the attempts one by one take about four times the makespan.
  EXPECT_GT(t.one_by_one_s / t.makespan_s, 3.0);
  EXPECT_LE(t.one_by_one_s / t.makespan_s, 4.0 + 1e-9);
  EXPECT_THAT(html, HasSubstr("class=\"makespan\""));
  p.live = true;
  EXPECT_THAT(SweepHtml(p), HasSubstr("http-equiv=\"refresh\""));
}

// A thousand runs stay a page a browser opens at once.
TEST(SweepReport, AThousandRunsStaySmall) {
  std::string html = SweepHtml(testing::PackedSweep(1000, 8, 2));
  EXPECT_EQ(Count(html, "<rect class=\"bar attempt"), 1100u);  // and every one of their attempts is drawn
  EXPECT_LT(html.size(), 2u * 1024 * 1024);
}

TEST(SweepReport, NoAttemptsYet) {
  SweepPage p = testing::PackedSweep(0, 1, 1);
  EXPECT_THAT(SweepHtml(p), HasSubstr("No attempt has started yet."));
}

// From a journal: the attempts on their lanes, the run retried, the device log's lanes.
TEST(SweepReport, ReadsTheJournalAndTheDeviceLog) {
  TempDir dir;
  const std::string path = dir.File("s.journal");
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal) << journal.error().message;
    std::vector<RunParams> plan = {{0, "k0", {{"lr", 0.1}}}, {1, "k1", {{"lr", 0.2}}}};
    ASSERT_TRUE((*journal)->EnsureRuns({"s.yaml", "h", 1, MetricSpec{"loss", Goal::kMinimize, std::nullopt}}, plan));
    AttemptOutcome ok{run::ExitClass::kFinished, 0, 0, "", false, false, false, ""};
    AttemptOutcome bad{run::ExitClass::kFailed, 1, 0, "exit code 1", false, false, false, "boom"};
    auto a0 = (*journal)->BeginAttempt("k0", 0, 1, dir.File("l0"));
    auto a1 = (*journal)->BeginAttempt("k1", 1, 2, dir.File("l1"));
    ASSERT_TRUE(a0 && a1);
    ASSERT_TRUE((*journal)->EndAttempt(*a0, ok, {{"loss", 0.5, 1, NowUnix()}}, {}, RetryPolicy{}));
    ASSERT_TRUE((*journal)->EndAttempt(*a1, bad, {}, {}, RetryPolicy{}));
    auto again = (*journal)->BeginAttempt("k1", 1, 3, dir.File("l1b"));
    ASSERT_TRUE(again);
    ASSERT_TRUE((*journal)->EndAttempt(*again, ok, {{"loss", 0.4, 1, NowUnix()}}, {}, RetryPolicy{}));
  }
  {
    auto log = DeviceLog::Open(LogDirFor(path), 0);
    ASSERT_TRUE(log);
    telemetry::Sample s;
    s.time_s = NowUnix();
    s.gpus.resize(1);
    s.gpus[0].index = 1;
    s.gpus[0].memory_used_bytes = 3ull << 30;
    s.gpus[0].util_gpu_pct = 55;
    (*log)->Add(s);
    std::ofstream(LogDirFor(path) + "/" + kDeviceLogFile, std::ios::app) << "{\"cut off\n";
  }
  auto page = ReadSweepPage(path);
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->attempts.size(), 3u);
  EXPECT_EQ(page->lanes, (std::vector<std::string>{"GPU 0", "GPU 1", "GPU 1"}));
  ASSERT_EQ(page->devices.size(), 1u);  // the cut-off line is skipped
  EXPECT_EQ(page->devices[0].device, "GPU 1");
  std::string html = SweepHtml(*page);
  EXPECT_EQ(Count(html, "<rect class=\"bar attempt"), 3u);
  EXPECT_EQ(Count(html, "class=\"bar attempt retried\""), 1u);
  EXPECT_THAT(html, HasSubstr("aria-label=\"GPU 1\""));  // its device lane
  // A journal that is not there is an error, not an empty page.
  EXPECT_FALSE(ReadSweepPage(dir.File("none.journal")));
}

}  // namespace
}  // namespace sat::sweep
