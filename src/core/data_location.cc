#include "core/data_location.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "telemetry/mount_table.h"
#include "util/strings.h"

namespace sat::core {
namespace {

constexpr std::array<std::string_view, 16> kNetworkFs = {
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "ceph",
    "lustre", "gpfs", "beegfs", "glusterfs", "orangefs", "pvfs2", "wekafs", "davfs"};
constexpr std::array<std::string_view, 11> kNetworkFuse = {
    "sshfs", "s3fs", "gcsfuse", "rclone", "goofys", "juicefs",
    "glusterfs", "ceph-fuse", "blobfuse", "blobfuse2", "mountpoint-s3"};

// System folders whose files are the interpreter's and the libraries', never training data. /run and /tmp are
// not among them: removable drives mount under /run/media, and data is often staged in /tmp.
constexpr std::array<std::string_view, 11> kSystemPrefixes = {
    "/dev/", "/proc/", "/sys/", "/etc/", "/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/"};
constexpr std::array<std::string_view, 4> kPythonInfixes = {"/site-packages/", "/dist-packages/", "/__pycache__/",
                                                            "/lib/python3."};

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool IsCodeOrSystemFile(std::string_view path) {
  for (std::string_view prefix : kSystemPrefixes) {
    if (StartsWith(path, prefix)) return true;
  }
  for (std::string_view infix : kPythonInfixes) {
    if (path.find(infix) != std::string_view::npos) return true;
  }
  std::string_view name = path.substr(path.rfind('/') + 1);
  return EndsWith(name, ".py") || EndsWith(name, ".pyc") || EndsWith(name, ".so") ||
         name.find(".so.") != std::string_view::npos;
}

namespace {

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// False only when fdinfo says the descriptor was opened write-only (a log or checkpoint being written).
bool OpenForReading(const std::string& fdinfo_path) {
  std::optional<std::string> info = ReadFile(fdinfo_path);
  if (!info) return true;
  for (const std::string& line : Split(*info, '\n')) {
    if (!StartsWith(line, "flags:")) continue;
    std::string digits(Trim(std::string_view(line).substr(6)));
    char* end = nullptr;
    long flags = std::strtol(digits.c_str(), &end, 8);
    if (end == digits.c_str()) return true;
    return (flags & O_ACCMODE) != O_WRONLY;
  }
  return true;
}

void AddOpenFiles(const std::string& proc_dir, std::set<std::string>& out) {
  std::string fd_dir = proc_dir + "/fd";
  DIR* dir = opendir(fd_dir.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string link = fd_dir + "/" + name;
    std::array<char, 4096> target{};
    ssize_t n = readlink(link.c_str(), target.data(), target.size() - 1);
    if (n <= 0) continue;
    std::string path(target.data(), static_cast<size_t>(n));
    // Sockets, pipes and anonymous inodes read "socket:[123]"; unlinked files end in " (deleted)".
    if (!StartsWith(path, "/") || EndsWith(path, " (deleted)") || IsCodeOrSystemFile(path)) continue;
    if (!IsRegularFile(link) || !OpenForReading(proc_dir + "/fdinfo/" + name)) continue;
    out.insert(std::move(path));
  }
  closedir(dir);
}

void AddMappedFiles(const std::string& proc_dir, std::set<std::string>& out) {
  std::optional<std::string> maps = ReadFile(proc_dir + "/maps");
  if (!maps) return;
  // A file mapped executable anywhere is code (an interpreter or a library); its read-only segments are too.
  std::set<std::string> code, data;
  for (const std::string& line : Split(*maps, '\n')) {
    // address perms offset dev inode path; the path is the rest of the line and may hold spaces.
    std::vector<std::string_view> f = telemetry::TableFields(line);
    if (f.size() < 6 || f[1].size() < 3 || f[5][0] != '/') continue;
    size_t path_at = static_cast<size_t>(f[5].data() - line.data());
    std::string path = telemetry::UnescapeOctal(std::string_view(line).substr(path_at));
    (f[1][2] == 'x' ? code : data).insert(std::move(path));
  }
  for (const std::string& path : data) {
    if (code.count(path) || EndsWith(path, " (deleted)") || IsCodeOrSystemFile(path)) continue;
    if (IsRegularFile(path)) out.insert(path);
  }
}

}  // namespace

bool IsNetworkFs(std::string_view fs_type) {
  if (std::find(kNetworkFs.begin(), kNetworkFs.end(), fs_type) != kNetworkFs.end()) return true;
  constexpr std::string_view kFuse = "fuse.";
  if (!StartsWith(fs_type, kFuse)) return false;
  std::string_view client = fs_type.substr(kFuse.size());
  return std::find(kNetworkFuse.begin(), kNetworkFuse.end(), client) != kNetworkFuse.end();
}

std::vector<DataLocation> LocateFiles(const std::vector<std::string>& paths, std::string_view proc_root) {
  std::string root(proc_root);
  std::optional<std::string> table = ReadFile(root + "/self/mountinfo");
  if (!table) table = ReadFile(root + "/mounts");
  std::vector<telemetry::MountEntry> mounts =
      table ? telemetry::ParseMountTable(*table) : std::vector<telemetry::MountEntry>{};

  std::set<std::string> unique;
  for (const std::string& p : paths) {
    if (StartsWith(p, "/")) unique.insert(p);
  }
  // Keyed by mount point: paths arrive sorted, so each group's example is its first file.
  std::map<std::string, DataLocation> groups;
  for (const std::string& path : unique) {
    std::optional<telemetry::MountEntry> mount = telemetry::FindMount(mounts, path);
    std::string key = mount ? mount->mount_point : std::string();
    auto [it, inserted] = groups.try_emplace(key);
    DataLocation& loc = it->second;
    if (inserted) {
      loc.path = path;
      if (mount) {
        loc.mount_point = mount->mount_point;
        loc.fs_type = mount->fs_type;
        loc.device = mount->device;
        loc.network = IsNetworkFs(mount->fs_type);
      }
    }
    ++loc.file_count;
  }
  std::vector<DataLocation> out;
  for (auto& [key, loc] : groups) out.push_back(std::move(loc));
  std::stable_sort(out.begin(), out.end(),
                   [](const DataLocation& a, const DataLocation& b) { return a.file_count > b.file_count; });
  return out;
}

std::vector<std::string> OpenRegularFiles(pid_t pid, std::string_view proc_root) {
  std::string proc_dir = std::string(proc_root) + "/" + std::to_string(pid);
  std::set<std::string> files;
  AddOpenFiles(proc_dir, files);
  AddMappedFiles(proc_dir, files);
  return {files.begin(), files.end()};
}

}  // namespace sat::core
