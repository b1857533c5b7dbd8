#include "util/cache_home.h"
#include "util/safe_file.h"
#include "run/runner.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "run/cgroup.h"
#include "run/environment.h"
#include "run/interrupt.h"
#include "run/line_splitter.h"
#include "run/process_tree.h"
#include "run/spawn.h"
#include "util/unique_fd.h"
#include "util/strings.h"
#include "util/thread_guard.h"

namespace sat::run {
namespace {

using Clock = std::chrono::steady_clock;

// The longest the supervisor sleeps: how quickly it notices an interrupt of saturate.
constexpr auto kTick = std::chrono::milliseconds(100);
// How often the run tree is scanned while the command runs quietly (to remember members for reaping later).
constexpr auto kScanInterval = std::chrono::seconds(1);
// How long output pipes may stay open once the whole known tree is gone (an unattributable process holds them).
constexpr auto kDrainLimit = std::chrono::seconds(1);

// Bounded, so a limit no clock can hold (1e300 s) cannot overflow into a deadline in the past.
Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::clamp(s, 0.0, kMaxDurationS)));
}

// Writes all of `data`; the errno of the first failure, or 0.
int WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// Opens a run's log file; `*transient` says whether the failure may pass (out of descriptors or memory).
// The log folder may be shared: never written through a link planted at a log's name (util/safe_file.h).
Result<UniqueFd> OpenLog(const std::filesystem::path& path, bool* transient) {
  int e = 0;
  auto fd = OpenForWriting(path.string(), WriteMode::kReplace, 0644, &e);
  if (!fd) {
    *transient = e == EMFILE || e == ENFILE || e == ENOMEM;
    return Error{fmt::format("cannot create log file ({})", fd.error().message)};
  }
  return fd;
}

// The process-wide list of live runs, for StopAllRuns. Never destroyed, so it outlives static destructors and
// atexit handlers that may still stop runs.
struct Registry {
  std::mutex mu;
  std::set<Run::Supervisor*> live;
};
Registry& TheRegistry() {
  static auto* registry = new Registry;
  return *registry;
}

// Process-wide setup done by the first Start: subreaper (escapees come to us) and the exit hook.
void PrepareProcess() {
  static std::once_flag once;
  std::call_once(once, [] {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    std::atexit([] { StopAllRuns(); });
  });
}

// The login name as Python's getpass.getuser() finds it, for torch.compile's default cache folder.
std::string UserName() {
  for (const char* var : {"LOGNAME", "USER", "LNAME", "USERNAME"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return v;
  }
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr) return pw->pw_name;
  return std::to_string(getuid());
}

// Creates the run's private temporary folder (see runner.h) and points the run's environment at it; returns
// its path, or "" when it cannot be created (the run then keeps the caller's TMPDIR).
std::string MakeRunTmpDir(std::map<std::string, std::string>& env) {
  std::string base = "/tmp";
  if (auto it = env.find("TMPDIR"); it != env.end() && !it->second.empty()) {
    base = it->second;
  } else if (const char* t = std::getenv("TMPDIR"); t != nullptr && *t != '\0') {
    base = t;
  }
  std::string dir = (std::filesystem::path(base) / "saturate-run-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) return "";
  if (!env.count("TORCHINDUCTOR_CACHE_DIR") && std::getenv("TORCHINDUCTOR_CACHE_DIR") == nullptr) {
    // torch.compile's usual cache, so compiled kernels are reused across runs, where it already is a folder of this
    // user's that no one else may write (/tmp/torchinductor_<user> is a name another user can create first, and
    // fill with code the run would load); else the user's own saturate cache folder, made private; else the run's
    // private folder.
    std::string cache = (std::filesystem::path(base) / ("torchinductor_" + UserName())).string();
    struct stat st {};
    if (lstat(cache.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
      auto own = SaturateCacheDir(CacheHomesOfThisProcess());
      cache = own ? *own + "/torchinductor" : "";
      if (!cache.empty() && !PrivateFolderProblem(cache).empty()) cache.clear();
    }
    if (!cache.empty()) env["TORCHINDUCTOR_CACHE_DIR"] = cache;
  }
  env["TMPDIR"] = dir;
  return dir;
}

// Whether a name is one Python's tempfile gives by default: "tmp" and eight of [a-z0-9_].
bool IsPythonTempName(std::string_view name) {
  if (name.size() != 11 || !StartsWith(name, "tmp")) return false;
  return std::all_of(name.begin() + 3, name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// Removes what killed processes left in the run's private folder, then the folder itself when it is empty.
// Called once no process of the run is left. Left: multiprocessing's pymp-* folders, and the empty tmpXXXXXXXX
// files a DataLoader opens to test the descriptor limit when a worker dies (an empty file holds nothing of the
// command's; a file with content is kept).
void CleanRunTmpDir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    std::error_code entry_ec;
    if (StartsWith(name, "pymp-")) {
      std::filesystem::remove_all(entry.path(), entry_ec);
    } else if (IsPythonTempName(name) && entry.is_regular_file(entry_ec) && entry.file_size(entry_ec) == 0) {
      std::filesystem::remove(entry.path(), entry_ec);
    }
  }
  std::filesystem::remove(dir, ec);  // fails, as meant, when the command left files of its own
}

std::string NextRunToken() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.{}", getpid(), ++counter);
}

}  // namespace

