// probe's orchestration (RunProbe) on scripted stages (core::StageRunner): the order of the stages, how the budget
// is split, what the loader and compute stages aim at, when they are skipped and why, and what is kept of the logs.
// The stages themselves are tested in core/stage_rules_test.cc and, on real scripts, by tests/e2e/probe_*.sh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "core/test_stages.h"
#include "probe/probe.h"
#include "util/test_dir.h"

namespace sat::probe {
namespace {

using core::StageKind;
using core::fixtures::Measured;
using ::testing::HasSubstr;

// Returns a scripted result per stage kind and moves its clock by each stage's wall time; records what each stage
// was asked to do.
class ScriptedStages : public core::StageRunner {
 public:
  std::map<StageKind, core::StageResult> results;
  std::vector<std::pair<StageKind, core::StageOptions>> asked;

  double Now() override { return now_; }
  Result<core::StageResult> Run(StageKind kind, const core::StageOptions& o) override {
    asked.emplace_back(kind, o);
    core::StageResult r = results.count(kind) ? results.at(kind) : Measured(kind, 100);
    r.kind = kind;
    r.log_dir = o.log_dir;
    // A stage takes its whole budget unless its script says less.
    double took = r.wall_s > 0 ? std::min(r.wall_s, o.budget_s) : o.budget_s;
    r.wall_s = took;
    now_ += took;
    return r;
  }
  const core::StageOptions* For(StageKind kind) const {
    for (const auto& [k, o] : asked) {
      if (k == kind) return &o;
    }
    return nullptr;
  }

