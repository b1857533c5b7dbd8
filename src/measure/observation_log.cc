#include "util/safe_file.h"
#include "measure/observation_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "util/strings.h"

namespace sat::measure {

namespace {
constexpr char kHeader[] = "fed_s,t_end_s,duration_s,samples,stream";
}  // namespace

ObservationLog::ObservationLog(const std::string& path) {
  if (path.empty()) return;
  // The log's folder may be shared: never written through a link planted at its name (util/safe_file.h).
  auto file = OpenStreamForWriting(path, WriteMode::kReplace);
  file_ = file ? *file : nullptr;
  if (file_ && std::fprintf(file_, "%s\n", kHeader) < 0) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

ObservationLog::~ObservationLog() {
  if (file_) std::fclose(file_);
}

void ObservationLog::Append(double fed_s, const Observation& o) {
  if (!file_) return;
  // Shortest round-trip form: a replay sees the very doubles the estimator saw.
  const std::string row = fmt::format("{},{},{},{},{}\n", fed_s, o.t_end_s, o.duration_s, o.samples, o.stream);
  if (std::fputs(row.c_str(), file_) < 0) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

Result<std::vector<FedObservation>> ReadObservationLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{fmt::format("{}: cannot be read", path)};
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    return Error{fmt::format("{}: line 1 is not the header \"{}\"", path, kHeader)};
  }
  std::vector<FedObservation> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = Split(line, ',');
    FedObservation row;
    double stream = 0;
    double* targets[] = {&row.fed_s, &row.observation.t_end_s, &row.observation.duration_s,
                         &row.observation.samples, &stream};
    bool ok = cells.size() == 5;
    for (size_t i = 0; ok && i < 5; ++i) {
      std::optional<double> v = ParseDouble(cells[i]);
      ok = v.has_value();
      if (ok) *targets[i] = *v;
    }
    if (!ok) return Error{fmt::format("{}: line {} is not five numbers: {}", path, number, line)};
    row.observation.stream = static_cast<int64_t>(stream);
    rows.push_back(row);
  }
  return rows;
}

EarlyStop ReplayEarlyStop(std::vector<FedObservation> log, const EstimatorOptions& options, double settle_s,
                          double tick_s) {
  std::stable_sort(log.begin(), log.end(),
                   [](const FedObservation& a, const FedObservation& b) { return a.fed_s < b.fed_s; });
  SteadyStateEstimator estimator(options);
  EarlyStop result;
  size_t next = 0;
  // The checks fall on ticks of fed time; between two observations nothing new can converge, so only the ticks
  // that follow a new observation are checked.
  while (next < log.size()) {
    const double tick = std::max(settle_s, std::ceil(log[next].fed_s / tick_s) * tick_s);
    while (next < log.size() && log[next].fed_s <= tick) estimator.Add(log[next++].observation);
    const SteadyState estimate = estimator.Estimate();
    if (estimate.converged) {
      result.stopped = true;
      result.at_s = tick;
      result.estimate = estimate;
      result.observations = estimator.size();
      return result;
    }
  }
  result.at_s = log.empty() ? 0 : log.back().fed_s;
  result.estimate = estimator.Estimate();
  result.observations = estimator.size();
  return result;
}

}  // namespace sat::measure
