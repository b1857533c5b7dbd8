// A sweep's data on a local drive: the paths the spec names (`saturate.stage`, `--stage`) copied once into the
// node's store (datastore/store.h), and every run pointed at the copy without a change to its script.
//
// Whether to copy (StagePolicy): `always` copies before the first run; `never` leaves the runs on the source;
// `auto` (the default) copies when a copy is already in the store (free); leaves a source on the store's own
// filesystem in place (a copy would read from the same drive); else reads a sample of the source's files cold (from
// the source and from a copy in the store's folder, on a thread of its own) while the first run starts on the
// source alone, and judges the first seconds of that run's training by the storage rule (datastore/storage_wait.h, the
// one probe's verdict uses): a loader waiting on storage that a local copy reads faster is what a copy cures, a
// loader busy decoding is not. The copy starts as soon as that is judged. While a copy is made no run starts (they
// would compete with the copy for the same link); once it is made, a run still on the source is restarted on the
// copy where that is sooner than letting it finish (ChooseRestart), else it finishes there; the summary says which.
//
// How a run gets the copy (Rewrite): an argv item that is the source path (as given or resolved), starts with it
// and a '/', or is `--flag=` followed by such a path; `${stage:N}` inside any item; and SATURATE_STAGED_<N> in
// its environment. A source left in place (never, or auto judged no) gives its own path to the same names.
//
// Threads: the copy runs on a thread of its own; every method is called from the controller's loop.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "datastore/cold_read.h"
#include "datastore/storage_wait.h"
#include "datastore/store.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

// What the first run showed of its loader over its training so far (sweep/meter.h TrainingSoFar).
struct FetchSignals {
  double wait_share = 0;          // of the loop time, waiting for the loader (the helper's data wait)
  std::optional<double> cpu_pct;  // the run's tree, 100 = one core
  unsigned cores = 1;             // of the machine
  // The run's processes in state 'D' (waiting on a read), on average; nullopt where not read.
  std::optional<double> blocked;
  double workers = 0;             // DataLoader workers, on average
  double samples_per_s = 0;       // the run's throughput; 0 unknown
};

// The storage rule's evidence from the first run: its loading processes are its workers (or the trainer itself,
// without workers, loading within its data wait), on `mount`, with `cold` reads of a sample of the source's files.
datastore::StorageEvidence EvidenceOf(const FetchSignals& s, datastore::MountKind mount,
                                  const std::optional<datastore::ColdReadComparison>& cold);
// The judgement in a sentence: "the first run waited for data 97% of its loop time; its loading: fetch 96% (cold
// reads of its files: 44.9 ms a sample), prep 3% (its CPU), other 1%: its loader waits on storage, and a local copy
// reads 225x faster".
std::string JudgementText(const FetchSignals& s, const datastore::StorageWait& w);

// When auto judges the first run: after this much of its training (from its first step), this many tree readings in
// it and a rate (two reports of steps), or once it is measured, or at its end, whichever comes first.
inline constexpr double kJudgeAfterS = 0.5;
inline constexpr int kJudgeReadings = 2;

// auto on a network or FUSE mount: the first run waits this long at most for the cold reads (they decide whether the
// copy is made before it).
inline constexpr double kColdReadHoldS = 3;

// A run on the source when the copy is made: restart it on the copy, or let it finish?
struct RunProgress {
  double samples = 0;                   // trained so far, all processes
  double samples_per_s = 0;             // on the source
  std::optional<double> epoch_samples;  // one epoch, all processes; nullopt: not said
  double startup_s = 0;                 // from its start to its first training step
};
struct RestartChoice {
  bool restart = false;
  double finish_s = 0;   // what is left of it on the source, at least
  double restart_s = 0;  // a new attempt on the copy: its start-up and every sample again
  std::string why;       // "~12 s left on the source at 22.0 samples/s against ~3 s on the copy (...)"
};
// Restart where a new attempt on the copy (start-up, then all of the run's samples at `copy_samples_per_s`) takes
// at most kRestartShare of what is left on the source. What is left: the rest of the current epoch where the
// loaders said its length (a lower bound: later epochs only add to a restart's lead), else as much again as it has
// trained (a run is as likely past its middle as before it). Never without a faster copy rate.
inline constexpr double kRestartShare = 0.8;
RestartChoice ChooseRestart(const RunProgress& p, double copy_samples_per_s);

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

