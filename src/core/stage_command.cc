#include "core/stage_command.h"

#include <utility>

#include "core/data_location.h"

namespace sat::core {
namespace {

// A real command: an instrumented run on its own channel, its tree watched on the shared sampler.
class RealStageCommand : public StageCommand {
 public:
  RealStageCommand(std::unique_ptr<measure::InstrumentedRun> run,
                   std::shared_ptr<measure::LineHandoff<measure::ParsedLine>> lines, telemetry::Sampler& sampler)
      : run_(std::move(run)), lines_(std::move(lines)), sampler_(sampler) {
    if (run_->pid() > 0) sampler_.Watch(run_->pid());
  }
  ~RealStageCommand() override {
    if (watching_) sampler_.Unwatch();
  }

  double Now() override { return telemetry::MonotonicSeconds(); }

  void Drain(int timeout_ms, const std::function<void(const measure::HelperMessage&)>& on_message) override {
    (void)run_->Drain(timeout_ms, on_message);
  }

  std::vector<measure::ParsedLine> TakeParsedLines() override { return lines_->Take(); }

  std::optional<run::RunOutcome> Poll() override { return run_->process().Poll(); }

  run::RunOutcome StopAndWait() override {
    run_->process().RequestStop();
    run::RunOutcome outcome = run_->process().Wait();
    // The tree is gone: the sampler stops looking for it (its samples so far stay).
    sampler_.Unwatch();
    watching_ = false;
    return outcome;
  }

  std::vector<std::string> ScanOpenFiles(bool want_files) override {
    std::vector<std::string> files;
    auto latest = sampler_.Latest();
    if (!latest || !latest->tree) return files;
    for (pid_t pid : want_files ? latest->tree->pids : std::vector<pid_t>{}) {
      for (auto& f : OpenRegularFiles(pid, "/proc")) files.push_back(std::move(f));
    }
    run_->LookForTorch(latest->tree->pids);
    return files;
  }

  void SetTrainers(std::vector<pid_t> pids) override { sampler_.SetTrainers(std::move(pids)); }

  std::vector<telemetry::Sample> SamplesSince(double t0) override { return sampler_.Since(t0); }

  measure::RunSigns signs() const override { return run_->signs(); }
  std::string auto_failure() const override { return run_->auto_failure(); }

 private:
  std::unique_ptr<measure::InstrumentedRun> run_;
  std::shared_ptr<measure::LineHandoff<measure::ParsedLine>> lines_;
  telemetry::Sampler& sampler_;
  bool watching_ = true;
};

}  // namespace

Result<std::unique_ptr<StageCommand>> StartStageCommand(measure::InstrumentedLaunch launch, std::string run_id,
                                                       std::optional<measure::LineParser> parser,
                                                       telemetry::Sampler& sampler) {
  // Output lines are read on the run's supervisor thread and handed to the stage's loop.
  auto lines = std::make_shared<measure::LineHandoff<measure::ParsedLine>>();
  if (parser) {
    launch.spec.on_line = [lines, parser = std::move(*parser)](run::Stream, std::string_view line) {
      if (auto parsed = parser.Parse(line, telemetry::MonotonicSeconds())) lines->Push(std::move(*parsed));
    };
  }
  auto started = measure::InstrumentedRun::Start(std::move(launch), std::move(run_id));
  if (!started) return started.error();
  return std::unique_ptr<StageCommand>(new RealStageCommand(std::move(*started), std::move(lines), sampler));
}

}  // namespace sat::core
