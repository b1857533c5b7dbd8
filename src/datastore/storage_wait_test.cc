#include "datastore/storage_wait.h"

#include <gtest/gtest.h>

#include "datastore/test_loader_activity.h"
#include "datastore/test_storage_cases.h"

namespace sat::datastore {
namespace {

using fixtures::Evidence;
using fixtures::Loader;
using fixtures::StorageCase;

class StorageRule : public testing::TestWithParam<StorageCase> {};

// The rule on each scripted loader: its finding, whether a copy helps, whether more readers do.
TEST_P(StorageRule, TellsTheCasesApart) {
  const StorageCase& c = GetParam();
  StorageWait w = JudgeStorageWait(c.Evidence());
  ASSERT_TRUE(w.split.has_value());
  EXPECT_EQ(StorageFindingName(w.finding), StorageFindingName(c.finding)) << SplitClause(*w.split);
  EXPECT_EQ(w.copy_helps, c.copy_helps) << FindingText(w);
  EXPECT_EQ(w.more_readers_help, c.more_readers_help);
  // Never a prep share above the CPU share the sampler saw (of the loading processes' time).
  const double frame = c.workers > 0 ? c.workers : c.data_wait_share;
  EXPECT_LE(w.split->prep, std::max(0.0, c.MeanCpu() - (c.workers > 0 ? 1 - c.data_wait_share : 0)) / frame + 1e-12);
  EXPECT_NEAR(w.split->fetch + w.split->prep + w.split->other, 1, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Cases, StorageRule, testing::ValuesIn(fixtures::StorageCases()),
                         [](const testing::TestParamInfo<StorageCase>& info) { return info.param.name; });

TEST(StorageWait, AReaderInStateSIsSeenByItsColdReads) {
  // The loader: 22 samples/s, 3% of a core, the loop waiting 97%, never in 'D'; its files take 45 ms each
  // cold on the mount. Prep is its 3% (not the 97% the wait would give), fetch what the reads account for.
  fixtures::StorageCase c = fixtures::StorageCases()[1];
  StorageWait w = JudgeStorageWait(c.Evidence());
  ASSERT_TRUE(w.split.has_value());
  EXPECT_NEAR(w.split->prep, 0.03 / 0.97, 1e-9);
  EXPECT_NEAR(w.split->fetch, 1 - 0.03 / 0.97, 1e-9);  // the reads account for more: capped at the time off the CPU
  EXPECT_EQ(w.split->basis, FetchBasis::kColdReads);
  EXPECT_NEAR(*w.split->read_s_per_sample, 0.045 - 0.0001, 1e-12);
  EXPECT_NE(SplitClause(*w.split).find("cold reads of its files: 44.9 ms a sample"), std::string::npos)
      << SplitClause(*w.split);
  EXPECT_NE(FindingText(w).find("a local copy reads 225"), std::string::npos) << FindingText(w);
  // Without the cold reads, the FUSE mount alone makes the time off the CPU fetching, said to be inferred.
  c.cold.reset();
  w = JudgeStorageWait(c.Evidence());
  EXPECT_EQ(w.split->basis, FetchBasis::kOffCpuOnMount);
  EXPECT_TRUE(w.copy_helps);
  EXPECT_FALSE(w.copy_time_ratio.has_value());
  // On a local disk the same wait is not storage without evidence of reads.
  c.fs_type = "ext4";
  w = JudgeStorageWait(c.Evidence());
  EXPECT_EQ(w.finding, StorageFinding::kElsewhere);
}

TEST(StorageWait, ACopyMustSaveAShareOfTheLoadersTime) {
  // Blocked in 'D' 90% of its wait, 22 samples/s, but its files read in 0.2 ms from the mount and 0.1 ms from a copy:
  // twice as fast, and still only 0.2% of its time. Storage, but no copy.
  LoaderActivity a = Loader(22, 1, 0.03, 0.9);
  a.in_trainer = true;
  a.data_wait_share = 0.97;
  StorageWait w = JudgeStorageWait(Evidence(a, MountKind::kFuse, fixtures::ColdReads(0.2, 0.1), 2));
  EXPECT_EQ(w.finding, StorageFinding::kStorage);
  EXPECT_NEAR(*w.split->copy_saves, 22 * 0.0001 / 0.97, 1e-9);
  EXPECT_FALSE(w.copy_helps);
  EXPECT_NE(FindingText(w).find("would save only 0.2% of its time"), std::string::npos) << FindingText(w);
  // At 45 ms from the mount a copy saves nearly all of it.
  w = JudgeStorageWait(Evidence(a, MountKind::kFuse, fixtures::ColdReads(45, 0.1), 2));
  EXPECT_TRUE(w.copy_helps);
  EXPECT_NEAR(*w.split->copy_saves, 1 - 0.03 / 0.97, 1e-9);  // at most the time off the CPU
  // Training on that copy: the 97% wait loses its fetch (97%) times what the copy saves (99.8%).
  const double saved = 0.97 * w.split->fetch * (1 - 0.1 / 45);
  EXPECT_NEAR(*TrainingOnCopyEstimate(Evidence(a, MountKind::kFuse, fixtures::ColdReads(45, 0.1), 2), w),
              22 / (1 - saved), 1e-9);
}

TEST(StorageWait, ColdReadsCountAsFarAsThePageCacheMissed) {
  // Four workers at 10% each on an ext4 disk, 8 ms a file cold: 100 samples/s x 8 ms / 4 = 20% of their time.
  LoaderActivity a = Loader(100, 4, 0.4, 0);
  StorageEvidence e = Evidence(a, MountKind::kLocal, fixtures::ColdReads(8, 8), 8);
  // On a local disk nothing says the reads missed the cache: no share from them.
  EXPECT_EQ(JudgeStorageWait(e).split->fetch, 0);
  // The kernel counted every byte from the disk: all of it.
  e.loader.read_per_s = e.loader.storage_read_per_s = 100 * 60000;
  EXPECT_NEAR(JudgeStorageWait(e).split->fetch, 100 * (0.008 - 0.0001) / 4, 1e-9);
  // Probe's residency sample: half the data was cached.
  e.cached_share = 0.5;
  EXPECT_NEAR(JudgeStorageWait(e).split->fetch, 0.5 * 100 * (0.008 - 0.0001) / 4, 1e-9);
  // Two files a sample: twice the reads.
  e.files_per_sample = 2;
  EXPECT_NEAR(JudgeStorageWait(e).split->fetch, 100 * (0.008 - 0.0001) / 4, 1e-9);
}

TEST(StorageWait, ALoaderWaitingOnASlowMountIsFetchBound) {
  // One process at 40 samples/s (a loader alone, no training loop): 5% on the CPU, blocked 90% of the ticks.
  LoaderActivity a = Loader(40, 1, 0.05, 0.9);
  a.read_per_s = 40 * 4096;
  StorageWait w = JudgeStorageWait(Evidence(a, MountKind::kFuse, std::nullopt, 2));
  ASSERT_TRUE(w.split.has_value());
  EXPECT_DOUBLE_EQ(w.split->prep, 0.05);
  EXPECT_DOUBLE_EQ(w.split->fetch, 0.9);  // measured in 'D': the mount's inference is not needed
  EXPECT_EQ(w.split->basis, FetchBasis::kBlocked);
  EXPECT_NEAR(w.split->other, 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(*w.split->cpu_s_per_sample, 0.05 / 40);
  EXPECT_DOUBLE_EQ(*w.split->bytes_per_sample, 4096);
  EXPECT_EQ(w.finding, StorageFinding::kStorage);
  EXPECT_TRUE(w.copy_helps);  // a FUSE mount, no cold reads to compare
  EXPECT_TRUE(w.more_readers_help);
  // On a local disk the same: storage, but a copy to another local disk is not known to help.
  w = JudgeStorageWait(Evidence(a, MountKind::kLocal, std::nullopt, 2));
  EXPECT_EQ(w.finding, StorageFinding::kStorage);
  EXPECT_FALSE(w.copy_helps);
}

TEST(StorageWait, ALoaderBusyDecodingIsNot) {
  // Four workers, 3.6 cores busy, now and then one blocked on a read.
  StorageWait w = JudgeStorageWait(Evidence(Loader(900, 4, 3.6, 0.2), MountKind::kLocal));
  ASSERT_TRUE(w.split.has_value());
  EXPECT_DOUBLE_EQ(w.split->prep, 0.9);
  EXPECT_DOUBLE_EQ(w.split->fetch, 0.05);
  EXPECT_EQ(w.finding, StorageFinding::kCpu);
  // 'D' is read directly, and prep is what is left of the loader's time.
  w = JudgeStorageWait(Evidence(Loader(900, 1, 1.0, 1.0), MountKind::kLocal));
  EXPECT_DOUBLE_EQ(w.split->fetch, 1.0);
  EXPECT_DOUBLE_EQ(w.split->prep, 0.0);
}

TEST(StorageWait, FetchMustOutweighPrepToBind) {
  // 45% on the CPU, 40% in 'D': prep.
  EXPECT_EQ(JudgeStorageWait(Evidence(Loader(50, 1, 0.45, 0.4), MountKind::kLocal)).finding, StorageFinding::kCpu);
  // 25% in 'D', 10% on the CPU, the rest elsewhere: under the 30% that binds.
  EXPECT_EQ(JudgeStorageWait(Evidence(Loader(50, 1, 0.1, 0.25), MountKind::kLocal)).finding, StorageFinding::kElsewhere);
}

TEST(StorageWait, TrainingWithoutWorkersSplitsTheDataWait) {
  LoaderActivity a = Loader(30, 1, 0.6, 0.45);
  a.in_trainer = true;
  a.data_wait_share = 0.6;  // 45 of the 60 points of waiting were blocked reads; the CPU may cover all of the wait
  StorageWait w = JudgeStorageWait(Evidence(a, MountKind::kLocal));
  ASSERT_TRUE(w.split.has_value());
  EXPECT_DOUBLE_EQ(w.split->fetch, 0.75);
  EXPECT_DOUBLE_EQ(w.split->prep, 0.25);
  EXPECT_DOUBLE_EQ(w.split->other, 0.0);
  EXPECT_EQ(w.finding, StorageFinding::kStorage);
  a.data_wait_share = 0;  // no waiting: the loader keeps up
  w = JudgeStorageWait(Evidence(a, MountKind::kLocal));
  EXPECT_EQ(w.finding, StorageFinding::kKeepsUp);
  EXPECT_FALSE(w.split.has_value());
  a.data_wait_share = 0.2;
  EXPECT_EQ(JudgeStorageWait(Evidence(a, MountKind::kLocal)).finding, StorageFinding::kKeepsUp);
}

TEST(StorageWait, TrainingWithWorkersLeavesTheTrainersCoreOut) {
  // Two workers; the trainer waits 50% of the loop, so it is busy half a core; 1.3 cores in all.
  LoaderActivity a = Loader(100, 2, 1.3, 1.0);
  a.data_wait_share = 0.5;
  StorageWait w = JudgeStorageWait(Evidence(a, MountKind::kLocal));
  ASSERT_TRUE(w.split.has_value());
  EXPECT_DOUBLE_EQ(w.split->prep, 0.4);
  EXPECT_DOUBLE_EQ(w.split->fetch, 0.5);
}

TEST(StorageWait, NeedsTheLoadersCpu) {
  LoaderActivity no_cpu = Loader(10, 1, 0.5, 0);
  no_cpu.cpu_cores.reset();
  StorageWait w = JudgeStorageWait(Evidence(no_cpu, MountKind::kFuse));
  EXPECT_EQ(w.finding, StorageFinding::kUnknown);
  EXPECT_FALSE(w.split.has_value());
  // Without a rate there are no per-sample figures and no cold-read share, but the states and the mount still count.
  StorageWait unrated = JudgeStorageWait(Evidence(Loader(0, 1, 0.05, 0.8), MountKind::kLocal, fixtures::ColdReads(40, 0.1)));
  ASSERT_TRUE(unrated.split.has_value());
  EXPECT_DOUBLE_EQ(unrated.split->fetch, 0.8);
  EXPECT_FALSE(unrated.split->cpu_s_per_sample.has_value());
  EXPECT_EQ(unrated.finding, StorageFinding::kStorage);
  EXPECT_TRUE(unrated.copy_helps);  // the cold reads compared: 400x faster locally
}

TEST(StorageWait, MountKinds) {
  EXPECT_EQ(MountKindOfType("nfs4", true), MountKind::kNetwork);
  EXPECT_EQ(MountKindOfType("fuse.sshfs", true), MountKind::kNetwork);
  EXPECT_EQ(MountKindOfType("fuse.slowfs", false), MountKind::kFuse);
  EXPECT_EQ(MountKindOfType("fuse", false), MountKind::kFuse);
  EXPECT_EQ(MountKindOfType("ext4", false), MountKind::kLocal);
  EXPECT_EQ(MountKindOfType("", false), MountKind::kUnknown);
  EXPECT_EQ(MountKindAt("/proc"), MountKind::kLocal);
  EXPECT_EQ(MountKindAt("/no/such/path"), MountKind::kUnknown);
}

TEST(MoreReadersEstimate, EachReaderKeepsItsPaceUpToTheCores) {
  // One reader at 22 samples/s, 0.8 ms of CPU a sample: four keep 88 samples/s.
  EXPECT_DOUBLE_EQ(*MoreReadersEstimate(Loader(22, 1, 22 * 0.0008, 0), 4, 8), 88);
  // At 20 ms of CPU a sample two cores give 100 samples/s at most.
  EXPECT_DOUBLE_EQ(*MoreReadersEstimate(Loader(40, 1, 0.8, 0), 4, 2), 100);
  EXPECT_FALSE(MoreReadersEstimate(Loader(0, 1, 0.8, 0), 4, 2).has_value());
}

TEST(EstimateLocalCopy, TheLoadersCpuSetsThePaceOnAWarmCopy) {
  // 40 samples/s on one process using 0.05 cores: 1.25 ms of CPU per sample, so 800 samples/s from memory; cold
  // local reads take a tenth of the source's: 40 / (0.05 + 0.95 * 0.1) = 275.9.
  std::optional<LocalCopyEstimate> e = EstimateLocalCopy(Loader(40, 1, 0.05, 0.9), 0.1, {}, 8);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->warm_samples_per_s, 800);
  EXPECT_NEAR(e->cold_samples_per_s, 40 / (0.05 + 0.95 * 0.1), 1e-9);
  // A local drive no faster than the source gains nothing cold.
  EXPECT_NEAR(EstimateLocalCopy(Loader(40, 1, 0.05, 0.9), 1.0, {}, 8)->cold_samples_per_s, 40, 1e-9);
  // From the evidence: the cold reads' time ratio and CPU.
  StorageEvidence ev = Evidence(Loader(40, 1, 0.05, 0.9), MountKind::kFuse, fixtures::ColdReads(20, 2), 8);
  EXPECT_NEAR(EstimateLocalCopy(ev)->cold_samples_per_s, 40 / (0.05 + 0.95 * 0.1), 1e-9);
  ev.cold->local.files = 0;
  EXPECT_FALSE(EstimateLocalCopy(ev).has_value());
}

TEST(EstimateLocalCopy, WithoutTheKernelsPartTheReadsCpuDifferenceComesOff) {
  // 1.25 ms of CPU per sample; the cold reads cost 0.3 ms from the mount and 0.05 ms locally: 1 ms left, 1,000
  // samples/s warm.
  std::optional<LocalCopyEstimate> e = EstimateLocalCopy(Loader(40, 1, 0.05, 0.9), 0.1, {0.0003, 0.00005}, 8);
  ASSERT_TRUE(e.has_value());
  EXPECT_NEAR(e->warm_samples_per_s, 1000, 1e-9);
  // A local read no cheaper saves nothing.
  EXPECT_NEAR(EstimateLocalCopy(Loader(40, 1, 0.05, 0.9), 0.1, {0.0001, 0.0002}, 8)->warm_samples_per_s, 800, 1e-9);
  // Never below a fifth of the measured CPU: 5x at most.
  EXPECT_NEAR(EstimateLocalCopy(Loader(40, 1, 0.05, 0.9), 0.1, {1.0, 0}, 8)->warm_samples_per_s, 4000, 1e-9);
}

TEST(EstimateLocalCopy, TheKernelsPartShrinksAsTheReadsCpuDoes) {
  // The CI run of e2e.probe_storage: 36.3 samples/s on a slow mount at 23% of a core, 6.3 ms of CPU a sample, of it
  // 1.3 ms in the kernel; the cold reads took 0.27 ms from the mount and 0.03 ms from a copy. The user part (5.0 ms)
  // stays, the kernel part keeps a ninth (0.14 ms): 194 samples/s (the real copy read 204 per core; subtracting the
  // cold reads' 0.24 ms difference alone said 161).
  LoaderActivity a = Loader(36.3, 1, 0.23, 0.76);
  a.sys_cores = 36.3 * 0.0013;
  const ReadCpuPerSample reads{0.00027, 0.00003};
  std::optional<LocalCopyEstimate> e = EstimateLocalCopy(a, 0.05, reads, 2);
  ASSERT_TRUE(e.has_value());
  const double cpu_s = 0.23 / 36.3, sys_s = 0.0013;
  EXPECT_NEAR(e->warm_samples_per_s, 1 / (cpu_s - sys_s + sys_s / 9), 1e-6);
  EXPECT_GT(e->warm_samples_per_s, 190);
  // A local read as costly as the source's keeps it all.
  EXPECT_NEAR(EstimateLocalCopy(a, 0.05, {0.0001, 0.0001}, 2)->warm_samples_per_s, 36.3 / 0.23, 1e-6);
  // More kernel time than CPU (readings apart) is taken as all of it, and the floor holds.
  a.sys_cores = 0.5;
  EXPECT_NEAR(EstimateLocalCopy(a, 0.05, {0.001, 0}, 2)->warm_samples_per_s, 5 * 36.3 / 0.23, 1e-6);
}

TEST(EstimateLocalCopy, NoMoreCoresThanTheMachineHas) {
  // Eight workers at 0.8 cores: on 2 cores at most 2 busy: 50 * 2 / 0.8.
  std::optional<LocalCopyEstimate> e = EstimateLocalCopy(Loader(50, 8, 0.8, 6), 0.0, {}, 2);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->warm_samples_per_s, 125);
  EXPECT_DOUBLE_EQ(e->cold_samples_per_s, 125);
  EXPECT_FALSE(EstimateLocalCopy(Loader(50, 1, 0, 0), 0.1, {}, 2).has_value());
}

}  // namespace
}  // namespace sat::datastore