// A run that was on the source when the copy was made (ChooseRestart's verdict on it).
struct RunOnSource {
  int64_t index = 0;
  std::string key;
  bool restarted = false;
  std::string why;
};

struct StagingReport {
  StagePolicy policy = StagePolicy::kAuto;
  std::string decision;  // "undecided", "copying", "staged", "source", "failed"
  std::string reason;    // why, in a sentence
  std::string store;
  datastore::Progress progress;  // of the copy under way, or the last one
  std::vector<StagedSource> sources;
  // Mean samples/s of the runs measured on the source and on the copy (auto shows both); nullopt when none.
  std::optional<double> source_rate, copy_rate;
  double copy_wall_s = 0;  // the sweep's time spent staging (waiting included)
  // With both rates: the makespan the copy saved, net of copy_wall_s, had the time since the copy gone at the
  // source's pace (copy_rate / source_rate slower) with the same packing. An estimate; nullopt without both rates.
  std::optional<double> saved_s;
  std::vector<RunOnSource> on_source;  // runs going on the source when the copy was made
};
nlohmann::json StagingJson(const StagingReport& r);
std::optional<StagingReport> StagingFromJson(const nlohmann::json& j);
// One line for people: "staged /nfs/ds (300 files, 1.2 MiB) in 3.4 s to /store/...; runs on the copy trained at
// 410 samples/s against 52 on the source (7.9x); run 0 restarted on the copy (...)"; while copying: bytes, rate, ETA.
std::string StagingText(const StagingReport& r);

// Points a run's argv and environment at `sources` (see above): each source's copy when `on_copy`, else its own
// path (for ${stage:N} and SATURATE_STAGED_<N>). Returns `on_copy`.
bool PointAtSources(const std::vector<StagedSource>& sources, bool on_copy, std::vector<std::string>* argv,
                    std::map<std::string, std::string>* env);

// A Slurm job's staging, on its node, before its run starts: the same store and lock as a local sweep (one copy per
// node, shared by the sweep's jobs there; default folder on the node's scratch). `never` copies nothing; `always`
// copies; `auto` copies a source on a network or FUSE filesystem (statfs), since no first run on this node has been
// measured. `leases` keeps the copies from eviction while the run reads them. Returns the sources (with their copy
// when staged) and whether the run reads copies; errors as datastore::Acquire's.
struct NodeStaging {
  std::vector<StagedSource> sources;
  bool on_copy = false;
  std::string note;  // for the run's outcome: what was staged, or why not
};
Result<NodeStaging> StageOnNode(const StagingOptions& options, std::vector<datastore::Lease>* leases);

// StagingOptions in a Slurm job file.
nlohmann::json StagingOptionsJson(const StagingOptions& o);
StagingOptions StagingOptionsFromJson(const nlohmann::json& j);

// What a test may change of how auto looks at the source: the machine's answers, where a test folder has one
// filesystem for everything.
struct StagerSeams {
  std::optional<datastore::MountKind> mount;  // instead of statfs of the first source
  bool same_filesystem_ok = false;        // judge a source on the store's filesystem or in memory, not leave it
  // The cold reads of the sample (called on the cold-reading thread); null: none are made.
  std::function<Result<datastore::ColdReadComparison>(const std::vector<std::string>& files,
                                                  const datastore::ColdReadOptions& options)>
      cold_reads = datastore::CompareColdReads;
};

class Stager {
 public:
  // Lists every source (bad paths: usage error, exit 2, naming them) and resolves the store folder; starts the
  // copy for `always`; for `auto`, takes the store's copy when it holds every source already, leaves a source on the
  // store's own filesystem, else starts the cold reads of a sample of the first source's files.
  static Result<std::unique_ptr<Stager>> Start(const StagingOptions& options, const StagerSeams& seams = {});
  ~Stager();  // stops a copy under way (it is resumed next time) and waits for the cold reads

