// The sweep spec: what `saturate sweep` runs. Read from the Weights & Biases sweep YAML users already have, or
// built from the short form `--grid lr=0.1,0.01 --grid bs=32,64 -- python train.py --lr {lr} --bs {bs}`.
//
// The W&B file, as W&B reads it:
//   program, method (grid | random | bayes), parameters, command, metric {name, goal, target}, run_cap,
//   early_terminate {type: hyperband, min_iter | max_iter + s, eta, strict} (sweep/hyperband.h; needs metric),
//   name / description (kept), project / entity / apiVersion / kind / controller (no effect here).
// bayes (sweep/bayes.h) needs a metric and a run count, and proposes each run's values when it starts.
// plus saturate's own section, `saturate:` (sweep/saturate_spec.h: devices, packing, retries, the backend, staging).
// Parameters take value | values [+ probabilities] | distribution with min, max, q, mu, sigma, or a nested
// `parameters:` block; nested names are flattened with dots ("optimizer.lr"), so `${args}` gives
// `--optimizer.lr=0.001` (W&B itself passes the whole dict as one `--optimizer={'lr': 0.001}`).
// Without `distribution`, W&B's inference: value -> constant, values -> categorical, integer min and max ->
// int_uniform, other min and max -> uniform.
//
// Every error is a sat::Error with exit code kExitUsage. Errors about the file carry "FILE:LINE:COLUMN: " (both
// 1-based) and the setting's path: "sweep.yaml:7:3: parameters.lr: 'min' (0.5) is above 'max' (0.1)". Unknown
// keys name the closest valid key. Pure functions; no I/O besides LoadSpecFile reading its file.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sweep/command_template.h"
#include "sweep/hyperband.h"
#include "sweep/params.h"
#include "sweep/saturate_spec.h"
#include "util/result.h"

namespace sat::sweep {

enum class Method { kGrid, kRandom, kBayes };
std::string_view MethodName(Method m);  // "grid", "random", "bayes"

enum class Goal { kMinimize, kMaximize };
std::string_view GoalName(Goal g);  // "minimize", "maximize"

struct MetricSpec {
  std::string name;
  Goal goal = Goal::kMinimize;   // W&B's default
  std::optional<double> target;  // W&B stops the sweep once a run reaches it
};

struct Spec {
  std::string source;  // the spec file's path, or "--grid" for the short form
  std::string name, description;
  std::string program;  // what ${program} stands for; may be empty when the command does not use it
  Method method = Method::kGrid;
  std::vector<Parameter> parameters;  // sorted by name, as W&B orders them
  // Never empty once parsed: a file without `command` gets W&B's default
  // {"${env}", "${interpreter}", "${program}", "${args}"}.
  std::vector<std::string> command;
  CommandStyle command_style = CommandStyle::kWandb;
  std::optional<MetricSpec> metric;
  std::optional<int64_t> run_cap;
  std::optional<HyperbandSpec> early_terminate;
  SaturateOptions saturate;
  // Found while parsing, for the CLI to print: settings accepted but without effect here, ... (SpecWarnings adds
  // what depends on the command line's overrides).
  std::vector<std::string> warnings;
};

// What the spec as finally set (the file, then the command line's --metric and --metric-pattern) gets wrong
// without being an error: the parse's warnings, and a metric that no named group of metric_pattern reads (it can
// then only come from the saturate Python helper).
std::vector<std::string> SpecWarnings(const Spec& spec);

// The smaller of run_cap and saturate.runs; nullopt when neither is set.
std::optional<int64_t> RunCap(const Spec& spec);

// Reads and parses a W&B sweep file. Errors name the path as given.
Result<Spec> LoadSpecFile(const std::string& path);

// Parses W&B sweep YAML text; `source` is what errors name as the file.
Result<Spec> ParseSpec(std::string_view yaml, std::string_view source);

// The short form: each `grid` item is "NAME=VALUE[,VALUE...]" (values typed like YAML scalars: 0.1 is a float,
// 32 an integer, adam a string), and `command` the argv with {NAME} placeholders. Every placeholder must name
// a grid parameter and every grid parameter must appear in the command.
Result<Spec> SpecFromGrid(const std::vector<std::string>& grid, std::vector<std::string> command);

}  // namespace sat::sweep
