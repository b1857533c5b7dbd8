// Hand-built probe results for the verdict and report tests (header only; not part of the library). Each
// builder gives a plausible measured stage; tests set the fields their rule reads.
#pragma once

#include <cstdint>
#include <string>

#include "probe/probe.h"

namespace sat::probe::results {

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

// A machine with 8 cores and, when `gpu`, one 16 GiB GPU.
inline ProbeResult Probe(bool gpu) {
  ProbeResult r;
  r.command = {"python3", "train.py", "--workers", "0"};
  r.machine.cpu_count = 8;
  r.machine.mem_total_bytes = static_cast<uint64_t>(64 * kGiB);
  if (gpu) {
    r.machine.gpu_index = 0;
    r.machine.gpu_name = "NVIDIA T4";
    r.machine.gpu_mem_total_bytes = static_cast<uint64_t>(16 * kGiB);
  }
  r.budget_s = 120;
  r.wall_s = 96.5;
  return r;
}

// With the helper: all three stages measured.
inline ProbeResult WithHelper(bool gpu, double loader, double compute, double full) {
  ProbeResult r = Probe(gpu);
  r.helper = true;
  r.loader = Measured(StageKind::kLoader, loader);
  r.compute = Measured(StageKind::kCompute, compute);
  r.full = Measured(StageKind::kFull, full);
  return r;
}

// Without the helper: only full ran (--parse, so no automatic instrumentation), its throughput and shares parsed
// from output lines.
inline ProbeResult Parsed(bool gpu, double full) {
  ProbeResult r = Probe(gpu);
  r.parse = true;
  r.auto_enabled = false;
  r.full = Measured(StageKind::kFull, full);
  r.full.helper_seen = false;
  r.full.parsed_lines = true;
  const std::string why = NoReportsWhy(r);
  r.loader = Skipped(StageKind::kLoader, why);
  r.compute = Skipped(StageKind::kCompute, why);
  return r;
}

// An unmodified PyTorch script measured through the automatic instrumentation: all three stages, and the
// training DataLoader built at train.py:57 (ImageFolder, batch 64, no workers, one validation loader left out).
inline ProbeResult Automatic(bool gpu, double loader, double compute, double full) {
  ProbeResult r = WithHelper(gpu, loader, compute, full);
  r.auto_instrumented = true;
  for (StageResult* s : {&r.loader, &r.compute, &r.full}) {
    s->auto_seen = true;
    s->torch_loaded = true;
  }
  measure::LoaderInfo l;
  l.key = "train.py:57#0";
  l.site = "train.py:57";
  l.dataset = "ImageFolder";
  l.iterable = false;
  l.num_workers = 0;
  l.pin_memory = false;
  l.batch_size = 64;
  l.persistent_workers = false;
  l.samples_from = "loader";
  l.step_at = "optimizer";
  l.others = 1;
  r.full.loader = l;
  r.full.knobs_auto = {"workers", "batch_size", "pin_memory", "prefetch_factor", "persistent_workers", "amp"};
  return r;
}

// A script whose full stage ran and reported nothing at all (no helper, no automatic report, no --parse).
inline ProbeResult Silent(bool gpu) {
  ProbeResult r = Probe(gpu);
  r.full = Measured(StageKind::kFull, 0);
  r.full.helper_seen = false;
  r.full.estimate = {};
  r.full.observations = 0;
  r.full.series.clear();
  r.full.wall_s = 48;
  return r;
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

}  // namespace sat::probe::results
