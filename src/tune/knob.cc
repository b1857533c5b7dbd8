#include "tune/knob.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "util/json_text.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

bool IsIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

KnobSpec Range(std::string name, int64_t lo, int64_t hi) {
  KnobSpec k;
  k.name = std::move(name);
  k.kind = KnobKind::kRange;
  k.lo = lo;
  k.hi = hi;
  k.role = RoleOf(k.name);
  return k;
}

KnobSpec Choice(std::string name, std::vector<std::string> choices) {
  KnobSpec k;
  k.name = std::move(name);
  k.kind = KnobKind::kChoice;
  k.choices = std::move(choices);
  k.role = RoleOf(k.name);
  return k;
}

// Roles whose search needs integers, and roles whose search needs choices.
bool NeedsRange(KnobRole r) { return r == KnobRole::kBatchSize || r == KnobRole::kWorkers; }
bool NeedsChoice(KnobRole r) {
  return r == KnobRole::kAmp || r == KnobRole::kPinMemory || r == KnobRole::kPreload || r == KnobRole::kAllocator;
}

}  // namespace

std::string_view DeliveryName(Delivery d) {
  switch (d) {
    case Delivery::kPlaceholder: return "placeholder";
    case Delivery::kHelper: return "helper";
    case Delivery::kInjected: return "injected";
    case Delivery::kEnvironment: return "environment";
    case Delivery::kFlag: return "flag";
  }
  return "?";
}

std::string_view KindName(KnobKind k) { return k == KnobKind::kRange ? "range" : "choice"; }

KnobValue KnobSpec::Start() const {
  if (kind == KnobKind::kChoice) return choices.empty() ? KnobValue("") : KnobValue(choices.front());
  int64_t start = role == KnobRole::kBatchSize ? 32 : lo;
  return std::clamp(start, lo, hi);
}

bool KnobSpec::Contains(const KnobValue& v) const {
  if (kind == KnobKind::kRange) return v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
  return v.is_string() && std::find(choices.begin(), choices.end(), v.get<std::string>()) != choices.end();
}

std::string KnobSpec::RangeText() const {
  if (kind == KnobKind::kRange) return lo == hi ? std::to_string(lo) : fmt::format("{}:{}", lo, hi);
  std::string out;
  for (const auto& c : choices) out += (out.empty() ? "" : ",") + c;
  return out;
}

KnobRole RoleOf(std::string_view name) {
  std::string n = ToLower(name);
  if (n == "batch_size" || n == "batch" || n == "bs") return KnobRole::kBatchSize;
  if (n == "workers" || n == "num_workers") return KnobRole::kWorkers;
  if (n == "amp" || n == "precision" || n == "mixed_precision") return KnobRole::kAmp;
  if (n == "pin_memory") return KnobRole::kPinMemory;
  if (n == "preload") return KnobRole::kPreload;
  if (n == kAllocatorKnob) return KnobRole::kAllocator;
  return KnobRole::kOther;
}

std::optional<KnobSpec> DefaultKnob(std::string_view name, const MachineFacts& m) {
  switch (RoleOf(name)) {
    case KnobRole::kBatchSize: return Range(std::string(name), 16, m.gpu ? 4096 : 1024);
    case KnobRole::kWorkers: return Range(std::string(name), 0, std::max<unsigned>(1, m.usable_cores));
    case KnobRole::kAmp:
      return Choice(std::string(name), m.gpu ? std::vector<std::string>{"off", "bf16", "fp16"}
                                             : std::vector<std::string>{"off", "bf16"});
    case KnobRole::kPinMemory:
    case KnobRole::kPreload:
    case KnobRole::kAllocator: return Choice(std::string(name), {"off", "on"});
    case KnobRole::kOther: return std::nullopt;
  }
  return std::nullopt;
}

std::vector<KnobSpec> DefaultKnobs(const MachineFacts& m) {
  std::vector<std::string> names = {"batch_size", "workers", "amp", "preload"};
  // Pinned memory speeds host-to-GPU copies only, and the allocator knob is CUDA's.
  if (m.gpu) {
    names.emplace_back("pin_memory");
    names.emplace_back(kAllocatorKnob);
  }
  std::vector<KnobSpec> out;
  for (const auto& n : names) out.push_back(*DefaultKnob(n, m));
  return out;
}

