// `saturate probe -- CMD`: the three pipes of a training command and its narrowest one.
#include <fmt/core.h>

#include <cmath>
#include <iostream>
#include <optional>

#include "cli/command.h"
#include "cli/gpu_setup.h"
#include "cli/options.h"
#include "cli/serve_flag.h"
#include "probe/probe.h"
#include "probe/report.h"
#include "run/interrupt.h"
#include "util/json_text.h"
#include "util/range.h"
#include "util/strings.h"

namespace sat::cli {
namespace {

struct ProbeCliOptions {
  std::string budget = "2m";
  int device = -1;
  bool json = false;
  std::string out;
  std::string parse;
  double batch_size = 0;
  bool no_auto = false;
  std::string samples_per_step;
  bool verbose = false;
  bool shell = false;
  bool trace = false;
  double target = 0.02;
  double price_per_hour = 0;
  std::string what_if;
  ServeFlag serve;
  std::vector<std::string> command;
};

Status RunProbeCommand(const ProbeCliOptions& c) {
  if (c.command.empty())
    return UsageError("probe needs a training command after --, e.g. saturate probe -- python3 train.py");
  auto budget = DurationFlag("--budget", c.budget, 20);
  if (!budget) return budget.error();
  if (Status st = CheckInRange("--target", c.target, Open(0, 1), "a fraction: 0.02 = ±2%"); !st) return st;
  if (c.batch_size != 0) {
    if (Status st = CheckInRange("--batch-size", c.batch_size, Above(0)); !st) return st;
  }
  auto price = PriceFlag(c.price_per_hour);
  if (!price) return price.error();
  std::optional<double> samples_per_step;
  if (!c.samples_per_step.empty()) {
    samples_per_step = ParseDouble(c.samples_per_step);
    if (!samples_per_step || !std::isfinite(*samples_per_step) || *samples_per_step <= 0) {
      return UsageError(fmt::format("--samples-per-step '{}' is not a positive number (samples in one training "
                                    "step, e.g. 64)", c.samples_per_step));
    }
  }

  auto gpus = OpenGpus(c.device >= 0 ? std::to_string(c.device) : "");
  if (!gpus) return gpus.error();
  if (!gpus->backend && !c.json) fmt::print(stderr, "saturate: {}; probing without GPU telemetry\n", gpus->note);

  probe::ProbeOptions o;
  o.argv = c.command;
  o.shell = c.shell;
  o.budget_s = *budget;
  o.gpu_index = c.device;
  if (!c.parse.empty()) o.parse = c.parse;
  if (c.batch_size > 0) o.batch_size = c.batch_size;
  o.auto_instrument = !c.no_auto;
  o.samples_per_step = samples_per_step;
  o.out_dir = c.out;
  o.trace = c.trace;
  o.verbose = c.verbose;
  o.target_rel_half_width = c.target;
  o.price_per_gpu_hour = *price;
  if (!c.what_if.empty()) {
    auto targets = probe::ParseWhatIf(c.what_if);
    if (!targets) return targets.error();
    o.what_if = std::move(*targets);
  }

  auto exporter = StartExporter(c.serve);
  if (!exporter) return exporter.error();
  o.live = exporter->figures.get();

  run::InstallInterruptHandlers();
  auto result = probe::RunProbe(o, gpus->backend.get());
  if (!result) return result.error();
  if (c.json) {
    std::cout << JsonText(probe::ProbeJson(*result), 2) << '\n';
  } else {
    std::cout << probe::ConsoleReport(*result);
  }
  std::cout.flush();
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
  app.add_option("--device", c->device, "the GPU to probe (NVML index; the command sees only it)");
  app.add_flag("--json", c->json, "print probe.json instead of the report");
  app.add_option("--out", c->out, "keep probe.json and each stage's logs in DIR");
  app.add_option("--parse", c->parse,
                 "read throughput from the command's output: a regex with named groups (samples_per_s, or step_s / "
                 "ms_per_step / it_per_s with --batch-size; optional data_s, phase_<name>_s) or a preset: tqdm, "
                 "lightning, keras, saturate-example");
  app.add_option("--batch-size", c->batch_size, "samples per step, for --parse patterns that give steps");
  app.add_flag("--no-auto", c->no_auto,
               "do not instrument PyTorch scripts automatically (then only `import saturate` or --parse report; "
               "--parse turns it off too)");
  app.add_option("--samples-per-step", c->samples_per_step,
                 "samples in one training step, for scripts where neither a DataLoader nor the model's input says "
                 "(e.g. --samples-per-step 64)")
      ->type_name("N");
  app.add_option("--target", c->target, "stop a measurement once its 95% interval is within ±TARGET (default 0.02)");
  app.add_option("--price-per-hour", c->price_per_hour,
                 "what one GPU-hour costs (e.g. 2.50): the report gives the cost per million samples and per epoch")
      ->type_name("PRICE");
  app.add_option("--what-if", c->what_if,
                 "estimate other hardware from what was measured: GPUs, with N GPUs as NxGPU and a price per "
                 "GPU-hour after ':' (e.g. h100,a100:1.80,4xl4)");
  app.add_flag("--trace", c->trace,
               "save a torch.profiler Chrome trace of a few steady steps of the full stage (trace.json in --out, "
               "else saturate-probe-trace-TIME.json here) and summarise it: GPU idle, kernels, copies, top kernels");
  AddServeFlag(app, c->serve, "the command's process tree and each stage's samples/s");
  app.add_flag("-v,--verbose", c->verbose, "show the command's output");
  app.add_flag("--shell", c->shell, "run the command through /bin/sh -c");
  app.add_option("command", c->command, "the training command (after --)");
  return [c] { return RunProbeCommand(*c); };
}

}  // namespace sat::cli
