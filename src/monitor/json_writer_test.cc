#include "monitor/json_writer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "monitor/sample_json.h"
#include "monitor/test_samples.h"

namespace sat::monitor {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Write(const Query& query, const telemetry::Sample& sample) {
  JsonWriter writer(query);
  std::ostringstream out;
  writer.WriteSample(out, sample);
  return Lines(out.str());
}

class JsonWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::UseUtc(); }
};

TEST_F(JsonWriterTest, RowsAreObjectsInQueryOrderWithTypedValues) {
  Result<Query> q = ParseQuery("index,name,utilization.gpu,power.draw,fan.speed,pstate", "cpu.util", false);
  ASSERT_TRUE(q);
  std::vector<std::string> lines = Write(*q, testing::TwoGpuSample());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            R"({"index":0,"name":"NVIDIA H200","utilization.gpu":0,"power.draw":85.12,"fan.speed":null,)"
            R"("pstate":"P0","cpu.util":37.5})");
  EXPECT_EQ(lines[1],
            R"({"index":1,"name":"NVIDIA H200","utilization.gpu":82,"power.draw":250.4,"fan.speed":null,)"
            R"("pstate":"P0","cpu.util":37.5})");
}

TEST_F(JsonWriterTest, PerGpuQueryWithoutGpusWritesNothing) {
  Result<Query> q = ParseQuery("timestamp,index,utilization.gpu", "cpu.util", false);
  ASSERT_TRUE(q);
  telemetry::Sample s = testing::IdleSample();
  s.gpus.clear();
  EXPECT_TRUE(Write(*q, s).empty());
  Result<Query> host = ParseQuery("", "mem.total", false);
  ASSERT_TRUE(host);
  EXPECT_EQ(Write(*host, s).size(), 1u);
}

TEST_F(JsonWriterTest, NumbersAreNumbersAndNaIsNullNeverZero) {
  Result<Query> q = ParseQuery("timestamp,memory.used,power.draw,fan.speed,clocks.sm", "disk.read", false);
  ASSERT_TRUE(q);
  telemetry::Sample s = testing::IdleSample();
  s.host = testing::FirstHost();
  std::vector<std::string> lines = Write(*q, s);
  ASSERT_EQ(lines.size(), 1u);
  nlohmann::json row = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(row["timestamp"], "2026/09/01 20:41:56.941");
  EXPECT_TRUE(row["memory.used"].is_number_integer());
  EXPECT_EQ(row["memory.used"], 0);
  EXPECT_TRUE(row["power.draw"].is_number_float());
  EXPECT_DOUBLE_EQ(row["power.draw"].get<double>(), 85.12);
  EXPECT_TRUE(row["fan.speed"].is_null());
  EXPECT_TRUE(row["disk.read"].is_null());
  EXPECT_EQ(row["clocks.sm"], 345);
}

TEST_F(JsonWriterTest, CellJsonRoundsAsCsvShows) {
  EXPECT_EQ(CellJson(Number{70.5234, 2}).dump(), "70.52");
  EXPECT_EQ(CellJson(Number{81.6, 0}).dump(), "82");
  EXPECT_EQ(CellJson(Cell{}).dump(), "null");
  EXPECT_EQ(CellJson(std::string("P2")).dump(), R"("P2")");
}

TEST_F(JsonWriterTest, WithoutQueryEachSampleIsOneFullObject) {
  std::vector<std::string> lines = Write(Query{}, testing::TwoGpuSample());
  ASSERT_EQ(lines.size(), 1u);
  nlohmann::json j = nlohmann::json::parse(lines[0]);

  EXPECT_EQ(j["timestamp"], "2026/09/01 20:41:56.941");
  EXPECT_DOUBLE_EQ(j["time_s"].get<double>(), testing::kCaptureTime);

  ASSERT_EQ(j["gpus"].size(), 2u);
  const nlohmann::json& busy = j["gpus"][1];
  EXPECT_EQ(busy["index"], 1);
  EXPECT_EQ(busy["memory_total_bytes"], 143771 * testing::kMiB);
  EXPECT_TRUE(busy["fan_pct"].is_null());
  ASSERT_TRUE(busy.contains("gpm_sm_active_pct"));
  EXPECT_TRUE(busy["gpm_sm_active_pct"].is_null()) << "no GPM (before Hopper) is null, not 0";
  EXPECT_EQ(busy["pstate"], 0);
  ASSERT_EQ(busy["processes"].size(), 2u);
  EXPECT_EQ(busy["processes"][0]["pid"], 4242);
  EXPECT_TRUE(busy["processes"][1]["used_memory_bytes"].is_null());

  const nlohmann::json& host = j["host"];
  EXPECT_DOUBLE_EQ(host["cpu_util_pct"].get<double>(), 37.46);
  EXPECT_EQ(host["core_util_pct"].size(), 2u);
  ASSERT_EQ(host["disks"].size(), 1u);
  EXPECT_EQ(host["disks"][0]["name"], "nvme0n1");
  ASSERT_EQ(host["nets"].size(), 1u);
  EXPECT_EQ(host["nets"][0]["name"], "eth0");

  EXPECT_EQ(j["tree"]["root"], 4242);
  EXPECT_EQ(j["tree"]["pids"], nlohmann::json({4242, 4243, 4250}));
  EXPECT_TRUE(j["tree"]["alive"].get<bool>());
}

TEST_F(JsonWriterTest, FullSampleWithoutTreeOrRatesHasNulls) {
  telemetry::Sample s = testing::IdleSample();
  s.host = testing::FirstHost();
  nlohmann::json j = s;
  EXPECT_TRUE(j["tree"].is_null());
  EXPECT_TRUE(j["host"]["cpu_util_pct"].is_null());
  EXPECT_TRUE(j["host"]["disks"].is_array());
  EXPECT_TRUE(j["host"]["disks"].empty());
  EXPECT_EQ(j["host"]["mem_used_bytes"], 8 * testing::kGiB);
  EXPECT_TRUE(j["gpus"][0]["pcie_tx_bytes_per_s"].is_null());
}

}  // namespace
}  // namespace sat::monitor
