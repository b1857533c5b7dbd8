// The results a finished sweep exports (sweep/export.h): their order by the sweep's metric, the CSV's columns and
// the JSON's nulls.
#include "sweep/export.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sat::sweep {
namespace {

using nlohmann::json;

std::vector<RunRecord> Records() {
  std::vector<RunRecord> runs(4);
  for (int i = 0; i < 4; ++i) {
    runs[i].key = "k" + std::to_string(i);
    runs[i].index = i;
    runs[i].params = json{{"lr", 0.1 * (i + 1)}, {"opt", i == 2 ? "adam,w" : "sgd"}};
    runs[i].state = RunState::kDone;
    runs[i].attempts = 1;
  }
  runs[0].best_metrics = {{"loss", 0.5}, {"acc", 0.8}};
  runs[1].best_metrics = {{"loss", 0.25}};
  runs[2].best_metrics = json::object();
  runs[2].state = RunState::kFailed;
  runs[3].best_metrics = {{"loss", 0.75}};
  runs[1].measurements.throughput_samples_per_s = 900.0;
  runs[1].measurements.peak_gpu_memory_bytes = 1024;
  runs[1].gpu_index = 0;
  runs[1].measurements.samples = 4000;
  runs[1].measurements.energy_j = 1000;
  runs[3].stopped_early = true;
  return runs;
}

TEST(Export, SortsByTheMetricsGoalWithMissingValuesLast) {
  auto keys = [](const std::vector<RunRecord>& runs) {
    std::vector<std::string> out;
    for (const auto& r : runs) out.push_back(r.key);
    return out;
  };
  const MetricSpec min{"loss", Goal::kMinimize, std::nullopt};
  const MetricSpec max{"loss", Goal::kMaximize, std::nullopt};
  EXPECT_EQ(keys(SortByMetric(Records(), min)), (std::vector<std::string>{"k1", "k0", "k3", "k2"}));
  EXPECT_EQ(keys(SortByMetric(Records(), max)), (std::vector<std::string>{"k3", "k0", "k1", "k2"}));
  EXPECT_EQ(keys(SortByMetric(Records(), std::nullopt)), (std::vector<std::string>{"k0", "k1", "k2", "k3"}));
}

TEST(Export, CsvHasOneColumnPerParameterAndMetric) {
  const MetricSpec min{"loss", Goal::kMinimize, std::nullopt};
  const std::string csv = ResultsCsv(SortByMetric(Records(), min), min);
  const std::string header =
      "rank,key,index,state,stopped_early,attempts,metric.loss,param.lr,param.opt,metric.acc,throughput_samples_per_s,"
      "peak_gpu_memory_bytes,cpu_pct,rss_bytes,gpu,started_unix,finished_unix,samples,energy_j,joules_per_sample\r\n";
  EXPECT_EQ(csv, header +
                     "1,k1,1,done,false,1,0.25,0.2,sgd,,900.0,1024,,,0,,,4000.0,1000.0,0.25\r\n"
                     "2,k0,0,done,false,1,0.5,0.1,sgd,0.8,,,,,,,,,,\r\n"
                     "3,k3,3,done,true,1,0.75,0.4,sgd,,,,,,,,,,,\r\n"
                     "4,k2,2,failed,false,1,,0.30000000000000004,\"adam,w\",,,,,,,,,,,\r\n");
}

TEST(Export, JsonHasNullsForMissingValues) {
  const MetricSpec max{"loss", Goal::kMaximize, std::nullopt};
  const json out = ResultsJson(SortByMetric(Records(), max), max);
  EXPECT_EQ(out["metric"], json({{"name", "loss"}, {"goal", "maximize"}}));
  ASSERT_EQ(out["runs"].size(), 4u);
  EXPECT_EQ(out["runs"][0]["key"], "k3");
  EXPECT_EQ(out["runs"][0]["stopped_early"], true);
  EXPECT_EQ(out["runs"][1]["stopped_early"], false);
  EXPECT_EQ(out["runs"][0]["rank"], 1);
  EXPECT_EQ(out["runs"][2]["throughput_samples_per_s"], 900.0);
  EXPECT_EQ(out["runs"][2]["gpu"], 0);
  EXPECT_EQ(out["runs"][2]["joules_per_sample"], 0.25);
  EXPECT_TRUE(out["runs"][0]["energy_j"].is_null());
  EXPECT_TRUE(out["runs"][0]["gpu"].is_null());
  EXPECT_EQ(out["runs"][3]["state"], "failed");
  EXPECT_EQ(out["runs"][3]["params"]["opt"], "adam,w");
  EXPECT_TRUE(ResultsJson({}, std::nullopt)["metric"].is_null());
}

}  // namespace
}  // namespace sat::sweep
