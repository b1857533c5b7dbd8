#include "sweep/attempt_runner.h"

#include <utility>

#include "measure/channel.h"

namespace sat::sweep {
namespace {

// An attempt as a real process tree: measure::InstrumentedRun on the runner's channel.
class RealAttemptProcess final : public AttemptProcess {
 public:
  explicit RealAttemptProcess(std::unique_ptr<measure::InstrumentedRun> run) : run_(std::move(run)) {}

  bool Accept(const measure::HelperMessage& m) override { return run_->Accept(m); }
  std::optional<run::RunOutcome> Poll() override { return run_->process().Poll(); }
  void RequestStop() override { run_->process().RequestStop(); }
  telemetry::ProcTreeSample ReadTree(AttemptWatch& watch, const telemetry::Sample& sample, double now) override {
    return watch.ReadTree(*run_, sample, now);
  }

 private:
  std::unique_ptr<measure::InstrumentedRun> run_;
};

}  // namespace

Result<std::unique_ptr<RealAttemptRunner>> RealAttemptRunner::Open(telemetry::SamplerOptions sampler_options) {
  std::unique_ptr<RealAttemptRunner> runner(new RealAttemptRunner());
  auto channel = measure::HelperChannel::Open();
  if (!channel) return channel.error();
  runner->channel_ = std::move(*channel);
  auto sampler = telemetry::Sampler::Create(std::move(sampler_options));
  if (!sampler) return sampler.error();
  runner->sampler_ = std::move(*sampler);
  return runner;
}

double RealAttemptRunner::Now() { return telemetry::MonotonicSeconds(); }

Result<std::vector<measure::HelperMessage>> RealAttemptRunner::Poll(int timeout_ms) {
  return channel_->Poll(timeout_ms);
}

Result<std::unique_ptr<AttemptProcess>> RealAttemptRunner::Start(AttemptWatch& watch, Launch launch) {
  auto run = watch.Start(std::move(launch), channel_.get());
  if (!run) return run.error();
  return std::unique_ptr<AttemptProcess>(new RealAttemptProcess(std::move(*run)));
}

}  // namespace sat::sweep
