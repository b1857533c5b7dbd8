#include "tune/global_batch.h"

#include <fmt/format.h>

#include <algorithm>

namespace sat::tune {

std::optional<GlobalBatch> RecommendedGlobalBatch(const SearchOutcome& s) {
  GlobalBatch b;
  for (const Trial& t : s.trials) b.world_size = std::max(b.world_size, t.world_size);
  if (b.world_size <= 1) return std::nullopt;
  for (const KnobState& k : s.knobs) {
    if (k.spec.role != KnobRole::kBatchSize) continue;
    auto it = s.recommended.find(k.spec.name);
    if (it == s.recommended.end() || !it->second.is_number_integer()) continue;
    b.knob = k.spec.name;
    b.per_device = it->second.get<int64_t>();
    b.global = b.per_device * b.world_size;
    return b;
  }
  return std::nullopt;
}

std::string GlobalBatchText(const GlobalBatch& b) {
  return fmt::format("{} {} is per device: {} ranks train on a global batch of {}", b.knob, b.per_device,
                     b.world_size, b.global);
}

}  // namespace sat::tune
