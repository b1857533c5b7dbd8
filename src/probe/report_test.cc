#include "probe/report.h"

#include <limits>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/test_results.h"

namespace sat::probe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace results;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int CountStartingWith(const std::string& text, std::string_view prefix) {
  int n = 0;
  for (const std::string& line : Lines(text)) n += line.rfind(prefix, 0) == 0;
  return n;
}

// The loader-bound run of the e2e test, measured with the helper, on an NFS dataset.
ProbeResult LoaderBound() {
  ProbeResult r = WithHelper(true, 212, 1840, 208);
  r.full.data_wait_share = 0.71;
  r.full.phase_shares = {{"logging", 0.04}};
  SetCpu(r.loader, 98, 1, 14);
  r.loader.telemetry.tree_read_bytes_per_s = Flat(12.5 * 1024 * 1024);
  SetGpu(r.compute, 97, 10.2);
  SetGpu(r.full, 11, 3);
  SetCpu(r.full, 99, 1, 15);
  r.data_locations = {{"/mnt/data/train/a.jpg", 2000, "/mnt/data", "nfs4", "fileserver:/export", true}};
  r.verdict = Decide(r);
  return r;
}

TEST(ConsoleReport, PrintsThePipeAndEndsWithOneVerdictLine) {
  ProbeResult r = LoaderBound();
  std::string text = ConsoleReport(r);
  std::vector<std::string> lines = Lines(text);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(CountStartingWith(text, "verdict: "), 1);
  EXPECT_EQ(lines.back(), "verdict: loader — " + r.verdict.evidence + "; next: " + r.verdict.next);

  EXPECT_EQ(lines[0], "probe: python3 train.py --workers 0");
  EXPECT_EQ(lines[1], "machine: 8 cores, 64.0 GiB RAM, GPU 0 NVIDIA T4 (16.0 GiB)");
  EXPECT_EQ(lines[2], "stages: loader, compute and full; budget 120 s, took 96.5 s");
  EXPECT_EQ(lines[3], "reporting: the script reports through `import saturate`");
  EXPECT_THAT(text, HasSubstr("CPU 98% (0 workers) · read 12.5 MiB/s"));
  EXPECT_THAT(text, HasSubstr("GPU util 97% · memory 10.2 GiB / 16.0 GiB"));
  EXPECT_THAT(text, HasSubstr("98% of the narrowest pipe (loader)"));
  EXPECT_THAT(text, HasSubstr("step time (full): data wait 71% · compute and the rest 25% · logging 4%"));
  EXPECT_THAT(text, HasSubstr("data: 2,000 files on /mnt/data (nfs4 fileserver:/export, network), e.g. "
                              "/mnt/data/train/a.jpg"));
  EXPECT_THAT(text, HasSubstr("notes:\n  - "));
}

// A compiled model's count was skipped on purpose: the report says why, and reports no FLOP/s or MFU.
TEST(ConsoleReport, ShowsTheLoadersFilesItsFetchAndPrepAndTheLocalCopy) {
  ProbeResult r = WithHelper(false, 40, 9000, 39);
  r.full.data_wait_share = 0.95;
  SetCpu(r.loader, 5, 1, 10);
  SetBlocked(r.loader, 0.9, 40 * 4096);
  r.data_locations = {{"/mnt/slow/f000001.bin", 64, "/mnt/slow", "fuse.slowfs", "slowfs", false}};
  r.storage.files.source = "helper";
  r.storage.files.opens = 12000;
  r.storage.local_copy = ExampleLocalCopy();
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("data: 64 files (sampled from 12,000 opens) on /mnt/slow (fuse.slowfs slowfs, FUSE), "
                              "e.g. /mnt/slow/f000001.bin\n"));
  EXPECT_THAT(text, HasSubstr("\nloader time: loader stage fetch 90% (processes in state D), prep 5% (its CPU), "
                              "other 5%"));
  EXPECT_THAT(text, HasSubstr("per sample): its loader waits on storage\n"));
  EXPECT_THAT(text, HasSubstr("\nmore workers (what-if): 4 reading the mount at once would overlap its round trips: "
                              "~160 samples/s"));
  EXPECT_THAT(text, HasSubstr("\nlocal copy (what-if, measured on a sample): a local copy of 1.2 MiB (300 files) "
                              "takes ~6 s on this link; the loader alone would reach ~800 samples/s"));
  EXPECT_THAT(text, HasSubstr("verdict: storage — "));
  nlohmann::ordered_json j = ProbeJson(r);
  EXPECT_EQ(j["storage"]["local_copy"]["samples_per_s"], 800.0);
  EXPECT_EQ(j["storage"]["fetch_bound"], true);
}

