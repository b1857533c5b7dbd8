#include "util/atomic_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace sat {

Status WriteFileAtomically(const std::string& path, const std::string& text, mode_t mode) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  // A file left by an earlier process with this pid goes first: O_EXCL then gives the new file `mode`, not its bits.
  // The folder may be shared: O_EXCL with O_NOFOLLOW never writes through a link planted at the temporary name
  // (unlink removes a link, not its target), and rename replaces a link at `path` instead of following it.
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  int open_fd = fd;
  auto failed = [&](int err) {
    if (open_fd >= 0) close(open_fd);
    unlink(tmp.c_str());
    return Error{fmt::format("cannot write {}: {}", path, std::strerror(err))};
  };
  if (fd < 0) return failed(errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(errno);
    done += static_cast<size_t>(n);
  }
  // Durable before it is visible.
  if (fsync(fd) != 0) return failed(errno);
  open_fd = -1;
  if (close(fd) != 0) return failed(errno);
  if (rename(tmp.c_str(), path.c_str()) != 0) return failed(errno);
  // The rename survives a crash once the folder is synced (best effort: some filesystems refuse it).
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dir_fd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)fsync(dir_fd);
    close(dir_fd);
  }
  return Status::Ok();
}

}  // namespace sat
