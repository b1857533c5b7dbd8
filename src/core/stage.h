// One measurement of a training command: start it in a mode (loader, compute, train), read its throughput from the
// helper channel or from its output, watch its process tree with the sampler, and stop it once the steady-state
// estimate is tight or its time runs out.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/energy.h"
#include "measure/estimator.h"
#include "measure/line_parser.h"
#include "measure/progress.h"
#include "live/live_figures.h"
#include "run/runner.h"
#include "telemetry/sampler.h"
#include "telemetry/summary.h"

namespace sat::core {

enum class StageKind { kLoader, kCompute, kFull };
std::string_view StageName(StageKind k);  // "loader", "compute", "full"

// What the sampler saw during a stage's steady part (after warm-up), N/A fields skipped.
struct StageTelemetry {
  std::optional<telemetry::Summary> gpu_util_pct, gpu_mem_used_bytes;  // the probed GPU
  std::optional<double> gpu_mem_total_bytes;
  // The probed GPU's GPM activity, 0..100 (telemetry::GpuSample); unset before Hopper.
  std::optional<telemetry::Summary> gpm_sm_active_pct, gpm_sm_occupancy_pct, gpm_tensor_active_pct,
      gpm_dram_bw_util_pct;
  // Bytes the probed GPU received over PCIe per second (NVML's RX counter: host-to-device copies and the rest).
  std::optional<telemetry::Summary> gpu_pcie_rx_bytes_per_s;
  std::optional<telemetry::Summary> tree_cpu_pct;   // 100 = one core
  std::optional<telemetry::Summary> tree_sys_cpu_pct;  // of tree_cpu_pct, the kernel's part (stime)
  std::optional<telemetry::Summary> tree_rss_bytes;
  std::optional<telemetry::Summary> tree_read_bytes_per_s;
  std::optional<telemetry::Summary> tree_rchar_per_s;        // bytes passed to read(), page cache included
  std::optional<telemetry::Summary> tree_write_bytes_per_s;  // bytes written to storage
  std::optional<telemetry::Summary> tree_blocked;            // processes in state 'D' (waiting on storage)
  std::optional<telemetry::Summary> tree_processes;  // every process of the command: wrappers, trainers, workers
  std::optional<telemetry::Summary> tree_workers;    // DataLoader workers (telemetry::CountForkedWorkers)
  std::optional<telemetry::Summary> tree_gpu_mem_bytes;
  std::optional<telemetry::Summary> host_cpu_pct, host_iowait_pct, disk_busy_pct, disk_read_bytes_per_s;
  bool gpu = false;                         // a GPU was probed
  std::optional<EnergyReading> gpu_energy;  // the probed GPU over the steady part (core/energy.h)
  std::optional<EnergyReading> cpu_energy;  // the CPU packages (RAPL) over the steady part
  unsigned cpu_count = 0;
};

// A summary's mean; nullopt where the field had no value in the steady part, or its mean is not finite.
std::optional<double> MeanOf(const std::optional<telemetry::Summary>& s);

// The probed GPU at one sample, for reports' lanes over time.
struct GpuPoint {
  double t_s = 0;  // on the clock of StageResult::series (seconds since estimate.start_t; negative before it)
  std::optional<double> util_pct, mem_used_bytes, power_w;
};

struct StageResult {
  StageKind kind = StageKind::kFull;
  bool ran = false;                  // false: skipped (see skipped_why)
  std::string skipped_why;
  bool helper_seen = false;          // the script reported over the helper channel (explicitly or automatically)
  bool parsed_lines = false;         // throughput came from --parse matches
  std::map<std::string, nlohmann::json> knobs_seen;  // knob name -> the value the script got (helper knob messages)

