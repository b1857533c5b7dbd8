#include "probe/verdict.h"

#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/storage.h"
#include "probe/test_results.h"
#include "datastore/test_storage_cases.h"

namespace sat::probe {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using namespace results;

// The e2e loader-bound case: workers 0 and an expensive transform; the trainer alone loads, on one core.
ProbeResult LoaderBoundWithHelper() {
  ProbeResult r = WithHelper(true, 212, 1840, 208);
  r.full.data_wait_share = 0.71;
  SetCpu(r.loader, 98, 1, 14);
  SetCpu(r.full, 99, 1, 15);
  SetGpu(r.full, 11, 3);
  return r;
}

ProbeResult LoaderBoundParsed() {
  ProbeResult r = Parsed(true, 208);
  r.full.data_wait_share = 0.71;
  SetCpu(r.full, 99, 1, 15);
  SetGpu(r.full, 11, 3);
  return r;
}

TEST(Decide, LoaderCpuSaturatedWithTheHelper) {
  Verdict v = Decide(LoaderBoundWithHelper());
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_FALSE(v.failed);
  EXPECT_EQ(v.cause, "loader CPU-saturated");
  EXPECT_EQ(v.evidence,
            "loader 212 samples/s < compute 1,840 samples/s; data wait 71% of each step; "
            "loader CPU 98% of 1 core with 0 workers; host CPU 15% of 8 cores");
  EXPECT_EQ(v.next, "more loader workers (now 0; the machine has 8 cores) or cheaper transforms / preload / "
                    "cache decoded data");
}

TEST(Decide, LoaderCpuSaturatedFromParsedLinesGivesTheSameVerdict) {
  Verdict with = Decide(LoaderBoundWithHelper());
  Verdict without = Decide(LoaderBoundParsed());
  EXPECT_EQ(without.bottleneck, with.bottleneck);
  EXPECT_EQ(without.cause, with.cause);
  EXPECT_EQ(without.next, with.next);
  EXPECT_EQ(without.evidence, "full 208 samples/s; data wait 71% of each step; run CPU 99% of 1 core with 0 "
                              "workers; host CPU 15% of 8 cores");
}

TEST(Decide, LoaderStageNarrowerEvenWithoutMuchDataWait) {
  ProbeResult r = LoaderBoundWithHelper();
  r.full.data_wait_share = 0.05;  // e.g. prefetching hides the wait; the stages still show the narrow pipe
  EXPECT_EQ(Decide(r).bottleneck, "loader");
}

TEST(Decide, LoaderSaturatingWorkersAsksForMoreWorkers) {
  ProbeResult r = LoaderBoundWithHelper();
  SetCpu(r.loader, 380, 5, 50);  // 4 workers using 3.8 cores
  Verdict v = Decide(r);
  EXPECT_EQ(v.cause, "loader CPU-saturated");
  EXPECT_THAT(v.evidence, HasSubstr("loader CPU 380% of 4 cores with 4 workers"));
  EXPECT_THAT(v.next, HasSubstr("(now 4; the machine has 8 cores)"));
}

TEST(Decide, LoaderOnABusyMachineAsksForCheaperTransformsNotWorkers) {
  ProbeResult r = LoaderBoundWithHelper();
  SetCpu(r.loader, 560, 8, 95);  // 7 workers at 80% each, host at 95%
  SetCpu(r.full, 560, 8, 95);    // ... and the same while training
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_THAT(v.cause, HasSubstr("machine's cores are busy"));
  EXPECT_THAT(v.next, HasSubstr("cheaper transforms"));
  EXPECT_THAT(v.next, HasSubstr("more workers would not help"));
}

TEST(Decide, LoaderWaitingForTheDiskPointsAtStorage) {
  ProbeResult r = WithHelper(true, 300, 1800, 290);
  r.full.data_wait_share = 0.6;
  SetCpu(r.loader, 120, 5, 30);  // 4 workers, barely busy
  r.loader.telemetry.host_iowait_pct = Flat(25);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "storage");
  EXPECT_EQ(v.cause, "storage: the loader waits for the disk");
  EXPECT_THAT(v.evidence, HasSubstr("iowait 25%"));
  EXPECT_EQ(v.next, "stage the data on a local disk / faster storage");
}

// The e2e slow-mount case: one loading process at 40 samples/s, 5% of a core busy, blocked on reads 90% of ticks.
ProbeResult SlowLoader(core::DataLocation where) {
  ProbeResult r = WithHelper(false, 40, 9000, 39);
  r.full.data_wait_share = 0.95;
  SetCpu(r.loader, 5, 1, 10);
  SetBlocked(r.loader, 0.9, 40 * 4096);
  r.data_locations = {std::move(where)};
  return r;
}

