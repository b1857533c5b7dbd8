#include "tune/code_change.h"

#include <fmt/core.h>

namespace sat::tune {
namespace {

// A knob value as a Python literal in a DataLoader call.
std::string PythonValue(const KnobValue& v) {
  const std::string text = ValueText(v);
  if (text == "on") return "True";
  if (text == "off") return "False";
  return text;
}

std::string AutocastDtype(const std::string& amp) {
  if (amp == "fp16" || amp == "float16" || amp == "half") return "torch.float16";
  return "torch.bfloat16";
}

}  // namespace

std::string CodeChange::Text() const { return where + ": " + code; }

std::vector<std::string> FlagSources(const SearchOutcome& search) {
  std::vector<std::string> out;
  for (const auto& k : search.knobs)
    if (k.spec.delivery == Delivery::kFlag && k.spec.flag)
      out.push_back(fmt::format("{}: {} ({})", k.spec.name, k.spec.flag->option, k.spec.flag_proof));
  return out;
}

std::string LoaderArgument(const KnobSpec& spec) {
  switch (spec.role) {
    case KnobRole::kWorkers: return "num_workers";
    case KnobRole::kBatchSize: return "batch_size";
    case KnobRole::kPinMemory: return "pin_memory";
    default: break;
  }
  if (spec.name == "prefetch_factor" || spec.name == "persistent_workers") return spec.name;
  return "";
}

std::vector<CodeChange> CodeChanges(const SearchOutcome& s, const KnobValues& values, bool gpu) {
  std::vector<CodeChange> out;
  CodeChange loader;
  loader.where = s.loader_site.empty() ? "the training DataLoader" : "DataLoader at " + s.loader_site;
  std::string arguments;
  for (const auto& k : s.knobs) {
    auto v = values.find(k.spec.name);
    if (k.spec.delivery != Delivery::kInjected || v == values.end()) continue;
    if (k.script_value && *k.script_value == v->second) continue;
    if (k.spec.role == KnobRole::kAmp) {
      const std::string amp = ValueText(v->second);
      CodeChange change{{k.spec.name}, "around the model's forward", ""};
      if (amp == "off") {
        change.where = "the model's forward";
        change.code = "remove the torch.autocast around it";
      } else {
        change.code = fmt::format("with torch.autocast(\"{}\", dtype={}):{}", gpu ? "cuda" : "cpu",
                                  AutocastDtype(amp), amp == "fp16" ? " (keep the script's GradScaler)" : "");
      }
      out.push_back(std::move(change));
      continue;
    }
    const std::string argument = LoaderArgument(k.spec);
    if (argument.empty()) continue;
    loader.knobs.push_back(k.spec.name);
    arguments += fmt::format(", {}={}", argument, PythonValue(v->second));
  }
  if (!loader.knobs.empty()) {
    loader.code = "DataLoader(..." + arguments + ")";
    out.insert(out.begin(), std::move(loader));
  }
  return out;
}

}  // namespace sat::tune
