#include "monitor/csv_writer.h"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace sat::monitor {

CsvWriter::CsvWriter(Query query, Format format) : query_(std::move(query)), format_(format) {}

void CsvWriter::WriteHeader(std::ostream& out) const {
  if (!format_.header) return;
  std::string line;
  for (const Column& c : query_.columns) {
    if (!line.empty()) line += ", ";
    // nvidia-smi heads a column with the field's own name whatever alias was asked for (clocks.sm prints
    // "clocks.current.sm [MHz]", seen with driver 580 on an H100), and keeps the unit even under nounits.
    line += c.field->name();
    if (!c.field->unit.empty()) line += fmt::format(" [{}]", c.field->unit);
  }
  out << line << '\n';
}

void CsvWriter::WriteSample(std::ostream& out, const telemetry::Sample& sample) const {
  for (const Row& row : RowsOf(query_, sample)) {
    std::string line;
    for (const Column& c : query_.columns) {
      if (!line.empty()) line += ", ";
      line += CellText(c.field->Read(*row.sample, row.gpu), c.field->unit, format_.units);
    }
    out << line << '\n';
  }
}

}  // namespace sat::monitor