// One run's shared state (guarded by mu_) and its supervisor thread's private state (no lock: only that thread
// touches it).
class Run::Supervisor {
 public:
  Supervisor(RunSpec spec, SpawnRequest request, std::string marker, std::string tmp_dir,
             std::optional<RunCgroup> cgroup, UniqueFd stdout_log, UniqueFd stderr_log)
      : spec_(std::move(spec)), request_(std::move(request)), marker_(std::move(marker)),
        tmp_dir_(std::move(tmp_dir)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), cgroup_(std::move(cgroup)) {
    streams_[0].log = std::move(stdout_log);
    streams_[1].log = std::move(stderr_log);
  }

  ~Supervisor() {
    if (thread_.joinable()) thread_.join();
  }

  // Starts the thread and returns once the command is exec'd or has failed to start.
  void Launch() {
    try {
      thread_ = std::thread([this] { GuardThread("run supervisor", [this] { Main(); }); });
    } catch (const std::system_error& e) {
      // No thread to watch it (a process limit reached, as RLIMIT_NPROC does): the command is not started, and
      // that is a transient start failure like a fork that failed with EAGAIN, for the caller to retry.
      NotStarted(fmt::format("cannot start the thread that watches it: {}", e.what()), true);
      return;
    }
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return launched_; });
  }

  // Ends the run before its command started, without a thread: Poll and Wait see a start failure.
  void NotStarted(std::string why, bool transient) {
    {
      std::lock_guard lock(mu_);
      launched_ = true;
    }
    ExitFacts facts;
    facts.started = false;
    facts.start_error = std::move(why);
    facts.start_transient = transient;
    CleanRunTmpDir(tmp_dir_);
    if (cgroup_) cgroup_->Remove();
    Finish(std::move(facts), 0);
  }

  void RequestStop() {
    {
      std::lock_guard lock(mu_);
      stop_requested_ = true;
    }
    uint64_t one = 1;
    ssize_t ignored = write(wake_.get(), &one, sizeof one);
    (void)ignored;
  }

  std::optional<RunOutcome> Poll() const {
    std::lock_guard lock(mu_);
    if (!done_) return std::nullopt;
    return outcome_;
  }

  RunOutcome Wait() const {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return outcome_;
  }

  std::optional<RunOutcome> WaitFor(double seconds) const {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, Seconds(seconds), [this] { return done_; })) {
      return std::nullopt;
    }
    return outcome_;
  }

  pid_t pid() const {
    std::lock_guard lock(mu_);
    return pid_;
  }

 private:
  enum Level { kNone, kSigint, kSigterm, kSigkill };  // how far up the stopping ladder we are

  struct StreamState {
    UniqueFd pipe;
    UniqueFd log;
    LineSplitter splitter;
    std::deque<std::string> tail;
  };

  void Main();
  void Supervise();
  int PollTimeoutMs(Clock::time_point now) const;
  void ReadAvailable(Stream stream);
  void OnChunk(Stream stream, std::string_view data);
  void OnLine(Stream stream, std::string_view line);
  void CloseStream(Stream stream);
  void TryReap(Clock::time_point now);
  void UpdateStop(Clock::time_point now);
  void Escalate(Level level, Clock::time_point now);
  std::vector<pid_t> ScanTree();
  // Whether every member ever seen alive is gone (our zombies reaped by ScanTree). A member in the middle of its
  // exit can be missing from a scan and become our zombie after it.
  bool SeenMembersGone();
  bool Over(Clock::time_point now);
  void Finish(ExitFacts facts, double duration_s);

  // Set before the thread starts, then read-only.
  const RunSpec spec_;
  const SpawnRequest request_;
  const std::string marker_;  // "SATURATE_RUN_TREE=<token>"
  const std::string tmp_dir_;  // the run's private TMPDIR; "" when it could not be created
  const UniqueFd wake_;       // eventfd: RequestStop wakes the supervisor's poll
  std::optional<RunCgroup> cgroup_;  // the run's own cgroup where one could be made (see cgroup.h)

  // Shared with callers.
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool launched_ = false;
  bool stop_requested_ = false;
  bool done_ = false;
  pid_t pid_ = 0;
  RunOutcome outcome_;
  std::thread thread_;

  // Supervisor thread only.
  StreamState streams_[2];
  OutputEvidence evidence_;
  std::string log_error_;
  pid_t child_ = 0;
  UniqueFd pidfd_;  // readable when the child exits; invalid on kernels without pidfd_open (then: kTick)
  Clock::time_point start_, end_;
  bool reaped_ = false;
  int wait_status_ = 0;
  Level level_ = kNone;
  Clock::time_point next_step_;  // when the ladder climbs next
  StopCause cause_ = StopCause::kNone;
  int signal_before_end_ = 0;  // the strongest signal sent while the child was alive
  std::map<pid_t, unsigned long long> seen_;  // every tree member ever scanned: pid -> start ticks
  size_t live_members_ = 0;                   // live (non-zombie) tree members at the last scan
  int leftovers_ = 0;
  Clock::time_point next_scan_;
  std::optional<Clock::time_point> drain_deadline_;
  std::optional<Clock::time_point> members_deadline_;  // how long Over waits for exiting members to vanish
};