Result<KnobSpec> ParseKnobFlag(std::string_view flag, const MachineFacts& m) {
  size_t eq = flag.find('=');
  std::string name(Trim(flag.substr(0, eq)));
  if (!IsIdentifier(name))
    return UsageError(fmt::format("--knob '{}': '{}' is not a knob name (letters, digits, _)", flag, name));
  if (eq == std::string_view::npos) {
    auto spec = DefaultKnob(name, m);
    if (!spec)
      return UsageError(fmt::format("--knob {} needs a range: {}=LO:HI or {}=a,b,c (no default for this name)", name,
                                    name, name));
    spec->from_flag = true;
    return *spec;
  }
  std::string_view body = Trim(flag.substr(eq + 1));
  if (body.empty()) return UsageError(fmt::format("--knob '{}': no values after '='", flag));
  KnobSpec spec;
  if (size_t colon = body.find(':'); colon != std::string_view::npos) {
    auto lo = ParseInt(body.substr(0, colon));
    auto hi = ParseInt(body.substr(colon + 1));
    if (!lo || !hi) return UsageError(fmt::format("--knob '{}': LO:HI must be two integers", flag));
    if (*lo > *hi) return UsageError(fmt::format("--knob '{}': {} is above {}", flag, *lo, *hi));
    spec = Range(name, *lo, *hi);
  } else if (auto fixed = ParseInt(body); fixed && NeedsRange(RoleOf(name))) {
    spec = Range(name, *fixed, *fixed);
  } else {
    std::vector<std::string> choices;
    for (const auto& part : Split(body, ',')) {
      std::string c(Trim(part));
      if (c.empty()) return UsageError(fmt::format("--knob '{}': an empty choice", flag));
      if (std::find(choices.begin(), choices.end(), c) == choices.end()) choices.push_back(c);
    }
    spec = Choice(name, std::move(choices));
  }
  if (NeedsRange(spec.role) && spec.kind != KnobKind::kRange)
    return UsageError(fmt::format("--knob '{}': {} takes integers, e.g. {}=LO:HI", flag, name, name));
  if (NeedsChoice(spec.role) && spec.kind != KnobKind::kChoice)
    return UsageError(fmt::format("--knob '{}': {} takes choices, e.g. {}", flag, name, DefaultKnob(name, m)->RangeText()));
  if (spec.role == KnobRole::kBatchSize && spec.lo < 1)
    return UsageError(fmt::format("--knob '{}': a batch size must be at least 1", flag));
  if (spec.role == KnobRole::kWorkers && spec.lo < 0)
    return UsageError(fmt::format("--knob '{}': workers cannot be negative", flag));
  spec.from_flag = true;
  return spec;
}

std::vector<std::string> FindPlaceholders(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (const auto& arg : argv) {
    size_t pos = 0;
    while ((pos = arg.find('{', pos)) != std::string::npos) {
      size_t close = arg.find('}', pos + 1);
      if (close == std::string::npos) break;
      std::string name = arg.substr(pos + 1, close - pos - 1);
      if (IsIdentifier(name) && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      pos = IsIdentifier(name) ? close + 1 : pos + 1;
    }
  }
  return out;
}

Result<std::vector<KnobSpec>> ResolveKnobs(const std::vector<std::string>& flags, const std::vector<std::string>& argv,
                                           const MachineFacts& m) {
  std::vector<KnobSpec> knobs;
  for (const auto& f : flags) {
    auto spec = ParseKnobFlag(f, m);
    if (!spec) return spec.error();
    if (FindKnob(knobs, spec->name)) return UsageError(fmt::format("--knob {} is given twice", spec->name));
    knobs.push_back(std::move(*spec));
  }
  if (flags.empty()) knobs = DefaultKnobs(m);

  // Every placeholder needs a range; the known names have one.
  std::vector<std::string> placeholders = FindPlaceholders(argv);
  for (const auto& name : placeholders) {
    if (FindKnob(knobs, name)) continue;
    auto spec = DefaultKnob(name, m);
    if (!spec)
      return UsageError(fmt::format("the command has {{{}}} but no range for it: add --knob {}=LO:HI or {}=a,b,c",
                                    name, name, name));
    knobs.push_back(std::move(*spec));
  }
  for (size_t i = 0; i < knobs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (knobs[i].role != KnobRole::kOther && knobs[i].role == knobs[j].role)
        return UsageError(fmt::format("knobs {} and {} play the same part; keep one", knobs[j].name, knobs[i].name));
    }
  }
  for (auto& k : knobs) {
    bool in_command = std::find(placeholders.begin(), placeholders.end(), k.name) != placeholders.end();
    k.delivery = in_command ? Delivery::kPlaceholder
                 : k.role == KnobRole::kAllocator ? Delivery::kEnvironment
                                                  : Delivery::kHelper;
  }
  std::stable_sort(knobs.begin(), knobs.end(), [](const KnobSpec& a, const KnobSpec& b) { return a.role < b.role; });
  return knobs;
}

std::optional<KnobValue> NormalizeValue(const KnobSpec& spec, const nlohmann::json& v) {
  if (spec.kind == KnobKind::kChoice) {
    if (v.is_boolean()) return KnobValue(v.get<bool>() ? "on" : "off");
    if (v.is_string()) return v;
    if (v.is_number_integer()) return KnobValue(std::to_string(v.get<int64_t>()));
    if (v.is_number()) return KnobValue(fmt::format("{}", v.get<double>()));
    return std::nullopt;
  }
  if (v.is_number_integer()) return v;
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d)) return KnobValue(static_cast<int64_t>(d));
    return std::nullopt;
  }
  if (v.is_string()) {
    if (auto i = ParseInt(v.get<std::string>())) return KnobValue(static_cast<int64_t>(*i));
  }
  return std::nullopt;
}

std::string ValueText(const KnobValue& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  return JsonText(v);
}

std::string ValuesText(const KnobValues& values, const std::vector<std::string>& order) {
  std::string out;
  auto add = [&](const std::string& name, const KnobValue& v) {
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, ValueText(v));
  };
  if (order.empty()) {
    for (const auto& [name, v] : values) add(name, v);
  } else {
    for (const auto& name : order)
      if (auto it = values.find(name); it != values.end()) add(name, it->second);
  }
  return out;
}

const KnobSpec* FindKnob(const std::vector<KnobSpec>& knobs, std::string_view name) {
  for (const auto& k : knobs)
    if (k.name == name) return &k;
  return nullptr;
}

const KnobSpec* FindRole(const std::vector<KnobSpec>& knobs, KnobRole role) {
  for (const auto& k : knobs)
    if (k.role == role) return &k;
  return nullptr;
}

}  // namespace sat::tune
