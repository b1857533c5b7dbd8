#include "run/runner.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "run/cgroup.h"
#include "run/interrupt.h"
#include "run/process_tree.h"
#include "util/strings.h"

namespace sat::run {
namespace {

constexpr const char* kPython = "/usr/bin/python3";
// Generous: only a broken runner waits this long, and the machine running tests may be busy.
constexpr double kPatience = 20;

// Collects on_line calls from the supervisor thread; lets the test wait for a line.
class Lines {
 public:
  std::function<void(Stream, std::string_view)> Callback() {
    return [this](Stream s, std::string_view line) {
      std::lock_guard lock(mu_);
      (s == Stream::kStdout ? out_ : err_).emplace_back(line);
      cv_.notify_all();
    };
  }
  // Waits until a stdout line starts with `prefix`; returns it, or "" after kPatience.
  std::string WaitFor(std::string_view prefix) {
    std::unique_lock lock(mu_);
    std::string found;
    cv_.wait_for(lock, std::chrono::duration<double>(kPatience), [&] {
      for (const std::string& l : out_) {
        if (StartsWith(l, prefix)) found = l;
      }
      return !found.empty();
    });
    return found;
  }
  std::vector<std::string> out() {
    std::lock_guard lock(mu_);
    return out_;
  }
  std::vector<std::string> err() {
    std::lock_guard lock(mu_);
    return err_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> out_, err_;
};

RunSpec Spec(std::vector<std::string> argv) {
  RunSpec spec;
  spec.argv = std::move(argv);
  spec.stop_grace_s = 0.3;
  spec.term_grace_s = 0.3;
  return spec;
}

RunOutcome RunToEnd(RunSpec spec) {
  auto run = Run::Start(std::move(spec));
  EXPECT_TRUE(run) << run.error().message;
  auto outcome = (*run)->WaitFor(kPatience);
  EXPECT_TRUE(outcome.has_value()) << "the run did not end";
  return outcome.value_or(RunOutcome{});
}

// True when no process with this pid exists any more, not even a zombie.
bool Gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::path(testing::TempDir()) / (name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// What a folder holds, recursively, one path a line, for a failure message.
std::string Listing(const std::filesystem::path& dir) {
  std::string out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    out += "\n  " + it->path().string();
  }
  return out;
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Out of file descriptors when the run's log files are opened (EMFILE): the command is not started, and the
// outcome says the failure may pass (the sweep retries it) instead of Start failing saturate's own way.
TEST(RunnerDeathTest, NoDescriptorForALogIsATransientStartFailure) {
  auto dir = TempDir("emfile");
  EXPECT_EXIT(
      {
        // Every descriptor up to the limit in use: the first log file cannot be opened.
        rlimit limit{};
        getrlimit(RLIMIT_NOFILE, &limit);
        limit.rlim_cur = 64;
        setrlimit(RLIMIT_NOFILE, &limit);
        while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) {
        }
        RunSpec spec = Spec({"/bin/true"});
        spec.log_dir = (dir / "logs").string();
        auto run = Run::Start(std::move(spec));
        if (!run) {
          fprintf(stderr, "Start failed: %s\n", run.error().message.c_str());
          _exit(2);
        }
        std::optional<RunOutcome> o = (*run)->WaitFor(kPatience);
        bool ok = o && o->exit_class == ExitClass::kStartFailed && o->start_transient &&
                  o->detail.find("Too many open files") != std::string::npos;
        fprintf(stderr, "outcome: %s\n", o ? o->detail.c_str() : "none");
        _exit(ok ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "outcome: .*cannot create log file .*Too many open files");
}

TEST(Runner, ArgvArrivesVerbatimWithoutAShell) {
  auto o = RunToEnd(Spec({"printf", "%s|%s|%s\n", "a b", "$HOME", "*"}));
  EXPECT_EQ(o.exit_class, ExitClass::kFinished) << o.detail;
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.stdout_tail, (std::vector<std::string>{"a b|$HOME|*"}));
}

TEST(Runner, ShellModeJoinsWordsForSh) {
  RunSpec spec = Spec({"echo $((1 + 2))", "words"});
  spec.shell = true;
  EXPECT_EQ(RunToEnd(std::move(spec)).stdout_tail, (std::vector<std::string>{"3 words"}));
}

TEST(Runner, InjectsEnvironmentPythonPathAndTreeMarker) {
  RunSpec spec = Spec({"/bin/sh", "-c", "echo \"$SAT_TEST_VAR\"; echo \"$PYTHONPATH\"; echo \"$SATURATE_RUN_TREE\""});
  spec.env = {{"SAT_TEST_VAR", "hello world"}};
  spec.pythonpath_prepend = {"/opt/saturate/python"};
  auto o = RunToEnd(std::move(spec));
  ASSERT_EQ(o.stdout_tail.size(), 3u);
  EXPECT_EQ(o.stdout_tail[0], "hello world");
  EXPECT_TRUE(StartsWith(o.stdout_tail[1], "/opt/saturate/python")) << o.stdout_tail[1];
  EXPECT_TRUE(StartsWith(o.stdout_tail[2], std::to_string(getpid()) + ".")) << o.stdout_tail[2];
}

TEST(Runner, WritesRawLogsSplitsCarriageReturnsAndUsesCwd) {
  auto dir = TempDir("runner_logs");
  Lines lines;
  RunSpec spec = Spec({"/bin/sh", "-c", "printf 'step\\r 50%%\\r100%%\\n'; pwd; printf 'oops\\n' >&2"});
  spec.log_dir = (dir / "logs").string();
  spec.cwd = dir.string();
  spec.on_line = lines.Callback();
  auto o = RunToEnd(std::move(spec));
  EXPECT_EQ(o.exit_class, ExitClass::kFinished) << o.detail;
  EXPECT_EQ(ReadFile(dir / "logs" / "stdout.log"), "step\r 50%\r100%\n" + dir.string() + "\n");
  EXPECT_EQ(ReadFile(dir / "logs" / "stderr.log"), "oops\n");
  EXPECT_EQ(lines.out(), (std::vector<std::string>{"step", " 50%", "100%", dir.string()}));
  EXPECT_EQ(lines.err(), (std::vector<std::string>{"oops"}));
  EXPECT_TRUE(o.log_error.empty());
  std::filesystem::remove_all(dir);
}

TEST(Runner, KeepsABoundedTailAndTheLastLineWithoutABreak) {
  RunSpec spec = Spec({"/bin/sh", "-c", "seq 1 100; printf 'no newline'"});
  spec.tail_lines = 3;
  EXPECT_EQ(RunToEnd(std::move(spec)).stdout_tail, (std::vector<std::string>{"99", "100", "no newline"}));
}

TEST(Runner, EchoesRawOutput) {
  RunSpec spec = Spec({"printf", "echoed\\r"});
  spec.echo = true;
  testing::internal::CaptureStdout();
  RunToEnd(std::move(spec));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "echoed\r");
}

TEST(Runner, StartFailureNamesTheProgramAndTheReason) {
  auto o = RunToEnd(Spec({"pyhton-does-not-exist", "train.py"}));
  EXPECT_EQ(o.exit_class, ExitClass::kStartFailed);
  EXPECT_EQ(o.detail, "cannot run 'pyhton-does-not-exist': No such file or directory (searched PATH)");
  EXPECT_EQ(o.exit_code, -1);

  auto bad_dir = Spec({"true"});
  bad_dir.cwd = "/no/such/dir";
  auto o2 = RunToEnd(std::move(bad_dir));
  EXPECT_EQ(o2.exit_class, ExitClass::kStartFailed);
  EXPECT_NE(o2.detail.find("cannot change directory to '/no/such/dir'"), std::string::npos) << o2.detail;
}

TEST(Runner, SaturateMistakesAreErrors) {
  EXPECT_FALSE(Run::Start(Spec({})));
  RunSpec spec = Spec({"true"});
  spec.log_dir = "/proc/no-logs-here";
  auto r = Run::Start(std::move(spec));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot create log folder"), std::string::npos);
}

TEST(Runner, ExitCodesAndCrashes) {
  auto o = RunToEnd(Spec({"/bin/sh", "-c", "echo 'ValueError: bad config' >&2; exit 3"}));
  EXPECT_EQ(o.exit_class, ExitClass::kFailed);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.detail, "exited with code 3: ValueError: bad config");

