#include "monitor/live_figures.h"

#include <utility>

namespace sat::monitor {

LiveFigures::LiveFigures(std::string hostname) : hostname_(std::move(hostname)) {}

void LiveFigures::SetSample(const telemetry::Sample& sample) {
  std::lock_guard lock(mu_);
  sample_ = sample;
}

void LiveFigures::SetTreeCommand(std::string command) {
  std::lock_guard lock(mu_);
  tree_command_ = std::move(command);
}

void LiveFigures::ObserveRun(const std::string& key, const Labels& labels, const measure::Observation& progress) {
  std::lock_guard lock(mu_);
  auto [it, added] = observed_.try_emplace(key);
  if (added) it->second.labels = labels;
  std::deque<measure::Observation>& recent = it->second.recent;
  recent.push_back(progress);
  // Older progress never counts again: the window only moves forward.
  while (!recent.empty() && recent.front().t_end_s <= progress.t_end_s - kRateWindowS) recent.pop_front();
}

void LiveFigures::EndRun(const std::string& key) {
  std::lock_guard lock(mu_);
  observed_.erase(key);
}

void LiveFigures::SetRuns(const std::string& source, std::vector<RunSeries> runs) {
  std::lock_guard lock(mu_);
  set_[source] = std::move(runs);
}

ExpositionInput LiveFigures::Snapshot(double now_s) const {
  std::lock_guard lock(mu_);
  ExpositionInput in;
  in.sample = sample_;
  in.hostname = hostname_;
  in.tree_command = tree_command_;
  for (const auto& [key, run] : observed_) {
    in.runs.push_back({run.labels, WindowRate(run.recent, now_s, kRateWindowS)});
  }
  for (const auto& [source, runs] : set_) in.runs.insert(in.runs.end(), runs.begin(), runs.end());
  return in;
}

double WindowRate(const std::deque<measure::Observation>& recent, double now_s, double window_s) {
  std::map<int64_t, std::pair<double, double>> per_stream;  // samples, seconds
  for (const measure::Observation& o : recent) {
    if (o.t_end_s <= now_s - window_s || o.t_end_s > now_s) continue;
    auto& [samples, seconds] = per_stream[o.stream];
    samples += o.samples;
    seconds += o.duration_s;
  }
  double rate = 0;
  for (const auto& [stream, totals] : per_stream) {
    if (totals.second > 0) rate += totals.first / totals.second;
  }
  return rate;
}

}  // namespace sat::monitor
