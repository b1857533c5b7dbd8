// Room in the store (datastore/store.h) for one more copy: what a copy takes on disk, counted in blocks, against the
// store's cap and its filesystem's free space less the reserve; and when it does not fit, the eviction of the least
// recently used copies nobody holds. Only copies the store's own records name are ever evicted.
//
// Locking (the layout in datastore/store.h): a copy is evicted only under its key's lock and an exclusive hold of its
// use file, both taken without waiting, so a copy being made, checked or read is never a victim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datastore/manifest.h"
#include "datastore/store.h"
#include "util/result.h"

namespace sat::datastore {

// The free bytes of the store's filesystem: options.free_bytes's answer, else statvfs's; nullopt when unknown.
std::optional<uint64_t> StoreFreeBytes(const StoreOptions& options);

// Room for the copy of `m` (under `key`) in the store folder `root_fd`: the least recently used copies nobody
// holds are evicted until the cap and the filesystem's free space (less the reserve) allow it, counting the blocks
// files take on disk. Only copies the store's own records name are candidates: <key>.json that reads as a record of
// that key, or <key>.partial.log that begins with its header. When even evicting every candidate would not make
// room, nothing is evicted, and the error (exit 1) names `source`, what the copy takes, the room there is and what
// to do. Records it cannot read are skipped, never evicted, with a line in `warnings`.
Status MakeRoom(int root_fd, const StoreOptions& options, const std::string& source, const std::string& key,
                const Manifest& m, std::vector<std::string>* warnings);

}  // namespace sat::datastore
