#include "probe/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <vector>

#include "core/energy.h"
#include "core/mfu.h"
#include "core/stage_costs.h"
#include "probe/ranks.h"
#include "probe/storage.h"
#include "probe/verdict.h"
#include "probe/what_if.h"
#include "util/json_text.h"
#include "util/redact.h"
#include "util/shell.h"
#include "util/strings.h"
#include "util/text_table.h"

namespace sat::probe {
namespace {

using nlohmann::ordered_json;
using telemetry::Summary;

constexpr double kMiB = 1024.0 * 1024.0;

// "network", "FUSE" (every read a round trip to a user-space daemon) or "local".
std::string_view MountWord(const core::DataLocation& loc) {
  const datastore::MountKind kind = datastore::MountKindOfType(loc.fs_type, loc.network);
  return kind == datastore::MountKind::kNetwork ? "network" : kind == datastore::MountKind::kFuse ? "FUSE" : "local";
}

// One line of text: line breaks inside it become spaces.
std::string OneLine(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return s;
}

constexpr size_t kColumns = 6;
using Row = std::array<std::string, kColumns>;

// The stage and rank tables (util/text_table.h): the name left, the figures right, the notes left.
std::string Table(const std::vector<Row>& rows) {
  using Align = TextColumn::Align;
  const std::vector<TextColumn> columns = {{Align::kLeft},  {Align::kRight}, {Align::kRight},
                                           {Align::kRight}, {Align::kRight}, {Align::kLeft}};
  std::vector<std::vector<std::string>> cells;
  for (const Row& row : rows) cells.emplace_back(row.begin(), row.end());
  return TextTable(columns, cells);
}

std::optional<double> Narrowest(const ProbeResult& r, std::string* which) {
  std::optional<double> narrow;
  for (const core::StageResult* s : {&r.loader, &r.compute}) {
    if (!core::StageMeasured(*s) || (narrow && s->estimate.samples_per_s >= *narrow)) continue;
    narrow = s->estimate.samples_per_s;
    *which = std::string(core::StageName(s->kind));
  }
  return narrow;
}

// What the sampler saw during a stage, the parts that matter for that stage.
std::string Seen(const ProbeResult& r, const core::StageResult& s) {
  std::vector<std::string> parts;
  if (!s.ran) return s.skipped_why.empty() ? "not run" : "skipped: " + s.skipped_why;
  if (core::StageFailed(s)) {
    parts.push_back(fmt::format("failed ({}): {}", run::ExitClassName(s.outcome.exit_class), s.outcome.detail));
  } else if (!core::StageMeasured(s)) {
    parts.push_back(fmt::format("no throughput reported ({})", run::ExitClassName(s.outcome.exit_class)));
  }
  if (s.kind == core::StageKind::kFull && core::StageMeasured(s)) {
    std::string which;
    if (std::optional<double> narrow = Narrowest(r, &which)) {
      parts.push_back(fmt::format("{} of the narrowest pipe ({})", FormatShare(s.estimate.samples_per_s / *narrow),
                                  which));
    }
  }
  parts.push_back(core::ShortFlopsText(StageFlops(r, s)));
  const core::StageTelemetry& t = s.telemetry;
  bool show_gpu = s.kind != core::StageKind::kLoader;
  if (show_gpu && t.gpu_util_pct) parts.push_back("GPU util " + FormatPct(t.gpu_util_pct->p50));
  if (show_gpu && t.gpm_sm_active_pct) parts.push_back("SM active " + FormatPct(t.gpm_sm_active_pct->p50));
  if (show_gpu && t.gpm_tensor_active_pct) parts.push_back("tensor " + FormatPct(t.gpm_tensor_active_pct->p50));
  if (show_gpu && t.gpu_mem_used_bytes) {
    std::optional<double> total = GpuMemoryTotal(r, t);
    parts.push_back(fmt::format("memory {} / {}", FormatGiB(t.gpu_mem_used_bytes->max),
                                total ? FormatGiB(*total) : "n/a"));
  }
  if (t.tree_cpu_pct) {
    std::optional<int> workers = StageWorkers(s);
    parts.push_back(workers ? fmt::format("CPU {} ({} worker{})", FormatPct(t.tree_cpu_pct->mean), *workers,
                                          *workers == 1 ? "" : "s")
                            : "CPU " + FormatPct(t.tree_cpu_pct->mean));
  }
  if (s.kind == core::StageKind::kLoader && t.tree_read_bytes_per_s) {
    parts.push_back(fmt::format("read {:.1f} MiB/s", t.tree_read_bytes_per_s->mean / kMiB));
  }
  return JoinNonEmpty(parts, " · ");
}

Row StageRow(const ProbeResult& r, const core::StageResult& s) {
  Row row;
  row[0] = std::string(core::StageName(s.kind));
  const measure::SteadyState& e = s.estimate;
  if (core::StageMeasured(s)) {
    row[1] = FormatNumber(e.samples_per_s);
    if (std::isfinite(e.ci_low) && std::isfinite(e.ci_high)) {
      row[2] = fmt::format("{} – {}", FormatNumber(e.ci_low), FormatNumber(e.ci_high));
    } else {
      row[2] = "n/a";
    }
    row[3] = std::isfinite(e.rel_half_width) ? fmt::format("±{:.1f}%", e.rel_half_width * 100) : "n/a";
    row[4] = fmt::format("{:.1f} s", e.steady_s);
  } else {
    row[1] = "n/a";
  }
  row[5] = Seen(r, s);
  return row;
}

}  // namespace

std::optional<StepParts> StepPartsOf(const core::StageResult& s) {
  if (!core::StageMeasured(s) || (!s.data_wait_share && s.phase_shares.empty())) return std::nullopt;
  StepParts parts;
  parts.data_wait = s.data_wait_share.value_or(0);
  parts.rest -= parts.data_wait;
  parts.phases.assign(s.phase_shares.begin(), s.phase_shares.end());
  std::stable_sort(parts.phases.begin(), parts.phases.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [name, share] : parts.phases) parts.rest -= share;
  parts.rest = std::max(0.0, parts.rest);
  return parts;
}

namespace {

std::string StepTimeLine(const core::StageResult& full) {
  std::optional<StepParts> parts = StepPartsOf(full);
  if (!parts) return "step time: n/a (no data wait or phase times reported)";
  std::vector<std::string> words;
  if (full.data_wait_share) words.push_back("data wait " + FormatShare(parts->data_wait));
  // The automatic instrumentation times the step in three parts: data wait, the model, and after-step work.
  words.push_back((full.auto_seen ? "model " : "compute and the rest ") + FormatShare(parts->rest));
  for (const auto& [name, share] : parts->phases) {
    words.push_back(fmt::format("{} {}", PhaseLabel(name), FormatShare(share)));
  }
  std::string line = "step time (full): " + JoinNonEmpty(words, " · ");
  if (full.totals.excluded_s > 0) {
    line += fmt::format(" (validation and other loaders left out: {:.1f} s)", full.totals.excluded_s);
  }
  return line;
}

}  // namespace

// "flops: 4.10 GFLOP per sample (...) · full 1.23 TFLOP/s, MFU 38% of ... · compute ..."; empty when the helper
// counted nothing and the script did not report through it.
std::string FlopsLine(const ProbeResult& r) {
  const std::optional<measure::FlopsInfo>& count = r.full.flops ? r.full.flops : r.compute.flops;
  if (!count) {
    const std::string& skipped = r.full.flops_skipped.empty() ? r.compute.flops_skipped : r.full.flops_skipped;
    if (!skipped.empty()) return "flops: n/a (" + skipped + ")";
    return r.helper ? "flops: n/a (the helper counted no matrix products or convolutions)" : "";
  }
  std::vector<std::string> parts = {core::CountText(*count)};
  for (const core::StageResult* s : {&r.full, &r.compute}) {
    if (std::string text = core::FlopsText(StageFlops(r, *s)); !text.empty()) {
      parts.push_back(fmt::format("{} {}", core::StageName(s->kind), text));
    }
  }
  return "flops: " + JoinNonEmpty(parts, " · ");
}

namespace {

std::string OnOff(const std::optional<bool>& v) { return v ? (*v ? "on" : "off") : "n/a"; }

std::string IntOrNa(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "n/a"; }

// The knobs saturate set on the loader: "workers=4, pin_memory=true".
std::string InjectedText(const std::map<std::string, nlohmann::json>& injected) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : injected) parts.push_back(fmt::format("{}={}", name, JsonText(value)));
  return JoinNonEmpty(parts, ", ");
}

