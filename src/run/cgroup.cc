#include "run/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "run/process_tree.h"
#include "telemetry/mount_table.h"
#include "util/strings.h"

namespace sat::run {
namespace {

bool WriteText(int fd, std::string_view text) {
  ssize_t n;
  do {
    n = write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(text.size());
}

}  // namespace

std::optional<std::string> ParseUnifiedCgroupPath(std::string_view proc_pid_cgroup) {
  for (const std::string& line : Split(proc_pid_cgroup, '\n')) {
    if (StartsWith(line, "0::")) return line.substr(3);
  }
  return std::nullopt;
}

std::optional<std::string> ParseCgroup2Mount(std::string_view mountinfo, std::string_view cgroup_path) {
  for (const telemetry::MountEntry& m : telemetry::ParseMountTable(mountinfo)) {
    // A mount of a subtree (root other than "/") holds only the paths under that root.
    if (m.fs_type != "cgroup2" || m.root.empty() || !telemetry::IsUnder(cgroup_path, m.root)) continue;
    std::string_view rest = cgroup_path.substr(m.root == "/" ? 0 : m.root.size());
    return rest == "/" ? m.mount_point : m.mount_point + std::string(rest);
  }
  return std::nullopt;
}

Result<std::string> OwnCgroupDir(const std::string& proc_root) {
  auto cgroup = ReadSmallFile(proc_root + "/self/cgroup");
  if (!cgroup) return Error{fmt::format("cannot read {}/self/cgroup", proc_root)};
  auto path = ParseUnifiedCgroupPath(*cgroup);
  if (!path) return Error{"this process is in no cgroup v2 hierarchy"};
  auto mountinfo = ReadSmallFile(proc_root + "/self/mountinfo");
  if (!mountinfo) return Error{fmt::format("cannot read {}/self/mountinfo", proc_root)};
  auto dir = ParseCgroup2Mount(*mountinfo, *path);
  if (!dir) return Error{fmt::format("the cgroup v2 hierarchy holding {} is not mounted here", *path)};
  return *dir;
}

Result<RunCgroup> RunCgroup::Create(const std::string& parent_dir, const std::string& name) {
  std::string dir = parent_dir + "/" + name;
  if (mkdir(dir.c_str(), 0755) != 0) {
    return Error{fmt::format("cannot create cgroup {}: {}", dir, std::strerror(errno))};
  }
  UniqueFd procs(open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!procs.valid()) {
    const int err = errno;
    rmdir(dir.c_str());
    return Error{fmt::format("cannot open {}/cgroup.procs: {}", dir, std::strerror(err))};
  }
  return RunCgroup(std::move(dir), std::move(procs));
}

RunCgroup::RunCgroup(RunCgroup&& other) noexcept
    : dir_(std::exchange(other.dir_, std::string())), procs_(std::move(other.procs_)) {}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    Remove();
    dir_ = std::exchange(other.dir_, std::string());
    procs_ = std::move(other.procs_);
  }
  return *this;
}

RunCgroup::~RunCgroup() { Remove(); }

std::vector<pid_t> RunCgroup::Members() const {
  std::vector<pid_t> out;
  if (dir_.empty()) return out;
  auto text = ReadSmallFile(dir_ + "/cgroup.procs");
  if (!text) return out;
  for (const std::string& line : Split(*text, '\n')) {
    if (auto pid = ParseInt(Trim(line)); pid && *pid > 0) out.push_back(static_cast<pid_t>(*pid));
  }
  return out;
}

bool RunCgroup::KillAll() const {
  if (dir_.empty()) return false;
  UniqueFd kill_fd(open((dir_ + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC));
  return kill_fd.valid() && WriteText(kill_fd.get(), "1");
}

void RunCgroup::Remove() {
  procs_.Reset();
  if (dir_.empty()) return;
  rmdir(dir_.c_str());  // EBUSY while a process is left: the folder stays, as nothing else can be done
  dir_.clear();
}

int RemoveStaleRunCgroups(const std::string& parent_dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!StartsWith(name, "saturate-") || !entry.is_directory(ec)) continue;
    // "saturate-<pid>.<n>": the run of a saturate that is gone (killed before it could remove its cgroups).
    const std::string token = name.substr(9);
    auto pid = ParseInt(token.substr(0, token.find('.')));
    if (!pid || *pid <= 0 || token.find('.') == std::string::npos) continue;
    if (kill(static_cast<pid_t>(*pid), 0) == 0 || errno != ESRCH) continue;
    if (rmdir(entry.path().c_str()) == 0) ++removed;  // EBUSY while its processes live on: left alone
  }
  return removed;
}

namespace {

std::mutex g_missing_mu;
std::optional<std::string> g_missing;  // why the first run of this process that wanted a cgroup got none

void NoteMissing(const std::string& why) {
  std::lock_guard<std::mutex> lock(g_missing_mu);
  if (!g_missing) g_missing = why;
}

}  // namespace

std::optional<RunCgroup> MakeRunCgroup(const std::string& name) {
  if (const char* v = std::getenv("SATURATE_CGROUP"); v != nullptr && ToLower(v) == "off") return std::nullopt;
  auto parent = OwnCgroupDir();
  if (!parent) {
    NoteMissing(parent.error().message);
    return std::nullopt;
  }
  static std::once_flag swept;
  std::call_once(swept, [&] { RemoveStaleRunCgroups(*parent); });
  auto made = RunCgroup::Create(*parent, name);
  if (!made) {
    NoteMissing(made.error().message);
    return std::nullopt;
  }
  return std::move(*made);
}

std::optional<std::string> RunCgroupsMissing() {
  std::lock_guard<std::mutex> lock(g_missing_mu);
  return g_missing;
}

}  // namespace sat::run
