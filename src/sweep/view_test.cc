#include "sweep/view.h"

#include <gtest/gtest.h>

#include "sweep/export.h"
#include "util/utf8.h"

namespace sat::sweep {
namespace {

using nlohmann::json;

std::vector<RunRecord> Runs() {
  std::vector<RunRecord> runs(3);
  for (int i = 0; i < 3; ++i) {
    runs[i].key = "key" + std::to_string(i);
    runs[i].index = i;
    runs[i].params = json{{"lr", 0.1 / (i + 1)}, {"bs", 32}};
    runs[i].state = RunState::kDone;
    runs[i].attempts = 1;
  }
  runs[0].best_metrics = {{"loss", 0.5}};
  runs[1].best_metrics = {{"loss", 0.25}};
  runs[1].measurements.throughput_samples_per_s = 812.25;
  runs[1].measurements.rss_bytes = 300ull << 20;
  runs[1].measurements.cpu_pct = 97.4;
  runs[2].state = RunState::kFailed;
  runs[2].attempts = 3;
  return runs;
}

TEST(ResultsTable, BestFirstWithParametersAndMeasurements) {
  const MetricSpec loss{"loss", Goal::kMinimize, std::nullopt};
  const std::string table = ResultsTable(SortByMetric(Runs(), loss), loss, 0);
  EXPECT_EQ(table,
            "rank  #  key   state   tries  loss (min)  bs  lr                   samples/s  peak mem  CPU %\n"
            "1     1  key1  done    1      0.25        32  0.05                 812.2      300 MiB   97\n"
            "2     0  key0  done    1      0.5         32  0.1\n"
            "3     2  key2  failed  3                  32  0.03333333333333333\n");
  const std::string two = ResultsTable(Runs(), std::nullopt, 2);
  EXPECT_NE(two.find("... 1 more (--all shows every run)\n"), std::string::npos);
  EXPECT_EQ(two.find("loss"), std::string::npos);
  EXPECT_EQ(table.find("J/sample"), std::string::npos) << "no device reported energy";
}

TEST(ResultsTable, JoulesPerSampleWhereADeviceReportedEnergy) {
  std::vector<RunRecord> runs = Runs();
  runs[1].measurements.energy_j = 5000;
  runs[1].measurements.samples = 40000;
  runs[0].measurements.energy_j = 100;  // trained no samples it reported: no J/sample
  const std::string table = ResultsTable(runs, std::nullopt, 0);
  EXPECT_NE(table.find("CPU %  J/sample\n"), std::string::npos) << table;
  EXPECT_NE(table.find("812.2      300 MiB   97     0.125\n"), std::string::npos) << table;
}

TEST(LiveLines, CountsDevicesAndRuns) {
  SweepSnapshot s;
  s.elapsed_s = 75;
  s.counts = StateCounts{3, 2, 1, 0, 0};
  DeviceSnapshot cpu;
  cpu.name = "cpu";
  cpu.proven = 2;
  cpu.probing = true;
  cpu.util_pct = 87;
  cpu.mem_used_bytes = 3ull << 30;
  cpu.mem_total_bytes = 16ull << 30;
  cpu.runs.push_back(LiveRunView{"abc", 4, json{{"lr", 0.1}}, 1, 12.5, true, 840.5, 99, 200ull << 20});
  cpu.runs.push_back(LiveRunView{"def", 5, json{{"lr", 0.2}}, 2, 1.5, false, std::nullopt, 50, 100ull << 20});
  s.devices.push_back(cpu);
  s.held = {{"", 3}};
  const auto lines = LiveLines(s, 200);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "sweep 75.0s  6 runs: 3 queued, 2 running, 1 done, 0 failed, 0 retrying");
  EXPECT_EQ(lines[1], "cpu  CPU 87%  mem 3.0 GiB/16.0 GiB  2 runs, proven 2, judging the last admission");
  EXPECT_EQ(lines[2], "  #4    abc    12.5s    840.5 samples/s   200 MiB  lr=0.1");
  EXPECT_EQ(lines[3], "  #5    def     1.5s            50% CPU   100 MiB (measuring)  lr=0.2");
  EXPECT_EQ(lines[4], "held: 3 runs per device for this sweep's runs");
  EXPECT_EQ(LiveLines(s, 20)[1], "cpu  CPU 87%  mem...");
  DeviceSnapshot gpu;
  gpu.name = "gpu0";
  gpu.util_pct = 96;
  gpu.power_w = 412.4;
  s.devices = {gpu};
  EXPECT_EQ(LiveLines(s, 200)[1], "gpu0  util 96%  412 W  0 runs, proven 1");
  s.devices = {cpu};
  // A parameter value with a two-byte character right at the cut: the line is cut before it, never inside.
  s.devices[0].runs[0].params = json{{"name", "x\xc3\xa9t\xc3\xa9"}};
  for (size_t width = 40; width < 60; ++width) {
    for (const std::string& line : LiveLines(s, width)) EXPECT_EQ(ValidUtf8(line), line) << width;
  }
}

TEST(EventLine, NamesTheRunAndDevice) {
  SweepEvent e;
  e.elapsed_s = 12.34;
  e.text = "cpu: degree 2 raised the progress rate by +80%";
  EXPECT_EQ(EventLine(e), "[   12.3s] cpu: degree 2 raised the progress rate by +80%");
  e.key = "abc";
  e.index = 3;
  e.device = "gpu0";
  e.text = "finished in 9.8 s";
  EXPECT_EQ(EventLine(e), "[   12.3s] #3 abc on gpu0: finished in 9.8 s");
}

TEST(EventLine, AScriptsEscapeSequencesAreShownNotSentToTheTerminal) {
  SweepEvent e;
  e.key = "abc";
  e.device = "cpu";
  // Clear the screen, retitle the window, a C1 CSI, a bell; and a character of three bytes, which stays.
  e.text = "failed (exit 1: \x1b[2J\x1b]0;pwned\x07 \xc2\x9b" "31m ok \xe2\x82\xac)";
  const std::string line = EventLine(e);
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_EQ(line.find('\x07'), std::string::npos) << line;
  EXPECT_NE(line.find("\\x1b[2J\\x1b]0;pwned\\x07 \\xc2\\x9b31m ok \xe2\x82\xac"), std::string::npos) << line;
}

TEST(StatusJson, CarriesCountsConsistencyAndRuns) {
  SweepStatus s;
  s.journal_path = "s.journal";
  s.sweep = SweepInfo{"s.yaml", "0123456789abcdef", 7, MetricSpec{"loss", Goal::kMinimize, std::nullopt}};
  s.counts = StateCounts{0, 0, 2, 1, 0};
  s.runs = Runs();
  json j = StatusJson(s);
  EXPECT_EQ(j["counts"]["total"], 3);
  EXPECT_EQ(j["consistent"], true);
  EXPECT_TRUE(j["problems"].is_null());
  EXPECT_EQ(j["metric"]["goal"], "minimize");
  EXPECT_EQ(j["runs"].size(), 3u);
  s.problems = "journal s.journal is inconsistent:\n  key0: more failures than attempts";
  EXPECT_EQ(StatusJson(s)["consistent"], false);
  EXPECT_NE(FormatStatus(s, 0).find("INCONSISTENT: journal s.journal"), std::string::npos);
}

}  // namespace
}  // namespace sat::sweep