  auto crash = RunToEnd(Spec({"/bin/sh", "-c", "kill -SEGV $$"}));
  EXPECT_EQ(crash.exit_class, ExitClass::kFailed);
  EXPECT_EQ(crash.term_signal, SIGSEGV);
  EXPECT_EQ(crash.exit_code, -1);
}

TEST(Runner, ClassifiesAGpuOomFromPython) {
  auto o = RunToEnd(
      Spec({kPython, "-c", "raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0)')"}));
  EXPECT_EQ(o.exit_class, ExitClass::kGpuOom) << o.detail;
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.detail.find("Tried to allocate 2.00 GiB"), std::string::npos) << o.detail;
}

TEST(Runner, StopEndsAPoliteProcessWithSigint) {
  auto run = Run::Start(Spec({"sleep", "30"}));
  ASSERT_TRUE(run);
  EXPECT_GT((*run)->pid(), 0);
  EXPECT_EQ((*run)->pgid(), (*run)->pid());
  EXPECT_FALSE((*run)->Poll().has_value());
  (*run)->RequestStop();
  auto o = (*run)->WaitFor(kPatience);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->exit_class, ExitClass::kStopped);
  EXPECT_EQ(o->term_signal, SIGINT);
  EXPECT_EQ(o->detail, "stopped on request, ended after SIGINT (killed by SIGINT)");
  EXPECT_TRUE((*run)->Poll().has_value());
}

