#include "tune/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace sat::tune {
namespace {

namespace fs = std::filesystem;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("saturate-cache-test-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_all);  // the cache's folders must be the user's alone
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path() const { return (dir_ / "sub" / "tune.db").string(); }

  static Trial MakeTrial(double rate) {
    Trial t;
    t.id = 7;
    t.request = {core::StageKind::kLoader, {{"workers", 2}}, "workers", 0, {}};
    t.exit_class = run::ExitClass::kStopped;
    t.samples_per_s = rate;
    t.series = {{0.5, rate}};
    return t;
  }

  fs::path dir_;
};

TEST_F(CacheTest, StoresAndFindsTrialsPerMachine) {
  auto cache = TrialCache::Open(Path());
  ASSERT_TRUE(cache) << cache.error().message;
  Trial t = MakeTrial(512);
  std::string key = TrialKey({"python3", "train.py"}, false, "", t.request);
  ASSERT_TRUE((*cache)->Put(key, "host-a", "python3 train.py", t));

  auto found = (*cache)->Find(key, "host-a");
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_TRUE((*found)->cached);
  EXPECT_DOUBLE_EQ((*found)->samples_per_s, 512);
  EXPECT_EQ((*found)->request.knobs, t.request.knobs);

  auto other_machine = (*cache)->Find(key, "host-b");
  ASSERT_TRUE(other_machine);
  EXPECT_FALSE(other_machine->has_value());
  EXPECT_EQ(*(*cache)->Count("host-a"), 1);
}

TEST_F(CacheTest, ALaterMeasurementReplacesAnEarlierOneAndSurvivesReopening) {
  std::string key = TrialKey({"t.py"}, false, "", MakeTrial(1).request);
  {
    auto cache = TrialCache::Open(Path());
    ASSERT_TRUE(cache);
    ASSERT_TRUE((*cache)->Put(key, "m", "t.py", MakeTrial(100)));
    ASSERT_TRUE((*cache)->Put(key, "m", "t.py", MakeTrial(200)));
  }
  auto cache = TrialCache::Open(Path());
  ASSERT_TRUE(cache);
  auto found = (*cache)->Find(key, "m");
  ASSERT_TRUE(found && found->has_value());
  EXPECT_DOUBLE_EQ((*found)->samples_per_s, 200);
  EXPECT_EQ(*(*cache)->Count("m"), 1);
}

TEST_F(CacheTest, KeysSeparateEverythingThatChangesAMeasurement) {
  TrialRequest r = MakeTrial(1).request;
  std::string base = TrialKey({"t.py"}, false, "", r);
  EXPECT_NE(base, TrialKey({"t.py", "--x"}, false, "", r));
  EXPECT_NE(base, TrialKey({"t.py"}, true, "", r));
  EXPECT_NE(base, TrialKey({"t.py"}, false, "tqdm", r));
  EXPECT_NE(base, TrialKey({"t.py"}, false, "", r, MeasureSetup{false, std::nullopt, std::nullopt}));
  EXPECT_NE(base, TrialKey({"t.py"}, false, "", r, MeasureSetup{true, 8.0, std::nullopt}));
  EXPECT_NE(base, TrialKey({"t.py"}, false, "", r, MeasureSetup{true, std::nullopt, 64.0}));
  EXPECT_NE(base.find("\"format\":3"), std::string::npos);  // trials of the older format are measured again
  TrialRequest other = r;
  other.knobs["workers"] = 3;
  EXPECT_NE(base, TrialKey({"t.py"}, false, "", other));
  other = r;
  other.mode = core::StageKind::kFull;
  EXPECT_NE(base, TrialKey({"t.py"}, false, "", other));
  other = r;
  other.repeat = 1;
  EXPECT_NE(base, TrialKey({"t.py"}, false, "", other));
  other = r;
  other.step = "ceiling";  // the step that asked does not change what is measured
  EXPECT_EQ(base, TrialKey({"t.py"}, false, "", other));
}

TEST_F(CacheTest, RefusesFilesThatAreNotATuneCache) {
  fs::create_directories(dir_);
  std::string junk = (dir_ / "junk.db").string();
  std::ofstream(junk) << "this is not sqlite, just text that is long enough to have a header......";
  auto opened = TrialCache::Open(junk);
  EXPECT_FALSE(opened);

  std::string other = (dir_ / "other.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version = 7", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto versioned = TrialCache::Open(other);
  ASSERT_FALSE(versioned);
  EXPECT_THAT(versioned.error().message, ::testing::HasSubstr("schema version 7"));
}

TEST(CachePath, FollowsXdg) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(*DefaultCachePath(), "/x/cache/saturate/tune.db");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_THAT(*DefaultCachePath(), ::testing::EndsWith("/.cache/saturate/tune.db"));
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

// Without HOME the cache once went to /tmp/.cache/saturate, a folder any user could make first.
TEST(CachePath, NeverASharedFolder) {
  EXPECT_EQ(*CachePathFrom({"", "/home/u", "/home/pw"}), "/home/u/.cache/saturate/tune.db");
  EXPECT_EQ(*CachePathFrom({"relative/cache", "", "/home/pw"}), "/home/pw/.cache/saturate/tune.db");
  auto none = CachePathFrom({});
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, ::testing::HasSubstr("no trial cache"));

  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_home = home ? home : "", saved_xdg = xdg ? xdg : "";
  unsetenv("HOME");
  unsetenv("XDG_CACHE_HOME");
  auto path = DefaultCachePath();
  if (home) setenv("HOME", saved_home.c_str(), 1);
  if (xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  ASSERT_TRUE(path) << path.error().message;  // from the password database
  EXPECT_THAT(*path, ::testing::Not(::testing::StartsWith("/tmp")));
}

// The key once held the argv as given: `--api-key=sk-...` in every row of the cache.
TEST_F(CacheTest, NoSecretOfTheCommandIsWritten) {
  auto cache = TrialCache::Open(Path());
  ASSERT_TRUE(cache) << cache.error().message;
  const Trial t = MakeTrial(100);
  const std::string plain = TrialKey({"python3", "train.py", "--api-key=sk-live-123", "--token", "tok-456"}, false,
                                     "", t.request);
  const std::string shell = TrialKey({"python3 train.py --password hunter2"}, true, "", t.request);
  for (const std::string& key : {plain, shell}) {
    EXPECT_THAT(key, ::testing::Not(::testing::HasSubstr("sk-live-123")));
    EXPECT_THAT(key, ::testing::Not(::testing::HasSubstr("tok-456")));
    EXPECT_THAT(key, ::testing::Not(::testing::HasSubstr("hunter2")));
    ASSERT_TRUE((*cache)->Put(key, "m", "python3 train.py", t));
  }
  EXPECT_THAT(plain, ::testing::HasSubstr("--api-key=***"));
  cache->reset();
  std::ifstream in(Path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(bytes, ::testing::HasSubstr("--api-key=***"));
  EXPECT_THAT(bytes, ::testing::Not(::testing::HasSubstr("sk-live-123")));
  EXPECT_THAT(bytes, ::testing::Not(::testing::HasSubstr("hunter2")));
}

mode_t ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

// tune.db was 0644 in a 0755 folder: any user of the machine could read the commands it keeps.
TEST_F(CacheTest, TheCacheIsTheUsersAlone) {
  const mode_t old_umask = umask(022);
  auto cache = TrialCache::Open(Path());
  ASSERT_TRUE(cache) << cache.error().message;
  cache->reset();
  EXPECT_EQ(ModeOf(Path()), 0600u);
  EXPECT_EQ(ModeOf(dir_ / "sub"), 0700u);

  // An older saturate's cache is narrowed.
  ASSERT_EQ(chmod(Path().c_str(), 0644), 0);
  ASSERT_TRUE(TrialCache::Open(Path()));
  EXPECT_EQ(ModeOf(Path()), 0600u);
  umask(old_umask);
}

TEST_F(CacheTest, AFolderOthersCanWriteOrOwnIsRefused) {
  fs::create_directories(dir_ / "shared");
  ASSERT_EQ(chmod((dir_ / "shared").c_str(), 01777), 0);
  auto shared = TrialCache::Open((dir_ / "shared" / "tune.db").string());
  ASSERT_FALSE(shared);
  EXPECT_THAT(shared.error().message, ::testing::HasSubstr("may be written by other users"));
  EXPECT_FALSE(fs::exists(dir_ / "shared" / "tune.db"));

  fs::create_directories(dir_ / "theirs");
  if (geteuid() == 0) {  // only root can give a folder away
    ASSERT_EQ(chown((dir_ / "theirs").c_str(), 65534, 65534), 0);
    auto theirs = TrialCache::Open((dir_ / "theirs" / "tune.db").string());
    ASSERT_FALSE(theirs);
    EXPECT_THAT(theirs.error().message, ::testing::HasSubstr("belongs to user 65534"));
  }

  // A link at the cache's name is not followed.
  fs::create_directories(dir_ / "mine");
  fs::permissions(dir_ / "mine", fs::perms::owner_all);
  ASSERT_EQ(symlink("elsewhere.db", (dir_ / "mine" / "tune.db").c_str()), 0);
  auto linked = TrialCache::Open((dir_ / "mine" / "tune.db").string());
  ASSERT_FALSE(linked);
  EXPECT_THAT(linked.error().message, ::testing::HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(dir_ / "mine" / "elsewhere.db"));
}

}  // namespace
}  // namespace sat::tune
