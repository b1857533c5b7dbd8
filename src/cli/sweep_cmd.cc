// `saturate sweep SPEC.yaml | --grid NAME=V,... -- CMD`: a hyper-parameter sweep packed onto GPUs (or CPU cores)
// by measurement, journaled for --resume; `sweep status` and `sweep export` read the journal.
#include <fmt/core.h>
#include <unistd.h>

#include <iostream>

#include "cli/command.h"
#include "cli/gpu_setup.h"
#include "cli/options.h"
#include "cli/serve_flag.h"
#include "cli/sweep_backends.h"
#include "cli/sweep_report.h"
#include "cli/sweep_slurm.h"
#include "cli/terminal.h"
#include "monitor/human_view.h"
#include "run/interrupt.h"
#include "sweep/controller.h"
#include "sweep/sweep_journal.h"
#include "sweep/degree_record.h"
#include "sweep/device_log.h"
#include "sweep/export.h"
#include "sweep/mps.h"
#include "sweep/status.h"
#include "sweep/view.h"
#include "telemetry/sampler.h"
#include "util/atomic_file.h"
#include "util/bytes.h"
#include "util/json_text.h"
#include "util/range.h"
#include "util/strings.h"

namespace sat::cli {
namespace {

struct SweepCliOptions {
  std::vector<std::string> args;  // the spec file, or with --grid the command
  std::vector<std::string> grid, shape, stage;
  std::string journal, gpus, timeout, warmup, window, metric, metric_pattern;
  std::string stage_policy, stage_dir, stage_cap, stage_verify, stage_copy_first;  // empty: the spec's
  bool maximize = false, resume = false, cpu = false, mps = false, json = false, quiet = false, no_auto = false;
  bool fresh = false;  // ignore what earlier sweeps learnt (the packing record), and record nothing
  int retries = -1, max_per_gpu = 0;
  double min_gain = 0.05;
  double price_per_hour = 0;  // 0: not given (PriceFlag)
  bool slurm = false, cancel = false;  // the Slurm backend (cli/sweep_slurm.h)
  ServeFlag serve;
};

struct ReadCliOptions {
  std::vector<std::string> args;  // the spec file
  std::string journal, out;
  bool json = false, csv = false, all = false;
  double price_per_hour = 0;  // status: 0: not given (PriceFlag)
};

// The price the summary's GPU-hours are given in: --price-per-hour, else the spec's saturate.price_per_gpu_hour.
Result<std::optional<double>> SummaryPrice(double flag, const std::optional<double>& from_spec) {
  auto price = PriceFlag(flag);
  if (!price) return price.error();
  return *price ? *price : from_spec;
}

// What a sweep cost, after its table (`sweep` and `sweep status`): a paragraph of the GPU-hours (in money with a
// price) and the energy, and one of the asked-vs-used report of its Slurm attempts; "" when none applies.
Result<std::string> CostText(const sweep::SweepStatus& status, std::optional<double> price, bool all) {
  std::string out = sweep::FormatGpuHours(status.gpu_hours, price) + sweep::FormatEnergy(status.energy);
  if (!out.empty()) out = '\n' + out;
  auto report = SlurmReportText(status.journal_path, all, price);
  if (!report) return report.error();
  if (!report->empty()) out += '\n' + *report;
  return out;
}

// The same as members of `doc`: "gpu_hours", "energy", and "slurm" when the journal has Slurm attempts.
Status AddCostJson(const sweep::SweepStatus& status, std::optional<double> price, nlohmann::json& doc) {
  doc["gpu_hours"] = sweep::GpuHoursJson(status.gpu_hours, price);
  doc["energy"] = sweep::EnergyJson(status.energy);
  auto report = SlurmReportJsonOf(status.journal_path, price);
  if (!report) return report.error();
  if (!report->is_null()) doc["slurm"] = *report;
  return Status::Ok();
}

Result<sweep::Spec> LoadSpec(const SweepCliOptions& c) {
  if (!c.grid.empty()) return sweep::SpecFromGrid(c.grid, c.args);
  if (c.args.size() == 1) return sweep::LoadSpecFile(c.args[0]);
  if (c.args.empty()) {
    return UsageError(
        "sweep needs a spec file (saturate sweep sweep.yaml) or --grid with a command "
        "(saturate sweep --grid lr=0.1,0.01 -- python3 train.py --lr {lr})");
  }
  return UsageError(
      fmt::format("sweep takes one spec file, not {} arguments; a command goes with --grid after --", c.args.size()));
}

Result<sweep::Spec> BuildSpec(const SweepCliOptions& c) {
  auto spec = LoadSpec(c);
  if (!spec) return spec;
  // Scheduling settings from the command line win over the spec's; none of them changes the plan.
  sweep::SaturateOptions& o = spec->saturate;
  if (!c.shape.empty()) o.shape = c.shape;
  if (c.retries >= 0) o.retries = c.retries;
  if (c.max_per_gpu > 0) o.max_per_gpu = c.max_per_gpu;
  if (IsNoLimit(c.timeout)) {
    o.timeout_s = 0;
  } else {
    auto timeout = OptionalDurationFlag("--timeout", c.timeout, 0, Least::kExcluded);
    if (!timeout) return timeout.error();
    if (*timeout) o.timeout_s = **timeout;
  }
  if (!c.metric_pattern.empty()) o.metric_pattern = c.metric_pattern;
  if (c.no_auto) o.auto_instrumentation = false;
  for (const std::string& path : c.stage) o.stage.paths.push_back(path);
  if (!c.stage_policy.empty()) {
    auto policy = sweep::ParseStagePolicy(c.stage_policy);
    if (!policy) return UsageError(fmt::format("--stage-policy: '{}' is not auto, always or never", c.stage_policy));
    o.stage.policy = *policy;
  }
  if (!c.stage_dir.empty()) o.stage.dir = c.stage_dir;
  if (!c.stage_verify.empty()) {
    auto checksums = sweep::ParseStageVerify(c.stage_verify);
    if (!checksums) return UsageError(fmt::format("--stage-verify: '{}' is not sizes or checksums", c.stage_verify));
    o.stage.verify_checksums = *checksums;
  }
  auto copy_first = OptionalDurationFlag("--stage-copy-first", c.stage_copy_first, 0, Least::kIncluded);
  if (!copy_first) return copy_first.error();
  if (*copy_first) o.stage.copy_first_s = **copy_first;
  if (!c.stage_cap.empty()) {
    auto bytes = ParseBytes(c.stage_cap);
    if (!bytes || *bytes == 0) {
      return UsageError(fmt::format("--stage-cap: '{}' is not a size above 0 like 200GiB or 50G", c.stage_cap));
    }
    o.stage.cap_bytes = *bytes;
  }
  if (!c.metric.empty()) {
    spec->metric = sweep::MetricSpec{c.metric, c.maximize ? sweep::Goal::kMaximize : sweep::Goal::kMinimize, {}};
  }
  return spec;
}

// The live view on a terminal: event lines scroll above a block redrawn in place. Elsewhere: event lines only.
class LiveOutput {
 public:
  explicit LiveOutput(bool quiet) : redraw_(!quiet && isatty(STDERR_FILENO)), quiet_(quiet) {}

