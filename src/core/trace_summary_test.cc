#include "core/trace_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sat::core {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;

class TraceSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "saturate-trace-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (fs::path(dir_) / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

// A real trace: the helper's own Tracer (python/saturate/_trace.py) profiling a small MLP's training steps on the
// CPU with Debian's torch, exactly as a probe's full stage does.
TEST_F(TraceSummaryTest, ARealCpuTraceFromTheHelpersTracer) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "needs torch";
  const std::string trace = (fs::path(dir_) / "trace.json").string();
  const std::string script = Write("make_trace.py", R"(
import sys, torch
sys.path.insert(0, sys.argv[1])
from saturate._trace import Tracer
sent = []
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
tracer = Tracer(torch, sys.argv[2], sent.append)
tracer.start()
while not tracer.finished:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    tracer.step()
assert sent and sent[0]["path"] == sys.argv[2] and sent[0]["steps"] == 3, sent
)");
  const std::string cmd = "/usr/bin/python3 " + script + " " + SATURATE_SOURCE_DIR "/python " + trace;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  Result<TraceSummary> s = SummarizeTrace(trace);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->steps, 3);
  EXPECT_GT(s->step_us, 0);
  EXPECT_FALSE(s->gpu);
  ASSERT_FALSE(s->top.empty());
  // torch's operators rank among the top (first on a quiet machine; under load the Python of Optimizer.step's
  // annotation can outweigh them, as a CI run showed).
  bool aten = false;
  for (const TraceTop& t : s->top) aten = aten || t.name.rfind("aten::", 0) == 0;
  EXPECT_TRUE(aten) << s->top.front().name;
  for (const TraceTop& t : s->top) {
    EXPECT_GT(t.share, 0) << t.name;
    EXPECT_LE(t.share, 1) << t.name;
    EXPECT_GT(t.count, 0) << t.name;
  }
  std::vector<std::string> lines = TraceLines(*s);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("(3 steps of "));
  EXPECT_THAT(lines[1], HasSubstr("no GPU activity"));
  EXPECT_THAT(lines[2], HasSubstr("top CPU ops (self time): "));
  EXPECT_THAT(lines[2], HasSubstr("aten::"));
  EXPECT_TRUE(TraceJson(*s)["idle_share"].is_null());
  EXPECT_EQ(TraceJson(*s)["top_kind"], "cpu_op");
}

// The shares' arithmetic on a GPU trace (this machine has no GPU, so the events are written out): two steps of
// 1 ms; kernels on two streams overlap and count once; work outside the steps is left out.
TEST_F(TraceSummaryTest, GpuSharesAreUnionsInsideTheSteps) {
  const std::string path = Write("gpu.json", R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 50, "dur": 5000},
    {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 100, "dur": 300},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 8, "ts": 300, "dur": 300},
    {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1200, "dur": 300},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 1600, "dur": 100},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset", "pid": 0, "tid": 7, "ts": 1800, "dur": 20},
    {"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 7, "ts": 2500, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
    {"ph": "i", "name": "instant", "pid": 1, "tid": 1, "ts": 5}
  ]})");
  Result<TraceSummary> s = SummarizeTrace(path);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->steps, 2);
  EXPECT_DOUBLE_EQ(s->step_us, 1000);
  EXPECT_DOUBLE_EQ(s->window_us, 2000);
  EXPECT_TRUE(s->gpu);
  EXPECT_DOUBLE_EQ(s->kernel_share, (500.0 + 300) / 2000);
  EXPECT_DOUBLE_EQ(s->memcpy_share, 100.0 / 2000);
  EXPECT_DOUBLE_EQ(s->memset_share, 20.0 / 2000);
  EXPECT_DOUBLE_EQ(s->idle_share, 1 - 920.0 / 2000);
  ASSERT_EQ(s->top.size(), 2u);
  EXPECT_EQ(s->top[0].name, "k1");
  EXPECT_EQ(s->top[0].count, 2);
  EXPECT_DOUBLE_EQ(s->top[0].share, 0.3);
  EXPECT_EQ(s->top[1].name, "k2");
  EXPECT_EQ(TraceLines(*s)[1], "  GPU: idle 54%, kernels 40%, memory copies 5%, memory sets 1%");
  EXPECT_EQ(TraceLines(*s)[2], "  top kernels: k1 30% (2×), k2 15% (1×)");
}