  // Whether a run may start now, with `live` runs going and `started` attempts begun by this sweep. auto on a network
  // or FUSE mount holds the first run for the cold reads (at most kColdReadHoldS) and, when they begin a copy
  // expected to take at most StagingOptions::copy_first_s, until it is made: the runs then start on the copy, and the
  // decision is the copy's ("made before the first run").
  bool MayStart(size_t live, int started) const;
  // auto: the first run's signals; decides (the storage rule) and starts the copy when a copy helps. Returns false,
  // deciding nothing, while the cold reads are still being made, unless `final` (the run ended: it judges with what
  // there is).
  bool Judge(const FetchSignals& signals, bool final);
  // auto: the first run has not been judged yet (a copy begun at once may be under way).
  bool Undecided() const;
  // True once, when the copy is made and judged worth it: the controller then decides for each run on the source
  // whether it is restarted on the copy (OnSource).
  bool RestartDue();
  // A finished copy (or its failure) becomes the decision; returns a note for the live view when it did. auto, before
  // the judgement: begins the copy at once when the cold reads are in and show the source on a network or FUSE mount
  // reading at most kCopyFasterRatio as fast as the store's drive (the judgement confirms it, or stops it).
  // Error: the copy failed under `always` (the sweep cannot read its data as asked).
  Result<std::optional<std::string>> Poll();
  // Whether Poll has something to act on now: cold reads it has not looked at, or a copy that ended.
  bool HasNews() const;
  // Points a run's argv and environment at the copy (or the source); returns whether the run reads the copy.
  bool Rewrite(std::vector<std::string>* argv, std::map<std::string, std::string>* env) const;
  // Once staged: whether run `index` (`key`), going on the source with `progress`, is restarted on the copy
  // (ChooseRestart at the rate on the copy the judged evidence gives for the run's rate now:
  // datastore::TrainingOnCopyEstimate; no restart without it). Recorded for the summary.
  RestartChoice OnSource(int64_t index, const std::string& key, const RunProgress& progress);
  // A run's steady samples/s, for the summary's comparison.
  void AddRate(bool on_copy, double samples_per_s);
  StagingReport Report() const;

 private:
  Stager() = default;
  void BeginCopy(const std::string& why);
  void CopyAll();  // the copying thread's work
  // auto: the first source's files read cold from there and from the store's folder, on cold_thread_.
  void BeginColdReads();
  // auto, before the judgement: the copy begun at once where the cold reads say (see Poll).
  bool MaybeCopyAtOnce();  // true when it began it
  bool SlowMount() const;  // the first source is on a network or FUSE mount
  // The first run has waited kColdReadHoldS for the cold reads since Start.
  bool ColdHoldOver() const;

  StagingOptions options_;
  StagerSeams seams_;
  std::string root_;
  std::vector<StagedSource> sources_;
  std::vector<std::string> sample_files_;  // of the first source, for the cold reads
  datastore::MountKind mount_ = datastore::MountKind::kUnknown;  // the first source's
  std::string decision_ = "undecided", reason_;
  bool judged_ = false;           // the decision no longer waits on the first run
  bool restart_checked_ = false;  // RestartDue said so once
  double start_t_ = 0;            // when Start listed the sources (monotonic s)
  bool copy_first_ = false;       // the copy begun at once is short: the first run waits for it
  bool cold_seen_ = false;        // MaybeCopyAtOnce has looked at the cold reads' result
  std::vector<datastore::Lease> leases_;  // held for the sweep's life: nobody evicts the copies it reads
  double copy_t0_ = 0, copy_wall_s_ = 0, staged_at_ = 0;
  double source_sum_ = 0, copy_sum_ = 0;
  int source_n_ = 0, copy_n_ = 0;
  // The judgement: the evidence and the rule's finding on it, for the restart's copy rate.
  std::optional<datastore::StorageEvidence> evidence_;
  std::optional<datastore::StorageWait> wait_;
  std::vector<RunOnSource> on_source_;

  // Shared with the copying and cold-reading threads.
  mutable std::mutex mu_;
  datastore::Progress progress_;
  std::optional<Result<std::vector<datastore::Lease>>> copied_;
  std::optional<Result<datastore::ColdReadComparison>> cold_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> abandon_{false};  // the copy begun at once is not needed after all
  std::thread thread_, cold_thread_;
};

}  // namespace sat::sweep
