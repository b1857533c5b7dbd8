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

// Makes the missing folders of `folder` (each 0700, readable by its owner alone) and checks that `folder` belongs to
// this user and that no one else may write it, so that another user can neither read nor plant what saturate keeps
// there. Empty when it is fit; else the reason, for a sentence about the folder ("cannot create /a/b: Permission
// denied", "belongs to user 1001, not to you", "may be written by other users").
std::string PrivateFolderProblem(const std::string& folder);

}  // namespace sat
