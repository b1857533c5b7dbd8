// The record of one `saturate probe`: what each stage measured, where the data lives, what probe found about the
// storage, and the verdict. Plain structs, filled by the orchestrator (probe.h RunProbe) and read by the verdict's
// rules, the storage findings, the what-if and the reports; nothing here decides or draws, so every file of probe
// can read the record without the orchestrator's header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/data_location.h"
#include "core/machine.h"
#include "core/stage.h"
#include "core/trace_summary.h"
#include "core/what_if.h"
#include "probe/local_copy.h"
#include "datastore/cold_read.h"
#include "telemetry/page_cache.h"

namespace sat::probe {

// The verdict of the rules in verdict.h (Decide).
struct Verdict {
  // "loader", "storage", "compute", "transfer", "step-overhead", "straggler"; empty: failed/unknown
  std::string bottleneck;
  std::string cause;       // why that pipe is narrow, e.g. "loader CPU-saturated", "network filesystem"
  std::string evidence;    // the numbers, "; "-separated: "loader 212 samples/s < compute 1,840 samples/s; ..."
  std::string next;        // the next knob to turn
  std::vector<std::string> notes;  // headroom, network data, misleading utilisation, estimate quality, ...
  bool failed = false;     // the run itself failed (out of memory, crash); `failure` says how
  std::string failure;     // "the run ran out of GPU memory: ..."
};

// The data files of a run (storage.h DataFilesOf: best source first).
struct DataFiles {
  std::vector<std::string> paths;   // a sample of the files the run read, sorted, no duplicates
  std::string source;               // "helper", "scan", "arguments", or "" when none was found
  int64_t opens = 0;                // data-file opens the helper counted in the full stage (0: not counted)
  std::vector<std::string> writes;  // files the run opened for writing (the helper's and the scans')
};

// What probe found about the storage the run reads and writes (storage.h).
struct StorageFindings {
  DataFiles files;
  // A sample of the files under the command line's data paths just before the full stage, the run's first: what
  // the cache held before the run read anything (nullopt: no data path on the command line).
  std::optional<telemetry::ResidencySample> page_cache_before_run;
  // A sample of the data files just before the loader stage (the full stage read them first, as training does).
  std::optional<telemetry::ResidencySample> page_cache;
  // A sample of the data files read cold from their mount and from a local copy (datastore/cold_read.h), when due
  // (LocalCopyDue): the storage rule's evidence and the local-copy what-if's.
  std::optional<datastore::ColdReadComparison> cold_reads;
  std::optional<LocalCopyWhatIf> local_copy;
  std::string local_copy_why_not;            // the what-if was due but not measured (the cold reads' error, or why)
  std::vector<core::DataLocation> write_locations;  // of `files.writes`
  std::optional<double> write_bytes_per_s;    // the full stage's tree, to storage (/proc/PID/io write_bytes)
};

// One probe: its command and machine, the three stages, and what was found from them.
struct ProbeResult {
  std::vector<std::string> command;
  core::Machine machine;
  double budget_s = 0, wall_s = 0;
  double target_rel_half_width = 0.02;       // --target: the interval each stage's estimate aimed for
  bool helper = false;                       // the script reports over the helper channel: explicitly or automatically
  bool auto_instrumented = false;            // ... through the automatic instrumentation (no `import saturate`)
  bool auto_enabled = true;                  // the automatic instrumentation was on (off with --no-auto or --parse)
  bool parse = false;                        // --parse: the pattern is the only source of throughput
  bool interrupted = false;                  // Ctrl-C: the stages measured so far are kept
  core::StageResult loader, compute, full;         // a stage that did not run has ran == false
  std::vector<core::DataLocation> data_locations;  // where the files the run read live
  StorageFindings storage;                         // its data files, page cache, fetch vs prep, local copy, writes
  Verdict verdict;
  // Without --out: the temporary folder of the stages' logs, kept because the run failed; empty when it was
  // removed (a probe that did not fail leaves nothing behind) or with --out.
  std::string kept_log_dir;
  // --trace: the full stage's profiler trace, its summary or why there is none; absent without --trace.
  std::optional<core::TraceOutcome> trace;
  std::optional<double> price_per_gpu_hour;  // --price-per-hour, as given
  std::vector<core::WhatIfTarget> what_if;  // --what-if: the GPUs to estimate (core/what_if.h); empty: no section
};

}  // namespace sat::probe