std::string SamplesFromText(const std::optional<std::string>& from) {
  if (!from) return "";
  if (*from == "loader") return "samples counted from its batches";
  if (*from == "model_input") return "samples from the model's input";
  if (*from == "flag") return "samples from --samples-per-step";
  if (*from == "steps") return "1 sample per step (nothing says more; --samples-per-step N sets it)";
  return "samples from " + *from;
}

std::string StepAtText(const std::optional<std::string>& at) {
  if (!at) return "";
  if (*at == "optimizer") return "a step ends at optimizer.step()";
  if (*at == "backward") return "a step ends at backward() (no optimizer)";
  return "a step ends at " + *at;
}

// The training DataLoader the automatic instrumentation found in the full stage; empty when it sent none.
std::string TrainingLoaderLine(const core::StageResult& full) {
  if (!full.loader) return "";
  const measure::LoaderInfo& l = *full.loader;
  std::vector<std::string> parts;
  if (!l.key) {
    parts.push_back("none (the training step uses no DataLoader)");
  } else {
    std::string where = l.site ? "DataLoader at " + *l.site : "DataLoader " + *l.key;
    if (l.dataset) where += fmt::format(" ({}{})", *l.dataset, l.iterable == true ? ", iterable" : "");
    parts.push_back(where);
    parts.push_back("num_workers " + IntOrNa(l.num_workers));
    parts.push_back("pin_memory " + OnOff(l.pin_memory));
    parts.push_back("batch_size " +
                    (l.batch_size ? std::to_string(*l.batch_size) : std::string("n/a (batch_sampler)")));
    parts.push_back("prefetch_factor " + IntOrNa(l.prefetch_factor));
    parts.push_back("persistent_workers " + OnOff(l.persistent_workers));
    if (!l.injected.empty()) parts.push_back("saturate set " + InjectedText(l.injected));
  }
  parts.push_back(SamplesFromText(l.samples_from));
  parts.push_back(StepAtText(l.step_at));
  if (l.others.value_or(0) > 0) {
    parts.push_back(fmt::format("{} other loader{} (validation, test) left out", *l.others, *l.others == 1 ? "" : "s"));
  }
  return "training loader: " + JoinNonEmpty(parts, " · ");
}

}  // namespace

