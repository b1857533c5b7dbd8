// Whether a loader waits on storage, and whether a local copy of its data would help: the one rule behind probe's
// verdict (probe/verdict.h names storage by it), probe's local-copy what-if (probe/local_copy.h) and a sweep's
// `stage_policy: auto` (sweep/staging.h copies the data by it). Pure functions over plain evidence, so the rule is
// tested on scripted evidence (datastore/test_storage_cases.h, shared by the stage, probe and sweep tests); MountKindAt
// alone reads the system.
//
// The evidence holds whatever state the kernel shows a waiting reader in. A read from a local disk, or through the
// page cache of NFS or a FUSE mount, waits in state 'D'; a read of a FUSE mount with direct I/O (as mounts of cloud
// buckets commonly run) waits in the FUSE request, an interruptible sleep ('S'), as a worker waiting on a queue or a
// lock does. So, of the processes that load (DataLoader workers, or the trainer itself without workers), over the
// same window:
//   cpu      their CPU time over their wall time (the sampler's tree CPU): what they did themselves. Prep is never
//            more than this, and at least 1 - this of their time was spent waiting on something;
//   blocked  their share in state 'D' (each sampler tick), read as fetching directly;
//   cold     a sample of the dataset's own files read cold on the mount (datastore/cold_read.h): the time a read of
//            `files_per_sample` files keeps a reader off the CPU, times the samples per second, is the share of
//            the loading processes' time that reading alone accounts for (as far as the page cache did not hold
//            the data: probe's residency sample, else a local disk's read_bytes against rchar, else none on a
//            local disk, where 'D' tells);
//   mount    on a network or FUSE mount with neither of the two above, the time off the CPU is taken for
//            fetching (the split's basis says it was inferred).
// fetch = the largest of blocked, cold and mount, the last two never more than the time off the CPU; prep = the
// CPU share, never more than what fetch leaves; other = the rest. Where a local copy's reads were timed too, the share
// of the loading processes' time its faster reads would save is reckoned the same way (copy_saves).
//
// The findings: the loop hardly waits (kKeepsUp, where the loop's wait is known); fetch binds (kStorage: fetch at
// least kFetchBoundShare and more than prep); the loader's own CPU (kCpu); waiting elsewhere (kElsewhere: a lock, a
// queue, a slow producer); or too little evidence (kUnknown). A copy helps storage-bound loading where cold reads
// from a local copy took at most kCopyFasterRatio of the source's time and save at least kCopySavesShare of the
// loader's time (where the rate says), or, without that comparison, where the data is on a network or FUSE mount. More readers help storage-bound loading too where the machine has cores for
// more (a storage-bound reader is off the CPU most of its time, fetch being more than prep): they overlap the round
// trips, a copy removes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "datastore/cold_read.h"

