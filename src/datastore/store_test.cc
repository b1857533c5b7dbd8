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

namespace sat::datastore {
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
  // The disk space under `path`: st_blocks of every file and folder, links not followed.
  static uint64_t DiskBytes(const std::string& path) {
    uint64_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(path)) {
      struct stat st {};
      if (lstat(e.path().c_str(), &st) == 0) bytes += static_cast<uint64_t>(st.st_blocks) * 512;
    }
    return bytes;
  }
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

// Issue 45: the store is the user's own, and saturate's own; what it hands out is the data; what it deletes is
// what it made; a source swapped after its listing is never followed.
namespace sat::datastore {
namespace {

constexpr uid_t kNobody = 65534;

// Runs `body` in a child process as user nobody; the child's exit status (0: every check held).
int AsNobody(const std::function<int()>& body) {
  const pid_t child = fork();
  if (child == 0) {
    if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(90);
    _exit(body());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void ChownTree(const std::string& path, uid_t uid) {
  ASSERT_EQ(lchown(path.c_str(), uid, uid), 0) << path;
  if (!fs::is_symlink(path) && fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path)) ASSERT_EQ(lchown(e.path().c_str(), uid, uid), 0);
  }
}

class StoreTrustTest : public StoreTest {
 protected:
  void RequireRoot() {
    if (geteuid() != 0) GTEST_SKIP() << "needs root, to act as a second user";
  }
  // A copy of `src` in the store whose file `rel` then holds `text` instead (size kept when `same_size`).
  std::string AlteredCopy(const std::string& src, const std::string& rel, const std::string& text) {
    auto lease = Acquire(src, options_);
    EXPECT_TRUE(lease) << lease.error().message;
    const std::string path = lease->path() + "/" + rel;
    chmod(path.c_str(), 0644);
    Write(path, text);
    return lease->path();
  }
  static std::string Mode(const std::string& path) {
    struct stat st {};
    lstat(path.c_str(), &st);
    return fmt::format("{:04o}", st.st_mode & 07777);
  }
};

TEST_F(StoreTrustTest, AStoreAnotherUserMadeIsRefusedNamingItAndWhatToDo) {
  RequireRoot();
  const std::string src = MakeData("ds", 4, 100);
  // The other user's store at the victim's default name: a copy of the victim's data, altered, that the victim's
  // `auto` sweep would find and read ("found in the store ... no copy needed").
  AlteredCopy(src, "train/1.bin", std::string(100, 'X'));
  ChownTree(options_.root, kNobody);
  auto found = FindCopy(src, options_);
  ASSERT_FALSE(found) << "a store of user 65534 was used";
  auto made = Acquire(src, options_);
  ASSERT_FALSE(made) << "a store of user 65534 was used";
  for (const Error& error : {found.error(), made.error()}) {
    EXPECT_EQ(error.exit_code, kExitUsage);
    EXPECT_NE(error.message.find(options_.root + " belongs to user 65534, not to you"), std::string::npos)
        << error.message;
    EXPECT_NE(error.message.find("--stage-dir"), std::string::npos) << error.message;
  }
}

TEST_F(StoreTrustTest, AStoreFolderPlantedAsALinkIsNotFollowed) {
  const std::string src = MakeData("ds", 2, 10);
  fs::create_directories(dir_ + "/elsewhere");
  Write(dir_ + "/elsewhere/keep.txt", "mine");
  fs::create_directory_symlink(dir_ + "/elsewhere", options_.root);
  auto lease = Acquire(src, options_);
  ASSERT_FALSE(lease);
  EXPECT_EQ(lease.error().exit_code, kExitUsage);
  EXPECT_NE(lease.error().message.find("is a symbolic link"), std::string::npos) << lease.error().message;
  EXPECT_EQ(fs::directory_iterator(dir_ + "/elsewhere")->path().filename(), "keep.txt");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ + "/elsewhere"), fs::directory_iterator()), 1);
}

