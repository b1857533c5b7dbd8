#include "util/cache_home.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
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

}  // namespace sat