TEST(Runner, StopEscalatesToSigkillForAStubbornProcess) {
  Lines lines;
  RunSpec spec = Spec({"/bin/sh", "-c", "trap '' INT TERM; echo ready; sleep 30"});
  spec.on_line = lines.Callback();
  auto run = Run::Start(std::move(spec));
  ASSERT_TRUE(run);
  ASSERT_EQ(lines.WaitFor("ready"), "ready");
  auto asked = std::chrono::steady_clock::now();
  (*run)->RequestStop();
  auto o = (*run)->Wait();
  EXPECT_EQ(o.exit_class, ExitClass::kStopped);
  EXPECT_EQ(o.term_signal, SIGKILL);
  EXPECT_NE(o.detail.find("with SIGKILL after it ignored SIGINT and SIGTERM"), std::string::npos) << o.detail;
  EXPECT_GE(SecondsSince(asked), 0.55);  // both graces were honoured
  EXPECT_LT(SecondsSince(asked), 10);
}

TEST(Runner, TimeLimitStopsAndMarksTimedOut) {
  // A quiet command, and one that floods its output (the supervisor must still get round to the clock).
  for (std::vector<std::string> argv : {std::vector<std::string>{"sleep", "30"}, {"yes", "flood"}}) {
    RunSpec spec = Spec(argv);
    spec.time_limit_s = 0.3;
    auto o = RunToEnd(std::move(spec));
    EXPECT_EQ(o.exit_class, ExitClass::kTimedOut) << argv[0] << ": " << o.detail;
    EXPECT_GE(o.duration_s, 0.3);
    EXPECT_LT(o.duration_s, 10);
  }
}

// A limit beyond what a nanosecond clock holds is no limit, not an immediate time-out.
TEST(Runner, HugeTimeLimitDoesNotOverflow) {
  RunSpec spec = Spec({"sleep", "0.2"});
  spec.time_limit_s = 1e300;
  auto o = RunToEnd(std::move(spec));
  EXPECT_EQ(o.exit_class, ExitClass::kFinished) << o.detail;
}

// A trainer-like tree: a worker in the group, a child in a new session, and a double-forked grandchild that
// calls setsid and ignores SIGINT and SIGTERM. Each prints "pid N"; the parent prints "ready" last.
constexpr const char* kTreeScript = R"(
import os, signal, subprocess, sys, time
worker = subprocess.Popen(['sleep', '60'])
session = subprocess.Popen(['sleep', '60'], start_new_session=True)
print('pid', worker.pid); print('pid', session.pid); sys.stdout.flush()
middle = os.fork()
if middle == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print('pid', os.getpid(), flush=True)
        time.sleep(60)
    os._exit(0)
os.waitpid(middle, 0)
time.sleep(0.2)
print('ready', flush=True)
time.sleep(60)
)";

std::vector<pid_t> PrintedPids(Lines& lines) {
  std::vector<pid_t> pids;
  for (const std::string& l : lines.out()) {
    if (StartsWith(l, "pid ")) pids.push_back(static_cast<pid_t>(ParseInt(l.substr(4)).value_or(0)));
  }
  return pids;
}

TEST(Runner, StopLeavesNoSurvivorsInAnyGroupOrSession) {
  Lines lines;
  RunSpec spec = Spec({kPython, "-c", kTreeScript});
  spec.on_line = lines.Callback();
  auto run = Run::Start(std::move(spec));
  ASSERT_TRUE(run);
  ASSERT_EQ(lines.WaitFor("ready"), "ready");
  std::vector<pid_t> pids = PrintedPids(lines);
  ASSERT_EQ(pids.size(), 3u);
  pids.push_back((*run)->pid());
  for (pid_t pid : pids) ASSERT_FALSE(Gone(pid)) << pid;

  (*run)->RequestStop();
  auto o = (*run)->Wait();
  EXPECT_EQ(o.exit_class, ExitClass::kStopped) << o.detail;
  for (pid_t pid : pids) EXPECT_TRUE(Gone(pid)) << "survivor or unreaped zombie: " << pid;
}

