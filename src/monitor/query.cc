#include "monitor/query.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace sat::monitor {
namespace {

// The option a list came from: which scopes it accepts, and its name for messages.
struct ListSpec {
  std::string_view option;
  bool gpu = false;
  bool host = false;
  bool tree = false;

  bool Accepts(Scope scope) const {
    switch (scope) {
      case Scope::kSample:
        return true;
      case Scope::kGpu:
        return gpu;
      case Scope::kHost:
        return host;
      case Scope::kProc:
        return tree;
    }
    return false;
  }
};

// Why a known field is not allowed in this list.
std::string Misplaced(const ListSpec& list, std::string_view name, Scope scope) {
  switch (scope) {
    case Scope::kGpu:
      return fmt::format("'{}' is a GPU field; query it with --query-gpu, not {}", name, list.option);
    case Scope::kHost:
      return fmt::format("'{}' is a host field; query it with --query-host, not {}", name, list.option);
    case Scope::kProc:
      if (!list.host) {
        return fmt::format("'{}' is a process tree field; query it with --query-host, not {}", name,
                           list.option);
      }
      return fmt::format("'{}' needs a watched process tree (give --pid PID, or a command after --)", name);
    case Scope::kSample:
      break;
  }
  return fmt::format("'{}' cannot be queried with {}", name, list.option);
}

std::string Unknown(const ListSpec& list, std::string_view name) {
  std::vector<std::string> candidates;
  for (const Field& f : AllFields()) {
    if (!list.Accepts(f.scope)) continue;
    for (std::string_view n : f.names) candidates.emplace_back(n);
  }
  std::string message = fmt::format("unknown field '{}' in {}", name, list.option);
  if (auto best = ClosestMatch(name, candidates)) message += fmt::format("; did you mean '{}'?", *best);
  return message;
}

Status AppendColumns(const ListSpec& list, std::string_view text, std::vector<Column>& out) {
  if (Trim(text).empty()) return Status::Ok();
  for (const std::string& raw : Split(text, ',')) {
    std::string name(Trim(raw));
    if (name.empty()) return UsageError(fmt::format("empty field name in {} '{}'", list.option, text));
    const Field* field = FindField(name);
    if (!field) return UsageError(Unknown(list, name));
    if (!list.Accepts(field->scope)) return UsageError(Misplaced(list, name, field->scope));
    out.push_back(Column{field, std::move(name)});
  }
  return Status::Ok();
}

}  // namespace

Result<Query> ParseQuery(std::string_view gpu_fields, std::string_view host_fields, bool has_tree) {
  Query query;
  if (Status s = AppendColumns({.option = "--query-gpu", .gpu = true}, gpu_fields, query.columns); !s) {
    return s.error();
  }
  ListSpec host_list{.option = "--query-host", .host = true, .tree = has_tree};
  if (Status s = AppendColumns(host_list, host_fields, query.columns); !s) return s.error();
  for (const Column& c : query.columns) query.per_gpu = query.per_gpu || c.field->scope == Scope::kGpu;
  return query;
}

std::vector<Row> RowsOf(const Query& query, const telemetry::Sample& sample) {
  if (!query.per_gpu) return {Row{&sample, nullptr}};
  std::vector<Row> rows;
  rows.reserve(sample.gpus.size());
  for (const telemetry::GpuSample& gpu : sample.gpus) rows.push_back(Row{&sample, &gpu});
  return rows;
}

}  // namespace sat::monitor