namespace sat::datastore {

inline constexpr double kFetchBoundShare = 0.3;     // fetch >= 30% of the loader's time and more than prep: storage
inline constexpr double kLoopWaitShare = 0.25;      // a loop waiting for data less than this: its loader keeps up
inline constexpr double kPrepBoundShare = 0.5;      // the loader on the CPU half its time or more: its own work
inline constexpr double kCopyFasterRatio = 0.5;     // a local copy's cold reads within half the source's time
inline constexpr double kCopySavesShare = 0.1;      // ... saving at least this share of the loader's time

// What one stage (or a sweep's run) showed of its loader, over its steady part.
struct LoaderActivity {
  double samples_per_s = 0;                      // the rate; 0 unknown
  double processes = 1;                          // processes that load: workers, or 1 (the trainer) without
  bool in_trainer = false;                       // training without workers: the trainer loads between its steps
  std::optional<double> cpu_cores;               // the tree's CPU, in cores (100% = 1)
  std::optional<double> sys_cores;               // of it, in the kernel (stime): reads, IPC, page faults
  std::optional<double> blocked;                 // the tree's processes in state 'D', on average
  std::optional<double> data_wait_share;         // training (not a loader alone): the loop's share waiting for data
  std::optional<double> read_per_s;              // bytes passed to read() by the tree (rchar), cache included
  std::optional<double> storage_read_per_s;      // of them, fetched from block storage (read_bytes)
};

// Where the data lives, as far as the rule cares: a network or FUSE mount serves every read with a round trip.
enum class MountKind { kUnknown, kLocal, kFuse, kNetwork };
std::string_view MountKindName(MountKind kind);  // "unknown", "local", "FUSE", "network"
// From a mount table's type ("nfs4", "fuse.sshfs", "ext4") and whether core::IsNetworkFs calls it a network one.
MountKind MountKindOfType(std::string_view fs_type, bool network);
// From statfs(2) of `path`; kUnknown where it fails. Reads the system.
MountKind MountKindAt(const std::string& path);
// Whether `path` is on a filesystem in memory (tmpfs, ramfs): its files read faster than any copy on a drive.
// False where statfs(2) fails. Reads the system.
bool InMemoryAt(const std::string& path);

// What set the fetch share (see the file comment).
enum class FetchBasis { kNone, kBlocked, kColdReads, kOffCpuOnMount };

struct LoaderTimeSplit {
  double fetch = 0, prep = 0, other = 0;       // shares of the loader's time, summing to 1
  FetchBasis basis = FetchBasis::kNone;
  std::optional<double> cpu_s_per_sample;      // CPU seconds of the whole tree per sample
  std::optional<double> bytes_per_sample;      // bytes read per sample (rchar)
  std::optional<double> read_s_per_sample;     // a sample's cold reads off the CPU, as timed on the mount
  std::optional<double> copy_saves;            // share of the loader's time a local copy's faster reads would save
};

struct StorageEvidence {
  LoaderActivity loader;
  MountKind mount = MountKind::kUnknown;
  // A sample of the dataset's files read cold from the mount, and from a local copy where `local.files` > 0.
  std::optional<ColdReadComparison> cold;
  double files_per_sample = 1;                 // data files a sample opens (1 where not counted)
  std::optional<double> cached_share;          // of the data, in the page cache when the loader read it
  unsigned cores = 0;                          // of the machine; 0 unknown
};

enum class StorageFinding { kUnknown, kKeepsUp, kStorage, kCpu, kElsewhere };
std::string_view StorageFindingName(StorageFinding f);  // "unknown", "keeps-up", "storage", "cpu", "elsewhere"

struct StorageWait {
  StorageFinding finding = StorageFinding::kUnknown;
  // nullopt without the loader's CPU, without any evidence of fetching (process states, cold reads with a rate, a
  // network or FUSE mount), or, training, without a data wait.
  std::optional<LoaderTimeSplit> split;
  bool copy_helps = false;                // storage-bound, and a local copy reads faster (or the mount says so)
  bool more_readers_help = false;         // storage-bound, with fewer readers than cores
  std::optional<double> copy_time_ratio;  // cold reads: local time / source time, where both were timed
  MountKind mount = MountKind::kUnknown;  // the evidence's
};

// The rule (see the file comment).
StorageWait JudgeStorageWait(const StorageEvidence& e);

// "cold reads of its files (45.1 ms each)", "processes in state D", "time off the CPU on a FUSE mount"; "" for
// kNone.
std::string FetchBasisText(const LoaderTimeSplit& s);
// One clause: "fetch 92% (cold reads of its files: 45.1 ms each), prep 2% (its CPU), other 6%".
std::string SplitClause(const LoaderTimeSplit& s);
// What the finding means for a copy: "its loader waits on storage, and a local copy reads 300x faster",
// "its loader waits on storage, and a local copy read as slowly (94% of the time): a faster drive would help, a copy
// would not", "its loader computes (decoding, transforms): a copy would not help", ...
std::string FindingText(const StorageWait& w);

// The loader alone reading a local copy, from its activity on the source.
struct LocalCopyEstimate {
  double warm_samples_per_s = 0;  // the copy in the page cache: the loader's CPU alone sets the pace
  double cold_samples_per_s = 0;  // read cold from the local drive: time off the CPU shrinks by the reads' ratio
};

// The CPU seconds a sample's reads cost the reading thread, read cold from the source and from a local copy (a FUSE
// or network read wakes the reader several times; almost all of it is kernel time).
struct ReadCpuPerSample {
  double source_s = 0, local_s = 0;
};

// `loader` (on the source), `local_time_ratio` (cold local read time / cold source read time of the same files),
// `reads` (their CPU), `cores` (the machine's; 0 unknown). Assumes the loader's time off the CPU is spent fetching; of
// its CPU per sample, the user part stays as measured and the kernel part shrinks by the reads' CPU ratio (local /
// source: the kernel time the source's reads cost in the loader, often several times the cold reads' own, goes with
// them). Without the kernel part, the reads' CPU difference comes off the whole. Never less than a fifth of the
// measured CPU; at most every core (or every loading process) busy. nullopt without the loader's rate or CPU.
std::optional<LocalCopyEstimate> EstimateLocalCopy(const LoaderActivity& loader, double local_time_ratio,
                                                   const ReadCpuPerSample& reads, unsigned cores);
// EstimateLocalCopy from the cold reads of `e` (their time ratio, and their CPU per sample); nullopt without a
// local copy's reads or the loader's rate and CPU.
std::optional<LocalCopyEstimate> EstimateLocalCopy(const StorageEvidence& e);

// Training on a local copy: the loop's data wait loses the fetching a copy removes (the split's fetch share of it,
// times what the copy's cold reads save: 1 - copy_time_ratio); the rest of the loop stays as it was. nullopt
// without the rate, a data wait, a split or the cold reads' comparison.
std::optional<double> TrainingOnCopyEstimate(const StorageEvidence& e, const StorageWait& w);

// The loader with `readers` loading processes on the same source: each keeps its pace (the mount serves that many
// reads at once), at most every core busy at the CPU a sample costs. nullopt without the rate or CPU.
std::optional<double> MoreReadersEstimate(const LoaderActivity& loader, double readers, unsigned cores);

}  // namespace sat::datastore
