#include "monitor/human_view.h"

#include <gtest/gtest.h>

#include "monitor/test_samples.h"

namespace sat::monitor {
namespace {

using Lines = std::vector<std::string>;

constexpr const char* kBusyHostLine =
    "host cpu 37% (iowait 2%) load 1.2  mem 8.1/24.0 GiB  disk r 12.0 w 0.3 MiB/s util 4%  net rx 0.1 tx 0.0 MiB/s";

TEST(HumanView, OneLinePerGpuThenHostThenTree) {
  HumanView view({});
  EXPECT_EQ(view.Lines(testing::TwoGpuSample()),
            (Lines{
                "GPU0 NVIDIA H200  util   0%  mem 0/143771 MiB  37°C  85/700 W  P0",
                "GPU1 NVIDIA H200  util  82%  mem 5959/143771 MiB  71°C  250/700 W  P0",
                kBusyHostLine,
                "tree pid 4242: 3 procs 31 thr cpu 180% rss 1.2 GiB read 40.1 write 0.0 MiB/s gpu 4.9 GiB",
            }));
}

TEST(HumanView, GpmStandsBesideUtilisationWhereTheGpuCountsIt) {
  telemetry::Sample s = testing::TwoGpuSample();
  s.gpus[1].gpm_sm_active_pct = 38.4;
  s.gpus[1].gpm_tensor_active_pct = 9;
  Lines lines = HumanView({}).Lines(s);
  EXPECT_EQ(lines[0], "GPU0 NVIDIA H200  util   0%  mem 0/143771 MiB  37°C  85/700 W  P0");
  EXPECT_EQ(lines[1], "GPU1 NVIDIA H200  util  82% (SM 38% tensor 9%)  mem 5959/143771 MiB  71°C  250/700 W  P0");
}

TEST(HumanView, WithoutGpuBackendANoteReplacesTheGpuLines) {
  telemetry::Sample s = testing::IdleSample();
  s.gpus.clear();
  EXPECT_EQ(HumanView({.gpu_backend = false, .no_backend_reason = "libnvidia-ml.so.1 not found"}).Lines(s),
            (Lines{"note: no GPU backend (libnvidia-ml.so.1 not found); showing the host only", kBusyHostLine}));
  EXPECT_EQ(HumanView({.gpu_backend = false}).Lines(s),
            (Lines{"note: no GPU backend; showing the host only", kBusyHostLine}));
  EXPECT_EQ(HumanView({}).Lines(s), (Lines{"note: no GPUs to show", kBusyHostLine}));
}

TEST(HumanView, UnreportedValuesShowAsNa) {
  telemetry::Sample s = testing::IdleSample();
  s.host = testing::FirstHost();
  telemetry::GpuSample& g = s.gpus[0];
  g.name.clear();
  g.util_gpu_pct.reset();
  g.temperature_c.reset();
  g.power_draw_w.reset();
  g.pstate.reset();
  EXPECT_EQ(HumanView({}).Lines(s),
            (Lines{
                "GPU0  util n/a  mem 0/143771 MiB  temp n/a  n/a/700 W  pstate n/a",
                "host cpu n/a (iowait n/a) load 0.5  mem 8.0/24.0 GiB  disk r n/a w n/a MiB/s util n/a  "
                "net rx n/a tx n/a MiB/s",
            }));
}

TEST(HumanView, ExitedTreeSaysSo) {
  telemetry::Sample s = testing::IdleSample();
  s.gpus.clear();
  s.tree.emplace();
  s.tree->root = 4242;
  Lines lines = HumanView({}).Lines(s);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "tree pid 4242: exited");
}

TEST(HumanView, ATrainingLineOnceTheCommandReports) {
  telemetry::Sample s = testing::IdleSample();
  s.gpus.clear();
  s.tree = testing::BusyTree();
  EXPECT_EQ(HumanView({}).Lines(s).size(), 3u) << "nothing reported: no training line";
  s.tree->samples_per_s = 2841.27;
  s.tree->steps_per_s = 22.197;
  Lines lines = HumanView({}).Lines(s);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3], "train 2841.3 samples/s 22.20 steps/s data wait n/a");
  s.tree->data_wait_share = 0.12;
  EXPECT_EQ(HumanView({}).Lines(s)[3], "train 2841.3 samples/s 22.20 steps/s data wait 12%");
}

TEST(HumanView, WidthCutsLinesCountingCharactersNotBytes) {
  Lines lines = HumanView({.width = 51}).Lines(testing::IdleSample());
  ASSERT_EQ(lines.size(), 2u);
  // 51 columns end just after "°C"; the degree sign is two bytes but one column.
  EXPECT_EQ(lines[0], "GPU0 NVIDIA H200  util   0%  mem 0/143771 MiB  37°C");
  EXPECT_EQ(lines[1], "host cpu 37% (iowait 2%) load 1.2  mem 8.1/24.0 GiB");
}

TEST(RedrawPrefix, MovesUpOverThePreviousBlockAndClears) {
  EXPECT_EQ(RedrawPrefix(0), "");
  EXPECT_EQ(RedrawPrefix(3), "\x1b[3A\x1b[J");
}

}  // namespace
}  // namespace sat::monitor
