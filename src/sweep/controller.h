// `saturate sweep`'s engine: runs a sweep's planned runs to the end, packed onto devices by measurement
// (sweep/packing.h), and records every step in the journal (sweep/journal.h), so that a resume after any crash
// finishes the sweep without losing or repeating a run.
//
// One loop on the caller's thread, every tick (SweepOptions::tick_s):
//   read the helper channel (throughput, memory, metrics of every run; messages carry SATURATE_RUN_ID),
//   sample the host and GPUs, read each run's process tree (CPU, RSS, GPU memory per process, whether it loaded
//   torch),
//   stop the runs Hyperband finds behind (spec early_terminate; sweep/hyperband.h),
//   end the attempts whose command ended (journal first, then the policy), tell the policy which runs became
//   measured (and so judge the last admission), and start what the policy admits (a bayes run gets its values,
//   proposed by sweep/bayes.h from the runs finished so far, and journaled, just before its first attempt).
// Devices are the selected GPUs, or without a GPU backend one device, "cpu": the host's cores and RAM.
//
// Processes: every run starts through run::Run (its own process group, PDEATHSIG, the tree stopped as a whole),
// behind sweep/attempt_runner.h's seam with the channel, the sampler and the clock.
// An interrupt of saturate (SIGINT, SIGTERM, SIGHUP; see run/interrupt.h) stops every run and admits no more;
// the loop returns once all are over, with their runs queued again in the journal. A second interrupt kills
// them at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/controller_lock.h"
#include "sweep/journal.h"
#include "sweep/meter.h"
#include "sweep/packing.h"
#include "sweep/spec.h"
#include "sweep/staging.h"
#include "telemetry/gpu.h"
#include "util/result.h"