TEST_F(StoreTrustTest, AStoreOthersMayWriteIsRefusedAndAnEmptyFolderIsMadePrivate) {
  const std::string src = MakeData("ds", 2, 10);
  ASSERT_TRUE(Acquire(src, options_));
  chmod(options_.root.c_str(), 0777);
  auto open_store = Acquire(src, options_);
  ASSERT_FALSE(open_store);
  EXPECT_EQ(open_store.error().exit_code, kExitUsage);
  EXPECT_NE(open_store.error().message.find("has mode 0777, not 0700"), std::string::npos) << open_store.error().message;

  // A folder of the user's that holds nothing yet becomes a store: private, and marked.
  options_.root = dir_ + "/fresh";
  fs::create_directories(options_.root);
  chmod(options_.root.c_str(), 0755);
  ASSERT_TRUE(Acquire(src, options_));
  EXPECT_EQ(Mode(options_.root), "0700");
  EXPECT_TRUE(fs::is_regular_file(options_.root + "/.saturate-store"));
}

TEST_F(StoreTrustTest, CopiesKeepTheSourcesPermissionsLessWrite) {
  const std::string src = MakeData("ds", 4, 100);
  chmod((src + "/val/0.bin").c_str(), 0600);
  chmod((src + "/train/1.bin").c_str(), 0640);
  chmod((src + "/train").c_str(), 0750);
  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_EQ(Mode(lease->path() + "/val/0.bin"), "0400") << "a private file came out readable by others";
  EXPECT_EQ(Mode(lease->path() + "/train/1.bin"), "0440");
  EXPECT_EQ(Mode(lease->path() + "/val/2.bin"), "0444");
  EXPECT_EQ(Mode(lease->path() + "/train"), "0550");
  for (const auto& e : fs::recursive_directory_iterator(fs::path(lease->path()).parent_path())) {
    EXPECT_EQ(fs::status(e.path()).permissions() & (fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write),
              fs::perms::none)
        << e.path() << " is writable: a run could change what the next one reads";
  }
}

TEST_F(StoreTrustTest, ACopyARunWroteIntoIsNeverHandedOutButMadeAgain) {
  const std::string src = MakeData("ds", 4, 100);
  const std::string copy = AlteredCopy(src, "train/1.bin", "written by a run");
  auto found = FindCopy(src, options_);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_FALSE(*found) << "FindCopy handed out a copy that differs from the data";
  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_FALSE(lease->reused());
  ExpectSameTree(src, lease->path());
  ASSERT_EQ(lease->warnings().size(), 1u);
  EXPECT_NE(lease->warnings()[0].find("train/1.bin holds 16 bytes, not 100"), std::string::npos) << lease->warnings()[0];

  // A file added to the copy is caught too.
  lease = Lease();
  const std::string extra = copy + "/train/added.bin";
  chmod((copy + "/train").c_str(), 0755);
  Write(extra, "x");
  auto again = Acquire(src, options_);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again->reused());
  EXPECT_FALSE(fs::exists(extra));
}

TEST_F(StoreTrustTest, ChecksumsCatchAChangeThatKeptItsSizeAndTime) {
  const std::string src = MakeData("ds", 4, 100);
  auto first = Acquire(src, options_);
  ASSERT_TRUE(first);
  const std::string file = first->path() + "/val/2.bin";
  struct stat before {};
  ASSERT_EQ(stat(file.c_str(), &before), 0);
  first = Lease();
  chmod(file.c_str(), 0644);
  Write(file, std::string(100, 'Z'));
  chmod(file.c_str(), 0444);
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, file.c_str(), times, 0), 0);

  auto listed = Acquire(src, options_);
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->reused()) << "sizes, times and modes alone cannot see it (stage_verify: sizes)";
  listed = Lease();
  options_.verify_checksums = true;
  auto checked = Acquire(src, options_);
  ASSERT_TRUE(checked) << checked.error().message;
  EXPECT_FALSE(checked->reused());
  ExpectSameTree(src, checked->path());
  ASSERT_EQ(checked->warnings().size(), 1u);
  EXPECT_NE(checked->warnings()[0].find("val/2.bin: its bytes differ"), std::string::npos) << checked->warnings()[0];
}

TEST_F(StoreTrustTest, AFolderThatIsNotAStoreIsRefusedAndNothingInItIsTouched) {
  const std::string src = MakeData("ds", 4, 100);
  const std::string proj = dir_ + "/proj";
  fs::create_directories(proj + "/results.data");
  chmod(proj.c_str(), 0700);
  Write(proj + "/config.json", R"({"lr": 0.1})");
  Write(proj + "/results.json", R"({"manifest": {"total_bytes": 1}})");
  Write(proj + "/results.data/model.pt", "weights");
  options_.root = proj;
  options_.cap_bytes = 4;
  auto found = FindCopy(src, options_);
  ASSERT_FALSE(found);
  auto made = Acquire(src, options_);
  ASSERT_FALSE(made);
  for (const Error& error : {found.error(), made.error()}) {
    EXPECT_EQ(error.exit_code, kExitUsage);
    EXPECT_NE(error.message.find(proj + " is not a saturate store"), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("config.json, results.data, results.json"), std::string::npos) << error.message;
  }
  EXPECT_EQ(Read(proj + "/config.json"), R"({"lr": 0.1})");
  EXPECT_EQ(Read(proj + "/results.data/model.pt"), "weights");
  EXPECT_EQ(std::distance(fs::directory_iterator(proj), fs::directory_iterator()), 3);
}

