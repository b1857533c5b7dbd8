#include "datastore/manifest.h"

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
#include <stdexcept>

#include "util/utf8.h"

namespace sat::datastore {
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
      e.mode = st.st_mode & 07777;
      m.entries.push_back(e);
      return Walk(rel, m);
    }
    if (S_ISREG(st.st_mode)) {
      if (access(full.c_str(), R_OK) != 0) return Unreadable(rel, errno);
      e.size = static_cast<uint64_t>(st.st_size);
      e.mtime_ns = MtimeNs(st);
      e.mode = st.st_mode & 07777;
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

// A name in JSON, exactly (see manifest.h): a string when it is UTF-8, else its bytes in hex under "<field>_hex".
void PutName(nlohmann::json& j, const std::string& field, const std::string& name) {
  if (ValidUtf8(name) == name) {
    j[field] = name;
    return;
  }
  std::string hex;
  for (unsigned char c : name) hex += fmt::format("{:02x}", c);
  j[field + "_hex"] = hex;
}

std::string GetName(const nlohmann::json& j, const std::string& field) {
  if (!j.contains(field + "_hex")) return j.at(field).get<std::string>();
  const std::string hex = j.at(field + "_hex").get<std::string>();
  if (hex.size() % 2 != 0) throw std::invalid_argument(fmt::format("odd '{}_hex'", field));
  std::string name;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nibble = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      throw std::invalid_argument(fmt::format("'{}_hex' is not lowercase hex", field));
    };
    name.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  return name;
}

// Numbers as the manifest writes them; anything else (a string, a float, a negative size) is not a manifest.
// Checked here, since nlohmann's get<> converts a float out of range with undefined behaviour.
uint64_t Unsigned(const nlohmann::json& j, const char* field) {
  const nlohmann::json& v = j.at(field);
  if (!v.is_number_unsigned()) throw std::invalid_argument(fmt::format("'{}' is not a whole number of 0 or more", field));
  return v.get<uint64_t>();
}

int64_t Signed(const nlohmann::json& j, const char* field) {
  const nlohmann::json& v = j.at(field);
  if (!v.is_number_integer()) throw std::invalid_argument(fmt::format("'{}' is not a whole number", field));
  return v.get<int64_t>();
}

// Permission bits; 0 where an older saturate wrote none.
uint32_t Mode(const nlohmann::json& j) {
  if (!j.contains("mode")) return 0;
  const uint64_t mode = Unsigned(j, "mode");
  if (mode > 07777) throw std::invalid_argument("'mode' is not permission bits");
  return static_cast<uint32_t>(mode);
}

// A path below the source as ScanSource writes it: '/'-separated names, none empty, "." or "..".
bool PlainRelative(std::string_view rel) {
  for (size_t start = 0;;) {
    const size_t end = rel.find('/', start);
    const std::string_view part = rel.substr(start, end == std::string_view::npos ? end : end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

const char* TypeName(Entry::Type t) {
  switch (t) {
    case Entry::Type::kFile: return "file";
    case Entry::Type::kDir: return "dir";
    case Entry::Type::kLink: return "link";
  }
  return "file";
}

}  // namespace

bool IsKey(std::string_view name) {
  constexpr size_t kHash = 16;
  if (name.size() < kHash + 2 || name.size() > 48 + 1 + kHash) return false;
  const std::string_view base = name.substr(0, name.size() - kHash - 1);
  const std::string_view hash = name.substr(name.size() - kHash);
  if (name[base.size()] != '-' || base.front() == '.') return false;
  for (char c : base) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  for (char c : hash) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

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
  m.mode = st.st_mode & 07777;
  if (S_ISREG(st.st_mode)) {
    if (access(resolved, R_OK) != 0) {
      return UsageError(fmt::format("stage path {}: cannot read it: {}", path, std::strerror(errno)));
    }
    m.single_file = true;
    m.entries.push_back(Entry{"", Entry::Type::kFile, static_cast<uint64_t>(st.st_size), MtimeNs(st), "", m.mode});
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
    nlohmann::json j = {{"type", TypeName(e.type)}};
    PutName(j, "rel", e.rel);
    if (e.type == Entry::Type::kFile) {
      j["size"] = e.size;
      j["mtime_ns"] = e.mtime_ns;
    }
    if (e.type != Entry::Type::kLink) j["mode"] = e.mode;
    if (e.type == Entry::Type::kLink) PutName(j, "target", e.target);
    entries.push_back(std::move(j));
  }
  nlohmann::json j = {{"single_file", m.single_file}, {"mode", m.mode},      {"total_bytes", m.total_bytes},
                      {"file_count", m.file_count},   {"entries", std::move(entries)}};
  PutName(j, "source", m.source);
  return j;
}

Result<Manifest> ManifestFromJson(const nlohmann::json& j) {
  try {
    if (!j.is_object()) return Error{"not a stage manifest: not a JSON object"};
    Manifest m;
    m.source = GetName(j, "source");
    m.single_file = j.at("single_file").get<bool>();
    m.mode = Mode(j);
    m.total_bytes = Unsigned(j, "total_bytes");
    m.file_count = Unsigned(j, "file_count");
    const nlohmann::json& entries = j.at("entries");
    if (!entries.is_array()) return Error{"not a stage manifest: 'entries' is not a list"};
    for (const nlohmann::json& je : entries) {
      if (!je.is_object()) return Error{"not a stage manifest: an entry is not a JSON object"};
      Entry e;
      e.rel = GetName(je, "rel");
      // Names are used below the copy's folder: none may lead out of it.
      if (m.single_file ? !e.rel.empty() : !PlainRelative(e.rel)) {
        return Error{fmt::format("not a stage manifest: the entry '{}' is not a plain path below the source", e.rel)};
      }
      const std::string type = je.at("type").get<std::string>();
      if (type == "file") {
        e.size = Unsigned(je, "size");
        e.mtime_ns = Signed(je, "mtime_ns");
        e.mode = Mode(je);
      } else if (type == "dir") {
        e.type = Entry::Type::kDir;
        e.mode = Mode(je);
      } else if (type == "link") {
        e.type = Entry::Type::kLink;
        e.target = GetName(je, "target");
      } else {
        return Error{fmt::format("unknown entry type '{}'", type)};
      }
      m.entries.push_back(std::move(e));
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("not a stage manifest: {}", e.what())};
  } catch (const std::invalid_argument& e) {
    return Error{fmt::format("not a stage manifest: {}", e.what())};
  }
}

}  // namespace sat::datastore
