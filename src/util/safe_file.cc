#include "util/safe_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sat {
namespace {

constexpr int kTries = 8;  // a name planted again and again between the look and the creation gives up here

Error Refused(const std::string& path, const std::string& why) {
  return Error{fmt::format("cannot write {}: {}", path, why)};
}

}  // namespace

Result<UniqueFd> OpenForWriting(const std::string& path, WriteMode mode, mode_t perms, int* err) {
  if (err) *err = 0;
  auto failed = [&](int e) {
    if (err) *err = e;
    return Refused(path, e == ELOOP ? "it is a symbolic link, which saturate does not follow" : std::strerror(e));
  };
  for (int attempt = 0; attempt < kTries; ++attempt) {
    if (mode != WriteMode::kNew) {
      // O_NONBLOCK: a FIFO planted at the name must not hang the open; it is refused below.
      UniqueFd fd(open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                                         (mode == WriteMode::kAppend ? O_APPEND : 0)));
      if (fd.valid()) {
        struct stat st {};
        if (fstat(fd.get(), &st) != 0) return failed(errno);
        if (!S_ISREG(st.st_mode)) return Refused(path, "it is not a regular file");
        if (st.st_uid != geteuid()) return Refused(path, fmt::format("it belongs to user {}, not to you", st.st_uid));
        if (mode == WriteMode::kReplace && ftruncate(fd.get(), 0) != 0) return failed(errno);
        const int flags = fcntl(fd.get(), F_GETFL);
        if (flags >= 0) (void)fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
        return fd;
      }
      // ENXIO: a FIFO with no reader. Anything but "nothing there" is final.
      if (errno == ENXIO) return Refused(path, "it is not a regular file");
      if (errno != ENOENT) return failed(errno);
    }
    UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, perms));
    if (fd.valid()) return fd;
    // Something appeared at the name since the look: look again (kNew: that is the error).
    if (errno != EEXIST || mode == WriteMode::kNew) return failed(errno);
  }
  return Refused(path, "something keeps appearing at the name");
}

Result<std::FILE*> OpenStreamForWriting(const std::string& path, WriteMode mode, mode_t perms) {
  auto fd = OpenForWriting(path, mode, perms);
  if (!fd) return fd.error();
  std::FILE* file = fdopen(fd->get(), mode == WriteMode::kAppend ? "a" : "w");
  if (file == nullptr) return Refused(path, std::strerror(errno));
  (void)fd->Release();
  return file;
}

}  // namespace sat
