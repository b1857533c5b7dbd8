#include "run/exit_class.h"

#include <gtest/gtest.h>

#include <csignal>
#include <initializer_list>

namespace sat::run {
namespace {

// Facts for a process that exited with `code` after printing `lines`.
ExitFacts Exited(int code, std::initializer_list<std::string_view> lines) {
  ExitFacts f;
  f.exited = true;
  f.exit_code = code;
  for (std::string_view l : lines) f.evidence.Scan(l);
  if (lines.size() > 0) f.last_stderr_line = std::string(*(lines.end() - 1));
  return f;
}

ExitFacts Signaled(int sig) {
  ExitFacts f;
  f.exited = false;
  f.term_signal = sig;
  return f;
}

TEST(ExitClass, Names) {
  EXPECT_EQ(ExitClassName(ExitClass::kGpuOom), "gpu_oom");
  EXPECT_EQ(ExitClassName(ExitClass::kStartFailed), "start_failed");
  EXPECT_EQ(ExitClassName(ExitClass::kTimedOut), "timed_out");
}

TEST(ExitClass, ZeroExitIsFinishedEvenAfterARecoveredOom) {
  auto c = Classify(Exited(0, {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                               "retrying with batch size 32"}));
  EXPECT_EQ(c.exit_class, ExitClass::kFinished);
}

TEST(ExitClass, NonZeroExitWithoutEvidenceIsFailedWithLastStderrLine) {
  auto c = Classify(Exited(1, {"Traceback (most recent call last):", "ValueError: bad shape"}));
  EXPECT_EQ(c.exit_class, ExitClass::kFailed);
  EXPECT_EQ(c.detail, "exited with code 1: ValueError: bad shape");
}

TEST(ExitClass, CrashSignalIsFailed) {
  auto c = Classify(Signaled(SIGSEGV));
  EXPECT_EQ(c.exit_class, ExitClass::kFailed);
  EXPECT_EQ(c.detail, "killed by SIGSEGV");
}

// Each line, printed by a process that then exited with code 1, is classified as `expected`, and the line is
// quoted in the detail.
void ExpectEachClassifiedAs(ExitClass expected, std::initializer_list<std::string_view> lines) {
  for (std::string_view line : lines) {
    auto c = Classify(Exited(1, {line}));
    EXPECT_EQ(c.exit_class, expected) << line;
    EXPECT_NE(c.detail.find(line), std::string::npos) << c.detail;
  }
}

TEST(ExitClass, GpuOomTexts) {
  ExpectEachClassifiedAs(ExitClass::kGpuOom, {
           "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.15 GiB total)",
           "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
           "torch.OutOfMemoryError: something",
           "RuntimeError: CUDA error: out of memory",
           "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
           "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.00 GiB",
           "RuntimeError: [enforce fail at alloc_cuda.cpp:12] out of memory.",
       });
}

TEST(ExitClass, CudnnNotSupportedIsGpuOomWithANote) {
  auto f = Exited(1, {"RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you "
                      "passed in a non-contiguous input."});
  auto c = Classify(f);
  EXPECT_EQ(c.exit_class, ExitClass::kGpuOom);
  EXPECT_TRUE(f.evidence.gpu_oom_is_cudnn);
  EXPECT_NE(c.detail.find("in disguise"), std::string::npos);
}

TEST(ExitClass, DefiniteOomReplacesCudnnHint) {
  OutputEvidence e;
  e.Scan("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED");
  e.Scan("torch.cuda.OutOfMemoryError: CUDA out of memory.");
  EXPECT_FALSE(e.gpu_oom_is_cudnn);
  EXPECT_EQ(e.gpu_oom_line, "torch.cuda.OutOfMemoryError: CUDA out of memory.");
}

TEST(ExitClass, GpuOomOutranksWorkerDeathAndCrash) {
  auto c = Classify(Exited(1, {"RuntimeError: CUDA out of memory. Tried to allocate 1 GiB",
                               "RuntimeError: DataLoader worker (pid 77) exited unexpectedly"}));
  EXPECT_EQ(c.exit_class, ExitClass::kGpuOom);
  ExitFacts f = Signaled(SIGABRT);
  f.evidence.Scan("CUBLAS_STATUS_ALLOC_FAILED");
  EXPECT_EQ(Classify(f).exit_class, ExitClass::kGpuOom);
}

TEST(ExitClass, HostOomTexts) {
  ExpectEachClassifiedAs(ExitClass::kHostOom, {
           "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: "
           "you tried to allocate 1099511627776 bytes. Error code 12 (Cannot allocate memory)",
           "MemoryError",
           "MemoryError: cannot allocate array",
           "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array",
       });
}

TEST(ExitClass, OutOfMemoryErrorIsNotAHostMemoryError) {
  OutputEvidence e;
  e.Scan("torch.cuda.OutOfMemoryError: CUDA out of memory.");
  EXPECT_TRUE(e.host_oom_line.empty());
  EXPECT_FALSE(e.gpu_oom_line.empty());
}

TEST(ExitClass, WorkerDeaths) {
  auto killed = Classify(Exited(1, {"RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed."}));
  EXPECT_EQ(killed.exit_class, ExitClass::kWorkerKilled);
  EXPECT_NE(killed.detail.find("OOM killer"), std::string::npos);
  auto bus = Classify(Exited(1, {"RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error."}));
  EXPECT_EQ(bus.exit_class, ExitClass::kWorkerKilled);
  EXPECT_NE(bus.detail.find("/dev/shm"), std::string::npos);
  auto exited = Classify(Exited(1, {"RuntimeError: DataLoader worker (pid(s) 11, 12) exited unexpectedly"}));
  EXPECT_EQ(exited.exit_class, ExitClass::kWorkerKilled);
  EXPECT_EQ(Classify(Exited(1, {"DataLoader worker (pid 3) started"})).exit_class, ExitClass::kFailed);
}

TEST(ExitClass, UnsentSigkillIsProbablyTheOomKiller) {
  auto c = Classify(Signaled(SIGKILL));
  EXPECT_EQ(c.exit_class, ExitClass::kHostOom);
  EXPECT_NE(c.detail.find("probably"), std::string::npos);
  EXPECT_EQ(Classify(Exited(137, {})).exit_class, ExitClass::kHostOom);
}

TEST(ExitClass, OurStopOutranksOomText) {
  ExitFacts f = Signaled(SIGKILL);
  f.evidence.Scan("RuntimeError: CUDA out of memory.");
  f.stop_cause = StopCause::kRequested;
  f.last_signal_sent = SIGKILL;
  auto c = Classify(f);
  EXPECT_EQ(c.exit_class, ExitClass::kStopped);
  EXPECT_NE(c.detail.find("SIGKILL after it ignored SIGINT and SIGTERM"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("CUDA out of memory"), std::string::npos) << c.detail;
}

TEST(ExitClass, TimeLimit) {
  ExitFacts f = Exited(0, {});
  f.stop_cause = StopCause::kTimeLimit;
  f.last_signal_sent = SIGINT;
  f.time_limit_s = 1.5;
  auto c = Classify(f);
  EXPECT_EQ(c.exit_class, ExitClass::kTimedOut);
  EXPECT_EQ(c.detail, "timed out after its 1.5 s time limit, ended after SIGINT (exit code 0)");
}

TEST(ExitClass, StartFailure) {
  ExitFacts f;
  f.started = false;
  f.start_error = "cannot run 'nope': No such file or directory";
  auto c = Classify(f);
  EXPECT_EQ(c.exit_class, ExitClass::kStartFailed);
  EXPECT_EQ(c.detail, f.start_error);
}

TEST(ExitClass, EvidenceLinesAreClipped) {
  OutputEvidence e;
  e.Scan("CUDA out of memory " + std::string(10000, 'x'));
  EXPECT_LT(e.gpu_oom_line.size(), 400u);
}

TEST(ExitClass, SignalNames) {
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGINT), "SIGINT");
  EXPECT_EQ(SignalName(1000), "signal 1000");
}

}  // namespace
}  // namespace sat::run
