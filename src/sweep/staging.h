// A sweep's data on a local drive: the paths the spec names (`saturate.stage`, `--stage`) copied once into the
// node's store (stage/store.h), and every run pointed at the copy without a change to its script.
//
// Whether to copy (StagePolicy): `always` copies before the first run; `never` leaves the runs on the source;
// `auto` (the default) copies when a copy is already in the store (free), else lets the first run start on the
// source alone and judges its fetch stalls once it is measured (FetchBound): a loader waiting on storage is
// what a local copy cures, a loader busy decoding is not. While a copy is made no run starts (they would compete
// with the copy for the same link); runs already going finish on the source.
//
// How a run gets the copy (Rewrite): an argv item that is the source path (as given or resolved), starts with it
// and a '/', or is `--flag=` followed by such a path; `${stage:N}` inside any item; and SATURATE_STAGED_<N> in
// its environment. A source left in place (never, or auto judged no) gives its own path to the same names.
//
// Threads: the copy runs on a thread of its own; every method is called from the controller's loop.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "stage/store.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

// What the first run showed of its loader, once measured.
struct FetchSignals {
  double wait_share = 0;          // of the loop time, waiting for the loader (the helper's data wait)
  std::optional<double> cpu_pct;  // the run's tree, 100 = one core
  unsigned processes = 1;         // in the run's tree (trainer and loader workers)
  unsigned cores = 1;             // of the machine
  // The run's processes in state 'D' (waiting on a read), on average; nullopt where not read.
  std::optional<double> blocked;
  double workers = 0;             // DataLoader workers, on average
  double samples_per_s = 0;       // the run's throughput; 0 unknown
};

// The loader waits on storage: steps wait for data at least 25% of the loop time, and
//  - with the process states and a rate: its time splits into fetch and prep as probe's does (stage/fetch_split.h,
//    the loading processes being the workers, or the trainer without), and fetch binds it (stage::FetchBound);
//  - else: the run's processes are mostly off the CPU (under half of min(processes, cores) cores busy).
// A loader that waits because it decodes is busy on the CPU, and a copy would not help it. `why` gets the
// sentence either way.
bool FetchBound(const FetchSignals& s, std::string* why);

// The summary's and `sweep status`'s account of one source.
struct StagedSource {
  std::string given;     // as the spec or --stage named it
  std::string resolved;  // absolute
  std::string local;     // the copy; empty while none
  uint64_t bytes = 0;
  size_t files = 0;
  bool reused = false;
  double copy_s = 0;
};

struct StagingReport {
  StagePolicy policy = StagePolicy::kAuto;
  std::string decision;  // "undecided", "copying", "staged", "source", "failed"
  std::string reason;    // why, in a sentence
  std::string store;
  stage::Progress progress;  // of the copy under way, or the last one
  std::vector<StagedSource> sources;
  // Mean samples/s of the runs measured on the source and on the copy (auto shows both); nullopt when none.
  std::optional<double> source_rate, copy_rate;
  double copy_wall_s = 0;  // the sweep's time spent staging (waiting included)
  // With both rates: the makespan the copy saved, net of copy_wall_s, had the time since the copy gone at the
  // source's pace (copy_rate / source_rate slower) with the same packing. An estimate; nullopt without both rates.
  std::optional<double> saved_s;
};
nlohmann::json StagingJson(const StagingReport& r);
std::optional<StagingReport> StagingFromJson(const nlohmann::json& j);
// One line for people: "staged /nfs/ds (300 files, 1.2 MiB) in 3.4 s to /store/...; runs on the copy trained at
// 410 samples/s against 52 on the source (7.9x)"; while copying: bytes, rate, ETA.
std::string StagingText(const StagingReport& r);

// Points a run's argv and environment at `sources` (see above): each source's copy when `on_copy`, else its own
// path (for ${stage:N} and SATURATE_STAGED_<N>). Returns `on_copy`.
bool PointAtSources(const std::vector<StagedSource>& sources, bool on_copy, std::vector<std::string>* argv,
                    std::map<std::string, std::string>* env);

// A Slurm job's staging, on its node, before its run starts: the same store and lock as a local sweep (one copy per
// node, shared by the sweep's jobs there; default folder on the node's scratch). `never` copies nothing; `always`
// copies; `auto` copies a source on a network or FUSE filesystem (statfs), since no first run on this node has been
// measured. `leases` keeps the copies from eviction while the run reads them. Returns the sources (with their copy
// when staged) and whether the run reads copies; errors as stage::Acquire's.
struct NodeStaging {
  std::vector<StagedSource> sources;
  bool on_copy = false;
  std::string note;  // for the run's outcome: what was staged, or why not
};
Result<NodeStaging> StageOnNode(const StageOptions& options, std::vector<stage::Lease>* leases);

// StageOptions in a Slurm job file.
nlohmann::json StageOptionsJson(const StageOptions& o);
StageOptions StageOptionsFromJson(const nlohmann::json& j);

class Stager {
 public:
  // Lists every source (bad paths: usage error, exit 2, naming them) and resolves the store folder; starts the
  // copy for `always`, and for `auto` when the store holds every source already.
  static Result<std::unique_ptr<Stager>> Start(const StageOptions& options);
  ~Stager();  // stops a copy under way (it is resumed next time)

  // Whether a run may start now, with `live` runs going and `started` attempts begun by this sweep.
  bool MayStart(size_t live, int started) const;
  // auto: the first run's signals; decides, and starts the copy when the loader waits on storage.
  void Judge(const FetchSignals& signals);
  // auto: the first run ended before it was measured; it judges with what it showed.
  bool Undecided() const;
  // A finished copy (or its failure) becomes the decision; returns a note for the live view when it did.
  // Error: the copy failed under `always` (the sweep cannot read its data as asked).
  Result<std::optional<std::string>> Poll();
  // Points a run's argv and environment at the copy (or the source); returns whether the run reads the copy.
  bool Rewrite(std::vector<std::string>* argv, std::map<std::string, std::string>* env) const;
  // A run's steady samples/s, for the summary's comparison.
  void AddRate(bool on_copy, double samples_per_s);
  StagingReport Report() const;

 private:
  Stager() = default;
  void BeginCopy(const std::string& why);
  void CopyAll();  // the copying thread's work

  StageOptions options_;
  std::string root_;
  std::vector<StagedSource> sources_;
  std::string decision_ = "undecided", reason_;
  std::vector<stage::Lease> leases_;  // held for the sweep's life: nobody evicts the copies it reads
  double copy_t0_ = 0, copy_wall_s_ = 0, staged_at_ = 0;
  double source_sum_ = 0, copy_sum_ = 0;
  int source_n_ = 0, copy_n_ = 0;

  // Shared with the copying thread.
  mutable std::mutex mu_;
  stage::Progress progress_;
  std::optional<Result<std::vector<stage::Lease>>> copied_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace sat::sweep
