#include "sim/workload.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

namespace sat::sim {
namespace {

bool SameRun(const SimRun& a, const SimRun& b) {
  return a.id == b.id && a.shape == b.shape && a.duration_s == b.duration_s && a.mem_gib == b.mem_gib &&
         a.peak_gib == b.peak_gib && a.gpu_util == b.gpu_util && a.cpu_cores == b.cpu_cores &&
         a.startup_s == b.startup_s && a.warmup_s == b.warmup_s;
}

TEST(GenerateWorkload, IsDeterministicForASeed) {
  WorkloadSpec spec;
  spec.runs = 200;
  std::vector<SimRun> a = GenerateWorkload(spec);
  std::vector<SimRun> b = GenerateWorkload(spec);
  ASSERT_EQ(a.size(), 200u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(SameRun(a[i], b[i])) << i;
  spec.seed = 2;
  std::vector<SimRun> c = GenerateWorkload(spec);
  EXPECT_NE(a[0].duration_s, c[0].duration_s);
}

TEST(GenerateWorkload, StaysWithinTheDocumentedRanges) {
  WorkloadSpec spec;
  spec.runs = 2000;
  spec.large_fraction = 0.3;
  spec.gpu_mem_gib = 40;
  std::set<std::string> shapes;
  int large = 0;
  for (const SimRun& r : GenerateWorkload(spec)) {
    shapes.insert(r.shape);
    bool is_large = r.shape.rfind("large-", 0) == 0;
    large += is_large;
    double share = r.mem_gib / spec.gpu_mem_gib;
    EXPECT_GE(share, (is_large ? 0.30 : 0.04) * 0.97) << r.id;
    EXPECT_LE(share, (is_large ? 0.60 : 0.12) * 1.03) << r.id;
    EXPECT_GE(r.peak_gib, r.mem_gib);
    EXPECT_LE(r.peak_gib, std::min(spec.gpu_mem_gib, r.mem_gib * 1.06));
    EXPECT_GE(r.gpu_util, is_large ? 0.85 : 0.15);
    EXPECT_LE(r.gpu_util, is_large ? 1.0 : 0.45);
    EXPECT_GE(r.duration_s, (is_large ? 3600 : 900) * 0.9);
    EXPECT_LE(r.duration_s, (is_large ? 14400 : 3600) * 1.1);
    EXPECT_GE(r.cpu_cores, is_large ? 6 : 2);
    EXPECT_LE(r.cpu_cores, is_large ? 10 : 4);
  }
  EXPECT_EQ(shapes.size(), 8u);
  EXPECT_NEAR(large / 2000.0, 0.3, 0.05);
}

TEST(GenerateWorkload, RunsOfOneShapeShareItsConfiguration) {
  WorkloadSpec spec;
  spec.runs = 300;
  spec.large_fraction = 0;
  for (const SimRun& r : GenerateWorkload(spec)) {
    EXPECT_EQ(r.shape.rfind("small-", 0), 0u) << r.shape;
    EXPECT_EQ(r.id.rfind(r.shape + "#", 0), 0u) << r.id;
  }
}

TEST(ValidateSpec, RejectsOutOfRangeFields) {
  EXPECT_TRUE(ValidateSpec(WorkloadSpec{}));
  WorkloadSpec spec;
  spec.large_fraction = 1.5;
  EXPECT_FALSE(ValidateSpec(spec));
  spec = WorkloadSpec{};
  spec.small_configs = 0;
  EXPECT_FALSE(ValidateSpec(spec));
  spec = WorkloadSpec{};
  spec.runs = -1;
  EXPECT_FALSE(ValidateSpec(spec));
}

TEST(ParseRuns, FillsDefaultsAndExpandsCounts) {
  auto runs = ParseRuns(R"({"runs": [
      {"id": "r", "shape": "s", "duration_s": 60, "mem_gib": 4, "gpu_util": 0.5, "count": 3},
      {"duration_s": 30, "mem_gib": 2, "peak_gib": 3, "gpu_util": 1, "cpu_cores": 0, "startup_s": 5,
       "warmup_s": 0}]})");
  ASSERT_TRUE(runs) << runs.error().message;
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ((*runs)[0].id, "r#0");
  EXPECT_EQ((*runs)[2].id, "r#2");
  EXPECT_EQ((*runs)[2].shape, "s");
  EXPECT_EQ((*runs)[0].peak_gib, 4);
  EXPECT_EQ((*runs)[0].cpu_cores, 1);
  EXPECT_EQ((*runs)[0].startup_s, 30);
  EXPECT_EQ((*runs)[0].warmup_s, 60);
  const SimRun& last = (*runs)[3];
  EXPECT_EQ(last.id, "run-1");
  EXPECT_EQ(last.shape, "run-1");
  EXPECT_EQ(last.peak_gib, 3);
  EXPECT_EQ(last.cpu_cores, 0);
  EXPECT_EQ(last.startup_s, 5);
  EXPECT_EQ(last.warmup_s, 0);
}

TEST(ParseRuns, AcceptsATopLevelArray) {
  auto runs = ParseRuns(R"([{"duration_s": 1, "mem_gib": 1, "gpu_util": 0.1}])");
  ASSERT_TRUE(runs) << runs.error().message;
  EXPECT_EQ(runs->size(), 1u);
}

TEST(ParseRuns, NamesTheEntryAndFieldOfAnError) {
  auto message = [](std::string_view json) {
    auto r = ParseRuns(json);
    EXPECT_FALSE(r);
    return r.ok() ? std::string() : r.error().message;
  };
  EXPECT_EQ(message(R"([{"duration_s": 1, "mem_gb": 1, "gpu_util": 0.1}])"),
            "runs[0]: unknown field \"mem_gb\"; did you mean \"mem_gib\"?");
  EXPECT_EQ(message(R"([{"duration_s": 1, "gpu_util": 0.1}])"), "runs[0]: missing \"mem_gib\"");
  EXPECT_EQ(message(R"([{"duration_s": "1h", "mem_gib": 1, "gpu_util": 0.1}])"),
            "runs[0]: \"duration_s\" must be a number");
  EXPECT_EQ(message(R"([{"duration_s": 1, "mem_gib": 1, "gpu_util": 0.1, "count": 1.5}])"),
            "runs[0]: \"count\" must be an integer >= 1");
  EXPECT_EQ(message(R"([{"duration_s": 1, "mem_gib": 1, "gpu_util": 0.1, "id": 7}])"),
            "runs[0]: \"id\" must be a string");
  EXPECT_EQ(message("[1]"), "runs[0]: expected an object");
  EXPECT_EQ(message("{\"runs\": [], \"gpus\": 8}"), "expected an object with only a \"runs\" array");
  EXPECT_EQ(message("{nope"), "not valid JSON");
  EXPECT_EQ(ParseRuns("{nope").error().exit_code, kExitUsage);
}

TEST(RunsToJson, RoundTripsExactly) {
  WorkloadSpec spec;
  spec.runs = 50;
  std::vector<SimRun> runs = GenerateWorkload(spec);
  auto back = ParseRuns(RunsToJson(runs));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_TRUE(SameRun(runs[i], (*back)[i])) << i;
}

TEST(LoadRuns, ReadsAFileAndPrefixesErrorsWithItsPath) {
  std::string path = ::testing::TempDir() + "sim_runs_test.json";
  {
    std::ofstream out(path);
    out << R"({"runs": [{"duration_s": 10, "mem_gib": 1, "gpu_util": 0.5}]})";
  }
  auto runs = LoadRuns(path);
  ASSERT_TRUE(runs) << runs.error().message;
  EXPECT_EQ(runs->size(), 1u);
  {
    std::ofstream out(path);
    out << "[{\"duration_s\": 10}]";
  }
  auto bad = LoadRuns(path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, path + ": runs[0]: missing \"mem_gib\"");
  std::remove(path.c_str());
  auto missing = LoadRuns(path);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, path + ": cannot open");
}

}  // namespace
}  // namespace sat::sim
