// What the sweep controller knows about one live attempt: its helper messages and its process tree's footprint
// over time. From these it says when the attempt is measured (steady enough for the packing policy to trust its
// footprint), its rates over any recent window (for the gain check), and the figures the journal keeps.
//
// Progress signal. A run that reports training steps (the automatic instrumentation of every PyTorch program,
// or `import saturate`) is judged by its training throughput: samples/s from the reports of training steps,
// with the time its processes spent in other loaders (`excluded_s`, validation) taken out. Its start-up (imports,
// data preparation: everything before its first training step, the first report with steps > 0) is no
// measurement: it is not measured before warmup_s + window_s of training, and its CPU use is never a progress
// signal. Only a run that never reports steps (a program that never imports torch) is judged by its tree's CPU
// use, the proxy for runs that compute on the CPU; a run that neither reports nor uses CPU measurably gives no
// signal, and the policy treats it as unaffected by its neighbours (docs/internals/sweep.md).
//
// A run is expected to report steps once it is known to: its processes loaded torch while the automatic
// instrumentation is on (Announce, from the controller), or it sent a `hello` with `"auto": true` or any progress
// report. Until its first step it is starting up, for at most startup_limit_s; a run of which nothing of the
// sort is known is taken for a program that never reports.
//
// Times are CLOCK_MONOTONIC seconds (telemetry::MonotonicSeconds), as in the helper's messages. Plain data plus
// arithmetic; no I/O, not thread-safe (the controller's loop owns every meter).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "measure/helper_message.h"
#include "measure/progress.h"
#include "sweep/records.h"

namespace sat::sweep {

struct MeterOptions {
  // Seconds after the first training step (or after the start, for a run that never reports steps) before the
  // footprint and rates count as steady: first-batch compilation, allocator growth, caches filling.
  double warmup_s = 5;
  // The span rates are measured over, and that the memory footprint must stay flat over (see Measured).
  double window_s = 3;
  // "Flat": over the last window, the largest memory reading is at most (1 + flat_tolerance) x the smallest.
  double flat_tolerance = 0.10;
  // A run whose memory never settles, or a GPU run that neither reports nor touches the GPU, counts as measured
  // this long after warmup_s + window_s anyway, so it cannot hold the device's growth forever.
  double max_wait_s = 60;
  // A run that announced steps but has made none this long after its start is taken for one that never trains
  // (an evaluation or preprocessing script that imports torch): from then on it is judged as a run without steps.
  double startup_limit_s = 600;
  // Rated: how closely the last two half windows' throughputs must agree, and the steps each must hold.
  double rated_tolerance = 0.15;
  double rated_steps = 4;
};

// One sample of the attempt's process tree.
struct TreeReading {
  double t = 0;
  std::optional<double> cpu_pct;  // 100 = one core busy
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> gpu_mem_bytes;  // NVML's per-process memory summed over the tree
  unsigned blocked = 0;  // processes in state 'D' at the reading (waiting on a disk, NFS or FUSE read)
  unsigned workers = 0;  // DataLoader workers (telemetry::CountForkedWorkers)
};

// A run's rates over one window; unset: no signal of that kind in the window.
struct WindowRates {
  std::optional<double> samples_per_s;  // training throughput, from reports of training steps
  std::optional<double> cpu_pct;        // the mean of the tree's CPU readings
  // The run reports training steps, so its CPU use is no progress signal (start-up and data preparation burn CPU
  // without training); only samples_per_s judges it.
  bool reports_steps = false;
  // Training steps inside the window (interpolated; the fewest of the run's processes), with samples_per_s: how
  // finely the window resolves the rate. A window of two 1-s steps can read 0 or twice the true rate.
  std::optional<double> steps = std::nullopt;
};

// What the run showed of its training so far, from its first step: what the sweep's staging judges its loader by
// (sweep/staging.h), within seconds of the start rather than once the run is measured.
struct TrainingSoFar {
  double startup_s = 0;   // from the attempt's start to its first training step
  double trained_s = 0;   // since the first step
  int readings = 0;       // tree readings with a CPU figure since the first step
  std::optional<double> cpu_pct, blocked, workers;  // their means (processes in 'D', DataLoader workers)
  double wait_share = 0;  // of the loop time, waiting for data (the helper's)
  std::optional<double> samples_per_s;  // over its training so far (Summary's throughput)
  double samples = 0;     // trained, all processes
  std::optional<double> epoch_samples;  // one epoch, all processes, when every loader said (the helper's `loader`)
};

// What a run holds on its device.
struct Footprint {
  // The most memory seen on the run's device: GPU memory (NVML per process, or the helper's reserved/peak when
  // larger) for a GPU run, the tree's RSS for a CPU run.
  uint64_t mem_bytes = 0;
  double cpu_pct = 0;  // mean tree CPU over the steady part (over everything before it is steady)
};

class RunMeter {
 public:
  // `start_t`: when the attempt started; `on_gpu`: whether its footprint is GPU memory; `run_id`: the attempt's
  // SATURATE_RUN_ID (messages of other runs are ignored).
  RunMeter(double start_t, bool on_gpu, MeterOptions options, std::string run_id = "");

  // Any helper message of the run, in arrival order: hello (whether the automatic layer is on), progress and
  // done (steps, samples, memory), loader (the samples in an epoch); other types are ignored.
  void Add(const measure::HelperMessage& message);
  void AddTree(const TreeReading& reading);
  // The run will report training steps: its processes loaded torch with the automatic instrumentation on.
  void Announce() { announced_ = true; }

