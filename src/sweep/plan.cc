// The plan of a parsed spec: its run count, runs, hash and command lines (declared in sweep/plan.h).
#include "sweep/plan.h"

#include <fmt/format.h>

#include "util/json_text.h"
#include "util/strings.h"

namespace sat::sweep {

Result<int64_t> RunCount(const Spec& spec) {
  const std::optional<int64_t> cap = RunCap(spec);
  if (spec.method == Method::kGrid) return GridRunCount(spec.parameters, cap);
  if (!cap) {
    return UsageError(fmt::format("method '{}' needs a run count: set run_cap, or runs in the saturate section",
                                  MethodName(spec.method)));
  }
  return *cap;
}

Result<std::vector<RunParams>> ExpandRuns(const Spec& spec, uint64_t seed) {
  auto count = RunCount(spec);
  if (!count) return count.error();
  if (spec.method == Method::kRandom) return RandomRuns(spec.parameters, *count, seed);
  if (spec.method == Method::kBayes) {
    std::vector<RunParams> runs;
    for (int64_t i = 0; i < *count; ++i) {
      runs.push_back(RunParams{i, ShortHash(fmt::format("bayes:{}:{}", seed, i), 12), nullptr});
    }
    return runs;
  }
  auto axes = GridAxes(spec.parameters);
  if (!axes) return axes.error();
  return GridRuns(spec.parameters, *axes, *count);
}

std::string SpecHash(const Spec& spec, uint64_t seed) {
  const Result<int64_t> count = RunCount(spec);
  nlohmann::json plan = {
      {"method", MethodName(spec.method)},
      {"program", spec.program},
      {"command", spec.command},
      {"command_style", spec.command_style == CommandStyle::kWandb ? "wandb" : "placeholders"},
      {"runs", count.ok() ? *count : -1},
  };
  if (spec.method != Method::kGrid) plan["seed"] = seed;
  for (const auto& p : spec.parameters) {
    plan["parameters"].push_back({{"name", p.name},
                                  {"distribution", DistributionName(p.distribution)},
                                  {"values", p.values},
                                  {"probabilities", p.probabilities},
                                  {"min", p.min},
                                  {"max", p.max},
                                  {"bounds_are_integers", p.bounds_are_integers},
                                  {"q", p.q},
                                  {"q_is_integer", p.q_is_integer},
                                  {"mu", p.mu},
                                  {"sigma", p.sigma}});
  }
  return ShortHash(JsonText(plan), 16);
}

std::vector<std::string> RenderCommand(const Spec& spec, const RunParams& run) {
  static const CommandContext context = CommandContext::FromSystem();
  return RenderCommand(spec, run, context);
}

std::vector<std::string> RenderCommand(const Spec& spec, const RunParams& run, const CommandContext& context) {
  return RenderArgv(spec.command, spec.command_style, spec.program, run.values, context);
}

std::string ShapeOf(const Spec& spec, const nlohmann::json& params) {
  std::vector<std::string> parts;
  for (const std::string& name : spec.saturate.shape) {
    auto it = params.find(name);
    parts.push_back(fmt::format("{}={}", name, it == params.end() ? "" : PyStr(*it)));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

Status CheckShape(const Spec& spec) {
  std::vector<std::string> names;
  for (const Parameter& p : spec.parameters) names.push_back(p.name);
  for (const std::string& name : spec.saturate.shape) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string message = fmt::format("saturate.shape: '{}' is not a parameter of this sweep", name);
    if (auto close = ClosestMatch(name, names)) message += fmt::format(" (did you mean '{}'?)", *close);
    return UsageError(message + fmt::format("; parameters: {}", fmt::join(names, ", ")));
  }
  return Status::Ok();
}

}  // namespace sat::sweep