TEST(Decide, FetchStallsNameStorageAndItsFilesystem) {
  Verdict v = Decide(SlowLoader({"/mnt/slow/f1.bin", 64, "/mnt/slow", "fuse.slowfs", "slowfs", false}));
  EXPECT_EQ(v.bottleneck, "storage");
  EXPECT_EQ(v.cause,
            "fetch stalls: the loader waits on /mnt/slow (fuse.slowfs, FUSE) 90% of its time (processes in state D)");
  EXPECT_THAT(v.evidence, HasSubstr("loader time: fetch 90%, prep 5%"));
  EXPECT_EQ(v.next, "stage the data on a local disk / faster storage");

  Verdict ssh = Decide(SlowLoader({"/mnt/ssh/f1.bin", 64, "/mnt/ssh", "fuse.sshfs", "root@127.0.0.1:/d", true}));
  EXPECT_EQ(ssh.bottleneck, "storage");
  EXPECT_EQ(ssh.cause,
            "fetch stalls: the loader waits on /mnt/ssh (fuse.sshfs, network filesystem) 90% of its time (processes in "
            "state D)");
}

TEST(Decide, FetchStallsPointAtTheMeasuredLocalCopyAndAtMoreWorkers) {
  ProbeResult r = SlowLoader({"/mnt/slow/f1.bin", 64, "/mnt/slow", "fuse.slowfs", "slowfs", false});
  r.storage.local_copy = ExampleLocalCopy();
  r.full.auto_seen = true;
  r.full.loader = measure::LoaderInfo{};
  r.full.loader->site = "train.py:57";
  r.full.loader->num_workers = 0;
  Verdict v = Decide(r);
  // Both explain the wait: one reader mostly waiting on a FUSE mount. A copy removes the round trips, more workers
  // overlap them: 4 readers at 40 samples/s each.
  EXPECT_EQ(v.next, "copy the data to a local disk (1.2 MiB, ~6 s): the loader alone would reach ~800 samples/s; or "
                    "overlap the round trips: DataLoader at train.py:57: num_workers=0 → try 4 (the machine has 8 "
                    "cores): ~160 samples/s if the mount serves 4 reads at once");
  // A machine whose one core the reader has already: the copy alone.
  r.machine.cpu_count = 1;
  EXPECT_EQ(Decide(r).next, "copy the data to a local disk (1.2 MiB, ~6 s): the loader alone would reach ~800 "
                            "samples/s");
}

// The storage rule's scripted loaders (datastore/test_storage_cases.h) through probe: its full stage's telemetry made of
// the same ticks, the data on the case's mount and its cold reads. Probe must find what the rule finds, and name
// storage exactly where the rule does.
class ProbeStorageCases : public testing::TestWithParam<datastore::fixtures::StorageCase> {};

