#include "datastore/tree_at.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace sat::datastore {
namespace {

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

UniqueFd Dup(int fd) { return UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, 0)); }

}  // namespace

UniqueFd OpenFolderBeneath(int base_fd, std::string_view rel, bool create) {
  UniqueFd current = Dup(base_fd);
  while (current.valid() && !rel.empty()) {
    const size_t slash = rel.find('/');
    const std::string part(rel.substr(0, slash));
    rel = slash == std::string_view::npos ? std::string_view() : rel.substr(slash + 1);
    if (part.empty() || part == "." || part == "..") {
      errno = EINVAL;
      return UniqueFd();
    }
    if (create && mkdirat(current.get(), part.c_str(), 0700) != 0 && errno != EEXIST) return UniqueFd();
    current = UniqueFd(openat(current.get(), part.c_str(), kFolderFlags));
  }
  return current;
}

UniqueFd OpenFolderPath(std::string_view absolute) {
  if (absolute.empty() || absolute.front() != '/') {
    errno = EINVAL;
    return UniqueFd();
  }
  UniqueFd root(open("/", kFolderFlags));
  if (!root.valid()) return root;
  while (!absolute.empty() && absolute.front() == '/') absolute.remove_prefix(1);
  while (!absolute.empty() && absolute.back() == '/') absolute.remove_suffix(1);
  return OpenFolderBeneath(root.get(), absolute);
}

std::pair<std::string_view, std::string_view> SplitLast(std::string_view rel) {
  const size_t slash = rel.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), rel};
  return {rel.substr(0, slash), rel.substr(slash + 1)};
}

std::vector<std::string> ListFolder(int fd, int* err) {
  std::vector<std::string> names;
  if (err) *err = 0;
  UniqueFd copy = Dup(fd);
  DIR* dir = copy.valid() ? fdopendir(copy.get()) : nullptr;
  if (dir == nullptr) {
    if (err) *err = errno;
    return names;
  }
  (void)copy.Release();  // the stream owns it now
  rewinddir(dir);
  errno = 0;
  while (const dirent* d = readdir(dir)) {
    const std::string_view name = d->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (err) *err = errno;
  closedir(dir);
  return names;
}

int RemoveTreeAt(int parent_fd, const std::string& name) {
  struct stat st {};
  if (fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : errno;
  if (S_ISDIR(st.st_mode)) {
    UniqueFd dir(openat(parent_fd, name.c_str(), kFolderFlags));
    if (!dir.valid()) return errno;
    // A read-only folder of the copy: its entries cannot be removed until it is writable again.
    if ((st.st_mode & 0700) != 0700) (void)fchmod(dir.get(), (st.st_mode & 07777) | 0700);
    int err = 0;
    for (const std::string& child : ListFolder(dir.get(), &err)) {
      if (const int e = RemoveTreeAt(dir.get(), child); e != 0) return e;
    }
    if (err != 0) return err;
    if (unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0) return errno == ENOENT ? 0 : errno;
    return 0;
  }
  if (unlinkat(parent_fd, name.c_str(), 0) != 0) return errno == ENOENT ? 0 : errno;
  return 0;
}

uint64_t AllocatedBytesAt(int parent_fd, const std::string& name) {
  struct stat st {};
  if (fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  uint64_t bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  if (!S_ISDIR(st.st_mode)) return bytes;
  UniqueFd dir(openat(parent_fd, name.c_str(), kFolderFlags));
  if (!dir.valid()) return bytes;
  for (const std::string& child : ListFolder(dir.get())) bytes += AllocatedBytesAt(dir.get(), child);
  return bytes;
}

void MakeFoldersWritable(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return;
  if ((st.st_mode & 0700) != 0700) (void)fchmod(fd, (st.st_mode & 07777) | 0700);
  for (const std::string& child : ListFolder(fd)) {
    UniqueFd sub(openat(fd, child.c_str(), kFolderFlags));
    if (sub.valid()) MakeFoldersWritable(sub.get());
  }
}

}  // namespace sat::datastore
