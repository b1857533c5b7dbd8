// Hand-built stage results for the tests of the measurement core and of the commands on it (header only; not part
// of the library). Each builder gives a plausible measured stage; tests set the fields their rule reads.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "core/stage.h"
#include "measure/helper_message.h"
#include "telemetry/summary.h"

namespace sat::core::fixtures {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A summary of `n` equal readings.
inline telemetry::Summary Flat(double value, size_t n = 20) {
  telemetry::Summary s;
  s.count = n;
  s.mean = s.p50 = s.p95 = s.max = s.min = value;
  return s;
}

// A stage that ran and converged at `rate` samples/s (±2%), stopped by saturate once measured.
inline StageResult Measured(StageKind kind, double rate) {
  StageResult s;
  s.kind = kind;
  s.ran = true;
  s.helper_seen = true;
  s.estimate.samples_per_s = rate;
  s.estimate.ci_low = rate * 0.98;
  s.estimate.ci_high = rate * 1.02;
  s.estimate.rel_half_width = 0.02;
  s.estimate.warmup_s = 2;
  s.estimate.steady_s = 12;
  s.estimate.n_batches = 24;
  s.estimate.converged = true;
  s.series = {{0.5, rate * 0.5}, {1.5, rate}, {2.5, rate}};
  s.observations = 240;
  s.outcome.exit_class = run::ExitClass::kStopped;
  s.outcome.detail = "stopped by saturate";
  s.outcome.term_signal = 2;
  s.outcome.duration_s = 14;
  s.wall_s = 14.2;
  s.telemetry.cpu_count = 8;
  return s;
}

inline StageResult Skipped(StageKind kind, std::string why) {
  StageResult s;
  s.kind = kind;
  s.skipped_why = std::move(why);
  return s;
}

// GPU readings of a stage: utilisation p50 and peak memory in GiB of a 16 GiB device.
inline void SetGpu(StageResult& s, double util_pct, double used_gib) {
  s.telemetry.gpu_util_pct = Flat(util_pct);
  s.telemetry.gpu_mem_used_bytes = Flat(used_gib * kGiB);
  s.telemetry.gpu_mem_total_bytes = 16 * kGiB;
  s.telemetry.tree_gpu_mem_bytes = Flat(used_gib * kGiB);
}

// CPU readings of a stage: the tree's CPU (100 = one core) with `processes` processes (a trainer and its
// DataLoader workers), and the host's.
inline void SetCpu(StageResult& s, double tree_pct, double processes, double host_pct) {
  s.telemetry.tree_cpu_pct = Flat(tree_pct);
  s.telemetry.tree_processes = Flat(processes);
  s.telemetry.tree_workers = Flat(processes - 1);
  s.telemetry.host_cpu_pct = Flat(host_pct);
  s.telemetry.host_iowait_pct = Flat(0.5);
  s.telemetry.disk_busy_pct = Flat(3);
}

// Storage readings of a stage: its processes waiting in the kernel on reads ('D', on average) and the bytes they
// read per second (rchar).
inline void SetBlocked(StageResult& s, double blocked, double read_per_s) {
  s.telemetry.tree_blocked = Flat(blocked);
  s.telemetry.tree_rchar_per_s = Flat(read_per_s);
}

// The helper's FLOP count of a 64-sample step: `per_sample` FLOPs per sample in `dtype` products on `device`.
inline measure::FlopsInfo Count(double per_sample, std::string dtype = "bf16", std::string device = "cuda",
                                bool tf32 = false) {
  measure::FlopsInfo c;
  c.per_sample = per_sample;
  c.samples = 64;
  c.per_step = per_sample * 64;
  c.method = "flop_counter";
  c.dtype = std::move(dtype);
  c.device = std::move(device);
  c.tf32 = tf32;
  return c;
}

}  // namespace sat::core::fixtures
