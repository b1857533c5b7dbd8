// tune's orchestration (RunTune) on scripted stages (core::StageRunner): the baseline and the ceilings first, each
// trial's command, budget and logs, the confirmation, the trial cache, the budget's end, a trial too short for its
// steps, a trial that fails, a stage that cannot start, knobs given that the script lacks, a knob's own flag, and
// the trace run. No process starts: the command is no Python (tune/command_identity.h runs none for it) and every
// stage is scripted. The search's decisions are search_test.cc's; the stages' rules core/stage_rules_test.cc's; a
// real script's, tests/e2e/tune_*.sh's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/test_stages.h"
#include "measure/helper_env.h"
#include "tune/tune.h"
#include "util/test_dir.h"

namespace sat::tune {
namespace {

using core::StageKind;
using ::testing::HasSubstr;
using ::testing::Not;

// The knob values a stage was started with: the command's "--name N" options (placeholders and flags, filled)
// and the helper's SATURATE_KNOBS.
KnobValues KnobsOf(const core::StageOptions& o) {
  KnobValues values;
  for (size_t i = 0; i + 1 < o.argv.size(); ++i) {
    const std::string& word = o.argv[i];
    if (word.rfind("--", 0) != 0) continue;
    char* end = nullptr;
    const long long n = std::strtoll(o.argv[i + 1].c_str(), &end, 10);
    if (end == o.argv[i + 1].c_str() || *end != '\0') continue;
    std::string name = word.substr(2);
    std::replace(name.begin(), name.end(), '-', '_');
    values[name] = static_cast<int64_t>(n);
  }
  if (auto env = o.env.find(measure::kKnobsVar); env != o.env.end()) {
    const nlohmann::json helper = nlohmann::json::parse(env->second);
    for (const auto& [name, value] : helper.items()) values[name] = value;
  }
  return values;
}

struct Asked {
  StageKind kind;
  core::StageOptions options;
  KnobValues knobs;
  double start_s;  // on the runner's clock, from its start
};

// A training script as its stages measure it: `./train --batch-size N`, reading `workers` through the helper
// (its own default 1), its training DataLoader at train.py:57. The loader alone gives 600 samples/s a worker, the
// model alone 2400 b/(b+32), full training the lesser; each stage converges (±2%) in 10 s on a clock of its own.
class ScriptedTrainer : public core::StageRunner {
 public:
  int64_t fail_above = 1 << 30;  // batch sizes above this exit with code 1 outside loader-only runs
  std::string workers_flag;      // set: the script names its own option for workers (saturate.knob(..., flag=))
  // Changes the result of the `call`-th stage (from 0) before it comes back.
  std::function<void(int call, core::StageResult&)> adjust;
  std::optional<Error> cannot_start;  // every stage is saturate's own error
  std::vector<Asked> asked;

  double Now() override { return now_; }

  Result<core::StageResult> Run(StageKind kind, const core::StageOptions& o) override {
    const KnobValues knobs = KnobsOf(o);
    asked.push_back({kind, o, knobs, now_ - kStart});
    if (cannot_start) return *cannot_start;
    const int64_t batch = knobs.count("batch_size") ? knobs.at("batch_size").get<int64_t>() : 32;
    const int64_t workers = knobs.count("workers") ? knobs.at("workers").get<int64_t>() : 1;
    const double loader = 600.0 * static_cast<double>(std::max<int64_t>(1, workers));
    const double compute = 2400.0 * static_cast<double>(batch) / static_cast<double>(batch + 32);
    const double rate = kind == StageKind::kLoader ? loader : kind == StageKind::kCompute ? compute
                                                                                           : std::min(loader, compute);
    core::StageResult r = core::fixtures::Measured(kind, rate);
    r.wall_s = 10;
    r.knobs_seen["workers"] = workers;
    if (!workers_flag.empty()) r.knob_flags["workers"] = workers_flag;
    measure::LoaderInfo train_loader;
    train_loader.key = "train.py:57#0";
    train_loader.site = "train.py:57";
    r.loader = train_loader;
    if (kind != StageKind::kLoader && batch > fail_above) {
      r.estimate = {};
      r.outcome.exit_class = run::ExitClass::kFailed;
      r.outcome.detail = "exited with code 1: batch larger than the dataset";
      r.wall_s = 3;
    }
    if (adjust) adjust(static_cast<int>(asked.size()) - 1, r);
    r.kind = kind;
    r.log_dir = o.log_dir;
    r.wall_s = std::min(r.wall_s, o.budget_s);
    now_ += r.wall_s;
    return r;
  }

