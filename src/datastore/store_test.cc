#include "datastore/store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "datastore/test_store.h"

namespace sat::datastore {
namespace {

using testing::StoreTest;
namespace fs = std::filesystem;

TEST_F(StoreTest, CopiesADatasetOnceAndReusesIt) {
  const std::string src = MakeData("ds", 30, 5000);
  auto first = Acquire(src, options_);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->reused());
  EXPECT_EQ(first->bytes(), 30u * 5000);
  EXPECT_EQ(first->bytes_copied(), 30u * 5000);
  EXPECT_EQ(first->files(), 30u);
  EXPECT_EQ(fs::path(first->path()).filename(), "ds");
  EXPECT_TRUE(first->path().starts_with(options_.root + "/"));
  ExpectSameTree(src, first->path());

  auto second = Acquire(src, options_);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->reused());
  EXPECT_EQ(second->bytes_copied(), 0u);
  EXPECT_EQ(second->path(), first->path());
  struct stat st {};
  ASSERT_EQ(stat(options_.root.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(StoreTest, ASingleFileIsCopiedUnderItsOwnName) {
  fs::create_directories(dir_ + "/one");
  Write(dir_ + "/one/data.tar", std::string(70000, 'x'));
  auto lease = Acquire(dir_ + "/one/data.tar", options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_EQ(fs::path(lease->path()).filename(), "data.tar");
  EXPECT_EQ(Read(lease->path()), std::string(70000, 'x'));
}

TEST_F(StoreTest, AChangedFileMakesANewCopy) {
  const std::string src = MakeData("ds", 4, 100);
  auto a = Acquire(src, options_);
  ASSERT_TRUE(a);
  Write(src + "/train/1.bin", "different and longer than before");
  auto b = Acquire(src, options_);
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->reused());
  EXPECT_NE(a->path(), b->path());
  EXPECT_EQ(Read(b->path() + "/train/1.bin"), "different and longer than before");
}

TEST_F(StoreTest, TwoCopiersAtOnceMakeOneCopy) {
  const std::string src = MakeData("ds", 40, 20000);
  options_.threads = 2;
  std::atomic<uint64_t> copied{0};
  std::atomic<int> reused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] {
      auto lease = Acquire(src, options_);
      ASSERT_TRUE(lease) << lease.error().message;
      copied += lease->bytes_copied();
      reused += lease->reused() ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(copied.load(), 40u * 20000);
  EXPECT_EQ(reused.load(), 2);
}

TEST_F(StoreTest, TwoProcessesAtOnceMakeOneCopy) {
  const std::string src = MakeData("ds", 40, 20000);
  // The other process copies slowly, so that this one finds it copying and waits.
  const pid_t child = StartSlowCopier(src, 20000);
  usleep(100000);
  std::vector<std::string> phases;
  options_.on_progress = [&](const Progress& p) { phases.push_back(PhaseName(p.phase)); };
  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(lease->reused());
  EXPECT_EQ(lease->bytes_copied(), 0u);
  EXPECT_NE(std::find(phases.begin(), phases.end(), "waiting"), phases.end());
  ExpectSameTree(src, lease->path());
}

TEST_F(StoreTest, ASourceChangedDuringTheCopyIsCopiedAgain) {
  const std::string src = MakeData("ds", 10, 1000);
  options_.threads = 1;
  bool changed = false;
  options_.after_file = [&](size_t done) {
    if (done == 3 && !changed) {
      changed = true;
      Write(src + "/val/0.bin", "changed mid-copy");
    }
  };
  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_TRUE(changed);
  EXPECT_EQ(Read(lease->path() + "/val/0.bin"), "changed mid-copy");
  ExpectSameTree(src, lease->path());
  // The discarded copy left nothing behind: one copy, no partial folder.
  int datas = 0, partials = 0;
  for (const auto& e : fs::directory_iterator(options_.root)) {
    datas += e.path().extension() == ".data";
    partials += e.path().extension() == ".partial";
  }
  EXPECT_EQ(datas, 1);
  EXPECT_EQ(partials, 0);
}

TEST_F(StoreTest, ASourceThatKeepsChangingIsRefused) {
  const std::string src = MakeData("ds", 4, 100);
  options_.threads = 1;
  int n = 0;
  options_.after_file = [&](size_t) { Write(src + "/val/0.bin", std::to_string(++n)); };
  auto lease = Acquire(src, options_);
  ASSERT_FALSE(lease);
  EXPECT_NE(lease.error().message.find("kept changing"), std::string::npos) << lease.error().message;
}

TEST_F(StoreTest, AnInterruptedCopyResumesWithTheFilesItFinished) {
  const std::string src = MakeData("ds", 20, 10000);
  options_.threads = 1;
  InterruptAfter(src, 8);

  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_FALSE(lease->reused());
  EXPECT_LE(lease->bytes_copied(), 12u * 10000);
  ExpectSameTree(src, lease->path());
}

TEST_F(StoreTest, ACopyKilledHalfWayIsResumedAndNeverUsedHalfMade) {
  const std::string src = MakeData("ds", 30, 10000);
  const pid_t child = StartSlowCopier(src, 30000);
  // Kill it once some files are whole.
  auto logged = [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(options_.root, ec)) {
      if (e.path().string().ends_with(".partial.log")) {
        const std::string text = Read(e.path());
        return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
      }
    }
    return 0;
  };
  for (int i = 0; i < 500 && logged() < 5; ++i) usleep(20000);
  ASSERT_GE(logged(), 5);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  bool data_before = false;
  for (const auto& e : fs::directory_iterator(options_.root)) data_before |= e.path().extension() == ".data";
  EXPECT_FALSE(data_before) << "a half-made copy was put in place";

  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_LT(lease->bytes_copied(), 30u * 10000);
  ExpectSameTree(src, lease->path());
}

TEST_F(StoreTest, ACorruptedResumedFileIsCaughtByItsChecksum) {
  const std::string src = MakeData("ds", 6, 4000);
  options_.threads = 1;
  InterruptAfter(src, 3);
  // Flip bytes of a file the log says is whole, keeping its size.
  std::string corrupted;
  for (const auto& e : fs::recursive_directory_iterator(options_.root)) {
    if (e.is_regular_file() && e.path().extension() == ".bin" && corrupted.empty()) corrupted = e.path();
  }
  ASSERT_FALSE(corrupted.empty());
  std::string text = Read(corrupted);
  text[100] ^= 0x55;
  Write(corrupted, text);

  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  ExpectSameTree(src, lease->path());
}

TEST_F(StoreTest, NoRoomIsRefusedBeforeCopying) {
  const std::string src = MakeData("ds", 10, 100000);
  options_.free_bytes = [](const std::string&) { return std::optional<uint64_t>(300000); };
  options_.reserve_bytes = 0;
  auto lease = Acquire(src, options_);
  ASSERT_FALSE(lease);
  EXPECT_EQ(lease.error().exit_code, 1);
  EXPECT_NE(lease.error().message.find("no room to stage"), std::string::npos) << lease.error().message;
  EXPECT_NE(lease.error().message.find("977 KiB"), std::string::npos) << lease.error().message;
  for (const auto& e : fs::recursive_directory_iterator(options_.root)) {
    EXPECT_FALSE(e.is_regular_file() && e.path().extension() == ".bin") << e.path();
  }
}

TEST_F(StoreTest, ACappedStoreEvictsTheLeastRecentlyUsedCopyNeverOneInUse) {
  const std::string a = MakeData("a", 10, 10000, 'a');
  const std::string b = MakeData("b", 10, 10000, 'b');
  const std::string c = MakeData("c", 10, 10000, 'c');
  std::string path_a, path_b;
  {
    auto la = Acquire(a, options_);
    ASSERT_TRUE(la);
    path_a = la->path();
  }
  // Two copies, not three: the cap counts the blocks a copy takes on disk, as its filesystem gives them.
  options_.cap_bytes = DiskBytes(options_.root) * 5 / 2;
  sleep(1);  // last-use times one second apart
  auto lb = Acquire(b, options_);
  ASSERT_TRUE(lb);
  path_b = lb->path();
  sleep(1);
  {
    // a is used again: now b is the least recently used, but b is held.
    auto la = Acquire(a, options_);
    ASSERT_TRUE(la);
    EXPECT_TRUE(la->reused());
  }
  auto lc = Acquire(c, options_);
  ASSERT_TRUE(lc) << lc.error().message;
  EXPECT_TRUE(fs::exists(path_b)) << "a copy in use was evicted";
  EXPECT_FALSE(fs::exists(path_a));
  ExpectSameTree(b, path_b);

  // Everything held and no room: refused, naming what is in use.
  auto ld = Acquire(MakeData("d", 10, 10000, 'd'), options_);
  ASSERT_FALSE(ld);
  EXPECT_NE(ld.error().message.find("in use"), std::string::npos) << ld.error().message;
}

TEST_F(StoreTest, LinksInsideTheDatasetPointIntoTheCopy) {
  const std::string src = MakeData("ds", 4, 100);
  fs::create_symlink("../val/0.bin", src + "/train/link.bin");
  fs::create_symlink(src + "/val/2.bin", src + "/absolute.bin");
  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_EQ(fs::read_symlink(lease->path() + "/train/link.bin"), "../val/0.bin");
  EXPECT_EQ(fs::read_symlink(lease->path() + "/absolute.bin"), "val/2.bin");
  EXPECT_EQ(Read(lease->path() + "/absolute.bin"), Read(src + "/val/2.bin"));
}

TEST_F(StoreTest, AStoreFolderThatIsAFileIsRefused) {
  const std::string src = MakeData("ds", 2, 10);
  Write(dir_ + "/file", "x");
  options_.root = dir_ + "/file";
  auto lease = Acquire(src, options_);
  ASSERT_FALSE(lease);
  EXPECT_NE(lease.error().message.find(dir_ + "/file"), std::string::npos) << lease.error().message;
}

}  // namespace
}  // namespace sat::datastore

namespace sat::datastore {
namespace {

TEST_F(StoreTest, FindCopyLooksWithoutCopying) {
  const std::string src = MakeData("ds", 3, 100);
  auto none = FindCopy(src, options_);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(*none);
  EXPECT_FALSE(fs::exists(options_.root)) << "looking created the store";
  ASSERT_TRUE(Acquire(src, options_));
  auto found = FindCopy(src, options_);
  ASSERT_TRUE(found && *found);
  EXPECT_TRUE((*found)->reused());
  Write(src + "/val/0.bin", "new");
  auto stale = FindCopy(src, options_);
  ASSERT_TRUE(stale);
  EXPECT_FALSE(*stale) << "a copy of older data is not the data";
  auto missing = FindCopy(dir_ + "/nope", options_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().exit_code, 2);
}

}  // namespace
}  // namespace sat::datastore
