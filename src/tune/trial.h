// A trial: one measurement of the training command in one mode with one set of knob values, and what it found.
// Trials are plain data; they round-trip through JSON for the cache and results.json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/stage.h"
#include "measure/estimator.h"
#include "run/exit_class.h"
#include "tune/knob.h"
#include "util/result.h"

namespace sat::tune {

// What to measure. Knobs absent from `knobs` take the script's own default.
struct TrialRequest {
  core::StageKind mode = core::StageKind::kFull;
  KnobValues knobs;
  std::string step;  // the search step asking: "baseline", "ceiling", "workers", "amp", "batch", "full", "confirm", "grid"
  // > 0: a repeated measurement of a configuration already measured: 1 the confirmation, 2 and up a run again
  // of a measurement whose estimate did not settle
  int repeat = 0;
  // Knobs written into the command as the script's own options instead of SATURATE_KNOBS (Delivery::kFlag, and
  // the candidates of the run that proves them).
  std::map<std::string, FlagBinding> flags;

  // Two requests measure the same thing when mode, knobs, repeat and the knobs set by flags agree (the step does
  // not matter).
  bool SameMeasurement(const TrialRequest& other) const;
};

// A trial's figure of merit, higher is better, with its 95% interval and unit ("samples/J"). value 0: the trial
// lacks what the objective needs (an energy reading), and no comparison may rest on it.
struct TrialScore {
  double value = 0, low = 0, high = 0;
  std::string unit;
  std::string missing;  // why value is 0, for a sentence: "has no energy reading"
};

struct Trial {
  int id = 0;  // 1-based, in the order the search asked for trials
  TrialRequest request;
  bool cached = false;       // taken from the cache instead of run
  bool interrupted = false;  // Ctrl-C ended it: kept for the record, never used for decisions or cached

  run::ExitClass exit_class = run::ExitClass::kFailed;
  std::string detail;  // the runner's one line on how it ended
  bool helper_seen = false;
  // The command's processes had torch loaded (its hello, else their memory maps): a script that did but reported
  // nothing before its cap was still starting (CUDA, the first step's compile or FLOP count), not silent for good.
  bool torch_loaded = false;
  KnobValues knobs_seen;  // what the script reported getting, per knob spec name (helper and automatic knobs)

  // The automatic instrumentation of unmodified scripts (docs/helper-protocol.md): whether it reported, the knobs
  // it can inject (spec names, matched to the searched knobs by role), why a value saturate sent could not be
  // set, and the training DataLoader it found ("train.py:57#0" and "train.py:57"; empty when none).
  bool auto_seen = false;
  std::set<std::string> knobs_auto;
  std::map<std::string, std::string> knob_errors;
  std::string loader_key, loader_site;
  int64_t world_size = 1;  // ranks of a distributed job (their hello/loader messages); 1 for one process
  // The script's own options as it parsed them (`flags` messages), and the option each knob named
  // (saturate.knob(..., flag=), by spec name).
  std::vector<measure::FlagOption> script_flags;
  std::map<std::string, std::string> knob_flags;

  // Throughput over the steady part; samples_per_s 0 when nothing was measured.
  double samples_per_s = 0, ci_low = 0, ci_high = 0;
  // What the search judges this trial by when it is not its throughput (compare.h ScoreOf; objective.h
  // ApplyObjective): under --objective energy, samples per joule. Derived, never cached.
  std::optional<TrialScore> score;
  bool converged = false;     // the estimator stopped the trial early: its interval reached the target width
  // The estimator found a steady state: warm-up cut before its limit, no drift, enough batches for a Student t
  // interval (which may be wider than the target). See compare.h for what a claim needs.
  bool settled = false;
  std::string unsettled_why;  // when not settled: "still drifting", "warm-up to the end", "too few batches"
  int observations = 0;   // all observations (helper reports or parsed lines)
  int steady_steps = 0;   // training steps (loader mode: batches) after the warm-up cut
  bool too_slow = false;  // ran to its time limit with too few steady steps (trial_length.h)
  double warmup_s = 0, steady_s = 0, wall_s = 0;
  std::vector<measure::RatePoint> series;  // warm-up included; at most kMaxSeriesPoints

  // Memory at peak: the GPU's when one is probed, else the host's; and what that memory holds in all.
  std::optional<double> mem_peak_bytes, mem_total_bytes;
  bool mem_is_gpu = false;
  std::optional<double> gpu_util_pct;            // p50 over the steady part
  std::optional<double> cpu_pct, cpu_pct_p95;    // the process tree, 100 = one core
  std::optional<double> rss_peak_bytes;          // the process tree
  std::optional<double> data_wait_share;
  // The helper's FLOP count of the trial's first training step (core/mfu.h turns it into FLOP/s and MFU).
  std::optional<measure::FlopsInfo> flops;
  // The probed GPU's energy per sample over the steady part (core/energy.h: the energy counter, else power x
  // time; the GPU only), the mean power, and how it was read; unset without a GPU reading.
  std::optional<double> joules_per_sample, watts;
  std::string energy_method;
  std::optional<double> pcie_rx_bytes_per_s;  // the GPU's PCIe receive rate (host-to-device), mean of the steady part
  double started_unix = 0;
};

inline constexpr size_t kMaxSeriesPoints = 120;

// The value knob `name` had in the trial: the one it set, else the one the script reported; null when neither.
const KnobValue* EffectiveKnob(const Trial& t, const std::string& name);

// The trial ran and measured throughput: it ended on its own or was stopped by us, samples came, and every knob it
// asked for was applied (none has a knob_errors entry).
bool Succeeded(const Trial& t);
// The reason a knob the trial asked for was not applied ("amp=fp16 could not be set: ..."); empty when none.
std::string KnobNotApplied(const Trial& t);
// It ran out of GPU or host memory.
bool OutOfMemory(const Trial& t);
// What went wrong with a trial that did not succeed, as a sentence's predicate: "ran out of GPU memory",
// "failed (failed: exit code 1)", "was too slow to measure in this budget (...)".
std::string FailureText(const Trial& t);
// Its memory peak is above `target` (a share of the memory it had); false when either is unknown.
bool OverMemoryTarget(const Trial& t, double target);
// Peak memory as a share of the total, when both are known.
std::optional<double> MemoryShare(const Trial& t);

// Fills a trial from a finished stage (the caller sets id and request). Knob messages are matched to `knobs` by
// name, and those of the automatic instrumentation also by role (its "workers" is a searched "num_workers").
// Memory is the GPU's when the stage saw the probed GPU's total, else the process tree's resident memory against
// `host_mem_total_bytes`.
Trial TrialFromStage(const core::StageResult& stage, const std::vector<KnobSpec>& knobs,
                     std::optional<double> host_mem_total_bytes);

// `series` thinned to at most `max_points` by averaging neighbours (time order kept).
std::vector<measure::RatePoint> Thin(const std::vector<measure::RatePoint>& series, size_t max_points);

nlohmann::json TrialToJson(const Trial& t);
Result<Trial> TrialFromJson(const nlohmann::json& j);

std::optional<run::ExitClass> ParseExitClass(std::string_view name);
std::optional<core::StageKind> ParseStageKind(std::string_view name);

}  // namespace sat::tune
