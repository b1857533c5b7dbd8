// What the sweep controller knows about one live attempt: its helper progress reports and its process tree's
// footprint over time. From these it says when the attempt is measured (steady enough for the packing policy
// to trust its footprint), its rates over any recent window (for the gain check), and the figures the journal
// keeps.
//
// Progress signal. A run that reports through `import saturate` has a throughput (samples/s from the cumulative
// counters). A run without the helper still has its tree's CPU use, which is the progress proxy for runs that
// compute on the CPU; a run that neither reports nor uses CPU measurably (it waits on something else) gives no
// signal, and the policy treats it as unaffected by its neighbours (docs/design.md, "Sweep").
//
// Times are CLOCK_MONOTONIC seconds (telemetry::MonotonicSeconds). Plain data plus arithmetic; no I/O, not
// thread-safe (the controller's loop owns every meter).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "sweep/journal.h"

namespace sat::sweep {

struct MeterOptions {
  // Seconds after the first progress report (or after the start, for a run that never reports) before the
  // footprint and rates count as steady: start-up, first-batch compilation, allocator growth.
  double warmup_s = 5;
  // The span rates are measured over, and that the memory footprint must stay flat over (see Measured).
  double window_s = 3;
  // "Flat": over the last window, the largest memory reading is at most (1 + flat_tolerance) x the smallest.
  double flat_tolerance = 0.10;
  // A run whose memory never settles, or a GPU run that neither reports nor touches the GPU, counts as measured
  // this long after warmup_s + window_s anyway, so it cannot hold the device's growth forever.
  double max_wait_s = 60;
};

// One sample of the attempt's process tree.
struct TreeReading {
  double t = 0;
  std::optional<double> cpu_pct;  // 100 = one core busy
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> gpu_mem_bytes;  // NVML's per-process memory summed over the tree
};

// A run's rates over one window; unset: no signal of that kind in the window.
struct WindowRates {
  std::optional<double> samples_per_s;  // from the helper's cumulative counters
  std::optional<double> cpu_pct;        // the mean of the tree's CPU readings
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
  // `start_t`: when the attempt started; `on_gpu`: whether its footprint is GPU memory.
  RunMeter(double start_t, bool on_gpu, MeterOptions options);

  // The run's cumulative samples (all its processes) after a helper report that arrived at `t`.
  void AddProgress(double t, double cumulative_samples);
  // The helper's CUDA memory figures (reserved or peak), in bytes.
  void AddHelperMemory(int64_t bytes);
  void AddTree(const TreeReading& reading);

  // Steady enough to trust: at least warmup_s + window_s after the anchor (the first progress report, or the
  // start), with a flat memory footprint over the last window. A GPU run must also have reported progress or
  // shown GPU memory. max_wait_s later it is measured regardless.
  bool Measured(double now) const;

  // Rates over [t0, t1]. Throughput needs progress reports spanning at least half the window; CPU needs one
  // tree reading inside it.
  WindowRates Rates(double t0, double t1) const;

  Footprint footprint() const;

  // For the journal: steady throughput (samples after the warm-up over the time since), the peak GPU memory,
  // the mean tree CPU and the peak RSS; unset fields were not seen.
  Measurements Summary() const;

  double start_t() const { return start_t_; }
  bool reported() const { return first_progress_.has_value(); }

 private:
  struct Progress {
    double t = 0, samples = 0;
  };
  double Anchor() const { return first_progress_ ? first_progress_->t : start_t_; }
  double SteadyFrom() const { return Anchor() + options_.warmup_s; }
  // Cumulative samples at `t` by linear interpolation; nullopt outside the kept reports.
  std::optional<double> SamplesAt(double t) const;
  void Trim(double now);

  double start_t_;
  bool on_gpu_;
  MeterOptions options_;
  std::deque<Progress> progress_;        // the recent reports, oldest first
  std::deque<TreeReading> readings_;     // the recent tree readings, oldest first
  std::optional<Progress> steady_base_;  // the first report at or after SteadyFrom()
  std::optional<Progress> first_progress_, last_progress_;
  uint64_t max_gpu_mem_ = 0, max_rss_ = 0;
  int64_t helper_mem_ = 0;
  bool seen_gpu_mem_ = false, seen_rss_ = false;
  double cpu_sum_all_ = 0, cpu_sum_steady_ = 0;
  int cpu_n_all_ = 0, cpu_n_steady_ = 0;
};

}  // namespace sat::sweep
