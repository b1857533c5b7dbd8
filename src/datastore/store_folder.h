// The store folder itself (datastore/store.h): whose it is, and whether it is a store at all. A store holds copies of
// the user's data that runs read instead of the data, and saturate deletes in it to make room, so it must be a
// folder this user alone can write, made by saturate for that:
//  - not a link (a link planted at a shared default name, $TMPDIR/saturate-stage-<uid>, would point the store and
//    its evictions at a folder of the planter's choice);
//  - owned by this user (another user may pre-create the default name on a shared scratch, with altered copies);
//  - mode 0700 (no one else may add to it or read the copies);
//  - marked: it holds `.saturate-store`, a file saturate wrote when it made the store in an empty folder. A folder
//    with other files and no marker (`--stage-dir ~/proj`) is not a store, and is refused before anything in it
//    is touched. A store of an older saturate (every name in it of the store's own form, `<key>.json` and so on)
//    is marked when first used.
// Refusals are usage errors (exit 2) naming the folder, what is wrong and what to do.
#pragma once

#include <optional>
#include <string>

#include "util/result.h"
#include "util/unique_fd.h"

namespace sat::datastore {

inline constexpr char kStoreMarker[] = ".saturate-store";

// The store folder `root`, open (O_DIRECTORY | O_NOFOLLOW), once it passed the checks above. With `create`, a
// missing folder is made (its missing parents too) and an empty one of this user's becomes a store; without, a
// folder that is missing or empty is nullopt, and nothing is written.
Result<std::optional<UniqueFd>> OpenStoreFolder(const std::string& root, bool create);

// A lock or use file of the store (`name` in the folder `root_fd`, whose path `root` errors name), opened or made
// (0600), never through a link.
Result<UniqueFd> OpenStoreFile(int root_fd, const std::string& name, const std::string& root);

// A small file of the store (a record, a log) in the folder `dir_fd`, read whole; nullopt when it is missing, a link
// or not a regular file.
std::optional<std::string> ReadStoreFile(int dir_fd, const std::string& name);

}  // namespace sat::datastore
