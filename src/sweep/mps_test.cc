#include "sweep/mps.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sweep/test_dir.h"

namespace sat::sweep {
namespace {

// Puts a directory in front of PATH for the test's duration.
class PathPrefix {
 public:
  explicit PathPrefix(const std::string& dir) : old_(getenv("PATH") ? getenv("PATH") : "") {
    setenv("PATH", (dir + ":" + old_).c_str(), 1);
  }
  ~PathPrefix() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

TEST(MpsDaemon, StartsAPrivateDaemonAndQuitsIt) {
  TempDir tmp;
  const std::string dir = tmp.File("bin");
  std::filesystem::create_directory(dir);
  const std::string log = tmp.File("calls.log");
  // A stand-in for NVIDIA's control program: records how it is called and what it reads.
  const std::string fake = dir + "/nvidia-cuda-mps-control";
  std::ofstream(fake) << "#!/bin/sh\n"
                      << "echo \"args=$* pipe=$CUDA_MPS_PIPE_DIRECTORY\" >> " << log << "\n"
                      << "[ \"$1\" = -d ] || cat >> " << log << "\n";
  chmod(fake.c_str(), 0755);
  std::string pipe_dir;
  {
    PathPrefix path(dir);
    auto mps = MpsDaemon::Start();
    ASSERT_TRUE(mps.ok()) << mps.error().message;
    pipe_dir = mps.value()->env().at("CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_TRUE(std::filesystem::is_directory(pipe_dir));
    EXPECT_TRUE(std::filesystem::is_directory(mps.value()->env().at("CUDA_MPS_LOG_DIRECTORY")));
  }
  std::stringstream calls;
  calls << std::ifstream(log).rdbuf();
  EXPECT_EQ(calls.str(), "args=-d pipe=" + pipe_dir + "\nargs= pipe=" + pipe_dir + "\nquit\n");
  EXPECT_FALSE(std::filesystem::exists(pipe_dir)) << "its folders are removed";
}

TEST(MpsDaemon, NamesTheMissingProgram) {
  TempDir empty;
  const std::string old = getenv("PATH") ? getenv("PATH") : "";
  setenv("PATH", empty.File("").c_str(), 1);
  auto mps = MpsDaemon::Start();
  setenv("PATH", old.c_str(), 1);
  ASSERT_FALSE(mps.ok());
  EXPECT_NE(mps.error().message.find("--mps needs NVIDIA's nvidia-cuda-mps-control"), std::string::npos)
      << mps.error().message;
}

}  // namespace
}  // namespace sat::sweep
