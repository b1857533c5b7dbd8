#include "datastore/cold_read.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "telemetry/page_cache.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace sat::datastore {
namespace {

namespace fs = std::filesystem;

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double ThreadCpu() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The whole file into `out`; false when it cannot be opened or read (gone since it was listed, not readable).
bool ReadWhole(const std::string& path, std::string& out) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  out.clear();
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

Status WriteWhole(const std::string& path, const std::string& data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) return Error{fmt::format("cannot create {}: {}", path, std::strerror(errno))};
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{fmt::format("cannot write {}: {}", path, std::strerror(errno))};
    done += static_cast<size_t>(n);
  }
  // On the drive before it is read back cold: dirty pages cannot be dropped from the cache.
  if (::fdatasync(fd.get()) != 0) return Error{fmt::format("cannot write {}: {}", path, std::strerror(errno))};
  return Status::Ok();
}

// The sample: evenly across the list, regular files only, until max_files or max_bytes; with their devices.
struct Sample {
  std::vector<std::string> paths;
  std::set<dev_t> devices;
};

Sample PickSample(const std::vector<std::string>& files, const ColdReadOptions& o) {
  Sample s;
  uint64_t bytes = 0;
  for (const std::string& path : telemetry::EvenSample(files, o.max_files)) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    s.paths.push_back(path);
    s.devices.insert(st.st_dev);
    bytes += static_cast<uint64_t>(st.st_size);
    if (bytes >= o.max_bytes) break;
  }
  return s;
}

// A fresh folder under the first usable candidate, or why none is.
Result<std::string> MakeCopyFolder(const ColdReadOptions& o, const std::set<dev_t>& source_devices,
                                   std::string* chosen) {
  std::vector<std::string> why;
  for (const std::string& dir : o.local_dirs) {
    if (dir.empty()) continue;
    struct stat st {};
    struct statfs sf {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      why.push_back(dir + " is not a folder");
    } else if (o.require_other_filesystem && source_devices.count(st.st_dev)) {
      why.push_back(dir + " is on the data's own file system");
    } else if (::statfs(dir.c_str(), &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
      why.push_back(dir + " is on tmpfs (memory, never cold)");
    } else {
      std::string pattern = (fs::path(dir) / "saturate-cold-read-XXXXXX").string();
      if (::mkdtemp(pattern.data()) != nullptr) {
        *chosen = dir;
        return pattern;
      }
      why.push_back(fmt::format("cannot make a folder in {}: {}", dir, std::strerror(errno)));
    }
  }
  if (why.empty()) return Error{"no local folder was offered for the copy"};
  return Error{"no local folder for the copy: " + JoinNonEmpty(why, "; ")};
}

// Removes the copy's folder on every way out.
class RemoveOnExit {
 public:
  explicit RemoveOnExit(std::string dir) : dir_(std::move(dir)) {}
  ~RemoveOnExit() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  RemoveOnExit(const RemoveOnExit&) = delete;
  RemoveOnExit& operator=(const RemoveOnExit&) = delete;

 private:
  std::string dir_;
};

}  // namespace

double ColdReadComparison::LocalTimeRatio() const {
  if (source.seconds <= 0) return 1;
  return local.seconds / source.seconds;
}

double CopySecondsAtPace(const ColdReadTiming& t, size_t total_files, uint64_t total_bytes) {
  if (t.files == 0 || t.seconds <= 0) return 0;
  double by_files = static_cast<double>(total_files) / static_cast<double>(t.files);
  double by_bytes = t.bytes > 0 ? static_cast<double>(total_bytes) / static_cast<double>(t.bytes) : 0;
  return t.seconds * std::max(by_files, by_bytes);
}

Result<ColdReadComparison> CompareColdReads(const std::vector<std::string>& files, const ColdReadOptions& o) {
  Sample sample = PickSample(files, o);
  if (sample.paths.empty()) return Error{"none of the run's data files could be read any more"};
  ColdReadComparison c;
  Result<std::string> folder = MakeCopyFolder(o, sample.devices, &c.local_dir);
  if (!folder) return folder.error();
  RemoveOnExit remove(*folder);

  // 1. Each file cold from its source, and into the copy (the copy's writes are not timed).
  std::vector<std::string> copies;
  std::string data;
  for (const std::string& path : sample.paths) {
    (void)telemetry::DropFromPageCache(path);  // a file that cannot be dropped is read as it is
    double t0 = Now(), c0 = ThreadCpu();
    bool read = ReadWhole(path, data);
    double took = Now() - t0, cpu = ThreadCpu() - c0;
    if (!read) {
      ++c.vanished;
      continue;
    }
    std::string copy = (fs::path(*folder) / fmt::format("{:06d}", copies.size())).string();
    if (Status st = WriteWhole(copy, data); !st) return st.error();
    c.source.files += 1;
    c.source.bytes += data.size();
    c.source.seconds += took;
    c.source.cpu_seconds += cpu;
    copies.push_back(std::move(copy));
  }
  if (copies.empty()) return Error{"none of the run's data files could be read any more"};

  // 2. The same bytes cold from the local copy.
  for (const std::string& copy : copies) {
    if (Status st = telemetry::DropFromPageCache(copy); !st) return st.error();
  }
  for (const std::string& copy : copies) {
    double t0 = Now(), c0 = ThreadCpu();
    if (!ReadWhole(copy, data)) return Error{fmt::format("cannot read back the local copy {}", copy)};
    c.local.seconds += Now() - t0;
    c.local.cpu_seconds += ThreadCpu() - c0;
    c.local.files += 1;
    c.local.bytes += data.size();
  }
  return c;
}

}  // namespace sat::datastore
