#include "datastore/store_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "datastore/manifest.h"
#include "datastore/tree_at.h"
#include "util/utf8.h"

namespace sat::datastore {
namespace {

constexpr std::string_view kMarkerText =
    "This folder is saturate's store of staged datasets (saturate sweep --stage). saturate deletes the copies in it\n"
    "to make room: keep nothing else here.\n";

// What an older saturate's store holds: <key>.json (and its temporary <key>.json.tmp.<pid>), .data, .partial,
// .partial.log, .lock, .use.
bool StoreLayoutName(const std::string& name) {
  for (std::string_view suffix : {".json", ".data", ".partial", ".partial.log", ".lock", ".use"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix) && IsKey(std::string_view(name).substr(0, name.size() - suffix.size()))) {
      return true;
    }
  }
  const size_t tmp = name.find(".json.tmp.");
  return tmp != std::string::npos && IsKey(std::string_view(name).substr(0, tmp));
}

// The names in the folder that a store of this user's would not hold: not of the store's form (the marker is), or
// not this user's. At most three, then "...".
std::vector<std::string> ForeignNames(int fd, int* err) {
  std::vector<std::string> foreign;
  for (const std::string& name : ListFolder(fd, err)) {
    struct stat st {};
    const bool ours = fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid == geteuid();
    if (!ours || (name != kStoreMarker && !StoreLayoutName(name))) foreign.push_back(name);
  }
  std::sort(foreign.begin(), foreign.end());
  if (foreign.size() > 3) foreign.resize(3), foreign.push_back("...");
  return foreign;
}

const char* kWhatToDo = "give a folder of your own with --stage-dir (saturate.stage_dir)";

// Whether the marker is there: a regular file of this user's (the folder is checked to be theirs alone first).
bool Marked(int fd) {
  struct stat st {};
  return fstatat(fd, kStoreMarker, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
}

Status WriteMarker(int fd, const std::string& root) {
  UniqueFd marker(openat(fd, kStoreMarker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!marker.valid()) {
    if (errno == EEXIST && Marked(fd)) return Status::Ok();  // another saturate made the store just now
    return UsageError(fmt::format("stage folder {}: cannot mark it as saturate's store: {}", root, std::strerror(errno)));
  }
  if (write(marker.get(), kMarkerText.data(), kMarkerText.size()) != static_cast<ssize_t>(kMarkerText.size()) ||
      fsync(marker.get()) != 0) {
    return UsageError(fmt::format("stage folder {}: cannot write its marker: {}", root, std::strerror(errno)));
  }
  (void)fsync(fd);
  return Status::Ok();
}

}  // namespace

Result<std::optional<UniqueFd>> OpenStoreFolder(const std::string& root, bool create) {
  if (root.empty()) return UsageError("the stage folder is empty; " + std::string(kWhatToDo));
  if (create) {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(root).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST) {
      return UsageError(fmt::format("stage folder {} cannot be created: {}; {}", root, std::strerror(errno), kWhatToDo));
    }
  }
  UniqueFd fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT && !create) return std::optional<UniqueFd>();
    struct stat link {};
    if ((errno == ELOOP || errno == ENOTDIR) && lstat(root.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      return UsageError(fmt::format("stage folder {} is a symbolic link, which saturate does not follow there (one "
                                    "planted at a shared name would point the store, and what it deletes, at "
                                    "another folder); give the folder itself, or {}",
                                    root, kWhatToDo));
    }
    if (errno == ENOTDIR) return UsageError(fmt::format("stage folder {} is not a folder; {}", root, kWhatToDo));
    return UsageError(fmt::format("stage folder {} cannot be opened: {}; {}", root, std::strerror(errno), kWhatToDo));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return UsageError(fmt::format("stage folder {}: {}", root, std::strerror(errno)));
  if (st.st_uid != geteuid()) {
    return UsageError(fmt::format("stage folder {} belongs to user {}, not to you: saturate does not use a store "
                                  "someone else made (its copies could be altered, and it could read yours). "
                                  "Remove it (its owner or root can), or {}",
                                  root, st.st_uid, kWhatToDo));
  }
  if (!Marked(fd.get())) {
    int err = 0;
    std::vector<std::string> foreign = ForeignNames(fd.get(), &err);
    if (err != 0) return UsageError(fmt::format("stage folder {} cannot be read: {}", root, std::strerror(err)));
    if (!foreign.empty()) {
      return UsageError(fmt::format("stage folder {} is not a saturate store: it holds files saturate did not make "
                                    "({}) and no {} marker. saturate deletes old copies in its store to make room, "
                                    "so it keeps the store in a folder of its own: give an empty or new folder with "
                                    "--stage-dir (saturate.stage_dir)",
                                    root, fmt::join(foreign, ", "), kStoreMarker));
    }
    const bool empty = ListFolder(fd.get()).empty();
    if (!create) {
      if (empty) return std::optional<UniqueFd>();
    } else {
      // A folder of this user's that holds nothing yet: private before anything goes in (then looked at again, in
      // case someone added to it meanwhile), then marked.
      if (empty && (st.st_mode & 07777) != 0700) {
        if (fchmod(fd.get(), 0700) != 0) {
          return UsageError(fmt::format("stage folder {}: cannot make it private (0700): {}", root, std::strerror(errno)));
        }
        if (foreign = ForeignNames(fd.get(), &err); !foreign.empty() || err != 0) {
          return UsageError(fmt::format("stage folder {}: files appeared in it while saturate made it a store ({}); {}",
                                        root, fmt::join(foreign, ", "), kWhatToDo));
        }
      }
      if (auto s = WriteMarker(fd.get(), root); !s) return s.error();
      if (fstat(fd.get(), &st) != 0) return UsageError(fmt::format("stage folder {}: {}", root, std::strerror(errno)));
    }
  }
  if ((st.st_mode & 07777) != 0700) {
    return UsageError(fmt::format("stage folder {} has mode {:04o}, not 0700: a store must be yours alone (its copies "
                                  "may be private data, and anyone who can write it can change what runs read). "
                                  "`chmod 700 {}` if you trust what it holds, or remove it",
                                  root, st.st_mode & 07777, root));
  }
  return std::optional<UniqueFd>(std::move(fd));
}

Result<UniqueFd> OpenStoreFile(int root_fd, const std::string& name, const std::string& root) {
  UniqueFd fd(openat(root_fd, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return Error{fmt::format("stage store: cannot open {}: {}", VisibleText(root + "/" + name), std::strerror(errno))};
  }
  return fd;
}


std::optional<std::string> ReadStoreFile(int dir_fd, const std::string& name) {
  UniqueFd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string text;
  char buf[1 << 16];
  ssize_t n = 0;
  while ((n = read(fd.get(), buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  if (n < 0) return std::nullopt;
  return text;
}


}  // namespace sat::datastore
