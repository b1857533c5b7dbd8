// The guided search's state and steps, shared by the files that implement them (not part of the module's
// interface; see search.h for the contract):
//   search.cc          trial bookkeeping, the baseline and the ceilings, confirmation, grid, the conclusion;
//   search_workers.cc  step 2, the worker count (loader-only scan against the compute ceiling);
//   search_compute.cc  steps 3 and 4, mixed precision and batch size (compute mode);
//   search_full.cc     step 5, full training: the workers, the knobs only it measures, the contested batch sizes;
//   search_plan.cc     the budget plan: each step's first trials reserved, a share of the rest for refinements.
// Every comparison between measurements goes through compare.h. One Search object runs one search on the
// caller's thread.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tune/budget_plan.h"
#include "tune/search.h"

namespace sat::tune::internal {

// Repeats of a measurement: 1 is the confirmation; from 2 on, runs again of one that did not settle.
inline constexpr int kFirstAgainRepeat = 2;

// Batch sizes whose compute-mode estimate lies within this share of the compute-fastest are run in full training
// before the batch is settled (Search::ConfirmBatch): compute mode cannot rank them reliably, and full training is
// what the user gets.
inline constexpr double kContested = 0.10;
// At most this many batch sizes besides the chosen one are run in full training for that check.
inline constexpr int kMaxContestedRuns = 3;
// Two readings of the same settings that differ by more than this share, beyond both intervals, say that the
// machine's speed moved between them (Search::BackToBack); two that do not, twice and never otherwise, that the machine
// is steady, and later decisions rest on one reading each.
inline constexpr double kMoved = 0.05;
inline constexpr int kSteadyChecks = 2;
// Two full-training readings of the same settings that differ by more than this share, beyond both intervals, say
// that the machine's speed moved during the search (Search::MachineDrift).
inline constexpr double kMachineDrift = 0.20;

class Search {
 public:
  Search(const SearchOptions& o, const TrialFn& fn);
  SearchOutcome Run();

 private:
  // ---- trials (search.cc) ----
  // The trial for this request: an earlier identical one, or a new one (run once more when it did not settle,
  // and then the later run). Null once the search has stopped.
  const Trial* Measure(core::StageKind mode, const KnobValues& knobs, const std::string& step, int repeat = 0);
  const Trial* Run(const TrialRequest& request);  // a new trial; null once the search has stopped
  void CheckKnobsTaken(const Trial& t);
  // Knobs delivered by the script's own options (Delivery::kFlag) go into the command, not SATURATE_KNOBS.
  void AddFlags(TrialRequest& request) const;
  const Trial* Find(std::optional<int> id) const;  // the outcome's list is filled only at the end
  void Decide(const std::string& step, std::string text, std::vector<int> trials = {});
  KnobState* State(const std::string& name);
  const KnobSpec* Exposed(KnobRole role) const;
  KnobValues With(const std::string& name, const KnobValue& v) const;
  std::vector<std::string> KnobOrder() const;
  // Loader and compute modes need the helper; without it every measurement is full training.
  core::StageKind LoaderMode() const;
  core::StageKind ComputeMode() const;
  bool Fits(const Trial& t) const;
  // Memory is far from the limit at this trial's batch: no GPU, or a GPU's peak under a quarter of `mem_target`.
  bool MemoryNotTheLimit(const Trial& t) const;
  // Both ceilings were measured and the loader alone is distinguishably faster than the model alone.
  bool LoaderKeepsUp() const;
  // No loader workers, and full training distinguishably below (1 - loader_margin) of the smaller ceiling: the
  // loader and the model take turns in one process, so workers (which overlap them) pay whichever is faster.
  bool LoadsInLine() const;
  const char* Engine() const { return o_.gpu ? "the GPU" : "the model"; }

  // ---- steps ----
  void Baseline();                          // search.cc
  void Discover(const Trial& baseline);     // search.cc
  void ProveFlags();                        // search.cc
  void Ceilings();                          // search.cc
  void Workers();                           // search_workers.cc
  void Amp();                               // search_compute.cc
  void Batch();                             // search_compute.cc
  void Full();                              // search_full.cc
  const Trial* ConfirmWorkers(const Trial* current);  // search_full.cc
  const Trial* ConfirmBatch(const Trial* current);    // search_full.cc
  void Confirm();                           // search.cc
  // The best configuration measured in full training other than the baseline's and `rejected`, faster than the
  // baseline by its estimate: what the confirmation tries when the recommendation confirmed slower. Null: none.
  const Trial* RunnerUp(const Trial& base, const KnobValues& rejected) const;
  // Why the confirmation `confirm` and the search's last full-training reading of the same settings say that the
  // machine's speed moved during the search; empty where they agree.
  std::string MachineDrift(const Trial& confirm) const;
  // Why two full-training readings of the same settings, `later` taken `when` ("in the confirmation"), say that the
  // machine's speed moved: both count, they are distinguishable, and apart by more than kMachineDrift; else empty.
  std::string MachineMoved(const Trial& earlier, const Trial& later, const std::string& when) const;
  // The baseline measured again right after the confirmation `confirm` (step 6), its first reading `base`: the
  // reading when it counts, else null (the budget held no run, or it failed or did not count).
  const Trial* BaselineAgain(const Trial& confirm, const Trial& base);
  // Adds MachineMoved's `text` to the warnings, unless it is empty or the machine's moving was said already (once,
  // whichever pair of readings showed it first).
  void WarnMachineMoved(const std::string& text);
  // "Confirmed: the recommendation trains at ..., 1.52x the baseline's ..." for a confirmation not slower than
  // the baseline.
  std::string ConfirmedText(const Trial& confirm, const Trial& base) const;
  void Grid();                              // search.cc
  void Conclude();                          // search.cc

