// Running the guided search on a scripted model in tests (header only; not part of the library): the search and
// its options, what it decided, and the README's main job as a model. Shared by search_test.cc and
// search_budget_test.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tune/search.h"
#include "tune/test_model.h"

namespace sat::tune::testing {

inline SearchOutcome Search(ScriptModel& model, SearchOptions o) {
  return RunSearch(o, [&](int id, const TrialRequest& r) -> std::optional<Trial> { return model(id, r); });
}

// A knob's integer value in `v`.
inline int64_t IntAt(const KnobValues& v, const std::string& name) { return v.at(name).get<int64_t>(); }

inline SearchOptions Options(std::vector<KnobSpec> knobs = ModelKnobs()) {
  SearchOptions o;
  o.knobs = std::move(knobs);
  return o;
}

inline std::string AllDecisions(const SearchOutcome& s) {
  std::string out;
  for (const auto& d : s.decisions) out += d.text + "\n";
  return out;
}

// The decision of one step, or "" when it made none.
inline std::string DecisionOf(const SearchOutcome& s, const std::string& step) {
  std::string out;
  for (const auto& d : s.decisions)
    if (d.step == step) out += d.text + "\n";
  return out;
}

// The README's main job on a 2-core CPU: no loader workers, the loader alone (900 samples/s) a little faster than
// the model alone at batch 64 (840), and full training far below both (434) because loading and computing take
// turns in one process. On this CPU larger batches run slower.
inline ScriptModel MainJobModel(double half_width) {
  ScriptModel model;
  model.per_worker = 900;
  model.in_line = true;
  model.half_width = half_width;
  model.compute_at = [](int64_t b) {
    const double x = static_cast<double>(b);
    return b <= 64 ? 945 * x / (x + 8) : 840 * std::pow(64 / x, 0.3);
  };
  return model;
}

}  // namespace sat::tune::testing
