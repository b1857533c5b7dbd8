// A parsed query: the columns the user asked for with --query-gpu and --query-host, and the rows
// one sample expands into.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "monitor/fields.h"
#include "telemetry/sample.h"
#include "util/result.h"

namespace sat::monitor {

struct Column {
  const Field* field = nullptr;  // points into AllFields(), never null in a parsed query
  std::string name;              // the name as typed (canonical name or alias)
};

struct Query {
  std::vector<Column> columns;  // --query-gpu columns first, then --query-host columns
  bool per_gpu = false;         // any GPU field queried: one row per GPU

  bool empty() const { return columns.empty(); }
};

// Parses the two comma-separated lists (either may be empty; spaces around names are ignored,
// as nvidia-smi does). --query-gpu takes GPU fields and timestamp; --query-host takes host
// fields, timestamp and, when `has_tree`, process tree fields. Any bad name is a usage error
// naming the field and the closest valid name:
//   unknown field 'utilisation.gpu' in --query-gpu; did you mean 'utilization.gpu'?
Result<Query> ParseQuery(std::string_view gpu_fields, std::string_view host_fields, bool has_tree);

// One output row: the sample, and the GPU the row describes (null when the row has none).
struct Row {
  const telemetry::Sample* sample = nullptr;
  const telemetry::GpuSample* gpu = nullptr;
};

// The rows a sample expands into, as nvidia-smi forms them: one per GPU in the sample when the
// query has a GPU field, otherwise one. A per-GPU query on a sample without GPUs gives no rows: a
// row would describe a GPU that does not exist (host fields flow with --query-host alone). Rows
// point into `sample`.
std::vector<Row> RowsOf(const Query& query, const telemetry::Sample& sample);

}  // namespace sat::monitor
