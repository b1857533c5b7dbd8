#include "telemetry/page_cache.h"

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sat::telemetry {
namespace {

namespace fs = std::filesystem;

class PageCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("page_cache_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, size_t bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    std::string block(4096, 'x');
    for (size_t done = 0; done < bytes; done += block.size()) out.write(block.data(), std::min(block.size(), bytes - done));
    return path;
  }

  static void ReadAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> buf(1 << 16);
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    }
  }

  // tmpfs keeps every page of its files: nothing can be dropped there.
  bool OnTmpfs() const {
    struct statfs st {};
    return ::statfs(dir_.c_str(), &st) == 0 && st.f_type == TMPFS_MAGIC;
  }

  fs::path dir_;
};

TEST_F(PageCacheTest, AFileReadWholeIsResidentAndDroppedIsNot) {
  if (OnTmpfs()) GTEST_SKIP() << "the test folder is on tmpfs, whose pages cannot be dropped";
  const size_t size = 4 << 20;
  std::string path = Write("data.bin", size);
  ASSERT_TRUE(DropFromPageCache(path).ok());
  Result<Residency> cold = FileResidency(path);
  ASSERT_TRUE(cold.ok()) << cold.error().message;
  EXPECT_EQ(cold->bytes, size);
  EXPECT_LT(cold->cached_bytes, size / 2);

  ReadAll(path);
  Result<Residency> warm = FileResidency(path);
  ASSERT_TRUE(warm.ok());
  EXPECT_EQ(warm->cached_bytes, size);

  ResidencySample sample = SampleResidency({path, (dir_ / "gone.bin").string()}, 8);
  EXPECT_EQ(sample.files, 1u);
  EXPECT_EQ(sample.unreadable, 1u);
  ASSERT_TRUE(sample.Share().has_value());
  EXPECT_DOUBLE_EQ(*sample.Share(), 1.0);
}

TEST_F(PageCacheTest, ALastPartialPageCountsNoMoreThanTheFile) {
  std::string path = Write("small.bin", 100);
  ReadAll(path);
  Result<Residency> r = FileResidency(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 100u);
  EXPECT_EQ(r->cached_bytes, 100u);
}

TEST_F(PageCacheTest, ErrorsNameThePath) {
  std::string missing = (dir_ / "missing.bin").string();
  Result<Residency> r = FileResidency(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(missing), std::string::npos);
  Result<Residency> folder = FileResidency(dir_.string());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.error().message.find("not a regular file"), std::string::npos);
  EXPECT_FALSE(DropFromPageCache(missing).ok());
}

TEST_F(PageCacheTest, EmptyFilesHaveNoShare) {
  std::string path = Write("empty.bin", 0);
  Result<Residency> r = FileResidency(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes, 0u);
  ResidencySample s = SampleResidency({path}, 4);
  EXPECT_EQ(s.files, 1u);
  EXPECT_FALSE(s.Share().has_value());
  EXPECT_FALSE(SampleResidency({}, 4).Share().has_value());
}

TEST(EvenSample, TakesEvenlyAcrossTheList) {
  std::vector<std::string> paths;
  for (int i = 0; i < 10; ++i) paths.push_back(std::to_string(i));
  EXPECT_EQ(EvenSample(paths, 4), (std::vector<std::string>{"0", "2", "5", "7"}));
  EXPECT_EQ(EvenSample(paths, 20), paths);
  EXPECT_TRUE(EvenSample(paths, 0).empty());
}

}  // namespace
}  // namespace sat::telemetry