  // The automatic instrumentation (docs/helper-protocol.md, "Automatic instrumentation"); all empty when the
  // script reported through `import saturate` or not at all.
  bool auto_seen = false;                     // a hello with "auto": true: instrumented without `import saturate`
  std::optional<measure::LoaderInfo> loader;  // the training DataLoader (`loader` message); key absent: none
  std::set<std::string> knobs_auto;           // knobs reported with "auto": true (injectable into the loader/amp)
  std::map<std::string, std::string> knob_errors;  // knob -> why the value saturate asked for was not applied
  std::map<std::string, std::string> knob_flags;   // knob -> the script's own option for it (saturate.knob flag=)
  std::vector<measure::FlagOption> flags;          // the script's parsed options (`flags` messages), by dest
  bool no_loader = false;  // a `done` with reason "no-loader": loader/compute mode found no DataLoader to take over
  // Whether the tree loaded torch (its libraries in a process's memory map, or a hello naming a torch version):
  // nullopt when the command ended before saturate could look.
  std::optional<bool> torch_loaded;
  std::string auto_failure;  // the helper's "saturate: automatic instrumentation is off ..." stderr line, if any
  std::optional<measure::FlopsInfo> flops;  // the helper's FLOP count of the first training step (`flops`)
  std::string flops_skipped;                // why the helper took no count, when it said (a compiled model)
  std::optional<measure::TraceInfo> trace;  // where the helper wrote a profiler trace (`trace`), when asked to
  // A distributed job (its processes' hello and loader messages carry rank and world size): the world size, and
  // each rank's training loader as it reported it (its batch size is the per-device batch). 1 and empty for a
  // single process. `loader` above is rank 0's.
  int64_t world_size = 1;
  std::map<int64_t, measure::LoaderInfo> rank_loaders;
  measure::SteadyState estimate;     // samples_per_s with its 95% interval; samples_per_s 0 when nothing came
  // The StageOptions::stop_above rate, when the stage stopped on it (its estimate clearly above that rate, not
  // converged to the target width); nullopt otherwise.
  std::optional<double> stopped_above;
  std::vector<measure::RatePoint> series;  // throughput over time, warm-up included (for reports)
  std::vector<GpuPoint> gpu_series;        // the probed GPU over the whole stage, at most ~600 points; no GPU: empty
  size_t observations = 0;
  measure::ProgressTotals totals;    // helper: wait/step/phase/excluded seconds, memory peak, latest done reason
  std::optional<double> data_wait_share;   // share of loop time waiting for data (helper or parsed data_s)
  std::map<std::string, double> phase_shares;  // named phases' share of loop time (helper or parsed)
  StageTelemetry telemetry;
  run::RunOutcome outcome;           // how the command ended (usually: stopped by us once measured)
  double wall_s = 0;
  std::vector<std::string> open_data_paths;  // regular files the tree had open (for the filesystem check)
  // The helper's `files` messages (docs/helper-protocol.md): the data files its processes opened (a sample, sorted),
  // their data-file opens (each process's latest count, summed), and files they opened for writing.
  std::vector<std::string> data_files;
  int64_t data_opens = 0;
  std::vector<std::string> written_files;
  std::string log_dir;
};

struct StageOptions {
  std::vector<std::string> argv;
  bool shell = false;
  std::map<std::string, std::string> env;   // extra environment (knobs, SATURATE_DEVICE)
  double budget_s = 40;                      // this stage's wall-clock limit
  // Seconds past budget_s the stage may run on while reports arrive but its steady part is still under
  // estimator.min_steady_s: a start-up that ate the budget would otherwise leave a rate no verdict can use. It
  // ends as soon as that much is steady. 0: none.
  double grace_s = 0;
  double settle_s = 0;                       // minimum run time before convergence may stop it
  measure::EstimatorOptions estimator;
  // An early stop for a figure that only matters as a bound: the stage also stops once its steady part is long
  // enough (SteadyState::enough), shows no drift and no warm-up at the limit, its interval is within
  // ±max_rel_half_width, and the interval's low end is at or above `rate` samples/s. probe's loader stage sets it
  // far above the full run's rate: a loader at 75x the model never narrowed to ±2% and used its whole budget
  // share to pin a number no verdict depends on.
  struct StopAbove {
    double rate = 0;                // samples/s
    double max_rel_half_width = 0;  // the widest interval it stops on (0.1: ±10%)
  };
  std::optional<StopAbove> stop_above;
  std::optional<std::string> parse;          // --parse REGEX or preset: read throughput from output lines
  std::optional<double> batch_size;          // for step-time patterns
  // Automatic instrumentation of unmodified PyTorch scripts. Off (SATURATE_AUTO=0) when false or when `parse` is
  // set: the pattern is then the only source of throughput, so the two cannot disagree or count twice. A script
  // that imports saturate reports through the helper either way.
  bool auto_instrument = true;
  std::string auto_target;                   // SATURATE_AUTO_TARGET: a `loader` key from an earlier stage
  std::optional<double> samples_per_step;    // SATURATE_SAMPLES_PER_STEP: for steps with neither loader nor input
  std::string log_dir;                       // stdout.log / stderr.log / estimator.csv of this stage
  // SATURATE_TRACE: the helper writes a torch.profiler Chrome trace of a few steady steps there. Until its `trace`
  // message arrives the stage does not stop on convergence (only on its budget); with stop_after_trace it stops
  // as soon as the message is in (a run for the trace alone).
  std::string trace_path;
  bool stop_after_trace = false;
  bool verbose = false;                      // echo the command's output
  int gpu_index = -1;                        // the probed GPU, -1: none
  // --serve: the stage's progress goes to `live` (not owned; may be null) as a run with these labels, for its
  // samples/s on the Prometheus page while it runs.
  live::LiveFigures* live = nullptr;
  live::Labels live_labels;
};

// The stage ran and measured a throughput (samples_per_s finite and above 0).
bool StageMeasured(const StageResult& stage);
// The stage ran and its command ended gpu_oom, host_oom, worker_killed, failed or start_failed.
bool StageFailed(const StageResult& stage);

// The samples a stage's telemetry summarises, from `samples` (time order, all since the stage started at `t0`):
// those of its steady part [from, to], both ends included; the whole stage [t0, end] when the steady part holds
// fewer than two. The stopped command's shutdown after `to` is never part of it (it read a 3 s compute stage on an
// H100 at 381 W where the GPU drew 438 W: the idle tail diluted the energy counter).
std::vector<telemetry::Sample> SteadySamples(const std::vector<telemetry::Sample>& samples, double t0, double end,
                                            double from, double to);

// Every stage's processes carry SATURATE_RUN_ID "probe-<saturate's pid>-<stage>" (probe's and tune's alike), by
// which a later probe or tune finds what a killed one left running (run/leftovers.h FindOrphans).
inline constexpr std::string_view kStageRunIdPrefix = "probe-";

// Runs one stage to completion. `sampler` must be running (its thread); the stage watches its tree on it and
// reads its samples back. Error only for problems of saturate's own (cannot open the channel, cannot start).
Result<StageResult> RunStage(StageKind kind, const StageOptions& options, telemetry::Sampler& sampler);

class StageCommand;

// The rules of a stage over a command started at `t0` (on the command's clock) as run `run_id`
// (stage_command.h): feeds the estimator what the helper and the output lines report, scans the tree's open files,
// and stops the command once the estimate is tight (after settle_s, and once a trace asked for has come), its
// budget is spent, its rate is clearly above StageOptions::stop_above, it ends on its own, or saturate is
// interrupted; reports that cover time after the stop count
// in the totals, never in the estimate. RunStage runs it on a real command; tests on a scripted one.
StageResult MeasureStage(StageKind kind, const StageOptions& options, StageCommand& command,
                         const std::string& run_id, double t0);

// Runs the stages of a command's measurement: the seam between an orchestration (probe's stage order and budget
// split) and the stages themselves. The real one (SamplerStageRunner) runs each on a real command; tests give a
// scripted one that returns stage results and moves a clock of its own. Called from one thread.
class StageRunner {
 public:
  virtual ~StageRunner() = default;
  // Seconds on the clock the stages' budgets are counted on.
  virtual double Now() = 0;
  virtual Result<StageResult> Run(StageKind kind, const StageOptions& options) = 0;
};

// RunStage on a running sampler (not owned; must outlive the runner), on the monotonic clock.
class SamplerStageRunner : public StageRunner {
 public:
  explicit SamplerStageRunner(telemetry::Sampler& sampler) : sampler_(sampler) {}
  double Now() override;
  Result<StageResult> Run(StageKind kind, const StageOptions& options) override;

 private:
  telemetry::Sampler& sampler_;
};

// The sampler that the stages of one probe (or the trials of one tune) share, each stage watching its own tree
// on it, and the GPU they are measured on.
struct StageSampler {
  std::unique_ptr<telemetry::Sampler> sampler;  // running: 0.25 s ticks
  int gpu_index = -1;                           // `device`, else the first GPU; -1 without one
  telemetry::Sample first;                      // taken before the thread started: the machine as it is
};

// Creates and starts the shared sampler with room for `span_s` seconds of samples. `gpu` (not owned, may be null)
// must outlive it; `device` is the GPU asked for (NVML index), -1 for the first.
// `on_sample`, when set, gets every sample on the sampler's thread (SamplerOptions::on_sample).
Result<StageSampler> StartStageSampler(telemetry::GpuBackend* gpu, int device, double span_s,
                                       const std::string& proc_root,
                                       std::function<void(const telemetry::Sample&)> on_sample = {});

// The options every stage on `sampling`'s GPU starts from: its gpu_index, and when a `device` was asked for, an
// environment in which the command sees only that GPU, numbered as NVML numbers it.
StageOptions StageOptionsOn(const StageSampler& sampling, int device);

}  // namespace sat::core
