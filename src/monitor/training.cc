#include "monitor/training.h"

namespace sat::monitor {

TrainingMeter::TrainingMeter(std::string run_id) : progress_(std::move(run_id)) {}

void TrainingMeter::Add(const measure::HelperMessage& message) {
  // The aggregator keeps each process's cumulative counters, restarts included, and nets excluded_s out of the
  // time between two reports.
  const std::optional<measure::Observation> since_previous = progress_.Add(message);
  if (!since_previous) return;
  auto& [samples, seconds] = interval_[since_previous->stream];
  samples += since_previous->samples;
  seconds += since_previous->duration_s;
  observed_ = true;
}

TrainingRates TrainingMeter::Take() {
  TrainingRates rates;
  // Until some process has reported twice there is no interval to rate: the first report is sent at the first
  // batch, before any step time, so its counters alone would read as 100% data wait. They stay in the totals
  // and count in the first interval that has a rate.
  if (!observed_) return rates;
  const measure::ProgressTotals& now = progress_.totals();
  double samples_per_s = 0;
  for (const auto& [pid, interval] : interval_) {
    if (interval.second > 0) samples_per_s += interval.first / interval.second;
  }
  rates.samples_per_s = samples_per_s;
  const double samples = now.samples - at_take_.samples;
  const double steps = static_cast<double>(now.steps - at_take_.steps);
  rates.steps_per_s = samples > 0 ? samples_per_s * steps / samples : 0;
  const double wait_s = now.wait_s - at_take_.wait_s, step_s = now.step_s - at_take_.step_s;
  if (wait_s + step_s > 0) rates.data_wait_share = wait_s / (wait_s + step_s);
  at_take_ = now;
  interval_.clear();
  return rates;
}

TrainingFeed::TrainingFeed(std::unique_ptr<measure::InstrumentedRun> run)
    : run_(std::move(run)), meter_(run_->run_id()) {}

Status TrainingFeed::Drain(int timeout_ms) {
  return run_->Drain(timeout_ms, [this](const measure::HelperMessage& m) { meter_.Add(m); });
}

Status TrainingFeed::Annotate(telemetry::Sample& s) {
  if (auto status = Drain(0); !status) return status;
  const TrainingRates rates = meter_.Take();
  if (s.tree && s.tree->alive) {
    s.tree->samples_per_s = rates.samples_per_s;
    s.tree->steps_per_s = rates.steps_per_s;
    s.tree->data_wait_share = rates.data_wait_share;
  }
  return Status::Ok();
}

}  // namespace sat::monitor