void Run::Supervisor::Main() {
  bool transient = false;
  auto spawned = Spawn(request_, &transient);
  {
    std::lock_guard lock(mu_);
    launched_ = true;
    if (spawned) pid_ = spawned->pid;
  }
  cv_.notify_all();
  if (!spawned) {
    ExitFacts facts;
    facts.started = false;
    facts.start_error = spawned.error().message;
    facts.start_transient = transient;
    CleanRunTmpDir(tmp_dir_);
    Finish(std::move(facts), 0);
    return;
  }
  child_ = spawned->pid;
  streams_[0].pipe = std::move(spawned->stdout_read);
  streams_[1].pipe = std::move(spawned->stderr_read);
  pidfd_.Reset(static_cast<int>(syscall(SYS_pidfd_open, child_, 0)));
  start_ = Clock::now();
  next_scan_ = start_ + kScanInterval;
  Supervise();
  // No process of the run is left to use its temporary files or its cgroup.
  CleanRunTmpDir(tmp_dir_);
  if (cgroup_) cgroup_->Remove();

  ExitFacts facts;
  facts.exited = WIFEXITED(wait_status_);
  facts.exit_code = facts.exited ? WEXITSTATUS(wait_status_) : 0;
  facts.term_signal = WIFSIGNALED(wait_status_) ? WTERMSIG(wait_status_) : 0;
  facts.stop_cause = cause_;
  facts.last_signal_sent = signal_before_end_;
  facts.time_limit_s = spec_.time_limit_s;
  facts.evidence = evidence_;
  if (!streams_[1].tail.empty()) facts.last_stderr_line = streams_[1].tail.back();
  Finish(std::move(facts), std::chrono::duration<double>(end_ - start_).count());
}

void Run::Supervisor::Supervise() {
  while (true) {
    std::vector<pollfd> fds;
    for (const StreamState& s : streams_) {
      if (s.pipe.valid()) fds.push_back({s.pipe.get(), POLLIN, 0});
    }
    if (pidfd_.valid()) fds.push_back({pidfd_.get(), POLLIN, 0});
    fds.push_back({wake_.get(), POLLIN, 0});
    poll(fds.data(), fds.size(), PollTimeoutMs(Clock::now()));

    // Output first, so lines printed just before an exit are scanned before the exit is classified.
    for (Stream s : {Stream::kStdout, Stream::kStderr}) ReadAvailable(s);
    uint64_t drained;
    while (read(wake_.get(), &drained, sizeof drained) > 0) {
    }
    Clock::time_point now = Clock::now();
    if (!reaped_) TryReap(now);
    UpdateStop(now);
    if (now >= next_scan_) {
      std::vector<pid_t> live = ScanTree();
      // At the top of the ladder, processes forked since the last signal get theirs too.
      if (level_ == kSigkill) {
        if (cgroup_ && !live.empty()) cgroup_->KillAll();
        for (pid_t pid : live) kill(pid, SIGKILL);
      }
    }
    if (Over(now)) break;
  }
  // Whatever is still buffered, and the unterminated last lines.
  for (Stream s : {Stream::kStdout, Stream::kStderr}) {
    ReadAvailable(s);
    CloseStream(s);
  }
}

