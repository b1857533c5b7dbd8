// What the sweep's loop (sweep/controller) needs of the machine, behind one interface as ninja's CommandRunner:
// a clock, the helper channel every attempt reports on, host and GPU samples, and attempts started as processes.
// RealAttemptRunner is the machine itself (run::Run processes on one measure::HelperChannel, a
// telemetry::Sampler); sweep/test_scripted_runner.h replays scripted attempts on a clock of its own, so that the
// loop's rules (retries, packing by measurement, out of memory while packed, early termination, start failures)
// are tested in milliseconds. Every path keeps an end-to-end test on real processes (tests/e2e/sweep_*.sh).
//
// Not thread-safe: the loop's thread only.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "measure/helper_message.h"
#include "run/runner.h"
#include "sweep/attempt_watch.h"
#include "sweep/launch.h"
#include "telemetry/sample.h"
#include "telemetry/sampler.h"
#include "util/result.h"

namespace sat::sweep {

// One started attempt's command.
class AttemptProcess {
 public:
  virtual ~AttemptProcess() = default;
  // A channel message carrying this attempt's run id: false when the run refuses it
  // (measure::InstrumentedRun::Accept).
  virtual bool Accept(const measure::HelperMessage& m) = 0;
  // How the command ended, once it has (the same on every later call); nullopt while it runs.
  virtual std::optional<run::RunOutcome> Poll() = 0;
  // Asks the command to stop (SIGINT to its tree, harder after the launch's stop grace); it ends later, as Poll
  // says.
  virtual void RequestStop() = 0;
  // Reads the command's process tree at `now` (monotonic s) into `watch` (AttemptWatch::OnTree), with its GPU
  // memory from `sample`; returns the reading (empty before the command starts and after it is gone).
  virtual telemetry::ProcTreeSample ReadTree(AttemptWatch& watch, const telemetry::Sample& sample, double now) = 0;
};

class AttemptRunner {
 public:
  virtual ~AttemptRunner() = default;
  // Monotonic seconds, the clock of the samples and of the helper's messages.
  virtual double Now() = 0;
  // The channel's messages that arrive within `timeout_ms` (every attempt's; the loop sorts them by run id).
  virtual Result<std::vector<measure::HelperMessage>> Poll(int timeout_ms) = 0;
  // A host and GPU sample taken now, and the latest one taken (none before the first).
  virtual telemetry::Sample SampleOnce() = 0;
  virtual std::optional<telemetry::Sample> Latest() = 0;
  // Starts `launch` as `watch`'s attempt (AttemptWatch::Start: its run id, instrumentation switch, window and
  // matched lines), reporting on the runner's channel. Errors are saturate's own (the log folder, no process
  // could be made); a command that fails to exec is a started attempt that has ended.
  virtual Result<std::unique_ptr<AttemptProcess>> Start(AttemptWatch& watch, Launch launch) = 0;
};

// The machine itself: a helper channel of its own and a sampler made with `sampler_options`.
class RealAttemptRunner final : public AttemptRunner {
 public:
  static Result<std::unique_ptr<RealAttemptRunner>> Open(telemetry::SamplerOptions sampler_options);

  double Now() override;
  Result<std::vector<measure::HelperMessage>> Poll(int timeout_ms) override;
  telemetry::Sample SampleOnce() override { return sampler_->SampleOnce(); }
  std::optional<telemetry::Sample> Latest() override { return sampler_->Latest(); }
  Result<std::unique_ptr<AttemptProcess>> Start(AttemptWatch& watch, Launch launch) override;

 private:
  RealAttemptRunner() = default;
  std::unique_ptr<measure::HelperChannel> channel_;
  std::unique_ptr<telemetry::Sampler> sampler_;
};

}  // namespace sat::sweep