// "energy: full 1.23 J per sample (2,930 samples/kWh) at 251 W · compute ..., from NVML's energy counter"; n/a
// with the reason when no stage has a reading; empty when no stage measured anything.
std::string EnergyLine(const ProbeResult& r) {
  std::vector<std::string> parts;
  std::string method;
  for (const core::StageResult* s : {&r.full, &r.compute, &r.loader}) {
    std::optional<core::EnergyPerSample> e = core::EnergyPerSampleOf(*s);
    if (!e) continue;
    method = e->method;
    parts.push_back(fmt::format("{} {} J per sample ({} samples/kWh) at {} W", core::StageName(s->kind),
                                FormatNumber(e->joules_per_sample), FormatNumber(e->samples_per_kwh),
                                FormatNumber(e->watts)));
  }
  if (parts.empty()) {
    if (!core::StageMeasured(r.full) && !core::StageMeasured(r.compute) && !core::StageMeasured(r.loader)) return "";
    return r.machine.gpu_index >= 0 ? "energy: n/a (the GPU reports neither an energy counter nor its power)"
                                    : "energy: n/a (no GPU, and no readable RAPL counter under /sys/class/powercap)";
  }
  return "energy: " + JoinNonEmpty(parts, " · ") + ", from " + core::EnergySource(method);
}

// "cost: full $0.52 per million samples, $3.10 per epoch of 60,000 samples, at 2.50 per GPU-hour x 2 GPUs".
std::string CostLine(const ProbeResult& r) {
  if (!r.price_per_gpu_hour) return "";
  std::optional<core::Cost> c = core::CostOf(r.full, *r.price_per_gpu_hour);
  if (!c) return "cost: n/a (the full stage measured no throughput)";
  std::string epoch = c->per_epoch ? fmt::format(", {} per epoch of {} samples", FormatNumber(*c->per_epoch),
                                                 GroupThousands(static_cast<uint64_t>(*c->epoch_samples)))
                                   : std::string(", per epoch n/a (the loader's length is unknown)");
  return fmt::format("cost: full {} per million samples{}, at {} per GPU-hour{}", FormatNumber(c->per_million_samples),
                     epoch, FormatNumber(*r.price_per_gpu_hour),
                     c->gpus > 1 ? fmt::format(" x {} GPUs", FormatNumber(c->gpus)) : std::string());
}

