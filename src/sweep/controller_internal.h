// The local controller's state and steps (sweep/controller.h's RunSweep), shared by the files that implement them;
// not part of the module's interface:
//   controller.cc          the loop: the journal and devices made ready, each tick (readings, ends, admissions,
//                          starts), early termination, bayes proposals, events and snapshots;
//   controller_staging.cc  data staging in the loop (sweep/staging.h): the first run alone until its loader is
//                          judged, the judgement, the runs on the source once the copy is made, staging.json.
// One Controller runs one sweep on the caller's thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sweep/attempt_runner.h"
#include "sweep/attempt_watch.h"
#include "sweep/controller.h"
#include "sweep/controller_lock.h"
#include "sweep/degree_record.h"
#include "sweep/energy_ledger.h"
#include "sweep/journal.h"
#include "sweep/meter.h"
#include "sweep/metrics.h"
#include "sweep/packing.h"
#include "sweep/staging.h"
#include "telemetry/sampler.h"

namespace sat::sweep::internal {

// The shortest warm-up and window a run is measured over (a few of the helper's reports, 0.1 s apart).
inline constexpr double kShortestWindowS = 0.3;

// Runs per GPU when neither the command line nor the spec sets a limit: measurement decides below it.
inline constexpr int kDefaultMaxPerGpu = 8;

// Runs per CPU device by default: I/O-bound runs may well exceed the cores, but each admission is judged.
inline int DefaultMaxPerCpu(unsigned cores) { return std::clamp(static_cast<int>(2 * cores), kDefaultMaxPerGpu, 64); }

// Link speeds from /sys/class/net/<name>/speed (Mbit/s), read once per interface; virtual links report none.
class LinkSpeeds {
 public:
  std::optional<double> BytesPerS(const std::string& name) {
    auto it = cache_.find(name);
    if (it != cache_.end()) return it->second;
    std::optional<double> speed;
    std::ifstream in("/sys/class/net/" + name + "/speed");
    long long mbit = 0;
    if (in >> mbit && mbit > 0) speed = static_cast<double>(mbit) * 1e6 / 8;
    cache_[name] = speed;
    return speed;
  }

 private:
  std::map<std::string, std::optional<double>> cache_;
};

// The host's state for the packer (packing.h) from a host sample, its network links at their speed.
HostState HostOf(const telemetry::HostSample& h, LinkSpeeds& links);

using telemetry::GpuOf;

// One live attempt and everything the loop keeps about it.
struct Attempt {
  Attempt(double start_t, bool on_gpu, const MeterOptions& meter_options, std::string run_id,
          bool auto_instrumentation, std::optional<MetricSpec> metric)
      : watch(std::move(run_id), start_t, on_gpu, meter_options, auto_instrumentation), metrics(std::move(metric)) {}

  std::string key;
  int64_t index = 0;
  std::string shape;
  int64_t id = 0;  // the journal's attempt id
  int number = 0;  // 1-based per run
  int device = 0;
  std::unique_ptr<AttemptProcess> process;  // from the controller's runner
  AttemptWatch watch;  // its meter, tree readings, helper metrics and matched lines
  MetricLog metrics;
  bool measured = false;
  bool rated = false;      // told the packer it was rated (packing.h rule 9)
  bool stepped = false;    // told the packer of its first training step (packing.h rule 11)
  bool on_copy = false;    // its command was pointed at the staged copy (sweep/staging.h)
  std::string restarting;  // why it is being stopped to run again on the staged copy; empty otherwise
  unsigned processes = 1;  // in its tree at the latest reading
  std::vector<double> history;  // the sweep metric's values this attempt reported, in order (Hyperband's iterations)
  std::string stopped_early;    // why early termination stopped it; empty while it may go on
};

class Controller final : public RateSource {
 public:
  // A power reading stands for the power since for a few ticks at most (sweep/energy_ledger.h).
  Controller(const Spec& spec, const SweepOptions& options)
      : spec_(spec), o_(options), energy_(std::max(2.0, 4 * options.tick_s)) {}

  Result<SweepResult> Execute();
  WindowRates Rates(const std::string& key, double t0, double t1) const override;