TEST(ConsoleReport, FlopsSkippedSaysWhy) {
  ProbeResult r = WithHelper(true, 6500, 2150, 1950);
  r.full.flops_skipped = "the model is compiled (torch.compile)";
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("\nflops: n/a (the model is compiled (torch.compile))\n"));
  EXPECT_THAT(text, Not(HasSubstr("MFU")));
  EXPECT_EQ(ProbeJson(r)["stages"]["full"]["flops_skipped"], "the model is compiled (torch.compile)");
  EXPECT_TRUE(ProbeJson(r)["stages"]["loader"]["flops_skipped"].is_null());
}

// GPM beside utilisation in the stage's row and in probe.json; absent (null) before Hopper.
TEST(ConsoleReport, GpmStandsBesideUtilisation) {
  ProbeResult r = LoaderBound();
  EXPECT_THAT(ConsoleReport(r), Not(HasSubstr("SM active")));
  EXPECT_TRUE(ProbeJson(r)["stages"]["compute"]["telemetry"]["gpm_sm_active_pct"].is_null());
  r.compute.telemetry.gpm_sm_active_pct = Flat(38);
  r.compute.telemetry.gpm_tensor_active_pct = Flat(9);
  EXPECT_THAT(ConsoleReport(r), HasSubstr("GPU util 97% · SM active 38% · tensor 9% · memory 10.2 GiB / 16.0 GiB"));
  EXPECT_DOUBLE_EQ(ProbeJson(r)["stages"]["compute"]["telemetry"]["gpm_sm_active_pct"]["p50"].get<double>(), 38);
}

TEST(ConsoleReport, AlignsTheStageTable) {
  std::string text = ConsoleReport(LoaderBound());
  std::vector<std::string> lines = Lines(text);
  auto row = [&lines](std::string_view stage) {
    for (const std::string& l : lines) {
      if (l.rfind(stage, 0) == 0) return l;
    }
    return std::string();
  };
  std::string header = row("stage "), loader = row("loader "), compute = row("compute "), full = row("full ");
  EXPECT_THAT(loader, HasSubstr(" 212  "));
  EXPECT_THAT(compute, HasSubstr("1,840  1,803 – 1,877  ±2.0%  12.0 s"));
  // Right-aligned rates end in the same column as the header's "samples/s".
  size_t end = header.find("samples/s") + std::string("samples/s").size();
  EXPECT_EQ(loader.find("212") + 3, end);
  EXPECT_EQ(compute.find("1,840") + 5, end);
  EXPECT_EQ(full.find("208") + 3, end);
}

TEST(ConsoleReport, ShowsNotApplicableForWhatWasNotMeasured) {
  ProbeResult r = Parsed(false, 880);
  r.full.estimate.ci_low = -std::numeric_limits<double>::infinity();
  r.full.estimate.ci_high = std::numeric_limits<double>::infinity();
  r.full.estimate.rel_half_width = std::numeric_limits<double>::infinity();
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("machine: 8 cores, 64.0 GiB RAM, no GPU"));
  EXPECT_THAT(text, HasSubstr("stages: full only; budget"));
  EXPECT_THAT(text, HasSubstr("reporting: --parse: throughput from output lines (automatic instrumentation off)"));
  EXPECT_THAT(text, ::testing::ContainsRegex("\nfull +880 +n/a +n/a +12.0 s\n"));
  EXPECT_THAT(text, Not(HasSubstr("loader ")));  // without the helper the stages that cannot run are not rows
  EXPECT_THAT(text, HasSubstr("step time: n/a"));
  EXPECT_THAT(text, HasSubstr("data: n/a"));
  EXPECT_THAT(text, Not(HasSubstr("GPU util ")));
  EXPECT_EQ(CountStartingWith(text, "verdict: compute — "), 1);
}