int Run::Supervisor::PollTimeoutMs(Clock::time_point now) const {
  Clock::time_point wake = std::min(now + kTick, next_scan_);
  if (level_ == kSigint || level_ == kSigterm) wake = std::min(wake, next_step_);
  if (!reaped_ && level_ == kNone && spec_.time_limit_s > 0) {
    wake = std::min(wake, start_ + Seconds(spec_.time_limit_s));
  }
  if (drain_deadline_) wake = std::min(wake, *drain_deadline_);
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
  return static_cast<int>(std::max<long long>(0, ms));
}

void Run::Supervisor::ReadAvailable(Stream stream) {
  StreamState& s = streams_[static_cast<int>(stream)];
  char buf[64 * 1024];
  // Bounded, so a command that writes faster than we read cannot starve the stop and time-limit checks.
  for (int chunk = 0; chunk < 16 && s.pipe.valid(); ++chunk) {
    ssize_t n = read(s.pipe.get(), buf, sizeof buf);
    if (n > 0) {
      OnChunk(stream, std::string_view(buf, static_cast<size_t>(n)));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      CloseStream(stream);
    } else if (errno == EAGAIN) {
      return;
    }
  }
}

void Run::Supervisor::OnChunk(Stream stream, std::string_view data) {
  StreamState& s = streams_[static_cast<int>(stream)];
  if (s.log.valid() && log_error_.empty()) {
    if (int err = WriteAll(s.log.get(), data)) log_error_ = fmt::format("writing a log file: {}", strerror(err));
  }
  if (spec_.echo) {
    int ignored = WriteAll(stream == Stream::kStdout ? STDOUT_FILENO : STDERR_FILENO, data);
    (void)ignored;
  }
  s.splitter.Feed(data, [&](std::string_view line) { OnLine(stream, line); });
}

void Run::Supervisor::OnLine(Stream stream, std::string_view line) {
  StreamState& s = streams_[static_cast<int>(stream)];
  evidence_.Scan(line);
  s.tail.emplace_back(line);
  while (s.tail.size() > spec_.tail_lines) s.tail.pop_front();
  if (spec_.on_line) spec_.on_line(stream, line);
}

void Run::Supervisor::CloseStream(Stream stream) {
  StreamState& s = streams_[static_cast<int>(stream)];
  if (!s.pipe.valid()) return;
  s.pipe.Reset();
  // The rest of a line without a final break still counts.
  s.splitter.Finish([&](std::string_view line) { OnLine(stream, line); });
}

void Run::Supervisor::TryReap(Clock::time_point now) {
  int status = 0;
  pid_t r = waitpid(child_, &status, WNOHANG);
  if (r != child_) return;
  reaped_ = true;
  end_ = now;
  wait_status_ = status;
  pidfd_.Reset();
  // Its children are ours now; find out at once whether any were left behind.
  next_scan_ = now;
}

void Run::Supervisor::UpdateStop(Clock::time_point now) {
  bool stop_requested;
  {
    std::lock_guard lock(mu_);
    stop_requested = stop_requested_;
  }
  bool interrupted = spec_.stop_on_interrupt && Interrupted();
  if (!reaped_ && level_ == kNone) {
    if (stop_requested) {
      cause_ = StopCause::kRequested;
    } else if (interrupted) {
      cause_ = StopCause::kInterrupted;
    } else if (spec_.time_limit_s > 0 && now >= start_ + Seconds(spec_.time_limit_s)) {
      cause_ = StopCause::kTimeLimit;
    }
    if (cause_ != StopCause::kNone) Escalate(kSigint, now);
  }
  // A second interrupt of saturate means "now": no more grace.
  bool impatient = spec_.stop_on_interrupt && InterruptCount() >= 2;
  if ((level_ == kSigint || level_ == kSigterm) && (now >= next_step_ || impatient)) {
    Escalate(impatient ? kSigkill : static_cast<Level>(level_ + 1), now);
  }
}