 private:
  // Prepare's steps: the journal and plan (resume or refuse), the devices, the channel and sampler.
  Status Prepare();
  Status OpenJournal();
  Result<std::vector<DeviceInfo>> ChooseDevices(std::vector<unsigned>* gpu_indices);
  Status OpenInstruments(const std::vector<unsigned>& gpu_indices);
  // The runner's clock (monotonic seconds; the machine's before the real runner is made).
  double Now() const { return runner_ ? runner_->Now() : telemetry::MonotonicSeconds(); }
  // One pass of the loop; `sample_now`: a scheduled tick (else a run ended between ticks).
  Status Tick(double now, bool sample_now);
  // Ends the sweep after the loop's first error, with the state saved (see failed_).
  void Fail(Error error);
  bool AnyEnded() const;
  // A live run became rated or measured since the last tick told the packer (RunMeter::Rated, Measured).
  bool AnyNewlyKnown(double now) const;
  Status Drain(int timeout_ms);
  void ReadTrees(const telemetry::Sample& sample, double now);
  Status Start(const Admission& admission, double now);
  Status End(Attempt& a, const run::RunOutcome& outcome);
  void AddMetric(Attempt& a, MetricPoint point);
  // Hyperband (spec early_terminate): stops the live attempts that are behind at their latest band.
  void TerminateEarly();
  // bayes: gives a run planned without values its values, proposed from the runs finished so far.
  Status Propose(const std::string& key);
  void Emit(SweepEvent::Kind kind, const Attempt* a, std::string text);
  SweepSnapshot Snapshot(const telemetry::Sample& sample, double now) const;
  std::vector<DeviceState> DeviceStates(const telemetry::Sample& sample) const;
  // Staging (sweep/staging.h): the admissions of this tick that may start, the first run's judgement (`final`: at
  // its end, else once it has trained kJudgeAfterS or is measured), the runs on the source once the copy is made
  // (restarted on it, or left to finish), the account `sweep status` reads.
  std::vector<Admission> Admissions(double now, const telemetry::Sample& sample);
  void JudgeStaging(const Attempt& a, bool final);
  void RestartOnCopy();
  void WriteStaging() const;
  // The packing record (sweep/degree_record.h): what earlier sweeps learnt of the queued shapes, told to the
  // packer; at the end, what this one learnt, written back.
  void RememberShapes();
  void RecordShapes();
  // How an attempt of `shape` is measured: the device kind's defaults (or --warmup/--window), shortened for a shape
  // whose runs are known to be short.
  MeterOptions MeterFor(const std::string& shape) const;
  // <logs>/clock.json, for `sweep status` and the report: the shapes on the clock, and whether they are packed.
  void WriteClocked();
  // Packing rule 10: what each device's runs trained so far, told to the packer at every wake of the loop (before
  // the tick, which may place runs) and right before a run leaves.
  void ReportTrained(double now);
  struct Trained {
    double samples = 0, steps = 0;
    bool warm = true;  // every live run of the device that made its first step is past its warm-up
  };
  std::map<int, Trained> trained_left_;  // device -> what its runs that left trained
  size_t clocked_written_ = 0;

  const Spec& spec_;
  const SweepOptions& o_;
  std::unique_ptr<ControllerLock> lock_;  // before journal_, so it is released after the journal closes
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<AttemptRunner> own_runner_;  // the real one, unless the options give one
  AttemptRunner* runner_ = nullptr;
  std::optional<MetricPattern> pattern_;
  std::optional<Packer> packer_;
  MeterOptions meter_;
  LinkSpeeds links_;
  EnergyLedger energy_;  // the live attempts' energy, by journal attempt id; devices by packer device number
  std::unique_ptr<Stager> stager_;  // null: the spec stages nothing
  std::optional<DegreeRecord> record_;  // what earlier sweeps learnt (SweepOptions::packing_record)
  std::string machine_key_, command_key_;

  struct Planned {
    int64_t index = 0;
    nlohmann::json params;
    int attempts = 0;
    int transient_starts = 0;  // this session's attempts that could not start for want of a resource
  };
  std::map<std::string, Planned> plan_;
  // Runs waiting out a delay after a transient start failure (TransientStartDelay) before they queue again.
  struct Deferred {
    double ready_t = 0;
    std::string key;
  };
  std::vector<Deferred> deferred_;
  std::mt19937 jitter_{std::random_device{}()};
  std::map<std::string, std::unique_ptr<Attempt>> live_;
  std::map<std::string, std::string> by_run_id_;  // SATURATE_RUN_ID -> key
  // Early termination: its bands, and the sweep metric's values of every run's latest ended attempt.
  std::vector<int64_t> bands_;
  std::map<std::string, std::vector<double>> histories_;
  uint64_t seed_ = 0;
  double t0_ = 0, last_snapshot_ = -1;
  bool interrupted_ = false;
  // The first error of the loop (a journal that cannot be written: disk full, a lock held too long): nothing new
  // starts, the live runs are stopped and recorded where the journal lets us, then the sweep ends with it.
  std::optional<Error> failed_;
  SweepResult result_;
};

}  // namespace sat::sweep::internal
