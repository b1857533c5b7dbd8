#include "telemetry/proc_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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
  EXPECT_EQ(io->rchar, 10u);
  EXPECT_EQ(ParsePidIo("rchar: 10\n"), std::nullopt);
  // A kernel without the rchar line: storage bytes still count, rchar reads 0.
  EXPECT_EQ(ParsePidIo("read_bytes: 1\nwrite_bytes: 2\n")->rchar, 0u);
}

TEST(ComputeTreeSample, CountsProcessesWaitingInTheKernelAndAllBytesRead) {
  TreeCounters prev;
  prev.root = 1;
  prev.uptime_s = 10.0;
  prev.procs = {Proc(1, 0, 500, PidIo{0, 0, 1000}), Proc(2, 0, 100, PidIo{0, 0, 0}), Proc(3, 0, 100)};
  TreeCounters cur = prev;
  cur.uptime_s = 12.0;
  cur.procs[0].state = 'S';
  cur.procs[1].state = 'D';  // a worker waiting for a read from a FUSE or NFS file
  cur.procs[2].state = 'D';
  cur.procs[0].io = PidIo{0, 0, 5000};     // +4000 from the page cache: no storage bytes
  cur.procs[1].io = PidIo{4096, 0, 6000};  // +6000, 4096 of them from the disk
  ProcTreeSample s = ComputeTreeSample(&prev, cur, 2.0, kTicksPerS);
  EXPECT_EQ(s.blocked_count, 2u);
  EXPECT_DOUBLE_EQ(*s.rchar_per_s, 5000.0);
  EXPECT_DOUBLE_EQ(*s.read_bytes_per_s, 2048.0);
  // The first reading has no rates, but the states are of that instant.
  ProcTreeSample first = ComputeTreeSample(nullptr, cur, 0, kTicksPerS);
  EXPECT_EQ(first.blocked_count, 2u);
  EXPECT_FALSE(first.rchar_per_s.has_value());
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
  // Of them in the kernel (stime): 100 +30, 101 +20, 103 +10, 104 all of its 10; 70 ticks in 2 s.
  EXPECT_DOUBLE_EQ(*s.sys_cpu_pct, 35.0);
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

// A /proc tree written at run time: each process a stat line and a cmdline (argv words ending in '\0').
class WorkerTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(testing::TempDir()) / ("proc_workers_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    std::ofstream(root_ / "uptime") << "1000.00 900.00\n";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void Add(pid_t pid, pid_t ppid, const std::vector<std::string>& argv) {
    std::filesystem::path dir = root_ / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "stat") << pid << " (x) S " << ppid << " " << pid << " " << pid
                                << " 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 5000 1000 100 0\n";
    std::string cmdline;
    for (const std::string& word : argv) cmdline += word + '\0';
    std::ofstream(dir / "cmdline", std::ios::binary) << cmdline;
  }
  unsigned Workers(pid_t root) {
    ProcTreeReader reader(root_.string());
    return ComputeTreeSample(nullptr, reader.Read(root), 0, kTicksPerS).worker_count;
  }

  std::filesystem::path root_;
};

const std::vector<std::string> kTrainer = {"/usr/bin/python3", "train.py", "--workers", "2"};

TEST_F(WorkerTree, CountsForkedPythonWorkersNotTheTrainer) {
  Add(300, 1, kTrainer);
  Add(301, 300, kTrainer);
  Add(302, 300, kTrainer);
  EXPECT_EQ(Workers(300), 2u);
}

TEST_F(WorkerTree, AShellWrapperIsNotAWorker) {
  // sh -c 'python3 train.py', and a subshell the shell forked (a copy of sh, not of Python).
  const std::vector<std::string> shell = {"/bin/sh", "-c", "python3 train.py --workers 2"};
  Add(400, 1, shell);
  Add(401, 400, kTrainer);
  Add(402, 401, kTrainer);
  Add(403, 401, kTrainer);
  Add(404, 400, shell);
  ProcTreeReader reader(root_.string());
  ProcTreeSample s = ComputeTreeSample(nullptr, reader.Read(400), 0, kTicksPerS);
  EXPECT_EQ(s.process_count, 5u);
  EXPECT_EQ(s.worker_count, 2u) << "the old reading, processes - 1, said 4";
}

TEST_F(WorkerTree, UnderTorchrunEachTrainersWorkersCountAndTheHelpersOfMultiprocessingDoNot) {
  Add(500, 1, {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc-per-node", "2", "train.py"});
  for (pid_t trainer : {501, 504}) {
    Add(trainer, 500, {"/usr/bin/python3.11", "-u", "train.py"});
    Add(trainer + 1, trainer, {"/usr/bin/python3.11", "-u", "train.py"});
    Add(trainer + 2, trainer, {"/usr/bin/python3.11", "-u", "train.py"});
  }
  Add(510, 501, {"/usr/bin/python3.11", "-c", "from multiprocessing.resource_tracker import main;main(7)"});
  EXPECT_EQ(Workers(500), 4u);
}

TEST_F(WorkerTree, ForkserverWorkersCount) {
  const std::vector<std::string> server = {"python3", "-c", "from multiprocessing.forkserver import main; main(9)"};
  Add(600, 1, kTrainer);
  Add(601, 600, server);
  Add(602, 601, server);
  Add(603, 601, server);
  EXPECT_EQ(Workers(600), 2u);
}

TEST(CountForkedWorkers, NeedsAReadableCommandLineAndAParentInTheTree) {
  auto proc = [](pid_t pid, pid_t ppid, std::string cmdline) {
    ProcCounters p;
    p.pid = pid;
    p.ppid = ppid;
    p.cmdline = std::move(cmdline);
    return p;
  };
  const std::string py = std::string("python\0t.py\0", 12);
  EXPECT_EQ(CountForkedWorkers({proc(1, 0, py), proc(2, 1, py)}), 1u);
  EXPECT_EQ(CountForkedWorkers({proc(1, 0, ""), proc(2, 1, "")}), 0u) << "unreadable command lines";
  EXPECT_EQ(CountForkedWorkers({proc(2, 1, py), proc(3, 1, py)}), 0u) << "their parent is not in the tree";
  const std::string pypy = std::string("pypy3\0t.py\0", 11);
  EXPECT_EQ(CountForkedWorkers({proc(1, 0, pypy), proc(2, 1, pypy)}), 1u);

  // Ranks a launcher forked (start_method="fork") train: with their own forked loader worker, one worker counts.
  const std::vector<ProcCounters> fork_ranks = {proc(1, 0, py), proc(2, 1, py), proc(3, 1, py), proc(4, 2, py)};
  EXPECT_EQ(CountForkedWorkers(fork_ranks), 3u) << "without knowing who trains, ranks look like workers";
  EXPECT_EQ(CountForkedWorkers(fork_ranks, {2, 3}), 1u);
}

}  // namespace
}  // namespace sat::telemetry
