#include "live/live_figures.h"

#include <algorithm>
#include <utility>

namespace sat::live {

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
  Record("observed/" + key, it->second.labels, progress.t_end_s,
         WindowRate(recent, progress.t_end_s, kRateWindowS));
}

void LiveFigures::EndRun(const std::string& key) {
  std::lock_guard lock(mu_);
  observed_.erase(key);
}

void LiveFigures::SetRuns(const std::string& source, std::vector<RunSeries> runs, double now_s) {
  std::lock_guard lock(mu_);
  for (const RunSeries& run : runs) {
    if (!run.samples_per_s) continue;
    // A set run has no key of its own: its labels tell it from the source's others.
    std::string key = "set/" + source;
    for (const auto& [name, value] : run.labels) key += "/" + name + "=" + value;
    Record(key, run.labels, now_s, *run.samples_per_s);
  }
  set_[source] = std::move(runs);
}

void LiveFigures::Record(const std::string& key, const Labels& labels, double t, double samples_per_s) {
  auto [it, added] = history_.try_emplace(key);
  Trace& trace = it->second;
  if (added) {
    trace.order = next_order_++;
    trace.labels = labels;
  }
  if (trace.points.empty() || t - trace.points.back().first >= kHistoryStepS) trace.points.emplace_back(t, samples_per_s);
  for (auto h = history_.begin(); h != history_.end();) {
    auto& points = h->second.points;
    while (!points.empty() && points.front().first < t - kHistoryS) points.pop_front();
    h = points.empty() ? history_.erase(h) : std::next(h);
  }
}

Figures LiveFigures::Snapshot(double now_s) const {
  std::lock_guard lock(mu_);
  Figures in;
  in.sample = sample_;
  in.hostname = hostname_;
  in.tree_command = tree_command_;
  for (const auto& [key, run] : observed_) {
    in.runs.push_back({run.labels, WindowRate(run.recent, now_s, kRateWindowS)});
  }
  for (const auto& [source, runs] : set_) in.runs.insert(in.runs.end(), runs.begin(), runs.end());
  return in;
}

std::vector<RunHistory> LiveFigures::History(double now_s) const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<int64_t, RunHistory>> ordered;
  for (const auto& [key, trace] : history_) {
    RunHistory h{trace.labels, {}};
    for (const auto& point : trace.points) {
      if (point.first >= now_s - kHistoryS && point.first <= now_s) h.points.push_back(point);
    }
    if (!h.points.empty()) ordered.emplace_back(trace.order, std::move(h));
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RunHistory> out;
  for (auto& [order, h] : ordered) out.push_back(std::move(h));
  return out;
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

}  // namespace sat::live
