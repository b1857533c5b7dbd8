#include "cli/measurement_flags.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "cli/options.h"
#include "core/stage.h"
#include "run/leftovers.h"
#include "util/range.h"
#include "util/strings.h"

namespace sat::cli {

void AddMeasurementFlags(CLI::App& app, MeasurementFlags& f, std::string_view batch_size_more,
                         std::string_view price_gives, std::string_view what_if_of) {
  app.add_option("--device", f.device, "the GPU to measure on (NVML index; the command sees only it)");
  app.add_option("--parse", f.parse,
                 "read throughput from the command's output: a regex with named groups (samples_per_s, or step_s / "
                 "ms_per_step / it_per_s with --batch-size; optional data_s, phase_<name>_s) or a preset: tqdm, "
                 "lightning, keras, saturate-example");
  app.add_option("--batch-size", f.batch_size,
                 fmt::format("samples per step, for --parse patterns that give steps{}", batch_size_more))
      ->type_name("N");
  app.add_flag("--no-auto", f.no_auto,
               "do not instrument PyTorch scripts automatically: then only `import saturate` or --parse report, "
               "and nothing is injected into a script's DataLoader (--parse turns it off too)");
  app.add_option("--samples-per-step", f.samples_per_step,
                 "samples in one training step, for scripts where neither a DataLoader nor the model's input says "
                 "(e.g. --samples-per-step 64)")
      ->type_name("N");
  app.add_option("--price-per-hour", f.price_per_hour,
                 fmt::format("what one GPU-hour costs (e.g. 2.50): {}", price_gives))
      ->type_name("PRICE");
  app.add_option("--what-if", f.what_if,
                 fmt::format("estimate {} on other hardware: GPUs, N GPUs as NxGPU, a price per GPU-hour after ':' "
                             "(e.g. h100,a100:1.80,4xl4)",
                             what_if_of));
  app.add_flag("-v,--verbose", f.verbose, "show the command's output");
  app.add_flag("--shell", f.shell, "run the command through /bin/sh -c");
  app.add_option("command", f.command, "the training command (after --)");
}

Result<CheckedMeasurement> CheckMeasurementFlags(const MeasurementFlags& f) {
  CheckedMeasurement c;
  core::SessionOptions& s = c.session;
  s.argv = f.command;
  s.shell = f.shell;
  s.gpu_index = f.device;
  s.verbose = f.verbose;
  if (!f.parse.empty()) s.parse = f.parse;
  if (f.batch_size != 0) {
    if (Status st = CheckInRange("--batch-size", f.batch_size, Above(0)); !st) return st.error();
    s.batch_size = f.batch_size;
  }
  s.auto_instrument = !f.no_auto;
  if (!f.samples_per_step.empty()) {
    std::optional<double> n = ParseDouble(f.samples_per_step);
    if (!n || !std::isfinite(*n) || *n <= 0) {
      return UsageError(fmt::format("--samples-per-step '{}' is not a positive number (samples in one training "
                                    "step, e.g. 64)", f.samples_per_step));
    }
    s.samples_per_step = *n;
  }
  auto price = PriceFlag(f.price_per_hour);
  if (!price) return price.error();
  c.price_per_gpu_hour = *price;
  if (!f.what_if.empty()) {
    auto targets = core::ParseWhatIf(f.what_if);
    if (!targets) return targets.error();
    c.what_if = std::move(*targets);
  }
  return c;
}

void StopRunsOfKilledMeasurements() {
  std::set<pid_t> owners;
  const std::vector<pid_t> orphans = run::FindOrphans(core::kStageRunIdPrefix, &owners);
  if (orphans.empty()) return;
  const int stopped = run::StopProcesses(orphans, 3);
  fmt::print(stderr, "saturate: stopped {} process{} left running by a probe or tune that was killed (saturate pid {})\n",
             stopped, stopped == 1 ? "" : "es", fmt::join(owners, ", "));
}

}  // namespace sat::cli
