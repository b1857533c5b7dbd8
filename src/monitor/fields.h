// The query fields of `saturate monitor`: one static table, one row per field, each with its
// nvidia-smi name and aliases, the scope it reads from, its unit and how to read its value.
//
// nvidia-smi's CSV conventions, checked against real `--query-gpu ... --format=csv` captures (an
// H200 on driver 580.173.02 kept in utkuozdemir/nvidia_gpu_exporter internal/captures, V100 and
// A100 logs in other public repositories):
//   - header cells and value cells are joined by ", "; the header is the queried name followed by
//     " [unit]" when the field has a unit ("memory.used [MiB]", "power.draw [W]",
//     "clocks.current.sm [MHz]"); temperature.gpu, pstate, index and strings have none;
//   - values carry the same unit after a space: "0 %", "143771 MiB", "85.12 W", "345 MHz";
//     watts have two decimals, everything else above is an integer; pstate is "P0";
//     timestamps read "2026/09/01 20:41:56.941" (local time, milliseconds);
//   - an unsupported value prints "[N/A]" (older drivers printed "[Not Supported]");
//   - `nounits` drops the unit from the VALUES ONLY: the header keeps "[MiB]" (2maz/slurm-monitor
//     runs `--format=csv,nounits` and reads the columns "power.draw [W]", "memory.used [MiB]");
//     "[N/A]" stays "[N/A]" under nounits (enkore/i3pystatus#776).
// Not confirmed from a primary capture: that an alias echoes as typed ("clocks.sm [MHz]" rather
// than "clocks.current.sm [MHz]"); published examples show the typed name, so saturate echoes it.
//
// saturate's host and process fields follow the same style: dotted names, unit in brackets,
// value then unit. Percentages of the host and the process tree have one decimal ("37.5 %"),
// rates in MiB/s two ("1.23 MiB/s"), memory sizes are whole MiB (rounded down, as nvidia-smi).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "telemetry/sample.h"

namespace sat::monitor {

// Where a field's value comes from, which decides the option it may be queried in and how
// rows are formed (one row per GPU when any GPU field is queried).
enum class Scope {
  kSample,  // the sample itself (timestamp): allowed in --query-gpu and --query-host
  kGpu,     // one GPU: --query-gpu
  kHost,    // the machine: --query-host
  kProc,    // the watched process tree: --query-host, only when a tree is watched
};

// A number and the decimals it is shown with (0: an integer).
struct Number {
  double value = 0;
  int decimals = 0;
};

// One value: N/A (std::monostate), a number, or text. Never 0 for "unknown".
using Cell = std::variant<std::monostate, Number, std::string>;

// A value in a CSV cell: "[N/A]", "82 %" (with_unit and a unit), "82", or the text.
std::string CellText(const Cell& cell, std::string_view unit, bool with_unit);

// nvidia-smi's timestamp, "YYYY/MM/DD HH:MM:SS.mmm" in local time; `time_s` is Unix seconds.
std::string NvidiaTimestamp(double time_s);

struct Field {
  // The canonical name first, then aliases. A column is headed by the name the user typed.
  std::vector<std::string_view> names;
  Scope scope = Scope::kGpu;
  std::string_view unit;  // as in the header's brackets; empty for none
  std::string_view help;  // one sentence for the field listing
  // Exactly the reader matching `scope` is set.
  Cell (*sample)(const telemetry::Sample&) = nullptr;
  Cell (*gpu)(const telemetry::GpuSample&) = nullptr;
  Cell (*host)(const telemetry::HostSample&) = nullptr;
  Cell (*tree)(const telemetry::ProcTreeSample&) = nullptr;

  std::string_view name() const { return names.front(); }

  // The value for one row. `gpu` is the row's GPU (null on rows without one); a GPU field on a
  // row without a GPU, or a process field without a watched tree, reads N/A.
  Cell Read(const telemetry::Sample& s, const telemetry::GpuSample* gpu) const;
};

// Every field, GPU fields first, in listing order. The table lives for the whole program.
const std::vector<Field>& AllFields();

// The field with this exact name or alias; null when there is none.
const Field* FindField(std::string_view name);

// The listing for --help-query: every field with its names, unit and help, grouped by option.
std::string FieldListing();

}  // namespace sat::monitor
