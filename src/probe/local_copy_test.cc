#include "probe/local_copy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "probe/test_results.h"
#include "datastore/test_loader_activity.h"

namespace sat::probe {
namespace {

namespace fs = std::filesystem;

using datastore::fixtures::Loader;

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

TEST(LocalCopyFrom, EstimatesFromTheColdReadsAndListsTheFolder) {
  std::string dir = (fs::path(testing::TempDir()) / ("local_copy_from_" + std::to_string(::getpid()))).string();
  fs::create_directories(dir + "/data");
  for (int i = 0; i < 3; ++i) std::ofstream(dir + "/data/" + std::to_string(i)) << std::string(4096, 'a');
  LocalCopyInputs in;
  in.files = {dir + "/data/0", dir + "/data/1"};
  in.path_arguments = {dir + "/data"};
  in.mem_available_bytes = 1 << 30;
  in.cores = 8;
  const LocalCopyWhatIf example = results::ExampleLocalCopy();
  // Without the loader stage's rate and CPU there is nothing to start from.
  Result<LocalCopyWhatIf> w = LocalCopyFrom(in, example.reads);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("loader stage measured no rate"), std::string::npos);
  in.loader = Loader(40, 1, 0.05, 0.9);
  w = LocalCopyFrom(in, example.reads);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->root, dir + "/data");
  EXPECT_EQ(*w->total_files, 3u);
  EXPECT_EQ(*w->total_bytes, 3u * 4096);
  EXPECT_TRUE(w->fits_in_memory);
  EXPECT_DOUBLE_EQ(w->loader_now, 40);
  // The rule's estimate from the reads: 1.25 ms of CPU a sample, warm from memory.
  EXPECT_DOUBLE_EQ(w->estimate.warm_samples_per_s, 800);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sat::probe