void Run::Supervisor::Escalate(Level level, Clock::time_point now) {
  static constexpr int kSignals[] = {0, SIGINT, SIGTERM, SIGKILL};
  int sig = kSignals[level];
  level_ = level;
  next_step_ = now + Seconds(level == kSigint ? spec_.stop_grace_s : spec_.term_grace_s);
  if (!reaped_) signal_before_end_ = sig;
  // The group first (one call reaches every worker at once), then members outside it.
  kill(-child_, sig);
  if (sig == SIGKILL && cgroup_) cgroup_->KillAll();
  for (pid_t pid : ScanTree()) kill(pid, sig);
}

std::vector<pid_t> Run::Supervisor::ScanTree() {
  const pid_t self = getpid();
  std::vector<ProcEntry> procs = ListProcesses();
  TreeQuery query{reaped_ ? 0 : child_, child_, self,
                  [this](pid_t pid) { return EnvironContains(pid, marker_); }};
  std::vector<pid_t> live;
  for (const ProcEntry& p : FindRunTree(procs, query)) {
    if (!p.zombie()) {
      seen_[p.pid] = p.start_ticks;
      live.push_back(p.pid);
    }
  }
  // The cgroup holds what escaped all of the above (a setsid'd grandchild that cleared its environment).
  if (cgroup_) {
    for (pid_t pid : cgroup_->Members()) {
      if (pid == self || std::find(live.begin(), live.end(), pid) != live.end()) continue;
      std::optional<ProcEntry> p = ReadProcEntry(pid);
      if (!p || p->zombie()) continue;
      seen_[p->pid] = p->start_ticks;
      live.push_back(p->pid);
    }
  }
  // Dead members reparented to us are ours to reap; a zombie's environment is unreadable, so recognise it
  // by having seen it alive (pid and start time), or by its group. The direct child is reaped by TryReap.
  for (const ProcEntry& p : procs) {
    if (!p.zombie() || p.ppid != self || p.pid == child_) continue;
    auto it = seen_.find(p.pid);
    bool ours = (it != seen_.end() && it->second == p.start_ticks) || p.pgid == child_;
    if (ours) waitpid(p.pid, nullptr, WNOHANG);
  }
  live_members_ = live.size();
  bool busy = reaped_ || level_ != kNone;
  next_scan_ = Clock::now() + (busy ? std::chrono::duration_cast<Clock::duration>(kTick) : kScanInterval);
  return live;
}

bool Run::Supervisor::SeenMembersGone() {
  for (auto it = seen_.begin(); it != seen_.end();) {
    const pid_t pid = it->first;
    std::optional<ProcEntry> p = pid == child_ ? std::nullopt : ReadProcEntry(pid);
    if (pid == child_ || (!p && kill(pid, 0) != 0 && errno == ESRCH) || (p && p->start_ticks != it->second)) {
      it = seen_.erase(it);  // gone, or its pid now names another process
      continue;
    }
    // Alive, exiting, or a zombie: ScanTree, which runs every tick once the command has ended, reaps ours; a zombie
    // of another parent is that parent's, or ours once it dies.
    return false;
  }
  return true;
}

bool Run::Supervisor::Over(Clock::time_point now) {
  if (!reaped_) return false;
  if (live_members_ > 0) {
    // The command ended on its own but left processes behind: they get SIGTERM, then SIGKILL.
    if (level_ == kNone) {
      leftovers_ = static_cast<int>(live_members_);
      Escalate(kSigterm, now);
    }
    return false;
  }
  if (!members_deadline_) members_deadline_ = now + kDrainLimit;
  if (!SeenMembersGone() && now < *members_deadline_) return false;
  if (!streams_[0].pipe.valid() && !streams_[1].pipe.valid()) return true;
  if (!drain_deadline_) drain_deadline_ = now + kDrainLimit;
  return now >= *drain_deadline_;
}

