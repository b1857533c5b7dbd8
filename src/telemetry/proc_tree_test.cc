#include "telemetry/proc_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace sat::telemetry {
namespace {

const std::string kFixtures = std::string(SATURATE_SOURCE_DIR) + "/tests/fixtures";
constexpr long kTicksPerS = 100;

TreeCounters ReadFixture(const std::string& proc, pid_t root) {
  ProcTreeReader reader(kFixtures + "/" + proc);
  return reader.Read(root);
}

uint64_t Pages(uint64_t n) { return n * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)); }

ProcCounters Proc(pid_t pid, uint64_t start_ticks, uint64_t cpu_ticks, std::optional<PidIo> io = std::nullopt) {
  ProcCounters p;
  p.pid = pid;
  p.start_ticks = start_ticks;
  p.cpu_ticks = cpu_ticks;
  p.threads = 1;
  p.io = io;
  return p;
}

TEST(ParsePidStat, TakesTheCommandNameUpToTheLastParenthesis) {
  std::optional<PidStat> s = ParsePidStat(
      "101 (worker ) (x y) S 100 101 102 0 -1 4194560 1200 0 3 0 380 70 0 0 20 -5 4 0 60000 987654321 10000 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->pid, 101);
  EXPECT_EQ(s->comm, "worker ) (x y");
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->ppid, 100);
  EXPECT_EQ(s->pgid, 101);
  EXPECT_EQ(s->sid, 102);
  EXPECT_EQ(s->utime_ticks, 380u);
  EXPECT_EQ(s->stime_ticks, 70u);
  EXPECT_EQ(s->num_threads, 4u);
  EXPECT_EQ(s->start_ticks, 60000u);
  EXPECT_EQ(s->rss_pages, 10000u);
}

TEST(ParsePidStat, RejectsTruncatedOrMalformedText) {
  EXPECT_EQ(ParsePidStat("101 (x) S 100 101 101 0 -1 4194560 1200 0 3 0 380 70"), std::nullopt);
  EXPECT_EQ(ParsePidStat("101 x S 100"), std::nullopt);
  EXPECT_EQ(ParsePidStat(""), std::nullopt);
}

TEST(ParsePidIo, ReadsStorageBytes) {
  std::optional<PidIo> io = ParsePidIo("rchar: 10\nwchar: 20\nread_bytes: 4096\nwrite_bytes: 8192\n");
  ASSERT_TRUE(io.has_value());
  EXPECT_EQ(io->read_bytes, 4096u);
  EXPECT_EQ(io->write_bytes, 8192u);
  EXPECT_EQ(ParsePidIo("rchar: 10\n"), std::nullopt);
}

TEST(ProcTreeReader, FindsDescendantsAndLeavesOthersOut) {
  TreeCounters a = ReadFixture("proc-a", 100);
  EXPECT_EQ(a.root, 100);
  EXPECT_EQ(a.uptime_s, 1000.0);
  std::vector<pid_t> pids;
  for (const ProcCounters& p : a.procs) pids.push_back(p.pid);
  EXPECT_EQ(pids, (std::vector<pid_t>{100, 101, 102, 103}));
  EXPECT_EQ(a.procs[0].cpu_ticks, 1200u);
  EXPECT_EQ(a.procs[1].ppid, 100);
  EXPECT_EQ(a.procs[3].ppid, 101);
  EXPECT_FALSE(a.procs[3].io.has_value());  // 103 has no readable io file
  EXPECT_EQ(a.procs[0].io->read_bytes, 1000000u);
}

TEST(ComputeTreeSample, FirstReadingHasCountsAndMemoryButNoRates) {
  ProcTreeSample s = ComputeTreeSample(nullptr, ReadFixture("proc-a", 100), 0, kTicksPerS);
  EXPECT_TRUE(s.alive);
  EXPECT_EQ(s.pids, (std::vector<pid_t>{100, 101, 102, 103}));
  EXPECT_EQ(s.process_count, 4u);
  EXPECT_EQ(s.thread_count, 12u + 4 + 1 + 2);
  EXPECT_EQ(s.rss_bytes, Pages(25600 + 10240 + 512 + 2000));
  EXPECT_FALSE(s.cpu_pct.has_value());
  EXPECT_FALSE(s.read_bytes_per_s.has_value());
  EXPECT_FALSE(s.gpu_memory_bytes.has_value());
}

// Between proc-a and proc-b (2 s): 102 exited, 104 started (at 1001.00 s after boot), 107 became a zombie, and
// 103's io file cannot be read.
TEST(ComputeTreeSample, RatesBetweenTheFixtureReadings) {
  TreeCounters a = ReadFixture("proc-a", 100);
  TreeCounters b = ReadFixture("proc-b", 100);
  ProcTreeSample s = ComputeTreeSample(&a, b, 2.0, kTicksPerS);
  EXPECT_TRUE(s.alive);
  EXPECT_EQ(s.root, 100);
  EXPECT_EQ(s.pids, (std::vector<pid_t>{100, 101, 103, 104}));
  EXPECT_EQ(s.process_count, 4u);
  EXPECT_EQ(s.thread_count, 12u + 4 + 2 + 1);
  EXPECT_EQ(s.rss_bytes, Pages(30000 + 10000 + 2000 + 500));
  // Ticks: 100 +150, 101 +100, 103 +50, 104 all of its 40; 340 ticks in 2 s at 100 ticks/s.
  EXPECT_DOUBLE_EQ(*s.cpu_pct, 170.0);
  // Bytes read: 100 +4,000,000, 101 +2,000,000, 104 100,000; written: 100 +1,000,000, 104 200,000.
  EXPECT_DOUBLE_EQ(*s.read_bytes_per_s, 3050000.0);
  EXPECT_DOUBLE_EQ(*s.write_bytes_per_s, 600000.0);
}

