// Room in the store (datastore/store.h) for one more copy: what a copy takes on disk, counted in blocks, against the
// store's cap and its filesystem's free space less the reserve; and when it does not fit, the eviction of the least
// recently used copies nobody holds. Only copies the store's own records name are ever evicted.
//
// Locking (the layout in datastore/store.h): a copy is evicted only under its key's lock and an exclusive hold of its
// use file, both taken without waiting, so a copy being made, checked or read is never a victim.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "datastore/manifest.h"
#include "util/result.h"

namespace sat::datastore {

// What bounds the room in a store (StoreOptions carries these).
struct RoomLimits {
  std::string root;        // the store folder
  uint64_t cap_bytes = 0;  // the store's total at most; 0: only free space limits it
  // Kept free on the store's filesystem after the copy, so staging never fills the disk the runs write to.
  uint64_t reserve_bytes = 256ull << 20;
  // A seam for tests: the free bytes of a folder's filesystem (default statvfs).
  std::function<std::optional<uint64_t>(const std::string& dir)> free_bytes;
};

// The free bytes of the store's filesystem: limits.free_bytes's answer, else statvfs's; nullopt when unknown.
std::optional<uint64_t> StoreFreeBytes(const RoomLimits& limits);

// Room for the copy of `m` (under `key`) in the store folder `root_fd`: the least recently used copies nobody
// holds are evicted until the cap and the filesystem's free space (less the reserve) allow it, counting the blocks
// files take on disk. Only copies the store's own records name are candidates: <key>.json that reads as a record of
// that key, or <key>.partial.log that begins with its header. When even evicting every candidate would not make
// room, nothing is evicted, and the error (exit 1) names `source`, what the copy takes, the room there is and what
// to do. Records it cannot read are skipped, never evicted, with a line in `warnings`.
Status MakeRoom(int root_fd, const RoomLimits& limits, const std::string& source, const std::string& key,
                const Manifest& m, std::vector<std::string>* warnings);

}  // namespace sat::datastore
