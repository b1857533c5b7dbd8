#include "stage/manifest.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

namespace sat::stage {
namespace {

namespace fs = std::filesystem;

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

// Walks one folder of the source; `rel` is its path below the source ("" for the source itself).
class Walker {
 public:
  Walker(std::string given, std::string root) : given_(std::move(given)), root_(std::move(root)) {}

  Status Walk(const std::string& rel, Manifest& m) {
    const std::string dir_path = rel.empty() ? root_ : root_ + "/" + rel;
    DIR* dir = opendir(dir_path.c_str());
    if (!dir) return Unreadable(rel, errno);
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* d = readdir(dir)) {
      const std::string name = d->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    const int read_errno = errno;
    closedir(dir);
    if (read_errno != 0) return Unreadable(rel, read_errno);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (auto s = Add(Join(rel, name), m); !s) return s;
    }
    return Status::Ok();
  }

 private:
  Status Add(const std::string& rel, Manifest& m) {
    const std::string full = root_ + "/" + rel;
    struct stat st {};
    // A file removed between readdir and here is a source changing under us: the caller scans again later.
    if (lstat(full.c_str(), &st) != 0) return Unreadable(rel, errno);
    Entry e;
    e.rel = rel;
    if (S_ISDIR(st.st_mode)) {
      e.type = Entry::Type::kDir;
      m.entries.push_back(e);
      return Walk(rel, m);
    }
    if (S_ISREG(st.st_mode)) {
      if (access(full.c_str(), R_OK) != 0) return Unreadable(rel, errno);
      e.size = static_cast<uint64_t>(st.st_size);
      e.mtime_ns = MtimeNs(st);
      m.total_bytes += e.size;
      ++m.file_count;
      m.entries.push_back(e);
      return Status::Ok();
    }
    if (S_ISLNK(st.st_mode)) return AddLink(rel, full, m);
    return UsageError(fmt::format("stage path {}: {} is neither a file, a folder nor a link; saturate copies only "
                                  "those",
                                  given_, rel));
  }

  // Keeps a link whose target stays inside the source, rewritten relative to the link's folder.
  Status AddLink(const std::string& rel, const std::string& full, Manifest& m) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(full.c_str(), buf, sizeof buf - 1);
    if (n < 0) return Unreadable(rel, errno);
    const std::string target(buf, static_cast<size_t>(n));
    const fs::path link_dir = fs::path(full).parent_path();
    const fs::path resolved = (fs::path(target).is_absolute() ? fs::path(target) : link_dir / target).lexically_normal();
    const fs::path inside = resolved.lexically_relative(root_);
    if (inside.empty() || *inside.begin() == "..") {
      return UsageError(fmt::format("stage path {}: the link {} points outside it (to {}); stage the target itself, "
                                    "or replace the link by a copy of what it points to",
                                    given_, rel, target));
    }
    Entry e;
    e.rel = rel;
    e.type = Entry::Type::kLink;
    e.target = resolved.lexically_relative(link_dir).string();
    m.entries.push_back(e);
    return Status::Ok();
  }

  Status Unreadable(const std::string& rel, int err) const {
    if (rel.empty()) return UsageError(fmt::format("stage path {}: cannot read it: {}", given_, std::strerror(err)));
    return UsageError(fmt::format("stage path {}: cannot read {}: {}", given_, rel, std::strerror(err)));
  }

  std::string given_, root_;
};

const char* TypeName(Entry::Type t) {
  switch (t) {
    case Entry::Type::kFile: return "file";
    case Entry::Type::kDir: return "dir";
    case Entry::Type::kLink: return "link";
  }
  return "file";
}

}  // namespace

std::string Manifest::Key() const {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  // Each field ends with a NUL so that no two lists of fields hash the same text.
  auto add = [&](std::string_view s) {
    XXH3_64bits_update(state, s.data(), s.size());
    XXH3_64bits_update(state, "", 1);
  };
  add("saturate-stage-v1");
  add(source);
  for (const Entry& e : entries) {
    add(e.rel);
    add(TypeName(e.type));
    add(std::to_string(e.size));
    add(std::to_string(e.mtime_ns));
    add(e.target);
  }
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  std::string base = fs::path(source).filename().string();
  // The name is for people reading the store; only safe characters, and not too long.
  for (char& c : base) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  if (base.empty() || base[0] == '.') base = "data" + base;
  if (base.size() > 48) base.resize(48);
  return fmt::format("{}-{:016x}", base, h);
}

Result<Manifest> ScanSource(const std::string& path) {
  if (path.empty()) return UsageError("stage path is empty");
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return UsageError(fmt::format("stage path {} does not exist", path));
    return UsageError(fmt::format("stage path {}: cannot read it: {}", path, std::strerror(errno)));
  }
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved)) {
    return UsageError(fmt::format("stage path {}: cannot resolve it: {}", path, std::strerror(errno)));
  }
  Manifest m;
  m.source = resolved;
  if (S_ISREG(st.st_mode)) {
    if (access(resolved, R_OK) != 0) {
      return UsageError(fmt::format("stage path {}: cannot read it: {}", path, std::strerror(errno)));
    }
    m.single_file = true;
    m.entries.push_back(Entry{"", Entry::Type::kFile, static_cast<uint64_t>(st.st_size), MtimeNs(st), ""});
    m.total_bytes = static_cast<uint64_t>(st.st_size);
    m.file_count = 1;
    return m;
  }
  if (!S_ISDIR(st.st_mode)) {
    return UsageError(fmt::format("stage path {} is neither a file nor a folder", path));
  }
  Walker walker(path, m.source);
  if (auto s = walker.Walk("", m); !s) return s.error();
  return m;
}

nlohmann::json ManifestToJson(const Manifest& m) {
  nlohmann::json entries = nlohmann::json::array();
  for (const Entry& e : m.entries) {
    nlohmann::json j = {{"rel", e.rel}, {"type", TypeName(e.type)}};
    if (e.type == Entry::Type::kFile) {
      j["size"] = e.size;
      j["mtime_ns"] = e.mtime_ns;
    }
    if (e.type == Entry::Type::kLink) j["target"] = e.target;
    entries.push_back(std::move(j));
  }
  return {{"source", m.source},           {"single_file", m.single_file}, {"total_bytes", m.total_bytes},
          {"file_count", m.file_count}, {"entries", std::move(entries)}};
}

Result<Manifest> ManifestFromJson(const nlohmann::json& j) {
  try {
    Manifest m;
    m.source = j.at("source").get<std::string>();
    m.single_file = j.at("single_file").get<bool>();
    m.total_bytes = j.at("total_bytes").get<uint64_t>();
    m.file_count = j.at("file_count").get<size_t>();
    for (const nlohmann::json& je : j.at("entries")) {
      Entry e;
      e.rel = je.at("rel").get<std::string>();
      const std::string type = je.at("type").get<std::string>();
      if (type == "file") {
        e.size = je.at("size").get<uint64_t>();
        e.mtime_ns = je.at("mtime_ns").get<int64_t>();
      } else if (type == "dir") {
        e.type = Entry::Type::kDir;
      } else if (type == "link") {
        e.type = Entry::Type::kLink;
        e.target = je.at("target").get<std::string>();
      } else {
        return Error{fmt::format("unknown entry type '{}'", type)};
      }
      m.entries.push_back(std::move(e));
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("not a stage manifest: {}", e.what())};
  }
}

}  // namespace sat::stage