TEST_P(ProbeStorageCases, TheVerdictFollowsTheRule) {
  const datastore::fixtures::StorageCase& c = GetParam();
  ProbeResult r = Probe(false);
  r.helper = true;
  r.full = Measured(core::StageKind::kFull, c.samples_per_s);
  r.full.data_wait_share = c.data_wait_share;
  r.loader = Skipped(core::StageKind::kLoader, "the budget was spent");
  r.compute = Skipped(core::StageKind::kCompute, "the budget was spent");
  std::vector<double> cpu_pct, blocked;
  for (const datastore::fixtures::Tick& t : c.ticks) {
    cpu_pct.push_back(t.cpu_cores * 100);
    blocked.push_back(t.blocked);
  }
  r.full.telemetry.tree_cpu_pct = telemetry::Summarize(cpu_pct);
  r.full.telemetry.tree_blocked = telemetry::Summarize(blocked);
  r.full.telemetry.tree_workers = Flat(c.workers);
  r.full.telemetry.host_cpu_pct = Flat(40);
  r.machine.cpu_count = c.cores;
  r.full.telemetry.cpu_count = c.cores;
  r.data_locations = {{"/data/f1.bin", 64, "/data", c.fs_type, "dev", c.network}};
  r.storage.cold_reads = c.cold;
  ASSERT_EQ(LocalCopyDue(r), c.fs_type != "ext4" || c.finding == datastore::StorageFinding::kStorage);
  const Verdict v = Decide(r);
  const nlohmann::ordered_json j = StorageJson(r);
  EXPECT_EQ(j["finding"], std::string(datastore::StorageFindingName(c.finding))) << j.dump();
  EXPECT_EQ(j["copy_helps"], c.copy_helps);
  EXPECT_EQ(v.bottleneck, c.finding == datastore::StorageFinding::kStorage ? "storage" : "loader") << v.cause;
  if (c.finding == datastore::StorageFinding::kCpu) {
    EXPECT_THAT(v.cause, HasSubstr("CPU"));
  }
  if (c.finding == datastore::StorageFinding::kStorage) {
    EXPECT_THAT(v.cause, HasSubstr("fetch stalls: the loader waits on /data (" + c.fs_type));
    EXPECT_EQ(j["more_readers"].is_null(), !c.more_readers_help);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ProbeStorageCases, testing::ValuesIn(datastore::fixtures::StorageCases()),
                         [](const testing::TestParamInfo<datastore::fixtures::StorageCase>& info) {
                           return info.param.name;
                         });

TEST(Decide, AWarmLocalLoaderBusyDecodingNamesTheCpuSide) {
  ProbeResult r = WithHelper(false, 2000, 9000, 1900);
  r.full.data_wait_share = 0.6;
  SetCpu(r.loader, 70, 1, 40);  // not saturated (a shared machine), but on the CPU 70% of its time
  SetBlocked(r.loader, 0, 2000 * 4096);
  r.data_locations = {{"/data/f1.bin", 64, "/", "ext4", "/dev/vda", false}};
  r.storage.page_cache = telemetry::ResidencySample{64, 0, 64 * 4096, 64 * 4096};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_EQ(v.cause, "loader CPU: prep (decoding, transforms), prep 70% of its time");
  EXPECT_THAT(Notes(v), HasSubstr("100% of the data was in the page cache when the loader was measured, so the drive "
                                  "behind / (ext4, local) was not tested"));
}

TEST(Decide, NetworkDataTheLoaderHardlyWaitsOnIsNotTheCause) {
  ProbeResult r = WithHelper(false, 300, 9000, 290);
  r.full.data_wait_share = 0.6;
  SetCpu(r.loader, 97, 1, 30);
  SetBlocked(r.loader, 0.02, 300 * 4096);
  r.data_locations = {{"/mnt/data/a.jpg", 2000, "/mnt/data", "nfs4", "fileserver:/export", true}};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_EQ(v.cause, "loader CPU-saturated, prep 97% of its time");
  // 2% of its ticks in 'D', 3% off the CPU: the larger.
  EXPECT_THAT(Notes(v), HasSubstr("the loader waited on the network filesystem only 3% of its time"));
}

TEST(Decide, HeavyWritesToANetworkFilesystemAreNoted) {
  ProbeResult r = WithHelper(true, 3000, 1200, 1180);
  r.storage.write_bytes_per_s = 8 << 20;
  r.storage.write_locations = {{"/nfs/ckpt/model.pt", 1, "/nfs", "nfs4", "server:/x", true}};
  Verdict v = Decide(r);
  EXPECT_THAT(Notes(v), HasSubstr("the run writes 8.0 MiB/s, to /nfs (nfs4, network filesystem) among others"));
  r.storage.write_bytes_per_s = 100 << 10;  // light: no note
  EXPECT_THAT(Notes(Decide(r)), Not(HasSubstr("writes")));
}

TEST(Decide, LoaderReadingFromANetworkFilesystem) {
  ProbeResult r = WithHelper(true, 300, 1800, 290);
  r.full.data_wait_share = 0.6;
  SetCpu(r.loader, 120, 5, 30);
  r.data_locations = {{"/mnt/data/train/a.jpg", 2000, "/mnt/data", "nfs4", "fileserver:/export", true},
                      {"/home/ana/labels.csv", 1, "/home", "ext4", "/dev/nvme0n1p3", false}};
  Verdict v = Decide(r);
  // Four workers 30% on the CPU, no process states: on a network mount their time off the CPU is taken for fetching.
  EXPECT_EQ(v.cause,
            "fetch stalls: the loader waits on /mnt/data (nfs4, network filesystem) 70% of its time (time off the CPU "
            "on a network or FUSE mount)");
  EXPECT_THAT(v.evidence, HasSubstr("loader time: fetch 70%, prep 30%"));
  EXPECT_EQ(v.next, "stage the data on a local disk / faster storage");
  EXPECT_THAT(Notes(v), HasSubstr("data on a network filesystem: 2,000 files on /mnt/data (nfs4 "
                                  "fileserver:/export); stage it on a local disk"));
  EXPECT_THAT(Notes(v), Not(HasSubstr("/home")));
}

TEST(Decide, NetworkDataIsNotedWhateverTheBottleneck) {
  ProbeResult r = WithHelper(true, 3000, 1200, 1180);
  r.full.data_wait_share = 0.02;
  r.data_locations = {{"/data/s3/shard.tar", 3, "/data/s3", "fuse.s3fs", "s3fs", true}};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_THAT(Notes(v), HasSubstr("3 files on /data/s3 (fuse.s3fs s3fs)"));
}

TEST(Decide, LoaderNeitherCpuNorDiskBoundAsksForWorkersOrPrefetch) {
  ProbeResult r = WithHelper(true, 300, 1800, 290);
  r.full.data_wait_share = 0.6;
  SetCpu(r.loader, 120, 5, 30);
  Verdict v = Decide(r);
  EXPECT_THAT(v.cause, HasSubstr("latency"));
  EXPECT_EQ(v.next, "more loader workers (now 4; the machine has 8 cores) or a larger prefetch_factor");
}

TEST(Decide, LoaderWithoutCpuTelemetrySaysSo) {
  ProbeResult r = LoaderBoundParsed();
  r.full.telemetry = {};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_EQ(v.cause, "loader (CPU use not measured)");
  EXPECT_EQ(v.evidence, "full 208 samples/s; data wait 71% of each step");
}

TEST(Decide, AFullRunFasterThanTheLoaderStageDoesNotBlameTheLoader) {
  ProbeResult r = WithHelper(true, 800, 1200, 1150);
  r.full.data_wait_share = 0.03;
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_THAT(Notes(v), HasSubstr("ran faster than the loader alone"));
}

TEST(Decide, ComputeBoundOnAGpu) {
  Verdict v = Decide(ComputeBoundWithHelper());
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_EQ(v.cause, "GPU compute");
  EXPECT_EQ(v.evidence,
            "compute 1,200 samples/s ≤ loader 3,000 samples/s; full 1,150 samples/s = 96% of the compute ceiling; "
            "data wait 2% of each step; GPU util 97%, memory 6.0 GiB of 16.0 GiB");
  EXPECT_EQ(v.next, "mixed precision (bf16/fp16 autocast) if it is not on yet, then a larger batch size");
  EXPECT_THAT(Notes(v), HasSubstr("mixed precision can still raise throughput"));
}

// A multi-rank job on a busy machine can spend a stage's whole share of the budget starting up: the stage ran,
// was stopped, and reported nothing. The notes say so, rather than leaving a blank the user reads as a failure.
TEST(Decide, AStageWhoseStartUpUsedItsShareIsNoted) {
  ProbeResult r = ComputeBoundWithHelper();
  r.compute.estimate = {};
  r.compute.observations = 0;
  r.compute.wall_s = 13.3;
  Verdict v = Decide(r);
  EXPECT_THAT(Notes(v), HasSubstr("the compute stage reported no throughput in its 13 s share of the budget (0 "
                                  "steady observations): its start-up used it up; a larger --budget measures it"));
  // A measured stage gets no such note.
  EXPECT_THAT(Notes(Decide(ComputeBoundWithHelper())), Not(HasSubstr("reported no throughput")));
}

// On Hopper and later, GPM shows what utilisation hides: the GPU is "busy" while few SMs and tensor cores work.
TEST(Decide, GpmActivityStandsBesideUtilisationInTheEvidence) {
  ProbeResult r = ComputeBoundWithHelper();
  r.full.telemetry.gpm_sm_active_pct = Flat(38);
  r.full.telemetry.gpm_tensor_active_pct = Flat(9);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_THAT(v.evidence, HasSubstr("GPU util 97%, SM active 38%, tensor cores 9%, memory 6.0 GiB of 16.0 GiB"));
  // Before Hopper there is no GPM: nothing is said about it, rather than 0%.
  EXPECT_THAT(Decide(ComputeBoundWithHelper()).evidence, Not(HasSubstr("SM active")));
}

TEST(Decide, ComputeBoundFromParsedLinesGivesTheSameVerdict) {
  ProbeResult r = Parsed(true, 1150);
  r.full.data_wait_share = 0.02;
  SetGpu(r.full, 97, 6);
  Verdict with = Decide(ComputeBoundWithHelper());
  Verdict without = Decide(r);
  EXPECT_EQ(without.bottleneck, "compute");
  EXPECT_EQ(without.cause, with.cause);
  EXPECT_EQ(without.next, with.next);
  EXPECT_EQ(without.evidence, "full 1,150 samples/s; data wait 2% of each step; GPU util 97%, memory 6.0 GiB of "
                              "16.0 GiB");
}

TEST(Decide, ComputeBoundWithoutAGpuInventsNoGpuNumbers) {
  ProbeResult r = WithHelper(false, 3000, 1200, 1150);
  r.full.data_wait_share = 0.02;
  SetCpu(r.full, 790, 3, 99);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_EQ(v.cause, "CPU compute (no GPU probed)");
  EXPECT_THAT(v.next, HasSubstr("a GPU"));
  EXPECT_THAT(v.evidence, Not(HasSubstr("GPU")));
  EXPECT_THAT(Notes(v), HasSubstr("no GPU probed"));
  EXPECT_THAT(Notes(v), Not(HasSubstr("GPU memory")));
}

// probe_compute_bound.sh's --parse case, on a CPU: only the full stage, from the printed lines.
TEST(Decide, ComputeBoundOnTheCpuFromParsedLinesGivesTheSameVerdict) {
  ProbeResult r = Parsed(false, 41);
  r.full.data_wait_share = 0.01;
  SetCpu(r.full, 195, 2, 98);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_EQ(v.cause, "CPU compute (no GPU probed)");
  EXPECT_THAT(v.evidence, Not(HasSubstr("GPU")));
}

TEST(Decide, ComputeBoundOnAnIdleGpuIsCpuSideWork) {
  ProbeResult r = ComputeBoundWithHelper();
  SetGpu(r.full, 23, 2);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_EQ(v.cause, "CPU-side work in the step: the GPU is busy only 23%");
  EXPECT_THAT(v.next, HasSubstr("a larger batch size"));
}

TEST(Decide, AGpuMachineWhoseRunHoldsNoGpuMemoryRunsOnTheCpu) {
  ProbeResult r = ComputeBoundWithHelper();
  SetGpu(r.full, 0, 0.5);  // another process's memory on the device
  r.full.telemetry.tree_gpu_mem_bytes = Flat(0);
  Verdict v = Decide(r);
  EXPECT_THAT(v.cause, HasSubstr("runs on the CPU"));
}

TEST(Decide, GpuWithoutTelemetryIsNotedAndNotGuessed) {
  ProbeResult r = ComputeBoundWithHelper();
  r.full.telemetry = {};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_THAT(v.evidence, Not(HasSubstr("GPU util")));
  EXPECT_THAT(Notes(v), HasSubstr("no GPU telemetry"));
}

TEST(Decide, TransferWhenFullFallsBelowBothStagesWithoutWaiting) {
  ProbeResult r = WithHelper(true, 3000, 2000, 1200);
  r.full.data_wait_share = 0.03;
  SetGpu(r.full, 60, 5);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "transfer");
  EXPECT_EQ(v.cause, "host-to-device copies");
  EXPECT_THAT(v.evidence, HasSubstr("full 1,200 samples/s is 60% of the narrower stage (compute 2,000 samples/s)"));
  EXPECT_EQ(v.next, "pin_memory=True in the DataLoader and .to(device, non_blocking=True)");
}