  // Steady enough to trust: at least warmup_s + window_s after the anchor (the first training step, or the
  // start for a run without steps), with a flat memory footprint over the last window. A run starting up (steps
  // announced, none made) is not measured; a GPU run without steps must have shown GPU memory. max_wait_s after
  // the anchor's time is up it is measured regardless, and so is a run still starting up at startup_limit_s.
  bool Measured(double now) const;
  // Its rate can be read, if its footprint is not yet trusted: its throughput over the last two half windows agreed
  // within rated_tolerance, each read from at least rated_steps steps (past its warm-up, or it had none), a
  // window after its first training step at the soonest. What the CPU device's quick growth and early verdicts wait
  // for (packing.h rule 9); a run without steps is never rated, only measured.
  bool Rated(double now) const;

  // Rates over [t0, t1]. Throughput needs reports of training steps covering at least half the window with
  // training time (excluded_s taken out), per process, and adds the processes' rates; CPU needs one tree
  // reading inside the window.
  WindowRates Rates(double t0, double t1) const;

  // What it trained from its first training step (samples; steps where it counts no samples), and its steps (each
  // process's share), at `now`: each process's counts at its latest report, carried on to `now` at the rate between
  // its last two reports for at most the time between them (`extrapolate`; else as of the latest report), so that a
  // sum over runs taken at any moment does not lag by a report interval.
  struct Trained {
    double samples = 0, steps = 0;
  };
  Trained TrainedAt(double now, bool extrapolate) const;

  Footprint footprint() const;
  // Means over the tree readings with a CPU figure, of the steady part (of every one while there is none of those;
  // nullopt before any):
  // processes in state 'D', and DataLoader workers (what the sweep's staging reads of a run that never trained).
  std::optional<double> blocked() const { return blocked_.Mean(); }
  std::optional<double> workers() const { return workers_.Mean(); }

  // The run's training so far (see TrainingSoFar); nullopt before its first training step.
  std::optional<TrainingSoFar> Training() const;

  // For the journal: steady throughput (samples after the warm-up over the training time since), the peak GPU
  // memory, the mean tree CPU, the peak RSS and the samples trained; unset fields were not seen. Not energy: the
  // controller's EnergyLedger gives that.
  Measurements Summary() const;

  // The helper's totals over every process (steps, samples, CUDA memory, ...).
  const measure::ProgressTotals& totals() const { return progress_.totals(); }
  double start_t() const { return start_t_; }
  // The run reported a training step.
  bool stepping() const { return first_step_t_.has_value(); }
  std::optional<double> first_step_t() const { return first_step_t_; }
  const MeterOptions& options() const { return options_; }
  // Takes the shorter warm-up and window of `shorter` (a run found to end within seconds): readings already in
  // stay as they were taken, later ones count as steady from the earlier point.
  void Shorten(const MeterOptions& shorter);
  // Steps are expected (or came).
  bool announced() const { return announced_; }

 private:
  // A mean over the readings at or after SteadyFrom(), or over every reading while there is none of those.
  class SteadyMean {
   public:
    void Add(double v, bool steady);
    void RestartSteady() { sum_steady_ = 0, n_steady_ = 0; }
    std::optional<double> Mean() const;
    bool Any() const { return n_all_ > 0; }

   private:
    double sum_all_ = 0, sum_steady_ = 0;
    int n_all_ = 0, n_steady_ = 0;
  };
  // Cumulative counters of one process's training, from its first report with steps > 0: samples, seconds
  // that do not count as training (other loaders, gaps in the reports), and steps.
  struct Point {
    double t = 0, samples = 0, excluded_s = 0, steps = 0;
  };
  struct Stream {
    int64_t last_steps = 0;
    std::deque<Point> points;            // the recent ones, oldest first
    std::optional<Point> first, steady;  // the first, and the first at or after SteadyFrom(), kept through trimming
    Point last;
  };
  // The time the run counts from: its first training step, or its start.
  double Anchor() const;
  double SteadyFrom() const { return Anchor() + options_.warmup_s; }
  // Announced steps, made none yet, and the start-up limit is not reached.
  bool StartingUp(double now) const;
  void AddProgress(const measure::HelperMessage& m, const std::optional<measure::Observation>& since_previous);
  void Trim(double now);

  double start_t_;
  bool on_gpu_;
  MeterOptions options_;
  std::string run_id_;
  measure::ProgressAggregator progress_;
  bool announced_ = false;  // a hello from the automatic layer, or a progress report
  std::optional<double> first_step_t_;
  std::map<int64_t, Stream> streams_;  // by pid
  std::deque<TreeReading> readings_;   // the recent tree readings, oldest first
  uint64_t max_gpu_mem_ = 0, max_rss_ = 0;
  bool seen_gpu_mem_ = false, seen_rss_ = false;
  SteadyMean cpu_, blocked_, workers_;
  // Sums over the tree readings since the first step, for Training().
  struct Sum {
    double total = 0;
    int n = 0;
    void Add(double v) { total += v, ++n; }
    std::optional<double> Mean() const { return n > 0 ? std::optional(total / n) : std::nullopt; }
  };
  Sum training_cpu_, training_blocked_, training_workers_;
  std::map<int64_t, int64_t> epoch_samples_;  // by pid, from `loader` messages
};

}  // namespace sat::sweep
