// The report of `saturate probe`, from one ProbeResult: the console text people read, and probe.json (printed
// by --json, kept by --out) with the same content for programs. Pure formatting: no I/O, no decisions (the
// verdict comes from result.verdict, as Decide left it).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/probe_result.h"

namespace sat::probe {

// The pipe, top to bottom: the command and machine; which stages ran and how the script reported
// ("instrumented automatically (no import saturate)", "`import saturate`", "--parse", or why nothing came); one
// row per stage (samples/s with its 95% interval, steady seconds, and what the sampler saw: loader CPU and
// workers, GPU utilisation and memory used / total, the full run's share of the narrowest pipe); the training
// DataLoader the automatic instrumentation found (where it was built, its settings, where samples and steps were
// counted, other loaders left out); the step-time breakdown (data wait / model or "compute and the rest" / named
// phases, after_step as "after-step work (metrics, logging, checkpoints)"); the helper's FLOP count with the
// achieved FLOP/s and MFU of full and compute ("flops: ...", mfu.h; also in the stage rows); with --trace the
// trace's summary (trace_summary.h's TraceLines); where the data lives, one line per mount, then the storage
// lines (storage.h StorageLines: the loader's fetch and prep, the page cache, the local-copy what-if, writes); the
// notes; and last the one line
// `verdict: <bottleneck> — <evidence>; next: <knob>` ("failed" or "unknown" in place of the bottleneck when
// there is none). Numbers carry thousands separators; anything not measured reads "n/a". Every line ends in
// '\n'; line breaks inside texts (a command, an error detail) are turned into spaces, so exactly one line
// starts with "verdict: ".
std::string ConsoleReport(const ProbeResult& result);

// probe.json:
//   version (saturate's), command [argv], machine {cpu_count, mem_total_bytes, gpu_index, gpu_name,
//   gpu_mem_total_bytes}, budget {limit_s, wall_s}, helper (reports over the helper channel, explicitly or
//   automatically), instrumentation ("auto", "helper", "parse" or "none"), auto_enabled, interrupted,
//   stages {loader, compute, full}, each {ran, skipped_why, helper_seen, auto_seen, parsed_lines, torch_loaded
//     (null: not seen either way), auto_failure, no_loader, training_loader (null, or {key, site, dataset,
//     iterable, num_workers, pin_memory, batch_size, prefetch_factor, persistent_workers, injected {knob: value},
//     samples_from, step_at, others}), knobs {name: value}, knobs_auto [name], knob_errors {name: why},
//     world_size, batch (null, or {world_size, per_device, global, last_batch, batchnorm, drop_last}), ranks
//     [{rank, pid, steps, samples_per_s, data_wait_share, step_ms, own_ms, to_backward_ms}], straggler (null, or
//     {rank, cause, excess_share}), samples_per_s, ci_low, ci_high, rel_half_width, warmup_s, steady_s,
//     steady_from_t, steady_to_t (the steady part on CLOCK_MONOTONIC), n_batches, converged, stopped_above (the
//     rate the stage stopped on before converging, StageOptions::stop_above; null when none), drift, drift_rel,
//     warmup_at_limit, observations, data_wait_share, phase_shares {name: share}, flops (mfu.h FlopsInfoJson:
//     the helper's count, null when none), flops_rate (FlopsReadingJson: flops_per_s, precision,
//     peak_flops_per_s, mfu, gpu_model, no_mfu_why; nulls when unknown), step_parts (null, or
//     {data_wait, model, after_step, other_phases}: shares of loop time adding up to 1), totals {steps, samples,
//     wait_s, step_s, excluded_s, phases_s, mem_peak_bytes, processes, done_reason}, outcome {class, detail,
//     exit_code, signal, duration_s} (null when the stage did not run), telemetry {gpu_util_pct, gpu_mem_used_bytes, gpu_mem_total_bytes, tree_cpu_pct, tree_sys_cpu_pct,
//     tree_rss_bytes, tree_read_bytes_per_s, tree_rchar_per_s, tree_write_bytes_per_s, tree_blocked,
//     tree_processes, tree_gpu_mem_bytes, host_cpu_pct,
//     host_iowait_pct, disk_busy_pct, disk_read_bytes_per_s, gpu_pcie_rx_bytes_per_s, cpu_count; each summary {count, mean, p50, p95,
//     min, max} or null}, workers, series [[t_s, samples_per_s], ...], wall_s, log_dir},
//   trace (null without --trace, else {path, error, summary: TraceJson or null}),
//   what_if (null without --what-if, else {estimate: true, lines [{label, samples_per_s, narrowest, vs_now,
//     per_epoch, note}], assumptions [...], unavailable_why}: what_if.h),
//   data_locations [{path, file_count, mount_point, fs_type, device, network}] (of the data files: storage.h),
//   storage (storage.h StorageJson: data_files, page_cache, loader_time, fetch_bound, local_copy, writes),
//   verdict {bottleneck (null when none), cause, evidence, next, notes [...], failed, failure}.
// samples_per_s and its interval are null for a stage that measured nothing; no infinity or NaN reaches the
// JSON (null instead). Shares are 0..1, times in seconds, memory in bytes.
nlohmann::ordered_json ProbeJson(const ProbeResult& result);

// Pieces of the report that report.html (probe/html_report.h) shows too.

// The loop time of a stage in parts that add up to 1: waiting for data, named phases (largest first), and the
// rest: the model (forward, backward, optimizer) and anything else the script does in the loop. nullopt when the
// stage measured nothing or reported neither a data wait nor phases.
struct StepParts {
  double data_wait = 0;
  std::vector<std::pair<std::string, double>> phases;
  double rest = 1;
};
std::optional<StepParts> StepPartsOf(const core::StageResult& stage);

// "flops: 4.10 GFLOP per sample (...) · full 1.23 TFLOP/s, MFU 38% of ... · compute ..."; "" when the helper
// counted nothing and the script did not report through it.
std::string FlopsLine(const ProbeResult& result);
// "energy: full 1.23 J per sample (2,930 samples/kWh) at 251 W · ..., from NVML's energy counter"; n/a with the
// reason when no stage has a reading; "" when no stage measured anything.
std::string EnergyLine(const ProbeResult& result);
// "cost: full $0.52 per million samples, ... at 2.50 per GPU-hour x 2 GPUs"; "" without --price-per-hour.
std::string CostLine(const ProbeResult& result);

}  // namespace sat::probe
