#include "monitor/exposition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

#include "monitor/test_samples.h"

namespace sat::monitor {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& page) {
  std::vector<std::string> lines;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

live::Figures BusyInput() {
  live::Figures in;
  telemetry::Sample s;
  s.gpus = {testing::BusyH200(0)};
  s.host = testing::BusyHost();
  s.tree = testing::BusyTree();
  s.tree->samples_per_s = 812.5;
  in.sample = s;
  in.hostname = "node7";
  in.tree_command = "python3 train.py --lr 0.1";
  return in;
}

TEST(ExpositionValue, IntegersPlainOthersShortestAndSpecialsByName) {
  EXPECT_EQ(ExpositionValue(5959), "5959");
  EXPECT_EQ(ExpositionValue(0), "0");
  EXPECT_EQ(ExpositionValue(-3), "-3");
  EXPECT_EQ(ExpositionValue(0.3746), "0.3746");
  EXPECT_EQ(ExpositionValue(250.4), "250.4");
  EXPECT_EQ(ExpositionValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(ExpositionValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(ExpositionValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(EscapeLabelValue, BackslashQuoteAndNewline) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\\b \"c\"\nd"), "a\\\\b \\\"c\\\"\\nd");
}

// The text format is UTF-8: a Latin-1 byte from a command line must not make the page unreadable.
TEST(EscapeLabelValue, MalformedUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(EscapeLabelValue("caf\xe9 \xc3\xa9"), "caf\xef\xbf\xbd \xc3\xa9");
}

// 200 bytes at most; the two-byte character at bytes 199 and 200 is left out whole.
TEST(RenderExposition, LongCommandLabelIsCutOnACharacterBoundary) {
  live::Figures in = BusyInput();
  in.tree_command = std::string(199, 'x') + "\xc3\xa9";
  const std::string page = RenderExposition(in);
  EXPECT_NE(page.find("command=\"" + std::string(199, 'x') + "...\""), std::string::npos);
}

// dcgm-exporter's names, HELP texts, types and labels (gpu, UUID, pci_bus_id, device, modelName, Hostname), in
// its units: MiB, W, MHz, %.
TEST(RenderExposition, GpuSeriesAsDcgmExporterWritesThem) {
  std::string page = RenderExposition(BusyInput());
  const std::string labels =
      "{gpu=\"0\",UUID=\"GPU-00000000-0000-0000-0000-000000000000\",pci_bus_id=\"00000000:9B:00.0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H200\",Hostname=\"node7\"}";
  EXPECT_THAT(page, HasSubstr("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
                              "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
                              "DCGM_FI_DEV_GPU_UTIL" + labels + " 82\n"));
  EXPECT_THAT(page, HasSubstr("# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n"
                              "# TYPE DCGM_FI_DEV_FB_USED gauge\n"
                              "DCGM_FI_DEV_FB_USED" + labels + " 5959\n"));
  EXPECT_THAT(page, HasSubstr("DCGM_FI_DEV_FB_FREE" + labels + " 143156\n"));
  EXPECT_THAT(page, HasSubstr("DCGM_FI_DEV_POWER_USAGE" + labels + " 250.4\n"));
  EXPECT_THAT(page, HasSubstr("DCGM_FI_DEV_GPU_TEMP" + labels + " 71\n"));
  EXPECT_THAT(page, HasSubstr("DCGM_FI_DEV_SM_CLOCK" + labels + " 1980\n"));
  EXPECT_THAT(page, HasSubstr("DCGM_FI_DEV_MEM_COPY_UTIL" + labels + " 41\n"));
}

// Unsupported is left out, never written as 0: the H200 has no fan, and GPM is unknown here.
TEST(RenderExposition, NaFieldsAndEmptyFamiliesAreLeftOut) {
  std::string page = RenderExposition(BusyInput());
  EXPECT_THAT(page, Not(HasSubstr("DCGM_FI_DEV_FAN_SPEED")));
  EXPECT_THAT(page, Not(HasSubstr("DCGM_FI_PROF_")));
  EXPECT_THAT(page, Not(HasSubstr("saturate_process_steps_per_second")));
  EXPECT_THAT(page, Not(HasSubstr("saturate_run_samples_per_second")));
}

TEST(RenderExposition, GpmAsDcgmProfilingRatios) {
  live::Figures in = BusyInput();
  telemetry::GpuSample& g = in.sample->gpus[0];
  g.gpm_sm_active_pct = 38;
  g.gpm_sm_occupancy_pct = 21.5;
  g.gpm_tensor_active_pct = 9;
  g.gpm_dram_bw_util_pct = 0;
  std::string page = RenderExposition(in);
  EXPECT_THAT(page, HasSubstr("# TYPE DCGM_FI_PROF_SM_ACTIVE gauge\nDCGM_FI_PROF_SM_ACTIVE{gpu=\"0\","));
  EXPECT_THAT(page, HasSubstr("Hostname=\"node7\"} 0.38\n"));
  EXPECT_THAT(page, HasSubstr("Hostname=\"node7\"} 0.215\n"));
  EXPECT_THAT(page, HasSubstr("Hostname=\"node7\"} 0.09\n"));
  EXPECT_THAT(page, HasSubstr("DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\","));
  EXPECT_THAT(page, HasSubstr("# HELP DCGM_FI_PROF_PIPE_TENSOR_ACTIVE Ratio of cycles the tensor (HMMA) pipe is "
                              "active.\n"));
}

TEST(RenderExposition, EveryGpuIsASeriesOfOneFamily) {
  live::Figures in = BusyInput();
  in.sample->gpus.push_back(testing::BusyH200(1));
  in.hostname.clear();
  std::string page = RenderExposition(in);
  std::vector<std::string> lines = Lines(page);
  auto at = std::find(lines.begin(), lines.end(), "# TYPE DCGM_FI_DEV_GPU_UTIL gauge");
  ASSERT_NE(at, lines.end());
  EXPECT_THAT(*(at + 1), HasSubstr("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\","));
  EXPECT_THAT(*(at + 2), HasSubstr("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\","));
  EXPECT_THAT(*(at + 2), HasSubstr("device=\"nvidia1\",modelName=\"NVIDIA H200\"} 82"));
  EXPECT_THAT(page, Not(HasSubstr("Hostname")));
}

TEST(RenderExposition, HostSeriesInBaseUnitsAndRatios) {
  std::string page = RenderExposition(BusyInput());
  EXPECT_THAT(page, HasSubstr("# TYPE saturate_host_cpu_utilization_ratio gauge\n"
                              "saturate_host_cpu_utilization_ratio 0.3746\n"));
  EXPECT_THAT(page, HasSubstr("saturate_host_cpus 2\n"));
  EXPECT_THAT(page, HasSubstr("saturate_host_memory_total_bytes 25769803776\n"));
  EXPECT_THAT(page, HasSubstr("saturate_host_disk_read_bytes_per_second 12582912\n"));
  EXPECT_THAT(page, HasSubstr("saturate_host_disk_busy_ratio 0.042\n"));
  EXPECT_THAT(page, HasSubstr("saturate_host_load1 1.23\n"));
}

TEST(RenderExposition, ProcessSeriesCarryPidAndCommand) {
  std::string page = RenderExposition(BusyInput());
  const std::string labels = "{pid=\"4242\",command=\"python3 train.py --lr 0.1\"}";
  EXPECT_THAT(page, HasSubstr("saturate_process_samples_per_second" + labels + " 812.5\n"));
  EXPECT_THAT(page, HasSubstr("saturate_process_cpu_cores" + labels + " 1.8004\n"));
  EXPECT_THAT(page, HasSubstr("saturate_process_processes" + labels + " 3\n"));
  EXPECT_THAT(page, HasSubstr("saturate_process_resident_memory_bytes" + labels + " 1287651328\n"));
}

TEST(RenderExposition, AFinishedTreeHasNoSeries) {
  live::Figures in = BusyInput();
  in.sample->tree->alive = false;
  EXPECT_THAT(RenderExposition(in), Not(HasSubstr("saturate_process_")));
}

TEST(RenderExposition, CommandLabelIsEscapedAndCut) {
  live::Figures in = BusyInput();
  in.tree_command = "python3 -c \"print('hi')\"";
  EXPECT_THAT(RenderExposition(in), HasSubstr("command=\"python3 -c \\\"print('hi')\\\"\"}"));
  in.tree_command = std::string(500, 'x');
  EXPECT_THAT(RenderExposition(in), HasSubstr("command=\"" + std::string(200, 'x') + "...\"}"));
}

TEST(RenderExposition, CommandLabelHidesSecrets) {
  live::Figures in = BusyInput();
  in.tree_command = "python3 train.py --api-key=sk-123 --hf-token hf_abc --lr 0.1";
  std::string page = RenderExposition(in);
  EXPECT_THAT(page, HasSubstr("command=\"python3 train.py --api-key=*** --hf-token *** --lr 0.1\""));
  EXPECT_THAT(page, Not(HasSubstr("sk-123")));
  EXPECT_THAT(page, Not(HasSubstr("hf_abc")));
}

TEST(RenderExposition, RunsWithTheirLabels) {
  live::Figures in;
  in.runs = {{{{"command", "probe"}, {"stage", "full"}}, 1520.25},
             {{{"command", "sweep"}, {"run", "lr-0.1"}}, 0.0},
             {{{"command", "sweep"}, {"run", "lr-0.01"}}, std::nullopt}};
  std::string page = RenderExposition(in);
  EXPECT_EQ(page,
            "# HELP saturate_run_samples_per_second Training samples per second of a run saturate drives (a probe "
            "stage, a tune trial, a sweep run) over its last few seconds.\n"
            "# TYPE saturate_run_samples_per_second gauge\n"
            "saturate_run_samples_per_second{command=\"probe\",stage=\"full\"} 1520.25\n"
            "saturate_run_samples_per_second{command=\"sweep\",run=\"lr-0.1\"} 0\n");
}

TEST(RenderExposition, NothingYetIsAnEmptyPage) { EXPECT_EQ(RenderExposition({}), ""); }

// Each family's lines are together, HELP then TYPE then series, as the format requires.
TEST(RenderExposition, FamiliesAreContiguous) {
  live::Figures in = BusyInput();
  in.sample->gpus.push_back(testing::BusyH200(1));
  std::vector<std::string> lines = Lines(RenderExposition(in));
  std::set<std::string> finished;
  std::string current;
  for (const std::string& line : lines) {
    std::string name = line.rfind("# ", 0) == 0 ? line.substr(7, line.find(' ', 7) - 7)
                                                : line.substr(0, line.find_first_of("{ "));
    if (name != current) {
      EXPECT_TRUE(finished.insert(current).second || current.empty()) << current << " appears twice";
      current = name;
      EXPECT_EQ(line.rfind("# HELP ", 0), 0u) << "a family starts with HELP: " << line;
    }
  }
}

}  // namespace
}  // namespace sat::monitor
