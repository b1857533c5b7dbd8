// The files a tune leaves in --out: results.json (`--json` prints the same), results.csv (one row per trial) and
// report.html (html_report.h). Pure formatting, except WriteOutputs.
//
// results.json: {version, command, shell, strategy, machine, budget_s, wall_s, interrupted, budget_spent,
//   knobs: [{name, kind, range, role, delivery, exposed, script_value, note}],
//   baseline, recommended, fastest, largest_fitting (knob values, null when not determined), largest_batch_tried
//   (the batch where the climb stopped short of memory, else null), plan (the budget plan's sentence, or null),
//   throughput: {baseline, recommended, fastest_compute, recommended_compute} (samples/s, null when unmeasured),
//   speedup: {ratio, claim} (the confirmation over the baseline: "faster" or "slower" with the ratio, or
//   "not distinguishable" with a null ratio; both null when not measured), energy: {baseline, recommended} (each
//   {joules_per_sample, samples_per_kwh, watts, method}: the GPU's, or null without a reading), cost (flops.h CostJson:
//   null without --price-per-hour), auto (the baseline was instrumented
//   automatically), loader: {key, site} (the training DataLoader, or null), injected (knob names set by the
//   automatic instrumentation), code_changes: [{knobs, where, code, text}],
//   recommended_command, fastest_command, needs: {cpu_cores, ram_bytes, cpu_pct_p95, rss_peak_bytes, text},
//   decisions: [{step, text, trials}], warnings, failure, trials_run, trials_cached, cache,
//   flops (tune/flops.h FlopsJson: the FLOP count, and FLOP/s and MFU of the baseline and recommendation; null
//   when nothing was counted), trace (core::TraceOutcomeJson: null without --trace),
//   trials: [TrialToJson... plus flops_rate (core::FlopsReadingJson)]}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tune/tune.h"
#include "util/result.h"

namespace sat::tune {

nlohmann::json ResultsJson(const TuneResult& result);

// Header: id,step,mode,<one column per knob>,cached,exit_class,samples_per_s,ci_low,ci_high,converged,counts
// (compare.h's Reliable),steady_steps,too_slow,warmup_s,wall_s,mem_peak_bytes,mem_total_bytes,gpu_util_pct,
// cpu_pct,rss_peak_bytes,flops_per_s,mfu. Unknown values are empty cells.
std::string ResultsCsv(const TuneResult& result);

// Writes results.json, results.csv and report.html into `dir` (created).
Status WriteOutputs(const TuneResult& result, const std::string& dir);

}  // namespace sat::tune
