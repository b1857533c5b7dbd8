#include "run/exit_class.h"

#include <fmt/core.h>

#include <array>
#include <csignal>
#include <cstring>

#include "util/strings.h"
#include "util/utf8.h"

namespace sat::run {
namespace {

// Evidence lines are kept for messages; a megabyte-long line must not end up in a one-line detail.
constexpr size_t kMaxEvidenceChars = 300;  // bytes, cut on a character boundary

constexpr std::array<std::string_view, 7> kGpuOomTexts = {
    "CUDA out of memory",       // torch.cuda.OutOfMemoryError's message
    "OutOfMemoryError",         // torch.cuda.OutOfMemoryError / torch.OutOfMemoryError type name
    "CUDA error: out of memory",
    "out of memory.",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_ALLOC_FAILED",
    "HIP out of memory",
};
constexpr std::string_view kCudnnNotSupported = "CUDNN_STATUS_NOT_SUPPORTED";

constexpr std::array<std::string_view, 2> kHostOomTexts = {
    "DefaultCPUAllocator: can't allocate memory",
    "_ArrayMemoryError",  // numpy's "Unable to allocate N GiB for an array"
};

bool Contains(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Python's MemoryError as a whole word: "OutOfMemoryError" (a GPU error) must not count.
bool ContainsPythonMemoryError(std::string_view line) {
  constexpr std::string_view kWord = "MemoryError";
  for (size_t at = line.find(kWord); at != std::string_view::npos; at = line.find(kWord, at + 1)) {
    if (at == 0 || !IsIdentifierChar(line[at - 1])) return true;
  }
  return false;
}

bool IsWorkerDeath(std::string_view line) {
  return Contains(line, "DataLoader worker (pid") &&
         (Contains(line, "is killed by signal") || Contains(line, "exited unexpectedly"));
}

std::string Clip(std::string_view line) { return ClipText(Trim(line), kMaxEvidenceChars); }

std::string StopDetail(const ExitFacts& f) {
  std::string how;
  if (f.last_signal_sent == SIGINT) {
    how = "after SIGINT";
  } else if (f.last_signal_sent == SIGTERM) {
    how = "with SIGTERM after it ignored SIGINT";
  } else if (f.last_signal_sent == SIGKILL) {
    how = "with SIGKILL after it ignored SIGINT and SIGTERM";
  }
  std::string why;
  switch (f.stop_cause) {
    case StopCause::kTimeLimit: why = fmt::format("timed out after its {:g} s time limit", f.time_limit_s); break;
    case StopCause::kInterrupted: why = "stopped because saturate was interrupted"; break;
    default: why = "stopped on request"; break;
  }
  std::string detail = how.empty() ? why : fmt::format("{}, ended {}", why, how);
  detail += f.exited ? fmt::format(" (exit code {})", f.exit_code)
                     : fmt::format(" (killed by {})", SignalName(f.term_signal));
  if (!f.evidence.gpu_oom_line.empty()) {
    detail += fmt::format("; it had reported a GPU out-of-memory before: {}", f.evidence.gpu_oom_line);
  } else if (!f.evidence.host_oom_line.empty()) {
    detail += fmt::format("; it had reported a host out-of-memory before: {}", f.evidence.host_oom_line);
  }
  return detail;
}

std::string WorkerHint(std::string_view line) {
  if (Contains(line, "Bus error")) return " (a Bus error in a worker usually means /dev/shm is too small)";
  if (Contains(line, "Killed")) return " (a worker SIGKILLed is usually the kernel OOM killer: fewer workers?)";
  return "";
}

// "exit code 1" or "killed by SIGSEGV", then the last stderr line when there is one.
std::string FailureDetail(const ExitFacts& f) {
  std::string detail = f.exited ? fmt::format("exited with code {}", f.exit_code)
                                : fmt::format("killed by {}", SignalName(f.term_signal));
  if (!f.last_stderr_line.empty()) detail += ": " + Clip(f.last_stderr_line);
  return detail;
}

}  // namespace

std::string_view ExitClassName(ExitClass c) {
  switch (c) {
    case ExitClass::kFinished: return "finished";
    case ExitClass::kFailed: return "failed";
    case ExitClass::kStopped: return "stopped";
    case ExitClass::kTimedOut: return "timed_out";
    case ExitClass::kGpuOom: return "gpu_oom";
    case ExitClass::kHostOom: return "host_oom";
    case ExitClass::kWorkerKilled: return "worker_killed";
    case ExitClass::kStartFailed: return "start_failed";
  }
  return "unknown";
}

void OutputEvidence::Scan(std::string_view line) {
  // A definite OOM text replaces an earlier cuDNN NOT_SUPPORTED, which only suggests one.
  if (gpu_oom_line.empty() || gpu_oom_is_cudnn) {
    for (std::string_view text : kGpuOomTexts) {
      if (Contains(line, text)) {
        gpu_oom_line = Clip(line);
        gpu_oom_is_cudnn = false;
        break;
      }
    }
    if (gpu_oom_line.empty() && Contains(line, kCudnnNotSupported)) {
      gpu_oom_line = Clip(line);
      gpu_oom_is_cudnn = true;
    }
  }
  if (host_oom_line.empty()) {
    bool host = ContainsPythonMemoryError(line);
    for (std::string_view text : kHostOomTexts) host = host || Contains(line, text);
    if (host) host_oom_line = Clip(line);
  }
  if (worker_killed_line.empty() && IsWorkerDeath(line)) worker_killed_line = Clip(line);
}

Classification Classify(const ExitFacts& f) {
  const OutputEvidence& e = f.evidence;
  if (!f.started) return {ExitClass::kStartFailed, f.start_error};
  if (f.stop_cause != StopCause::kNone) {
    ExitClass c = f.stop_cause == StopCause::kTimeLimit ? ExitClass::kTimedOut : ExitClass::kStopped;
    return {c, StopDetail(f)};
  }
  if (f.exited && f.exit_code == 0) return {ExitClass::kFinished, "exited with code 0"};
  if (!e.gpu_oom_line.empty()) {
    if (e.gpu_oom_is_cudnn) {
      return {ExitClass::kGpuOom,
              "GPU probably out of memory: cuDNN reported CUDNN_STATUS_NOT_SUPPORTED, which is usually an "
              "allocation failure in disguise: " + e.gpu_oom_line};
    }
    return {ExitClass::kGpuOom, "GPU out of memory: " + e.gpu_oom_line};
  }
  if (!e.host_oom_line.empty()) return {ExitClass::kHostOom, "host out of memory: " + e.host_oom_line};
  if (!e.worker_killed_line.empty()) {
    return {ExitClass::kWorkerKilled,
            "a DataLoader worker died: " + e.worker_killed_line + WorkerHint(e.worker_killed_line)};
  }
  if (!f.exited && f.term_signal == SIGKILL) {
    return {ExitClass::kHostOom,
            "killed by SIGKILL that saturate did not send: probably the kernel OOM killer (see dmesg)"};
  }
  if (f.exited && f.exit_code == 128 + SIGKILL) {
    return {ExitClass::kHostOom,
            "exited with code 137 (a wrapper reporting SIGKILL): probably the kernel OOM killer (see dmesg)"};
  }
  return {ExitClass::kFailed, FailureDetail(f)};
}

std::string SignalName(int sig) {
  if (const char* abbrev = sigabbrev_np(sig)) return fmt::format("SIG{}", abbrev);
  return fmt::format("signal {}", sig);
}

}  // namespace sat::run