 private:
  double now_ = 500;
};

// The full stage as the automatic instrumentation reports it: the training DataLoader built at train.py:57.
core::StageResult AutoFull(double rate, double wall_s) {
  core::StageResult s = Measured(StageKind::kFull, rate);
  s.auto_seen = true;
  measure::LoaderInfo loader;
  loader.key = "train.py:57#0";
  loader.site = "train.py:57";
  loader.num_workers = 2;
  s.loader = loader;
  s.wall_s = wall_s;
  return s;
}

ProbeOptions Options(double budget_s) {
  ProbeOptions o;
  o.session.argv = {"python3", "train.py"};
  o.budget_s = budget_s;
  return o;
}

TEST(ProbeRules, TheFullStageFirstThenTheLoaderAndComputeSplitWhatIsLeft) {
  ScriptedStages stages;
  stages.results[StageKind::kFull] = AutoFull(900, 30);
  core::StageResult loader = Measured(StageKind::kLoader, 2000);
  loader.wall_s = 20;
  stages.results[StageKind::kLoader] = loader;
  auto r = RunProbe(Options(120), nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(stages.asked.size(), 3u);
  EXPECT_EQ(stages.asked[0].first, StageKind::kFull);
  EXPECT_EQ(stages.asked[1].first, StageKind::kLoader);
  EXPECT_EQ(stages.asked[2].first, StageKind::kCompute);
  // The full stage may use 40% of the budget (it took 30 s); the loader half of what is left (it took 20 s),
  // the compute stage all the rest.
  EXPECT_DOUBLE_EQ(stages.asked[0].second.budget_s, 48);
  EXPECT_DOUBLE_EQ(stages.asked[1].second.budget_s, 45);
  EXPECT_DOUBLE_EQ(stages.asked[2].second.budget_s, 70);
  // Only the full stage may run past its budget when short of steady data, by up to 20% of the whole.
  EXPECT_DOUBLE_EQ(stages.asked[0].second.grace_s, 24);
  EXPECT_DOUBLE_EQ(stages.asked[1].second.grace_s, 0);
  EXPECT_DOUBLE_EQ(stages.asked[2].second.grace_s, 0);
  EXPECT_NEAR(r->wall_s, 30 + 20 + 14.2, 1e-9);  // the compute stage took its scripted 14.2 s
  EXPECT_TRUE(r->loader.ran && r->compute.ran);
  EXPECT_TRUE(r->helper && r->auto_instrumented);
}

TEST(ProbeRules, AShortBudgetStillGivesTheFullStageItsLeastTime) {
  ScriptedStages stages;
  stages.results[StageKind::kFull] = AutoFull(900, 5);
  ASSERT_TRUE(RunProbe(Options(10), nullptr, &stages));
  EXPECT_DOUBLE_EQ(stages.asked[0].second.budget_s, 8);  // max(8, 40% of 10)
}

TEST(ProbeRules, TheLoaderAndComputeStagesTakeOverTheLoaderTheFullStageFound) {
  ScriptedStages stages;
  stages.results[StageKind::kFull] = AutoFull(900, 20);
  ASSERT_TRUE(RunProbe(Options(120), nullptr, &stages));
  EXPECT_EQ(stages.For(StageKind::kFull)->auto_target, "");
  EXPECT_EQ(stages.For(StageKind::kLoader)->auto_target, "train.py:57#0");
  EXPECT_EQ(stages.For(StageKind::kCompute)->auto_target, "train.py:57#0");
  // Each stage logs into a folder of its own and is labelled on the live page.
  EXPECT_THAT(stages.For(StageKind::kLoader)->log_dir, HasSubstr("loader"));
  EXPECT_EQ(stages.For(StageKind::kCompute)->live_labels.back(),
            (std::pair<std::string, std::string>{"stage", "compute"}));
}

TEST(ProbeRules, TheLoaderStageMayStopOnceItIsTenTimesTheFullRate) {
  ScriptedStages stages;
  stages.results[StageKind::kFull] = AutoFull(900, 20);
  ASSERT_TRUE(RunProbe(Options(120), nullptr, &stages));
  ASSERT_TRUE(stages.For(StageKind::kLoader)->stop_above);
  EXPECT_DOUBLE_EQ(stages.For(StageKind::kLoader)->stop_above->rate, 9000);
  EXPECT_DOUBLE_EQ(stages.For(StageKind::kLoader)->stop_above->max_rel_half_width, 0.1);
  EXPECT_FALSE(stages.For(StageKind::kFull)->stop_above);
  EXPECT_FALSE(stages.For(StageKind::kCompute)->stop_above) << "the compute ceiling is compared closely";
  // A full stage without enough steady data gives no rate to stop above.
  ScriptedStages short_full;
  core::StageResult full = AutoFull(900, 20);
  full.estimate.steady_s = 1;
  full.estimate.n_batches = 2;
  short_full.results[StageKind::kFull] = full;
  ASSERT_TRUE(RunProbe(Options(120), nullptr, &short_full));
  EXPECT_FALSE(short_full.For(StageKind::kLoader)->stop_above);
}

TEST(ProbeRules, WithoutReportsOnlyTheFullStageRunsAndSaysWhy) {
  ScriptedStages stages;
  core::StageResult silent;
  silent.ran = true;
  silent.wall_s = 20;
  silent.torch_loaded = false;
  stages.results[StageKind::kFull] = silent;
  auto r = RunProbe(Options(60), nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_EQ(stages.asked.size(), 1u);
  EXPECT_FALSE(r->loader.ran);
  EXPECT_THAT(r->loader.skipped_why, HasSubstr("never imported torch"));
  EXPECT_EQ(r->compute.skipped_why, r->loader.skipped_why);
}

TEST(ProbeRules, AParsePatternGivesTheFullStageTheWholeBudget) {
  ScriptedStages stages;
  core::StageResult parsed = Measured(StageKind::kFull, 300);
  parsed.helper_seen = false;
  parsed.parsed_lines = true;
  stages.results[StageKind::kFull] = parsed;
  ProbeOptions o = Options(60);
  o.session.parse = "tqdm";
  auto r = RunProbe(o, nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(stages.asked[0].second.budget_s, 60);
  EXPECT_DOUBLE_EQ(stages.asked[0].second.grace_s, 0);  // the whole budget already
  EXPECT_FALSE(stages.asked[0].second.auto_instrument);
  EXPECT_TRUE(r->parse);
  EXPECT_FALSE(r->auto_enabled);
  EXPECT_THAT(r->loader.skipped_why, HasSubstr("--parse"));
}

TEST(ProbeRules, AFailedFullRunSkipsTheOtherStages) {
  ScriptedStages stages;
  core::StageResult failed = AutoFull(0, 4);
  failed.estimate.samples_per_s = 0;
  failed.outcome.exit_class = run::ExitClass::kGpuOom;
  stages.results[StageKind::kFull] = failed;
  auto r = RunProbe(Options(60), nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_EQ(stages.asked.size(), 1u);
  EXPECT_EQ(r->loader.skipped_why, "the full run failed");
  EXPECT_TRUE(r->verdict.failed);
  // Without --out the failed run's logs are kept, and named.
  ASSERT_FALSE(r->kept_log_dir.empty());
  EXPECT_TRUE(std::filesystem::is_directory(r->kept_log_dir));
  std::filesystem::remove_all(r->kept_log_dir);
}

TEST(ProbeRules, AStepWithoutADataLoaderSkipsBothWithTheReason) {
  ScriptedStages stages;
  core::StageResult full = AutoFull(900, 20);
  full.loader->key.reset();  // the step had no DataLoader
  full.loader->site.reset();
  stages.results[StageKind::kFull] = full;
  auto r = RunProbe(Options(120), nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_EQ(stages.asked.size(), 1u);
  EXPECT_THAT(r->loader.skipped_why, HasSubstr("nothing to drain"));
  EXPECT_THAT(r->compute.skipped_why, HasSubstr("already measures the model"));
}

TEST(ProbeRules, ALoaderStageThatFindsNoDataLoaderSkipsTheComputeStageToo) {
  ScriptedStages stages;
  stages.results[StageKind::kFull] = AutoFull(900, 20);
  core::StageResult none = Measured(StageKind::kLoader, 50);
  none.no_loader = true;
  none.wall_s = 3;
  stages.results[StageKind::kLoader] = none;
  auto r = RunProbe(Options(120), nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_EQ(stages.asked.size(), 2u);
  EXPECT_FALSE(r->loader.ran);
  EXPECT_THAT(r->loader.skipped_why, HasSubstr("nothing to drain"));
  EXPECT_THAT(r->compute.skipped_why, HasSubstr("already measures the model"));
}

TEST(ProbeRules, AFullStageThatUsesTheBudgetLeavesTheOthersSkipped) {
  ScriptedStages stages;
  stages.results[StageKind::kFull] = AutoFull(900, 60);
  core::StageResult long_loader = Measured(StageKind::kLoader, 2000);
  stages.results[StageKind::kLoader] = long_loader;
  // 30 s: the full stage takes 12 s, the loader 9 of the 18 left, the compute stage then has 9 >= 6.5 s.
  auto r = RunProbe(Options(30), nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->compute.ran);
  // 20 s: the full stage takes its least 8 s; the loader's half of the 12 s left is under 8 s, so it is skipped
  // and the compute stage gets all 12.
  ScriptedStages mid_stages;
  mid_stages.results[StageKind::kFull] = AutoFull(900, 60);
  auto m = RunProbe(Options(20), nullptr, &mid_stages);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->loader.skipped_why, "the budget was spent");
  ASSERT_EQ(mid_stages.asked.size(), 2u);
  EXPECT_DOUBLE_EQ(mid_stages.asked[1].second.budget_s, 12);
  // 12 s: 4 s left after the full stage, under what either stage needs.
  ScriptedStages short_stages;
  short_stages.results[StageKind::kFull] = AutoFull(900, 60);
  auto s = RunProbe(Options(12), nullptr, &short_stages);
  ASSERT_TRUE(s);
  EXPECT_EQ(short_stages.asked.size(), 1u);
  EXPECT_EQ(s->loader.skipped_why, "the budget was spent");
  EXPECT_EQ(s->compute.skipped_why, "the budget was spent");
}

TEST(ProbeRules, ATraceIsAskedOfTheFullStageOnly) {
  ScriptedStages stages;
  core::StageResult full = AutoFull(900, 20);
  measure::TraceInfo trace;
  trace.path = "/nonexistent/trace.json";
  trace.steps = 5;
  full.trace = trace;
  stages.results[StageKind::kFull] = full;
  TempDir out;
  ProbeOptions o = Options(120);
  o.out_dir = out.path();
  o.trace = true;
  auto r = RunProbe(o, nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_THAT(stages.For(StageKind::kFull)->trace_path, HasSubstr("trace"));
  EXPECT_EQ(stages.For(StageKind::kLoader)->trace_path, "");
  EXPECT_EQ(stages.For(StageKind::kCompute)->trace_path, "");
  ASSERT_TRUE(r->trace);
  // With --out the stages' logs stay; probe.json and report.html are the caller's to write (outputs.h).
  EXPECT_THAT(r->full.log_dir, HasSubstr(out.path()));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(out.path()) / "probe.json"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(out.path()) / "report.html"));
}

TEST(ProbeRules, WithoutOutAProbeThatDidNotFailLeavesNothingBehind) {
  ScriptedStages stages;
  stages.results[StageKind::kFull] = AutoFull(900, 20);
  auto r = RunProbe(Options(120), nullptr, &stages);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->kept_log_dir.empty());
  EXPECT_EQ(r->full.log_dir, "");
  const std::string full_dir = stages.For(StageKind::kFull)->log_dir;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(full_dir).parent_path()));
}

}  // namespace
}  // namespace sat::probe