TEST(Decide, TheSameGapWithoutAGpuIsNotATransfer) {
  ProbeResult r = WithHelper(false, 3000, 2000, 1200);
  r.full.data_wait_share = 0.03;
  EXPECT_EQ(Decide(r).bottleneck, "compute");
}

TEST(Decide, TransferFromCopyNamedPhases) {
  ProbeResult r = Parsed(true, 900);
  r.full.data_wait_share = 0.02;
  r.full.phase_shares = {{"h2d", 0.35}};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "transfer");
  EXPECT_THAT(v.evidence, HasSubstr("copy phases take 35% of each step"));
}

ProbeResult MetricEveryStepWithHelper() {
  ProbeResult r = WithHelper(true, 3000, 600, 560);
  r.full.data_wait_share = 0.05;
  r.full.phase_shares = {{"metrics", 0.45}, {"logging", 0.02}};
  r.compute.phase_shares = {{"metrics", 0.47}};
  return r;
}

TEST(Decide, StepOverheadFromANamedPhase) {
  Verdict v = Decide(MetricEveryStepWithHelper());
  EXPECT_EQ(v.bottleneck, "step-overhead");
  EXPECT_EQ(v.cause, "per-step metrics work");
  EXPECT_EQ(v.evidence,
            "metrics 45%, logging 2% of each step; without that work a step would take 53% of its time (up to "
            "1.89x the throughput); data wait 5%; full 560 samples/s");
  EXPECT_EQ(v.next, "drop or thin the per-step metrics work (compute it every N steps, off the hot path)");
}