// A torch built without Kineto (Debian's) writes the legacy format: a bare array, no categories, the work under the
// pids "CPU functions" and "CUDA functions".
TEST_F(TraceSummaryTest, LegacyTracesWithoutCategories) {
  const std::string path = Write("legacy.json", R"json([
    {"name": "ProfilerStep#2", "ph": "X", "ts": 0, "dur": 100, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::addmm", "ph": "X", "ts": 10, "dur": 50, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "volta_sgemm_128x64_nn", "ph": "X", "ts": 20, "dur": 40, "tid": 1, "pid": "CUDA functions"},
    {"name": "Memcpy HtoD (Pageable -> Device)", "ph": "X", "ts": 70, "dur": 10, "tid": 1, "pid": "CUDA functions"}
  ])json");
  Result<TraceSummary> s = SummarizeTrace(path);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->steps, 1);
  EXPECT_TRUE(s->gpu);
  EXPECT_DOUBLE_EQ(s->kernel_share, 0.4);
  EXPECT_DOUBLE_EQ(s->memcpy_share, 0.1);
  EXPECT_DOUBLE_EQ(s->idle_share, 0.5);
  ASSERT_EQ(s->top.size(), 1u);
  EXPECT_EQ(s->top[0].name, "volta_sgemm_128x64_nn");
}

// Nested operators on one thread: aten::linear holds aten::addmm, so each is counted by its self time.
TEST_F(TraceSummaryTest, CpuOperatorsByTheirSelfTime) {
  const std::string path = Write("cpu.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#4", "pid": 1, "tid": 1, "ts": 0, "dur": 200},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 80},
    {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 120, "dur": 30},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 2, "ts": 100, "dur": 40}
  ]})");
  Result<TraceSummary> s = SummarizeTrace(path);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_FALSE(s->gpu);
  ASSERT_EQ(s->top.size(), 3u);
  EXPECT_EQ(s->top[0].name, "aten::addmm");
  EXPECT_DOUBLE_EQ(s->top[0].total_us, 120);
  EXPECT_EQ(s->top[0].count, 2);
  EXPECT_EQ(s->top[1].name, "aten::relu");
  EXPECT_DOUBLE_EQ(s->top[1].total_us, 30);
  EXPECT_EQ(s->top[2].name, "aten::linear");
  EXPECT_DOUBLE_EQ(s->top[2].total_us, 20);
}

TEST_F(TraceSummaryTest, ErrorsNameTheFileAndTheProblem) {
  EXPECT_EQ(SummarizeTrace(dir_ + "/missing.json").error().message, "cannot read the trace " + dir_ + "/missing.json");
  std::string bad = Write("bad.json", "{\"traceEvents\": [");
  EXPECT_EQ(SummarizeTrace(bad).error().message, "the trace " + bad + " is not valid JSON");
  std::string empty = Write("empty.json", "{\"other\": 1}");
  EXPECT_EQ(SummarizeTrace(empty).error().message, "the trace " + empty + " has no traceEvents");
  std::string no_steps = Write("nosteps.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": 1}]})");
  EXPECT_EQ(SummarizeTrace(no_steps).error().message,
            "the trace " + no_steps + " has no profiler steps (ProfilerStep#N)");
}

TEST_F(TraceSummaryTest, OutcomeSaysWhyThereIsNoTrace) {
  TraceOutcome never = CollectTrace("/x/trace.json", std::nullopt);
  EXPECT_FALSE(never.summary);
  EXPECT_THAT(TraceOutcomeLines(never)[0], HasSubstr("trace: none (the run ended before the profiler's steps ran"));
  measure::TraceInfo failed;
  failed.error = "cannot start torch.profiler: RuntimeError: busy";
  EXPECT_EQ(CollectTrace("/x/trace.json", failed).error, "cannot start torch.profiler: RuntimeError: busy");
  EXPECT_TRUE(TraceOutcomeJson(std::nullopt).is_null());
  EXPECT_EQ(TraceOutcomeJson(never)["path"], "/x/trace.json");
  EXPECT_TRUE(TraceOutcomeJson(never)["summary"].is_null());
  EXPECT_EQ(TracePath("out", "probe"), (fs::absolute("out") / "trace.json").lexically_normal().string());
  EXPECT_THAT(TracePath("", "tune"), HasSubstr("saturate-tune-trace-"));
}

}  // namespace
}  // namespace sat::core