namespace {

// "batch: 32 per device x 2 ranks = 64 global" and one row per rank, for a distributed job; empty otherwise.
std::string RanksLines(const core::StageResult& full) {
  std::vector<RankRow> ranks = RankRows(full);
  std::optional<BatchLayout> batch = BatchLayoutOf(full);
  if (ranks.empty() && (!batch || batch->world_size <= 1)) return "";
  std::string out;
  if (batch) out += "batch: " + BatchText(*batch) + '\n';
  if (ranks.empty()) return out;
  std::optional<Straggler> straggler = FindStraggler(full);
  std::vector<Row> rows = {{"rank", "samples/s", "data wait", "step", "to backward", ""}};
  for (const RankRow& r : ranks) {
    rows.push_back({std::to_string(r.rank), FormatNumber(r.samples_per_s), FormatShare(r.wait_share),
                    FormatNumber(r.step_ms) + " ms",
                    r.to_backward_ms ? FormatNumber(*r.to_backward_ms) + " ms" : std::string("n/a"),
                    straggler && straggler->rank == r.rank ? "<- straggler" : ""});
  }
  return out + Table(rows);
}

// probe.json's name for how the stages got their numbers.
std::string_view Instrumentation(const ProbeResult& r) {
  if (r.helper) return r.auto_instrumented ? "auto" : "helper";
  return r.full.parsed_lines ? "parse" : "none";
}

// How the stages got their numbers.
std::string ReportingText(const ProbeResult& r) {
  if (r.helper && r.auto_instrumented) return "instrumented automatically (no import saturate)";
  if (r.helper) return "the script reports through `import saturate`";
  if (r.full.parsed_lines) return "--parse: throughput from output lines (automatic instrumentation off)";
  if (!r.full.ran) return "none: the full stage did not run";
  return "none: " + NoReportsWhy(r);
}

// "loader, compute and full", "compute and full", "full only".
std::string StagesText(const ProbeResult& r) {
  std::vector<std::string> ran;
  for (const core::StageResult* s : {&r.loader, &r.compute}) {
    if (s->ran) ran.emplace_back(core::StageName(s->kind));
  }
  if (ran.empty()) return "full only";
  return JoinNonEmpty(ran, ", ") + " and full";
}

std::string DataLines(const ProbeResult& r) {
  std::string out;
  if (r.data_locations.empty()) {
    out = "data: n/a (no open data files were seen)\n";
  }
  // Where the files came from: the loader's own opens (a sample of them), the scans, or the command line.
  const DataFiles& seen = r.storage.files;
  std::string from = seen.source == "helper"
                         ? (seen.opens > 0 ? fmt::format(" (sampled from {} opens)", GroupThousands(seen.opens))
                                           : std::string(" (opened by the loader)"))
                         : (seen.source == "arguments" ? " (named on the command line)" : "");
  std::string_view lead = "data: ";
  for (const core::DataLocation& loc : r.data_locations) {
    std::string files = fmt::format("{} file{}{}", GroupThousands(loc.file_count), loc.file_count == 1 ? "" : "s",
                                    lead == "data: " ? from : "");
    std::string where = loc.mount_point.empty()
                            ? "on an unknown filesystem (no mount table)"
                            : fmt::format("on {} ({} {}, {})", loc.mount_point, loc.fs_type, loc.device,
                                          MountWord(loc));
    out += OneLine(fmt::format("{}{} {}, e.g. {}", lead, files, where, loc.path)) + '\n';
    lead = "      ";
  }
  for (const std::string& line : StorageLines(r)) out += OneLine(line) + '\n';
  return out;
}

std::string VerdictLine(const Verdict& v) {
  std::string head = v.failed ? "failed" : (v.bottleneck.empty() ? "unknown" : v.bottleneck);
  std::string body = v.failed ? JoinNonEmpty({v.failure, v.evidence}, ": ") : v.evidence;
  return OneLine(fmt::format("verdict: {} — {}; next: {}", head, body, v.next)) + '\n';
}

// JSON helpers: a number, or null where it is not finite or absent.
ordered_json Num(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

template <class T>
ordered_json Opt(const std::optional<T>& v) {
  if (!v) return nullptr;
  if constexpr (std::is_floating_point_v<T>) return Num(*v);
  return *v;
}

ordered_json SummaryJson(const std::optional<Summary>& s) {
  if (!s) return nullptr;
  return {{"count", s->count}, {"mean", Num(s->mean)}, {"p50", Num(s->p50)}, {"p95", Num(s->p95)},
          {"min", Num(s->min)}, {"max", Num(s->max)}};
}

ordered_json TelemetryJson(const core::StageTelemetry& t) {
  return {{"gpu_util_pct", SummaryJson(t.gpu_util_pct)},
          {"gpu_mem_used_bytes", SummaryJson(t.gpu_mem_used_bytes)},
          {"gpm_sm_active_pct", SummaryJson(t.gpm_sm_active_pct)},
          {"gpm_sm_occupancy_pct", SummaryJson(t.gpm_sm_occupancy_pct)},
          {"gpm_tensor_active_pct", SummaryJson(t.gpm_tensor_active_pct)},
          {"gpm_dram_bw_util_pct", SummaryJson(t.gpm_dram_bw_util_pct)},
          {"gpu_pcie_rx_bytes_per_s", SummaryJson(t.gpu_pcie_rx_bytes_per_s)},
          {"gpu_mem_total_bytes", Opt(t.gpu_mem_total_bytes)},
          {"tree_cpu_pct", SummaryJson(t.tree_cpu_pct)},
          {"tree_sys_cpu_pct", SummaryJson(t.tree_sys_cpu_pct)},
          {"tree_rss_bytes", SummaryJson(t.tree_rss_bytes)},
          {"tree_read_bytes_per_s", SummaryJson(t.tree_read_bytes_per_s)},
          {"tree_rchar_per_s", SummaryJson(t.tree_rchar_per_s)},
          {"tree_write_bytes_per_s", SummaryJson(t.tree_write_bytes_per_s)},
          {"tree_blocked", SummaryJson(t.tree_blocked)},
          {"tree_processes", SummaryJson(t.tree_processes)},
          {"tree_gpu_mem_bytes", SummaryJson(t.tree_gpu_mem_bytes)},
          {"host_cpu_pct", SummaryJson(t.host_cpu_pct)},
          {"host_iowait_pct", SummaryJson(t.host_iowait_pct)},
          {"disk_busy_pct", SummaryJson(t.disk_busy_pct)},
          {"disk_read_bytes_per_s", SummaryJson(t.disk_read_bytes_per_s)},
          {"cpu_count", t.cpu_count > 0 ? ordered_json(t.cpu_count) : ordered_json(nullptr)}};
}

ordered_json SharesJson(const std::map<std::string, double>& shares) {
  ordered_json out = ordered_json::object();
  for (const auto& [name, share] : shares) out[name] = Num(share);
  return out;
}

ordered_json OutcomeJson(const core::StageResult& s) {
  if (!s.ran) return nullptr;
  const run::RunOutcome& o = s.outcome;
  return {{"class", std::string(run::ExitClassName(o.exit_class))},
          {"detail", o.detail},
          {"exit_code", o.exit_code >= 0 ? ordered_json(o.exit_code) : ordered_json(nullptr)},
          {"signal", o.term_signal != 0 ? ordered_json(run::SignalName(o.term_signal)) : ordered_json(nullptr)},
          {"duration_s", Num(o.duration_s)}};
}

ordered_json LoaderJson(const std::optional<measure::LoaderInfo>& loader) {
  if (!loader) return nullptr;
  const measure::LoaderInfo& l = *loader;
  ordered_json injected = ordered_json::object();
  for (const auto& [name, value] : l.injected) injected[name] = ordered_json::parse(JsonText(value));
  return {{"key", Opt(l.key)},
          {"site", Opt(l.site)},
          {"dataset", Opt(l.dataset)},
          {"iterable", Opt(l.iterable)},
          {"num_workers", Opt(l.num_workers)},
          {"pin_memory", Opt(l.pin_memory)},
          {"batch_size", Opt(l.batch_size)},
          {"prefetch_factor", Opt(l.prefetch_factor)},
          {"persistent_workers", Opt(l.persistent_workers)},
          {"injected", std::move(injected)},
          {"samples_from", Opt(l.samples_from)},
          {"step_at", Opt(l.step_at)},
          {"others", Opt(l.others)}};
}

ordered_json KnobsJson(const std::map<std::string, nlohmann::json>& knobs) {
  ordered_json out = ordered_json::object();
  for (const auto& [name, value] : knobs) out[name] = ordered_json::parse(JsonText(value));
  return out;
}

ordered_json StepPartsJson(const core::StageResult& s) {
  std::optional<StepParts> parts = StepPartsOf(s);
  if (!parts) return nullptr;
  double after_step = 0, other = 0;
  for (const auto& [name, share] : parts->phases) (name == kAfterStepPhase ? after_step : other) += share;
  return {{"data_wait", Num(parts->data_wait)},
          {"model", Num(parts->rest)},
          {"after_step", Num(after_step)},
          {"other_phases", Num(other)}};
}

ordered_json Ordered(const nlohmann::json& j) { return ordered_json::parse(JsonText(j)); }

ordered_json RanksJson(const core::StageResult& s) {
  ordered_json ranks = ordered_json::array();
  for (const RankRow& r : RankRows(s)) {
    ranks.push_back({{"rank", r.rank},
                     {"pid", r.pid},
                     {"steps", r.steps},
                     {"samples_per_s", Num(r.samples_per_s)},
                     {"data_wait_share", Num(r.wait_share)},
                     {"step_ms", Num(r.step_ms)},
                     {"own_ms", Num(r.own_ms)},
                     {"to_backward_ms", r.to_backward_ms ? Num(*r.to_backward_ms) : ordered_json(nullptr)}});
  }
  return ranks;
}

ordered_json BatchJson(const core::StageResult& s) {
  std::optional<BatchLayout> b = BatchLayoutOf(s);
  if (!b) return nullptr;
  return {{"world_size", b->world_size},
          {"per_device", b->per_device},
          {"global", b->global},
          {"last_batch", Opt(b->last_batch)},
          {"batchnorm", b->batchnorm},
          {"drop_last", b->drop_last}};
}

ordered_json EnergyJson(const core::StageResult& s) {
  std::optional<core::EnergyPerSample> e = core::EnergyPerSampleOf(s);
  if (!e) return nullptr;
  return {{"joules_per_sample", Num(e->joules_per_sample)},
          {"samples_per_kwh", Num(e->samples_per_kwh)},
          {"watts", Num(e->watts)},
          {"method", e->method}};
}

ordered_json CostJson(const ProbeResult& r, const core::StageResult& s) {
  std::optional<core::Cost> c = r.price_per_gpu_hour ? core::CostOf(s, *r.price_per_gpu_hour) : std::nullopt;
  if (!c) return nullptr;
  return {{"price_per_gpu_hour", Num(*r.price_per_gpu_hour)},
          {"gpus", Num(c->gpus)},
          {"per_million_samples", Num(c->per_million_samples)},
          {"epoch_samples", c->epoch_samples ? Num(*c->epoch_samples) : ordered_json(nullptr)},
          {"per_epoch", c->per_epoch ? Num(*c->per_epoch) : ordered_json(nullptr)}};
}

ordered_json StragglerJson(const core::StageResult& s) {
  std::optional<Straggler> st = FindStraggler(s);
  if (!st) return nullptr;
  return {{"rank", st->rank}, {"cause", st->cause}, {"excess_share", Num(st->excess_share)}};
}

// probe.json's "what_if": null without --what-if; else the estimates and their assumptions (what_if.h).
ordered_json WhatIfJson(const ProbeResult& r) {
  if (r.what_if.empty()) return nullptr;
  core::WhatIf w = EstimateWhatIf(r, r.what_if);
  ordered_json lines = ordered_json::array();
  for (const core::WhatIfLine& l : w.lines) {
    lines.push_back({{"label", l.label},
                     {"samples_per_s", Opt(l.samples_per_s)},
                     {"narrowest", l.narrowest.empty() ? ordered_json(nullptr) : ordered_json(l.narrowest)},
                     {"vs_now", Opt(l.vs_now)},
                     {"per_epoch", Opt(l.per_epoch)},
                     {"note", l.note}});
  }
  return {{"estimate", true},
          {"lines", std::move(lines)},
          {"assumptions", w.assumptions},
          {"unavailable_why", w.unavailable_why.empty() ? ordered_json(nullptr) : ordered_json(w.unavailable_why)}};
}

ordered_json StageJson(const ProbeResult& r, const core::StageResult& s) {
  const measure::SteadyState& e = s.estimate;
  bool measured = core::StageMeasured(s);
  auto if_measured = [measured](double v) { return measured ? Num(v) : ordered_json(nullptr); };
  ordered_json series = ordered_json::array();
  for (const measure::RatePoint& p : s.series) {
    if (std::isfinite(p.t_s) && std::isfinite(p.samples_per_s)) series.push_back({p.t_s, p.samples_per_s});
  }
  const measure::ProgressTotals& t = s.totals;
  return {{"ran", s.ran},
          {"skipped_why", s.skipped_why},
          {"helper_seen", s.helper_seen},
          {"auto_seen", s.auto_seen},
          {"parsed_lines", s.parsed_lines},
          {"torch_loaded", Opt(s.torch_loaded)},
          {"auto_failure", s.auto_failure},
          {"no_loader", s.no_loader},
          {"training_loader", LoaderJson(s.loader)},
          {"world_size", s.world_size},
          {"batch", BatchJson(s)},
          {"ranks", RanksJson(s)},
          {"straggler", StragglerJson(s)},
          {"energy", EnergyJson(s)},
          {"cost", CostJson(r, s)},
          {"knobs", KnobsJson(s.knobs_seen)},
          {"knobs_auto", s.knobs_auto},
          {"knob_errors", s.knob_errors},
          {"samples_per_s", if_measured(e.samples_per_s)},
          {"ci_low", if_measured(e.ci_low)},
          {"ci_high", if_measured(e.ci_high)},
          {"rel_half_width", if_measured(e.rel_half_width)},
          {"warmup_s", if_measured(e.warmup_s)},
          {"steady_s", if_measured(e.steady_s)},
          // The steady part on CLOCK_MONOTONIC (Python's time.monotonic()): for comparing with a script's own log.
          {"steady_from_t", if_measured(e.start_t + e.warmup_s)},
          {"steady_to_t", if_measured(e.start_t + e.warmup_s + e.steady_s)},
          {"n_batches", e.n_batches},
          {"converged", e.converged},
          // The StageOptions::stop_above rate it stopped on before converging (probe's loader stage), else null.
          {"stopped_above", Opt(s.stopped_above)},
          {"drift", e.drift},
          {"drift_rel", if_measured(e.drift_rel)},
          {"trend_rel", if_measured(e.trend_rel)},
          {"trend_bound_rel", if_measured(e.trend_bound_rel)},
          {"warmup_at_limit", e.warmup_at_limit},
          {"observations", s.observations},
          {"data_wait_share", Opt(s.data_wait_share)},
          {"phase_shares", SharesJson(s.phase_shares)},
          {"step_parts", StepPartsJson(s)},
          {"flops", Ordered(core::FlopsInfoJson(s.flops))},
          {"flops_skipped", s.flops_skipped.empty() ? ordered_json(nullptr) : ordered_json(s.flops_skipped)},
          {"flops_rate", Ordered(core::FlopsReadingJson(StageFlops(r, s)))},
          {"totals",
           {{"steps", t.steps},
            {"samples", Num(t.samples)},
            {"wait_s", Num(t.wait_s)},
            {"step_s", Num(t.step_s)},
            {"excluded_s", Num(t.excluded_s)},
            {"phases_s", SharesJson(t.phases_s)},
            {"mem_peak_bytes", Opt(t.mem_peak_bytes)},
            {"processes", t.processes},
            {"done_reason", t.done_reason.empty() ? ordered_json(nullptr) : ordered_json(t.done_reason)}}},
          {"outcome", OutcomeJson(s)},
          {"telemetry", TelemetryJson(s.telemetry)},
          {"workers", Opt(StageWorkers(s))},
          {"series", std::move(series)},
          {"wall_s", Num(s.wall_s)},
          {"log_dir", s.log_dir}};
}

}  // namespace

std::string ConsoleReport(const ProbeResult& r) {
  std::string out;
  out += OneLine("probe: " + ShellJoin(r.command)) + '\n';

  const core::Machine& m = r.machine;
  std::vector<std::string> machine = {fmt::format("{} core{}", m.cpu_count, m.cpu_count == 1 ? "" : "s")};
  if (m.mem_total_bytes) machine.push_back(FormatGiB(static_cast<double>(*m.mem_total_bytes)) + " RAM");
  if (m.gpu_index < 0) {
    machine.push_back("no GPU");
  } else {
    std::string mem = m.gpu_mem_total_bytes ? " (" + FormatGiB(static_cast<double>(*m.gpu_mem_total_bytes)) + ")" : "";
    machine.push_back(OneLine(fmt::format("GPU {} {}{}", m.gpu_index, m.gpu_name, mem)));
  }
  out += "machine: " + JoinNonEmpty(machine, ", ") + '\n';

  out += fmt::format("stages: {}; budget {:.0f} s, took {:.1f} s{}\n", StagesText(r), r.budget_s, r.wall_s,
                     r.interrupted ? " (interrupted)" : "");
  out += OneLine("reporting: " + ReportingText(r)) + '\n';

  out += '\n';
  std::vector<Row> rows = {{"stage", "samples/s", "95% interval", "±", "steady", "seen"}};
  for (const core::StageResult* s : {&r.loader, &r.compute, &r.full}) {
    if (!r.helper && !s->ran && s->kind != core::StageKind::kFull) continue;  // no helper: only full can run
    rows.push_back(StageRow(r, *s));
  }
  out += Table(rows);
  out += '\n';
  if (std::string loader = TrainingLoaderLine(r.full); !loader.empty()) out += OneLine(loader) + '\n';
  out += RanksLines(r.full);
  out += StepTimeLine(r.full) + '\n';
  if (std::string flops = FlopsLine(r); !flops.empty()) out += OneLine(flops) + '\n';
  if (std::string energy = EnergyLine(r); !energy.empty()) out += OneLine(energy) + '\n';
  if (std::string cost = CostLine(r); !cost.empty()) out += OneLine(cost) + '\n';
  if (!r.what_if.empty()) out += core::WhatIfText(EstimateWhatIf(r, r.what_if));
  if (r.trace) {
    for (const std::string& line : core::TraceOutcomeLines(*r.trace)) out += OneLine(line) + '\n';
  }
  out += DataLines(r);

  if (!r.verdict.notes.empty()) {
    out += "notes:\n";
    for (const std::string& note : r.verdict.notes) out += OneLine("  - " + note) + '\n';
  }
  out += VerdictLine(r.verdict);
  return out;
}

ordered_json ProbeJson(const ProbeResult& r) {
  const core::Machine& m = r.machine;
  const Verdict& v = r.verdict;
  return {{"version", SATURATE_VERSION},
          {"command", RedactArgv(r.command)},
          {"machine",
           {{"cpu_count", m.cpu_count},
            {"usable_cores", m.usable_cores},
            {"cpu_model", m.cpu_model.empty() ? ordered_json(nullptr) : ordered_json(m.cpu_model)},
            {"mem_total_bytes", Opt(m.mem_total_bytes)},
            {"gpu_index", m.gpu_index >= 0 ? ordered_json(m.gpu_index) : ordered_json(nullptr)},
            {"gpu_name", m.gpu_name.empty() ? ordered_json(nullptr) : ordered_json(m.gpu_name)},
            {"gpu_mem_total_bytes", Opt(m.gpu_mem_total_bytes)}}},
          {"budget", {{"limit_s", Num(r.budget_s)}, {"wall_s", Num(r.wall_s)}}},
          {"helper", r.helper},
          {"instrumentation", Instrumentation(r)},
          {"auto_enabled", r.auto_enabled},
          {"interrupted", r.interrupted},
          {"stages",
           {{"loader", StageJson(r, r.loader)}, {"compute", StageJson(r, r.compute)}, {"full", StageJson(r, r.full)}}},
          {"trace", Ordered(core::TraceOutcomeJson(r.trace))},
          {"what_if", WhatIfJson(r)},
          {"data_locations", DataLocationsJson(r.data_locations)},
          {"storage", StorageJson(r)},
          {"verdict",
           {{"bottleneck", v.bottleneck.empty() ? ordered_json(nullptr) : ordered_json(v.bottleneck)},
            {"cause", v.cause},
            {"evidence", v.evidence},
            {"next", v.next},
            {"notes", v.notes},
            {"failed", v.failed},
            {"failure", v.failure}}}};
}

}  // namespace sat::probe