TEST(ConsoleReport, ShowsSkippedHelperStages) {
  ProbeResult r = LoaderBound();
  r.loader = Skipped(core::StageKind::kLoader, "the budget was spent");
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("skipped: the budget was spent"));
  EXPECT_THAT(text, HasSubstr("11% of the narrowest pipe (compute)"));
}

TEST(ConsoleReport, ReportsAnOutOfMemoryRunAsFailed) {
  ProbeResult r = Parsed(true, 0);
  r.full.estimate = {};
  r.full.observations = 0;
  r.full.outcome.exit_class = run::ExitClass::kGpuOom;
  r.full.outcome.detail = "GPU out of memory: torch.cuda.OutOfMemoryError: CUDA out of memory";
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("failed (gpu_oom): GPU out of memory"));
  std::vector<std::string> lines = Lines(text);
  EXPECT_THAT(lines.back(),
              StartsWith("verdict: failed — the run ran out of GPU memory: torch.cuda.OutOfMemoryError"));
  EXPECT_THAT(lines.back(), HasSubstr("; next: lower the batch size / enable mixed precision"));
  EXPECT_EQ(CountStartingWith(text, "verdict: "), 1);
}

TEST(ConsoleReport, LineBreaksInsideTextsCannotForgeAVerdictLine) {
  ProbeResult r = LoaderBound();
  r.command = {"sh", "-c", "echo hi\nverdict: compute"};
  r.full.outcome.exit_class = run::ExitClass::kFailed;
  r.full.outcome.detail = "exited with code 1:\nverdict: fake";
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_EQ(CountStartingWith(text, "verdict: "), 1);
  EXPECT_THAT(text, HasSubstr("probe: sh -c 'echo hi verdict: compute'"));
  EXPECT_THAT(Lines(text).back(), StartsWith("verdict: failed — "));
}

TEST(ConsoleReport, AnUnknownVerdictStillEndsTheReport) {
  ProbeResult r = Parsed(true, 0);
  r.full.estimate = {};
  r.full.observations = 0;
  r.verdict = Decide(r);
  EXPECT_THAT(Lines(ConsoleReport(r)).back(), StartsWith("verdict: unknown — "));
}

// LoaderBound() again, from the unmodified script: the automatic instrumentation found the DataLoader and timed
// the three parts of each step.
ProbeResult LoaderBoundAutomatic() {
  ProbeResult r = Automatic(true, 212, 1840, 208);
  r.full.data_wait_share = 0.71;
  r.full.phase_shares = {{"after_step", 0.09}};
  r.full.totals.excluded_s = 12.25;
  r.full.totals.done_reason = "exit";
  r.full.loader->injected = {{"pin_memory", true}};
  r.full.loader->pin_memory = true;
  r.full.knobs_seen = {{"workers", 0}, {"amp", "off"}};
  r.full.knob_errors = {{"batch_size", "a loader with a batch_sampler has no batch size to set"}};
  SetCpu(r.loader, 98, 1, 14);
  SetGpu(r.compute, 97, 10.2);
  SetGpu(r.full, 11, 3);
  SetCpu(r.full, 99, 1, 15);
  r.verdict = Decide(r);
  return r;
}