TEST_F(StoreTrustTest, AStoreOfAnOlderSaturateIsMarkedAndUsed) {
  const std::string src = MakeData("ds", 2, 10);
  ASSERT_TRUE(Acquire(src, options_));
  ASSERT_EQ(unlink((options_.root + "/.saturate-store").c_str()), 0);
  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_TRUE(lease->reused());
  EXPECT_TRUE(fs::exists(options_.root + "/.saturate-store"));
}

TEST_F(StoreTrustTest, EvictionTouchesOnlyCopiesTheStoresRecordsName) {
  const std::string a = MakeData("a", 10, 10000, 'a');
  auto la = Acquire(a, options_);
  ASSERT_TRUE(la);
  const std::string key = fs::path(la->path()).parent_path().stem().string();
  la = Lease();
  // Things in the store that saturate did not record: a record copied under another key's name, one that is
  // not JSON, a manifest that is a number, and a folder of the form <key>.data with no record at all.
  const std::string planted = options_.root + "/other-0123456789abcdef";
  fs::copy_file(options_.root + "/" + key + ".json", planted + ".json");
  fs::create_directories(planted + ".data/x");
  Write(planted + ".data/x/keep.bin", "not the store's");
  Write(options_.root + "/bad-00000000000000aa.json", "{not json");
  Write(options_.root + "/num-00000000000000bb.json", R"({"manifest": 5})");
  fs::create_directories(options_.root + "/lone-00000000000000cc.data");
  Write(options_.root + "/lone-00000000000000cc.data/keep.bin", "no record names it");
  // And a folder inside the copy replaced by a link to files of the user's: evicting it removes the link only.
  fs::create_directories(dir_ + "/mine");
  Write(dir_ + "/mine/thesis.tex", "years");
  const uint64_t one = DiskBytes(options_.root + "/" + key + ".data");
  fs::remove_all(options_.root + "/" + key + ".data/a/train");
  fs::create_directory_symlink(dir_ + "/mine", options_.root + "/" + key + ".data/a/train");

  options_.cap_bytes = one * 6 / 5;
  auto lb = Acquire(MakeData("b", 10, 10000, 'b'), options_);
  ASSERT_TRUE(lb) << lb.error().message;
  EXPECT_FALSE(fs::exists(options_.root + "/" + key + ".data")) << "the recorded copy was not evicted";
  EXPECT_EQ(Read(planted + ".data/x/keep.bin"), "not the store's");
  EXPECT_EQ(Read(options_.root + "/lone-00000000000000cc.data/keep.bin"), "no record names it");
  EXPECT_TRUE(fs::exists(options_.root + "/bad-00000000000000aa.json"));
  std::string warnings;
  for (const std::string& w : lb->warnings()) warnings += w + "\n";
  EXPECT_NE(warnings.find("bad-00000000000000aa.json is not a record"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("num-00000000000000bb.json is not a record"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("other-0123456789abcdef.json is not a record of the copy it names"), std::string::npos)
      << warnings;

  EXPECT_EQ(Read(dir_ + "/mine/thesis.tex"), "years") << "eviction followed a link";
}

TEST_F(StoreTrustTest, ACopyThatCanNeverFitEvictsNothing) {
  const std::string a = MakeData("a", 10, 10000, 'a');
  std::string path_a;
  {
    auto la = Acquire(a, options_);
    ASSERT_TRUE(la);
    path_a = la->path();
  }
  options_.cap_bytes = DiskBytes(options_.root) * 2;
  auto big = Acquire(MakeData("big", 10, 40000, 'b'), options_);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("nothing evicted"), std::string::npos) << big.error().message;
  EXPECT_TRUE(fs::exists(path_a)) << "a copy was evicted for one that could never fit";
  ExpectSameTree(a, path_a);
}

TEST_F(StoreTrustTest, TheCapCountsTheBlocksFilesTakeNotTheirSizes) {
  // 300 files of 10 bytes: 3,000 bytes of data, over a megabyte on a disk of 4 KiB blocks.
  fs::create_directories(dir_ + "/tiny");
  for (int i = 0; i < 300; ++i) Write(dir_ + "/tiny/" + std::to_string(i), "0123456789");
  options_.cap_bytes = 600 << 10;
  auto lease = Acquire(dir_ + "/tiny", options_);
  ASSERT_FALSE(lease) << "300 files of 10 bytes fit a 600 KiB cap";
  EXPECT_NE(lease.error().message.find("no room to stage"), std::string::npos) << lease.error().message;
  EXPECT_NE(lease.error().message.find("2.9 KiB of data in 300 files"), std::string::npos) << lease.error().message;
}

TEST_F(StoreTrustTest, AStoreInsideTheStagedFolderOrUncreatableIsAUsageError) {
  const std::string src = MakeData("ds", 3, 100);
  options_.root = src + "/store";
  auto inside = Acquire(src, options_);
  ASSERT_FALSE(inside);
  EXPECT_EQ(inside.error().exit_code, kExitUsage);
  EXPECT_NE(inside.error().message.find("lies inside the staged path"), std::string::npos) << inside.error().message;
  EXPECT_FALSE(fs::exists(src + "/store")) << "the check wrote into the data";

  Write(dir_ + "/file", "x");
  options_.root = dir_ + "/file/store";
  auto uncreatable = Acquire(src, options_);
  ASSERT_FALSE(uncreatable);
  EXPECT_EQ(uncreatable.error().exit_code, kExitUsage) << uncreatable.error().message;
  EXPECT_NE(uncreatable.error().message.find(dir_ + "/file/store"), std::string::npos);
}

TEST_F(StoreTrustTest, NamesThatAreNotUtf8AreCopiedRecordedAndFoundAgain) {
  const std::string src = MakeData("ds", 2, 10);
  fs::create_directories(src + "/d\xe9j\xe0");
  Write(src + "/d\xe9j\xe0/\xff\xfe.bin", "latin-1 and worse");
  Write(src + "/line\nbreak.bin", "newline in a name");
  auto first = Acquire(src, options_);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(Read(first->path() + "/d\xe9j\xe0/\xff\xfe.bin"), "latin-1 and worse");
  first = Lease();
  auto second = Acquire(src, options_);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->reused()) << "the record did not give the names back exactly";
  ExpectSameTree(src, second->path());
}