void Run::Supervisor::Finish(ExitFacts facts, double duration_s) {
  Classification c = Classify(facts);
  RunOutcome o;
  o.exit_class = c.exit_class;
  o.detail = std::move(c.detail);
  o.exit_code = facts.started && facts.exited ? facts.exit_code : -1;
  o.start_transient = !facts.started && facts.start_transient;
  o.term_signal = facts.term_signal;
  o.duration_s = duration_s;
  o.stdout_tail.assign(streams_[0].tail.begin(), streams_[0].tail.end());
  o.stderr_tail.assign(streams_[1].tail.begin(), streams_[1].tail.end());
  o.evidence = std::move(facts.evidence);
  o.leftover_processes = leftovers_;
  o.log_error = log_error_;
  {
    std::lock_guard lock(mu_);
    outcome_ = std::move(o);
    done_ = true;
  }
  cv_.notify_all();
}

Result<std::unique_ptr<Run>> Run::Start(RunSpec spec) {
  if (spec.argv.empty()) return UsageError("no command to run");

  UniqueFd logs[2];
  // Out of descriptors for a log file (EMFILE): the command is not started, as when its fork fails, and the
  // caller may retry it; any other log failure (a folder that cannot be made) is an error of saturate's own.
  std::optional<Error> transient_log_failure;
  if (!spec.log_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(spec.log_dir, ec);
    if (ec) return Error{fmt::format("cannot create log folder {}: {}", spec.log_dir, ec.message())};
    const char* names[2] = {"stdout.log", "stderr.log"};
    for (int i = 0; i < 2 && !transient_log_failure; ++i) {
      bool transient = false;
      auto fd = OpenLog(std::filesystem::path(spec.log_dir) / names[i], &transient);
      if (!fd && !transient) return fd.error();
      if (!fd) transient_log_failure = fd.error();
      else logs[i] = std::move(*fd);
    }
  }
  PrepareProcess();

  // The marker goes last so a caller's environment cannot hide a run from the cleanup.
  std::string token = NextRunToken();
  std::map<std::string, std::string> env = spec.env;
  std::string tmp_dir = MakeRunTmpDir(env);
  env[std::string(kRunTreeVar)] = token;
  std::optional<RunCgroup> cgroup = MakeRunCgroup("saturate-" + token);
  SpawnRequest request;
  if (cgroup) request.cgroup_procs_fd = cgroup->procs_fd();
  request.env = BuildEnvironment(CurrentEnvironment(), env, spec.pythonpath_prepend);
  request.cwd = spec.cwd;
  if (spec.shell) {
    std::string joined;
    for (const std::string& word : spec.argv) joined += (joined.empty() ? "" : " ") + word;
    request.argv = {"/bin/sh", "-c", joined};
  } else {
    request.argv = spec.argv;
  }

  std::string marker = fmt::format("{}={}", kRunTreeVar, token);
  auto supervisor = std::make_unique<Supervisor>(std::move(spec), std::move(request), std::move(marker),
                                                 std::move(tmp_dir), std::move(cgroup), std::move(logs[0]),
                                                 std::move(logs[1]));
  {
    // Registered before it starts, so StopAllRuns never misses a run that is being started.
    std::lock_guard lock(TheRegistry().mu);
    TheRegistry().live.insert(supervisor.get());
  }
  if (transient_log_failure) {
    supervisor->NotStarted(transient_log_failure->message, true);
  } else {
    supervisor->Launch();
  }
  return std::unique_ptr<Run>(new Run(std::move(supervisor)));
}

Run::Run(std::unique_ptr<Supervisor> supervisor) : supervisor_(std::move(supervisor)) {}

Run::~Run() {
  {
    std::lock_guard lock(TheRegistry().mu);
    TheRegistry().live.erase(supervisor_.get());
  }
  supervisor_->RequestStop();
  supervisor_->Wait();
}

pid_t Run::pid() const { return supervisor_->pid(); }
pid_t Run::pgid() const { return supervisor_->pid(); }
void Run::RequestStop() { supervisor_->RequestStop(); }
std::optional<RunOutcome> Run::Poll() const { return supervisor_->Poll(); }
RunOutcome Run::Wait() const { return supervisor_->Wait(); }
std::optional<RunOutcome> Run::WaitFor(double seconds) const { return supervisor_->WaitFor(seconds); }

void StopAllRuns() {
  Registry& registry = TheRegistry();
  // Held throughout: a Run being destroyed elsewhere waits here instead of freeing its state under us.
  std::lock_guard lock(registry.mu);
  for (Run::Supervisor* s : registry.live) s->RequestStop();
  for (Run::Supervisor* s : registry.live) s->Wait();
}

}  // namespace sat::run