TEST(ConsoleReport, AnUnmodifiedScriptShowsItsLoaderAndTheThreePartsOfAStep) {
  ProbeResult r = LoaderBoundAutomatic();
  std::string text = ConsoleReport(r);
  std::vector<std::string> lines = Lines(text);
  EXPECT_EQ(lines[3], "reporting: instrumented automatically (no import saturate)");
  EXPECT_THAT(text, HasSubstr("\ntraining loader: DataLoader at train.py:57 (ImageFolder) · num_workers 0 · "
                              "pin_memory on · batch_size 64 · prefetch_factor n/a · persistent_workers off · "
                              "saturate set pin_memory=true · samples counted from its batches · a step ends at "
                              "optimizer.step() · 1 other loader (validation, test) left out\n"));
  EXPECT_THAT(text, HasSubstr("\nstep time (full): data wait 71% · model 20% · after-step work (metrics, logging, "
                              "checkpoints) 9% (validation and other loaders left out: 12.2 s)\n"));
  EXPECT_THAT(lines.back(), HasSubstr("next: DataLoader at train.py:57: num_workers=0 → try 4"));
  EXPECT_EQ(CountStartingWith(text, "verdict: "), 1);
}

TEST(ConsoleReport, AStepWithoutADataLoader) {
  ProbeResult r = Automatic(false, 0, 0, 950);
  measure::LoaderInfo none;
  none.samples_from = "model_input";
  none.step_at = "backward";
  none.others = 0;
  r.full.loader = none;
  r.loader =
      Skipped(core::StageKind::kLoader, "the script has no DataLoader (it makes its batches itself): nothing to drain");
  r.compute = Skipped(core::StageKind::kCompute, "the script has no DataLoader");
  r.full.data_wait_share = 0;
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("stages: full only; "));
  EXPECT_THAT(text, HasSubstr("\ntraining loader: none (the training step uses no DataLoader) · samples from the "
                              "model's input · a step ends at backward() (no optimizer)\n"));
  EXPECT_THAT(text, HasSubstr("skipped: the script has no DataLoader (it makes its batches itself): nothing to drain"));
  EXPECT_THAT(text, HasSubstr("step time (full): data wait 0% · model 100%\n"));
  EXPECT_EQ(ProbeJson(r)["stages"]["full"]["training_loader"]["key"], nullptr);
}

TEST(ConsoleReport, SaysWhyNothingReported) {
  ProbeResult r = Probe(false);
  r.full = Measured(core::StageKind::kFull, 0);
  r.full.helper_seen = false;
  r.full.estimate = {};
  r.full.observations = 0;
  r.full.torch_loaded = false;
  r.loader = Skipped(core::StageKind::kLoader, NoReportsWhy(r));
  r.compute = Skipped(core::StageKind::kCompute, NoReportsWhy(r));
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("reporting: none: the script never imported torch, and only PyTorch scripts are "
                              "instrumented automatically\n"));
  EXPECT_EQ(ProbeJson(r)["instrumentation"], "none");
  EXPECT_EQ(ProbeJson(r)["stages"]["full"]["torch_loaded"], false);
}

