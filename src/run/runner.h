// The process runner: starts a training command, captures its output, stops it, and says how it ended.
// probe, tune, sweep and `monitor -- CMD` all start their commands through Run::Start.
//
// Process model
//   - The command runs in its own process group (so the terminal's Ctrl-C reaches saturate, not the run, and
//     saturate decides how to stop it), with stdin from /dev/null and stdout/stderr through pipes.
//   - No orphans: the first Start makes saturate a child subreaper (PR_SET_CHILD_SUBREAPER, process-wide), so
//     descendants that double-fork or setsid are reparented to saturate instead of init. Stopping signals the
//     whole run tree (process group, descendants by parent links, and reparented escapees recognised by the
//     SATURATE_RUN_TREE marker variable; see process_tree.h), plus, where saturate can make one, every process
//     in the run's own cgroup v2 (cgroup.h), which nothing escapes; the run is not over until every member is
//     gone and reaped. When the command exits on its own and leaves processes behind, they get SIGTERM and,
//     after term_grace_s, SIGKILL.
//   - If saturate itself is killed with SIGKILL, the direct child dies too (PR_SET_PDEATHSIG). Its descendants
//     in other groups then rely on their own parent-death handling (PyTorch's DataLoader workers watch their
//     parent and exit); nothing else can run after a SIGKILL.
//
// Stopping ladder: SIGINT to the tree (Python raises KeyboardInterrupt, the helper sends its last report),
// SIGTERM after stop_grace_s, SIGKILL after another term_grace_s. RequestStop, the time limit, and an interrupt
// of saturate (with stop_on_interrupt) all start it; a second interrupt of saturate jumps to SIGKILL.
//
// Temporary files: each run gets a private folder, saturate-run-XXXXXX under the run's TMPDIR (RunSpec::env,
// else saturate's, else /tmp), as its TMPDIR. A process killed before it cleans up leaves its temporary files
// there: PyTorch's DataLoader workers leave the pymp-* folders of Python's multiprocessing after SIGTERM or
// SIGKILL, and a DataLoader whose worker died may leave empty tmpXXXXXXXX files (its descriptor-limit check).
// Once the whole tree is gone, those pymp-* folders and empty Python-named temporary files are removed, and the
// private folder too when nothing else is left in it (what the command itself wrote there is kept). TORCHINDUCTOR_CACHE_DIR, unless
// set, keeps pointing at torch.compile's usual cache (<TMPDIR>/torchinductor_<user>), so compiled kernels are
// still reused across runs, when that folder already is this user's and no one else may write it; else at
// ~/.cache/saturate/torchinductor (util/cache_home.h, made 0700); else it is left to the run's private folder. If the private
// folder cannot be created the run keeps the caller's TMPDIR.
//
// Threads: each Run owns one supervisor thread that forks the child, reads its pipes, writes the logs, calls
// on_line, enforces the time limit and the ladder, and reaps. Run's methods may be called from any thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run/exit_class.h"
#include "util/result.h"

namespace sat::run {

enum class Stream { kStdout, kStderr };

// The environment variable the runner sets in every run ("<saturate pid>.<run number>") to recognise its
// escaped descendants. Scripts should leave it alone.
inline constexpr std::string_view kRunTreeVar = "SATURATE_RUN_TREE";

struct RunSpec {
  // The command. Without `shell`, argv[0] is looked up on PATH (from the run's environment) and every
  // element arrives verbatim: no word splitting, globbing or $VAR expansion. With `shell`, the elements are
  // joined with single spaces, unquoted, and run as `/bin/sh -c "<joined>"`: pass one string holding shell
  // syntax ({"python3 train.py > out.txt"}), quoting is the caller's job.
  std::vector<std::string> argv;
  bool shell = false;

  std::map<std::string, std::string> env;       // added to, or replacing, saturate's environment
  std::vector<std::string> pythonpath_prepend;  // directories put in front of PYTHONPATH, in this order
  std::string cwd;                              // empty: saturate's working directory

  // Where stdout.log and stderr.log go (raw bytes, created or truncated); the folder is created.
  // Empty: no log files.
  std::string log_dir;
  bool echo = false;  // also copy the raw output to saturate's own stdout / stderr

  // Called on the supervisor thread for every non-empty line of either stream (lines end at '\n' or '\r').
  // The view lives only during the call. Must not throw, block for long, or call Wait on this run;
  // RequestStop is fine.
  std::function<void(Stream, std::string_view line)> on_line;

  double time_limit_s = 0;  // from the start of the command; 0: none
  double stop_grace_s = 5;  // SIGINT -> SIGTERM
  double term_grace_s = 5;  // SIGTERM -> SIGKILL
  size_t tail_lines = 50;   // how many recent lines of each stream the outcome keeps
  // Stop when saturate is interrupted (see interrupt.h), including a run started after the interrupt.
  bool stop_on_interrupt = true;
};

struct RunOutcome {
  ExitClass exit_class = ExitClass::kFailed;
  std::string detail;     // one human line: "GPU out of memory: torch.cuda.OutOfMemoryError: ..."
  int exit_code = -1;     // the exit status when it exited; -1 when killed by a signal or never started
  // start_failed for want of a resource (fork: EAGAIN, pipe: EMFILE, ENOMEM): the same command may start later.
  bool start_transient = false;
  int term_signal = 0;    // the signal that killed it; 0 when it exited
  double duration_s = 0;  // from start to the command's own end (not counting the cleanup of leftovers)
  std::vector<std::string> stdout_tail, stderr_tail;  // the last RunSpec::tail_lines lines, oldest first
  OutputEvidence evidence;  // OOM and worker-death lines seen anywhere in the output
  int leftover_processes = 0;  // tree members still alive when the command itself ended (then killed)
  std::string log_error;       // first failure writing a log file; empty when the logs are complete
};

class Run {
 public:
  // Starts the command and returns once it has been exec'd, or has failed to start: then the run is already
  // over with exit_class start_failed and a detail naming the program and the reason. Error only for
  // problems of saturate's own making: an empty argv, a log folder or file that cannot be created.
  static Result<std::unique_ptr<Run>> Start(RunSpec spec);

  // Stops the run if it is still going (the whole ladder) and waits for it: a Run never outlives its tree.
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // The direct child and its process group (equal at start), for samplers; 0 when it never started.
  pid_t pid() const;
  pid_t pgid() const;

  // Starts the stopping ladder; returns at once. No effect once the command has ended.
  void RequestStop();

  // The outcome once the run is over (command ended, leftovers gone, output drained), else nullopt.
  std::optional<RunOutcome> Poll() const;
  RunOutcome Wait() const;
  // Wait for at most `seconds`: nullopt when the run is not over by then. saturate's own loops poll (Poll) between
  // their other duties; this is the tests' seam, which checks that a run is still going, or ended, by a deadline
  // without hanging the suite when a rule breaks.
  std::optional<RunOutcome> WaitFor(double seconds) const;

  class Supervisor;  // the per-run state and thread, private to runner.cc

 private:
  explicit Run(std::unique_ptr<Supervisor> supervisor);
  std::unique_ptr<Supervisor> supervisor_;
};

// Requests a stop of every live Run in the process and waits until all are over. For the top level before it
// exits on an interrupt; Start also registers it with atexit, so runs cannot outlive a normal exit.
void StopAllRuns();

}  // namespace sat::run
