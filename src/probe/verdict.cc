#include "probe/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "core/mfu.h"
#include "probe/ranks.h"
#include "probe/storage.h"
#include "util/strings.h"

namespace sat::probe {
namespace {

using telemetry::Summary;

std::optional<double> RateOf(const core::StageResult& s) {
  if (!core::StageMeasured(s) || !EnoughSteadyData(s)) return std::nullopt;
  return s.estimate.samples_per_s;
}

// What a named phase stands for. Phases named after the model's own work are compute, copy-named ones are
// transfers, anything else (metrics, logging, checkpoint, eval ...) is overhead on top of the step.
enum class PhaseKind { kOverhead, kCompute, kTransfer };

PhaseKind ClassifyPhase(std::string_view name) {
  std::string n = ToLower(name);
  auto has = [&n](std::string_view word) { return n.find(word) != std::string::npos; };
  constexpr std::array<std::string_view, 6> kTransferWords = {"h2d", "to_device", "transfer", "copy", "memcpy",
                                                              "host_to_device"};
  constexpr std::array<std::string_view, 6> kComputeWords = {"forward", "backward", "optim", "fwd", "bwd",
                                                             "zero_grad"};
  constexpr std::array<std::string_view, 5> kComputeNames = {"step", "train_step", "loss", "model", "compute"};
  if (std::any_of(kTransferWords.begin(), kTransferWords.end(), has)) return PhaseKind::kTransfer;
  if (std::any_of(kComputeWords.begin(), kComputeWords.end(), has)) return PhaseKind::kCompute;
  if (std::find(kComputeNames.begin(), kComputeNames.end(), n) != kComputeNames.end()) return PhaseKind::kCompute;
  return PhaseKind::kOverhead;
}

// The numbers the rules read, gathered once.
struct Pipe {
  std::optional<double> loader, compute, full;
  std::optional<double> wait;  // share of each full step spent waiting for data
  std::vector<std::pair<std::string, double>> overhead_phases;  // largest share first
  double overhead = 0;         // their summed share (nested phases may count twice; capped at 1)
  double transfer_phases = 0;  // copy-named phases' summed share
  const core::StageResult* loop = nullptr;     // the stage that describes the training loop: full, else compute
  const core::StageResult* loading = nullptr;  // the stage whose CPU describes the loader: loader, else full
  bool gpu = false;
  unsigned cores = 0;
  bool loader_narrow = false;  // the loader stage is below kLoaderNarrowRatio x compute
  // Full runs within kAtCeilingRatio of the compute stage, which is the narrower one and waits for no data: the
  // data wait was CPU time that overlapped work the GPU already had queued (its kernels run asynchronously), so it
  // cost no throughput. Seen on an H100: ResNet-50 waited for data 33% of each step at 94% of its compute ceiling.
  // (Named phases are not excused: the compute stage runs them too, so its ceiling already pays for them.)
  bool at_compute_ceiling = false;
};

Pipe Gather(const ProbeResult& r) {
  Pipe p;
  p.loader = RateOf(r.loader);
  p.compute = RateOf(r.compute);
  p.full = RateOf(r.full);
  p.gpu = r.machine.gpu_index >= 0;
  p.cores = r.machine.cpu_count;
  if (p.full) {
    p.loop = &r.full;
    p.wait = r.full.data_wait_share;
  } else if (p.compute) {
    p.loop = &r.compute;
  }
  p.loading = p.loader ? &r.loader : (p.full ? &r.full : nullptr);
  if (p.loop != nullptr) {
    for (const auto& [name, share] : p.loop->phase_shares) {
      if (!std::isfinite(share) || share <= 0) continue;
      PhaseKind kind = ClassifyPhase(name);
      if (kind == PhaseKind::kOverhead) p.overhead_phases.emplace_back(name, share);
      if (kind == PhaseKind::kTransfer) p.transfer_phases += share;
    }
    std::stable_sort(p.overhead_phases.begin(), p.overhead_phases.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& phase : p.overhead_phases) p.overhead += phase.second;
    p.overhead = std::min(p.overhead, 1.0);
  }
  // A full run faster than the loader alone shows that the loader stage understates the loader.
  bool loader_understated = p.loader && p.full && *p.full > kFullAboveLoaderRatio * *p.loader;
  p.loader_narrow = p.loader && p.compute && *p.loader < kLoaderNarrowRatio * *p.compute && !loader_understated;
  p.at_compute_ceiling = p.full && p.compute && !p.loader_narrow && *p.full >= kAtCeilingRatio * *p.compute;
  return p;
}

// How busy the loader's CPU was, from the loader stage (or full without it).
struct LoaderCpu {
  std::optional<double> tree_pct;  // 100 = one core
  std::optional<int> workers;      // DataLoader worker processes (WorkerCount)
  unsigned cores = 0;
  double usable_cores = 1;         // what the tree's processes can use at most
  std::optional<double> host_pct, iowait_pct, disk_busy_pct;
  bool tree_saturated = false, host_busy = false;
};

LoaderCpu ReadLoaderCpu(const core::StageResult& stage, unsigned machine_cores) {
  const core::StageTelemetry& t = stage.telemetry;
  LoaderCpu c;
  c.tree_pct = core::MeanOf(t.tree_cpu_pct);
  c.workers = StageWorkers(stage);
  c.cores = t.cpu_count > 0 ? t.cpu_count : machine_cores;
  // With no workers the trainer loads alone (one core); with N workers they load on N cores.
  c.usable_cores = std::max(1, c.workers.value_or(0));
  if (c.cores > 0) c.usable_cores = std::min(c.usable_cores, static_cast<double>(c.cores));
  c.host_pct = core::MeanOf(t.host_cpu_pct);
  c.iowait_pct = core::MeanOf(t.host_iowait_pct);
  c.disk_busy_pct = core::MeanOf(t.disk_busy_pct);
  c.tree_saturated = c.tree_pct && *c.tree_pct >= kCpuSaturatedShare * 100 * c.usable_cores;
  c.host_busy = c.host_pct && *c.host_pct >= kHostCpuBusyPct;
  return c;
}

std::string CoresText(double n) { return fmt::format("{:.0f} core{}", n, n == 1 ? "" : "s"); }

std::string CpuEvidence(const LoaderCpu& c, std::string_view label) {
  std::vector<std::string> parts;
  if (c.tree_pct) {
    std::string workers = c.workers ? fmt::format(" with {} worker{}", *c.workers, *c.workers == 1 ? "" : "s") : "";
    parts.push_back(
        fmt::format("{} CPU {} of {}{}", label, FormatPct(*c.tree_pct), CoresText(c.usable_cores), workers));
  }
  if (c.host_pct) {
    std::string cores = c.cores > 0 ? fmt::format(" of {}", CoresText(c.cores)) : "";
    parts.push_back(fmt::format("host CPU {}{}", FormatPct(*c.host_pct), cores));
  }
  if (c.iowait_pct && *c.iowait_pct >= kIowaitHighPct) parts.push_back("iowait " + FormatPct(*c.iowait_pct));
  if (c.disk_busy_pct && *c.disk_busy_pct >= kDiskBusyPct) parts.push_back("disk busy " + FormatPct(*c.disk_busy_pct));
  return JoinNonEmpty(parts, "; ");
}

const core::DataLocation* NetworkData(const ProbeResult& r) {
  for (const core::DataLocation& loc : r.data_locations) {
    if (loc.network) return &loc;
  }
  return nullptr;
}

std::string WorkersNow(const LoaderCpu& c) {
  std::string machine = c.cores > 0 ? fmt::format("; the machine has {}", CoresText(c.cores)) : "";
  if (!c.workers) return machine.empty() ? "" : fmt::format(" ({})", machine.substr(2));
  return fmt::format(" (now {}{})", *c.workers, machine);
}

// The training DataLoader as the automatic instrumentation saw it in the full stage, when it named the line that
// built it: the verdict can then name the code to change. Null otherwise.
const measure::LoaderInfo* SeenLoader(const ProbeResult& r) {
  const core::StageResult& f = r.full;
  if (!f.auto_seen || !f.loader || !f.loader->site) return nullptr;
  return &*f.loader;
}

// "DataLoader at train.py:57: num_workers=0 → try 4", or "" when the loader or its worker count is unknown or no
// more workers fit.
std::string WorkersAt(const measure::LoaderInfo* l, unsigned cores) {
  if (l == nullptr || !l->num_workers) return "";
  std::optional<int64_t> next = MoreWorkers(*l->num_workers, cores);
  if (!next) return "";
  std::string machine = cores > 0 ? fmt::format(" (the machine has {})", CoresText(cores)) : "";
  return fmt::format("DataLoader at {}: num_workers={} → try {}{}", *l->site, *l->num_workers, *next, machine);
}

// "prefetch_factor=2 → try 4" for a loader with workers; "" otherwise.
std::string PrefetchAt(const measure::LoaderInfo* l) {
  if (l == nullptr || !l->prefetch_factor || l->num_workers.value_or(0) == 0) return "";
  return fmt::format("prefetch_factor={} → try {}", *l->prefetch_factor, 2 * *l->prefetch_factor);
}

// " (DataLoader at train.py:57: batch_size=64 → try 128)", or "" when the loader or its batch size is unknown.
std::string BatchAt(const measure::LoaderInfo* l) {
  if (l == nullptr || !l->batch_size || *l->batch_size <= 0) return "";
  return fmt::format(" (DataLoader at {}: batch_size={} → try {})", *l->site, *l->batch_size, 2 * *l->batch_size);
}

void DecideLoader(const ProbeResult& r, const Pipe& p, Verdict& v) {
  v.bottleneck = "loader";
  std::vector<std::string> evidence;
  if (p.loader_narrow) {
    evidence.push_back(fmt::format("loader {} < compute {}", FormatRate(*p.loader), FormatRate(*p.compute)));
  } else if (p.full) {
    evidence.push_back("full " + FormatRate(*p.full));
  }
  if (p.wait) evidence.push_back(fmt::format("data wait {} of each step", FormatShare(*p.wait)));

  LoaderCpu cpu = p.loading ? ReadLoaderCpu(*p.loading, p.cores) : LoaderCpu{};
  // Whether the machine's cores are busy is a question about training, not the loader stage: alone, with nothing
  // to wait for, a loader with no workers fills torch's thread pool (docs/benchmarks.md, "Incidents behind the
  // rules").
  if (p.full && p.loading != &r.full) {
    if (std::optional<double> host = core::MeanOf(r.full.telemetry.host_cpu_pct)) {
      cpu.host_pct = host;
      cpu.host_busy = *host >= kHostCpuBusyPct;
    }
  }
  evidence.push_back(CpuEvidence(cpu, p.loading == &r.loader ? "loader" : "run"));
  // Whether the loader waits on storage (the storage rule, storage.h): with its split, storage is what the loader
  // waits on, not where the data lives.
  const core::StageResult* split_from = nullptr;
  const StorageWait wait = StorageWaitOf(r, &split_from);
  const std::optional<LoaderTimeSplit>& split = wait.split;
  if (split) {
    evidence.push_back(fmt::format("{} time: fetch {}, prep {}", split_from == &r.loader ? "loader" : "loading",
                                   FormatShare(split->fetch), FormatShare(split->prep)));
  }
  const core::DataLocation* remote = split ? nullptr : NetworkData(r);
  bool storage_busy = !split && ((cpu.iowait_pct && *cpu.iowait_pct >= kIowaitHighPct) ||
                                 (cpu.disk_busy_pct && *cpu.disk_busy_pct >= kDiskBusyPct));
  std::string workers_at = WorkersAt(SeenLoader(r), cpu.cores);

  if (wait.finding == StorageFinding::kStorage) {
    // Fetch stalls bind: storage is the narrowest pipe. A local copy removes the round trips; more workers overlap
    // them where each reader mostly waits (both where both explain the wait).
    v.bottleneck = "storage";
    v.cause = FetchStallCause(r, *split);
    const std::string copy = StorageNext(r, wait);
    std::string overlap;
    if (wait.more_readers_help && !workers_at.empty()) {
      std::optional<MoreReaders> more = MoreReadersWhatIf(r);
      overlap = "; or overlap the round trips: " + workers_at + (more ? MoreReadersTail(*more) : "");
    }
    v.next = copy + overlap;
  } else if (cpu.host_busy) {
    v.cause = "CPU-bound loader: the machine's cores are busy";
    v.next = "cheaper transforms, or preload / cache decoded data (every core is busy, so more workers would "
             "not help)";
  } else if (cpu.tree_saturated || (split && split->prep >= kPrepBoundShare)) {
    // The loader's own CPU: decoding and transforms (prep), not the storage behind it.
    v.cause = cpu.tree_saturated ? "loader CPU-saturated" : "loader CPU: prep (decoding, transforms)";
    if (split) v.cause += fmt::format(", prep {} of its time", FormatShare(split->prep));
    v.next = workers_at.empty()
                 ? fmt::format("more loader workers{} or cheaper transforms / preload / cache decoded data",
                               WorkersNow(cpu))
                 : workers_at + ", or cheaper transforms / preload / cache decoded data";
  } else if (remote != nullptr || storage_busy) {
    v.bottleneck = "storage";
    v.cause = remote != nullptr ? "data on a network filesystem" : "storage: the loader waits for the disk";
    if (remote != nullptr) {
      evidence.push_back(fmt::format("{} files on {} ({})", GroupThousands(remote->file_count),
                                     remote->mount_point, remote->fs_type));
    }
    v.next = "stage the data on a local disk / faster storage";
  } else {
    v.cause = cpu.tree_pct ? "loader latency: its CPU is not saturated and the disk is not busy"
                           : "loader (CPU use not measured)";
    const measure::LoaderInfo* seen = SeenLoader(r);
    std::string workers = workers_at, prefetch = PrefetchAt(seen);
    if (!workers.empty()) {
      v.next = JoinNonEmpty({workers, prefetch}, ", or ");
    } else if (!prefetch.empty()) {
      v.next = fmt::format("DataLoader at {}: {}", *seen->site, prefetch);
    } else {
      v.next = fmt::format("more loader workers{} or a larger prefetch_factor", WorkersNow(cpu));
    }
  }
  v.evidence = JoinNonEmpty(evidence, "; ");
}

// "per-step metrics work"; the automatic layer's after_step phase in words.
std::string OverheadWork(const std::string& phase) {
  if (phase == kAfterStepPhase) return PhaseLabel(phase);
  return fmt::format("per-step {} work", phase);
}

void DecideOverhead(const Pipe& p, Verdict& v) {
  v.bottleneck = "step-overhead";
  const std::string& top = p.overhead_phases.front().first;
  v.cause = OverheadWork(top);
  std::vector<std::string> phases;
  for (const auto& [name, share] : p.overhead_phases) {
    phases.push_back(fmt::format("{} {}", PhaseLabel(name), FormatShare(share)));
  }
  std::vector<std::string> evidence = {fmt::format("{} of each step", JoinNonEmpty(phases, ", "))};
  if (p.overhead < 1) {
    evidence.push_back(fmt::format("without that work a step would take {} of its time (up to {:.2f}x the throughput)",
                                   FormatShare(1 - p.overhead), 1 / (1 - p.overhead)));
  }
  if (p.wait) evidence.push_back(fmt::format("data wait {}", FormatShare(*p.wait)));
  if (p.full) evidence.push_back("full " + FormatRate(*p.full));
  v.evidence = JoinNonEmpty(evidence, "; ");
  v.next = top == kAfterStepPhase
               ? "thin the work after each training step (metrics, logging, checkpoints): do it every N steps, "
                 "off the hot path"
               : fmt::format("drop or thin the {} (compute it every N steps, off the hot path)", OverheadWork(top));
}

std::optional<Summary> LoopGpu(const Pipe& p, std::optional<Summary> core::StageTelemetry::*field) {
  if (p.loop == nullptr) return std::nullopt;
  return p.loop->telemetry.*field;
}

// "GPU util 97%, SM active 38%, tensor cores 9%, memory 10.2 of 16.0 GiB" from the loop's stage; GPM beside
// utilisation where the GPU counts it (Hopper and later); empty without GPU telemetry.
std::string GpuEvidence(const ProbeResult& r, const Pipe& p) {
  std::vector<std::string> parts;
  if (std::optional<Summary> util = LoopGpu(p, &core::StageTelemetry::gpu_util_pct)) {
    parts.push_back("GPU util " + FormatPct(util->p50));
  }
  if (std::optional<Summary> sm = LoopGpu(p, &core::StageTelemetry::gpm_sm_active_pct)) {
    parts.push_back("SM active " + FormatPct(sm->p50));
  }
  if (std::optional<Summary> tensor = LoopGpu(p, &core::StageTelemetry::gpm_tensor_active_pct)) {
    parts.push_back("tensor cores " + FormatPct(tensor->p50));
  }
  if (std::optional<Summary> mem = LoopGpu(p, &core::StageTelemetry::gpu_mem_used_bytes)) {
    std::optional<double> total = GpuMemoryTotal(r, p.loop->telemetry);
    parts.push_back(total ? fmt::format("memory {} of {}", FormatGiB(mem->max), FormatGiB(*total))
                          : fmt::format("memory {}", FormatGiB(mem->max)));
  }
  return JoinNonEmpty(parts, ", ");
}

void DecideTransfer(const ProbeResult& r, const Pipe& p, Verdict& v) {
  v.bottleneck = "transfer";
  v.cause = "host-to-device copies";
  std::vector<std::string> evidence;
  if (p.transfer_phases >= kOverheadBoundShare) {
    evidence.push_back(fmt::format("copy phases take {} of each step", FormatShare(p.transfer_phases)));
  }
  if (p.full && p.loader && p.compute) {
    double narrow = std::min(*p.loader, *p.compute);
    evidence.push_back(fmt::format("full {} is {} of the narrower stage ({} {})", FormatRate(*p.full),
                                   FormatShare(*p.full / narrow), *p.loader < *p.compute ? "loader" : "compute",
                                   FormatRate(narrow)));
  }
  if (p.wait) evidence.push_back(fmt::format("data wait only {} of each step", FormatShare(*p.wait)));
  evidence.push_back(GpuEvidence(r, p));
  v.evidence = JoinNonEmpty(evidence, "; ");
  const measure::LoaderInfo* seen = SeenLoader(r);
  if (seen != nullptr && seen->pin_memory == false) {
    v.next = fmt::format("DataLoader at {}: pin_memory=False → True, and .to(device, non_blocking=True)",
                         *seen->site);
  } else {
    v.next = "pin_memory=True in the DataLoader and .to(device, non_blocking=True)";
  }
}

void DecideCompute(const ProbeResult& r, const Pipe& p, Verdict& v) {
  v.bottleneck = "compute";
  std::vector<std::string> evidence;
  if (p.compute && p.loader) {
    evidence.push_back(fmt::format("compute {} ≤ loader {}", FormatRate(*p.compute), FormatRate(*p.loader)));
  } else if (p.compute) {
    evidence.push_back("compute " + FormatRate(*p.compute));
  }
  if (p.full && p.compute) {
    evidence.push_back(fmt::format("full {} = {} of the compute ceiling", FormatRate(*p.full),
                                   FormatShare(*p.full / *p.compute)));
  } else if (p.full) {
    evidence.push_back("full " + FormatRate(*p.full));
  }
  if (p.wait) evidence.push_back(fmt::format("data wait {} of each step", FormatShare(*p.wait)));
  if (!p.overhead_phases.empty()) {
    evidence.push_back(fmt::format("named phases {} of each step", FormatShare(p.overhead)));
  }
  evidence.push_back(GpuEvidence(r, p));
  // Achieved FLOP/s, and MFU against the GPU's dense peak (mfu.h).
  const core::FlopsReading flops = p.loop != nullptr ? StageFlops(r, *p.loop) : core::FlopsReading{};
  evidence.push_back(core::FlopsText(flops));
  v.evidence = JoinNonEmpty(evidence, "; ");

  // A step whose products the helper counted in bf16 or fp16 already runs in mixed precision (a Hugging Face
  // Trainer with --bf16 on the H200): advising it again would send the user after a knob that is on.
  const bool sixteen_bit =
      flops.precision && (*flops.precision == core::Precision::kBf16 || *flops.precision == core::Precision::kFp16);
  std::optional<Summary> util = LoopGpu(p, &core::StageTelemetry::gpu_util_pct);
  std::optional<Summary> tree_mem = LoopGpu(p, &core::StageTelemetry::tree_gpu_mem_bytes);
  if (!p.gpu) {
    v.cause = "CPU compute (no GPU probed)";
    v.next = "a GPU; on this CPU: bf16 autocast where the CPU supports it, then a larger batch size";
  } else if (tree_mem && tree_mem->max <= 0) {
    v.cause = "the model runs on the CPU: the run holds no GPU memory";
    v.next = "move the model and batches to the GPU (.to('cuda'))";
  } else if (util && util->p50 < kLowGpuUtilPct) {
    v.cause = fmt::format("CPU-side work in the step: the GPU is busy only {}", FormatPct(util->p50));
    v.next = "a larger batch size (fewer, larger kernels)" + BatchAt(SeenLoader(r)) +
             (sixteen_bit ? "" : ", then mixed precision (bf16/fp16 autocast)");
  } else if (core::MfuAdvice mfu = core::AdviseOnMfu(flops, BatchAt(SeenLoader(r))); !mfu.cause.empty()) {
    // Low MFU: small kernels and launch overhead; near the peak: only fewer FLOPs (or 16-bit units) help.
    v.cause = mfu.cause;
    v.next = mfu.next;
  } else {
    v.cause = "GPU compute";
    v.next = (sixteen_bit ? "a larger batch size" : "mixed precision (bf16/fp16 autocast) if it is not on yet, then "
                                                     "a larger batch size") +
             BatchAt(SeenLoader(r));
  }
}

// What each way of failing means for the user, and what to change; the last row serves any other failure.
struct FailureText {
  run::ExitClass exit_class;
  std::string_view cause, failure, next;
};
constexpr std::array<FailureText, 5> kFailureTexts = {{
    {run::ExitClass::kGpuOom, "GPU out of memory", "the run ran out of GPU memory",
     "lower the batch size / enable mixed precision (bf16/fp16 autocast)"},
    {run::ExitClass::kHostOom, "host out of memory", "the run ran out of host memory",
     "fewer DataLoader workers (each holds a copy of the dataset object), a smaller prefetch_factor or batch size"},
    {run::ExitClass::kWorkerKilled, "a DataLoader worker died", "a DataLoader worker died",
     "read the worker's error in stderr.log; a worker killed by SIGKILL usually ran out of host memory: fewer "
     "workers"},
    {run::ExitClass::kStartFailed, "could not start", "the command could not be started",
     "check the command, its path and its interpreter"},
    {run::ExitClass::kFailed, "the run failed", "the run failed", "fix the error shown in stderr.log and probe again"},
}};

// The failure of the run, when a stage that matters ended badly: full, or any stage when full measured nothing.
std::optional<Verdict> Failure(const ProbeResult& r) {
  const core::StageResult* failed = nullptr;
  if (core::StageFailed(r.full)) {
    failed = &r.full;
  } else if (!core::StageMeasured(r.full)) {
    for (const core::StageResult* s : {&r.compute, &r.loader}) {
      if (core::StageFailed(*s)) {
        failed = s;
        break;
      }
    }
  }
  if (failed == nullptr) return std::nullopt;

  const run::RunOutcome& o = failed->outcome;
  const FailureText* text = &kFailureTexts.back();
  for (const FailureText& t : kFailureTexts) {
    if (t.exit_class == o.exit_class) text = &t;
  }
  Verdict v;
  v.failed = true;
  v.cause = text->cause;
  v.failure = std::string(text->failure) +
              (failed->kind == core::StageKind::kFull ? "" : fmt::format(" (in the {} stage)", core::StageName(failed->kind)));
  v.next = text->next;
  // The runner's detail often starts with what the cause already says ("GPU out of memory: <line>").
  std::string detail = o.detail;
  if (StartsWith(ToLower(detail), ToLower(v.cause) + ": ")) detail.erase(0, v.cause.size() + 2);
  std::vector<std::string> evidence = {detail};
  if (core::StageMeasured(*failed)) {
    evidence.push_back(fmt::format("it ran at {} before failing", FormatRate(failed->estimate.samples_per_s)));
  }
  if (o.exit_class == run::ExitClass::kGpuOom && failed->telemetry.gpu_mem_used_bytes) {
    evidence.push_back("GPU memory peak " + FormatGiB(failed->telemetry.gpu_mem_used_bytes->max));
  }
  v.evidence = JoinNonEmpty(evidence, "; ");
  if (v.evidence.empty()) v.evidence = std::string(run::ExitClassName(o.exit_class));
  return v;
}

// What to do when a stage that ran reported no progress, the likeliest fix first: a script the automatic
// instrumentation can measure is never told to change its code first.
std::string NoReportsNext(const ProbeResult& r, const core::StageResult& s) {
  constexpr std::string_view kEdit = "`import saturate` and wrap the loader in saturate.track()";
  constexpr std::string_view kParse = "pass --parse with a pattern that matches the script's progress lines";
  if (s.helper_seen) return "probe again with a larger budget, so that the script gets through more steps";
  if (r.parse) {
    return "check the --parse pattern against the script's output (stdout.log, stderr.log), or probe without "
           "--parse to instrument the script automatically";
  }
  if (!r.auto_enabled) {
    return fmt::format("probe without --no-auto to instrument the script automatically, or {}, or {}", kEdit,
                       kParse);
  }
  if (!s.auto_failure.empty()) {
    return fmt::format("fix what stops the automatic instrumentation (stderr.log), or {}, or {}", kEdit, kParse);
  }
  if (s.torch_loaded == true) {
    return fmt::format("let the script reach its training loop within the probe (a larger --budget); if its steps "
                       "call neither optimizer.step() nor backward(), {}, or {}", kEdit, kParse);
  }
  if (s.torch_loaded == false) {
    return fmt::format("for a script that does not use PyTorch: {}, or {}", kEdit, kParse);
  }
  return fmt::format("let the script run longer; if it does not train with PyTorch, {}, or {}", kEdit, kParse);
}

// What a stage measured from too little steady data: "full 212 samples/s ±192% from 1.8 s of steady data".
std::string ShortOfData(const core::StageResult& s) {
  const measure::SteadyState& e = s.estimate;
  std::string interval = std::isfinite(e.rel_half_width) ? fmt::format(" ±{:.0f}%", e.rel_half_width * 100)
                                                          : std::string(" (no interval)");
  return fmt::format("{} {}{} from {:.1f} s of steady data", core::StageName(s.kind), FormatRate(e.samples_per_s), interval,
                     e.steady_s);
}

// Why nothing was measured, as a verdict without a bottleneck.
Verdict Unknown(const ProbeResult& r) {
  Verdict v;
  v.cause = "no throughput measured";
  const core::StageResult& s = r.full.ran ? r.full : (r.compute.ran ? r.compute : r.loader);
  std::vector<std::string> short_of_data;
  for (const core::StageResult* st : {&r.full, &r.loader, &r.compute}) {
    if (core::StageMeasured(*st) && !EnoughSteadyData(*st)) short_of_data.push_back(ShortOfData(*st));
  }
  if (!short_of_data.empty()) {
    v.cause = "not enough steady data";
    v.evidence = fmt::format("not enough steady data: {} (a verdict needs at least {:.0f} s and ±{:.0f}%)",
                             JoinNonEmpty(short_of_data, ", "), kMinSteadyS, kMaxUsableRelHalfWidth * 100);
    v.next = r.interrupted ? "probe again and let it run"
                           : "probe again with a larger budget, or let the script run longer";
  } else if (r.interrupted && !s.ran) {
    v.evidence = "interrupted before any stage was measured";
    v.next = "probe again and let it run";
  } else if (!s.ran) {
    v.evidence = r.full.skipped_why.empty() ? "no stage ran" : "full stage skipped: " + r.full.skipped_why;
    v.next = "probe again with a larger budget";
  } else if (s.observations > 0 && s.outcome.exit_class == run::ExitClass::kFinished) {
    v.evidence = fmt::format("the command finished after {:.1f} s, before a steady rate was measured",
                             s.outcome.duration_s);
    v.next = "let the script run longer (more steps or epochs)";
  } else if (s.observations > 0) {
    v.evidence = fmt::format("{} observations in {:.1f} s were not enough for a rate", s.observations, s.wall_s);
    v.next = "probe again with a larger budget";
  } else {
    v.evidence = fmt::format("the {} stage ran {:.1f} s ({}) and reported no progress", core::StageName(s.kind),
                             s.wall_s, run::ExitClassName(s.outcome.exit_class));
    if (!s.helper_seen && &s == &r.full) v.evidence += ": " + NoReportsWhy(r);
    v.next = NoReportsNext(r, s);
  }
  return v;
}

// Notes beside the verdict: headroom, network data, misleading utilisation, quality of the estimates.
void AddNotes(const ProbeResult& r, const Pipe& p, Verdict& v) {
  if (r.interrupted) v.notes.push_back("interrupted: only the stages measured so far are reported");
  for (const core::StageResult* s : {&r.loader, &r.compute}) {
    if (core::StageFailed(*s) && !v.failed) {
      v.notes.push_back(fmt::format("the {} stage failed ({}): {}", core::StageName(s->kind),
                                    run::ExitClassName(s->outcome.exit_class), s->outcome.detail));
    }
  }
  if (p.loader && p.full && *p.full > kFullAboveLoaderRatio * *p.loader) {
    v.notes.push_back(fmt::format("full {} ran faster than the loader alone ({}): the loader stage understates "
                                  "the loader", FormatRate(*p.full), FormatRate(*p.loader)));
  }

  // GPU memory and utilisation, only from what was measured.
  const core::StageResult* gpu_stage = p.loop;
  bool gpu_telemetry = gpu_stage != nullptr && (gpu_stage->telemetry.gpu_util_pct.has_value() ||
                                               gpu_stage->telemetry.gpu_mem_used_bytes.has_value());
  if (!p.gpu) {
    v.notes.push_back("no GPU probed: the model ran on the CPU; GPU utilisation and memory are n/a");
  } else if (gpu_stage != nullptr && !gpu_telemetry) {
    v.notes.push_back("no GPU telemetry (NVML reported nothing): GPU utilisation and memory are n/a");
  }
  if (gpu_telemetry && gpu_stage->telemetry.gpu_mem_used_bytes) {
    double peak = gpu_stage->telemetry.gpu_mem_used_bytes->max;
    std::optional<double> total = GpuMemoryTotal(r, gpu_stage->telemetry);
    if (total && *total > 0 && peak / *total < kMemHeadroomShare) {
      v.notes.push_back(fmt::format("GPU memory peak {} of {} ({}): room for a larger batch or a second run",
                                    FormatGiB(peak), FormatGiB(*total), FormatShare(peak / *total)));
    } else if (total && *total > 0 && peak / *total > kMemNearlyFullShare) {
      v.notes.push_back(fmt::format("GPU memory peak {} of {} ({}): a larger batch is unlikely to fit",
                                    FormatGiB(peak), FormatGiB(*total), FormatShare(peak / *total)));
    }
  }
  if (p.full && p.compute && r.full.telemetry.gpu_util_pct) {
    double util = r.full.telemetry.gpu_util_pct->p50;
    if (util >= kHighGpuUtilPct && *p.full < kUtilOverstatesRatio * *p.compute) {
      v.notes.push_back(fmt::format("GPU utilisation is {} but full runs at {} of the compute ceiling: "
                                    "utilisation overstates the work done", FormatPct(util),
                                    FormatShare(*p.full / *p.compute)));
    }
  }
  if (v.bottleneck == "compute" && gpu_telemetry && gpu_stage->telemetry.gpu_util_pct &&
      gpu_stage->telemetry.gpu_util_pct->p50 >= kHighGpuUtilPct) {
    v.notes.push_back("high GPU utilisation counts the time any kernel runs, not how much of the GPU it uses: "
                      "mixed precision can still raise throughput");
  }

  for (std::string& note : BatchNotes(r.full)) v.notes.push_back(std::move(note));

  for (const core::DataLocation& loc : r.data_locations) {
    if (!loc.network) continue;
    v.notes.push_back(fmt::format("data on a network filesystem: {} file{} on {} ({} {}); stage it on a local "
                                  "disk", GroupThousands(loc.file_count), loc.file_count == 1 ? "" : "s",
                                  loc.mount_point, loc.fs_type, loc.device));
  }
  for (std::string& note : StorageNotes(r)) v.notes.push_back(std::move(note));

  // CPU time that a GPU's queued work hid: named, so that the data wait in the report is not read as the cause.
  if (p.at_compute_ceiling && p.wait && *p.wait >= kDataWaitBoundShare) {
    v.notes.push_back(fmt::format("waiting for data {} of each step overlapped work the {} already had queued: full "
                                  "runs at {} of the compute ceiling, so it costs no throughput",
                                  FormatShare(*p.wait), p.gpu ? "GPU" : "device", FormatShare(*p.full / *p.compute)));
  }

  // The runner-up, when both the loader and the per-step overhead pass their thresholds.
  if (v.bottleneck == "loader" && p.overhead >= kOverheadBoundShare) {
    v.notes.push_back(fmt::format("also: {} takes {} of each step", OverheadWork(p.overhead_phases.front().first),
                                  FormatShare(p.overhead)));
  } else if (v.bottleneck == "step-overhead" && p.wait && *p.wait >= kDataWaitBoundShare) {
    v.notes.push_back(fmt::format("also: waiting for data takes {} of each step", FormatShare(*p.wait)));
  }

  for (const core::StageResult* s : {&r.loader, &r.compute, &r.full}) {
    // A stage that ran to its share of the budget without a rate: start-up took it all (a multi-rank job on a
    // busy machine); saying so keeps the user from reading the missing figure as a failure.
    if (s->ran && !core::StageMeasured(*s) && !core::StageFailed(*s) && !r.interrupted &&
        s->outcome.exit_class == run::ExitClass::kStopped) {
      v.notes.push_back(fmt::format("the {} stage reported no throughput in its {:.0f} s share of the budget "
                                    "({} steady observation{}): its start-up used it up; a larger --budget "
                                    "measures it",
                                    core::StageName(s->kind), s->wall_s, s->observations,
                                    s->observations == 1 ? "" : "s"));
    }
    if (!core::StageMeasured(*s)) continue;
    const measure::SteadyState& e = s->estimate;
    std::string_view name = core::StageName(s->kind);
    if (!EnoughSteadyData(*s)) {
      if (!v.bottleneck.empty()) {
        v.notes.push_back(fmt::format("left out of the verdict, not enough steady data: {}", ShortOfData(*s)));
      }
      continue;
    }
    if (e.drift) {
      v.notes.push_back(fmt::format("the {} rate drifted {:+.0f}% between the halves of its steady part", name,
                                    e.drift_rel * 100));
    } else if (e.warmup_at_limit) {
      v.notes.push_back(fmt::format("the {} stage may not have reached a steady state (warm-up still going at "
                                    "half its data)", name));
    } else if (e.n_batches < 2 || !std::isfinite(e.rel_half_width)) {
      v.notes.push_back(fmt::format("the {} stage had too few observations ({}) for an interval", name,
                                    s->observations));
    } else if (!e.converged && s->stopped_above) {
      // Stopped on StageOptions::stop_above: not a failure to converge, a figure far from mattering.
      const std::optional<double> full = RateOf(r.full);
      const std::string times = full ? fmt::format(" ({:.0f}x the full run)", *s->stopped_above / *full) : "";
      v.notes.push_back(fmt::format("the {} stage stopped at ±{:.1f}%, once all of its interval was above {}{}: "
                                    "far from holding training back, so a tighter figure would change nothing",
                                    name, e.rel_half_width * 100, FormatRate(*s->stopped_above), times));
    } else if (!e.converged && e.rel_half_width <= r.target_rel_half_width) {
      // The interval met the target; what held convergence back was a trend the data could not yet bound.
      v.notes.push_back(fmt::format("the {} estimate is ±{:.1f}%, but its rate was still moving (the trend line "
                                    "ends {:+.1f}% from it, and could be up to {:.1f}% off): not converged within "
                                    "its budget",
                                    name, e.rel_half_width * 100, e.trend_rel * 100, e.trend_bound_rel * 100));
    } else if (!e.converged) {
      v.notes.push_back(fmt::format("the {} estimate is ±{:.1f}%: not converged within its budget", name,
                                    e.rel_half_width * 100));
    }
  }
}

}  // namespace

Verdict Decide(const ProbeResult& r) {
  Pipe p = Gather(r);
  if (std::optional<Verdict> failed = Failure(r)) {
    AddNotes(r, p, *failed);
    return *failed;
  }
  Verdict v;
  if (!p.loader && !p.compute && !p.full) {
    v = Unknown(r);
    AddNotes(r, p, v);
    return v;
  }

  // Loader and overhead compete for the step: what removing each would save.
  double loader_share = p.wait.value_or(0);
  if (p.loader_narrow) loader_share = std::max(loader_share, 1 - *p.loader / *p.compute);
  bool loader_bound = p.loader_narrow || (p.wait && *p.wait >= kDataWaitBoundShare && !p.at_compute_ceiling);
  bool overhead_bound = p.overhead >= kOverheadBoundShare;
  bool transfer_gap = p.gpu && p.full && p.loader && p.compute &&
                      *p.full < kTransferGapRatio * std::min(*p.loader, *p.compute) &&
                      p.wait.value_or(0) < kSmallWaitShare && p.overhead < kOverheadBoundShare;
  bool transfer_phases = p.gpu && p.transfer_phases >= kOverheadBoundShare;

  if (std::optional<Straggler> straggler = p.full ? FindStraggler(r.full) : std::nullopt) {
    // One rank holds every other back: no knob of the job as a whole helps before that rank is fixed.
    v.bottleneck = "straggler";
    v.cause = straggler->cause;
    v.evidence = straggler->evidence;
    v.next = straggler->next;
  } else if (overhead_bound && (!loader_bound || p.overhead > loader_share)) {
    DecideOverhead(p, v);
  } else if (loader_bound) {
    DecideLoader(r, p, v);
  } else if (transfer_gap || transfer_phases) {
    DecideTransfer(r, p, v);
  } else {
    DecideCompute(r, p, v);
  }
  AddNotes(r, p, v);
  return v;
}

std::string NoReportsWhy(const ProbeResult& r) {
  const core::StageResult& full = r.full;
  if (r.parse) {
    return "with --parse the output lines are the only source of throughput (automatic instrumentation is off) "
           "and the script does not import saturate";
  }
  if (!r.auto_enabled) return "automatic instrumentation is off (--no-auto) and the script does not import saturate";
  if (!full.auto_failure.empty()) {
    std::string_view line = full.auto_failure;
    if (auto colon = line.find(": "); colon != line.npos) line.remove_prefix(colon + 2);
    return fmt::format("the automatic instrumentation could not start ({})", line);
  }
  if (full.torch_loaded == false) {
    return "the script never imported torch, and only PyTorch scripts are instrumented automatically";
  }
  if (full.torch_loaded == true) {
    return fmt::format("the script imported torch but reached no training step (optimizer.step() or backward()) "
                       "in {:.0f} s", full.wall_s);
  }
  return "the script ended before saturate saw it import torch or reach a training step";
}

std::string PhaseLabel(std::string_view phase) {
  if (phase == kAfterStepPhase) return "after-step work (metrics, logging, checkpoints)";
  return std::string(phase);
}

core::FlopsReading StageFlops(const ProbeResult& result, const core::StageResult& stage) {
  if (stage.kind == core::StageKind::kLoader || !core::StageMeasured(stage)) return {};
  const std::optional<measure::FlopsInfo>& count = stage.flops ? stage.flops : result.full.flops;
  return core::ReadFlops(count, stage.estimate.samples_per_s,
                         result.machine.gpu_index >= 0 ? std::string_view(result.machine.gpu_name)
                                                       : std::string_view());
}

std::optional<double> GpuMemoryTotal(const ProbeResult& result, const core::StageTelemetry& telemetry) {
  if (telemetry.gpu_mem_total_bytes) return telemetry.gpu_mem_total_bytes;
  if (result.machine.gpu_mem_total_bytes) return static_cast<double>(*result.machine.gpu_mem_total_bytes);
  return std::nullopt;
}

}  // namespace sat::probe