  // ---- readings back to back (search_paired.cc) ----
  // The readings a decision rests on, and what was measured again for it.
  struct Pair {
    const Trial* incumbent = nullptr;
    const Trial* challenger = nullptr;
    bool undecided = false;  // the readings disagree and nothing settled it: decide as "not distinguishable"
    std::string note;        // for the decision's text ("" where nothing needs saying)
    std::vector<int> ids;    // the trials measured again for it
  };
  // The pair of readings a decision between `incumbent` and `challenger` (both reliable) rests on. `verdict` is the
  // caller's rule (+1 adopt the challenger, -1 keep the incumbent, 0 neither: not distinguishable). Until the machine
  // is shown steady (kSteadyChecks), the incumbent is measured again right after the challenger, while the budget holds
  // a run (AgainAffordable): where both readings give one verdict, it stands; where they differ on a steady machine,
  // the challenger is on the line (undecided); where the machine moved between them (Moved), the challenger is
  // measured again too, and the last two readings, back to back after the move, decide.
  Pair BackToBack(const Trial* incumbent, const Trial* challenger,
                  const std::function<int(const Trial& challenger, const Trial& incumbent)>& verdict);
  // The same with the usual verdict: +1 where the challenger wins by `gain` (FasterBy), -1 where it is
  // distinguishably slower, 0 otherwise.
  Pair BackToBack(const Trial* incumbent, const Trial* challenger, double gain);
  // A new trial of `t`'s settings (a run again, counted as a refinement), when the budget holds one and its reading
  // counts; later Measure calls of those settings get it. Null otherwise.
  const Trial* ReadAgain(const Trial& t);
  TrialRequest AgainRequest(const Trial& t) const;  // `t`'s request with the next repeat number of its settings
  static bool Moved(const Trial& earlier, const Trial& later);  // apart beyond both intervals, by more than kMoved

  // ---- the budget plan (search_plan.cc) ----
  // While a step of the plan runs, its name is `running_`; at the end it is done. Trials of steps outside the plan
  // (baseline, flags, ceilings) are never limited by it.
  class StepScope {
   public:
    StepScope(Search* s, const char* step) : s_(s) { s_->running_ = step; }
    ~StepScope() {
      s_->done_.insert(s_->running_);
      s_->running_.clear();
    }
    StepScope(const StepScope&) = delete;
    StepScope& operator=(const StepScope&) = delete;

   private:
    Search* s_;
  };
  void Plan();  // says the plan, once the knobs are known
  // Whether the running step may run one more trial: one of its first trials, or one its share still holds.
  bool Affordable();
  // Whether a trial that did not settle may run again: the budget still holds it besides the first trials of the
  // running step and the steps after it, and the confirmation (a run again is a refinement, issue 42).
  bool AgainAffordable() const;
  int FirstTrials(const std::string& step) const;
  // What the running step (its first trials left) and the steps after it need, in order.
  std::vector<StepNeed> NeedsFrom(const std::string& step) const;
  double TrialLength() const;  // seconds: the mean of the trials run so far, else SearchOptions::trial_s

  // ---- workers (search_workers.cc) ----
  struct ScanStop {
    int64_t level = -1;  // the worker count it stopped at
    std::string text;
  };
  double Need(int64_t w, double ceiling) const;
  double Promised(int64_t w, double loader, double ceiling) const;
  bool Clears(int64_t w, const Trial& loader, const Trial* ceiling) const;
  std::optional<int64_t> ScanWorkers(const KnobSpec& k, const Trial* ceiling, std::map<int64_t, const Trial*>& seen,
                                     ScanStop* why_stop);
  void ChooseWorkers(const KnobSpec& k, const Trial* ceiling, bool recheck);
  // The trial judged by its throughput whatever the objective (a copy without its score; null stays null): the
  // ceilings and the workers step compare pipes (does the loader keep up with the model?), not costs.
  const Trial* Pipe(const Trial* t) const;
  std::string MoreWorkersClause(int64_t choice, const std::map<int64_t, const Trial*>& seen) const;

  const SearchOptions& o_;
  const TrialFn& fn_;
  SearchOutcome out_;
  std::deque<Trial> trials_;  // stable addresses for the pointers the steps hold
  KnobValues current_;        // the settings so far, every exposed knob set once the baseline ran
  KnobValues worker_base_;    // the settings the worker scan varies workers in
  std::optional<int64_t> largest_batch_, fastest_batch_;
  bool workers_chosen_ = false;  // the workers step ran (the batch step re-checks its choice only then)
  std::set<std::string> warned_;  // knobs whose value did not reach the script, already said
  std::map<int, int> again_;      // trial id -> the id of its run again (Measure)
  mutable std::map<int, Trial> pipes_;  // Pipe's copies by trial id, one each, at stable addresses
  // The plan: the steps in the order they run (set once the ceilings tell it), the one running, those done, new
  // trials run by each, and those whose share ran out before they finished.
  std::vector<std::string> order_ = {"workers", "amp", "batch", "full", "confirm"};
  std::string running_;
  std::set<std::string> done_;
  std::map<std::string, int> used_;
  std::map<std::string, int> again_used_;  // per step, runs again of trials that did not settle (refinements)
  std::set<std::string> cut_;
  // BackToBack's reading of the machine: readings of the same settings that agreed, and whether any moved apart.
  int steady_ = 0;
  bool drifting_ = false;
};

}  // namespace sat::tune::internal
