#include "stage/store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace sat::stage {
namespace {

namespace fs = std::filesystem;

class StoreTest : public testing::Test {
 protected:
  StoreTest() {
    std::string tmpl = testing::TempDir() + "/stage_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    options_.root = dir_ + "/store";
  }
  ~StoreTest() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A dataset of `n` files of `size` bytes each under <dir>/<name>, in two folders; distinct contents.
  std::string MakeData(const std::string& name, int n, size_t size, char salt = 'a') {
    const std::string root = dir_ + "/" + name;
    fs::create_directories(root + "/train");
    fs::create_directories(root + "/val");
    for (int i = 0; i < n; ++i) {
      std::string text(size, static_cast<char>(salt + i % 20));
      text.replace(0, std::min(size, std::to_string(i).size()), std::to_string(i));
      Write(root + (i % 2 ? "/train/" : "/val/") + std::to_string(i) + ".bin", text);
    }
    return root;
  }
  static void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Every file of `a` is in `b` with the same bytes, and nothing else is.
  static void ExpectSameTree(const std::string& a, const std::string& b) {
    size_t count = 0;
    for (const auto& e : fs::recursive_directory_iterator(a)) {
      const std::string rel = fs::relative(e.path(), a).string();
      ASSERT_TRUE(fs::exists(fs::symlink_status(b + "/" + rel))) << rel;
      if (e.is_regular_file() && !e.is_symlink()) {
        EXPECT_EQ(Read(e.path()), Read(b + "/" + rel)) << rel;
      }
      ++count;
    }
    size_t other = 0;
    for (auto it = fs::recursive_directory_iterator(b); it != fs::recursive_directory_iterator(); ++it) ++other;
    EXPECT_EQ(count, other);
  }

  // A child process copying `src` into the store one file at a time, `pause_us` after each: another saturate.
  pid_t StartSlowCopier(const std::string& src, useconds_t pause_us) {
    const pid_t child = fork();
    if (child == 0) {
      StoreOptions slow = options_;
      slow.threads = 1;
      slow.after_file = [pause_us](size_t) { usleep(pause_us); };
      auto lease = Acquire(src, slow);
      _exit(lease && !lease->reused() ? 0 : 1);
    }
    return child;
  }

  // Copies `src` one file at a time and interrupts itself after `files`: a copy cut off half way.
  void InterruptAfter(const std::string& src, size_t files) {
    size_t done = 0;
    StoreOptions first = options_;
    first.threads = 1;
    first.after_file = [&](size_t n) { done = n; };
    first.cancelled = [&] { return done >= files; };
    auto cut = Acquire(src, first);
    ASSERT_FALSE(cut);
    EXPECT_EQ(cut.error().exit_code, 130);
  }

  std::string dir_;
  StoreOptions options_;
};

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
  options_.cap_bytes = 250000;  // two copies of 100,000 bytes, not three
  std::string path_a, path_b;
  {
    auto la = Acquire(a, options_);
    ASSERT_TRUE(la);
    path_a = la->path();
  }
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
}  // namespace sat::stage

namespace sat::stage {
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
}  // namespace sat::stage
