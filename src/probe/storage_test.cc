#include "probe/storage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "probe/test_results.h"

namespace sat::probe {
namespace {

using namespace results;
using ::testing::HasSubstr;

// The loader on a slow mount: one process, 5% of a core, blocked on reads 90% of the ticks, 4 KiB per sample.
ProbeResult SlowMount() {
  ProbeResult r = WithHelper(false, 40, 9000, 39);
  r.full.data_wait_share = 0.95;
  SetCpu(r.loader, 5, 1, 10);
  SetBlocked(r.loader, 0.9, 40 * 4096);
  SetCpu(r.full, 6, 1, 10);
  SetBlocked(r.full, 0.85, 39 * 4096);
  return r;
}

TEST(DataFilesOf, TheHelpersFilesComeFirstThenTheScansThenArguments) {
  ProbeResult r = SlowMount();
  r.full.data_files = {"/mnt/slow/f2.bin", "/mnt/slow/f1.bin"};
  r.loader.data_files = {"/mnt/slow/f1.bin", "/mnt/slow/f3.bin"};
  r.full.open_data_paths = {"/mnt/slow/f9.bin"};
  r.full.data_opens = 120;
  r.full.written_files = {"/nfs/ckpt/model.pt"};
  DataFiles f = DataFilesOf(r, {});
  EXPECT_EQ(f.source, "helper");
  EXPECT_EQ(f.paths, (std::vector<std::string>{"/mnt/slow/f1.bin", "/mnt/slow/f2.bin", "/mnt/slow/f3.bin"}));
  EXPECT_EQ(f.opens, 120);
  EXPECT_EQ(f.writes, (std::vector<std::string>{"/nfs/ckpt/model.pt"}));

  for (core::StageResult* s : {&r.full, &r.loader}) s->data_files.clear();
  f = DataFilesOf(r, {});
  EXPECT_EQ(f.source, "scan");
  EXPECT_EQ(f.paths, (std::vector<std::string>{"/mnt/slow/f9.bin"}));
}

TEST(DataFilesOf, NeverTheScriptOrAProgram) {
  std::string dir = (std::filesystem::path(testing::TempDir()) / ("data_files_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir + "/data");
  std::ofstream(dir + "/train.py") << "print()";
  std::ofstream(dir + "/train") << "#!/bin/sh";
  ::chmod((dir + "/train").c_str(), 0755);
  std::ofstream(dir + "/labels.csv") << "a,b";
  ProbeResult r = SlowMount();
  DataFiles f = DataFilesOf(r, {"/usr/bin/python3", dir + "/train.py", dir + "/train", dir + "/data",
                                dir + "/labels.csv"});
  EXPECT_EQ(f.source, "arguments");
  EXPECT_EQ(f.paths, (std::vector<std::string>{dir + "/data", dir + "/labels.csv"}));
  EXPECT_TRUE(DataFilesOf(r, {dir + "/train.py"}).paths.empty());
  EXPECT_EQ(DataFilesOf(r, {dir + "/train.py"}).source, "");
  std::filesystem::remove_all(dir);
}

TEST(ArgumentDataFiles, FilesAsGivenAndUnderFoldersUpToTheLimit) {
  std::string dir = (std::filesystem::path(testing::TempDir()) / ("arg_files_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir + "/data/sub");
  for (int i = 0; i < 5; ++i) std::ofstream(dir + "/data/sub/" + std::to_string(i) + ".bin") << "x";
  std::ofstream(dir + "/train.py") << "print()";
  std::ofstream(dir + "/labels.csv") << "a,b";
  std::filesystem::create_symlink(dir + "/labels.csv", dir + "/data/link.csv");
  // The script is code, the link is not followed; the folder's files in directory order, then the file.
  std::vector<std::string> got = ArgumentDataFiles({dir + "/train.py", dir + "/data", dir + "/labels.csv"}, 100);
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got.back(), dir + "/labels.csv");
  for (size_t i = 0; i < 5; ++i) EXPECT_THAT(got[i], HasSubstr("/data/sub/")) << got[i];
  EXPECT_EQ(ArgumentDataFiles({dir + "/data", dir + "/labels.csv"}, 3).size(), 3u);
  EXPECT_TRUE(ArgumentDataFiles({dir + "/train.py", dir + "/gone"}, 100).empty());
  std::filesystem::remove_all(dir);
}

TEST(StorageWaitOf, TheLoaderStageFirstThenTheFullStage) {
  ProbeResult r = SlowMount();
  const core::StageResult* from = nullptr;
  StorageWait w = StorageWaitOf(r, &from);
  ASSERT_TRUE(w.split.has_value());
  EXPECT_EQ(from, &r.loader);
  EXPECT_DOUBLE_EQ(w.split->fetch, 0.9);
  EXPECT_EQ(w.split->basis, datastore::FetchBasis::kBlocked);
  EXPECT_DOUBLE_EQ(w.split->prep, 0.05);
  EXPECT_DOUBLE_EQ(*w.split->bytes_per_sample, 4096);
  EXPECT_EQ(w.finding, StorageFinding::kStorage);
  EXPECT_TRUE(LocalCopyDue(r));

  r.loader = Skipped(core::StageKind::kLoader, "the budget was spent");
  w = StorageWaitOf(r, &from);
  ASSERT_TRUE(w.split.has_value());
  EXPECT_EQ(from, &r.full);
  // The trainer loads for itself: 85 of its 95 points of data wait were blocked reads, its CPU 6 of them at most.
  EXPECT_NEAR(w.split->fetch, 0.85 / 0.95, 1e-12);
  EXPECT_NEAR(w.split->prep, 0.06 / 0.95, 1e-12);

  // No process states sampled, data on an unknown mount: nothing shows fetching, so the rule has no split.
  r.full.telemetry.tree_blocked.reset();
  w = StorageWaitOf(r);
  EXPECT_EQ(w.finding, StorageFinding::kUnknown);
  EXPECT_FALSE(w.split.has_value());
  EXPECT_FALSE(LocalCopyDue(r));
  // Data on a FUSE mount (a reader there may wait in state S): the cold reads are due, and the mount alone makes the
  // time off the CPU fetching until they come.
  r.data_locations = {{"/mnt/s3/a.bin", 10, "/mnt/s3", "fuse.s3x", "s3x", false}};
  EXPECT_TRUE(LocalCopyDue(r));
  w = StorageWaitOf(r);
  EXPECT_EQ(w.finding, StorageFinding::kStorage);
  EXPECT_EQ(w.split->basis, datastore::FetchBasis::kOffCpuOnMount);
  // With them, what they account for: 32 files at 21 ms each, one a sample, at 39 samples/s in 95% of the loop.
  r.storage.cold_reads = ExampleLocalCopy().reads;
  w = StorageWaitOf(r);
  EXPECT_EQ(w.split->basis, datastore::FetchBasis::kColdReads);
  EXPECT_NEAR(w.split->fetch, 0.021 * 39 / 0.95, 1e-9);
  EXPECT_TRUE(w.copy_helps);
  r.data_locations = {{"/nfs/a.bin", 10, "/nfs", "nfs4", "server:/x", true}};
  EXPECT_TRUE(LocalCopyDue(r));
}

TEST(MoreReadersWhatIf, OverlapsTheRoundTripsOfOneReader) {
  // One process at 40 samples/s, 5% of a core, on a FUSE mount: 4 workers would read 160 samples/s; on 8 cores.
  ProbeResult r = SlowMount();
  r.data_locations = {{"/mnt/slow/a.bin", 10, "/mnt/slow", "fuse.slowfs", "slowfs", false}};
  std::optional<MoreReaders> more = MoreReadersWhatIf(r);
  ASSERT_TRUE(more.has_value());
  EXPECT_EQ(more->workers, 4);
  EXPECT_DOUBLE_EQ(more->samples_per_s, 160);
  EXPECT_EQ(MoreReadersTail(*more), ": ~160 samples/s if the mount serves 4 reads at once");
  // A loader busy on the CPU: no.
  SetCpu(r.loader, 95, 1, 20);
  SetBlocked(r.loader, 0.02, 40 * 4096);
  EXPECT_FALSE(MoreReadersWhatIf(r).has_value());
}

TEST(LoaderActivityOf, WorkersAreTheLoadingProcesses) {
  ProbeResult r = WithHelper(false, 900, 9000, 880);
  SetCpu(r.loader, 360, 5, 60);  // a trainer and 4 workers
  SetBlocked(r.loader, 0.2, 9e6);
  LoaderActivity a = LoaderActivityOf(r.loader);
  EXPECT_DOUBLE_EQ(a.processes, 4);
  EXPECT_DOUBLE_EQ(*a.cpu_cores, 3.6);
  EXPECT_DOUBLE_EQ(*a.blocked, 0.2);
  EXPECT_FALSE(a.data_wait_share.has_value());  // the loader stage has no training loop
  EXPECT_DOUBLE_EQ(*a.read_per_s, 9e6);
}

TEST(StorageLines, SplitPageCacheWhatIfAndWrites) {
  ProbeResult r = SlowMount();
  r.storage.page_cache = telemetry::ResidencySample{64, 1, 64 * 4096, 16 * 4096};
  r.storage.page_cache_before_run = telemetry::ResidencySample{3, 0, 3 * 4096, 0};
  r.storage.local_copy_why_not = "no local folder for the copy: /tmp is on tmpfs (memory, never cold)";
  r.storage.write_bytes_per_s = 3 << 20;
  r.storage.write_locations = {{"/nfs/ckpt/model.pt", 1, "/nfs", "nfs4", "server:/x", true}};
  std::vector<std::string> lines = StorageLines(r);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0],
            "loader time: loader stage fetch 90% (processes in state D), prep 5% (its CPU), other 5% (1.25 ms of CPU "
            "and 4.0 KiB read per sample); full stage fetch 89% (processes in state D), prep 6% (its CPU), other 4% "
            "(1.54 ms of CPU and 4.0 KiB read per sample): its loader waits on storage");
  EXPECT_EQ(lines[1], "page cache: 0% of a sample of 3 files under the command line's paths (12.0 KiB) was cached "
                      "before the run; 25% of a sample of 64 data files (256 KiB) was cached before the loader stage "
                      "(1 more could not be read)");
  EXPECT_EQ(lines[2], "local copy (what-if): n/a (no local folder for the copy: /tmp is on tmpfs (memory, never cold))");
  EXPECT_EQ(lines[3], "more workers (what-if): 4 reading the mount at once would overlap its round trips: ~160 "
                      "samples/s (if the mount serves 4 reads at once; a local copy removes the round trips)");
  EXPECT_EQ(lines[4], "writes: 3.0 MiB/s in training to /nfs (nfs4, network)");
  // The cold reads, where made.
  r.storage.cold_reads = ExampleLocalCopy().reads;
  EXPECT_EQ(StorageLines(r)[2], "cold reads: 32 files (128 KiB) read cold: 21.0 ms each from the mount, 0.2 ms from a "
                                "copy in /root/.cache/saturate");

  nlohmann::ordered_json j = StorageJson(r);
  EXPECT_EQ(j["fetch_bound"], true);
  EXPECT_EQ(j["finding"], "storage");
  EXPECT_EQ(j["loader_time"]["loader"]["basis"], "blocked");
  EXPECT_EQ(j["more_readers"]["workers"], 4);
  EXPECT_EQ(j["cold_reads"]["source"]["files"], 32);
  EXPECT_EQ(j["loader_time"]["loader"]["fetch"], 0.9);
  EXPECT_EQ(j["page_cache"]["share"], 0.25);
  EXPECT_EQ(j["page_cache_before_run"]["share"], 0.0);
  EXPECT_EQ(j["page_cache_before_run"]["files"], 3);
  EXPECT_TRUE(j["local_copy"].is_null());
  EXPECT_EQ(j["writes"]["locations"][0]["fs_type"], "nfs4");
  EXPECT_EQ(j["writes"]["bytes_per_s"], 3 << 20);
}

}  // namespace
}  // namespace sat::probe