TEST_F(StoreTrustTest, AFileSwappedForAFifoAfterTheListingNeitherHangsNorIsCopied) {
  const std::string src = MakeData("ds", 4, 100);
  // In a child with an alarm: a copy stuck in open() on the FIFO would never return.
  const pid_t child = fork();
  if (child == 0) {
    alarm(60);
    StoreOptions o = options_;
    o.threads = 1;
    o.after_file = [&](size_t n) {
      if (n != 1) return;
      unlink((src + "/val/2.bin").c_str());
      mkfifo((src + "/val/2.bin").c_str(), 0644);
    };
    auto lease = Acquire(src, o);
    _exit(!lease && lease.error().exit_code == kExitUsage &&
                  lease.error().message.find("val/2.bin is neither a file") != std::string::npos
              ? 0
              : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the copy hung on a FIFO (killed by signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(StoreTrustTest, AFolderSwappedForALinkAfterTheListingIsNotFollowed) {
  const std::string src = MakeData("ds", 6, 100);
  // Outside the data: a folder with the same file names, sizes and times, and other bytes.
  fs::create_directories(dir_ + "/outside");
  for (const auto& e : fs::directory_iterator(src + "/train")) {
    const std::string twin = dir_ + "/outside/" + e.path().filename().string();
    Write(twin, std::string(100, '!'));
    struct stat st {};
    stat(e.path().c_str(), &st);
    const timespec times[2] = {st.st_atim, st.st_mtim};
    utimensat(AT_FDCWD, twin.c_str(), times, 0);
  }
  options_.threads = 1;
  // After the first file (train/1.bin: the listing is sorted), the folder is swapped for a link to the twin; it is
  // swapped back after the next file, or before the source is listed again, so that the data looks unchanged.
  auto swap_back = [&] {
    if (!fs::is_symlink(src + "/train")) return;
    fs::remove(src + "/train");
    fs::rename(dir_ + "/train.real", src + "/train");
  };
  bool swapped = false;
  options_.after_file = [&](size_t n) {
    if (n == 1 && !swapped) {
      swapped = true;
      fs::rename(src + "/train", dir_ + "/train.real");
      fs::create_directory_symlink(dir_ + "/outside", src + "/train");
    } else if (n == 2) {
      swap_back();
    }
  };
  options_.on_progress = [&](const Progress& p) {
    if (p.phase == Progress::Phase::kScanning) swap_back();
  };
  auto lease = Acquire(src, options_);
  ASSERT_TRUE(lease) << lease.error().message;
  ExpectSameTree(src, lease->path());
  for (const auto& e : fs::directory_iterator(lease->path() + "/train")) {
    EXPECT_NE(Read(e.path()), std::string(100, '!')) << e.path() << " was read through the link";
  }
}

TEST_F(StoreTrustTest, AFileThatGrewIsNotReadPastItsListedSize) {
  const std::string src = MakeData("ds", 2, 1000);
  options_.threads = 1;
  options_.max_tries = 1;
  // The second file to copy grows to 8 MiB after the listing; the copy is polled once per 1 MiB chunk it reads.
  bool grown = false;
  int polls_after = 0;
  options_.after_file = [&](size_t n) {
    if (n == 1) {
      Write(src + "/val/0.bin", std::string(8 << 20, 'g'));
      grown = true;
    }
  };
  options_.cancelled = [&] {
    if (grown) ++polls_after;
    return false;
  };
  auto lease = Acquire(src, options_);
  ASSERT_FALSE(lease);
  EXPECT_NE(lease.error().message.find("kept changing"), std::string::npos) << lease.error().message;
  EXPECT_LE(polls_after, 3) << "the grown file was read far past its listed 1000 bytes";
}

TEST_F(StoreTrustTest, TheReserveIsKeptWhileCopying) {
  const std::string src = MakeData("ds", 10, 1000);
  options_.threads = 1;
  options_.reserve_bytes = 10 << 20;
  std::atomic<uint64_t> free{100 << 20};
  options_.free_bytes = [&](const std::string&) { return std::optional<uint64_t>(free.load()); };
  size_t copied = 0;
  options_.after_file = [&](size_t n) {
    copied = n;
    if (n == 2) free = 1 << 20;  // something else fills the disk
  };
  auto lease = Acquire(src, options_);
  ASSERT_FALSE(lease) << "the copy went on below the reserve";
  EXPECT_EQ(lease.error().exit_code, 1);
  EXPECT_NE(lease.error().message.find("less than the 10.0 MiB kept free"), std::string::npos) << lease.error().message;
  EXPECT_EQ(copied, 2u);
}

TEST_F(StoreTrustTest, ReadOnlyCopiesAreEvictedAndRemadeByAnOrdinaryUser) {
  RequireRoot();
  // Everything as nobody: a store and data of theirs, copies read-only for them (root ignores permissions).
  chmod(dir_.c_str(), 0755);
  fs::create_directories(dir_ + "/nobody");
  ChownTree(dir_ + "/nobody", kNobody);
  options_.root = dir_ + "/nobody/store";
  const std::string a = MakeData("a", 10, 10000, 'a');
  const std::string b = MakeData("b", 10, 10000, 'b');
  ChownTree(a, kNobody);
  ChownTree(b, kNobody);
  const int status = AsNobody([&] {
    StoreOptions o = options_;
    auto la = Acquire(a, o);
    if (!la) return 1;
    const std::string file = la->path() + "/train/1.bin";
    if (open(file.c_str(), O_WRONLY) >= 0 || errno != EACCES) return 2;  // read-only for its owner too
    if (creat((la->path() + "/train/new").c_str(), 0644) >= 0) return 3;
    la = Lease();
    o.cap_bytes = DiskBytes(o.root) * 3 / 2;
    auto lb = Acquire(b, o);
    if (!lb) return 4;
    if (fs::exists(fs::path(file).parent_path())) return 5;  // a's read-only copy was evicted
    // A copy the owner made writable and wrote into is made again.
    const std::string bfile = lb->path() + "/val/0.bin";
    lb = Lease();
    if (chmod(bfile.c_str(), 0644) != 0) return 6;
    std::ofstream(bfile) << "changed";
    auto again = Acquire(b, o);
    return again && !again->reused() && Read(bfile) != "changed" ? 0 : 7;
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace sat::datastore
