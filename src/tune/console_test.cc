#include "tune/console.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tune/test_model.h"

namespace sat::tune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Console, ReportShowsTableReasonsAndTheCommand) {
  TuneResult r = testing::ModelResult();
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("saturate tune (guided)"));
  EXPECT_THAT(text, HasSubstr("samples/s"));
  EXPECT_THAT(text, HasSubstr("Why:"));
  EXPECT_THAT(text, HasSubstr("unblock"));
  EXPECT_THAT(text, HasSubstr("Recommended: workers=7 amp=bf16 batch_size=256 preload=on"));
  EXPECT_THAT(text, HasSubstr(r.recommended_command));
  EXPECT_THAT(text, HasSubstr("Fastest:     workers=7 amp=bf16 batch_size=300 preload=on"));
  EXPECT_THAT(text, HasSubstr("Largest batch that fits: workers=7 amp=bf16 batch_size=300"));
  EXPECT_THAT(text, HasSubstr("This configuration needs 2 CPU cores"));
  EXPECT_THAT(text, HasSubstr("gpu_oom"));
}

TEST(Console, ListsSkippedKnobs) {
  testing::ScriptModel model;
  model.exposes = {"batch_size"};
  std::string text = ConsoleReport(testing::ModelResult(model));
  EXPECT_THAT(text, HasSubstr("Knobs:\n  - workers: skipped: the script does not expose it"));
}

TEST(Console, SaysWhichKnobsWereInjectedAndTheCodeChange) {
  testing::ScriptModel model;
  model.automatic = true;
  model.exposes = {"batch_size", "workers", "amp"};
  TuneResult r = testing::ModelResult(model);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("Recommended: workers=7 amp=bf16 batch_size=256"));
  EXPECT_THAT(text, HasSubstr("\n  /usr/bin/python3 train.py --data '/tmp/a b'\n"));
  EXPECT_THAT(text, Not(HasSubstr("SATURATE_KNOBS")));
  EXPECT_THAT(text, HasSubstr("Injected by saturate (the script has no flag for them): workers, amp, batch_size."));
  EXPECT_THAT(text, HasSubstr("  - DataLoader at train.py:57: DataLoader(..., num_workers=7, batch_size=256)\n"));
  EXPECT_THAT(text, HasSubstr(R"(  - around the model's forward: with torch.autocast("cpu", dtype=torch.bfloat16):)"));
}

TEST(Console, MarksTrialsThatDoNotCount) {
  TuneResult r = testing::ModelResult();
  Trial t = r.search.trials[0];
  t.too_slow = true;
  EXPECT_EQ(MakeRow(t, {}).result, "too slow to measure in this budget");
  t = r.search.trials[0];
  t.steady_steps = 5;
  t.converged = false;
  EXPECT_EQ(MakeRow(t, {}).result, "ok, does not count");
  t = r.search.trials[0];
  t.converged = false;
  EXPECT_EQ(MakeRow(t, {}).result, "ok, not converged");
  t = r.search.trials[0];
  t.knob_errors["workers"] = "x";
  t.request.knobs["workers"] = 2;
  EXPECT_EQ(MakeRow(t, {}).result, "knob not applied");
}

TEST(Console, SaysWhenTheFastestBatchCannotBeToldFromTheRecommended) {
  EXPECT_THAT(ConsoleReport(testing::ModelResult()), HasSubstr("not distinguishable from the recommended batch"));
  testing::ScriptModel model;
  model.compute_peak = 2000;
  model.oom_above = 64;  // batch 64 fits, 128 does not: 64 is both the fastest and the recommendation
  EXPECT_THAT(ConsoleReport(testing::ModelResult(model)), Not(HasSubstr("not distinguishable from the recommended")));
}

TEST(Console, RowsAndProgress) {
  TuneResult r = testing::ModelResult();
  std::vector<TrialRow> rows = TrialRows(r);
  ASSERT_EQ(rows.size(), r.search.trials.size());
  EXPECT_EQ(rows[0].settings, "workers=0 amp=off batch_size=64 preload=off (defaults)");
  EXPECT_EQ(rows[0].result, "ok");
  EXPECT_EQ(rows[0].interval, "±1%");

  const Trial& t = r.search.trials[3];
  std::vector<std::string> order = KnobOrder(r);
  TrialEvent start{true, t.id, &t.request, nullptr, 15, 30, 600, &order, ""};
  EXPECT_THAT(ProgressLine(start), HasSubstr("(up to 15.0s)"));
  TrialEvent end{false, t.id, &t.request, &t, 15, 42, 600, &order, ""};
  std::string line = ProgressLine(end);
  EXPECT_THAT(line, HasSubstr("trial   4"));
  EXPECT_THAT(line, HasSubstr("workers=1"));
  EXPECT_THAT(line, HasSubstr("[42.0s of 10m00s]"));
  TrialEvent again{false, t.id, &t.request, &t, 15, 42, 600, &order, "too few steady steps: again, up to 98s"};
  EXPECT_THAT(ProgressLine(again), HasSubstr("too few steady steps: again, up to 98s"));
}

}  // namespace
}  // namespace sat::tune
