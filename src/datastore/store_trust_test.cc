// Issue 45: the store is the user's own, and saturate's own; what it hands out is the data; what it deletes is
// what it made; a source swapped after its listing is never followed.
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
