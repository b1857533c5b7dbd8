#include "sweep/node_attempt.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sweep/retry.h"
#include "telemetry/sampler.h"
#include "util/atomic_file.h"
#include "util/test_dir.h"

namespace sat::sweep {
namespace {

NodeJob Job(const TempDir& dir, std::vector<std::string> argv) {
  NodeJob job;
  job.attempt_id = 7;
  job.run_key = "abc";
  job.attempt_no = 1;
  job.argv = std::move(argv);
  job.env = {{"GREETING", "hello"}};
  job.log_dir = dir.File("attempt-1");
  job.metric_pattern = "loss=(?P<loss>[0-9.]+)";
  job.metric = MetricSpec{"loss", Goal::kMinimize, std::nullopt};
  job.warmup_s = 0.2;
  job.window_s = 0.2;
  job.request = {{"cpus", 2}};
  return job;
}

std::string WriteJob(const NodeJob& job) {
  std::filesystem::create_directories(job.log_dir);
  const std::string path = job.log_dir + "/" + kJobFile;
  EXPECT_TRUE(WriteFileAtomically(path, NodeJobToJson(job).dump()));
  return path;
}

// One GPU drawing 300 W, its energy counter that power times CLOCK_MONOTONIC's seconds (as the NVML stand-in's);
// no process list, so the wrapper takes it for the job's GPU (a job confined to its GPU sees only that one). It
// stands at the GpuBackend seam, where NVML would be: the node has no GPU.
class OneGpuAt300W : public telemetry::GpuBackend {
 public:
  unsigned DeviceCount() const override { return 1; }
  std::vector<telemetry::GpuSample> Sample(const std::vector<unsigned>&) override {
    telemetry::GpuSample g;
    g.memory_total_bytes = 80ull << 30;
    g.power_draw_w = 300;
    g.energy_j = 300 * telemetry::MonotonicSeconds();
    return {g};
  }
  std::string Description() const override { return "one GPU at 300 W"; }
};

// As a backend's wrapper runs it: job "41_2" on node "n1".
Result<int> RunAsNode(const std::string& job_path, const NodeOptions& options) {
  return RunNodeAttempt(job_path, NodeIdentity{"41_2", "n1"}, options);
}

NodeOutcome ReadOutcome(const NodeJob& job) {
  auto file = ReadJsonFile(job.log_dir + "/" + kOutcomeFile);
  EXPECT_TRUE(file.ok() && *file);
  auto outcome = NodeOutcomeFromJson(**file);
  EXPECT_TRUE(outcome);
  return *outcome;
}

TEST(NodeAttempt, JobsRoundTripThroughJson) {
  TempDir dir;
  NodeJob job = Job(dir, {"python3", "train.py"});
  auto back = NodeJobFromJson(NodeJobToJson(job));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->argv, job.argv);
  EXPECT_EQ(back->env, job.env);
  EXPECT_EQ(back->metric->name, "loss");
  EXPECT_EQ(back->request, job.request);
  EXPECT_FALSE(NodeJobFromJson(nlohmann::json{{"argv", 3}}));
}

TEST(NodeAttempt, OutcomesRoundTripThroughJson) {
  NodeOutcome o;
  o.attempt_id = 3;
  o.job_id = "41_2";
  o.exit_class = run::ExitClass::kGpuOom;
  o.signalled = true;
  o.measurements.cpu_pct = 150;
  o.measurements.peak_gpu_memory_bytes = 5;
  o.measurements.energy_j = 1250.5;
  o.measurements.samples = 640;
  o.gpu_total_bytes = 80;
  o.metrics = {MetricPoint{"loss", 0.5, 10, 1.5}};
  auto back = NodeOutcomeFromJson(NodeOutcomeToJson(o));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->exit_class, run::ExitClass::kGpuOom);
  EXPECT_TRUE(back->signalled);
  EXPECT_EQ(back->measurements.cpu_pct, 150);
  EXPECT_EQ(back->measurements.energy_j, 1250.5);
  EXPECT_EQ(back->measurements.samples, 640);
  EXPECT_FALSE(back->measurements.rss_bytes);
  EXPECT_EQ(back->gpu_total_bytes, 80u);
  ASSERT_EQ(back->metrics.size(), 1u);
  EXPECT_EQ(back->metrics[0].step, 10);
}

