#include "monitor/csv_writer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "monitor/test_samples.h"

namespace sat::monitor {
namespace {

// The fields of the real H200 capture, in the order it lists them.
constexpr const char* kCaptureFields =
    "timestamp,index,name,pci.bus_id,driver_version,pstate,pcie.link.gen.current,pcie.link.width.current,"
    "temperature.gpu,utilization.gpu,utilization.memory,memory.total,memory.used,memory.free,power.draw,"
    "power.limit,clocks.current.sm,clocks.current.memory,fan.speed";

// What nvidia-smi 580.173.02 printed for these fields on that idle H200 (cells copied from the
// capture, which queried more fields in between).
constexpr const char* kCaptureHeader =
    "timestamp, index, name, pci.bus_id, driver_version, pstate, pcie.link.gen.current, "
    "pcie.link.width.current, temperature.gpu, utilization.gpu [%], utilization.memory [%], "
    "memory.total [MiB], memory.used [MiB], memory.free [MiB], power.draw [W], power.limit [W], "
    "clocks.current.sm [MHz], clocks.current.memory [MHz], fan.speed [%]\n";
constexpr const char* kCaptureRow =
    "2026/09/01 20:41:56.941, 0, NVIDIA H200, 00000000:83:00.0, 580.173.02, P0, 5, 16, 37, 0 %, 0 %, "
    "143771 MiB, 0 MiB, 143156 MiB, 85.12 W, 700.00 W, 345 MHz, 3201 MHz, [N/A]\n";

std::string Csv(std::string_view gpu_fields, std::string_view host_fields, std::string_view format,
                const std::vector<telemetry::Sample>& samples) {
  Result<Query> query = ParseQuery(gpu_fields, host_fields, true);
  Result<Format> fmt = ParseFormat(format);
  EXPECT_TRUE(query.ok() && fmt.ok());
  if (!query.ok() || !fmt.ok()) return "";
  CsvWriter writer(*query, *fmt);
  std::ostringstream out;
  writer.WriteHeader(out);
  for (const telemetry::Sample& s : samples) writer.WriteSample(out, s);
  return out.str();
}

class CsvWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::UseUtc(); }
};

TEST_F(CsvWriterTest, MatchesNvidiaSmiCaptureWithUnits) {
  EXPECT_EQ(Csv(kCaptureFields, "", "csv", {testing::IdleSample()}), std::string(kCaptureHeader) + kCaptureRow);
}

TEST_F(CsvWriterTest, NoUnitsDropsUnitsFromValuesButNotFromTheHeader) {
  EXPECT_EQ(Csv(kCaptureFields, "", "csv,nounits", {testing::IdleSample()}),
            std::string(kCaptureHeader) +
                "2026/09/01 20:41:56.941, 0, NVIDIA H200, 00000000:83:00.0, 580.173.02, P0, 5, 16, 37, 0, 0, "
                "143771, 0, 143156, 85.12, 700.00, 345, 3201, [N/A]\n");
}

TEST_F(CsvWriterTest, AnAliasIsHeadedByTheFieldsOwnName) {
  // nvidia-smi 580 on an H100 headed --query-gpu=clocks.sm,clocks.mem "clocks.current.sm [MHz],
  // clocks.current.memory [MHz]" (docs/benchmarks.md, GPU checks); the other aliases follow the same rule.
  EXPECT_EQ(Csv("gpu_name,clocks.sm,clocks.mem,gpu_bus_id", "", "csv", {testing::IdleSample()}),
            "name, clocks.current.sm [MHz], clocks.current.memory [MHz], pci.bus_id\n"
            "NVIDIA H200, 345 MHz, 3201 MHz, 00000000:83:00.0\n");
}

TEST_F(CsvWriterTest, NoHeaderDropsTheHeaderLine) {
  EXPECT_EQ(Csv(kCaptureFields, "", "csv,noheader", {testing::IdleSample()}), kCaptureRow);
  EXPECT_EQ(Csv("utilization.gpu,memory.used", "", "csv,noheader,nounits", {testing::IdleSample()}), "0, 0\n");
}

TEST_F(CsvWriterTest, OneRowPerGpuWithHostColumnsOnEveryRow) {
  EXPECT_EQ(Csv("index,utilization.gpu,memory.used,pcie.rx.throughput", "cpu.util,proc.cpu", "csv",
                {testing::TwoGpuSample(), testing::TwoGpuSample()}),
            "index, utilization.gpu [%], memory.used [MiB], pcie.rx.throughput [MiB/s], cpu.util [%], proc.cpu [%]\n"
            "0, 0 %, 0 MiB, [N/A], 37.5 %, 180.0 %\n"
            "1, 82 %, 5959 MiB, 1234.57 MiB/s, 37.5 %, 180.0 %\n"
            "0, 0 %, 0 MiB, [N/A], 37.5 %, 180.0 %\n"
            "1, 82 %, 5959 MiB, 1234.57 MiB/s, 37.5 %, 180.0 %\n");
}

TEST_F(CsvWriterTest, HostOnlyQueryGivesOneRowPerSample) {
  telemetry::Sample first = testing::TwoGpuSample();
  first.host = testing::FirstHost();
  EXPECT_EQ(Csv("", "timestamp,cpu.util,cpu.count,load.1,mem.used,disk.read,disk.read.iops,net.tx", "csv",
                {first, testing::TwoGpuSample()}),
            "timestamp, cpu.util [%], cpu.count, load.1, mem.used [MiB], disk.read [MiB/s], disk.read.iops, "
            "net.tx [MiB/s]\n"
            "2026/09/01 20:41:56.941, [N/A], 2, 0.50, 8192 MiB, [N/A], [N/A], [N/A]\n"
            "2026/09/01 20:41:56.941, 37.5 %, 2, 1.23, 8292 MiB, 12.00 MiB/s, 96.0, 0.02 MiB/s\n");
}

TEST_F(CsvWriterTest, PerGpuQueryWithoutGpusPrintsTheHeaderAlone) {
  telemetry::Sample s = testing::IdleSample();
  s.gpus.clear();
  EXPECT_EQ(Csv("timestamp,index,utilization.gpu", "mem.total", "csv", {s, s}),
            "timestamp, index, utilization.gpu [%], mem.total [MiB]\n");
  EXPECT_EQ(Csv("index,utilization.gpu", "mem.total", "csv,noheader", {s}), "");
  EXPECT_EQ(Csv("", "mem.total", "csv,noheader", {s}), "24576 MiB\n") << "host fields alone still print";
}

TEST_F(CsvWriterTest, TreeFieldsAreNaInASampleWithoutTree) {
  telemetry::Sample s = testing::IdleSample();
  EXPECT_EQ(Csv("", "proc.pid,proc.rss", "csv,noheader", {s}), "[N/A], [N/A]\n");
}

}  // namespace
}  // namespace sat::monitor
