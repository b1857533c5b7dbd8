#include "probe/probe.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "core/log_root.h"
#include "core/session.h"
#include "probe/storage.h"
#include "probe/verdict.h"
#include "run/interrupt.h"
#include "util/cache_home.h"
#include "util/strings.h"

namespace sat::probe {
namespace {

namespace fs = std::filesystem;

// Share of the whole budget the first (full) stage may use; the helper's two stages split what is left.
constexpr double kFullShare = 0.4;
// Share of the whole budget the full stage may borrow from the later ones when its start-up left it short of
// steady data (StageOptions::grace_s): the verdict rests on it (its ranks, its step breakdown), and a slow start-up
// under load can leave it almost none (docs/benchmarks.md, "Incidents behind the rules").
constexpr double kFullGraceShare = 0.2;
// Below this, a stage is not worth starting: start-up alone takes seconds.
constexpr double kMinStageS = 8;
// What stopping a stage's command usually takes, beyond its budget (seconds).
constexpr double kStopAllowanceS = 1.5;
// The loader stage may stop before its estimate converges once the low end of its interval is this many times the
// full run's rate (StageOptions::stop_above), within ±kLoaderFarAboveWidth: the loader is then far from holding
// training back (the verdict's loader rules sit at 0.9-1.1x), and the what-if lines that scale the model's speed
// keep a figure good to that width; waiting for convergence there buys nothing (docs/benchmarks.md, "Incidents
// behind the rules").
constexpr double kLoaderFarAboveRatio = 10;
constexpr double kLoaderFarAboveWidth = 0.1;

// Arguments that name existing files or folders, also as the value of --name=PATH; programs under /usr are left out.
std::vector<std::string> ExistingPathArguments(const std::vector<std::string>& argv) {
  std::vector<std::string> paths;
  for (const auto& arg : argv) {
    std::string candidate = arg;
    if (auto eq = arg.find('='); StartsWith(arg, "--") && eq != std::string::npos) candidate = arg.substr(eq + 1);
    std::error_code ec;
    if (candidate.empty() || StartsWith(candidate, "-") || !fs::exists(candidate, ec)) continue;
    std::string abs = fs::absolute(candidate, ec).lexically_normal().string();
    if (ec || StartsWith(abs, "/usr/") || StartsWith(abs, "/bin/")) continue;
    paths.push_back(abs);
  }
  return paths;
}

// Where the local-copy what-if may put its sample's copy: the user's cache, $TMPDIR, /tmp; none on a network
// filesystem (datastore/cold_read.h refuses the data's own filesystem and tmpfs itself).
std::vector<std::string> LocalCopyFolders(const std::string& proc_root) {
  std::vector<std::string> candidates;
  if (std::optional<std::string> cache = SaturateCacheDir(CacheHomesOfThisProcess())) {
    std::error_code ec;
    fs::create_directories(*cache, ec);
    candidates.push_back(*cache);
  }
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') candidates.emplace_back(tmp);
  candidates.emplace_back("/tmp");
  std::vector<std::string> out;
  for (const std::string& dir : candidates) {
    std::vector<core::DataLocation> where = core::LocateFiles({dir + "/"}, proc_root);
    if (where.empty() || !where.front().network) out.push_back(dir);
  }
  return out;
}

// Cold reads of a sample of the run's data files (datastore/cold_read.h: the storage rule's evidence), then the
// local-copy what-if (probe/local_copy.h) from them, into result.storage; or why there is none.
void AddColdReadsAndLocalCopy(ProbeResult& r, const std::vector<std::string>& path_arguments, unsigned cores,
                              std::optional<uint64_t> mem_available, const std::string& proc_root) {
  if (r.storage.files.paths.empty()) {
    r.storage.local_copy_why_not = "no data file of the run was seen";
    return;
  }
  datastore::ColdReadOptions options;
  options.local_dirs = LocalCopyFolders(proc_root);
  Result<datastore::ColdReadComparison> reads = datastore::CompareColdReads(r.storage.files.paths, options);
  if (!reads) {
    r.storage.local_copy_why_not = reads.error().message;
    return;
  }
  r.storage.cold_reads = *reads;
  if (!core::StageMeasured(r.loader) || !EnoughSteadyData(r.loader)) {
    r.storage.local_copy_why_not = r.loader.skipped_why.empty()
                                       ? "the loader stage measured no steady rate on the source"
                                       : "the loader stage did not run: " + r.loader.skipped_why;
    return;
  }
  LocalCopyInputs in;
  in.files = r.storage.files.paths;
  in.path_arguments = path_arguments;
  in.loader = LoaderActivityOf(r.loader);
  in.files_per_sample = StorageEvidenceOf(r, r.loader).files_per_sample;
  in.cores = cores;
  in.mem_available_bytes = mem_available;
  Result<LocalCopyWhatIf> w = LocalCopyFrom(in, *reads);
  if (w) {
    r.storage.local_copy = std::move(*w);
  } else {
    r.storage.local_copy_why_not = w.error().message;
  }
}

// Why a loader or compute stage cannot run for a script whose training step uses no DataLoader.
std::string NoLoaderWhy(core::StageKind kind) {
  if (kind == core::StageKind::kLoader) return "the script has no DataLoader (it makes its batches itself): nothing to drain";
  return "the script has no DataLoader (it makes its batches itself): there is no loading to take out, so the full "
         "stage already measures the model";
}

}  // namespace

Result<ProbeResult> RunProbe(const ProbeOptions& o, telemetry::GpuBackend* gpu, core::StageRunner* stages) {
  const core::SessionOptions& measured = o.session;
  ProbeResult result;
  result.command = measured.argv;
  result.budget_s = o.budget_s;
  result.target_rel_half_width = measured.target_rel_half_width;
  result.price_per_gpu_hour = o.price_per_gpu_hour;
  result.what_if = o.what_if;
  result.parse = measured.parse.has_value();
  result.auto_enabled = measured.auto_instrument && !measured.parse;

  // Logs go under --out, or a fresh temporary folder that goes at the end (on an error too) unless the run failed.
  auto logs = core::LogRoot::Create(o.out_dir, "", "probe");
  if (!logs) return logs.error();
  const std::string root = logs->path();

  // One sampler for all stages; each stage watches its own tree on it.
  auto session = core::StartSession({measured, gpu, "probe", o.budget_s});
  if (!session) return session.error();
  telemetry::Sampler& sampler = *session->sampling.sampler;
  result.machine = session->machine;
  core::StageOptions base = session->base;
  core::SamplerStageRunner real_stages(sampler);
  core::StageRunner& runner = stages ? *stages : real_stages;
  const double t0 = runner.Now();

  auto remaining = [&] { return o.budget_s - (runner.Now() - t0); };
  auto run_stage = [&](core::StageKind kind, double budget_s, double grace_s = 0,
                       std::optional<core::StageOptions::StopAbove> stop_above = {}) -> Result<core::StageResult> {
    core::StageOptions so2 = base;
    so2.budget_s = budget_s;
    so2.grace_s = grace_s;
    so2.stop_above = stop_above;
    so2.log_dir = (fs::path(root) / core::StageName(kind)).string();
    so2.live_labels.emplace_back("stage", std::string(core::StageName(kind)));
    return runner.Run(kind, so2);
  };

  // What the page cache holds of the command line's data before the run reads any of it: a warm cache hides the
  // drive from every stage.
  if (std::vector<std::string> given = ArgumentDataFiles(ExistingPathArguments(measured.argv), kArgumentFilesListed);
      !given.empty()) {
    result.storage.page_cache_before_run = telemetry::SampleResidency(given, kResidencySampleFiles);
  }

  // 1. The full run: what training achieves now, and whether the script reports at all (import saturate, or
  // the automatic instrumentation of a PyTorch script).
  // A script read through --parse usually has no helper, so its one stage may use the whole budget.
  // --trace: the helper profiles a few of its steady steps, left out of its measurement.
  std::string trace_path = o.trace ? core::TracePath(o.out_dir, "probe") : "";
  base.trace_path = trace_path;
  auto full = measured.parse ? run_stage(core::StageKind::kFull, o.budget_s)
                              : run_stage(core::StageKind::kFull, std::max(kMinStageS, o.budget_s * kFullShare),
                                          o.budget_s * kFullGraceShare);
  base.trace_path.clear();
  if (!full) return full.error();
  result.full = std::move(*full);
  if (o.trace) {
    result.trace = core::CollectTrace(trace_path, result.full.trace);
    if (!result.full.trace && !result.full.helper_seen) {
      result.trace->error = "the script did not report through saturate's helper, which writes the trace";
    }
  }
  result.helper = result.full.helper_seen;
  result.auto_instrumented = result.full.auto_seen;
  // The loader and compute stages take over the training DataLoader the full stage found, not another one.
  const std::optional<measure::LoaderInfo>& train_loader = result.full.loader;
  if (train_loader && train_loader->key) base.auto_target = *train_loader->key;

  // 2-3. With reports: the loader alone (the upper bound), then the model alone (the compute ceiling).
  std::string skip_why;
  if (!result.helper) skip_why = NoReportsWhy(result);
  else if (core::StageFailed(result.full)) skip_why = "the full run failed";
  // A training step without a DataLoader: loader and compute mode would find nothing to take over.
  bool no_loader = result.full.auto_seen && train_loader && !train_loader->key;
  for (core::StageKind kind : {core::StageKind::kLoader, core::StageKind::kCompute}) {
    core::StageResult& slot = kind == core::StageKind::kLoader ? result.loader : result.compute;
    slot.kind = kind;
    double budget = kind == core::StageKind::kLoader ? remaining() / 2 : remaining();
    // The loader's stop (SIGINT to the end of its tree) comes out of the compute stage's half, so the last stage
    // may start with up to kStopAllowanceS less than the others: on a loaded machine a 30-s probe left it 7.7 s.
    const double least = kind == core::StageKind::kCompute ? kMinStageS - kStopAllowanceS : kMinStageS;
    std::string why = skip_why;
    if (why.empty() && no_loader) why = NoLoaderWhy(kind);
    if (why.empty() && run::Interrupted()) why = "interrupted";
    if (why.empty() && budget < least) why = "the budget was spent";
    if (!why.empty()) {
      slot.skipped_why = why;
      continue;
    }
    if (kind == core::StageKind::kLoader) {
      // How much of the data the page cache holds as the loader is measured: a warm cache hides the drive.
      DataFiles seen = DataFilesOf(result, {});
      if (!seen.paths.empty()) {
        result.storage.page_cache = telemetry::SampleResidency(seen.paths, kResidencySampleFiles);
      }
    }
    std::optional<core::StageOptions::StopAbove> stop_above;
    if (kind == core::StageKind::kLoader && core::StageMeasured(result.full) && EnoughSteadyData(result.full)) {
      stop_above = {kLoaderFarAboveRatio * result.full.estimate.samples_per_s, kLoaderFarAboveWidth};
    }
    auto stage = run_stage(kind, budget, 0, stop_above);
    if (!stage) return stage.error();
    slot = std::move(*stage);
    if (slot.no_loader) {
      // The stage's run ended at the first training step: what it measured is start-up, not a pipe.
      no_loader = true;
      slot.ran = false;
      slot.skipped_why = NoLoaderWhy(kind);
    }
  }
  sampler.Stop();
  result.interrupted = run::Interrupted();

  // Where the data lives: the files the loader opened (the helper's watch, else the scans of open files, else the
  // command line's paths that may be data; storage.h DataFilesOf), and where the run writes.
  const std::vector<std::string> path_arguments = ExistingPathArguments(measured.argv);
  StorageFindings& storage = result.storage;
  storage.files = DataFilesOf(result, path_arguments);
  result.data_locations = core::LocateFiles(storage.files.paths, measured.proc_root);
  storage.write_locations = core::LocateFiles(storage.files.writes, measured.proc_root);
  if (const auto& w = result.full.telemetry.tree_write_bytes_per_s; w && w->count > 0) {
    storage.write_bytes_per_s = w->mean;
  }
  // On a network, FUSE or slow drive: cold reads of a sample of the run's own files (the storage rule's evidence
  // whatever state a waiting reader shows), and what a local copy would give.
  if (LocalCopyDue(result) && !result.interrupted) {
    AddColdReadsAndLocalCopy(result, path_arguments, result.machine.cpu_count,
                       session->sampling.first.host.mem_available_bytes, measured.proc_root);
  }

  result.wall_s = runner.Now() - t0;
  result.verdict = Decide(result);
  // A failed run's logs say why: the temporary folder stays and the caller names it. Otherwise it goes.
  if (o.out_dir.empty() && result.verdict.failed) {
    logs->Keep();
    result.kept_log_dir = root;
  } else if (o.out_dir.empty()) {
    for (core::StageResult* s : {&result.full, &result.loader, &result.compute}) s->log_dir.clear();
  }
  return result;
}

}  // namespace sat::probe
