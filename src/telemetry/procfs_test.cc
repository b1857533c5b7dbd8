#include "telemetry/procfs.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "telemetry/mount_table.h"
#include "telemetry/proc_tree.h"
#include "util/test_mutations.h"

namespace sat::telemetry {
namespace {

const std::string kFixtures = std::string(SATURATE_SOURCE_DIR) + "/tests/fixtures";

HostCounters ReadFixture(const std::string& proc, const std::string& sys = kFixtures + "/sys") {
  HostReader reader(ProcRoots{kFixtures + "/" + proc, sys});
  return reader.Read();
}

std::vector<std::string> DiskNames(const HostCounters& c) {
  std::vector<std::string> names;
  for (const DiskCounters& d : c.disks) names.push_back(d.name);
  return names;
}

TEST(FileReader, ReadsFilesLargerThanItsFirstBufferAndReportsMissingOnes) {
  char path[] = "/tmp/procfs_test_XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::string content(10000, 'x');
  content.back() = 'y';
  std::ofstream(path) << content;

  FileReader reader;
  std::optional<std::string_view> text = reader.Read(path);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, content);
  EXPECT_EQ(reader.Read(std::string(path) + ".missing"), std::nullopt);
  ::unlink(path);
}

TEST(FieldScanning, SplitsLinesAndFieldsAndRejectsNonNumbers) {
  std::string_view text = "a  b\tc\nlast";
  std::string_view line;
  ASSERT_TRUE(NextLine(&text, &line));
  EXPECT_EQ(NextField(&line), "a");
  EXPECT_EQ(NextField(&line), "b");
  EXPECT_EQ(NextField(&line), "c");
  EXPECT_EQ(NextField(&line), "");
  ASSERT_TRUE(NextLine(&text, &line));
  EXPECT_EQ(line, "last");
  EXPECT_FALSE(NextLine(&text, &line));

  EXPECT_EQ(ParseU64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseU64("-1"), std::nullopt);
  EXPECT_EQ(ParseU64("12kB"), std::nullopt);
  EXPECT_EQ(ParseU64(""), std::nullopt);
  EXPECT_EQ(ParseF64("0.75"), 0.75);
  EXPECT_EQ(CounterDelta(5, 7), 0u);
}

TEST(ParseCpuStat, KeepsOfflineCoresAsGapsAndAcceptsShortLines) {
  std::optional<CpuCounters> c = ParseCpuStat(
      "cpu  10 0 10 80 0 0 0 0 0 0\n"
      "cpu0 5 0 5 40\n"
      "cpu2 5 0 5 40 0 0 0 0 0 0\n"
      "intr 1 2 3\n");
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->cores.size(), 3u);
  EXPECT_TRUE(c->cores[0].has_value());
  EXPECT_FALSE(c->cores[1].has_value());
  EXPECT_EQ(c->cores[2]->idle, 40u);
  EXPECT_EQ(c->cores[0]->iowait, 0u);
  EXPECT_EQ(ParseCpuStat("intr 1 2 3\n"), std::nullopt);
}

TEST(ParseNetDev, SkipsHeadersAndLoopbackAndReadsCountersTouchingTheColon) {
  std::vector<NetCounters> nets = ParseNetDev(
      "Inter-|   Receive |  Transmit\n"
      " face |bytes packets|bytes packets\n"
      "    lo: 5 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n"
      "  eth0:123456789012 1 0 0 0 0 0 0 77 1 0 0 0 0 0 0\n");
  ASSERT_EQ(nets.size(), 1u);
  EXPECT_EQ(nets[0].name, "eth0");
  EXPECT_EQ(nets[0].rx_bytes, 123456789012u);
  EXPECT_EQ(nets[0].tx_bytes, 77u);
}

TEST(ClassifyDiskByName, TellsWholeDisksFromPartitionsAndVirtualDevices) {
  for (const char* name : {"sda", "vdb", "xvda", "nvme0n1", "mmcblk0", "sr0", "nbd3"}) {
    EXPECT_EQ(ClassifyDiskByName(name), DiskKind::kWhole) << name;
  }
  for (const char* name : {"sda1", "vdb12", "xvda1", "hdc3", "nvme0n1p2", "mmcblk0p1", "nbd3p1"}) {
    EXPECT_EQ(ClassifyDiskByName(name), DiskKind::kPartition) << name;
  }
  for (const char* name : {"loop0", "ram1", "zram0", "dm-0", "md127"}) {
    EXPECT_EQ(ClassifyDiskByName(name), DiskKind::kVirtual) << name;
  }
}