 private:
  static constexpr double kStart = 1000;
  double now_ = kStart;
};

// A folder for a tune's trial cache. SQLite waits for the disk at each trial the cache stores (15 ms on a shared
// virtual disk, and a tune stores tens): on the memory filesystem when the machine has one.
class TuneDir : public TempDir {
 public:
  TuneDir() : TempDir(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : testing::TempDir()) {}
};

// A tune of the scripted trainer's batch size and workers, with its trial cache in `dir`.
TuneOptions Options(const TuneDir& dir, double budget_s = 600) {
  TuneOptions o;
  o.session.argv = {"./train", "--batch-size", "{batch_size}"};
  o.knob_flags = {"batch_size=16:128", "workers=0:4"};
  o.budget_s = budget_s;
  o.cache_path = dir.File("tune.db");
  return o;
}

std::vector<std::string> Steps(const TuneResult& r) {
  std::vector<std::string> out;
  for (const Trial& t : r.search.trials) out.push_back(t.request.step);
  return out;
}

std::string Decisions(const TuneResult& r) {
  std::string out;
  for (const Decision& d : r.search.decisions) out += d.text + "\n";
  return out;
}

TEST(TuneRules, TheBaselineFirstThenTheLoaderAndComputeCeilingsAndTheConfirmationLast) {
  TuneDir dir;
  ScriptedTrainer stages;
  auto r = RunTune(Options(dir), nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_FALSE(r->search.failed) << r->search.failure;
  ASSERT_GE(stages.asked.size(), 4u);
  EXPECT_EQ(r->trials_run, static_cast<int>(stages.asked.size()));
  EXPECT_EQ(r->trials_cached, 0);
  // The baseline runs the script's own settings in full training: the placeholder's start, no helper knob sent.
  EXPECT_EQ(stages.asked[0].kind, StageKind::kFull);
  EXPECT_EQ(stages.asked[0].options.argv, (std::vector<std::string>{"./train", "--batch-size", "32"}));
  EXPECT_EQ(stages.asked[0].options.env.count(measure::kKnobsVar), 0u);
  EXPECT_EQ(stages.asked[1].kind, StageKind::kLoader);
  EXPECT_EQ(stages.asked[2].kind, StageKind::kCompute);
  EXPECT_EQ(r->search.baseline_trial, 1);
  EXPECT_EQ(r->search.loader_ceiling_trial, 2);
  EXPECT_EQ(r->search.compute_ceiling_trial, 3);
  EXPECT_EQ(Steps(*r)[1], "ceiling");
  // The first trial measures blind; every later one takes over the training DataLoader it found.
  EXPECT_EQ(stages.asked[0].options.auto_target, "");
  for (size_t i = 1; i < stages.asked.size(); ++i) EXPECT_EQ(stages.asked[i].options.auto_target, "train.py:57#0");
  // Each trial logs into a folder of its own, named by id and mode, and is labelled on the live page.
  EXPECT_EQ(std::filesystem::path(stages.asked[1].options.log_dir).filename().string(), "002-loader");
  EXPECT_THAT(stages.asked[2].options.live_labels,
              ::testing::Contains(std::pair<std::string, std::string>{"trial", "3"}));
  // Every trial may take a fifteenth of the budget (40 s), and the budget is counted on the runner's clock.
  for (const Asked& a : stages.asked) EXPECT_DOUBLE_EQ(a.options.budget_s, 40);
  EXPECT_DOUBLE_EQ(r->wall_s, 10.0 * static_cast<double>(stages.asked.size()));
  // The last trial confirms the recommendation in full training.
  EXPECT_EQ(stages.asked.back().kind, StageKind::kFull);
  EXPECT_EQ(Steps(*r).back(), "confirm");
  EXPECT_EQ(r->search.confirm_trial, static_cast<int>(stages.asked.size()));
  EXPECT_EQ(stages.asked.back().knobs.at("batch_size"), r->search.recommended.at("batch_size"));
  EXPECT_FALSE(r->budget_spent);
  EXPECT_THAT(r->stop_reason, HasSubstr("every step of the guided search ran"));
  EXPECT_THAT(r->recommended_command, HasSubstr("./train --batch-size 128"));
}

TEST(TuneRules, ASecondTuneTakesEveryTrialFromTheCacheUnlessFreshOrAnotherCommand) {
  TuneDir dir;
  ScriptedTrainer first_stages;
  auto first = RunTune(Options(dir), nullptr, &first_stages);
  ASSERT_TRUE(first) << first.error().message;

  ScriptedTrainer again_stages;
  std::vector<TrialEvent> events;
  TuneOptions o = Options(dir);
  o.on_event = [&](const TrialEvent& e) { events.push_back(e); };
  auto again = RunTune(o, nullptr, &again_stages);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again_stages.asked.empty()) << "a cached trial was run again";
  EXPECT_EQ(again->trials_cached, first->trials_run);
  EXPECT_EQ(again->trials_run, 0);
  EXPECT_EQ(again->search.recommended, first->search.recommended);
  EXPECT_EQ(Steps(*again), Steps(*first));
  for (const Trial& t : again->search.trials) EXPECT_TRUE(t.cached) << "trial " << t.id;
  // A cached trial is said once, as ended, with no start.
  ASSERT_EQ(events.size(), again->search.trials.size());
  for (const TrialEvent& e : events) EXPECT_FALSE(e.started);

  // With --fresh, or for another command line, every trial is measured again.
  for (bool fresh : {true, false}) {
    TuneOptions other = Options(dir);
    other.fresh = fresh;
    if (!fresh) other.session.argv.push_back("--seed=1");
    ScriptedTrainer other_stages;
    auto measured = RunTune(other, nullptr, &other_stages);
    ASSERT_TRUE(measured) << measured.error().message;
    EXPECT_EQ(measured->trials_cached, 0) << (fresh ? "--fresh" : "another command");
    EXPECT_EQ(other_stages.asked.size(), first_stages.asked.size());
  }
}

TEST(TuneRules, AShortBudgetStopsTheSearchForItsConfirmationAndASecondTuneResumes) {
  TuneDir dir;
  ScriptedTrainer stages;
  TuneOptions o = Options(dir, 70);
  o.trial_budget_s = 10;
  auto r = RunTune(o, nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->budget_spent);
  EXPECT_TRUE(r->search.kept_for_confirmation);
  EXPECT_LE(r->wall_s, o.budget_s);
  // Every trial had at least the least a trial may have, within what the budget had left.
  for (const Asked& a : stages.asked) {
    EXPECT_GE(a.options.budget_s, 6);
    EXPECT_LE(a.start_s + a.options.budget_s, o.budget_s);
  }
  // What was measured is kept: the confirmation of what the search had found ran last.
  EXPECT_EQ(Steps(*r).back(), "confirm");
  EXPECT_FALSE(r->search.recommended.empty());
  EXPECT_EQ(r->stop_reason, "the budget left after the search held only the confirmation run, which ran");

  // More time: the trials measured come from the cache and the search goes on to its end.
  ScriptedTrainer more_stages;
  auto more = RunTune(Options(dir), nullptr, &more_stages);
  ASSERT_TRUE(more) << more.error().message;
  // Every trial but the early confirmation, whose recommendation the longer search went past.
  EXPECT_EQ(more->trials_cached, r->trials_run - 1);
  EXPECT_FALSE(more->budget_spent);
  EXPECT_GT(more->search.trials.size(), r->search.trials.size());
}

TEST(TuneRules, ABudgetTooShortForOneTrialStartsNone) {
  TuneDir dir;
  ScriptedTrainer stages;
  auto r = RunTune(Options(dir, 8), nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(stages.asked.empty());
  EXPECT_TRUE(r->budget_spent);
  EXPECT_TRUE(r->search.failed);
  EXPECT_THAT(r->stop_reason, HasSubstr("nothing to tune: no trial could run"));
}

TEST(TuneRules, ATrialTooShortForItsStepsRunsAgainLongerWhenTheBudgetHoldsIt) {
  TuneDir dir;
  ScriptedTrainer stages;
  // The baseline's first run ends at its cap after a long start-up, with five steady steps 2 s apart.
  stages.adjust = [](int call, core::StageResult& s) {
    if (call != 0) return;
    s.estimate.converged = false;
    s.estimate.warmup_s = 2;
    s.estimate.steady_s = 10;
    s.totals.steps = 20;
    s.totals.samples = 20 * 32;
    s.estimate.samples_per_s = 16;
    s.wall_s = 1e9;  // to its cap
  };
  auto r = RunTune(Options(dir), nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_GE(stages.asked.size(), 2u);
  EXPECT_EQ(stages.asked[1].kind, StageKind::kFull);
  EXPECT_EQ(stages.asked[1].knobs, stages.asked[0].knobs);
  EXPECT_DOUBLE_EQ(stages.asked[0].options.budget_s, 40);
  EXPECT_GT(stages.asked[1].options.budget_s, 40) << "the trial runs again under a longer cap";
  // Every later trial keeps the longer cap; the baseline is the second run, and the report says why.
  EXPECT_DOUBLE_EQ(stages.asked[2].options.budget_s, stages.asked[1].options.budget_s);
  EXPECT_EQ(r->trials_run, static_cast<int>(stages.asked.size()));
  EXPECT_EQ(r->search.trials.size() + 1, stages.asked.size());
  EXPECT_THAT(r->search.warnings, ::testing::Contains(HasSubstr("trials now run up to")));
}

TEST(TuneRules, ATrialThatFailsIsRecordedAndTheSearchGoesOn) {
  TuneDir dir;
  ScriptedTrainer stages;
  stages.fail_above = 64;
  auto r = RunTune(Options(dir), nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_FALSE(r->search.failed) << r->search.failure;
  const auto failed = std::find_if(r->search.trials.begin(), r->search.trials.end(),
                                   [](const Trial& t) { return t.exit_class == run::ExitClass::kFailed; });
  ASSERT_NE(failed, r->search.trials.end());
  EXPECT_GT(failed->request.knobs.at("batch_size").get<int64_t>(), 64);
  EXPECT_LE(r->search.recommended.at("batch_size").get<int64_t>(), 64);
  EXPECT_EQ(Steps(*r).back(), "confirm");
  EXPECT_THAT(Decisions(*r), HasSubstr("batch larger than the dataset"));
}

TEST(TuneRules, ABaselineThatFailsLeavesNothingToTune) {
  TuneDir dir;
  ScriptedTrainer stages;
  stages.fail_above = 0;
  auto r = RunTune(Options(dir), nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(stages.asked.size(), 1u) << "no ceiling without a baseline";
  EXPECT_TRUE(r->search.failed);
  EXPECT_THAT(r->stop_reason, HasSubstr("nothing to tune: the baseline run failed"));
  EXPECT_TRUE(r->recommended_command.empty());
}

TEST(TuneRules, AStageThatCannotStartIsSaturatesOwnError) {
  TuneDir dir;
  ScriptedTrainer stages;
  stages.cannot_start = Error{"cannot open the helper channel"};
  auto r = RunTune(Options(dir), nullptr, &stages);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "cannot open the helper channel");
  EXPECT_EQ(stages.asked.size(), 1u);
}

TEST(TuneRules, AKnobWithNoRangeIsAUsageErrorBeforeAnyStage) {
  TuneDir dir;
  ScriptedTrainer stages;
  TuneOptions o = Options(dir);
  o.knob_flags.push_back("lr");
  auto r = RunTune(o, nullptr, &stages);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("--knob lr needs a range"));
  // A placeholder the knobs do not name either.
  o = Options(dir);
  o.session.argv.push_back("--lr={lr}");
  r = RunTune(o, nullptr, &stages);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("--knob lr=LO:HI"));
  EXPECT_TRUE(stages.asked.empty());
}

TEST(TuneRules, AKnobTheScriptDoesNotReadIsSkippedAndNeverSent) {
  TuneDir dir;
  ScriptedTrainer stages;
  TuneOptions o = Options(dir);
  o.knob_flags.push_back("preload");
  auto r = RunTune(o, nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  const auto preload = std::find_if(r->search.knobs.begin(), r->search.knobs.end(),
                                    [](const KnobState& k) { return k.spec.name == "preload"; });
  ASSERT_NE(preload, r->search.knobs.end());
  EXPECT_FALSE(preload->exposed);
  EXPECT_THAT(preload->note, HasSubstr("the script does not expose it"));
  for (const Asked& a : stages.asked) EXPECT_EQ(a.knobs.count("preload"), 0u);
  EXPECT_THAT(r->recommended_command, Not(HasSubstr("preload")));
}

TEST(TuneRules, AKnobsOwnFlagThatTheScriptDidNotListIsWrittenAsAnOption) {
  TuneDir dir;
  ScriptedTrainer stages;
  // saturate.knob("workers", 1, flag="--workers"), but no `flags` message lists --workers: it takes a value.
  stages.workers_flag = "--workers";
  auto r = RunTune(Options(dir), nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  bool by_flag = false;
  for (size_t i = 1; i < stages.asked.size(); ++i) {
    const core::StageOptions& s = stages.asked[i].options;
    EXPECT_EQ(s.env.count(measure::kKnobsVar), 0u) << "stage " << i << " sent workers through the helper";
    by_flag = by_flag || std::find(s.argv.begin(), s.argv.end(), "--workers") != s.argv.end();
  }
  EXPECT_TRUE(by_flag);
  // The recommendation is the user's own command line, runnable without saturate.
  EXPECT_EQ(r->recommended_command, "./train --batch-size 128 --workers 4");
}

TEST(TuneRules, TheTraceRunComesLastInFullTrainingOfTheRecommendation) {
  TuneDir dir;
  ScriptedTrainer stages;
  TuneOptions o = Options(dir);
  o.trace = true;
  o.out_dir = dir.File("out");
  auto r = RunTune(o, nullptr, &stages);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->trials_run + 1, static_cast<int>(stages.asked.size()));
  const Asked& trace = stages.asked.back();
  EXPECT_EQ(trace.kind, StageKind::kFull);
  EXPECT_TRUE(trace.options.stop_after_trace);
  EXPECT_EQ(std::filesystem::path(trace.options.trace_path).parent_path(),
            std::filesystem::path(o.out_dir).lexically_normal());
  EXPECT_EQ(trace.knobs.at("batch_size"), r->search.recommended.at("batch_size"));
  EXPECT_EQ(trace.options.auto_target, "train.py:57#0");
  for (size_t i = 0; i + 1 < stages.asked.size(); ++i) EXPECT_EQ(stages.asked[i].options.trace_path, "");
  ASSERT_TRUE(r->trace);
  EXPECT_FALSE(r->trace->error.empty()) << "the scripted run wrote no trace";
}

}  // namespace
}  // namespace sat::tune
