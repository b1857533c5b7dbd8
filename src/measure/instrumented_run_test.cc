#include "measure/instrumented_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "telemetry/sampler.h"

namespace sat::measure {
namespace {

// A command that reports as the helper does: a datagram to $SATURATE_CHANNEL tagged with $SATURATE_RUN_ID, and,
// first, one tagged with another run's id (a neighbour on a shared channel).
constexpr const char* kReporter = R"(
import json, os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
ch, run = os.environ["SATURATE_CHANNEL"], os.environ["SATURATE_RUN_ID"]
def send(run, **kw):
    s.sendto(json.dumps(dict(v=1, run=run, pid=os.getpid(), t=1.0, **kw)).encode(), ch)
send("a-neighbour", type="hello", mode="train", auto=True, torch="2.1.0")
send(run, type="hello", mode="train", auto=True, torch=None)
send(run, type="progress", steps=3, samples=48.0, wait_s=0.1, step_s=0.2)
)";

// Drains until the command has ended and `want` messages of the run came, or 10 s pass.
std::vector<HelperMessage> DrainAll(InstrumentedRun& run, size_t want) {
  std::vector<HelperMessage> got;
  const double until = telemetry::MonotonicSeconds() + 10;
  while (telemetry::MonotonicSeconds() < until && (got.size() < want || !run.process().Poll())) {
    EXPECT_TRUE(run.Drain(50, [&](const HelperMessage& m) { got.push_back(m); }));
  }
  return got;
}

TEST(InstrumentedRun, HandsOnOnlyItsOwnRunsMessagesAndReadsTheSigns) {
  InstrumentedLaunch launch;
  launch.spec.argv = {"python3", "-c", kReporter};
  // The contract wins over a value the caller's environment carried.
  launch.spec.env["SATURATE_RUN_ID"] = "stale";
  auto run = InstrumentedRun::Start(std::move(launch), "run-1");
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_FALSE((*run)->signs().helper_seen);
  const std::vector<HelperMessage> got = DrainAll(**run, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].type, MessageType::kHello);
  EXPECT_EQ(got[1].type, MessageType::kProgress);
  for (const HelperMessage& m : got) EXPECT_EQ(m.run, "run-1");
  EXPECT_TRUE((*run)->signs().helper_seen);
  EXPECT_TRUE((*run)->signs().auto_seen);
  EXPECT_FALSE((*run)->signs().torch_loaded.has_value()) << "only the neighbour's hello named torch";
  EXPECT_EQ((*run)->process().Wait().exit_class, run::ExitClass::kFinished);
}

TEST(InstrumentedRun, OnASharedChannelTheCallerPollsAndAcceptSorts) {
  auto shared = HelperChannel::Open();
  ASSERT_TRUE(shared) << shared.error().message;
  InstrumentedLaunch launch;
  launch.spec.argv = {"python3", "-c", kReporter};
  auto run = InstrumentedRun::Start(std::move(launch), "run-2", shared->get());
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ((*run)->channel_path(), (*shared)->path());
  EXPECT_FALSE((*run)->Drain(0, {})) << "a shared channel is its owner's to poll";
  (void)(*run)->process().Wait();
  auto messages = (*shared)->Poll(2000);
  ASSERT_TRUE(messages) << messages.error().message;
  ASSERT_EQ(messages->size(), 3u);
  EXPECT_FALSE((*run)->Accept((*messages)[0]));
  EXPECT_FALSE((*run)->signs().torch_loaded.has_value()) << "another run's hello changes nothing";
  EXPECT_TRUE((*run)->Accept((*messages)[1]));
  EXPECT_TRUE((*run)->signs().auto_seen);
}

TEST(InstrumentedRun, KeepsTheHelpersFailureNoticeAndTheCallersLineHookStillSeesEveryLine) {
  InstrumentedLaunch launch;
  launch.spec.argv = {"sh", "-c",
                      "echo 'saturate: automatic instrumentation is off (boom)' >&2; echo out; "
                      "echo 'saturate: automatic instrumentation is off (second)' >&2"};
  auto lines = std::make_shared<LineHandoff<std::string>>();
  launch.spec.on_line = [lines](run::Stream, std::string_view line) { lines->Push(std::string(line)); };
  auto run = InstrumentedRun::Start(std::move(launch), "run-3");
  ASSERT_TRUE(run) << run.error().message;
  (void)(*run)->process().Wait();
  EXPECT_EQ((*run)->auto_failure(), "saturate: automatic instrumentation is off (boom)");
  EXPECT_EQ(lines->Take().size(), 3u);
  EXPECT_TRUE(lines->Take().empty());
}

TEST(InstrumentedRun, LooksForTorchInTheTreesMemoryMaps) {
  const std::filesystem::path root =
      std::filesystem::path(testing::TempDir()) / ("instrumented_run_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "11");
  std::filesystem::create_directories(root / "12");
  std::ofstream(root / "11" / "maps") << "7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n";
  std::ofstream(root / "12" / "maps") << "7f00-7f01 r-xp 0 08:01 1 /usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so\n";
  InstrumentedLaunch launch;
  launch.spec.argv = {"true"};
  auto run = InstrumentedRun::Start(std::move(launch), "run-4");
  ASSERT_TRUE(run) << run.error().message;
  (*run)->LookForTorch({13}, root.string());
  EXPECT_FALSE((*run)->signs().torch_loaded.has_value()) << "a process whose map cannot be read says nothing";
  (*run)->LookForTorch({11}, root.string());
  EXPECT_EQ((*run)->signs().torch_loaded, false);
  (*run)->LookForTorch({11, 12}, root.string());
  EXPECT_EQ((*run)->signs().torch_loaded, true);
  (*run)->LookForTorch({11}, root.string());
  EXPECT_EQ((*run)->signs().torch_loaded, true) << "once loaded, it stays loaded";
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace sat::measure