TEST(HostReader, KeepsWholeDevicesAsSysBlockShowsThem) {
  // sda1 and nvme0n1p1 have no /sys/block entry; dm-0 is stacked on nvme0n1p1; loop, ram and zram are virtual.
  EXPECT_EQ(DiskNames(ReadFixture("proc-a")), (std::vector<std::string>{"sda", "nvme0n1"}));
}

TEST(HostReader, FallsBackToTheNameRuleWithoutSys) {
  EXPECT_EQ(DiskNames(ReadFixture("proc-a", kFixtures + "/no-such-sys")), (std::vector<std::string>{"sda", "nvme0n1"}));
}

TEST(HostReader, MissingFilesLeaveFieldsEmpty) {
  HostCounters c = ReadFixture("no-such-proc");
  EXPECT_FALSE(c.cpu.has_value());
  EXPECT_FALSE(c.load.has_value());
  EXPECT_FALSE(c.mem.total_bytes.has_value());
  EXPECT_TRUE(c.disks.empty());
  EXPECT_TRUE(c.nets.empty());
}

TEST(ComputeHostSample, FirstReadingHasLevelsButNoRates) {
  HostSample s = ComputeHostSample(nullptr, ReadFixture("proc-a"), 0);
  EXPECT_EQ(s.cpu_count, 2u);
  EXPECT_EQ(s.core_util_pct, (std::vector<std::optional<double>>{std::nullopt, std::nullopt}));
  EXPECT_FALSE(s.cpu_util_pct.has_value());
  EXPECT_FALSE(s.cpu_iowait_pct.has_value());
  EXPECT_EQ(s.load1, 1.0);
  EXPECT_EQ(s.mem_used_bytes, (16384000ull - 9000000ull) * 1024);
  EXPECT_EQ(s.swap_used_bytes, 0u);
  EXPECT_TRUE(s.disks.empty());
  EXPECT_TRUE(s.nets.empty());
  EXPECT_FALSE(s.disk_read_bytes_per_s.has_value());
  EXPECT_FALSE(s.disk_busy_pct.has_value());
  EXPECT_FALSE(s.net_rx_bytes_per_s.has_value());
}

// proc-a and proc-b are two readings 2 s apart; the expected numbers are worked out in the comments.
TEST(ComputeHostSample, RatesBetweenTheFixtureReadings) {
  HostCounters a = ReadFixture("proc-a");
  HostCounters b = ReadFixture("proc-b");
  HostSample s = ComputeHostSample(&a, b, 2.0);

  // All cores: 400 ticks, 190 idle + 30 iowait. cpu0: 200 ticks, 40 + 10; cpu1: 200 ticks, 150 + 20.
  EXPECT_DOUBLE_EQ(*s.cpu_util_pct, 45.0);
  EXPECT_DOUBLE_EQ(*s.cpu_iowait_pct, 7.5);
  ASSERT_EQ(s.core_util_pct.size(), 2u);
  EXPECT_DOUBLE_EQ(*s.core_util_pct[0], 75.0);
  EXPECT_DOUBLE_EQ(*s.core_util_pct[1], 15.0);

  EXPECT_EQ(s.load1, 1.5);
  EXPECT_EQ(s.load5, 0.75);
  EXPECT_EQ(s.load15, 0.25);
  EXPECT_EQ(s.mem_total_bytes, 16384000ull * 1024);
  EXPECT_EQ(s.mem_available_bytes, 8192000ull * 1024);
  EXPECT_EQ(s.mem_used_bytes, 8192000ull * 1024);
  EXPECT_EQ(s.swap_total_bytes, 2097152ull * 1024);
  EXPECT_EQ(s.swap_used_bytes, 1048576ull * 1024);

  // sda: +4096 sectors read, +2048 written, +400 reads, +100 writes, +500 ms busy.
  // nvme0n1: +8192 sectors read, +200 reads, +1500 ms busy.
  ASSERT_EQ(s.disks.size(), 2u);
  EXPECT_EQ(s.disks[0].name, "sda");
  EXPECT_DOUBLE_EQ(s.disks[0].read_bytes_per_s, 1048576);
  EXPECT_DOUBLE_EQ(s.disks[0].write_bytes_per_s, 524288);
  EXPECT_DOUBLE_EQ(s.disks[0].read_iops, 200);
  EXPECT_DOUBLE_EQ(s.disks[0].write_iops, 50);
  EXPECT_DOUBLE_EQ(s.disks[0].busy_pct, 25);
  EXPECT_EQ(s.disks[1].name, "nvme0n1");
  EXPECT_DOUBLE_EQ(s.disks[1].read_bytes_per_s, 2097152);
  EXPECT_DOUBLE_EQ(s.disks[1].write_bytes_per_s, 0);
  EXPECT_DOUBLE_EQ(s.disks[1].read_iops, 100);
  EXPECT_DOUBLE_EQ(s.disks[1].busy_pct, 75);
  EXPECT_DOUBLE_EQ(*s.disk_read_bytes_per_s, 3145728);
  EXPECT_DOUBLE_EQ(*s.disk_write_bytes_per_s, 524288);
  EXPECT_DOUBLE_EQ(*s.disk_read_iops, 300);
  EXPECT_DOUBLE_EQ(*s.disk_write_iops, 50);
  EXPECT_DOUBLE_EQ(*s.disk_busy_pct, 75);

  // eth0: +2,000,000 received, +500,000 sent; ib0: +4,000,000 received. Loopback is left out.
  ASSERT_EQ(s.nets.size(), 2u);
  EXPECT_EQ(s.nets[0].name, "eth0");
  EXPECT_DOUBLE_EQ(s.nets[0].rx_bytes_per_s, 1000000);
  EXPECT_DOUBLE_EQ(s.nets[0].tx_bytes_per_s, 250000);
  EXPECT_EQ(s.nets[1].name, "ib0");
  EXPECT_DOUBLE_EQ(s.nets[1].rx_bytes_per_s, 2000000);
  EXPECT_DOUBLE_EQ(s.nets[1].tx_bytes_per_s, 0);
  EXPECT_DOUBLE_EQ(*s.net_rx_bytes_per_s, 3000000);
  EXPECT_DOUBLE_EQ(*s.net_tx_bytes_per_s, 250000);
}