TEST(NodeAttempt, RunsTheCommandAndWritesStartedAndOutcome) {
  TempDir dir;
  NodeJob job = Job(dir, {"/bin/sh", "-c", "echo \"$GREETING loss=0.25\"; sleep 0.5"});
  const std::string path = WriteJob(job);
  auto code = RunAsNode(path, NodeOptions{});
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  EXPECT_TRUE(std::filesystem::exists(job.log_dir + "/" + kStartedFile));
  NodeOutcome o = ReadOutcome(job);
  EXPECT_EQ(o.attempt_id, 7);
  EXPECT_EQ(o.job_id, "41_2");
  EXPECT_EQ(o.node, "n1");
  EXPECT_EQ(o.exit_class, run::ExitClass::kFinished);
  EXPECT_FALSE(o.signalled);
  ASSERT_FALSE(o.metrics.empty());
  EXPECT_EQ(o.metrics.back().name, "loss");
  EXPECT_EQ(o.metrics.back().value, 0.25);
  EXPECT_TRUE(o.measurements.rss_bytes);
  std::ifstream log(job.log_dir + "/stdout.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "hello loss=0.25");
  EXPECT_FALSE(o.measurements.energy_j) << "no GPU: energy unknown, not 0";
}

TEST(NodeAttempt, AJobIsChargedItsGpusEnergyTimesTheShareItAskedFor) {
  OneGpuAt300W gpu;
  for (const double fraction : {1.0, 0.25}) {
    TempDir dir;
    NodeJob job = Job(dir, {"/bin/sh", "-c", "sleep 1"});
    job.request = {{"gpus", fraction == 1 ? 1 : 0}, {"shards", fraction == 1 ? 0 : 2}, {"gpu_fraction", fraction}};
    auto code = RunAsNode(WriteJob(job), NodeOptions{.gpu = &gpu, .tick_s = 0.2});
    ASSERT_TRUE(code) << code.error().message;
    const NodeOutcome o = ReadOutcome(job);
    ASSERT_TRUE(o.measurements.energy_j) << fraction;
    // The whole job held the GPU: at least the run's own second, and not much more.
    const double seconds = *o.measurements.energy_j / (300 * fraction);
    EXPECT_GE(seconds, o.duration_s * 0.99) << fraction;
    EXPECT_LE(seconds, o.duration_s + 0.3) << fraction;
  }
}

TEST(NodeAttempt, AFailingRunIsAnOutcomeNotAnError) {
  TempDir dir;
  NodeJob job = Job(dir, {"/bin/sh", "-c", "echo 'ValueError: bad' >&2; exit 3"});
  auto code = RunAsNode(WriteJob(job), NodeOptions{});
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  NodeOutcome o = ReadOutcome(job);
  EXPECT_EQ(o.exit_class, run::ExitClass::kFailed);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.error_line, "ValueError: bad");
}

TEST(NodeAttempt, AMissingJobFileSaysTheFolderIsNotShared) {
  TempDir dir;
  auto code = RunAsNode(dir.File("nowhere/job.json"), NodeOptions{});
  ASSERT_FALSE(code);
  EXPECT_NE(code.error().message.find("must be on a filesystem this node shares"), std::string::npos)
      << code.error().message;
}

TEST(NodeAttempt, ReadsJsonFiles) {
  TempDir dir;
  const std::string path = dir.File("x.json");
  ASSERT_TRUE(WriteFileAtomically(path, "{\"a\": 2}"));
  auto j = ReadJsonFile(path);
  ASSERT_TRUE(j.ok() && *j);
  EXPECT_EQ((**j)["a"], 2);
  EXPECT_FALSE(*ReadJsonFile(dir.File("none.json")));
}


// The node stages the job's data into its store before the run starts, and the run reads the copy.
TEST(NodeAttempt, StagesTheDataOnTheNodeAndPointsTheRunAtTheCopy) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("ds"));
  std::ofstream(dir.File("ds/sample.txt")) << "one sample";
  NodeJob job = Job(dir, {"/bin/sh", "-c", "echo \"data=$1 env=$SATURATE_STAGED_0\"; cat \"$1/sample.txt\"", "sh",
                          dir.File("ds")});
  job.stage.paths = {dir.File("ds")};
  job.stage.policy = StagePolicy::kAlways;
  job.stage.dir = dir.File("node-store");
  auto back = NodeJobFromJson(NodeJobToJson(job));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->stage.paths, job.stage.paths);
  EXPECT_EQ(back->stage.policy, StagePolicy::kAlways);
  EXPECT_EQ(back->stage.dir, job.stage.dir);

  auto code = RunAsNode(WriteJob(job), NodeOptions{});
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  std::ifstream log(job.log_dir + "/stdout.log");
  std::string line, content;
  std::getline(log, line);
  std::getline(log, content);
  EXPECT_TRUE(line.starts_with("data=" + dir.File("node-store") + "/ds-")) << line;
  EXPECT_NE(line.find(" env=" + dir.File("node-store") + "/ds-"), std::string::npos) << line;
  EXPECT_EQ(content, "one sample");
}

// A node without room for the copy ends the attempt as a transient start failure, so the run is retried, never
// run on the source or a half copy; a store folder the spec got wrong fails the run at once.
TEST(NodeAttempt, ANodeThatCannotStageEndsTheAttemptForARetry) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("ds"));
  std::ofstream(dir.File("ds/sample.txt")) << "one sample";
  NodeJob job = Job(dir, {"/bin/sh", "-c", "echo ran"});
  job.stage.paths = {dir.File("ds")};
  job.stage.policy = StagePolicy::kAlways;
  job.stage.dir = dir.File("store");
  job.stage.cap_bytes = 4;  // the sample alone is 10 bytes
  auto code = RunAsNode(WriteJob(job), NodeOptions{});
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 1);
  const NodeOutcome o = ReadOutcome(job);
  EXPECT_EQ(o.exit_class, run::ExitClass::kStartFailed);
  EXPECT_TRUE(o.start_transient);
  EXPECT_NE(o.detail.find("staging failed on node"), std::string::npos) << o.detail;
  EXPECT_FALSE(std::filesystem::exists(job.log_dir + "/stdout.log")) << "the run must not start";
  AttemptOutcome as_journaled;
  as_journaled.exit_class = o.exit_class;
  as_journaled.start_transient = o.start_transient;
  EXPECT_EQ(StateAfterOutcome(as_journaled, 0, RetryPolicy{2}), RunState::kRetrying);

  std::ofstream(dir.File("not-a-folder")) << "x";
  job.stage.dir = dir.File("not-a-folder");
  job.stage.cap_bytes = 0;
  std::filesystem::remove(job.log_dir + "/" + kOutcomeFile);
  ASSERT_TRUE(RunAsNode(WriteJob(job), NodeOptions{}));
  const NodeOutcome wrong = ReadOutcome(job);
  EXPECT_EQ(wrong.exit_class, run::ExitClass::kStartFailed);
  EXPECT_FALSE(wrong.start_transient) << wrong.detail;
}

}  // namespace
}  // namespace sat::sweep
