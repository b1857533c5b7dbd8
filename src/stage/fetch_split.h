// Where a loader's time goes: fetching (waiting on storage: a disk, NFS, a FUSE mount), prep (on the CPU: decoding,
// transforms), or neither (idle, queues, locks). A loader that waits on storage is helped by a local copy or faster
// storage; one that is busy decoding is helped by more workers or cheaper transforms. Pure functions over what the
// sampler saw of the run's processes (core/stage.h StageTelemetry for probe's stages, the attempt's tree readings for
// a sweep's first run): probe's verdict names storage by it, and a sweep stages its data by it (sweep/staging.h).
//
// The split, as shares of the wall time of the processes that load (DataLoader workers, or the trainer itself
// without workers):
//   prep   their CPU time over their wall time (the tree's CPU; in the full stage without workers, the data wait's
//          part not spent blocked);
//   fetch  the share of them waiting in the kernel without taking signals (state 'D', sampled every tick), which is
//          how a read from a disk, NFS or FUSE waits; sleeping on a queue, a socket or a lock is not;
//   other  the rest.
// In the full stage the trainer also computes: without workers the loader's time is the loop's data wait (fetch is
// the blocked share within it, prep the rest of it); with workers the trainer's own CPU is taken as the loop's time
// not spent waiting (one core busy while it steps), and what is left of the tree's CPU is the workers' prep.
#pragma once

#include <optional>

namespace sat::stage {

inline constexpr double kFetchBoundShare = 0.3;   // fetch >= 30% of the loader's time, and more than prep: storage

// What one stage showed of its loader, over its steady part.
struct LoaderActivity {
  double samples_per_s = 0;                      // the stage's rate
  double processes = 1;                          // processes that load: workers, or 1 (the trainer) without
  std::optional<double> cpu_cores;               // the tree's CPU, in cores (100% = 1)
  std::optional<double> sys_cores;               // of it, in the kernel (stime): reads, IPC, page faults
  std::optional<double> blocked;                 // the tree's processes in state 'D', on average
  std::optional<double> data_wait_share;         // full stage only: the loop's share waiting for data
  std::optional<double> read_per_s;              // bytes passed to read() by the tree (rchar), cache included
  std::optional<double> storage_read_per_s;      // of them, fetched from block storage (read_bytes)
};

struct LoaderTimeSplit {
  double fetch = 0, prep = 0, other = 0;       // shares of the loader's time, summing to 1
  std::optional<double> cpu_s_per_sample;      // CPU seconds of the whole tree per sample
  std::optional<double> bytes_per_sample;      // bytes read per sample (rchar)
};

// nullopt without a rate, the tree's CPU or its process states, or (full stage without workers) a data wait.
std::optional<LoaderTimeSplit> SplitLoaderTime(const LoaderActivity& a);

// Fetch stalls bound the loader: fetch >= kFetchBoundShare and fetch > prep.
bool FetchBound(const LoaderTimeSplit& s);

}  // namespace sat::stage
