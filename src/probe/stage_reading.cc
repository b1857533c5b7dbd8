#include "probe/stage_reading.h"

#include <algorithm>
#include <cmath>

namespace sat::probe {

bool EnoughSteadyData(const core::StageResult& stage) {
  const measure::SteadyState& e = stage.estimate;
  // An estimate without an interval (fewer than 2 batches) over enough seconds stays usable, with its own note.
  bool interval_too_wide = std::isfinite(e.rel_half_width) && e.rel_half_width > kMaxUsableRelHalfWidth;
  return e.steady_s >= kMinSteadyS && !interval_too_wide;
}

std::optional<int64_t> MoreWorkers(int64_t now, unsigned cores) {
  int64_t next = now == 0 ? 4 : 2 * now;
  if (cores > 0) next = std::min<int64_t>(next, cores);
  if (next <= now) return std::nullopt;
  return next;
}

std::optional<int> StageWorkers(const core::StageResult& stage) {
  if (stage.loader && stage.loader->num_workers && *stage.loader->num_workers >= 0) {
    return static_cast<int>(*stage.loader->num_workers * std::max<int64_t>(1, stage.world_size));
  }
  return WorkerCount(stage.telemetry);
}

std::optional<int> WorkerCount(const core::StageTelemetry& telemetry) {
  if (!telemetry.tree_workers || telemetry.tree_workers->count == 0) return std::nullopt;
  return std::max(0, static_cast<int>(std::lround(telemetry.tree_workers->max)));
}

}  // namespace sat::probe
