// What probe finds about the storage a run reads and writes: which files its loader really opens, how much of them
// the page cache held, cold reads of a sample of them on their mount, whether the loader waits on storage and a local
// copy would help (the storage rule, datastore/storage_wait.h, on probe's readings), the local-copy and more-workers
// what-ifs (probe/local_copy.h), and where the run writes. The verdict (probe/verdict.h) names storage from these;
// the report shows them.
//
// The data files, best source first: the helper's `files` messages (every open the loader's processes made,
// sampled: docs/helper-protocol.md), else the scans of the stages' open descriptors and memory maps, else the
// command line's path arguments that are neither code nor the script. Never the script itself.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/data_location.h"
#include "core/stage.h"
#include "probe/local_copy.h"
#include "probe/probe_result.h"
#include "datastore/cold_read.h"
#include "datastore/storage_wait.h"
#include "telemetry/page_cache.h"

namespace sat::probe {

using datastore::LoaderTimeSplit;
using datastore::StorageEvidence;
using datastore::StorageFinding;
using datastore::StorageWait;

inline constexpr size_t kResidencySampleFiles = 64;
// Files listed under the command line's data paths for the reading before the run.
inline constexpr size_t kArgumentFilesListed = 4096;
// At least this much of the data in the page cache: the loader read memory, not the drive.
inline constexpr double kWarmCacheShare = 0.9;
// A run writing this much to a network filesystem gets a note.
inline constexpr double kHeavyWriteBytesPerS = 1 << 20;

// The data files of a run from its stages and its command line (see the file comment). `path_arguments`: the
// command line's existing paths, absolute.
DataFiles DataFilesOf(const ProbeResult& result, const std::vector<std::string>& path_arguments);

// Up to `max_files` regular files of the command line's paths that may be data (a file as given; a folder walked
// in directory order, links not followed, unreadable parts skipped), for the page cache before the run reads them.
std::vector<std::string> ArgumentDataFiles(const std::vector<std::string>& path_arguments, size_t max_files);

// What `stage` showed of its loader (datastore/storage_wait.h), over its steady part. A full stage without workers is
// the trainer loading for itself (in_trainer), its data wait the loader's time.
LoaderActivity LoaderActivityOf(const core::StageResult& stage);
// The storage rule's evidence from `stage`: its loader, the mount holding most of the data files, the cold reads,
// the data-file opens per sample and (for the loader stage) the page cache's share before it.
StorageEvidence StorageEvidenceOf(const ProbeResult& result, const core::StageResult& stage);
// The storage rule on the stage whose loader the verdict reads: the loader stage when it measured enough steady
// data, else the full stage. `stage_out` (may be null) gets that stage, or null when neither measured (the
// finding is then kUnknown without a split).
StorageWait StorageWaitOf(const ProbeResult& result, const core::StageResult** stage_out = nullptr);

// Whether the cold reads and the local-copy what-if are due: data on a network or FUSE mount, or the rule finds the
// loader waiting on storage on what the stages alone showed.
bool LocalCopyDue(const ProbeResult& result);

// More workers reading the same mount, from the loader stage (else the full stage): how many to try (as the verdict
// does: 4 from none, else twice as many, at most a core each) and the rate the rule expects of them. nullopt where
// the rule does not find more readers helping, or no more fit.
struct MoreReaders {
  int64_t workers = 0;
  double samples_per_s = 0;
};
std::optional<MoreReaders> MoreReadersWhatIf(const ProbeResult& result);

// The verdict's sentences (probe/verdict.h):
// "fetch stalls: the loader waits on /mnt/data (fuse.sshfs, network filesystem) 90% of its time (cold reads of
// its files: 45.0 ms a sample)".
std::string FetchStallCause(const ProbeResult& result, const LoaderTimeSplit& split);
// "copy the data to a local disk (1.2 MiB, ~6 s): the loader alone would reach ~800 samples/s".
std::string LocalCopyNext(const LocalCopyWhatIf& w);
// The storage verdict's next step for `wait` (a storage finding): the local copy's what-if where a copy helps and
// was measured, "faster storage ..." where a copy would read as slowly or the data is on a local drive, else
// "stage the data on a local disk / faster storage".
std::string StorageNext(const ProbeResult& result, const StorageWait& wait);
// ": ~88 samples/s if the mount serves 4 reads at once".
std::string MoreReadersTail(const MoreReaders& m);
// Notes: network data the loader hardly waits on, a warm page cache that hid the drive, heavy writes to a
// network filesystem.
std::vector<std::string> StorageNotes(const ProbeResult& result);

// The report's lines: the loader's time split (per stage) and what the rule found, the page cache, the cold reads,
// the local-copy and more-workers what-ifs (or why there is none), where the run writes. Each without a trailing
// newline.
std::vector<std::string> StorageLines(const ProbeResult& result);
// probe.json's "storage": {data_files {source, sample, opens}, page_cache_before_run and page_cache (each null or
// {files, unreadable, bytes, cached_bytes, share}), loader_time {loader, full: null or {fetch, prep, other, basis,
// cpu_s_per_sample, bytes_per_sample, read_s_per_sample, copy_saves}}, finding (StorageFindingName), fetch_bound (finding is
// storage), copy_helps, more_readers (null or {workers, samples_per_s}), cold_reads (null or {source, local: {files,
// bytes, seconds, cpu_seconds}, local_dir}), local_copy (null or LocalCopyJson), local_copy_why_not, writes
// {bytes_per_s, locations (DataLocationsJson)}}.
nlohmann::ordered_json StorageJson(const ProbeResult& result);
// [{path, file_count, mount_point, fs_type, device, network}]: probe.json's data_locations and storage.writes.
nlohmann::ordered_json DataLocationsJson(const std::vector<core::DataLocation>& locations);

}  // namespace sat::probe
