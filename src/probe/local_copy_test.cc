#include "probe/local_copy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "probe/test_results.h"
#include "stage/test_loader_activity.h"

namespace sat::probe {
namespace {

namespace fs = std::filesystem;

using stage::fixtures::Loader;

TEST(EstimateLocalCopy, TheLoadersCpuSetsThePaceOnAWarmCopy) {
  // 40 samples/s on one process using 0.05 cores: 1.25 ms of CPU per sample, so 800 samples/s from memory; cold
  // local reads take a tenth of the source's: 40 / (0.05 + 0.95 * 0.1) = 275.9.
  std::optional<LocalCopyEstimate> e = EstimateLocalCopy(Loader(40, 1, 0.05, 0.9), 0.1, {}, 8);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->warm_samples_per_s, 800);
  EXPECT_NEAR(e->cold_samples_per_s, 40 / (0.05 + 0.95 * 0.1), 1e-9);
  // A local drive no faster than the source gains nothing cold.
  EXPECT_NEAR(EstimateLocalCopy(Loader(40, 1, 0.05, 0.9), 1.0, {}, 8)->cold_samples_per_s, 40, 1e-9);
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

TEST(DataRoot, APathArgumentHoldingEveryFileWins) {
  std::string dir = (fs::path(testing::TempDir()) / ("data_root_" + std::to_string(::getpid()))).string();
  fs::create_directories(dir + "/images/0");
  std::vector<std::string> files = {dir + "/images/0/a.jpg", dir + "/images/0/b.jpg"};
  // The argument (with a trailing slash) holds both: it is the dataset, though the files share a deeper folder.
  EXPECT_EQ(DataRoot(files, {"/usr/bin/python3", dir + "/images/"}), dir + "/images");
  // Without it, their deepest common folder.
  EXPECT_EQ(DataRoot(files, {}), dir + "/images/0");
  EXPECT_EQ(DataRoot({dir + "/images/0/a.jpg", dir + "/images/1/c.jpg"}, {}), dir + "/images");
  // A folder argument that does not hold them all is not the data's.
  EXPECT_EQ(DataRoot({dir + "/images/0/a.jpg", "/elsewhere/x.bin"}, {dir + "/images"}), "/");
  EXPECT_EQ(DataRoot({}, {dir}), "");
  // "/data/images-2" is not inside "/data/images".
  EXPECT_EQ(DataRoot({"/data/images-2/a.jpg"}, {dir + "/images"}), "/data/images-2");
  fs::remove_all(dir);
}

TEST(FormatRoughDuration, SecondsMinutesHours) {
  EXPECT_EQ(FormatRoughDuration(0.2), "1 s");
  EXPECT_EQ(FormatRoughDuration(42), "42 s");
  EXPECT_EQ(FormatRoughDuration(125), "2 min");
  EXPECT_EQ(FormatRoughDuration(3 * 3600), "3.0 h");
  EXPECT_EQ(FormatRoughDuration(-1), "n/a");
}


TEST(LocalCopyText, StatesTheCostTheRateAndWhatItRestsOn) {
  LocalCopyWhatIf w = results::ExampleLocalCopy();
  EXPECT_EQ(LocalCopyText(w),
            "a local copy of 1.2 MiB (300 files) takes ~6 s on this link; the loader alone would reach ~800 "
            "samples/s (~300 while the copy is read cold), 20× today's 40.0 samples/s (cold reads of 32 files "
            "(128 KiB): 21.0 ms each from the source, 0.2 ms from a copy in /root/.cache/saturate)");
  // Data that does not fit in memory: the cold rate is the headline.
  w.fits_in_memory = false;
  EXPECT_DOUBLE_EQ(w.Headline(), 300);
  EXPECT_NE(LocalCopyText(w).find("~300 samples/s (~800 once it is in the page cache)"), std::string::npos)
      << LocalCopyText(w);
  nlohmann::ordered_json j = LocalCopyJson(w);
  EXPECT_EQ(j["samples_per_s"], 300.0);
  EXPECT_EQ(j["total_files"], 300);
  EXPECT_EQ(j["cold_reads"]["source"]["files"], 32);
}

TEST(LocalCopyText, AnUnlistedFolderSaysWhy) {
  LocalCopyWhatIf w = results::ExampleLocalCopy();
  w.total_bytes.reset();
  w.total_files.reset();
  w.copy_s.reset();
  w.total_why_not = "stage path /mnt/data: cannot read it";
  EXPECT_EQ(LocalCopyText(w).rfind("the size of /mnt/data is unknown (stage path /mnt/data: cannot read it); ", 0), 0u)
      << LocalCopyText(w);
  EXPECT_TRUE(LocalCopyJson(w)["total_bytes"].is_null());
}

TEST(MeasureLocalCopy, SaysWhyThereIsNone) {
  LocalCopyInputs in;
  in.files = {"/nonexistent/a.bin"};
  Result<LocalCopyWhatIf> w = MeasureLocalCopy(in);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("loader stage measured no rate"), std::string::npos);
  in.loader.samples_per_s = 40;
  in.loader.cpu_cores = 0.05;
  in.local_dirs = {testing::TempDir()};
  w = MeasureLocalCopy(in);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("could be read"), std::string::npos) << w.error().message;
  in.files.clear();
  EXPECT_FALSE(MeasureLocalCopy(in).ok());
}

}  // namespace
}  // namespace sat::probe
