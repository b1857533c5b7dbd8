#include "sweep/controller_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "sweep/journal.h"
#include "util/host.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

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

std::string ControllerLockPath(const std::string& journal_path) {
  namespace fs = std::filesystem;
  // The journal itself when it exists (a symlinked journal is its target), else its folder resolved plus its name.
  char resolved[PATH_MAX];
  if (realpath(journal_path.c_str(), resolved) != nullptr) return std::string(resolved) + ".lock";
  const fs::path p(journal_path);
  const std::string folder = p.parent_path().empty() ? "." : p.parent_path().string();
  if (realpath(folder.c_str(), resolved) == nullptr) return journal_path + ".lock";
  return (fs::path(resolved) / p.filename()).string() + ".lock";
}

namespace {

// Opens the lock file without following a link and without truncating: created new (O_EXCL) when missing, else
// opened only when it is a plain file with one name that holds nothing or a holder line saturate wrote. A file
// that is anything else is not saturate's, and is refused untouched.
Result<int> OpenLockFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) return fd;
  if (errno != EEXIST) {
    return Error{fmt::format("cannot create the journal's lock file {}: {}", path, std::strerror(errno))};
  }
  fd = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ELOOP) {
    return UsageError(fmt::format("the journal's lock file {} is a symbolic link; saturate does not follow it (it "
                                  "would write where the link points): remove the link",
                                  path));
  }
  if (fd < 0) return Error{fmt::format("cannot open the journal's lock file {}: {}", path, std::strerror(errno))};
  struct stat st {};
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (st.st_nlink != 1) {
    why = fmt::format("it has {} hard links, so it is another file's too", st.st_nlink);
  } else if (const std::string text = ReadOwner(fd);
             st.st_size > 512 || (!text.empty() && !text.starts_with("host "))) {
    why = "it holds data saturate did not write";
  }
  if (why.empty()) return fd;
  close(fd);
  return UsageError(fmt::format("the journal's lock file {} is not saturate's ({}); saturate leaves it untouched: "
                                "move it away, or give the journal another name",
                                path, why));
}

}  // namespace

Result<std::unique_ptr<ControllerLock>> ControllerLock::Acquire(const std::string& journal_path) {
  const std::string path = ControllerLockPath(journal_path);
  auto opened = OpenLockFile(path);
  if (!opened) return opened.error();
  const int fd = *opened;
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
  // The file is saturate's (OpenLockFile checked it), so its old holder line may go.
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
