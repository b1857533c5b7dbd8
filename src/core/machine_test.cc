#include "core/machine.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "util/test_dir.h"

namespace sat::core {
namespace {

telemetry::Sample TwoGpus() {
  telemetry::Sample s;
  s.host.cpu_count = 12;
  s.host.mem_total_bytes = 64ull << 30;
  for (unsigned i : {0u, 1u}) {
    telemetry::GpuSample g;
    g.index = i;
    g.name = i == 0 ? "NVIDIA L4" : "NVIDIA H100 80GB HBM3";
    g.memory_total_bytes = (i == 0 ? 24ull : 80ull) << 30;
    s.gpus.push_back(g);
  }
  return s;
}

// A cpuinfo file with `text`, in a folder of this process's own (ctest runs each case as its own process, at once).
std::string CpuInfo(const std::string& text) {
  static const TempDir dir;
  std::string path = dir.File("cpuinfo");
  std::ofstream(path) << text;
  return path;
}

TEST(Machine, DescribesTheProbedGpuAndTheCpu) {
  const std::string cpuinfo = CpuInfo("processor\t: 0\nvendor_id\t: X\nmodel name\t:  Test CPU @ 3.00GHz \n");
  Machine m = DescribeMachine(TwoGpus(), 1, cpuinfo);
  EXPECT_EQ(m.cpu_count, 12u);
  EXPECT_EQ(m.cpu_model, "Test CPU @ 3.00GHz");
  EXPECT_GE(m.usable_cores, 1u);
  EXPECT_EQ(m.mem_total_bytes, 64ull << 30);
  EXPECT_EQ(m.gpu_index, 1);
  EXPECT_EQ(m.gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m.gpu_mem_total_bytes, 80ull << 30);
}

TEST(Machine, WithoutAGpuNothingOfOneIsFilledIn) {
  Machine m = DescribeMachine(TwoGpus(), -1, CpuInfo("no model line\n"));
  EXPECT_EQ(m.gpu_index, -1);
  EXPECT_TRUE(m.gpu_name.empty());
  EXPECT_FALSE(m.gpu_mem_total_bytes.has_value());
  EXPECT_TRUE(m.cpu_model.empty());
}

TEST(Machine, TheFingerprintChangesWithWhatSetsTheMeasurement) {
  const std::string cpuinfo = CpuInfo("model name : A\n");
  Machine a = DescribeMachine(TwoGpus(), 0, cpuinfo);
  Machine b = DescribeMachine(TwoGpus(), 1, cpuinfo);
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  EXPECT_EQ(a.Fingerprint(), DescribeMachine(TwoGpus(), 0, cpuinfo).Fingerprint());
  Machine fewer = a;
  fewer.usable_cores += 1;
  EXPECT_NE(a.Fingerprint(), fewer.Fingerprint());
}

}  // namespace
}  // namespace sat::core
