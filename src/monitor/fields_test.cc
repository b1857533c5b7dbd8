#include "monitor/fields.h"

#include <gtest/gtest.h>

#include <set>

#include "monitor/test_samples.h"

namespace sat::monitor {
namespace {

TEST(CellText, NumbersCarryTheUnitAfterASpace) {
  EXPECT_EQ(CellText(Number{82, 0}, "%", true), "82 %");
  EXPECT_EQ(CellText(Number{85.12, 2}, "W", true), "85.12 W");
  EXPECT_EQ(CellText(Number{700, 2}, "W", true), "700.00 W");
  EXPECT_EQ(CellText(Number{1.5, 2}, "MiB/s", true), "1.50 MiB/s");
  EXPECT_EQ(CellText(Number{37, 0}, "", true), "37");
}

TEST(CellText, NoUnitsDropsTheUnitOnly) {
  EXPECT_EQ(CellText(Number{82, 0}, "%", false), "82");
  EXPECT_EQ(CellText(Number{700, 2}, "W", false), "700.00");
}

TEST(CellText, MissingIsBracketedNaWithOrWithoutUnits) {
  EXPECT_EQ(CellText(Cell{}, "%", true), "[N/A]");
  EXPECT_EQ(CellText(Cell{}, "%", false), "[N/A]");
  EXPECT_EQ(CellText(std::string("P0"), "", true), "P0");
}

TEST(NvidiaTimestamp, LocalTimeWithMilliseconds) {
  testing::UseUtc();
  EXPECT_EQ(NvidiaTimestamp(testing::kCaptureTime), "2026/09/01 20:41:56.941");
  EXPECT_EQ(NvidiaTimestamp(1714557600.0), "2024/05/01 10:00:00.000");
  // 999.6 ms rounds into the next second rather than printing ".1000".
  EXPECT_EQ(NvidiaTimestamp(1714557600.9996), "2024/05/01 10:00:01.000");
}

TEST(Fields, AliasesFindTheSameField) {
  EXPECT_EQ(FindField("gpu_name"), FindField("name"));
  EXPECT_EQ(FindField("gpu_uuid"), FindField("uuid"));
  EXPECT_EQ(FindField("gpu_bus_id"), FindField("pci.bus_id"));
  EXPECT_EQ(FindField("clocks.sm"), FindField("clocks.current.sm"));
  EXPECT_EQ(FindField("clocks.mem"), FindField("clocks.current.memory"));
  EXPECT_EQ(FindField("clocks.sm")->name(), "clocks.current.sm");
  EXPECT_EQ(FindField("utilisation.gpu"), nullptr);
}

TEST(Fields, EveryNameIsUniqueAndEveryFieldHasTheReaderOfItsScope) {
  std::set<std::string_view> seen;
  for (const Field& f : AllFields()) {
    for (std::string_view n : f.names) EXPECT_TRUE(seen.insert(n).second) << "duplicate name " << n;
    EXPECT_EQ(f.sample != nullptr, f.scope == Scope::kSample) << f.name();
    EXPECT_EQ(f.gpu != nullptr, f.scope == Scope::kGpu) << f.name();
    EXPECT_EQ(f.host != nullptr, f.scope == Scope::kHost) << f.name();
    EXPECT_EQ(f.tree != nullptr, f.scope == Scope::kProc) << f.name();
  }
}

TEST(Fields, ReadGivesNaNeverZero) {
  telemetry::Sample s = testing::IdleSample();
  const telemetry::GpuSample& gpu = s.gpus[0];
  EXPECT_TRUE(std::holds_alternative<std::monostate>(FindField("fan.speed")->Read(s, &gpu)));
  // A reading of 0 is a value, not N/A.
  EXPECT_TRUE(std::holds_alternative<Number>(FindField("memory.used")->Read(s, &gpu)));
  // A GPU field on a row without a GPU, a tree field without a tree.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(FindField("utilization.gpu")->Read(s, nullptr)));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(FindField("proc.cpu")->Read(s, nullptr)));
  // Empty strings mean unknown.
  telemetry::GpuSample nameless = gpu;
  nameless.name.clear();
  EXPECT_TRUE(std::holds_alternative<std::monostate>(FindField("name")->Read(s, &nameless)));
}

TEST(Fields, TrainingThroughputIsNaUntilReported) {
  telemetry::Sample s = testing::IdleSample();
  s.tree = testing::BusyTree();
  for (const char* name : {"proc.samples_per_s", "proc.steps_per_s", "proc.data_wait"}) {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(FindField(name)->Read(s, nullptr))) << name;
  }
  s.tree->samples_per_s = 1234.56;
  s.tree->steps_per_s = 19.29;
  s.tree->data_wait_share = 0.413;
  auto text = [&](const char* name) {
    const Field* f = FindField(name);
    return CellText(f->Read(s, nullptr), f->unit, true);
  };
  EXPECT_EQ(text("proc.samples_per_s"), "1234.6");
  EXPECT_EQ(text("proc.steps_per_s"), "19.29");
  EXPECT_EQ(text("proc.data_wait"), "41.3 %");
  s.tree->samples_per_s = 0;
  EXPECT_EQ(text("proc.samples_per_s"), "0.0") << "a stalled command reads 0, not N/A";
}

TEST(Fields, GpmIsNaUntilTheGpuCountsIt) {
  telemetry::Sample s = testing::IdleSample();
  telemetry::GpuSample gpu = s.gpus[0];
  auto text = [&](const char* name) {
    const Field* f = FindField(name);
    return CellText(f->Read(s, &gpu), f->unit, true);
  };
  for (const char* name : {"gpm.sm_active", "gpm.sm_occupancy", "gpm.tensor_active", "gpm.dram_bw_util"}) {
    EXPECT_EQ(text(name), "[N/A]") << name;
  }
  gpu.gpm_sm_active_pct = 38.24;
  gpu.gpm_sm_occupancy_pct = 21.5;
  gpu.gpm_tensor_active_pct = 0;
  gpu.gpm_dram_bw_util_pct = 64.96;
  EXPECT_EQ(text("gpm.sm_active"), "38.2 %");
  EXPECT_EQ(text("gpm.sm_occupancy"), "21.5 %");
  EXPECT_EQ(text("gpm.tensor_active"), "0.0 %") << "no tensor work reads 0, not N/A";
  EXPECT_EQ(text("gpm.dram_bw_util"), "65.0 %");
}

TEST(Fields, MemoryIsWholeMiBRoundedDown) {
  telemetry::Sample s = testing::TwoGpuSample();
  Cell used = FindField("memory.used")->Read(s, &s.gpus[1]);
  EXPECT_EQ(CellText(used, "MiB", true), "5959 MiB");
}

TEST(Fields, ListingShowsNamesUnitsAndGroups) {
  std::string listing = FieldListing();
  EXPECT_NE(listing.find("GPU fields (--query-gpu)"), std::string::npos);
  EXPECT_NE(listing.find("\"clocks.current.sm\" or \"clocks.sm\" [MHz]"), std::string::npos);
  EXPECT_NE(listing.find("\"temperature.gpu\"\n"), std::string::npos);
  EXPECT_NE(listing.find("\"cpu.util\" [%]"), std::string::npos);
  EXPECT_NE(listing.find("\"proc.gpu.memory\" [MiB]"), std::string::npos);
}

}  // namespace
}  // namespace sat::monitor