TEST(ProbeJson, TheAutomaticInstrumentationsFindings) {
  ProbeResult r = LoaderBoundAutomatic();
  nlohmann::ordered_json j = ProbeJson(r);
  EXPECT_EQ(j["helper"], true);
  EXPECT_EQ(j["instrumentation"], "auto");
  const auto& full = j["stages"]["full"];
  EXPECT_EQ(full["auto_seen"], true);
  EXPECT_EQ(full["torch_loaded"], true);
  EXPECT_EQ(full["no_loader"], false);
  const auto& l = full["training_loader"];
  EXPECT_EQ(l["key"], "train.py:57#0");
  EXPECT_EQ(l["site"], "train.py:57");
  EXPECT_EQ(l["dataset"], "ImageFolder");
  EXPECT_EQ(l["num_workers"], 0);
  EXPECT_EQ(l["pin_memory"], true);
  EXPECT_EQ(l["batch_size"], 64);
  EXPECT_TRUE(l["prefetch_factor"].is_null());
  EXPECT_EQ(l["injected"]["pin_memory"], true);
  EXPECT_EQ(l["samples_from"], "loader");
  EXPECT_EQ(l["step_at"], "optimizer");
  EXPECT_EQ(l["others"], 1);
  EXPECT_EQ(full["knobs"]["amp"], "off");
  EXPECT_EQ(full["knobs_auto"].size(), 6u);
  EXPECT_EQ(full["knob_errors"]["batch_size"], "a loader with a batch_sampler has no batch size to set");
  EXPECT_DOUBLE_EQ(full["step_parts"]["data_wait"].get<double>(), 0.71);
  EXPECT_DOUBLE_EQ(full["step_parts"]["after_step"].get<double>(), 0.09);
  EXPECT_NEAR(full["step_parts"]["model"].get<double>(), 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(full["step_parts"]["other_phases"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(full["totals"]["excluded_s"].get<double>(), 12.25);
  EXPECT_EQ(full["totals"]["done_reason"], "exit");
  EXPECT_TRUE(j["stages"]["loader"]["training_loader"].is_null());
}

TEST(ProbeJson, TheCommandHidesSecrets) {
  ProbeResult r = LoaderBound();
  r.command = {"python3", "train.py", "--wandb-key", "abc123", "--password=hunter2"};
  std::string j = ProbeJson(r).dump();
  EXPECT_EQ(j.find("abc123"), std::string::npos);
  EXPECT_EQ(j.find("hunter2"), std::string::npos);
  EXPECT_EQ(ProbeJson(r)["command"], nlohmann::json({"python3", "train.py", "--wandb-key", "***", "--password=***"}));
}

TEST(ProbeJson, HasTheDocumentedShape) {
  ProbeResult r = LoaderBound();
  nlohmann::ordered_json j = ProbeJson(r);
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"version", "command", "machine", "budget", "helper", "instrumentation",
                                            "auto_enabled", "interrupted", "stages", "trace", "what_if",
                                            "data_locations", "storage", "verdict"}));
  EXPECT_TRUE(j["what_if"].is_null());
  EXPECT_EQ(j["version"], SATURATE_VERSION);
  EXPECT_EQ(j["command"][3], "0");
  EXPECT_EQ(j["machine"]["gpu_name"], "NVIDIA T4");
  EXPECT_EQ(j["budget"]["limit_s"], 120);
  EXPECT_EQ(j["helper"], true);
  EXPECT_EQ(j["instrumentation"], "helper");
  EXPECT_EQ(j["auto_enabled"], true);

  for (const char* name : {"loader", "compute", "full"}) {
    const auto& s = j["stages"][name];
    for (const char* key : {"ran", "skipped_why", "samples_per_s", "ci_low", "ci_high", "rel_half_width",
                            "warmup_s", "steady_s", "converged", "drift", "trend_rel", "trend_bound_rel",
                            "data_wait_share", "phase_shares", "step_parts", "outcome", "telemetry", "series",
                            "auto_seen", "torch_loaded", "training_loader", "knobs", "knobs_auto", "knob_errors",
                            "no_loader", "flops", "flops_skipped", "flops_rate"}) {
      EXPECT_TRUE(s.contains(key)) << name << "." << key;
    }
  }
  const auto& loader = j["stages"]["loader"];
  EXPECT_DOUBLE_EQ(loader["samples_per_s"].get<double>(), 212);
  EXPECT_DOUBLE_EQ(loader["ci_low"].get<double>(), 212 * 0.98);
  EXPECT_EQ(loader["outcome"]["class"], "stopped");
  EXPECT_EQ(loader["outcome"]["signal"], "SIGINT");
  EXPECT_TRUE(loader["outcome"]["exit_code"].is_null());
  EXPECT_EQ(loader["workers"], 0);
  EXPECT_DOUBLE_EQ(loader["telemetry"]["tree_cpu_pct"]["p50"].get<double>(), 98);
  EXPECT_TRUE(loader["telemetry"]["gpu_util_pct"].is_null());
  EXPECT_EQ(loader["series"].size(), 3u);
  EXPECT_DOUBLE_EQ(loader["series"][1][1].get<double>(), 212);
  const auto& full = j["stages"]["full"];
  EXPECT_DOUBLE_EQ(full["data_wait_share"].get<double>(), 0.71);
  EXPECT_DOUBLE_EQ(full["phase_shares"]["logging"].get<double>(), 0.04);
  EXPECT_TRUE(full["training_loader"].is_null());
  EXPECT_TRUE(full["totals"]["done_reason"].is_null());
  EXPECT_DOUBLE_EQ(full["totals"]["excluded_s"].get<double>(), 0);

  EXPECT_EQ(j["data_locations"][0]["fs_type"], "nfs4");
  EXPECT_EQ(j["data_locations"][0]["file_count"], 2000);
  EXPECT_EQ(j["data_locations"][0]["network"], true);
  for (const char* key : {"data_files", "page_cache", "loader_time", "fetch_bound", "local_copy",
                          "local_copy_why_not", "writes"}) {
    EXPECT_TRUE(j["storage"].contains(key)) << key;
  }
  EXPECT_EQ(j["storage"]["fetch_bound"], false);
  EXPECT_TRUE(j["stages"]["loader"]["telemetry"].contains("tree_blocked"));
  EXPECT_EQ(j["verdict"]["bottleneck"], "loader");
  EXPECT_EQ(j["verdict"]["next"], r.verdict.next);
  EXPECT_EQ(j["verdict"]["failed"], false);
  EXPECT_EQ(j["verdict"]["notes"].size(), r.verdict.notes.size());
}