TEST(Decide, StepOverheadFromParsedLinesGivesTheSameVerdict) {
  ProbeResult r = Parsed(true, 560);
  r.full.data_wait_share = 0.05;
  r.full.phase_shares = {{"metrics", 0.45}, {"logging", 0.02}};
  Verdict with = Decide(MetricEveryStepWithHelper());
  Verdict without = Decide(r);
  EXPECT_EQ(without.bottleneck, with.bottleneck);
  EXPECT_EQ(without.next, with.next);
}

TEST(Decide, TheLargerOfDataWaitAndOverheadWinsAndTheOtherIsNoted) {
  ProbeResult r = Parsed(false, 565);
  r.full.data_wait_share = 0.43;
  r.full.phase_shares = {{"metrics", 0.26}};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_THAT(Notes(v), HasSubstr("also: per-step metrics work takes 26% of each step"));

  r.full.data_wait_share = 0.31;
  r.full.phase_shares = {{"metrics", 0.5}};
  v = Decide(r);
  EXPECT_EQ(v.bottleneck, "step-overhead");
  EXPECT_THAT(Notes(v), HasSubstr("also: waiting for data takes 31% of each step"));
}

// ResNet-50 (AMP off) on an H100, as probe measured it: the loader alone 3.6x faster than compute, full at 94% of
// compute, yet 33% of each step waiting for data and 13% after the step: CPU time spent while the GPU worked
// through kernels already queued.
ProbeResult AsyncGpuAtTheCeiling() {
  ProbeResult r = WithHelper(true, 6527, 1799, 1690);
  r.full.data_wait_share = 0.33;
  r.full.phase_shares = {{"after_step", 0.13}};
  SetCpu(r.loader, 1521, 1, 94);
  SetCpu(r.full, 586, 1, 40);
  SetGpu(r.full, 100, 14);
  return r;
}

