#include "sweep/hyperband.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sat::sweep {

Result<std::vector<int64_t>> HyperbandBands(const HyperbandSpec& h) {
  std::vector<int64_t> bands;
  if (h.max_iter) {
    double band = static_cast<double>(*h.max_iter);
    for (int64_t i = 0; i < h.s; ++i) {
      band /= h.eta;
      if (band < 1) break;
      bands.push_back(static_cast<int64_t>(band));
    }
    std::sort(bands.begin(), bands.end());
  } else if (h.min_iter) {
    double band = static_cast<double>(*h.min_iter);
    for (int i = 0; i < 100 && band <= static_cast<double>(kMaxBand); ++i) {
      bands.push_back(static_cast<int64_t>(band));
      band *= h.eta;
    }
  }
  if (bands.empty()) {
    return UsageError(
        "hyperband has no bands; try a larger s, a smaller eta or a larger min_iter");
  }
  return bands;
}

std::vector<double> HyperbandThresholds(const std::vector<int64_t>& bands, double eta,
                                        const std::vector<std::vector<double>>& histories, bool maximize) {
  const double r = 1.0 / eta;
  std::vector<double> thresholds;
  for (int64_t band : bands) {
    std::vector<double> values;
    for (const auto& h : histories) {
      if (static_cast<int64_t>(h.size()) >= band) values.push_back(maximize ? -h[band - 1] : h[band - 1]);
    }
    if (values.empty()) {
      thresholds.push_back(std::numeric_limits<double>::infinity());
      continue;
    }
    std::sort(values.begin(), values.end());
    thresholds.push_back(values[static_cast<size_t>(r * static_cast<double>(values.size()))]);
  }
  return thresholds;
}

std::optional<HyperbandCut> HyperbandJudge(const std::vector<int64_t>& bands, const std::vector<double>& thresholds,
                                           const std::vector<double>& history, bool maximize, bool strict) {
  std::optional<size_t> reached;
  for (size_t i = 0; i < bands.size() && bands[i] <= static_cast<int64_t>(history.size()); ++i) reached = i;
  if (!reached) return std::nullopt;
  std::vector<double> signed_history = history;
  if (maximize) {
    for (double& v : signed_history) v = -v;
  }
  const int64_t band = bands[*reached];
  const double value =
      strict ? signed_history[band - 1] : *std::min_element(signed_history.begin(), signed_history.end());
  const double threshold = thresholds[*reached];
  return HyperbandCut{band, maximize ? -value : value, maximize ? -threshold : threshold, value > threshold};
}

}  // namespace sat::sweep