TEST(ComputeHostSample, CountersThatWentBackwardsAreNotRates) {
  HostCounters a, b;
  a.cpu = CpuCounters{CpuTimes{100, 0, 0, 100, 50, 0, 0, 0}, {}};
  b.cpu = CpuCounters{CpuTimes{200, 0, 0, 200, 40, 0, 0, 0}, {}};  // iowait fell by 10: counts as 0
  a.disks = {DiskCounters{"sda", 10, 10, 100, 100, 50}};
  b.disks = {DiskCounters{"sda", 5, 12, 120, 120, 60}};  // reads fell: the device was reset
  a.nets = {NetCounters{"eth0", 1000, 1000}, NetCounters{"eth1", 0, 0}};
  b.nets = {NetCounters{"eth0", 10, 10}, NetCounters{"eth1", 10, 20}, NetCounters{"eth2", 5, 5}};
  HostSample s = ComputeHostSample(&a, b, 1.0);
  EXPECT_DOUBLE_EQ(*s.cpu_util_pct, 50.0);
  EXPECT_DOUBLE_EQ(*s.cpu_iowait_pct, 0.0);
  EXPECT_TRUE(s.disks.empty());
  EXPECT_FALSE(s.disk_busy_pct.has_value());
  ASSERT_EQ(s.nets.size(), 1u);  // eth0 was re-created, eth2 is new
  EXPECT_EQ(s.nets[0].name, "eth1");
  EXPECT_DOUBLE_EQ(*s.net_tx_bytes_per_s, 20);
}

TEST(ComputeHostSample, BusyIsCappedAtOneHundredPercent) {
  HostCounters a, b;
  a.disks = {DiskCounters{"sda", 0, 0, 0, 0, 0}};
  b.disks = {DiskCounters{"sda", 0, 0, 0, 0, 1010}};
  EXPECT_DOUBLE_EQ(*ComputeHostSample(&a, b, 1.0).disk_busy_pct, 100);
}

TEST(HostReader, ReadsTheRealHost) {
  HostReader reader{ProcRoots{}};
  HostCounters a = reader.Read();
  ASSERT_TRUE(a.cpu.has_value());
  EXPECT_GE(a.cpu->cores.size(), 1u);
  EXPECT_TRUE(a.mem.total_bytes.has_value());
  EXPECT_TRUE(a.load.has_value());
  for (const DiskCounters& d : a.disks) EXPECT_NE(ClassifyDiskByName(d.name), DiskKind::kVirtual) << d.name;
  for (const NetCounters& n : a.nets) EXPECT_NE(n.name, "lo");
}

// Without libFuzzer the same bad /proc text as fuzz/procfs meets the parsers here.
TEST(ProcFs, SeededRandomFiles) {
  for (const std::string& t : SeededMutations(SATURATE_SOURCE_DIR "/fuzz/corpus/procfs", 5000, 19)) {
    (void)ParseCpuStat(t);
    (void)ParseLoadAvg(t);
    (void)ParseMemInfo(t);
    (void)ParseDiskStats(t);
    (void)ParseNetDev(t);
    (void)ParsePidStat(t);
    (void)ParsePidIo(t);
    (void)ParseUptime(t);
    (void)ParseMountTable(t);
  }
}

}  // namespace
}  // namespace sat::telemetry
