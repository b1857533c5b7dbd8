// `saturate probe -- CMD`: the three pipes of a training command and its narrowest one.
#include <fmt/core.h>

#include <iostream>

#include "cli/command.h"
#include "cli/gpu_setup.h"
#include "cli/measurement_flags.h"
#include "cli/options.h"
#include "cli/serve_flag.h"
#include "probe/outputs.h"
#include "probe/probe.h"
#include "probe/report.h"
#include "run/interrupt.h"
#include "util/json_text.h"
#include "util/range.h"

namespace sat::cli {
namespace {

struct ProbeCliOptions {
  MeasurementFlags m;
  std::string budget = "2m";
  bool json = false;
  std::string out;
  bool trace = false;
  double target = 0.02;
  ServeFlag serve;
};

Status RunProbeCommand(const ProbeCliOptions& c) {
  if (c.m.command.empty())
    return UsageError("probe needs a training command after --, e.g. saturate probe -- python3 train.py");
  auto budget = DurationFlag("--budget", c.budget, 20);
  if (!budget) return budget.error();
  if (Status st = CheckInRange("--target", c.target, Open(0, 1), "a fraction: 0.02 = ±2%"); !st) return st;
  auto m = CheckMeasurementFlags(c.m);
  if (!m) return m.error();

  auto gpus = OpenGpus(c.m.device >= 0 ? std::to_string(c.m.device) : "");
  if (!gpus) return gpus.error();
  if (!gpus->backend && !c.json) fmt::print(stderr, "saturate: {}; probing without GPU telemetry\n", gpus->note);

  probe::ProbeOptions o;
  o.session = m->session;
  o.session.target_rel_half_width = c.target;
  o.budget_s = *budget;
  o.out_dir = c.out;
  o.trace = c.trace;
  o.price_per_gpu_hour = m->price_per_gpu_hour;
  o.what_if = std::move(m->what_if);

  auto exporter = StartExporter(c.serve);
  if (!exporter) return exporter.error();
  o.session.live = exporter->figures.get();

  run::InstallInterruptHandlers();
  StopRunsOfKilledMeasurements();
  auto result = probe::RunProbe(o, gpus->backend.get());
  if (!result) return result.error();
  if (!c.out.empty()) {
    if (Status st = probe::WriteProbeOutputs(*result, c.out); !st) return st;
  }
  if (c.json) {
    std::cout << JsonText(probe::ProbeJson(*result), 2) << '\n';
  } else {
    std::cout << probe::ConsoleReport(*result);
  }
  std::cout.flush();
  if (!c.out.empty()) fmt::print(stderr, "saturate: report: {}/report.html\n", c.out);
  if (!result->kept_log_dir.empty()) {
    fmt::print(stderr, "saturate: the run failed; its logs are kept in {}\n", result->kept_log_dir);
  }
  if (result->interrupted) return Error{"interrupted; the report shows what was measured", kExitInterrupted};
  if (result->verdict.failed) return Error{result->verdict.failure, kExitFailure};
  return Status::Ok();
}

}  // namespace

Action SetupProbe(CLI::App& app) {
  auto c = std::make_shared<ProbeCliOptions>();
  app.add_option("--budget", c->budget, "total time for all measurements (default 2m; e.g. 90s, 5m)");
  app.add_flag("--json", c->json, "print probe.json instead of the report");
  app.add_option("--out", c->out, "keep probe.json, report.html (the pipes and curves, for a browser) and each stage's logs in DIR");
  app.add_option("--target", c->target, "stop a measurement once its 95% interval is within ±TARGET (default 0.02)");
  app.add_flag("--trace", c->trace,
               "save a torch.profiler Chrome trace of a few steady steps of the full stage (trace.json in --out, "
               "else saturate-probe-trace-TIME.json here) and summarise it: GPU idle, kernels, copies, top kernels");
  AddMeasurementFlags(app, c->m, "", "the report gives the cost per million samples and per epoch",
                      "what the measured command would give");
  AddServeFlag(app, c->serve, "the command's process tree and each stage's samples/s");
  return [c] { return RunProbeCommand(*c); };
}

}  // namespace sat::cli