TEST(Runner, LeftoversOfAFinishedCommandAreKilled) {
  // A background job of a non-interactive shell ignores SIGINT; the leftover cleanup starts at SIGTERM.
  auto o = RunToEnd(Spec({"/bin/sh", "-c", "sleep 30 & echo \"pid $!\""}));
  EXPECT_EQ(o.exit_class, ExitClass::kFinished) << o.detail;
  EXPECT_EQ(o.leftover_processes, 1);
  ASSERT_EQ(o.stdout_tail.size(), 1u);
  pid_t pid = static_cast<pid_t>(ParseInt(o.stdout_tail[0].substr(4)).value_or(0));
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(Gone(pid));
}

// A grandchild that leaves the group and the session, clears its environment (no marker) and outlives its parent:
// beyond the process tree's reach, it is found through the run's cgroup alone.
TEST(Runner, TheRunsCgroupStopsAnEscapeeWithoutTheMarker) {
  auto own = OwnCgroupDir();
  if (!own) GTEST_SKIP() << "no cgroup v2 here: " << own.error().message;
  std::string probe_name = "saturate-test-probe-" + std::to_string(getpid());
  if (auto c = RunCgroup::Create(*own, probe_name); !c) {
    GTEST_SKIP() << "saturate may not make cgroups here: " << c.error().message;
  }
  auto o = RunToEnd(Spec({"/bin/sh", "-c",
                          "env -i /usr/bin/setsid -f /bin/sh -c 'echo \"pid $$\"; exec /bin/sleep 60 >/dev/null 2>&1'; sleep 0.5"}));
  EXPECT_EQ(o.exit_class, ExitClass::kFinished) << o.detail;
  ASSERT_EQ(o.stdout_tail.size(), 1u);
  pid_t pid = static_cast<pid_t>(ParseInt(o.stdout_tail[0].substr(4)).value_or(0));
  ASSERT_GT(pid, 0);
  EXPECT_EQ(o.leftover_processes, 1);
  EXPECT_TRUE(Gone(pid)) << "the escapee survived its run";
  if (!Gone(pid)) kill(pid, SIGKILL);
}

// A DataLoader with two workers in a trainer that ignores SIGINT and SIGTERM, so the stop goes past SIGINT and the
// workers die of a signal before they remove their multiprocessing folders (pymp-*). It prints its TMPDIR, then
// "ready" and what is in the TMPDIR once the workers have sent batches.
constexpr const char* kDataLoaderScript = R"(
import os, signal, tempfile, time, torch
from torch.utils.data import DataLoader, Dataset
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
class Endless(Dataset):
    def __len__(self): return 1 << 30
    def __getitem__(self, i): return torch.zeros(16)
print('tmp', tempfile.gettempdir(), flush=True)
for i, batch in enumerate(DataLoader(Endless(), batch_size=8, num_workers=2)):
    if i == 20:
        print('ready', ' '.join(sorted(os.listdir(tempfile.gettempdir()))), flush=True)
    time.sleep(0.01)
)";

TEST(Runner, KilledDataLoaderWorkersLeaveNoTemporaryFolders) {
  auto dir = TempDir("runner_tmp_dataloader");
  Lines lines;
  RunSpec spec = Spec({kPython, "-c", kDataLoaderScript});
  spec.env["TMPDIR"] = dir.string();
  spec.on_line = lines.Callback();
  auto run = Run::Start(std::move(spec));
  ASSERT_TRUE(run);
  std::string ready = lines.WaitFor("ready");
  ASSERT_FALSE(ready.empty()) << "the DataLoader did not start; stderr: " << JoinNonEmpty(lines.err(), "\n");
  EXPECT_NE(ready.find("pymp-"), std::string::npos) << "the workers made no multiprocessing folder: " << ready;
  std::string tmp = lines.WaitFor("tmp ").substr(4);
  EXPECT_TRUE(StartsWith(tmp, (dir / "saturate-run-").string())) << tmp;

  (*run)->RequestStop();
  auto o = (*run)->Wait();
  EXPECT_EQ(o.exit_class, ExitClass::kStopped) << o.detail;
  // Past SIGINT: the workers died of SIGTERM or SIGKILL, before Python could remove their folders.
  EXPECT_NE(o.detail.find("after it ignored SIGINT"), std::string::npos) << o.detail;
  EXPECT_FALSE(std::filesystem::exists(tmp)) << "the run's private TMPDIR is left, holding: " << Listing(tmp);
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "left in the caller's TMPDIR: " << Listing(dir);
  std::filesystem::remove_all(dir);
}

