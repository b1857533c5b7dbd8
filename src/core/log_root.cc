#include "core/log_root.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace sat::core {

namespace fs = std::filesystem;

Result<LogRoot> LogRoot::Create(const std::string& out_dir, std::string_view subfolder, std::string_view command) {
  if (out_dir.empty()) {
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    std::string tmpl = (tmp / fmt::format("saturate-{}-XXXXXX", command)).string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return Error{fmt::format("cannot create a folder for logs in {}: {}", tmp.string(), strerror(errno))};
    }
    return LogRoot(std::move(tmpl), true);
  }
  std::string path = subfolder.empty() ? out_dir : (fs::path(out_dir) / subfolder).string();
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Error{fmt::format("cannot create --out {}: {}", out_dir, ec.message())};
  return LogRoot(std::move(path), false);
}

LogRoot::LogRoot(LogRoot&& other) noexcept
    : path_(std::move(other.path_)), temporary_(std::exchange(other.temporary_, false)) {}

LogRoot::~LogRoot() {
  std::error_code ec;
  if (temporary_ && !path_.empty()) fs::remove_all(path_, ec);
}

}  // namespace sat::core
