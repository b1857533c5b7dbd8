#include "datastore/cold_read.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sat::datastore {
namespace {

namespace fs = std::filesystem;

class ColdReadTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) / ("cold_read_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "data");
    fs::create_directories(root_ / "local");
    for (int i = 0; i < 10; ++i) {
      std::string path = (root_ / "data" / ("f" + std::to_string(i))).string();
      std::ofstream(path, std::ios::binary) << std::string(1000 * (i + 1), 'a' + i);
      files_.push_back(path);
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  ColdReadOptions Options() const {
    ColdReadOptions o;
    o.local_dirs = {(root_ / "local").string()};
    o.require_other_filesystem = false;  // the test folders share one file system
    return o;
  }

  fs::path root_;
  std::vector<std::string> files_;
};

TEST_F(ColdReadTest, ReadsTheSampleFromBothPlacesAndRemovesTheCopy) {
  ColdReadOptions o = Options();
  o.max_files = 4;  // f0, f2, f5, f7: 1000 + 3000 + 6000 + 8000 bytes
  Result<ColdReadComparison> c = CompareColdReads(files_, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->source.files, 4u);
  EXPECT_EQ(c->source.bytes, 18000u);
  EXPECT_EQ(c->local.files, 4u);
  EXPECT_EQ(c->local.bytes, 18000u);
  EXPECT_GT(c->source.seconds, 0);
  EXPECT_GT(c->local.seconds, 0);
  EXPECT_LE(c->source.cpu_seconds, c->source.seconds + 0.01);
  EXPECT_EQ(c->local_dir, (root_ / "local").string());
  EXPECT_EQ(c->vanished, 0u);
  EXPECT_TRUE(fs::is_empty(root_ / "local"));
}

TEST_F(ColdReadTest, StopsSamplingAtTheByteCap) {
  ColdReadOptions o = Options();
  o.max_bytes = 3500;  // f0 (1000) and f1 (2000) are under it; f2 takes it past
  Result<ColdReadComparison> c = CompareColdReads(files_, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->source.files, 3u);
  EXPECT_EQ(c->source.bytes, 6000u);
}

TEST_F(ColdReadTest, FilesThatAreGoneAreLeftOut) {
  std::vector<std::string> files = {files_[0], (root_ / "data" / "gone").string(), files_[1]};
  Result<ColdReadComparison> c = CompareColdReads(files, Options());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->source.files, 2u);
  // A file that cannot be read (its read fails with EIO) is left out the same way.
  Result<ColdReadComparison> eio = CompareColdReads({files_[0], "/proc/self/mem"}, Options());
  ASSERT_TRUE(eio.ok()) << eio.error().message;
  EXPECT_EQ(eio->source.files, 1u);
  EXPECT_EQ(eio->vanished, 1u);
  Result<ColdReadComparison> none = CompareColdReads({(root_ / "data" / "gone").string()}, Options());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("could be read"), std::string::npos);
}

TEST_F(ColdReadTest, RefusesAFolderOnTheDataFileSystemAndSaysWhy) {
  ColdReadOptions o = Options();
  o.require_other_filesystem = true;
  o.local_dirs = {(root_ / "missing").string(), (root_ / "local").string()};
  Result<ColdReadComparison> c = CompareColdReads(files_, o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find((root_ / "missing").string() + " is not a folder"), std::string::npos)
      << c.error().message;
  EXPECT_NE(c.error().message.find("on the data's own file system"), std::string::npos) << c.error().message;
  EXPECT_TRUE(fs::is_empty(root_ / "local"));
}

TEST(CopySecondsAtPace, ScalesByTheLargerOfFilesAndBytes) {
  ColdReadTiming t{10, 1000, 2.0, 0.1};
  EXPECT_DOUBLE_EQ(CopySecondsAtPace(t, 100, 1000), 20.0);     // many small files: per-file latency
  EXPECT_DOUBLE_EQ(CopySecondsAtPace(t, 10, 1000000), 2000.0);  // few large ones: bytes
  EXPECT_DOUBLE_EQ(CopySecondsAtPace(ColdReadTiming{}, 10, 10), 0.0);
  ColdReadComparison c;
  c.source.seconds = 4;
  c.local.seconds = 1;
  EXPECT_DOUBLE_EQ(c.LocalTimeRatio(), 0.25);
}

}  // namespace
}  // namespace sat::datastore
