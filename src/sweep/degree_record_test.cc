#include "sweep/degree_record.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "util/test_dir.h"

namespace sat::sweep {
namespace {

TEST(DegreeRecord, KeepsWhatASweepLearntPerMachineCommandAndShape) {
  TempDir dir;
  const std::string path = dir.File("cache/packing.json");
  std::string problem;
  DegreeRecord record = DegreeRecord::Load(path, &problem);
  EXPECT_EQ(problem, "") << "a missing file is an empty record";
  EXPECT_EQ(record.size(), 0u);
  record.Put("box|2 cores|cpu", "cmd", "bs=32", RememberedShape{4, true, 1 << 20, false, true}, 100);
  record.Put("box|2 cores|cpu", "cmd", "bs=64", RememberedShape{2, false, 2 << 20, true, false}, 101);
  ASSERT_TRUE(record.Save());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the record names commands: the user's alone";

  DegreeRecord again = DegreeRecord::Load(path, &problem);
  EXPECT_EQ(problem, "");
  auto found = again.Find("box|2 cores|cpu", "cmd", "bs=32");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->degree, 4);
  EXPECT_TRUE(found->held);
  EXPECT_EQ(found->mem_bytes, 1u << 20);
  EXPECT_TRUE(found->clocked);
  EXPECT_TRUE(again.Find("box|2 cores|cpu", "cmd", "bs=64")->short_runs);
  EXPECT_FALSE(again.Find("other|2 cores|cpu", "cmd", "bs=32")) << "another machine learnt nothing here";
  EXPECT_FALSE(again.Find("box|2 cores|cpu", "other", "bs=32")) << "nor another command";
}

TEST(DegreeRecord, AnUnusableFileIsAnEmptyRecordAndSaysWhy) {
  TempDir dir;
  std::string problem;
  std::ofstream(dir.File("garbage.json")) << "{not json";
  EXPECT_EQ(DegreeRecord::Load(dir.File("garbage.json"), &problem).size(), 0u);
  EXPECT_NE(problem.find("is not one this saturate writes"), std::string::npos) << problem;
  // A planted link is not followed.
  std::ofstream(dir.File("target.json")) << R"({"format": 1, "entries": []})";
  ASSERT_EQ(symlink(dir.File("target.json").c_str(), dir.File("link.json").c_str()), 0);
  problem.clear();
  EXPECT_EQ(DegreeRecord::Load(dir.File("link.json"), &problem).size(), 0u);
  EXPECT_NE(problem.find("symbolic link"), std::string::npos) << problem;
  // Entries that do not read as entries are left out; the rest stand.
  std::ofstream(dir.File("mixed.json")) << R"({"format": 1, "entries": [
      {"key": "[\"m\",\"c\",\"\"]", "degree": 3, "mem_bytes": 5, "updated_unix": 1},
      {"key": "[\"m\",\"c\",\"x\"]", "degree": -2, "mem_bytes": 5},
      {"key": 7, "degree": 2},
      "nonsense"]})";
  problem.clear();
  DegreeRecord mixed = DegreeRecord::Load(dir.File("mixed.json"), &problem);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed.Find("m", "c", "")->degree, 3);
}

TEST(DegreeRecord, AFolderOthersMayWriteIsRefused) {
  TempDir dir;
  const std::string shared = dir.File("shared");
  ASSERT_EQ(mkdir(shared.c_str(), 0777), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  std::string problem;
  DegreeRecord record = DegreeRecord::Load(shared + "/packing.json", &problem);
  record.Put("m", "c", "", RememberedShape{}, 1);
  const Status saved = record.Save();
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.message().find("may be written by other users"), std::string::npos) << saved.message();
}

TEST(DegreeRecord, KeepsTheNewestEntries) {
  TempDir dir;
  std::string problem;
  DegreeRecord record = DegreeRecord::Load(dir.File("p.json"), &problem);
  for (size_t i = 0; i <= kMaxEntries; ++i)
    record.Put("m", "c", std::to_string(i), RememberedShape{}, static_cast<double>(i));
  EXPECT_EQ(record.size(), kMaxEntries);
  EXPECT_FALSE(record.Find("m", "c", "0")) << "the oldest went";
  EXPECT_TRUE(record.Find("m", "c", std::to_string(kMaxEntries)));
}

}  // namespace
}  // namespace sat::sweep