// The same loop in bf16 (part 1 on the H100): full at 87% of compute with 36% of each step waiting for data.
ProbeResult Bf16BelowTheCeiling() {
  ProbeResult r = AsyncGpuAtTheCeiling();
  r.full = Measured(core::StageKind::kFull, 1882);
  r.compute = Measured(core::StageKind::kCompute, 2159);
  r.full.data_wait_share = 0.36;
  SetCpu(r.full, 620, 1, 40);
  return r;
}

TEST(Decide, DataWaitHiddenBehindQueuedGpuWorkIsNotTheBottleneck) {
  Verdict v = Decide(AsyncGpuAtTheCeiling());
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_THAT(v.evidence, HasSubstr("full 1,690 samples/s = 94% of the compute ceiling"));
  EXPECT_THAT(Notes(v), HasSubstr("waiting for data 33% of each step overlapped work the GPU already had queued: "
                                  "full runs at 94% of the compute ceiling, so it costs no throughput"));

  // Below the ceiling the wait is real.
  v = Decide(Bf16BelowTheCeiling());
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_THAT(Notes(v), Not(HasSubstr("overlapped")));
}

TEST(Decide, BusyCoresAreReadFromTrainingNotFromTheLoaderAlone) {
  // The loader stage with no workers filled torch's thread pool (host 94%); while training the host was at 40%:
  // workers have cores to run on.
  ProbeResult r = Bf16BelowTheCeiling();
  Verdict v = Decide(r);
  EXPECT_EQ(v.cause, "loader CPU-saturated");
  EXPECT_THAT(v.next, HasSubstr("more loader workers"));
  EXPECT_THAT(v.evidence, HasSubstr("host CPU 40% of 8 cores"));
  // Busy while training too: then cheaper transforms, not workers.
  SetCpu(r.full, 620, 1, 95);
  EXPECT_THAT(Decide(r).cause, HasSubstr("machine's cores are busy"));
}

TEST(Decide, PhasesNamedAfterTheModelsOwnWorkAreNotOverhead) {
  ProbeResult r = Parsed(true, 1000);
  r.full.data_wait_share = 0.02;
  r.full.phase_shares = {{"forward", 0.4}, {"backward", 0.4}, {"optimizer_step", 0.1}};
  SetGpu(r.full, 95, 8);
  EXPECT_EQ(Decide(r).bottleneck, "compute");
}

TEST(Decide, SmallOverheadIsNotABottleneck) {
  ProbeResult r = Parsed(true, 1000);
  r.full.data_wait_share = 0.02;
  r.full.phase_shares = {{"metrics", 0.1}};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_THAT(v.evidence, HasSubstr("named phases 10% of each step"));
}

// The loader-bound case again, from an unmodified script: the next step names the line that built the loader.
ProbeResult LoaderBoundAutomatic() {
  ProbeResult r = Automatic(true, 212, 1840, 208);
  r.full.data_wait_share = 0.71;
  SetCpu(r.loader, 98, 1, 14);
  SetCpu(r.full, 99, 1, 15);
  SetGpu(r.full, 11, 3);
  return r;
}

TEST(Decide, AutomaticLoaderBoundNamesTheDataLoaderToChange) {
  Verdict with_helper = Decide(LoaderBoundWithHelper());
  Verdict v = Decide(LoaderBoundAutomatic());
  EXPECT_EQ(v.bottleneck, with_helper.bottleneck);
  EXPECT_EQ(v.cause, with_helper.cause);
  EXPECT_EQ(v.evidence, with_helper.evidence);
  EXPECT_EQ(v.next, "DataLoader at train.py:57: num_workers=0 → try 4 (the machine has 8 cores), or cheaper "
                    "transforms / preload / cache decoded data");
}

