// Where saturate keeps a user's own files between runs (tune's trial cache, the store of staged datasets): one rule
// for all of them, so that none falls back to a shared folder another user could plant.
#pragma once

#include <optional>
#include <string>

namespace sat {

// Where the user's cache may be: $XDG_CACHE_HOME, $HOME, the user's home in the password database ("" for each
// that is not set).
struct CacheHomes {
  std::string xdg_cache_home, home, passwd_home;
};
CacheHomes CacheHomesOfThisProcess();

// $XDG_CACHE_HOME/saturate (an absolute XDG_CACHE_HOME; a relative one is invalid and ignored), else
// ~/.cache/saturate with ~ from $HOME, else from the password database; nullopt with none of them (never /tmp).
std::optional<std::string> SaturateCacheDir(const CacheHomes& homes);

}  // namespace sat