  void Event(const sweep::SweepEvent& e) {
    if (quiet_) return;
    std::string out = monitor::RedrawPrefix(block_.size()) + sweep::EventLine(e) + "\n";
    for (const auto& line : block_) out += line + "\n";
    fmt::print(stderr, "{}", out);
  }
  void Snapshot(const sweep::SweepSnapshot& s) {
    if (!redraw_) return;
    std::string out = monitor::RedrawPrefix(block_.size());
    block_ = sweep::LiveLines(s, TerminalWidth(STDERR_FILENO) - 1);
    for (const auto& line : block_) out += line + "\n";
    fmt::print(stderr, "{}", out);
  }

 private:
  bool redraw_, quiet_;
  std::vector<std::string> block_;
};

Status RunSweepCommand(const SweepCliOptions& c) {
  auto spec = BuildSpec(c);
  if (!spec) return spec.error();
  auto backend = ChooseBackend(*spec, c.slurm);
  if (!backend) return backend.error();
  const SweepBackend& runs_on = **backend;
  auto price = SummaryPrice(c.price_per_hour, spec->saturate.price_per_gpu_hour);
  if (!price) return price.error();
  const std::string journal = c.journal.empty() ? sweep::DefaultJournalPath(*spec) : c.journal;

  sweep::SweepOptions o;
  o.journal_path = journal;
  o.log_dir = sweep::LogDirFor(journal);
  o.resume = c.resume;
  o.packing.min_gain = c.min_gain;
  // What earlier sweeps of this command learnt on this machine (sweep/degree_record.h); none without a home.
  if (!c.fresh) o.packing_record = sweep::DefaultDegreeRecordPath().value_or("");
  for (auto [flag, text, out] :
       {std::tuple("--warmup", &c.warmup, &o.warmup_s), std::tuple("--window", &c.window, &o.window_s)}) {
    auto seconds = OptionalDurationFlag(flag, *text, 0, Least::kExcluded);
    if (!seconds) return seconds.error();
    if (*seconds) *out = **seconds;
  }
  if (Status st = CheckInRange("--min-gain", c.min_gain, RightOpen(0, 1)); !st) return st;

  if (!runs_on.this_machine && (c.cpu || c.mps || !c.gpus.empty())) {
    return UsageError(fmt::format("--cpu, --gpus and --mps pick this machine's devices; on {}, saturate.{} in the "
                                  "spec says what each job asks for",
                                  runs_on.on, runs_on.name));
  }
  if (c.cancel && !runs_on.leaves_jobs) return UsageError("--cancel is for sweeps on Slurm (--slurm)");
  if (c.cpu && !c.gpus.empty()) return UsageError("give --cpu or --gpus, not both");
  auto gpus = OpenGpus(c.cpu ? "" : c.gpus);
  if (!gpus) return gpus.error();
  if (!c.cpu && gpus->backend && gpus->backend->DeviceCount() > 0) {
    o.gpu = gpus->backend.get();
    o.gpu_indices = gpus->indices;
  }
  std::unique_ptr<sweep::MpsDaemon> mps;
  if (c.mps) {
    if (!o.gpu) {
      return UsageError(fmt::format("--mps needs NVIDIA GPUs, and {}", c.cpu                ? "--cpu leaves them out"
                                                                       : gpus->note.empty() ? "none were found"
                                                                                            : gpus->note));
    }
    auto started = sweep::MpsDaemon::Start();
    if (!started) return started.error();
    mps = std::move(*started);
    o.env = mps->env();
    for (const auto& note : mps->notes()) fmt::print(stderr, "saturate: {}\n", note);
  }

  for (const auto& w : sweep::SpecWarnings(*spec)) fmt::print(stderr, "saturate: warning: {}\n", w);
  if (!c.quiet) {
    fmt::print(stderr, "saturate: sweep of {} on {}; journal {}\n", spec->source,
               !runs_on.on.empty() ? runs_on.on
               : o.gpu             ? "GPUs"
               : c.cpu             ? "the CPU"
                                   : "the CPU (no GPU found)",
               journal);
  }
  LiveOutput live(c.quiet);
  // report.html beside the journal, kept fresh while the sweep runs.
  LiveReport page(journal, *price);
  o.on_event = [&live, &page](const sweep::SweepEvent& e) {
    live.Event(e);
    page.Poll();
  };
  o.on_snapshot = [&live, &page](const sweep::SweepSnapshot& s) {
    live.Snapshot(s);
    page.Poll();
  };
  // The devices' memory and utilisation for the page's lanes (this machine's devices only).
  std::shared_ptr<sweep::DeviceLog> devices;
  if (runs_on.this_machine) {
    auto opened = sweep::DeviceLog::Open(o.log_dir);
    if (opened) devices = std::move(*opened);
    else fmt::print(stderr, "saturate: warning: {}\n", opened.error().message);
  }
  // --serve: the host and GPUs as sampled, and each running run's samples/s as the live view shows it.
  auto exporter = StartExporter(c.serve);
  if (!exporter) return exporter.error();
  live::LiveFigures* figures = exporter->figures.get();
  if (devices || figures) {
    o.on_sample = [devices, figures](const telemetry::Sample& s) {
      if (devices) devices->Add(s);
      if (figures) figures->SetSample(s);
    };
  }
  if (figures) {
    o.on_snapshot = [&live, &page, figures](const sweep::SweepSnapshot& s) {
      live.Snapshot(s);
      page.Poll();
      std::vector<sat::live::RunSeries> runs;
      for (const sweep::DeviceSnapshot& device : s.devices) {
        for (const sweep::LiveRunView& run : device.runs) {
          runs.push_back({{{"command", "sweep"}, {"run", run.key}, {"index", std::to_string(run.index)},
                           {"device", device.name}},
                          run.samples_per_s});
        }
      }
      figures->SetRuns("sweep", std::move(runs), telemetry::MonotonicSeconds());
    };
  }

  run::InstallInterruptHandlers();
  auto result = runs_on.run(*spec, o, BackendFlags{.cancel = c.cancel});
  if (!result) return result.error();
  for (const auto& w : result->warnings) fmt::print(stderr, "saturate: warning: {}\n", w);

  auto status = sweep::ReadStatus(journal);
  if (!status) return status.error();
  // A page that could not be written is named in the warning only, never printed as if it were there.
  const Status page_written = page.Finish();
  if (!page_written) fmt::print(stderr, "saturate: warning: no report.html: {}\n", page_written.error().message);
  if (c.json) {
    nlohmann::json doc = sweep::StatusJson(*status);
    doc["report"] = page_written ? nlohmann::json(page.path()) : nlohmann::json();
    doc["wall_s"] = result->wall_s;
    doc["interrupted"] = result->interrupted;
    doc["held_degree"] = result->held;
    doc["clocked"] = result->clocked;
    if (auto s = AddCostJson(*status, *price, doc); !s) return s;
    std::cout << JsonText(doc, 2) << '\n';
  } else {
    std::cout << fmt::format("sweep {} in {:.1f} s: {}\n", result->interrupted ? "interrupted" : "finished",
                             result->wall_s, sweep::CountsLine(result->counts));
    for (const auto& [shape, degree] : result->held) {
      std::cout << fmt::format("held {} run{} per device for {}\n", degree, degree == 1 ? "" : "s",
                               shape.empty() ? "this sweep's runs" : shape);
    }
    std::cout << sweep::ClockedText(result->clocked, spec->saturate.pack_clocked);
    std::cout << '\n' << sweep::ResultsTable(status->runs, status->sweep.metric, 20);
    auto cost = CostText(*status, *price, false);
    if (!cost) return cost.error();
    std::cout << *cost;
    if (result->staging) std::cout << sweep::StagingText(*result->staging);
    if (page_written) std::cout << "report: " << page.path() << '\n';
  }
  std::cout.flush();
  if (result->interrupted) {
    return Error{fmt::format("interrupted; {} run{} left; continue with --resume", result->counts.queued,
                             result->counts.queued == 1 ? "" : "s"),
                 kExitInterrupted};
  }
  if (result->counts.failed > 0) {
    return Error{fmt::format("{} of {} runs failed; their logs are under {}", result->counts.failed,
                             result->counts.total(), o.log_dir)};
  }
  return Status::Ok();
}

Result<std::string> JournalOf(const ReadCliOptions& c, std::string_view command) {
  if (!c.journal.empty() && !c.args.empty()) {
    return UsageError(fmt::format("sweep {}: give --journal or a spec, not both", command));
  }
  if (!c.journal.empty()) return c.journal;
  if (c.args.size() == 1) return sweep::JournalPathForSpecFile(c.args[0]);
  return UsageError(fmt::format("sweep {} needs the sweep's spec file or --journal PATH", command));
}

// The price for a command that reads a journal: --price-per-hour, else the spec's when it was given the spec. The
// journal is what it reads: a spec moved or edited since the sweep costs only its price, with a note.
Result<std::optional<double>> ReadPrice(const ReadCliOptions& c) {
  std::optional<double> spec_price;
  if (c.journal.empty() && c.args.size() == 1 && c.price_per_hour == 0) {
    if (auto spec = sweep::LoadSpecFile(c.args[0])) {
      spec_price = spec->saturate.price_per_gpu_hour;
    } else {
      fmt::print(stderr, "saturate: note: no price from the spec: {}\n", spec.error().message);
    }
  }
  return SummaryPrice(c.price_per_hour, spec_price);
}

Status RunStatusCommand(const ReadCliOptions& c) {
  auto path = JournalOf(c, "status");
  if (!path) return path.error();
  auto status = sweep::ReadStatus(*path);
  if (!status) return status.error();
  auto price = ReadPrice(c);
  if (!price) return price.error();
  if (c.json) {
    nlohmann::json doc = sweep::StatusJson(*status);
    if (auto s = AddCostJson(*status, *price, doc); !s) return s;
    std::cout << JsonText(doc, 2) << '\n';
  } else {
    std::cout << sweep::FormatStatus(*status, c.all ? 0 : 20);
    auto cost = CostText(*status, *price, c.all);
    if (!cost) return cost.error();
    std::cout << *cost;
  }
  std::cout.flush();
  if (!status->problems.empty()) return Error{fmt::format("journal {} is inconsistent", *path)};
  return Status::Ok();
}

Status RunExportCommand(const ReadCliOptions& c) {
  if (c.csv == c.json) return UsageError("sweep export needs one of --csv or --json");
  auto path = JournalOf(c, "export");
  if (!path) return path.error();
  auto status = sweep::ReadStatus(*path);
  if (!status) return status.error();
  const std::string text = c.csv ? sweep::ResultsCsv(status->runs, status->sweep.metric)
                                 : JsonText(sweep::ResultsJson(status->runs, status->sweep.metric), 2) + "\n";
  if (c.out.empty() || c.out == "-") {
    std::cout << text;
    std::cout.flush();
    return Status::Ok();
  }
  return WriteFileAtomically(c.out, text);
}

// `saturate sweep report SPEC`: report.html from the journal (read-only; a sweep may be running).
Status RunReportCommand(const ReadCliOptions& c) {
  auto path = JournalOf(c, "report");
  if (!path) return path.error();
  auto price = ReadPrice(c);
  if (!price) return price.error();
  const std::string out = c.out.empty() ? sweep::ReportPathFor(*path) : c.out;
  auto page = WriteSweepReport(*path, out, *price, false);
  if (!page) return page.error();
  if (c.json) {
    nlohmann::json doc = {{"report", out},
                          {"journal", *path},
                          {"runs", page->status.runs.size()},
                          {"attempts", page->attempts.size()},
                          {"device_points", page->devices.size()}};
    std::cout << JsonText(doc, 2) << '\n';
  } else {
    std::cout << fmt::format("report: {} ({} runs, {} attempts)\n", out, page->status.runs.size(),
                             page->attempts.size());
  }
  std::cout.flush();
  return Status::Ok();
}

void AddReadOptions(CLI::App& sub, ReadCliOptions& c) {
  sub.add_option("spec", c.args, "the sweep's spec file (its journal is found beside it)");
  sub.add_option("--journal", c.journal, "the journal to read (default: beside the spec)");
}

void AddPriceOption(CLI::App& sub, ReadCliOptions& c) {
  sub.add_option("--price-per-hour", c.price_per_hour,
                 "what one GPU-hour costs (e.g. 2.50): the GPU-hours in money (default: the spec's "
                 "saturate.price_per_gpu_hour)")
      ->type_name("PRICE");
}

}  // namespace

Action SetupSweep(CLI::App& app) {
  auto c = std::make_shared<SweepCliOptions>();
  app.add_option("spec", c->args,
                 "the W&B sweep spec (YAML; method grid, random or bayes; early_terminate hyperband); with --grid, "
                 "the command after --");
  app.add_option("--grid", c->grid, "NAME=V1,V2,...: one axis of a grid (repeat for more); {NAME} in the command")
      ->allow_extra_args(false);
  app.add_option("--journal", c->journal,
                 "the journal (default: beside the spec, X.journal; with --grid saturate-sweep-<hash>.journal)");
  app.add_flag("--resume", c->resume, "continue the sweep in the journal: done runs stay done, interrupted ones rerun");
  app.add_option("-i,--gpus", c->gpus, "GPUs to use, e.g. 0,1 (default: the spec's, else all)");
  app.add_flag("--cpu", c->cpu, "pack runs on the CPU cores even when there are GPUs");
  app.add_flag("--fresh", c->fresh,
               "start packing afresh: neither use nor record the degree earlier sweeps of this command settled on "
               "(~/.cache/saturate/packing.json)");
  app.add_option("--max-per-gpu", c->max_per_gpu, "at most this many runs share a device (default: as measured)");
  app.add_option("--shape", c->shape, "a parameter that changes a run's footprint (model, batch size); repeatable")
      ->allow_extra_args(false);
  app.add_option("--timeout", c->timeout, "per attempt, e.g. 30m, or 'none' for no limit (default: the spec's, else none)");
  app.add_option("--retries", c->retries, "how often a failed run is tried again (default: the spec's, else 2)");
  app.add_option("--metric", c->metric, "the metric results are sorted by (default: the spec's)");
  app.add_flag("--maximize", c->maximize, "with --metric: higher is better");
  app.add_option("--metric-pattern", c->metric_pattern,
                 "a regex with named groups reading metrics from output lines, e.g. 'loss=(?P<loss>[0-9.]+)'");
  app.add_option("--min-gain", c->min_gain, "keep packing while each admission raises progress this much (0.05)");
  app.add_option("--warmup", c->warmup, "a run's warm-up before it is measured (default 5s on GPUs, 1s on the CPU)");
  app.add_option("--window", c->window, "the span rates are measured over (default 3s on GPUs, 1s on the CPU)");
  app.add_flag("--mps", c->mps, "run NVIDIA MPS for the sweep (GPUs only)");
  app.add_flag("--no-auto", c->no_auto,
               "no automatic instrumentation of PyTorch runs (SATURATE_AUTO=0): only runs that use `import "
               "saturate` report steps, the others are judged by their CPU use");
  app.add_option("--price-per-hour", c->price_per_hour,
                 "what one GPU-hour costs (e.g. 2.50): the summary's GPU-hours in money (default: the spec's "
                 "saturate.price_per_gpu_hour)")
      ->type_name("PRICE");
  app.add_option("--stage", c->stage,
                 "a file or folder the runs read, copied once to a local drive and given to each run in its place "
                 "(as saturate.stage; repeatable), e.g. --stage /nfs/imagenet")
      ->allow_extra_args(false);
  app.add_option("--stage-policy", c->stage_policy,
                 "when to copy: auto (when the first run's loader waits on storage; the default), always, never");
  app.add_option("--stage-dir", c->stage_dir,
                 "the local store of staged copies (default: ~/.cache/saturate/stage; on Slurm the node's scratch)");
  app.add_option("--stage-verify", c->stage_verify,
                 "how a copy already in the store is checked before runs read it: sizes (sizes, times and modes "
                 "against the data's; the default) or checksums (every file read back)");
  app.add_option("--stage-copy-first", c->stage_copy_first,
                 "auto, on a network or FUSE mount: a copy expected to take at most this long is made before the "
                 "first run starts, rather than judged on it (default 10s; 0: the first run always starts beside "
                 "the copy)")
      ->type_name("DURATION");
  app.add_option("--stage-cap", c->stage_cap,
                 "the store's size at most, e.g. 200GiB: the least recently used copies nobody reads are evicted");
  app.add_flag("--json", c->json, "print the final status as JSON");
  app.add_flag("-q,--quiet", c->quiet, "no live view or event lines");
  AddServeFlag(app, c->serve, "and each running run's samples/s");
  app.add_flag("--slurm", c->slurm,
               "submit the runs as Slurm jobs sized from measurement (as `saturate: {backend: slurm}`; settings in "
               "saturate.slurm), e.g. saturate sweep sweep.yaml --slurm");
  app.add_flag("--cancel", c->cancel, "on Slurm: Ctrl-C cancels the jobs in flight without asking");

  auto status = std::make_shared<ReadCliOptions>();
  CLI::App* status_cmd = app.add_subcommand("status", "counts and the results table of a sweep's journal");
  AddReadOptions(*status_cmd, *status);
  status_cmd->add_flag("--json", status->json, "print JSON instead");
  status_cmd->add_flag("--all", status->all, "list every run (default: the best 20)");
  AddPriceOption(*status_cmd, *status);

  auto exported = std::make_shared<ReadCliOptions>();
  CLI::App* export_cmd = app.add_subcommand("export", "the results as CSV or JSON, best first");
  AddReadOptions(*export_cmd, *exported);
  export_cmd->add_flag("--csv", exported->csv, "CSV (RFC 4180)");
  export_cmd->add_flag("--json", exported->json, "JSON");
  export_cmd->add_option("-o,--output", exported->out, "write to FILE instead of stdout");

  auto reported = std::make_shared<ReadCliOptions>();
  CLI::App* report_cmd = app.add_subcommand(
      "report",
      "report.html from the journal: every attempt on a timeline by device, packing, device lanes, the runs "
      "table; e.g. saturate sweep report sweep.yaml (written beside the journal: sweep.report.html)");
  AddReadOptions(*report_cmd, *reported);
  report_cmd->add_option("-o,--output", reported->out, "write the page to FILE (default: beside the journal)");
  report_cmd->add_flag("--json", reported->json, "print the page's path and counts as JSON");
  AddPriceOption(*report_cmd, *reported);

  // What each Slurm job runs on its node; not for people.
  auto run_one = std::make_shared<std::string>();
  CLI::App* run_one_cmd = app.add_subcommand("run-one", "run one attempt of a sweep on Slurm (its jobs call this)");
  run_one_cmd->add_option("job", *run_one, "the attempt's job.json")->required();
  run_one_cmd->group("");

  return [c, status, exported, reported, status_cmd, export_cmd, report_cmd, run_one, run_one_cmd]() -> Status {
    if (run_one_cmd->parsed()) return RunOneCommand(*run_one);
    if (report_cmd->parsed()) return RunReportCommand(*reported);
    if (status_cmd->parsed()) return RunStatusCommand(*status);
    if (export_cmd->parsed()) return RunExportCommand(*exported);
    return RunSweepCommand(*c);
  };
}

}  // namespace sat::cli
