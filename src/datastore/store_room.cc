#include "datastore/store_room.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <map>

#include "datastore/record.h"
#include "datastore/store_folder.h"
#include "datastore/tree_at.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace sat::datastore {
namespace {

std::optional<uint64_t> StatvfsFree(const std::string& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

// The disk space a copy of `m` takes on a filesystem of `block`-byte blocks: each file and folder rounded up to
// whole blocks (100,000 files of 10 bytes take 400 MB, not 1 MB).
uint64_t EstimateAllocated(const Manifest& m, uint64_t block) {
  uint64_t bytes = block;  // the copy's own folder
  for (const Entry& e : m.entries) {
    if (e.type == Entry::Type::kFile) bytes += (e.size + block - 1) / block * block;
    if (e.type == Entry::Type::kDir) bytes += block;
  }
  return bytes;
}

// A victim's key lock and use file, held until it is evicted or the room is found to be too little.
struct KeyLocks {
  UniqueFd lock, use;
};

}  // namespace

std::optional<uint64_t> StoreFreeBytes(const RoomLimits& limits) {
  return limits.free_bytes ? limits.free_bytes(limits.root) : StatvfsFree(limits.root);
}

Status MakeRoom(int root_fd, const RoomLimits& o, const std::string& source, const std::string& key,
                const Manifest& m, std::vector<std::string>* warnings) {
  struct Candidate {
    std::string key;
    uint64_t bytes = 0;
    int64_t last_use = 0;
  };
  std::map<std::string, Candidate> found;
  for (const std::string& name : ListFolder(root_fd)) {
    std::string stem;
    if (name.ends_with(".partial.log")) {
      stem = name.substr(0, name.size() - 12);
      if (!IsKey(stem) || stem == key) continue;
      auto text = ReadStoreFile(root_fd, name);
      if (!text || ParsePartialLog(*text).key != stem) continue;
      found[stem].bytes += AllocatedBytesAt(root_fd, name) + AllocatedBytesAt(root_fd, stem + ".partial");
    } else if (name.ends_with(".json")) {
      stem = name.substr(0, name.size() - 5);
      if (!IsKey(stem) || stem == key) continue;
      auto text = ReadStoreFile(root_fd, name);
      if (!text) continue;
      auto record = ParseRecord(*text);
      if (!record || record->manifest.Key() != stem) {
        warnings->push_back(fmt::format("stage store: {}/{} is not a record of the copy it names ({}); it is skipped "
                                        "and never evicted: remove it and {}.data if they are not needed",
                                        o.root, name, record ? "another key" : record.error().message, stem));
        continue;
      }
      found[stem].bytes += AllocatedBytesAt(root_fd, name) + AllocatedBytesAt(root_fd, stem + ".data");
    } else {
      continue;
    }
    found[stem].key = stem;
  }
  std::vector<Candidate> copies;
  uint64_t used = 0;
  for (auto& [k, c] : found) {
    struct stat st {};
    if (fstatat(root_fd, (k + ".use").c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) c.last_use = st.st_mtim.tv_sec;
    used += c.bytes;
    copies.push_back(c);
  }
  std::sort(copies.begin(), copies.end(), [](const Candidate& a, const Candidate& b) { return a.last_use < b.last_use; });

  struct statvfs vfs {};
  const uint64_t block = fstatvfs(root_fd, &vfs) == 0 && vfs.f_bsize > 0 ? vfs.f_bsize : 4096;
  const uint64_t estimate = EstimateAllocated(m, block);
  const uint64_t have = AllocatedBytesAt(root_fd, key + ".partial");
  const uint64_t needed = estimate - std::min(have, estimate);
  auto fits = [&](uint64_t held, std::optional<uint64_t> free) {
    if (o.cap_bytes > 0 && held + estimate > o.cap_bytes) return false;
    return !free || *free >= needed + o.reserve_bytes;
  };
  std::optional<uint64_t> free = StoreFreeBytes(o);
  if (fits(used, free)) return Status::Ok();

  // Lock the victims first (another process may hold one: using the copy, or making it) and evict only when
  // they make enough room.
  std::vector<KeyLocks> victims;
  std::vector<const Candidate*> chosen;
  uint64_t freed = 0;
  int in_use = 0;
  for (const Candidate& c : copies) {
    if (fits(used - freed, free ? std::optional(*free + freed) : free)) break;
    KeyLocks victim;
    auto lock_fd = OpenStoreFile(root_fd, c.key + ".lock", o.root);
    auto use_fd = OpenStoreFile(root_fd, c.key + ".use", o.root);
    if (!lock_fd || !use_fd || flock(lock_fd->get(), LOCK_EX | LOCK_NB) != 0 ||
        flock(use_fd->get(), LOCK_EX | LOCK_NB) != 0) {
      ++in_use;
      continue;
    }
    victim.lock = std::move(*lock_fd);
    victim.use = std::move(*use_fd);
    victims.push_back(std::move(victim));
    chosen.push_back(&c);
    freed += c.bytes;
  }
  const bool enough = fits(used - freed, free ? std::optional(*free + freed) : free);
  if (enough) {
    for (const Candidate* c : chosen) {
      for (const char* suffix : {".json", ".data", ".partial", ".partial.log"}) {
        (void)RemoveTreeAt(root_fd, c->key + suffix);
      }
    }
    used -= freed;
    free = StoreFreeBytes(o);
    if (fits(used, free)) return Status::Ok();
  }
  std::string room = fmt::format("{} free on its filesystem, {} kept free", free ? FormatBytes(*free) : "unknown",
                                 FormatBytes(o.reserve_bytes));
  if (o.cap_bytes > 0) {
    room += fmt::format(", the store capped at {} with {} held", FormatBytes(o.cap_bytes), FormatBytes(used));
  }
  if (in_use > 0) room += fmt::format(", {} cop{} in use", in_use, in_use == 1 ? "y" : "ies");
  return Error{fmt::format("no room to stage {}: the copy takes {} on disk ({} of data in {} files) in {} ({}); "
                           "nothing was copied{}. Free space there, choose a larger local drive (--stage-dir, "
                           "saturate.stage_dir), or raise the cap",
                           source, FormatBytes(estimate), FormatBytes(m.total_bytes), GroupThousands(m.file_count),
                           o.root, room, enough ? "" : " and nothing evicted")};
}

}  // namespace sat::datastore
