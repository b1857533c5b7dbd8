// nvidia-smi's CSV for `saturate monitor --query-gpu/--query-host --format=csv[,noheader][,nounits]`.
//
//   timestamp, index, utilization.gpu [%], memory.used [MiB], cpu.util [%]
//   2024/05/01 10:00:00.123, 0, 82 %, 5959 MiB, 37.5 %
//   2024/05/01 10:00:00.123, 1, 79 %, 6012 MiB, 37.5 %
//
// Cells are joined by ", " and never quoted, as nvidia-smi does.
#pragma once

#include <ostream>

#include "monitor/format.h"
#include "monitor/query.h"
#include "telemetry/sample.h"

namespace sat::monitor {

class CsvWriter {
 public:
  // `query` must not be empty; only `format.header` and `format.units` are used.
  CsvWriter(Query query, Format format);

  // Writes the header line, or nothing under `noheader`. Call once, before the first sample.
  void WriteHeader(std::ostream& out) const;
  // Writes the sample's rows (see RowsOf), one line each.
  void WriteSample(std::ostream& out, const telemetry::Sample& sample) const;

 private:
  Query query_;
  Format format_;
};

}  // namespace sat::monitor
