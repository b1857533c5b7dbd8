// What every way of running a sweep shares (the local controller, sweep/controller.h; Slurm, slurm/slurm_backend.h):
// what it is given (SweepOptions: the journal, the logs, the seed, how runs are measured; the rest is the local
// controller's), what it tells while it runs (SweepEvent; the local controller's SweepSnapshot, about once a
// second) and what it returns (SweepResult). The readers of a sweep (the live view, `sweep status`, the report)
// and the backends include this, never the engine's header. Plain structs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/packing.h"
#include "sweep/records.h"
#include "sweep/staging.h"
#include "telemetry/gpu.h"
#include "telemetry/sample.h"

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

}  // namespace sat::sweep
