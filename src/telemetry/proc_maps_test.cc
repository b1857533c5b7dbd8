#include "telemetry/proc_maps.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sat::telemetry {
namespace {

class ProcMapsTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(testing::TempDir()) / ("proc_maps_" + std::to_string(getpid()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void WriteMaps(pid_t pid, const std::string& text) {
    std::filesystem::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "maps") << text;
  }
  std::string Root() const { return root_.string(); }

  std::filesystem::path root_;
};

TEST_F(ProcMapsTest, FindsTorchsNativeLibrariesInAnyProcess) {
  WriteMaps(10,
            "55d0c0a00000-55d0c0b00000 r-xp 00000000 08:01 1234 /usr/bin/python3.11\n"
            "7f0000000000-7f0000100000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
            "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n");
  WriteMaps(11,
            "7f1000000000-7f1004000000 r-xp 00000000 08:01 7 "
            "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so\n");
  WriteMaps(12,
            "7f2000000000-7f2000100000 r-xp 00000000 08:01 8 "
            "/usr/lib/python3/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so\n");
  WriteMaps(13, "7f3000000000-7f3000100000 r-xp 00000000 08:01 9 /opt/other/_C.cpython-311.so\n");
  EXPECT_EQ(MapsTorch(10, Root()), false);
  EXPECT_EQ(MapsTorch(11, Root()), true);
  EXPECT_EQ(MapsTorch(12, Root()), true);
  EXPECT_EQ(MapsTorch(13, Root()), false) << "another package's _C module";
  EXPECT_FALSE(MapsTorch(99, Root()).has_value()) << "a process that is gone";
  EXPECT_EQ(MapsTorch(getpid(), "/proc"), false) << "this test binary does not load torch";
}

TEST_F(ProcMapsTest, TellsAnUnreadableMapFromOneWithoutTorch) {
  WriteMaps(20, "7f0000000000-7f0000100000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n");
  WriteMaps(21, "");  // a zombie's map is empty
  WriteMaps(22, "7f1000000000-7f1004000000 r-xp 00000000 08:01 7 /opt/torch/lib/libtorch.so\n");
  EXPECT_EQ(MapsTorch(20, Root()), false);
  EXPECT_EQ(MapsTorch(21, Root()), std::nullopt);
  EXPECT_EQ(MapsTorch(22, Root()), true);
  EXPECT_EQ(MapsTorch(99, Root()), std::nullopt);
  EXPECT_EQ(MapsTorch(getpid()), false);
}

}  // namespace
}  // namespace sat::telemetry