TEST(Runner, KeepsWhatTheCommandWroteInItsTemporaryFolder) {
  auto dir = TempDir("runner_tmp_kept");
  RunSpec spec = Spec({"/bin/sh", "-c",
                       "mkdir \"$TMPDIR/pymp-x\"; echo data > \"$TMPDIR/result.txt\"; : > \"$TMPDIR/tmpab_9cdef\"; "
                       "echo kept > \"$TMPDIR/tmpkept1234\"; : > \"$TMPDIR/tmp-empty\"; echo $TMPDIR"});
  spec.env["TMPDIR"] = dir.string();
  auto o = RunToEnd(std::move(spec));
  ASSERT_EQ(o.stdout_tail.size(), 1u);
  std::filesystem::path tmp = o.stdout_tail[0];
  EXPECT_EQ(tmp.parent_path(), dir);
  EXPECT_TRUE(std::filesystem::exists(tmp / "result.txt"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "pymp-x"));
  // An empty file named as Python's tempfile names them is a killed process's; one with content, or another
  // name, is the command's.
  EXPECT_FALSE(std::filesystem::exists(tmp / "tmpab_9cdef"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "tmpkept1234"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "tmp-empty"));

  // A command that leaves nothing leaves no folder.
  RunSpec quiet = Spec({"/bin/sh", "-c", "echo $TMPDIR"});
  quiet.env["TMPDIR"] = dir.string();
  auto q = RunToEnd(std::move(quiet));
  ASSERT_EQ(q.stdout_tail.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(q.stdout_tail[0]));
  std::filesystem::remove_all(dir);
}

TEST(Runner, InterruptOfSaturateStopsRuns) {
  InstallInterruptHandlers();
  ClearInterrupt();
  auto run = Run::Start(Spec({"sleep", "30"}));
  ASSERT_TRUE(run);
  ASSERT_EQ(raise(SIGINT), 0);
  auto o = (*run)->WaitFor(kPatience);
  ClearInterrupt();
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->exit_class, ExitClass::kStopped);
  EXPECT_NE(o->detail.find("saturate was interrupted"), std::string::npos) << o->detail;
}

TEST(Runner, SecondInterruptSkipsTheGrace) {
  InstallInterruptHandlers();
  ClearInterrupt();
  Lines lines;
  RunSpec spec = Spec({"/bin/sh", "-c", "trap '' INT TERM; echo ready; sleep 30"});
  spec.stop_grace_s = spec.term_grace_s = 60;
  spec.on_line = lines.Callback();
  auto run = Run::Start(std::move(spec));
  ASSERT_TRUE(run);
  ASSERT_EQ(lines.WaitFor("ready"), "ready");
  ASSERT_EQ(raise(SIGINT), 0);
  ASSERT_EQ(raise(SIGINT), 0);
  auto o = (*run)->WaitFor(kPatience);
  ClearInterrupt();
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->term_signal, SIGKILL);
}

TEST(Runner, IgnoresInterruptsWhenAsked) {
  InstallInterruptHandlers();
  ClearInterrupt();
  RunSpec spec = Spec({"sleep", "0.5"});
  spec.stop_on_interrupt = false;
  auto run = Run::Start(std::move(spec));
  ASSERT_TRUE(run);
  ASSERT_EQ(raise(SIGINT), 0);
  auto o = (*run)->WaitFor(kPatience);
  ClearInterrupt();
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->exit_class, ExitClass::kFinished) << o->detail;
}

TEST(Runner, StopAllRunsAndDestructorLeaveNothingRunning) {
  auto a = Run::Start(Spec({"sleep", "30"}));
  auto b = Run::Start(Spec({"sleep", "30"}));
  ASSERT_TRUE(a.ok() && b.ok());
  StopAllRuns();
  ASSERT_TRUE((*a)->Poll().has_value());
  ASSERT_TRUE((*b)->Poll().has_value());
  EXPECT_EQ((*a)->Poll()->exit_class, ExitClass::kStopped);

  pid_t pid;
  {
    auto c = Run::Start(Spec({"sleep", "30"}));
    ASSERT_TRUE(c);
    pid = (*c)->pid();
  }
  EXPECT_TRUE(Gone(pid));
}

}  // namespace
}  // namespace sat::run
