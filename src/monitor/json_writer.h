// JSON lines for `saturate monitor --format=json`: one compact object per line.
//
// With a query, one object per row (the same rows as CSV), keyed by the names as typed, in query
// order:
//   {"index":0,"utilization.gpu":82,"power.draw":70.52,"fan.speed":null}
// Numbers are JSON numbers rounded as CSV shows them, text is a string, N/A is null.
// Without a query, one object per sample with everything in it (see sample_json.h).
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "monitor/query.h"
#include "telemetry/sample.h"

namespace sat::monitor {

// A cell as JSON: null for N/A, an integer when shown without decimals, a number otherwise.
nlohmann::ordered_json CellJson(const Cell& cell);

class JsonWriter {
 public:
  // An empty query selects the full-sample objects.
  explicit JsonWriter(Query query);

  // Writes the sample's lines.
  void WriteSample(std::ostream& out, const telemetry::Sample& sample) const;

 private:
  Query query_;
};

}  // namespace sat::monitor