namespace sat::sweep {

class AttemptRunner;

// Something that happened, for the live view and the log.
struct SweepEvent {
  enum class Kind { kStarted, kEnded, kNote };
  Kind kind = Kind::kNote;
  double elapsed_s = 0;  // since the sweep started
  std::string key;       // the run (empty for notes)
  int64_t index = 0;
  std::string device;
  std::string text;  // "started (attempt 2, 3 runs on cpu)", "finished in 12.3 s", or the note
};

// A run on a device, as the live view shows it.
struct LiveRunView {
  std::string key;
  int64_t index = 0;
  nlohmann::json params;
  int attempt = 0;
  double up_s = 0;
  bool measured = false;
  std::optional<double> samples_per_s;  // over the last window
  std::optional<double> cpu_pct;        // over the last window
  uint64_t mem_bytes = 0;               // footprint so far (GPU memory, or RSS on the CPU device)
};

struct DeviceSnapshot {
  std::string name;
  int proven = 1;
  std::optional<int> cap;
  bool probing = false, poor = false;
  std::vector<LiveRunView> runs;
  std::optional<double> util_pct;  // GPU utilisation, or host CPU for the CPU device
  std::optional<uint64_t> mem_used_bytes, mem_total_bytes;
  std::optional<double> power_w;  // a GPU's power draw now
};

struct SweepSnapshot {
  double elapsed_s = 0;
  StateCounts counts;
  std::vector<DeviceSnapshot> devices;
  std::map<std::string, int> held;  // shape -> degree held (Packer::HeldDegrees)
  std::map<std::string, std::string> clocked;  // shape -> why its runs are taken to stop on the clock
  bool clocked_packed = false;                 // ... and packed anyway (time_budget_runs: pack)
  std::optional<StagingReport> staging;  // when the spec stages data
};

// Measurement defaults per device kind. A CPU process is steady within a second of its first report; a GPU run
// first goes through CUDA's start-up, cuDNN's autotuning and the caching allocator's growth.
inline constexpr double kCpuWarmupS = 1, kCpuWindowS = 1;
inline constexpr double kGpuWarmupS = 5, kGpuWindowS = 3;

struct SweepOptions {
  std::string journal_path;  // required
  std::string log_dir;       // each attempt's logs go to <log_dir>/<index>-<key>/attempt-<n>/; required
  // Continue a journal that already holds attempts (requeueing those whose saturate died). Without it such a
  // journal is refused, so that a sweep is never resumed by accident.
  bool resume = false;
  telemetry::GpuBackend* gpu = nullptr;  // not owned; null: pack runs on the CPU
  std::vector<unsigned> gpu_indices;     // the GPUs to use; empty: the spec's list, else every GPU
  PackingParams packing;  // margin comes from the spec; max_per_device 0: the spec's max_per_gpu, else a default
  // When a run counts as measured (MeterOptions); 0: the device kind's default below.
  double warmup_s = 0, window_s = 0;
  double tick_s = 0.5;
  double stop_grace_s = 10;                // SIGINT -> SIGTERM when a run is stopped
  std::optional<uint64_t> seed;            // for random search when neither the spec nor the journal has one
  std::map<std::string, std::string> env;  // added to every run's environment after the spec's (e.g. MPS)
  // The machine the runs go to (sweep/attempt_runner.h), not owned; null: this one, through run::Run, a helper
  // channel and a sampler of the host and `gpu`. Tests give a scripted one.
  AttemptRunner* runner = nullptr;
  // Both called on the loop's thread; they must not block for long.
  std::function<void(const SweepEvent&)> on_event;
  std::function<void(const SweepSnapshot&)> on_snapshot;  // about once a second
  std::function<void(const telemetry::Sample&)> on_sample;  // every host and GPU sample (--serve)
  // What earlier sweeps of the same command learnt on this machine (sweep/degree_record.h), read at the start and
  // written with what this one learnt at the end; empty: none kept (the CLI gives the user's, unless --fresh).
  std::string packing_record;
};

struct SweepResult {
  StateCounts counts;  // at the end
  bool interrupted = false;
  int requeued = 0;  // runs a resume found interrupted and queued again
  int started = 0;   // attempts this session started
  double wall_s = 0;
  std::map<std::string, int> held;
  std::map<std::string, std::string> clocked;  // shape -> why its runs are taken to stop on the clock
  std::vector<std::string> warnings;  // the controller's own (the spec's are in Spec::warnings)
  std::optional<StagingReport> staging;  // when the spec stages data
};

// Runs the sweep until no run is queued or running, or until an interrupt. Errors: a journal that cannot be
// opened or belongs to another plan, a journal with attempts and no `resume`, a `shape` name that is not a
// parameter, GPUs asked for that the backend does not have, and failures of saturate's own (channel, logs).
Result<SweepResult> RunSweep(const Spec& spec, const SweepOptions& options);

// A sweep's journal opened to run the sweep: the seed it plans with (the journal's, else the spec's, else
// `seed`, else a random one) and its runs recorded (Journal::EnsureRuns). A journal that already holds progress
// is refused (usage error) unless `resume`. The journal's ControllerLock is taken first: a journal another
// controller holds is refused (usage error, naming it). Open attempts are left as they are: the caller requeues or
// adopts them. Shared by the local controller and the Slurm backend (slurm/backend.h).
struct OpenedJournal {
  std::unique_ptr<ControllerLock> lock;  // held for the controller's life; before the journal is opened
  std::unique_ptr<Journal> journal;
  uint64_t seed = 0;
};
Result<OpenedJournal> OpenSweepJournal(const Spec& spec, const std::string& path, bool resume,
                                       std::optional<uint64_t> seed);

// bayes: the values of the run `key` (planned without values), proposed from the journal's finished runs with
// the runs in flight (`pending`, their values) as constant liars, and journaled. Usage error without a metric.
Result<nlohmann::json> ProposeRunValues(const Spec& spec, Journal& journal, const std::string& key, int64_t index,
                                        const std::vector<nlohmann::json>& pending, uint64_t seed);

// Where a sweep's journal goes by default: beside the spec file, its name with ".journal" for ".yaml"/".yml"
// ("tune/lr.yaml" -> "tune/lr.journal"); for the short form, "saturate-sweep-<plan hash>.journal" in the
// working directory, so that the same command line resumes the same journal.
std::string DefaultJournalPath(const Spec& spec);

// The default journal of the spec file at `spec_path` (what DefaultJournalPath gives for it), for commands that
// read a journal without running the sweep.
std::string JournalPathForSpecFile(const std::string& spec_path);

// The runs' log folder for a journal: "x.journal" -> "x.logs", anything else gets ".logs" appended.
std::string LogDirFor(const std::string& journal_path);

// The packing shape of a run: "" when spec.saturate.shape is empty, else "name=value,..." over those
// parameters (values as the command line gets them).
std::string ShapeOf(const Spec& spec, const nlohmann::json& params);

// Usage error when a spec.saturate.shape entry names no parameter (with a "did you mean").
Status CheckShape(const Spec& spec);

}  // namespace sat::sweep
