// The batch of a distributed job as tune recommends it: its batch knob is per device (each rank's DataLoader gets
// it), so the job's global batch is that times the ranks the trials reported (field guide 003: keep the batch per
// device fixed when the device count changes, and say both).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tune/search.h"

namespace sat::tune {

struct GlobalBatch {
  std::string knob;        // the batch knob's name
  int64_t per_device = 0;  // its recommended value
  int64_t world_size = 1;  // ranks, the most any trial reported
  int64_t global = 0;      // per_device x world_size
};

// Nullopt for a single-process job, or when nothing recommends a whole-number batch knob.
std::optional<GlobalBatch> RecommendedGlobalBatch(const SearchOutcome& s);

// "batch_size 64 is per device: 2 ranks train on a global batch of 128".
std::string GlobalBatchText(const GlobalBatch& b);

}  // namespace sat::tune
