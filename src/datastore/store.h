// The per-node store of staged datasets: one local copy of each dataset (datastore/manifest.h), made once and shared by
// every run, sweep and Slurm job on the node that reads it.
//
// Whose it is (datastore/store_folder.h): the store folder is this user's alone, and saturate's alone. It must not be a
// link, must belong to this user, have mode 0700 and hold the marker `.saturate-store` that saturate writes when it
// makes a store in an empty folder; anything else (another user's folder at the default name on a shared scratch,
// `--stage-dir ~/proj`) is refused (exit 2) before anything in it is read or touched.
//
// Layout of the store folder:
//   .saturate-store     the marker
//   <key>.data/<name>   the copy, complete and verified (<name>: the source's own base name); read-only: files and
//                       folders keep the source's permissions less every write bit, <key>.data itself is 0500
//   <key>.json          its record (datastore/record.h): manifest and per-file XXH3; written last, so a copy without
//                       it is not complete. A record names its copy: its manifest's Key() is <key>
//   <key>.partial/      a copy being made; <key>.partial.log (its first line names <key>) lists the files in it
//                       that are whole (path, size, mtime, checksum), so a copy killed half way resumes from there
//   <key>.lock          flock(LOCK_EX) while a copy is made or checked: parallel runs and sweeps wait for one copy
//   <key>.use           flock(LOCK_SH) by every Lease: a copy in use is never evicted; its mtime is the last use
// The kernel drops both locks when their holder dies (kill -9 included), so a dead saturate never blocks the store.
// The source, the copies and the store's files are reached through folder descriptors with O_NOFOLLOW at each
// component (datastore/tree_at.h): no link is followed, in the store or in a source swapped after its listing. (Two
// things go by path below the checked folder, which no one else can write: the record's atomic write, and the
// listing of a copy at reuse, which lstats and never follows.)
//
// Reusing a copy: it is handed out only when its record names exactly the data as listed now, and the copy on disk
// is what the record says: every entry's type, size, mtime, mode and link target, nothing added (a run that wrote
// into a copy, or anyone who changed it, is caught here); with verify_checksums every file is read back against
// its XXH3 too. A copy that differs is removed and made again (with a warning), never handed out.
//
// Making a copy: room first. The space a copy takes is counted in blocks (each file rounded up to the
// filesystem's block), against the cap and the free space less the reserve; when that does not fit, the least
// recently used copies that nobody holds and that the store's own records name are evicted, but only when evicting
// them is enough: a copy that can never fit evicts nothing. Files are copied by several threads (a network
// filesystem serves small files faster in parallel), each opened without blocking and refused unless it is a
// regular file, read up to its listed size and no further, its XXH3 taken as it is read, the free space checked
// against the reserve as it goes; the source is listed again at the end and a copy of changed data is discarded and
// made again; every file is read back and checked against its checksum; each file is fsynced as it is written and
// each folder before the rename (no machine-wide sync); then the partial folder is renamed into place. Nothing
// half-made is ever handed to a run.
//
// Names need not be UTF-8: they are copied as bytes and recorded exactly (datastore/manifest.h).
//
// Threads: Acquire blocks (on the lock and the copy) and may be called from any thread; on_progress is called
// from the copying threads, one call at a time. No exception leaves the store or its threads: an unexpected one is
// an error naming the source.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "datastore/manifest.h"
#include "datastore/store_room.h"
#include "util/result.h"

namespace sat::datastore {

struct Progress {
  enum class Phase { kScanning, kWaiting, kCopying, kVerifying, kDone };
  Phase phase = Phase::kScanning;
  uint64_t bytes_done = 0, bytes_total = 0;  // bytes_done counts files resumed from a killed copy
  size_t files_done = 0, files_total = 0;
  double elapsed_s = 0;  // since Acquire began
};
const char* PhaseName(Progress::Phase p);  // "scanning", "waiting", "copying", "verifying", "done"

// The room limits (datastore/store_room.h: the store folder `root`, created when missing, see above for what it must
// be; `cap_bytes`, `reserve_bytes`, the `free_bytes` seam) and how copies are made.
struct StoreOptions : RoomLimits {
  int threads = 8;    // files copied at once
  int max_tries = 3;  // copies discarded because the source changed or a checksum differed, before giving up
  // A copy found in the store is read back against its checksums before it is used (`stage_verify: checksums`),
  // not only its listing compared (sizes, mtimes, modes).
  bool verify_checksums = false;
  std::function<void(const Progress&)> on_progress;
  // Polled between chunks, files and while waiting for another copier: true stops the copy (the partial copy
  // stays, to be resumed) with an interrupt error.
  std::function<bool()> cancelled;
  // A seam for tests: a call after each file is copied (the count so far).
  std::function<void(size_t files_copied)> after_file;
};

// A copy in use. While a Lease lives (in this process, or in any process it was passed to with its fd) the copy
// is not evicted. Move-only; the destructor releases it.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  ~Lease();

  const std::string& path() const { return path_; }  // the local copy: what runs read instead of the source
  const std::string& source() const { return source_; }
  uint64_t bytes() const { return bytes_; }
  size_t files() const { return files_; }
  bool reused() const { return reused_; }         // the copy was there already (made by an earlier sweep or run)
  double copy_s() const { return copy_s_; }       // seconds this Acquire spent copying (0 when reused)
  uint64_t bytes_copied() const { return copied_; }  // read from the source by this Acquire (resumed files excluded)
  // What the store noticed on the way, for the user: a record it could not read and skipped, a copy that differed
  // from its data and was made again.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  friend class StoreImpl;
  int use_fd_ = -1;
  std::string path_, source_;
  uint64_t bytes_ = 0, copied_ = 0;
  size_t files_ = 0;
  bool reused_ = false;
  double copy_s_ = 0;
  std::vector<std::string> warnings_;
};

// The local copy of `source`, made if the store has none (or has one that differs). Errors: the source's (exit 2,
// datastore/manifest.h); a store folder that is not this user's own store, is a link, cannot be made, or lies inside the
// source (exit 2, naming it and what to do); not enough room even after evicting what nobody uses ("takes X on disk
// ... Y free": exit 1, before anything is copied or evicted); the free space falling below the reserve during the
// copy (exit 1); a source that kept changing for max_tries copies; a copy that differs and is in use; an interrupt
// (exit 130).
Result<Lease> Acquire(const std::string& source, const StoreOptions& options);

// The complete copy of `source` when the store has one that passes the checks above (a lease on it), else nullopt
// (a copy that differs is left for Acquire to replace); copies, creates and removes nothing. Errors as Acquire's,
// but never for room.
Result<std::optional<Lease>> FindCopy(const std::string& source, const StoreOptions& options);

// The default store folder: "stage" in the user's saturate cache folder (util/cache_home.h: never a shared one); on a
// Slurm node (SLURM_JOB_ID set) the node's local scratch: $SLURM_TMPDIR, else $TMPDIR, under saturate-stage-<uid>.
// Empty when none of them is there.
std::string DefaultStoreRoot();

}  // namespace sat::datastore
