#include "sim/report.h"

#include <gtest/gtest.h>

namespace sat::sim {
namespace {

PolicyResult Row(Policy policy, double makespan_s, double gpu_hours, double occupancy, double runs_per_gpu,
                 int max_runs) {
  PolicyResult r;
  r.policy = policy;
  r.makespan_s = makespan_s;
  r.gpu_hours = gpu_hours;
  r.mean_occupancy = occupancy;
  r.mean_runs_per_busy_gpu = runs_per_gpu;
  r.max_runs_on_a_gpu = max_runs;
  r.runs_completed = r.runs_total = 100;
  return r;
}

std::vector<PolicyResult> TwoResults() {
  PolicyResult packed = Row(Policy::kMeasured, 24000, 53.3, 0.75, 2.25, 3);
  packed.held_degree = {{"resnet", 3}, {"bert", 1}};
  return {Row(Policy::kOnePerGpu, 36000, 80, 0.5, 1, 1), packed};
}

TEST(FormatTable, OneRowPerPolicyWithSpeedupOverTheBaseline) {
  std::string table = FormatTable(TwoResults());
  EXPECT_EQ(table,
            "policy         makespan (h)  speedup  GPU-hours occupancy runs/GPU max/GPU   OOMs   completed\n"
            "one-per-gpu           10.00    1.00x       80.0     50.0%     1.00       1      0     100/100\n"
            "saturate               6.67    1.50x       53.3     75.0%     2.25       3      0     100/100\n"
            "saturate held runs per GPU: bert 1, resnet 3\n");
}

TEST(FormatTable, LeavesOutTheSpeedupWithoutTheBaselineAndPicksAUnit) {
  std::vector<PolicyResult> results = TwoResults();
  results[0].makespan_s = 600;
  results[1].makespan_s = 450;
  std::string table = FormatTable(results, Policy::kSequential);
  EXPECT_EQ(table.find("speedup"), std::string::npos);
  EXPECT_NE(table.find("makespan (min)"), std::string::npos);
  EXPECT_NE(table.find(" 7.50 "), std::string::npos) << table;
}

TEST(ToJson, CarriesClusterParamsAndEveryResult) {
  SimConfig config;
  config.gpus = 64;
  PolicyParams params;
  params.fixed_k = 3;
  nlohmann::json doc = ToJson(config, params, TwoResults());
  EXPECT_EQ(doc["cluster"]["gpus"], 64);
  EXPECT_EQ(doc["params"]["fixed_k"], 3);
  ASSERT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["results"][0]["policy"], "one-per-gpu");
  EXPECT_EQ(doc["results"][1]["policy"], "saturate");
  EXPECT_EQ(doc["results"][1]["makespan_s"], 24000.0);
  EXPECT_EQ(doc["results"][1]["held_degree"]["resnet"], 3);
  EXPECT_EQ(doc["results"][0]["runs_completed"], 100);
}

}  // namespace
}  // namespace sat::sim
