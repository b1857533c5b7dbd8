#include "sweep/torch_maps.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sweep/test_dir.h"

namespace sat::sweep {
namespace {

void WriteMaps(const TempDir& root, pid_t pid, const std::string& text) {
  std::filesystem::create_directories(root.File(std::to_string(pid)));
  std::ofstream(root.File(std::to_string(pid) + "/maps")) << text;
}

TEST(AnyMapsTorch, FindsTorchsNativeLibrariesInAnyProcess) {
  TempDir root;
  WriteMaps(root, 10,
            "55d0c0a00000-55d0c0b00000 r-xp 00000000 08:01 1234 /usr/bin/python3.11\n"
            "7f0000000000-7f0000100000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
            "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n");
  WriteMaps(root, 11,
            "7f1000000000-7f1004000000 r-xp 00000000 08:01 7 "
            "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so\n");
  WriteMaps(root, 12,
            "7f2000000000-7f2000100000 r-xp 00000000 08:01 8 "
            "/usr/lib/python3/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so\n");
  WriteMaps(root, 13, "7f3000000000-7f3000100000 r-xp 00000000 08:01 9 /opt/other/_C.cpython-311.so\n");
  EXPECT_FALSE(AnyMapsTorch({10}, root.File("")));
  EXPECT_TRUE(AnyMapsTorch({10, 11}, root.File("")));
  EXPECT_TRUE(AnyMapsTorch({12}, root.File("")));
  EXPECT_FALSE(AnyMapsTorch({13}, root.File(""))) << "another package's _C module";
  EXPECT_FALSE(AnyMapsTorch({99}, root.File(""))) << "a process that is gone";
  EXPECT_FALSE(AnyMapsTorch({getpid()}, "/proc")) << "this test binary does not load torch";
}

}  // namespace
}  // namespace sat::sweep
