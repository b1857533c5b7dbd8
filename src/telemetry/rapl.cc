#include "telemetry/rapl.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace sat::telemetry {
namespace {

namespace fs = std::filesystem;

// "intel-rapl:0" is a package; "intel-rapl:0:1" is one of its subdomains.
bool IsPackageDomain(const std::string& name) {
  const std::string prefix = "intel-rapl:";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return false;
  return std::all_of(name.begin() + static_cast<long>(prefix.size()), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<uint64_t> ReadNumber(FileReader& reader, const std::string& path) {
  std::optional<std::string_view> text = reader.Read(path);
  if (!text) return std::nullopt;
  std::string_view line;
  if (!NextLine(&*text, &line)) return std::nullopt;
  return ParseU64(NextField(&line));
}

}  // namespace

RaplCounter::RaplCounter(const std::string& sys_root) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(sys_root) / "class" / "powercap", ec)) {
    if (IsPackageDomain(e.path().filename().string())) names.push_back(e.path().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& dir : names) {
    Domain d;
    d.energy_path = dir + "/energy_uj";
    d.range_uj = ReadNumber(reader_, dir + "/max_energy_range_uj").value_or(0);
    domains_.push_back(std::move(d));
  }
}

std::optional<double> RaplCounter::Read() {
  if (domains_.empty()) return std::nullopt;
  // Read every domain first, so that a failed read changes nothing.
  std::vector<uint64_t> now;
  now.reserve(domains_.size());
  for (const Domain& d : domains_) {
    std::optional<uint64_t> uj = ReadNumber(reader_, d.energy_path);
    if (!uj) return std::nullopt;
    now.push_back(*uj);
  }
  for (size_t i = 0; i < domains_.size(); ++i) {
    Domain& d = domains_[i];
    if (d.prev_uj) {
      uint64_t delta = 0;
      if (now[i] >= *d.prev_uj) {
        delta = now[i] - *d.prev_uj;
      } else if (d.range_uj > *d.prev_uj) {
        delta = d.range_uj - *d.prev_uj + now[i];  // wrapped once
      }
      total_j_ += static_cast<double>(delta) / 1e6;
    }
    d.prev_uj = now[i];
  }
  return total_j_;
}

}  // namespace sat::telemetry
