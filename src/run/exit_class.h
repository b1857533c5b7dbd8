// How a run ended, decided from its exit status, what saturate did to it, and the lines it printed.
//
// Pure functions and plain data: no processes, no I/O. The runner feeds every output line to
// OutputEvidence::Scan as it arrives (not just the tail, since a CUDA OOM is often followed by pages of
// traceback and shutdown noise) and calls Classify once the process is reaped.
//
// Ranking, first match wins:
//   1. start_failed: exec (or chdir) never happened.
//   2. timed_out / stopped: saturate began stopping the process before it ended on its own. This outranks
//      anything the output said, because (a) a process torn down by SIGINT/SIGTERM prints unreliable errors
//      (a KeyboardInterrupt in the middle of an allocation, a worker dying under a signal), and (b) training
//      code that catches an OOM and retries smaller batches is common, so an OOM line alone does not mean the
//      run died of it. The evidence stays in Outcome::evidence and the detail mentions it, so a caller that
//      knows better (probe searching the largest batch) can still act on it.
//   3. finished: exit code 0, whatever was printed (a recovered OOM is not a failure).
//   4. gpu_oom: a GPU out-of-memory line; it outranks a plain crash because the crash is its consequence.
//   5. host_oom: a host allocation failure line (DefaultCPUAllocator, MemoryError).
//   6. worker_killed: a DataLoader worker died ("is killed by signal", "exited unexpectedly").
//   7. host_oom (probably): SIGKILL that saturate did not send, or exit code 137 (a wrapper such as a shell
//      reporting its child's SIGKILL): on Linux that is almost always the kernel OOM killer.
//   8. failed: any other non-zero exit or fatal signal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sat::run {

enum class ExitClass {
  kFinished,      // exited with code 0 on its own
  kFailed,        // non-zero exit or a fatal signal, no better explanation
  kStopped,       // saturate stopped it (RequestStop, or saturate itself was interrupted)
  kTimedOut,      // saturate stopped it because its time limit passed
  kGpuOom,        // the GPU ran out of memory
  kHostOom,       // the host ran out of memory (allocation failure, or probably the kernel OOM killer)
  kWorkerKilled,  // a DataLoader worker process died
  kStartFailed,   // the program could not be started (not found, not executable, bad directory)
};

// "finished", "failed", "stopped", "timed_out", "gpu_oom", "host_oom", "worker_killed", "start_failed".
std::string_view ExitClassName(ExitClass c);

// The first output line of each kind that explains a failure; empty when none was seen.
struct OutputEvidence {
  std::string gpu_oom_line;
  bool gpu_oom_is_cudnn = false;  // gpu_oom_line is cuDNN's NOT_SUPPORTED, which is usually an OOM in disguise
  std::string host_oom_line;
  std::string worker_killed_line;

  // Looks at one line of stdout or stderr (without its line break). Keeps only the first match per kind.
  void Scan(std::string_view line);
};

// Why saturate signalled the process, if it did so before the process ended.
enum class StopCause { kNone, kRequested, kInterrupted, kTimeLimit };

// Everything known about a run once it is over.
struct ExitFacts {
  bool started = true;       // false: exec or chdir failed in the child
  std::string start_error;   // when !started, e.g. "cannot run 'pyhton': No such file or directory"
  bool start_transient = false;  // when !started: for want of a resource (run/spawn.h IsTransientStartError)
  bool exited = false;       // true: exited with exit_code; false: killed by term_signal
  int exit_code = 0;
  int term_signal = 0;
  StopCause stop_cause = StopCause::kNone;
  int last_signal_sent = 0;  // the strongest signal saturate sent (SIGINT, SIGTERM, SIGKILL), 0 if none
  double time_limit_s = 0;
  OutputEvidence evidence;
  std::string last_stderr_line;  // usually the exception line of a Python traceback; may be empty
};

struct Classification {
  ExitClass exit_class = ExitClass::kFailed;
  std::string detail;  // one human line, no trailing newline
};

Classification Classify(const ExitFacts& facts);

// "SIGKILL", "SIGSEGV", or "signal 42" for numbers without a name.
std::string SignalName(int sig);

}  // namespace sat::run
