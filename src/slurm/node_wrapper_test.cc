#include "slurm/node_wrapper.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "util/atomic_file.h"
#include "util/host.h"
#include "util/test_dir.h"

namespace sat::slurm {
namespace {

// Sets Slurm's variables for the test's length, and restores what was there.
using Vars = std::vector<std::pair<const char*, const char*>>;

class SlurmEnv {
 public:
  explicit SlurmEnv(const Vars& vars) {
    for (const char* name : {"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_ID", "SLURMD_NODENAME"}) {
      const char* old = getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      unsetenv(name);
    }
    for (const auto& [name, value] : vars) setenv(name, value, 1);
  }
  ~SlurmEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) setenv(name, value->c_str(), 1);
      else unsetenv(name);
    }
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST(NodeWrapper, TheJobAndNodeAreSlurms) {
  {
    SlurmEnv env(Vars{{"SLURM_ARRAY_JOB_ID", "41"}, {"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_JOB_ID", "43"},
                  {"SLURMD_NODENAME", "gpu-07"}});
    const sweep::NodeIdentity who = SlurmNodeIdentity();
    EXPECT_EQ(who.job_id, "41_2");
    EXPECT_EQ(who.node, "gpu-07");
  }
  {
    SlurmEnv env(Vars{{"SLURM_JOB_ID", "43"}});
    const sweep::NodeIdentity who = SlurmNodeIdentity();
    EXPECT_EQ(who.job_id, "43");
    EXPECT_EQ(who.node, HostName());
  }
}

TEST(NodeWrapper, UsageIsWhatTheOutcomeMeasured) {
  sweep::NodeOutcome o;
  o.measurements.cpu_pct = 150;
  o.measurements.rss_bytes = 3;
  o.measurements.peak_gpu_memory_bytes = 5;
  o.gpu_total_bytes = 80;
  o.gpu_util_pct = 60;
  const ShapeUsage u = UsageOf(o);
  EXPECT_EQ(u.cpu_pct, 150);
  EXPECT_EQ(u.rss_bytes, 3u);
  EXPECT_EQ(u.gpu_mem_bytes, 5u);
  EXPECT_EQ(u.gpu_total_bytes, 80u);
  EXPECT_EQ(u.gpu_util_pct, 60);
}

// The Slurm request in job.json is what the submitter wrote, and the outcome names the Slurm job it ran in.
TEST(NodeWrapper, RunsTheAttemptAsThisSlurmJob) {
  SlurmEnv env(Vars{{"SLURM_JOB_ID", "77"}, {"SLURMD_NODENAME", "cpu-01"}});
  TempDir dir;
  sweep::NodeJob job;
  job.attempt_id = 3;
  job.run_key = "abc";
  job.attempt_no = 1;
  job.argv = {"/bin/sh", "-c", "exit 0"};
  job.log_dir = dir.File("attempt-1");
  SlurmRequest request;
  request.cpus = 2;
  job.request = request.ToJson();
  std::filesystem::create_directories(job.log_dir);
  const std::string path = job.log_dir + "/" + sweep::kJobFile;
  ASSERT_TRUE(WriteFileAtomically(path, sweep::NodeJobToJson(job).dump()));
  auto back = sweep::NodeJobFromJson(sweep::NodeJobToJson(job));
  ASSERT_TRUE(back);
  EXPECT_EQ(SlurmRequest::FromJson(back->request), request);

  auto code = RunNodeJob(path, sweep::NodeOptions{});
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  auto file = sweep::ReadJsonFile(job.log_dir + "/" + sweep::kOutcomeFile);
  ASSERT_TRUE(file.ok() && *file);
  auto outcome = sweep::NodeOutcomeFromJson(**file);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->job_id, "77");
  EXPECT_EQ(outcome->node, "cpu-01");
}

}  // namespace
}  // namespace sat::slurm