TEST(Decide, AutomaticLoaderLatencyNamesWorkersAndPrefetch) {
  ProbeResult r = Automatic(true, 300, 1800, 290);
  r.full.data_wait_share = 0.6;
  SetCpu(r.loader, 120, 5, 30);
  r.full.loader->num_workers = 4;
  r.full.loader->prefetch_factor = 2;
  Verdict v = Decide(r);
  EXPECT_EQ(v.next, "DataLoader at train.py:57: num_workers=4 → try 8 (the machine has 8 cores), or "
                    "prefetch_factor=2 → try 4");
  // One worker per core already: only the prefetch is left to turn.
  r.full.loader->num_workers = 8;
  SetCpu(r.loader, 120, 9, 30);
  EXPECT_EQ(Decide(r).next, "DataLoader at train.py:57: prefetch_factor=2 → try 4");
  // Without the place (a loader the automatic layer could not locate) the advice stays general.
  r.full.loader->site.reset();
  EXPECT_THAT(Decide(r).next, StartsWith("more loader workers (now 8; the machine has 8 cores)"));
}

TEST(Decide, AutomaticTransferNamesPinMemory) {
  ProbeResult r = Automatic(true, 3000, 2000, 1200);
  r.full.data_wait_share = 0.03;
  SetGpu(r.full, 60, 5);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "transfer");
  EXPECT_EQ(v.next, "DataLoader at train.py:57: pin_memory=False → True, and .to(device, non_blocking=True)");
  r.full.loader->pin_memory = true;
  EXPECT_EQ(Decide(r).next, "pin_memory=True in the DataLoader and .to(device, non_blocking=True)");
}

TEST(Decide, AutomaticComputeBoundNamesTheBatchSize) {
  ProbeResult r = Automatic(true, 3000, 1200, 1150);
  r.full.data_wait_share = 0.02;
  SetGpu(r.compute, 98, 6);
  SetGpu(r.full, 97, 6);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_EQ(v.next, "mixed precision (bf16/fp16 autocast) if it is not on yet, then a larger batch size "
                    "(DataLoader at train.py:57: batch_size=64 → try 128)");
  // A loader with a batch_sampler has no batch size to name.
  r.full.loader->batch_size.reset();
  EXPECT_EQ(Decide(r).next, "mixed precision (bf16/fp16 autocast) if it is not on yet, then a larger batch size");
}

TEST(Decide, AfterStepWorkIsOverheadInWords) {
  ProbeResult r = Automatic(false, 3000, 1200, 700);
  r.full.data_wait_share = 0.05;
  r.full.phase_shares = {{"after_step", 0.4}};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "step-overhead");
  EXPECT_EQ(v.cause, "after-step work (metrics, logging, checkpoints)");
  EXPECT_THAT(v.evidence, StartsWith("after-step work (metrics, logging, checkpoints) 40% of each step; "));
  EXPECT_THAT(v.evidence, Not(HasSubstr("after_step")));
  EXPECT_EQ(v.next, "thin the work after each training step (metrics, logging, checkpoints): do it every N steps, "
                    "off the hot path");

  r.full.data_wait_share = 0.5;
  r.full.phase_shares = {{"after_step", 0.2}};
  v = Decide(r);
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_THAT(Notes(v), HasSubstr("also: after-step work (metrics, logging, checkpoints) takes 20% of each step"));
}

TEST(PhaseLabel, AfterStepInWords) {
  EXPECT_EQ(PhaseLabel("after_step"), "after-step work (metrics, logging, checkpoints)");
  EXPECT_EQ(PhaseLabel("metrics"), "metrics");
}

TEST(Decide, UtilisationThatOverstatesTheWorkIsNoted) {
  ProbeResult r = WithHelper(true, 1200, 1500, 1000);
  r.full.data_wait_share = 0.35;
  SetGpu(r.full, 91, 6);
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "loader");
  EXPECT_THAT(Notes(v), HasSubstr("GPU utilisation is 91% but full runs at 67% of the compute ceiling: "
                                  "utilisation overstates the work done"));
  SetGpu(r.full, 60, 6);
  EXPECT_THAT(Notes(Decide(r)), Not(HasSubstr("overstates")));
}

TEST(Decide, MemoryHeadroomAndAFullGpuAreNoted) {
  ProbeResult r = ComputeBoundWithHelper();
  EXPECT_THAT(Notes(Decide(r)), HasSubstr("GPU memory peak 6.0 GiB of 16.0 GiB (38%): room for a larger batch or "
                                          "a second run"));
  SetGpu(r.full, 97, 15.2);
  Verdict v = Decide(r);
  EXPECT_THAT(Notes(v), Not(HasSubstr("room for")));
  EXPECT_THAT(Notes(v), HasSubstr("a larger batch is unlikely to fit"));
  SetGpu(r.full, 97, 11);
  EXPECT_THAT(Notes(Decide(r)), AllOf(Not(HasSubstr("room for")), Not(HasSubstr("unlikely to fit"))));
}

