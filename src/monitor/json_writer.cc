#include "monitor/json_writer.h"

#include <cmath>
#include <utility>

#include "monitor/sample_json.h"
#include "util/json_text.h"

namespace sat::monitor {

nlohmann::ordered_json CellJson(const Cell& cell) {
  if (const auto* n = std::get_if<Number>(&cell)) {
    if (n->decimals == 0) return static_cast<long long>(std::llround(n->value));
    // Rounded as the CSV shows it, so both formats agree (70.5234 -> 70.52).
    double scale = std::pow(10.0, n->decimals);
    return std::round(n->value * scale) / scale;
  }
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return nullptr;
}

JsonWriter::JsonWriter(Query query) : query_(std::move(query)) {}

void JsonWriter::WriteSample(std::ostream& out, const telemetry::Sample& sample) const {
  if (query_.empty()) {
    out << JsonText(nlohmann::json(sample)) << '\n';
    return;
  }
  for (const Row& row : RowsOf(query_, sample)) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const Column& c : query_.columns) object[c.name] = CellJson(c.field->Read(*row.sample, row.gpu));
    out << JsonText(object) << '\n';
  }
}

}  // namespace sat::monitor
