// What one probe stage's result says of its loader and its data, read alike by the verdict (probe/verdict.h) and the
// storage findings (probe/storage.h): whether its rate rests on enough steady data, how many DataLoader workers it
// ran, and how many to try next. Pure functions over core::StageResult.
#pragma once

#include <cstdint>
#include <optional>

#include "core/stage.h"

namespace sat::probe {

inline constexpr double kMinSteadyS = 3;              // seconds of steady data a rate needs to be used
inline constexpr double kMaxUsableRelHalfWidth = 0.5;  // ... and a 95% interval within ±50% of it

// The stage's rate rests on enough steady data for the verdict (kMinSteadyS, kMaxUsableRelHalfWidth).
bool EnoughSteadyData(const core::StageResult& stage);
// DataLoader workers to try next: 4 from none, else twice as many, at most one per core; nullopt when no more fit.
std::optional<int64_t> MoreWorkers(int64_t now, unsigned cores);
// DataLoader worker processes: the most the tree had at once (telemetry::CountForkedWorkers, so wrappers such as
// sh -c or torchrun do not count); nullopt when not sampled.
std::optional<int> WorkerCount(const core::StageTelemetry& telemetry);
// The stage's DataLoader workers: the training loader's own num_workers (each rank's, times the ranks) when the
// instrumentation reported it, else WorkerCount. Other forked processes are not workers: torch.compile's 16
// compile workers read as "16 workers" on an H100 where the DataLoader had none.
std::optional<int> StageWorkers(const core::StageResult& stage);

}  // namespace sat::probe
