#include "tune/console.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tune/test_model.h"

namespace sat::tune {
namespace {

using ::testing::HasSubstr;

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

TEST(Console, RowsAndProgress) {
  TuneResult r = testing::ModelResult();
  std::vector<TrialRow> rows = TrialRows(r);
  ASSERT_EQ(rows.size(), r.search.trials.size());
  EXPECT_EQ(rows[0].settings, "workers=0 amp=off batch_size=64 preload=off (defaults)");
  EXPECT_EQ(rows[0].result, "ok");
  EXPECT_EQ(rows[0].interval, "±1%");

  const Trial& t = r.search.trials[3];
  std::vector<std::string> order = KnobOrder(r);
  TrialEvent start{true, t.id, &t.request, nullptr, 15, 30, 600, &order};
  EXPECT_THAT(ProgressLine(start), HasSubstr("(up to 15.0s)"));
  TrialEvent end{false, t.id, &t.request, &t, 15, 42, 600, &order};
  std::string line = ProgressLine(end);
  EXPECT_THAT(line, HasSubstr("trial   4"));
  EXPECT_THAT(line, HasSubstr("workers=1"));
  EXPECT_THAT(line, HasSubstr("[42.0s of 10m00s]"));
}

}  // namespace
}  // namespace sat::tune