TEST(ComputeTreeSample, ATreeWithNoProcessLeftIsNotAlive) {
  TreeCounters a = ReadFixture("proc-a", 999);
  TreeCounters b = ReadFixture("proc-b", 999);
  ProcTreeSample s = ComputeTreeSample(&a, b, 2.0, kTicksPerS);
  EXPECT_FALSE(s.alive);
  EXPECT_TRUE(s.pids.empty());
  EXPECT_EQ(s.process_count, 0u);
  EXPECT_FALSE(s.cpu_pct.has_value());
  EXPECT_FALSE(s.rss_bytes.has_value());
}

TEST(ComputeTreeSample, AZombieRootAloneIsNotAlive) {
  ProcTreeSample s = ComputeTreeSample(nullptr, ReadFixture("proc-b", 107), 0, kTicksPerS);
  EXPECT_FALSE(s.alive);
}

TEST(ComputeTreeSample, CountsOnlyTimeKnownToFallInTheInterval) {
  TreeCounters prev;
  prev.root = 1;
  prev.uptime_s = 10.0;  // 1000 ticks after boot
  prev.procs = {Proc(1, 0, 500, PidIo{100, 0}), Proc(5, 200, 70)};
  TreeCounters cur;
  cur.root = 1;
  cur.uptime_s = 11.0;
  cur.procs = {Proc(1, 0, 550, PidIo{300, 0}),  // +50 ticks, +200 bytes
               Proc(5, 1020, 8),                // pid 5 reused by a process started within the interval: all 8
               Proc(6, 1000, 4, PidIo{50, 0}),  // started exactly at the previous reading: all 4 and 50 bytes
               Proc(7, 900, 60)};               // older than the previous reading but new to the tree: nothing
  ProcTreeSample s = ComputeTreeSample(&prev, cur, 1.0, kTicksPerS);
  EXPECT_DOUBLE_EQ(*s.cpu_pct, 62.0);
  EXPECT_DOUBLE_EQ(*s.read_bytes_per_s, 250.0);

  // Without an uptime no process can be shown to be new.
  prev.uptime_s.reset();
  EXPECT_DOUBLE_EQ(*ComputeTreeSample(&prev, cur, 1.0, kTicksPerS).cpu_pct, 50.0);
}

TEST(ComputeTreeSample, NoRatesAcrossADifferentRootOrWithoutReadableIo) {
  TreeCounters prev;
  prev.root = 1;
  prev.uptime_s = 10.0;
  prev.procs = {Proc(1, 0, 500)};
  TreeCounters cur = prev;
  cur.procs[0].cpu_ticks = 600;
  ProcTreeSample same = ComputeTreeSample(&prev, cur, 1.0, kTicksPerS);
  EXPECT_DOUBLE_EQ(*same.cpu_pct, 100.0);
  EXPECT_FALSE(same.read_bytes_per_s.has_value());
  EXPECT_FALSE(same.write_bytes_per_s.has_value());

  prev.root = 2;
  EXPECT_FALSE(ComputeTreeSample(&prev, cur, 1.0, kTicksPerS).cpu_pct.has_value());
}

TEST(TreeMembers, FollowsParentsAndKeepsOrphansOfFormerMembers) {
  std::vector<std::pair<pid_t, pid_t>> live = {{300, 1}, {102, 101}, {100, 1}, {101, 100}, {301, 300}};
  EXPECT_EQ(TreeMembers(100, live, {}), (std::vector<pid_t>{100, 101, 102}));

  // The root died; its child was re-parented to init and had a child of its own.
  live = {{300, 1}, {102, 101}, {101, 1}, {103, 102}};
  EXPECT_EQ(TreeMembers(100, live, {100, 101, 102}), (std::vector<pid_t>{101, 102, 103}));
  EXPECT_EQ(TreeMembers(100, live, {}), (std::vector<pid_t>{}));
  // The root comes first even when it has the highest pid.
  EXPECT_EQ(TreeMembers(300, {{300, 1}, {5, 300}}, {}), (std::vector<pid_t>{300, 5}));
}

TEST(TreeGpuMemory, SumsTheTreesEntriesAcrossGpus) {
  std::vector<GpuSample> gpus(2);
  gpus[0].processes = {{100, 1000}, {555, 7}};
  gpus[1].processes = {{101, 24}, {100, 1}};
  EXPECT_EQ(TreeGpuMemory({100, 101}, gpus), 1025u);
  EXPECT_EQ(TreeGpuMemory({42}, gpus), 0u);
  EXPECT_EQ(TreeGpuMemory({100}, {}), std::nullopt);

  gpus[0].processes = {{100, std::nullopt}};
  gpus[1].processes = {};
  EXPECT_EQ(TreeGpuMemory({100}, gpus), std::nullopt);
}

TEST(ProcTreeReader, ReadsThisProcessFromTheRealProc) {
  ProcTreeReader reader("/proc");
  TreeCounters t = reader.Read(::getpid());
  ASSERT_FALSE(t.procs.empty());
  EXPECT_TRUE(t.uptime_s.has_value());
  const ProcCounters* self = nullptr;
  for (const ProcCounters& p : t.procs) {
    if (p.pid == ::getpid()) self = &p;
  }
  ASSERT_NE(self, nullptr);
  EXPECT_GE(self->threads, 1u);
  EXPECT_GT(self->rss_bytes, 0u);
  EXPECT_EQ(self->ppid, ::getppid());
}

}  // namespace
}  // namespace sat::telemetry