TEST(Decide, EstimateQualityIsNoted) {
  ProbeResult r = ComputeBoundWithHelper();
  EXPECT_THAT(Notes(Decide(r)), Not(HasSubstr("estimate")));
  r.full.estimate.converged = false;
  r.full.estimate.rel_half_width = 0.054;
  EXPECT_THAT(Notes(Decide(r)), HasSubstr("the full estimate is ±5.4%: not converged within its budget"));
  // Within the target, yet not converged: the trend bound held it back, and the note says so.
  r.full.estimate.rel_half_width = 0.018;
  r.full.estimate.trend_rel = 0.026;
  r.full.estimate.trend_bound_rel = 0.041;
  EXPECT_THAT(Notes(Decide(r)), HasSubstr("the full estimate is ±1.8%, but its rate was still moving (the trend "
                                          "line ends +2.6% from it, and could be up to 4.1% off)"));
  r.target_rel_half_width = 0.01;
  EXPECT_THAT(Notes(Decide(r)), HasSubstr("the full estimate is ±1.8%: not converged within its budget"));
  r.full.estimate.rel_half_width = 0.054;
  r.loader.estimate.converged = false;
  r.loader.estimate.drift = true;
  r.loader.estimate.drift_rel = -0.12;
  EXPECT_THAT(Notes(Decide(r)), HasSubstr("the loader rate drifted -12%"));
  r.compute.estimate.converged = false;
  r.compute.estimate.n_batches = 1;
  r.compute.estimate.rel_half_width = std::numeric_limits<double>::infinity();
  r.compute.observations = 3;
  EXPECT_THAT(Notes(Decide(r)), HasSubstr("the compute stage had too few observations (3) for an interval"));
  r.full.estimate.warmup_at_limit = true;
  EXPECT_THAT(Notes(Decide(r)), HasSubstr("the full stage may not have reached a steady state"));
}

TEST(Decide, ALoaderStoppedFarAboveTheFullRunSaysSoInsteadOfNotConverged) {
  ProbeResult r = WithHelper(true, 40000, 1200, 1150);
  r.loader.estimate.converged = false;
  r.loader.estimate.rel_half_width = 0.043;
  r.loader.stopped_above = 11500;
  Verdict v = Decide(r);
  EXPECT_THAT(Notes(v), HasSubstr("the loader stage stopped at ±4.3%, once all of its interval was above 11,500 "
                                  "samples/s (10x the full run): far from holding training back"));
  EXPECT_THAT(Notes(v), Not(HasSubstr("not converged")));
  EXPECT_EQ(v.bottleneck, Decide(WithHelper(true, 40000, 1200, 1150)).bottleneck);
}

TEST(Readings, WorkersAndGpuMemory) {
  core::StageTelemetry t;
  EXPECT_FALSE(WorkerCount(t).has_value());
  t.tree_workers = Flat(4);
  EXPECT_EQ(WorkerCount(t), 4);
  t.tree_workers = Flat(0);
  EXPECT_EQ(WorkerCount(t), 0);
  // Under a wrapper (sh -c python3 train.py: the shell, the trainer, two workers) only the workers count.
  t.tree_processes = Flat(4);
  t.tree_workers = Flat(2);
  EXPECT_EQ(WorkerCount(t), 2);

  ProbeResult r = Probe(true);
  EXPECT_EQ(GpuMemoryTotal(r, t), 16 * kGiB);
  t.gpu_mem_total_bytes = 8 * kGiB;
  EXPECT_EQ(GpuMemoryTotal(r, t), 8 * kGiB);
  EXPECT_FALSE(GpuMemoryTotal(Probe(false), core::StageTelemetry{}).has_value());
}

TEST(Readings, WorkersAreTheDataLoadersNotEveryForkedProcess) {
  // torch.compile's compile workers in the tree (16 on an H100) while the DataLoader had none.
  core::StageResult s = Measured(core::StageKind::kFull, 3023);
  s.telemetry.tree_workers = Flat(16);
  EXPECT_EQ(StageWorkers(s), 16);  // nothing better known: the tree's count
  measure::LoaderInfo loader;
  loader.num_workers = 0;
  s.loader = loader;
  EXPECT_EQ(StageWorkers(s), 0);
  // Two ranks with two workers each.
  s.loader->num_workers = 2;
  s.world_size = 2;
  EXPECT_EQ(StageWorkers(s), 4);
}

}  // namespace
}  // namespace sat::probe
