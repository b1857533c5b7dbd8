#include "sweep/controller_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <ctime>

#include "sweep/journal.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

// What the holder wrote: "host H pid P since UNIX"; a holder that has not written yet reads as "".
std::string ReadOwner(int fd) {
  char buf[512] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::string(Trim(std::string_view(buf, static_cast<size_t>(n)))) : "";
}

std::string DescribeOwner(const std::string& owner) {
  long long pid = 0;
  double unix = 0;
  char h[256] = {};
  if (std::sscanf(owner.c_str(), "host %255s pid %lld since %lf", h, &pid, &unix) != 3) {
    return owner.empty() ? "another saturate" : fmt::format("another saturate ({})", owner);
  }
  const std::time_t t = static_cast<std::time_t>(unix);
  std::tm tm{};
  localtime_r(&t, &tm);
  char when[64] = {};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("saturate pid {} on host {} since {}", pid, h, when);
}

}  // namespace

std::string ControllerLockPath(const std::string& journal_path) { return journal_path + ".lock"; }

Result<std::unique_ptr<ControllerLock>> ControllerLock::Acquire(const std::string& journal_path) {
  const std::string path = ControllerLockPath(journal_path);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create the journal's lock file {}: {}", path, std::strerror(errno))};
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string owner = ReadOwner(fd);
    close(fd);
    if (err == EWOULDBLOCK) {
      return UsageError(fmt::format("journal {} is in use by {} (lock file {}): one controller per journal; wait "
                                    "for it to end, or stop it, then --resume",
                                    journal_path, DescribeOwner(owner), path));
    }
    return Error{fmt::format("cannot lock {}: {}", path, std::strerror(err))};
  }
  const std::string owner = fmt::format("host {} pid {} since {:.0f}\n", HostName(), getpid(), NowUnix());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, owner.data(), owner.size(), 0) != static_cast<ssize_t>(owner.size())) {
    const int err = errno;
    close(fd);
    return Error{fmt::format("cannot write {}: {}", path, std::strerror(err))};
  }
  return std::unique_ptr<ControllerLock>(new ControllerLock(path, fd));
}

ControllerLock::~ControllerLock() {
  // The owner line goes first, so a reader never names a holder that is gone; the file stays (removing it could
  // race a controller that opened it and is about to lock it).
  (void)ftruncate(fd_, 0);
  close(fd_);
}

}  // namespace sat::sweep
