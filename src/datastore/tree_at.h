// File trees reached through folder descriptors, never through a link. Every component of a path is opened with
// openat(O_NOFOLLOW | O_DIRECTORY), so a folder swapped for a link after it was listed (to /dev, to another user's
// files, to the user's project) is an error (ELOOP, ENOTDIR), not a place saturate reads, writes or deletes. The
// store (datastore/store.h) reaches the source, its copies and its own folder only through these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/unique_fd.h"

namespace sat::datastore {

// The folder `rel` ('/'-separated; "" for `base_fd` itself) below the folder `base_fd`; `create` makes the missing
// ones (0700). Invalid (with errno) on failure; an empty, "." or ".." component is EINVAL.
UniqueFd OpenFolderBeneath(int base_fd, std::string_view rel, bool create = false);
// An absolute path's folder, every component from "/" opened as above.
UniqueFd OpenFolderPath(std::string_view absolute);

// "a/b/c" as {"a/b", "c"}; "c" as {"", "c"}.
std::pair<std::string_view, std::string_view> SplitLast(std::string_view rel);

// The names in the folder `fd` ("." and ".." left out). *err gets readdir's errno (0 when it read them all).
std::vector<std::string> ListFolder(int fd, int* err = nullptr);

// Removes `name` from the folder `parent_fd`, and for a folder everything under it: a link is removed, never
// followed, and folders are made writable first (copies are read-only). A missing name is no error. Returns 0, or
// the errno of the first failure.
int RemoveTreeAt(int parent_fd, const std::string& name);

// The disk space `name` in `parent_fd` takes: st_blocks * 512 of it and everything under it (links not followed),
// what a filesystem gives up to it, not the apparent sizes. 0 when missing.
uint64_t AllocatedBytesAt(int parent_fd, const std::string& name);

// Gives the owner rwx on the folder `fd` and every folder under it, so that a copy made read-only can be resumed.
void MakeFoldersWritable(int fd);

}  // namespace sat::datastore
