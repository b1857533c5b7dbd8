#include "sweep/degree_record.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/cache_home.h"
#include "util/json_text.h"

namespace sat::sweep {
namespace {

constexpr int kFormat = 1;
constexpr size_t kMaxFileBytes = 4 << 20;

std::string Key(const std::string& machine, const std::string& command, const std::string& shape) {
  return JsonText(nlohmann::json::array({machine, command, shape}));
}

// The file's text, read without following a link and only when it is a regular file of this user's.
Result<std::string> ReadPrivate(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::string();
    return Error{errno == ELOOP ? "it is a symbolic link, which saturate does not follow" : std::strerror(errno)};
  }
  struct stat st {};
  std::string why;
  if (fstat(fd, &st) != 0) why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "it is not a regular file";
  else if (st.st_uid != geteuid()) why = fmt::format("it belongs to user {}, not to you", st.st_uid);
  else if (static_cast<size_t>(st.st_size) > kMaxFileBytes) why = "it is larger than any record saturate writes";
  std::string text;
  if (why.empty()) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, text.data() + got, text.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  close(fd);
  if (!why.empty()) return Error{why};
  return text;
}

}  // namespace

std::string MachineKey(const std::string& hostname, unsigned cores, const std::vector<std::string>& devices) {
  return fmt::format("{}|{} cores|{}", hostname, cores, fmt::join(devices, ","));
}

std::string CommandKey(const Spec& spec) {
  return JsonText(nlohmann::json{{"program", spec.program},
                                 {"command", spec.command},
                                 {"style", spec.command_style == CommandStyle::kWandb ? "wandb" : "placeholders"}});
}

DegreeRecord DegreeRecord::Load(const std::string& path, std::string* problem) {
  DegreeRecord record;
  record.path_ = path;
  auto text = ReadPrivate(path);
  if (!text) {
    *problem = fmt::format("the packing record {} was not read: {}", path, text.error().message);
    return record;
  }
  if (text->empty()) return record;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != kFormat || !j.contains("entries") ||
      !j["entries"].is_array()) {
    *problem = fmt::format("the packing record {} is not one this saturate writes: starting afresh", path);
    return record;
  }
  for (const nlohmann::json& e : j["entries"]) {
    // An entry that does not read as one is left out; the others stand.
    if (!e.is_object() || !e.contains("key") || !e["key"].is_string()) continue;
    const int degree = e.value("degree", 0);
    const double mem = e.value("mem_bytes", -1.0), updated = e.value("updated_unix", 0.0);
    if (degree < 1 || degree > 1024 || !(mem >= 0) || mem > 1e18) continue;
    Entry entry;
    entry.shape.degree = degree;
    entry.shape.mem_bytes = static_cast<uint64_t>(mem);
    entry.shape.held = e.value("held", false);
    entry.shape.short_runs = e.value("short_runs", false);
    entry.shape.clocked = e.value("clocked", false);
    entry.updated_unix = updated;
    record.entries_[e["key"].get<std::string>()] = entry;
  }
  return record;
}

std::optional<RememberedShape> DegreeRecord::Find(const std::string& machine, const std::string& command,
                                                  const std::string& shape) const {
  auto it = entries_.find(Key(machine, command, shape));
  if (it == entries_.end()) return std::nullopt;
  return it->second.shape;
}

void DegreeRecord::Put(const std::string& machine, const std::string& command, const std::string& shape,
                       const RememberedShape& learnt, double now_unix) {
  entries_[Key(machine, command, shape)] = Entry{learnt, now_unix};
  if (entries_.size() <= kMaxEntries) return;
  // The oldest entry goes.
  auto oldest = std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
    return a.second.updated_unix < b.second.updated_unix;
  });
  entries_.erase(oldest);
}

Status DegreeRecord::Save() const {
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  if (std::string why = PrivateFolderProblem(parent.empty() ? "." : parent.string()); !why.empty())
    return Error{fmt::format("the packing record {} was not written: its folder {}", path_, why)};
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& [key, e] : entries_) {
    entries.push_back({{"key", key},
                       {"degree", e.shape.degree},
                       {"held", e.shape.held},
                       {"mem_bytes", e.shape.mem_bytes},
                       {"short_runs", e.shape.short_runs},
                       {"clocked", e.shape.clocked},
                       {"updated_unix", e.updated_unix}});
  }
  return WriteFileAtomically(path_, JsonText(nlohmann::json{{"format", kFormat}, {"entries", entries}}, 1) + "\n",
                             kPrivateFileMode);
}

std::optional<std::string> DefaultDegreeRecordPath() {
  if (auto dir = SaturateCacheDir(CacheHomesOfThisProcess())) return *dir + "/packing.json";
  return std::nullopt;
}

}  // namespace sat::sweep
