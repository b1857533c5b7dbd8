// Test fixture: scripted loaders for the storage rule (datastore/storage_wait.h), one per combination of evidence the rule
// must tell apart. The stage tests pin the rule on them; probe's verdict tests and the sweep's staging tests run
// the same cases through their own readings (a probe stage's telemetry, a sweep run's tree readings) and must reach
// the same finding, so the two homes that once disagreed cannot drift apart again.
//
// Each case is what a sampler sees of a training run whose loop waits for data: per tick, the loading processes'
// CPU (cores) and how many of them are in state 'D'; the run's rate, workers and data wait; where its data lives; and
// the cold reads of a sample of its files (source, and a local copy).
#pragma once

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "datastore/storage_wait.h"

namespace sat::datastore::fixtures {

struct Tick {
  double cpu_cores = 0;  // the run's tree
  double blocked = 0;    // its processes in state 'D'
};

struct StorageCase {
  std::string name;
  std::vector<Tick> ticks;       // one per sampler tick over the judged window
  double samples_per_s = 0;
  int workers = 0;               // DataLoader workers; 0: the trainer loads for itself
  double data_wait_share = 0;    // the training loop's share waiting for data
  std::string fs_type;           // the data's mount, as /proc/mounts types it
  bool network = false;          // core::IsNetworkFs of fs_type
  std::optional<ColdReadComparison> cold;
  unsigned cores = 2;
  // What the rule must say.
  StorageFinding finding = StorageFinding::kUnknown;
  bool copy_helps = false;
  bool more_readers_help = false;

  double MeanCpu() const { return Mean(&Tick::cpu_cores); }
  double MeanBlocked() const { return Mean(&Tick::blocked); }
  double Mean(double Tick::*field) const {
    double sum = 0;
    for (const Tick& t : ticks) sum += t.*field;
    return ticks.empty() ? 0 : sum / static_cast<double>(ticks.size());
  }
  // What the rule reads of the case: the ticks' means, as probe and the sweep summarise them.
  StorageEvidence Evidence() const {
    StorageEvidence e;
    e.loader.samples_per_s = samples_per_s;
    e.loader.processes = workers > 0 ? workers : 1;
    e.loader.in_trainer = workers == 0;
    e.loader.cpu_cores = MeanCpu();
    e.loader.blocked = MeanBlocked();
    e.loader.data_wait_share = data_wait_share;
    e.mount = MountKindOfType(fs_type, network);
    e.cold = cold;
    e.cores = cores;
    return e;
  }
};

// `files` read cold at `source_ms` each from the mount (a tenth of a millisecond of it on the CPU) and `local_ms`
// from a local copy.
inline ColdReadComparison ColdReads(double source_ms, double local_ms, size_t files = 32) {
  ColdReadComparison c;
  const double n = static_cast<double>(files);
  c.source = {files, files * 60000, n * source_ms / 1000, n * 0.0001};
  c.local = {files, files * 60000, n * local_ms / 1000, n * 0.0001};
  c.local_dir = "/var/cache/saturate";
  return c;
}

// `n` ticks alternating between two readings, as a loader between reads and computing shows.
inline std::vector<Tick> Ticks(Tick a, Tick b, int n = 12) {
  std::vector<Tick> ticks;
  for (int i = 0; i < n; ++i) ticks.push_back(i % 2 == 0 ? a : b);
  return ticks;
}

inline std::vector<StorageCase> StorageCases() {
  std::vector<StorageCase> cases;
  // The project's slow mount (page cache): the trainer reads a 60-KB file per sample, every read waits in 'D'.
  StorageCase d;
  d.name = "DWaitsOnAPageCacheFuseMount";
  d.ticks = Ticks({0.02, 1}, {0.04, 0});  // half the ticks in 'D'
  d.samples_per_s = 22;
  d.data_wait_share = 0.97;
  d.fs_type = "fuse.slowfs";
  d.cold = ColdReads(45, 0.2);
  d.finding = StorageFinding::kStorage;
  d.copy_helps = d.more_readers_help = true;
  cases.push_back(d);

  // The same loader on a FUSE mount with direct I/O: the reader sleeps in the FUSE request, state 'S', never 'D'.
  StorageCase s = d;
  s.name = "SWaitsOnADirectIoFuseMount";
  s.ticks = Ticks({0.02, 0}, {0.04, 0});
  cases.push_back(s);

  // The same, before (or without) cold reads: 3% CPU at a 97% wait on a FUSE mount is taken for fetching.
  StorageCase inferred = s;
  inferred.name = "SWaitsWithoutColdReadsOnAFuseMount";
  inferred.cold.reset();
  cases.push_back(inferred);

  // 3% CPU at a 97% wait on a local disk whose files read in 0.2 ms: the loader waits on something else (a lock, a
  // queue, a producer); no copy helps that.
  StorageCase elsewhere = s;
  elsewhere.name = "LowCpuHighWaitOnAFastLocalDisk";
  elsewhere.fs_type = "ext4";
  elsewhere.cold = ColdReads(0.2, 0.2);
  elsewhere.finding = StorageFinding::kElsewhere;
  elsewhere.copy_helps = elsewhere.more_readers_help = false;
  cases.push_back(elsewhere);

  // A trainer decoding at a full core on a FUSE mount whose reads take 2 ms: the CPU side, whatever the mount.
  StorageCase cpu;
  cpu.name = "HighCpuDecodingOnAFuseMount";
  cpu.ticks = Ticks({0.97, 0}, {0.93, 0});
  cpu.samples_per_s = 200;
  cpu.data_wait_share = 0.9;
  cpu.fs_type = "fuse.slowfs";
  cpu.cold = ColdReads(2, 0.1);
  cpu.finding = StorageFinding::kCpu;
  cases.push_back(cpu);

  // Four workers on four cores, 3.7 cores busy (3.3 of them theirs), now and then one in 'D': prep.
  StorageCase workers;
  workers.name = "HighCpuWithWorkersNowAndThenInD";
  workers.ticks = Ticks({3.6, 0}, {3.8, 1}, 10);
  workers.samples_per_s = 900;
  workers.workers = 4;
  workers.data_wait_share = 0.6;
  workers.fs_type = "nfs4";
  workers.network = true;
  workers.cold = ColdReads(1, 0.1);
  workers.cores = 4;
  workers.finding = StorageFinding::kCpu;
  cases.push_back(workers);

  // A local spinning disk: the reader waits in 'D', and a copy on another local disk of the same kind reads as
  // slowly: storage, but no copy helps.
  StorageCase disk;
  disk.name = "DWaitsOnASlowLocalDisk";
  disk.ticks = Ticks({0.1, 1}, {0.1, 1});
  disk.samples_per_s = 60;
  disk.data_wait_share = 0.9;
  disk.fs_type = "ext4";
  disk.cold = ColdReads(9, 8.5);
  disk.finding = StorageFinding::kStorage;
  disk.copy_helps = false;
  disk.more_readers_help = true;
  cases.push_back(disk);

  // One worker on a 100-ms mount: storage and too few parallel reads both explain the wait.
  StorageCase both;
  both.name = "OneWorkerOnAHighLatencyMount";
  both.ticks = Ticks({0.07, 0}, {0.09, 0});
  both.samples_per_s = 9;
  both.workers = 1;
  both.data_wait_share = 0.95;
  both.fs_type = "fuse.gcsfuse";
  both.network = true;
  both.cold = ColdReads(100, 0.3);
  both.finding = StorageFinding::kStorage;
  both.copy_helps = both.more_readers_help = true;
  cases.push_back(both);
  return cases;
}

}  // namespace sat::datastore::fixtures
