// An instrumented run: a training command started with saturate's Python side on its PYTHONPATH and a helper
// channel to report on, and what every watcher of it reads while it runs. Probe's stages, sweep's attempts (here
// and on a Slurm node) and `monitor -- CMD` all start their command here and take its messages from here; what
// each does with them (the estimator, the packing meter, the per-interval rates) stays with the caller.
//
// What is read the same for everyone (RunSigns): whether the helper spoke (a hello, or any progress), whether the
// automatic instrumentation is on (a hello with "auto": true), whether the tree loaded torch (a hello naming a
// torch version, or torch's libraries in a process's memory map), and the helper's one-line stderr notice when
// the automatic instrumentation failed to start.
//
// Threads: the watching loop owns the InstrumentedRun (Drain, Accept, LookForTorch, signs); the run's supervisor
// thread calls the output-line hook, whose state is locked. process() is run::Run, callable from any thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/channel.h"
#include "measure/helper_env.h"
#include "measure/helper_message.h"
#include "run/runner.h"
#include "util/result.h"

namespace sat::measure {

// How an instrumented command starts: the command itself, and what the helper is told. The channel and the run
// id are the InstrumentedRun's own and need not be set in `helper`.
struct InstrumentedLaunch {
  run::RunSpec spec;  // argv, environment, logs, limits; spec.on_line (optional) still gets every line
  HelperEnv helper;
};

// What saturate has learned of a run from its messages and its processes, whoever watches it.
struct RunSigns {
  bool helper_seen = false;  // a hello or a progress report arrived
  bool auto_seen = false;    // a hello from the automatic instrumentation ("auto": true)
  // Whether the tree loaded torch: a hello naming a torch version, or torch in a process's memory map; nullopt
  // while nothing could be read (the command ended first).
  std::optional<bool> torch_loaded;
};

// The first stderr line of the helper's "automatic instrumentation is off" notice (python/sitecustomize.py), cut
// to 400 bytes between characters. Thread-safe: the supervisor thread offers lines, the loop reads.
class AutoFailureLine {
 public:
  static constexpr std::string_view kPrefix = "saturate: automatic instrumentation is off";
  void Offer(std::string_view line);
  std::string Get() const;

 private:
  mutable std::mutex mu_;
  std::string line_;
};

// Values made from a run's output lines (matched patterns, parsed throughput), handed from the supervisor thread
// that reads the lines (RunSpec::on_line) to the loop that watches the run. Thread-safe.
template <class T>
class LineHandoff {
 public:
  void Push(T value) {
    std::lock_guard lock(mu_);
    values_.push_back(std::move(value));
  }
  // Everything pushed since the last call, oldest first.
  std::vector<T> Take() {
    std::lock_guard lock(mu_);
    return std::exchange(values_, {});
  }

 private:
  std::mutex mu_;
  std::vector<T> values_;
};

class InstrumentedRun {
 public:
  // Starts `launch` as run `run_id` (SATURATE_RUN_ID). With `shared` null the run opens a channel of its own, read
  // by Drain; otherwise it reports on `shared` (not owned, must outlive the run), which the caller polls for
  // every run on it and hands each message to the runs' Accept. Errors: saturate's Python side is missing
  // (run::CheckHelperPythonDir), the channel cannot open, or saturate cannot start the command (run::Run::Start);
  // a command that fails to exec is a started run that has ended.
  static Result<std::unique_ptr<InstrumentedRun>> Start(InstrumentedLaunch launch, std::string run_id,
                                                       HelperChannel* shared = nullptr);

  const std::string& run_id() const { return run_id_; }
  run::Run& process() { return *run_; }
  pid_t pid() const { return run_->pid(); }
  const std::string& channel_path() const { return channel_path_; }

  // Own channel: waits up to `timeout_ms` for a datagram, then hands each message of this run that arrived to
  // `on_message` (after Accept), in arrival order. An error for a failing socket, and for a run on a shared
  // channel, which only its owner polls.
  Status Drain(int timeout_ms, const std::function<void(const HelperMessage&)>& on_message);

  // A message from the channel: false when it is another run's; otherwise it counts in signs().
  bool Accept(const HelperMessage& m);

  // Reads the memory maps of `pids` (the run's tree) for torch while torch_loaded is not known to be true.
  void LookForTorch(const std::vector<pid_t>& pids, const std::string& proc_root = "/proc");

  const RunSigns& signs() const { return signs_; }
  std::string auto_failure() const { return auto_failure_->Get(); }

 private:
  InstrumentedRun() = default;

  std::string run_id_;
  std::unique_ptr<HelperChannel> own_channel_;
  std::string channel_path_;
  std::shared_ptr<AutoFailureLine> auto_failure_ = std::make_shared<AutoFailureLine>();
  std::unique_ptr<run::Run> run_;
  RunSigns signs_;
};

}  // namespace sat::measure
