// Hand-built probe results for the verdict and report tests (header only; not part of the library). Each
// builder gives a plausible measured stage; tests set the fields their rule reads.
#pragma once

#include <cstdint>
#include <string>

#include "core/test_stages.h"
#include "probe/probe_result.h"
#include "probe/verdict.h"

namespace sat::probe::results {

using core::fixtures::Flat;
using core::fixtures::kGiB;
using core::fixtures::Measured;
using core::fixtures::SetBlocked;
using core::fixtures::SetCpu;
using core::fixtures::SetGpu;
using core::fixtures::Skipped;

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
  r.loader = Measured(core::StageKind::kLoader, loader);
  r.compute = Measured(core::StageKind::kCompute, compute);
  r.full = Measured(core::StageKind::kFull, full);
  return r;
}

// Without the helper: only full ran (--parse, so no automatic instrumentation), its throughput and shares parsed
// from output lines.
inline ProbeResult Parsed(bool gpu, double full) {
  ProbeResult r = Probe(gpu);
  r.parse = true;
  r.auto_enabled = false;
  r.full = Measured(core::StageKind::kFull, full);
  r.full.helper_seen = false;
  r.full.parsed_lines = true;
  const std::string why = NoReportsWhy(r);
  r.loader = Skipped(core::StageKind::kLoader, why);
  r.compute = Skipped(core::StageKind::kCompute, why);
  return r;
}

// An unmodified PyTorch script measured through the automatic instrumentation: all three stages, and the
// training DataLoader built at train.py:57 (ImageFolder, batch 64, no workers, one validation loader left out).
inline ProbeResult Automatic(bool gpu, double loader, double compute, double full) {
  ProbeResult r = WithHelper(gpu, loader, compute, full);
  r.auto_instrumented = true;
  for (core::StageResult* s : {&r.loader, &r.compute, &r.full}) {
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
  r.full = Measured(core::StageKind::kFull, 0);
  r.full.helper_seen = false;
  r.full.estimate = {};
  r.full.observations = 0;
  r.full.series.clear();
  r.full.wall_s = 48;
  return r;
}

// A local-copy what-if as a slow mount gives it (local_copy.h): 32 files read cold at 21 ms each from the source and
// 0.2 ms from a copy; 300 files of 4 KiB in all, ~6 s to copy; the loader at 40 samples/s would reach 800 (300 cold).
inline LocalCopyWhatIf ExampleLocalCopy() {
  LocalCopyWhatIf w;
  w.reads.source = {32, 32 * 4096, 0.672};
  w.reads.local = {32, 32 * 4096, 0.0064};
  w.reads.local_dir = "/root/.cache/saturate";
  w.root = "/mnt/data";
  w.total_bytes = 300 * 4096;
  w.total_files = 300;
  w.copy_s = 6.3;
  w.loader_now = 40;
  w.estimate = {800, 300};
  w.fits_in_memory = true;
  return w;
}

// Every note joined, for "some note says X" checks.
inline std::string Notes(const Verdict& v) {
  std::string all;
  for (const std::string& n : v.notes) all += n + "\n";
  return all;
}

// The compute-bound case: the model alone near the full run's rate, the GPU busy, the loader far ahead.
inline ProbeResult ComputeBoundWithHelper() {
  ProbeResult r = WithHelper(true, 3000, 1200, 1150);
  r.full.data_wait_share = 0.02;
  SetGpu(r.compute, 98, 6);
  SetGpu(r.full, 97, 6);
  SetCpu(r.full, 110, 3, 20);
  return r;
}

}  // namespace sat::probe::results
