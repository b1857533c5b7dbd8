#include "telemetry/rapl.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "util/test_dir.h"

namespace sat::telemetry {
namespace {

namespace fs = std::filesystem;

// A powercap tree as the kernel lays it out: two packages, a subdomain (not counted again) and another zone type.
class RaplTree {
 public:
  // A folder of its own: each test runs as its own process under ctest -j2, where a name counted per process
  // ("rapl-0") was the same for two tests at once, and one removed the other's tree.
  RaplTree() : root_(dir_.path()) {
    Set("intel-rapl:0", 1000000, 262143328850);
    Set("intel-rapl:1", 2000000, 262143328850);
    Set("intel-rapl:0:0", 999999999, 262143328850);  // cores of package 0
    Set("dtpm", 5, 0);
  }
  void Set(const std::string& zone, uint64_t energy_uj, uint64_t range_uj) {
    fs::path dir = root_ / "class" / "powercap" / zone;
    fs::create_directories(dir);
    std::ofstream(dir / "energy_uj") << energy_uj << "\n";
    if (range_uj) std::ofstream(dir / "max_energy_range_uj") << range_uj << "\n";
  }
  void Remove(const std::string& zone) { fs::remove(root_ / "class" / "powercap" / zone / "energy_uj"); }
  std::string root() const { return root_.string(); }

 private:
  TempDir dir_;
  fs::path root_;
};

TEST(Rapl, SumsThePackagesAndNotTheirSubdomains) {
  RaplTree tree;
  RaplCounter rapl(tree.root());
  EXPECT_EQ(rapl.domains(), 2u);
  EXPECT_EQ(rapl.Read(), 0.0);  // the first reading starts the counter
  tree.Set("intel-rapl:0", 1000000 + 30000000, 262143328850);  // +30 J
  tree.Set("intel-rapl:1", 2000000 + 12500000, 262143328850);  // +12.5 J
  tree.Set("intel-rapl:0:0", 5, 262143328850);                 // a subdomain's drop changes nothing
  EXPECT_DOUBLE_EQ(*rapl.Read(), 42.5);
}

TEST(Rapl, CarriesOnAcrossAWrap) {
  RaplTree tree;
  tree.Set("intel-rapl:0", 999000000, 1000000000);  // 1 J below the wrap
  RaplCounter rapl(tree.root());
  ASSERT_TRUE(rapl.Read());
  tree.Set("intel-rapl:0", 4000000, 1000000000);  // wrapped: 1 J to the top, then 4 J
  tree.Set("intel-rapl:1", 2000000, 262143328850);
  EXPECT_DOUBLE_EQ(*rapl.Read(), 5.0);
}

TEST(Rapl, AnUnreadableDomainIsNotAZero) {
  RaplTree tree;
  RaplCounter rapl(tree.root());
  ASSERT_TRUE(rapl.Read());
  tree.Remove("intel-rapl:1");
  EXPECT_FALSE(rapl.Read().has_value());
  EXPECT_FALSE(RaplCounter(testing::TempDir() + "/no-such-sys").Read().has_value());
}

}  // namespace
}  // namespace sat::telemetry
