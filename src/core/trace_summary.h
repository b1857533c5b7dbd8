// A short reading of a torch.profiler Chrome trace (the file `--trace` has the helper write): where the profiled
// steps' time went. Collection (SummarizeTrace) apart from presentation (TraceLines, TraceJson).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "measure/helper_message.h"
#include "util/result.h"

namespace sat::core {

struct TraceTop {
  std::string name;    // a GPU kernel, or a CPU operator ("aten::mm")
  double total_us = 0;  // GPU: kernel time inside the steps; CPU: the operator's self time (children left out)
  int64_t count = 0;
  double share = 0;     // of the steps' wall time
};

struct TraceSummary {
  std::string path;
  int steps = 0;        // "ProfilerStep#N" spans
  double step_us = 0;   // their mean length
  double window_us = 0;  // from the first step's start to the last step's end
  // GPU activity inside the window: kernels, memory copies and sets (each as the union of its intervals, so
  // overlapping streams count once), and the share with none of them. Meaningful only when `gpu`.
  bool gpu = false;
  double kernel_share = 0, memcpy_share = 0, memset_share = 0, idle_share = 0;
  std::vector<TraceTop> top;  // GPU: the top kernels; without GPU activity: the top CPU operators; largest first
};

// Reads the Chrome trace at `path` (the JSON torch.profiler's export_chrome_trace writes: complete events,
// "ph": "X", with ts and dur in microseconds, under "traceEvents" from Kineto or as a bare array from the legacy
// profiler of a torch built without Kineto) and summarises the ProfilerStep spans. Kernels are events of category
// "kernel", copies "gpu_memcpy", sets "gpu_memset"; CPU operators "cpu_op" (legacy traces have no categories:
// pid "CPU functions" holds the operators, "CUDA functions" the GPU work). An error names the file and the
// problem: unreadable, not JSON, no events, no profiler steps.
Result<TraceSummary> SummarizeTrace(const std::string& path, size_t top_n = 5);

// Where `--trace` writes: DIR/trace.json under an output folder, else saturate-COMMAND-trace-YYYYmmdd-HHMMSS.json
// in the working directory; absolute either way.
std::string TracePath(const std::string& out_dir, std::string_view command);

// What became of a trace asked of a run: its summary, or why there is none (the helper's `trace` message said
// so, it never came, or the file could not be read).
struct TraceOutcome {
  std::string path;
  std::optional<TraceSummary> summary;
  std::string error;
};
TraceOutcome CollectTrace(const std::string& path, const std::optional<measure::TraceInfo>& sent);
// probe.json's and results.json's "trace": null when none was asked for, else {path, error, summary (TraceJson or
// null)}.
nlohmann::json TraceOutcomeJson(const std::optional<TraceOutcome>& outcome);
// The report's lines for an outcome: TraceLines, or "trace: none (WHY)".
std::vector<std::string> TraceOutcomeLines(const TraceOutcome& outcome);

// The report's lines, each without a newline:
//   "trace: PATH (3 steps of 41.2 ms)"
//   "  GPU: idle 38%, kernels 55%, memory copies 7%, sets 0%" or
//   "  no GPU activity in the trace (run on a GPU for the idle, kernel and copy shares)"
//   "  top kernels: NAME 12% (24×), ..." or "  top CPU ops (self time): aten::mm 31% (300×), ..."
std::vector<std::string> TraceLines(const TraceSummary& summary);

// {path, steps, step_ms, gpu, idle_share, kernel_share, memcpy_share, memset_share (null without GPU activity),
//  top: [{name, total_ms, count, share}], top_kind ("kernel" or "cpu_op")}.
nlohmann::json TraceJson(const TraceSummary& summary);

}  // namespace sat::core
