#include "util/cache_home.h"

#include <fmt/core.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sat {

CacheHomes CacheHomesOfThisProcess() {
  CacheHomes homes;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) homes.xdg_cache_home = xdg;
  if (const char* home = std::getenv("HOME")) homes.home = home;
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) homes.passwd_home = pw->pw_dir;
  return homes;
}

std::optional<std::string> SaturateCacheDir(const CacheHomes& homes) {
  namespace fs = std::filesystem;
  if (!homes.xdg_cache_home.empty() && homes.xdg_cache_home.front() == '/') {
    return (fs::path(homes.xdg_cache_home) / "saturate").string();
  }
  for (const std::string& home : {homes.home, homes.passwd_home}) {
    if (!home.empty()) return (fs::path(home) / ".cache/saturate").string();
  }
  return std::nullopt;
}

std::string PrivateFolderProblem(const std::string& folder) {
  std::filesystem::path made;
  for (const auto& part : std::filesystem::path(folder)) {
    made /= part;
    if (mkdir(made.c_str(), 0700) != 0 && errno != EEXIST)
      return fmt::format("cannot create {}: {}", made.string(), std::strerror(errno));
  }
  struct stat st {};
  if (stat(folder.c_str(), &st) != 0) return std::strerror(errno);
  if (st.st_uid != geteuid()) return fmt::format("belongs to user {}, not to you", st.st_uid);
  if ((st.st_mode & 022) != 0) return "may be written by other users";
  return "";
}

}  // namespace sat
