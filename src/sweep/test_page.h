// A sweep's report data built in memory, for the report's tests and its benchmark (header only; not part of the
// library): `runs` runs packed `per_device` at a time on `gpus` GPUs, one in ten failing once and being retried,
// one in fifty running out of memory, a few stopped early, each with a loss and its measurements.
#pragma once

#include <fmt/core.h>

#include "sweep/html_report.h"

namespace sat::sweep::testing {

inline SweepPage PackedSweep(int runs, int gpus, int per_device) {
  SweepPage p;
  p.status.journal_path = "/tmp/sweep.journal";
  p.status.sweep.spec_path = "sweep.yaml";
  p.status.sweep.metric = MetricSpec{"loss", Goal::kMinimize, std::nullopt};
  const double t0 = 1.7e9;
  std::vector<double> slot_free(static_cast<size_t>(gpus * per_device), t0);
  int64_t attempt_id = 0;
  for (int i = 0; i < runs; ++i) {
    RunRecord r;
    r.index = i;
    r.key = fmt::format("{:012x}", 0xabc000 + i);
    r.params = {{"lr", 0.001 * (1 + i % 10)}, {"batch_size", 32 << (i % 3)}, {"model", i % 2 ? "resnet" : "vit"}};
    const int tries = i % 10 == 3 ? 2 : 1;
    for (int n = 1; n <= tries; ++n) {
      const size_t slot = static_cast<size_t>((i + n) % (gpus * per_device));
      AttemptRecord a;
      a.id = ++attempt_id;
      a.run_key = r.key;
      a.attempt_no = n;
      a.started_unix = slot_free[slot];
      const double length = 60 + (i * 37 % 90);
      a.ended_unix = a.started_unix + (n < tries ? length / 3 : length);
      slot_free[slot] = *a.ended_unix;
      a.gpu_index = static_cast<int>(slot) / per_device;
      a.exit_class = n < tries ? "failed" : i % 50 == 7 ? "gpu_oom" : i % 25 == 4 ? "stopped_early" : "finished";
      a.detail = n < tries ? "exit code 1: RuntimeError: boom" : "";
      p.attempts.push_back(a);
      p.lanes.push_back(GpuLane(*a.gpu_index));
      r.started_unix = a.started_unix;
      r.finished_unix = a.ended_unix;
      r.gpu_index = a.gpu_index;
    }
    r.attempts = tries;
    r.failures = tries - 1;
    const bool oom = i % 50 == 7;
    r.state = oom ? RunState::kFailed : RunState::kDone;
    r.stopped_early = i % 25 == 4;
    if (!oom) r.best_metrics = {{"loss", 1.0 / (1 + i % 97)}, {"accuracy", 0.5 + (i % 40) / 100.0}};
    r.measurements.throughput_samples_per_s = 1000 + i % 300;
    r.measurements.peak_gpu_memory_bytes = (4ull + static_cast<uint64_t>(i % 8)) << 30;
    r.measurements.energy_j = 90000 + i;
    p.status.runs.push_back(std::move(r));
  }
  std::stable_sort(p.attempts.begin(), p.attempts.end(),
                   [](const AttemptRecord& a, const AttemptRecord& b) { return a.started_unix < b.started_unix; });
  p.lanes.clear();
  for (const AttemptRecord& a : p.attempts) p.lanes.push_back(GpuLane(*a.gpu_index));
  for (int g = 0; g < gpus; ++g) {
    for (double t = t0; t < slot_free[0]; t += 5) {
      p.devices.push_back({t, GpuLane(g), 30e9 + g * 1e9, 80e9, 70.0 + g});
    }
  }
  p.status.counts.done = runs - runs / 50;
  p.status.counts.failed = runs / 50;
  p.now_unix = t0 + 1e6;
  return p;
}

}  // namespace sat::sweep::testing
