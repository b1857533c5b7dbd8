// The verdict of `saturate probe`: which pipe of the training pipeline is the narrowest, the numbers that show
// it, and the next knob to turn. It encodes the field guides: measure the loader alone (the upper bound), then
// the model alone (the compute ceiling), then both; tune in the order mixed precision, loader workers, batch
// size, pinned memory; read data from a local drive; do not trust GPU utilisation on its own.
//
// Inputs are the stages of a ProbeResult. With the helper (`import saturate`, or the automatic instrumentation of
// a PyTorch script), loader, compute and full may all have run; without it only full ran, and its data-wait and
// phase shares come from parsed output lines. The same rules serve both, so a script gets the same bottleneck
// either way. When the automatic instrumentation found the training DataLoader, a next step that turns one of
// its knobs names the line that built it ("DataLoader at train.py:57: num_workers=0 → try 4").
//
// Rules, first match wins:
//   1. failed: the full stage (or, when full was not measured, any stage) ended gpu_oom, host_oom,
//      worker_killed, failed or start_failed. The run cannot train as configured; no bottleneck is named.
//   2. unknown: no stage measured a throughput from enough steady data (at least kMinSteadyS seconds after the
//      warm-up cut, and a 95% interval, when there is one, within ±kMaxUsableRelHalfWidth; an interrupted or
//      short run has less). No bottleneck; the evidence says why, with the rates that were seen. A stage short of
//      steady data is left out of the rules below too, with a note.
//   3. straggler: in a distributed job one rank is at least kStragglerShare of a step slower than the others'
//      median (probe/ranks.h): it is named with its own cause (its data loading, its forward pass, its steps).
//   4. loader vs step-overhead: the loader is "bound" when its stage runs below kLoaderNarrowRatio x compute,
//      or when full waits for data at least kDataWaitBoundShare of each step; step overhead is "bound" when
//      named phases that are neither compute nor copies (metrics, logging, checkpoints) take at least
//      kOverheadBoundShare. When both hold, the larger share of the step wins (what removing it would save).
//      The loader's cause: first, the storage rule (datastore/storage_wait.h, on the loader stage, else the full stage:
//      its CPU against its wait, its processes in 'D', cold reads of its files, the mount): a loader waiting on
//      storage makes the bottleneck "storage", naming the filesystem, its kind and the evidence, and as next steps
//      the local copy's what-if (or faster storage, where a local copy reads as slowly) and, where each reader
//      mostly waits, more workers with their what-if; then
//      the host's CPU at kHostCpuBusyPct (more workers cannot help); its processes' CPU at kCpuSaturatedShare of
//      the cores they can use, or prep at kPrepBoundShare of its time (the loader's CPU side); without a split,
//      "storage" when iowait, disk busy or a network filesystem says so; else latency (more workers or prefetch).
//   5. transfer: a GPU is probed, loader and compute both measured, full below kTransferGapRatio x the
//      narrower of them, little data wait and overhead: the time goes to host-to-device copies. Also when
//      copy-named phases take kOverheadBoundShare.
//   6. compute: everything else. On a GPU busy under kLowGpuUtilPct the step is bound by CPU-side work. On a
//      busier GPU, MFU (mfu.h) below kLowMfu points at small kernels and launch overhead (CUDA graphs,
//      torch.compile, a larger batch); from kNearPeakMfu on, only fewer FLOPs or a faster GPU help (or, for an
//      fp32 run, the GPU's 16-bit units). The evidence carries the achieved FLOP/s, on a CPU too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mfu.h"
#include "core/stage.h"
#include "probe/probe_result.h"
#include "probe/stage_reading.h"

namespace sat::probe {

// Thresholds of the rules above.
inline constexpr double kLoaderNarrowRatio = 0.9;     // loader < 0.9 x compute: the loader is the narrower pipe
inline constexpr double kFullAboveLoaderRatio = 1.1;  // full > 1.1 x loader: the loader stage understates it
inline constexpr double kDataWaitBoundShare = 0.3;    // waiting for data >= 30% of each step: loader-bound
inline constexpr double kOverheadBoundShare = 0.15;   // named overhead phases >= 15% of each step
inline constexpr double kSmallWaitShare = 0.1;        // below this the data wait does not explain a gap
inline constexpr double kAtCeilingRatio = 0.9;        // full >= 0.9 x compute (the narrower stage): at the ceiling
inline constexpr double kTransferGapRatio = 0.85;     // full < 0.85 x min(loader, compute): copies in between
inline constexpr double kCpuSaturatedShare = 0.85;    // tree CPU >= 85% of the cores its processes can use
inline constexpr double kHostCpuBusyPct = 90;         // the whole machine's CPU (100 = every core)
inline constexpr double kIowaitHighPct = 10;          // host iowait, % of all CPU time
inline constexpr double kDiskBusyPct = 70;            // busiest disk's share of time with I/O in flight
inline constexpr double kLowGpuUtilPct = 50;          // a compute-bound step on a GPU this idle is CPU-side
inline constexpr double kHighGpuUtilPct = 85;         // "utilisation looks high"
inline constexpr double kUtilOverstatesRatio = 0.8;   // ... while full runs below 0.8 x the compute ceiling
inline constexpr double kMemHeadroomShare = 0.5;      // peak GPU memory under half: room for more
inline constexpr double kMemNearlyFullShare = 0.9;    // peak GPU memory above this: a larger batch will not fit
inline constexpr double kPrepBoundShare = 0.5;        // the loader on the CPU half its time or more: prep

// Pure: reads only `result` (its stages, machine and data locations; not result.verdict).
Verdict Decide(const ProbeResult& result);

// Readings shared by the verdict and the report.
// A probe stage's FLOP/s reading (core/mfu.h): its own count, else the full stage's (the same model); nothing for
// the loader stage or a stage that measured no rate.
core::FlopsReading StageFlops(const ProbeResult& result, const core::StageResult& stage);
// The probed GPU's memory in bytes: as sampled during the stage, else as the machine reported it.
std::optional<double> GpuMemoryTotal(const ProbeResult& result, const core::StageTelemetry& telemetry);

// Why the full stage got no report over the helper channel, in the user's terms: --parse or --no-auto turned the
// automatic instrumentation off, it could not start, the script never imported torch, or it reached no training
// step. For a script that does not import saturate; used as the skip reason of the loader and compute stages.
std::string NoReportsWhy(const ProbeResult& result);

// The automatic instrumentation's phase for the time from the end of a step to the next request for a batch.
inline constexpr std::string_view kAfterStepPhase = "after_step";
// A phase's name as the verdict and the report write it: after_step is "after-step work (metrics, logging,
// checkpoints)"; other names as they are.
std::string PhaseLabel(std::string_view phase);

}  // namespace sat::probe
