// One message of the helper protocol (docs/helper-protocol.md), parsed and validated.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace sat::measure {

enum class MessageType { kHello, kKnob, kProgress, kDone, kMetrics };

// "hello", "knob", "progress", "done".
std::string_view MessageTypeName(MessageType type);

// Fields not sent for a type keep their defaults. Times in seconds; `t` is CLOCK_MONOTONIC
// (std::chrono::steady_clock). Counters are cumulative since the sending process started tracking.
struct HelperMessage {
  MessageType type = MessageType::kProgress;
  std::string run;  // SATURATE_RUN_ID of the sender, "" when it had none
  int64_t pid = 0;
  double t = 0;

  // hello
  std::string mode, python, device;
  std::optional<std::string> torch;  // version; nullopt without torch

  // knob
  std::string knob_name;
  nlohmann::json knob_value, knob_default;  // what the script got, and its own default
  std::string knob_source;                  // "saturate" (from SATURATE_KNOBS) or "default"

  // progress and done
  int64_t steps = 0;
  double samples = 0;
  double wait_s = 0;                     // waiting for the loader
  double step_s = 0;                     // between handing a batch over and the request for the next one
  std::map<std::string, double> phases;  // seconds inside `with saturate.phase(name)`
  std::optional<int64_t> mem_allocated_bytes, mem_reserved_bytes, mem_peak_bytes;  // CUDA only
  std::map<std::string, double> metrics;  // numeric values the script reported; nulls left out

  // done
  std::string done_reason;  // "exhausted", "loader-drained", "exit"

  nlohmann::json raw;  // the whole message as received
};

// Parses one datagram. The error names the first problem: not JSON, another protocol version, an unknown type, a
// missing or mistyped field, a negative counter. A null optional field counts as absent (the helper sends NaN as
// null); unknown extra fields are accepted and kept in `raw`.
Result<HelperMessage> ParseHelperMessage(std::string_view datagram);

}  // namespace sat::measure