TEST(ProbeJson, NeverHoldsInfinityOrNaN) {
  ProbeResult r = Parsed(false, 0);
  r.full.estimate = {};  // samples_per_s 0, interval +-infinity
  r.full.observations = 0;
  r.full.data_wait_share = std::numeric_limits<double>::quiet_NaN();
  r.full.series = {{0.5, std::numeric_limits<double>::infinity()}, {1.5, 10}};
  r.full.outcome.duration_s = std::numeric_limits<double>::quiet_NaN();
  r.wall_s = std::numeric_limits<double>::infinity();
  r.verdict = Decide(r);
  nlohmann::ordered_json j = ProbeJson(r);
  const auto& full = j["stages"]["full"];
  EXPECT_TRUE(full["samples_per_s"].is_null());
  EXPECT_TRUE(full["ci_low"].is_null());
  EXPECT_TRUE(full["ci_high"].is_null());
  EXPECT_TRUE(full["rel_half_width"].is_null());
  EXPECT_TRUE(full["data_wait_share"].is_null());
  EXPECT_TRUE(full["outcome"]["duration_s"].is_null());
  EXPECT_EQ(full["series"].size(), 1u);
  EXPECT_TRUE(j["budget"]["wall_s"].is_null());
  EXPECT_TRUE(j["machine"]["gpu_index"].is_null());
  EXPECT_TRUE(j["verdict"]["bottleneck"].is_null());  // unknown: nothing was measured
  const auto& loader = j["stages"]["loader"];
  EXPECT_EQ(loader["ran"], false);
  EXPECT_THAT(loader["skipped_why"].get<std::string>(), HasSubstr("--parse"));
  EXPECT_TRUE(loader["outcome"].is_null());
  EXPECT_TRUE(loader["telemetry"]["tree_cpu_pct"].is_null());
  std::string text = j.dump();
  EXPECT_THAT(text, Not(HasSubstr("inf")));
  EXPECT_THAT(text, Not(HasSubstr("nan")));
}

TEST(ProbeJson, AFailedRunHasNoBottleneck) {
  ProbeResult r = Parsed(true, 0);
  r.full.estimate = {};
  r.full.outcome.exit_class = run::ExitClass::kGpuOom;
  r.full.outcome.detail = "GPU out of memory";
  r.verdict = Decide(r);
  nlohmann::ordered_json j = ProbeJson(r);
  EXPECT_TRUE(j["verdict"]["bottleneck"].is_null());
  EXPECT_EQ(j["verdict"]["failed"], true);
  EXPECT_EQ(j["verdict"]["failure"], "the run ran out of GPU memory");
  EXPECT_EQ(j["stages"]["full"]["outcome"]["class"], "gpu_oom");
}

}  // namespace
}  // namespace sat::probe
