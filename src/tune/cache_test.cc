#include "tune/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sat::tune {
namespace {

namespace fs = std::filesystem;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("saturate-cache-test-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path() const { return (dir_ / "sub" / "tune.db").string(); }

  static Trial MakeTrial(double rate) {
    Trial t;
    t.id = 7;
    t.request = {probe::StageKind::kLoader, {{"workers", 2}}, "workers", 0, {}};
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
  other.mode = probe::StageKind::kFull;
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
  EXPECT_EQ(DefaultCachePath(), "/x/cache/saturate/tune.db");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_THAT(DefaultCachePath(), ::testing::EndsWith("/.cache/saturate/tune.db"));
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace sat::tune
