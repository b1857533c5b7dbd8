#include "telemetry/mount_table.h"

#include <algorithm>

#include "util/strings.h"

namespace sat::telemetry {
namespace {

std::optional<MountEntry> ParseMountLine(std::string_view line) {
  std::vector<std::string_view> f = TableFields(line);
  auto dash = std::find(f.begin(), f.end(), "-");
  if (dash != f.end()) {
    // mountinfo: id parent major:minor root mount_point options [optional...] - fs_type source super_options
    if (dash - f.begin() < 6 || f.end() - dash < 3 || !StartsWith(f[4], "/")) return std::nullopt;
    return MountEntry{UnescapeOctal(f[4]), UnescapeOctal(dash[1]), UnescapeOctal(dash[2]), UnescapeOctal(f[3])};
  }
  // /proc/mounts (fstab format): source mount_point fs_type options dump pass
  if (f.size() != 6 || !StartsWith(f[1], "/") || !ParseInt(f[4]) || !ParseInt(f[5])) return std::nullopt;
  return MountEntry{UnescapeOctal(f[1]), UnescapeOctal(f[2]), UnescapeOctal(f[0]), ""};
}

}  // namespace

std::string UnescapeOctal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      std::string_view digits = s.substr(i + 1, 3);
      bool octal = std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; });
      if (octal) {
        out += static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string_view> TableFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

bool IsUnder(std::string_view path, std::string_view dir) {
  if (dir == "/") return StartsWith(path, "/");
  if (!StartsWith(path, dir)) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

std::vector<MountEntry> ParseMountTable(std::string_view text) {
  std::vector<MountEntry> mounts;
  for (const std::string& line : Split(text, '\n')) {
    if (std::optional<MountEntry> entry = ParseMountLine(line)) mounts.push_back(std::move(*entry));
  }
  return mounts;
}

std::optional<MountEntry> FindMount(const std::vector<MountEntry>& mounts, std::string_view path) {
  if (!StartsWith(path, "/")) return std::nullopt;
  const MountEntry* best = nullptr;
  for (const MountEntry& m : mounts) {
    if (!IsUnder(path, m.mount_point)) continue;
    if (best == nullptr || m.mount_point.size() >= best->mount_point.size()) best = &m;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace sat::telemetry
