// The seam between a stage's rules and the command it measures, as ninja's CommandRunner is between its build
// rules and processes: what a stage starts, waits on and reads. RunStage (stage.h) starts the real one, an
// instrumented run (measure/instrumented_run.h) watched on the session's sampler; tests hand MeasureStage a
// scripted one (core/test_scripted_command.h) that plays helper messages, parsed output lines, samples and an exit
// at given times on a clock of its own, so the stage rules (when to stop, what counts in the estimate, the ranks'
// loaders, the shares) run in milliseconds without a process.
//
// Threads: the stage's loop alone calls a StageCommand.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/helper_message.h"
#include "measure/instrumented_run.h"
#include "measure/line_parser.h"
#include "run/runner.h"
#include "telemetry/sample.h"
#include "telemetry/sampler.h"
#include "util/result.h"

namespace sat::core {

class StageCommand {
 public:
  virtual ~StageCommand() = default;

  // Seconds on the clock that the command's observations are stamped with (telemetry::MonotonicSeconds for a
  // real run).
  virtual double Now() = 0;
  // Waits up to `timeout_ms` for the helper's messages and hands each of this run's to `on_message`, in arrival
  // order. Silence (a failing socket too) is no error: the stage still ends on its budget or the command's end.
  virtual void Drain(int timeout_ms, const std::function<void(const measure::HelperMessage&)>& on_message) = 0;
  // The values parsed from output lines (--parse) since the last call, oldest first.
  virtual std::vector<measure::ParsedLine> TakeParsedLines() = 0;
  // How the command ended, once it has; nullopt while it runs.
  virtual std::optional<run::RunOutcome> Poll() = 0;
  // Asks the command to stop (the runner's ladder) and waits until its whole tree is gone.
  virtual run::RunOutcome StopAndWait() = 0;
  // Looks at the command's processes: whether they loaded torch (signs()), and, with `want_files`, the regular
  // files they have open now (for the filesystem check); without it, no descriptor is read and the list is empty.
  virtual std::vector<std::string> ScanOpenFiles(bool want_files) = 0;
  // The processes that reported training progress, for the sampler's per-trainer readings.
  virtual void SetTrainers(std::vector<pid_t> pids) = 0;
  // The machine's samples from `t0` on, with the command's tree; read once the command has ended.
  virtual std::vector<telemetry::Sample> SamplesSince(double t0) = 0;
  // What every watcher reads of a run (measure::RunSigns), and the helper's "instrumentation is off" line.
  virtual measure::RunSigns signs() const = 0;
  virtual std::string auto_failure() const = 0;
};

// Starts `launch` as run `run_id` and watches its tree on `sampler` (running; not owned, must outlive the
// command) until the command is destroyed. `parser`, when set, reads throughput from the output lines.
// Errors: the channel cannot open, or saturate cannot start the command (a command that fails to exec is a
// started command that has ended).
Result<std::unique_ptr<StageCommand>> StartStageCommand(measure::InstrumentedLaunch launch, std::string run_id,
                                                       std::optional<measure::LineParser> parser,
                                                       telemetry::Sampler& sampler);

}  // namespace sat::core
