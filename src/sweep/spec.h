// The sweep spec: what `saturate sweep` runs. Read from the Weights & Biases sweep YAML users already have, or
// built from the short form `--grid lr=0.1,0.01 --grid bs=32,64 -- python train.py --lr {lr} --bs {bs}`.
//
// The W&B file, as W&B reads it:
//   program, method (grid | random | bayes), parameters, command, metric {name, goal, target}, run_cap,
//   early_terminate {type: hyperband, min_iter | max_iter + s, eta, strict} (sweep/hyperband.h; needs metric),
//   name / description (kept), project / entity / apiVersion / kind / controller (no effect here).
// bayes (sweep/bayes.h) needs a metric and a run count, and proposes each run's values when it starts.
// plus saturate's own section:
//   saturate: {gpus: [0, 1] | "all", max_per_gpu: 4, memory_margin: 0.1, timeout: "30m" | none, retries: 2,
//              metric_pattern: 'val_loss=(?P<val_loss>[0-9.e+-]+)', env: {NAME: value}, seed: 7, runs: 20,
//              shape: [batch_size, model], auto: false, backend: local | slurm, slurm: {...} (sweep/slurm_spec.h),
//              price_per_gpu_hour: 2.50 (the summary's GPU-hours in money, sweep/cost.h; --price-per-hour wins),
//              stage: [{path: /nfs/ds}] | [/nfs/ds] | /nfs/ds, stage_policy: auto | always | never,
//              stage_dir: /local/cache, stage_cap: 200GiB (sweep/staging.h)}
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
#include "sweep/slurm_spec.h"
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

// Whether a sweep copies its data to a local drive (sweep/staging.h).
enum class StagePolicy {
  kAuto,    // when the first run's loader waits on storage (its fetch stalls)
  kAlways,  // before the first run
  kNever,
};
std::string_view StagePolicyName(StagePolicy p);  // "auto", "always", "never"
std::optional<StagePolicy> ParseStagePolicy(std::string_view text);
// `stage_verify`: "checksums" -> true, "sizes" -> false, else nullopt.
std::optional<bool> ParseStageVerify(std::string_view text);

struct StageOptions {
  std::vector<std::string> paths;  // files or folders the runs read, as given; empty: nothing is staged
  StagePolicy policy = StagePolicy::kAuto;
  std::string dir;         // the node's store (stage/store.h); empty: stage::DefaultStoreRoot()
  uint64_t cap_bytes = 0;  // the store's size at most; 0: free space decides
  // `stage_verify: checksums`: a copy found in the store is read back against its checksums before runs use it;
  // `sizes` (the default) compares its listing (sizes, mtimes, modes) with the data's.
  bool verify_checksums = false;
  // auto on a network or FUSE mount: a copy the cold reads expect to take at most this long is made before the
  // first run starts (a first run started beside it would spend its start-up reading the slow mount, then be
  // restarted on the copy); a longer one is judged on the first run meanwhile. 0: never hold the first run.
  double copy_first_s = 10;
};

struct SaturateOptions {
  std::vector<unsigned> gpus;              // GPU indices to use; empty: all
  int max_per_gpu = 0;                     // runs sharing one device at most; 0: as measurement decides
  double memory_margin = 0.1;              // fraction of a GPU's memory left free when runs share it, in [0, 1)
  double timeout_s = 0;                    // per attempt, in seconds; 0: none (spelled `timeout: none`)
  int retries = 2;                         // how often a failed run is tried again
  std::string metric_pattern;              // PCRE2; each named group is a metric read from output lines; empty: none
  std::map<std::string, std::string> env;  // added to every run's environment
  std::optional<uint64_t> seed;            // for random draws; unset: the caller picks one (and journals it)
  std::optional<int64_t> runs;             // how many runs to plan (random), or a cap (grid)
  std::optional<double> price_per_gpu_hour;  // money per GPU-hour, above 0: the summary's cost lines
  // The parameters that decide a run's footprint (model, batch size): runs with equal values share a packing
  // shape. Empty: every run of the sweep has one shape. Names are checked against the parameters by the sweep
  // controller, which also serves the short form.
  std::vector<std::string> shape;
  // The automatic instrumentation of PyTorch programs (docs/helper-protocol.md); false: the runs get
  // SATURATE_AUTO=0, and only scripts that use `import saturate` report their steps.
  bool auto_instrumentation = true;
  // `time_budget_runs: pack`: runs found to stop on the clock (sweep/clock_runs.h) are packed anyway; by default
  // (`one_per_device`) they run one per device, so that each trains as long as it would alone.
  bool pack_clocked = false;
  // `backend: slurm`: runs are Slurm jobs (slurm/backend.h), submitted as `slurm` says.
  bool slurm_backend = false;
  SlurmSpec slurm;
  StageOptions stage;
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

// The most runs one sweep may plan (grid size or run count); larger grids need run_cap.
inline constexpr int64_t kMaxRuns = 100000;

// Reads and parses a W&B sweep file. Errors name the path as given.
Result<Spec> LoadSpecFile(const std::string& path);

// Parses W&B sweep YAML text; `source` is what errors name as the file.
Result<Spec> ParseSpec(std::string_view yaml, std::string_view source);

// The short form: each `grid` item is "NAME=VALUE[,VALUE...]" (values typed like YAML scalars: 0.1 is a float,
// 32 an integer, adam a string), and `command` the argv with {NAME} placeholders. Every placeholder must name
// a grid parameter and every grid parameter must appear in the command.
Result<Spec> SpecFromGrid(const std::vector<std::string>& grid, std::vector<std::string> command);

}  // namespace sat::sweep
