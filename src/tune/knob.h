// Knobs: the settings `saturate tune` searches, their ranges, and how each value reaches the training script.
//
// A knob is an integer range (`batch_size=16:1024`) or a list of choices (`amp=off,bf16,fp16`). Its value reaches
// the script one of five ways:
//   - placeholder: `{name}` in the command is replaced by the value (`--batch-size {batch_size}`);
//   - helper: the script calls `saturate.knob("name", default)`, which reads SATURATE_KNOBS
//     (docs/helper-protocol.md); the script's own default is the baseline value;
//   - injected: the script has no flag for it, and saturate's automatic instrumentation sets it from
//     SATURATE_KNOBS on the training DataLoader (workers, batch_size, pin_memory, prefetch_factor,
//     persistent_workers) or around the model's forward (amp). Known only after the baseline: a knob resolved as
//     helper becomes injected when the baseline reports it with "auto": true. Works only under saturate, so the
//     recommendation spells out the code change instead (code_change.h);
//   - flag: the script's own command-line option, written into the command (flag.h): one the script named
//     (saturate.knob(..., flag="--workers")), or one found among its parsed options and proven (flag_map.h).
//     The recommendation is then the user's own command line, runnable without saturate;
//   - environment: the allocator knob `expandable_segments` sets PYTORCH_CUDA_ALLOC_CONF.
// Known names have a role that the search treats specially (workers in loader mode, batch size by doubling and
// bisection, ...); any other name is searched level by level in full training.
//
// Values are nlohmann::json: an integer for range knobs, a string for choice knobs (booleans read as "on"/"off").
// Pure functions and plain data.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tune/flag.h"
#include "util/result.h"

namespace sat::tune {

using KnobValue = nlohmann::json;
using KnobValues = std::map<std::string, KnobValue>;

enum class KnobKind { kRange, kChoice };
enum class Delivery { kPlaceholder, kHelper, kInjected, kEnvironment, kFlag };
// In search order: the search visits roles in this order, `other` knobs last.
enum class KnobRole { kWorkers, kAmp, kBatchSize, kAllocator, kPinMemory, kPreload, kOther };

std::string_view DeliveryName(Delivery d);  // "placeholder", "helper", "injected", "environment", "flag"
std::string_view KindName(KnobKind k);      // "range", "choice"

// The allocator knob's name and what "on" sets.
inline constexpr std::string_view kAllocatorKnob = "expandable_segments";
inline constexpr std::string_view kAllocatorVar = "PYTORCH_CUDA_ALLOC_CONF";
inline constexpr std::string_view kAllocatorOn = "expandable_segments:True";

struct KnobSpec {
  std::string name;
  KnobKind kind = KnobKind::kChoice;
  int64_t lo = 0, hi = 0;            // kRange, both ends included
  std::vector<std::string> choices;  // kChoice, in the order given; the first is the starting value
  KnobRole role = KnobRole::kOther;
  Delivery delivery = Delivery::kHelper;
  bool from_flag = false;            // given with --knob (else a default)
  std::optional<FlagBinding> flag;   // Delivery::kFlag: the script's option that sets it
  std::string flag_proof;            // Delivery::kFlag: how the option was known to set it, for the report

  // The value a placeholder knob starts from (the search's baseline): batch 32, the lowest worker count, any
  // other range's low end, the first choice. Clamped into the range.
  KnobValue Start() const;
  // Whether `v` is a value of this knob (in range, or one of the choices).
  bool Contains(const KnobValue& v) const;
  std::string RangeText() const;  // "16:1024" or "off,bf16,fp16"
};

// A knob after the baseline: whether the script exposes it, and the script's own value.
struct KnobState {
  KnobSpec spec;
  bool exposed = false;
  std::optional<KnobValue> script_value;  // what the script got in the baseline (helper knobs)
  std::string note;                       // why it was skipped, how it is injected, or what went wrong with it
};

// What the machine offers, for default ranges.
struct MachineFacts {
  unsigned usable_cores = 1;  // CPUs this process may run on
  bool gpu = false;
};

// The role a knob of this name plays ("batch_size" -> kBatchSize, "num_workers" -> kWorkers, ...).
KnobRole RoleOf(std::string_view name);

// The default knobs for this machine: batch_size 16:1024 (16:4096 with a GPU), workers 0:usable cores, amp
// off,bf16 (off,bf16,fp16 with a GPU), preload off,on; with a GPU also pin_memory off,on and the allocator knob.
std::vector<KnobSpec> DefaultKnobs(const MachineFacts& machine);

// The default spec of a known name on this machine, nullopt for a name without a default.
std::optional<KnobSpec> DefaultKnob(std::string_view name, const MachineFacts& machine);

// Parses one --knob flag: "name=LO:HI", "name=a,b,c", "name=64" (fixed), or "name" alone (the default range of
// a known name). Usage error naming the problem otherwise.
Result<KnobSpec> ParseKnobFlag(std::string_view flag, const MachineFacts& machine);

// The `{name}` placeholders in the command, in order of first appearance (identifiers only: `{}` or `{0}` are
// left alone).
std::vector<std::string> FindPlaceholders(const std::vector<std::string>& argv);

// The knobs to search: the --knob flags if any were given, else the machine's defaults; plus every placeholder
// in the command (which must then be a known name or have a flag). Each knob's delivery is set: placeholder
// when `{name}` is in the command, environment for the allocator, else helper. Sorted by role (search order).
Result<std::vector<KnobSpec>> ResolveKnobs(const std::vector<std::string>& flags, const std::vector<std::string>& argv,
                                           const MachineFacts& machine);

// A value the script reported (a knob message's `value`) in this knob's terms: booleans become "on"/"off" for
// choice knobs, whole numbers and numeric strings integers for range knobs. nullopt when it cannot be read so.
std::optional<KnobValue> NormalizeValue(const KnobSpec& spec, const nlohmann::json& reported);

// "64", "bf16": how a value is written into a command and shown to people.
std::string ValueText(const KnobValue& v);
// "batch_size=64 workers=2", in the given order of names (all of `values` when `order` is empty).
std::string ValuesText(const KnobValues& values, const std::vector<std::string>& order = {});

// The spec of `name` in `knobs`, or null.
const KnobSpec* FindKnob(const std::vector<KnobSpec>& knobs, std::string_view name);
// The spec with this role, or null.
const KnobSpec* FindRole(const std::vector<KnobSpec>& knobs, KnobRole role);

}  // namespace sat::tune
