// The `saturate:` section of a sweep spec (sweep/spec.h): how saturate schedules the runs, settings W&B's own
// keys have no place for. All optional:
//   saturate: {gpus: [0, 1] | "all", max_per_gpu: 4, memory_margin: 0.1, timeout: "30m" | none, retries: 2,
//              metric_pattern: 'val_loss=(?P<val_loss>[0-9.e+-]+)', env: {NAME: value}, seed: 7, runs: 20,
//              shape: [batch_size, model], auto: false, time_budget_runs: pack | one_per_device,
//              backend: local | slurm, slurm: {...} (sweep/slurm_spec.h),
//              price_per_gpu_hour: 2.50 (the summary's GPU-hours in money, sweep/cost.h; --price-per-hour wins),
//              stage: [{path: /nfs/ds}] | [/nfs/ds] | /nfs/ds, stage_policy: auto | always | never,
//              stage_dir: /local/cache, stage_cap: 200GiB, stage_verify: sizes | checksums,
//              stage_copy_first: 10s (sweep/staging.h)}
//
// Plain data and a parser. Errors are usage errors carrying "FILE:LINE:COLUMN: saturate: ..." (sweep/spec_reader.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sweep/slurm_spec.h"
#include "util/result.h"

namespace YAML {
class Node;
struct Mark;
}  // namespace YAML

namespace sat::sweep {

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

struct StagingOptions {
  std::vector<std::string> paths;  // files or folders the runs read, as given; empty: nothing is staged
  StagePolicy policy = StagePolicy::kAuto;
  std::string dir;         // the node's store (datastore/store.h); empty: datastore::DefaultStoreRoot()
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
  // Where the runs go: a name of the backends' table (cli/sweep_backends.h), which checks it: "local" (this
  // machine's devices), "slurm" (Slurm jobs, slurm/slurm_backend.h, submitted as `slurm` says).
  std::string backend = "local";
  std::string backend_at;  // "FILE:LINE:COLUMN" of `backend` in the spec, for errors; empty when not given
  SlurmSpec slurm;
  StagingOptions stage;
};

// Parses the mapping under `saturate`; `source` is the spec file's name for error messages. `runs_mark` gets where
// `runs` was given (for the plan's checks across sections), untouched without it.
Result<SaturateOptions> ParseSaturateSpec(const YAML::Node& node, std::string_view source, YAML::Mark* runs_mark);

}  // namespace sat::sweep
