// The NVML loader against tests/fake_nvml, a library with NVML's C ABI: fake_nvml (a current driver) and
// fake_nvml_old (no _v2/_v3 entry points). The fake's readings are documented at the top of fake_nvml.cc.
#include "telemetry/nvml.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sat::telemetry {
namespace {

using ::testing::HasSubstr;

constexpr const char* kFake = SATURATE_FAKE_NVML;
constexpr const char* kFakeOld = SATURATE_FAKE_NVML_OLD;
constexpr uint64_t kMiB = 1ULL << 20;

class NvmlTest : public ::testing::Test {
 protected:
  void SetUp() override { ClearEnvironment(); }
  void TearDown() override { ClearEnvironment(); }

  static void ClearEnvironment() {
    for (const char* name : {"SATURATE_NVML_LIBRARY", "FAKE_NVML_DEVICES", "FAKE_NVML_NO_DRIVER", "FAKE_NVML_FAIL",
                             "FAKE_NVML_UNSUPPORTED", "FAKE_NVML_UTIL", "FAKE_NVML_PROCS",
                             "FAKE_NVML_GRAPHICS_PROCS", "FAKE_NVML_MEMORY_MIB", "FAKE_NVML_PROCS_DIR"}) {
      unsetenv(name);
    }
  }

  static std::unique_ptr<GpuBackend> Open(const std::string& path) {
    Result<std::unique_ptr<GpuBackend>> backend = OpenNvml(path);
    EXPECT_TRUE(backend) << backend.error().message;
    return backend.ok() ? *std::move(backend) : nullptr;
  }

  static std::string OpenError(const std::string& path) {
    Result<std::unique_ptr<GpuBackend>> backend = OpenNvml(path);
    EXPECT_FALSE(backend);
    return backend.ok() ? "" : backend.error().message;
  }

  // A process list in FAKE_NVML_PROCS's form: "pid:MiB,..." with "na" for unavailable memory.
  static std::string Describe(const std::vector<GpuProcess>& processes) {
    std::string text;
    for (const GpuProcess& p : processes) {
      if (!text.empty()) text += ",";
      text += std::to_string(p.pid) + ":" +
              (p.used_memory_bytes ? std::to_string(*p.used_memory_bytes / kMiB) : std::string("na"));
    }
    return text;
  }

  // Longer than NVML's GPM refresh interval (0.1 s), so the next sample closes a GPM interval.
  static void WaitGpmInterval() { std::this_thread::sleep_for(std::chrono::milliseconds(120)); }

  // A sample of device `index` that closes a GPM interval opened by a sample just before.
  static GpuSample SampleAfterGpmInterval(GpuBackend& backend, unsigned index) {
    SampleOf(backend, index);
    WaitGpmInterval();
    return SampleOf(backend, index);
  }

  static bool NoGpm(const GpuSample& s) {
    return !s.gpm_sm_active_pct && !s.gpm_sm_occupancy_pct && !s.gpm_tensor_active_pct && !s.gpm_dram_bw_util_pct;
  }

  // The only sample of device `index`.
  static GpuSample SampleOf(GpuBackend& backend, unsigned index) {
    std::vector<GpuSample> samples = backend.Sample({index});
    EXPECT_EQ(samples.size(), 1u);
    return samples.empty() ? GpuSample{} : samples[0];
  }
};

TEST_F(NvmlTest, ReadsEveryField) {
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  ASSERT_EQ(backend->DeviceCount(), 2u);
  std::vector<GpuSample> samples = backend->Sample({});
  ASSERT_EQ(samples.size(), 2u);

  const GpuSample& s = samples[1];
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.name, "Fake NVIDIA H200");
  EXPECT_EQ(s.uuid, "GPU-fa4e0000-0000-4000-8000-000000000001");
  EXPECT_EQ(s.pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(s.driver_version, "550.54.15");
  EXPECT_EQ(s.util_gpu_pct, 41);
  EXPECT_EQ(s.util_memory_pct, 20);
  EXPECT_EQ(s.memory_total_bytes, 143771 * kMiB);
  // nvmlDeviceGetMemoryInfo_v2: used without the driver's 479 MiB reserve, as nvidia-smi's memory.used.
  EXPECT_EQ(s.memory_used_bytes, 2048 * kMiB);
  EXPECT_EQ(s.memory_free_bytes, (143771 - 479 - 2048) * kMiB);
  EXPECT_EQ(s.temperature_c, 36);
  EXPECT_EQ(s.power_draw_w, 251);
  EXPECT_EQ(s.power_limit_w, 690);  // the enforced limit, not the management limit
  EXPECT_EQ(s.clock_sm_mhz, 1979);
  EXPECT_EQ(s.clock_memory_mhz, 2619);
  EXPECT_EQ(s.pcie_link_gen, 5u);
  EXPECT_EQ(s.pcie_link_width, 16u);
  EXPECT_EQ(s.pcie_tx_bytes_per_s, 1001 * 1024);
  EXPECT_EQ(s.pcie_rx_bytes_per_s, 2001 * 1024);
  EXPECT_EQ(s.pstate, 1u);
  EXPECT_EQ(s.fan_pct, 31);
  EXPECT_TRUE(s.processes.empty());

  EXPECT_EQ(samples[0].index, 0u);
  EXPECT_EQ(samples[0].pci_bus_id, "00000000:18:00.0");
}

TEST_F(NvmlTest, DescriptionNamesLibraryAndVersions) {
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->Description(), std::string(kFake) + " (NVML 12.550.54.15, driver 550.54.15)");
}

TEST_F(NvmlTest, UnsupportedFieldsAreAbsentNotZero) {
  setenv("FAKE_NVML_UNSUPPORTED",
         "name,uuid,pci,util,memory,temperature,power,enforced_power_limit,power_limit,clocks,pcie_link,"
         "pcie_throughput,pstate,fan,processes",
         1);
  setenv("FAKE_NVML_PROCS", "100:10", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  GpuSample s = SampleOf(*backend, 0);
  EXPECT_EQ(s.name, "");
  EXPECT_EQ(s.uuid, "");
  EXPECT_EQ(s.pci_bus_id, "");
  EXPECT_EQ(s.driver_version, "550.54.15");
  EXPECT_EQ(s.util_gpu_pct, std::nullopt);
  EXPECT_EQ(s.util_memory_pct, std::nullopt);
  EXPECT_EQ(s.memory_total_bytes, std::nullopt);
  EXPECT_EQ(s.memory_used_bytes, std::nullopt);
  EXPECT_EQ(s.memory_free_bytes, std::nullopt);
  EXPECT_EQ(s.temperature_c, std::nullopt);
  EXPECT_EQ(s.power_draw_w, std::nullopt);
  EXPECT_EQ(s.power_limit_w, std::nullopt);
  EXPECT_EQ(s.clock_sm_mhz, std::nullopt);
  EXPECT_EQ(s.clock_memory_mhz, std::nullopt);
  EXPECT_EQ(s.pcie_link_gen, std::nullopt);
  EXPECT_EQ(s.pcie_link_width, std::nullopt);
  EXPECT_EQ(s.pcie_tx_bytes_per_s, std::nullopt);
  EXPECT_EQ(s.pcie_rx_bytes_per_s, std::nullopt);
  EXPECT_EQ(s.pstate, std::nullopt);
  EXPECT_EQ(s.fan_pct, std::nullopt);
  EXPECT_TRUE(s.processes.empty());
}

TEST_F(NvmlTest, SomeUnsupportedFieldsLeaveTheOthers) {
  setenv("FAKE_NVML_UNSUPPORTED", "fan,power,pcie_throughput", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  GpuSample s = SampleOf(*backend, 0);
  EXPECT_EQ(s.fan_pct, std::nullopt);
  EXPECT_EQ(s.power_draw_w, std::nullopt);
  EXPECT_EQ(s.pcie_tx_bytes_per_s, std::nullopt);
  EXPECT_EQ(s.power_limit_w, 690);
  EXPECT_EQ(s.temperature_c, 35);
  EXPECT_EQ(s.pcie_link_gen, 5u);
}

TEST_F(NvmlTest, PowerLimitFallsBackToManagementLimit) {
  setenv("FAKE_NVML_UNSUPPORTED", "enforced_power_limit", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(SampleOf(*backend, 0).power_limit_w, 700);
}

TEST_F(NvmlTest, ProcessListsMergeByPidAndKeepUnavailableMemoryAbsent) {
  setenv("FAKE_NVML_PROCS", "4321:na,1234:512", 1);
  setenv("FAKE_NVML_GRAPHICS_PROCS", "1234:512,777:64", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  std::vector<GpuProcess> processes = SampleOf(*backend, 0).processes;
  EXPECT_EQ(Describe(processes), "777:64,1234:512,4321:na");
  EXPECT_EQ(processes[2].used_memory_bytes, std::nullopt);
  EXPECT_TRUE(SampleOf(*backend, 1).processes.empty());
}

TEST_F(NvmlTest, ProcessBufferGrowsPastItsFirstSize) {
  std::string procs;
  for (int pid = 1000; pid < 1150; ++pid) procs += std::to_string(pid) + ":" + std::to_string(pid - 999) + ",";
  setenv("FAKE_NVML_PROCS", procs.c_str(), 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(Describe(SampleOf(*backend, 0).processes) + ",", procs);
}

// The stand-in's memory as processes use it (bench/gpu/fake_device.py): a smaller device, and processes read from
// a folder at every query, so memory used and the process list follow what they write; a process that ended holds
// nothing.
TEST_F(NvmlTest, ProcessesFromAFolderFollowTheirFiles) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fake-nvml-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const pid_t ended = fork();
  if (ended == 0) _exit(0);
  waitpid(ended, nullptr, 0);
  auto write = [&](pid_t pid, const char* mib) { std::ofstream(dir / std::to_string(pid)) << mib; };
  write(getpid(), "300");
  write(ended, "100");
  std::ofstream(dir / "notes") << "7";
  setenv("FAKE_NVML_MEMORY_MIB", "8192", 1);
  setenv("FAKE_NVML_PROCS_DIR", dir.c_str(), 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  GpuSample s = SampleOf(*backend, 0);
  EXPECT_EQ(s.memory_total_bytes, 8192 * kMiB);
  EXPECT_EQ(s.memory_used_bytes, (1024 + 300) * kMiB);
  EXPECT_EQ(s.memory_free_bytes, (8192 - 479 - 1024 - 300) * kMiB);
  EXPECT_EQ(Describe(s.processes), std::to_string(getpid()) + ":300");
  write(getpid(), "2000");
  EXPECT_EQ(SampleOf(*backend, 0).memory_used_bytes, (1024 + 2000) * kMiB);
  EXPECT_EQ(SampleOf(*backend, 1).memory_used_bytes, 2048 * kMiB) << "the folder's processes are on device 0";
  std::filesystem::remove_all(dir);
}

TEST_F(NvmlTest, MemorySmallerThanTheStandInsOwnUseIsRefused) {
  setenv("FAKE_NVML_MEMORY_MIB", "2000", 1);
  EXPECT_THAT(OpenError(kFake), HasSubstr("FAKE_NVML_MEMORY_MIB"));
}

// fake_nvml_old exports only the unversioned names, whose process records are 16 bytes (v1). Reading them
// with the 24-byte layout would shift every record after the first.
TEST_F(NvmlTest, OldLibraryUsesUnversionedEntryPointsAndTheirRecords) {
  setenv("FAKE_NVML_PROCS", "11:100,22:200,33:na", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFakeOld);
  ASSERT_NE(backend, nullptr);
  ASSERT_EQ(backend->DeviceCount(), 2u);
  GpuSample s = SampleOf(*backend, 1);
  EXPECT_EQ(s.pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(s.util_gpu_pct, 41);
  EXPECT_EQ(s.power_limit_w, 700);  // no nvmlDeviceGetEnforcedPowerLimit: the management limit
  EXPECT_EQ(s.pcie_tx_bytes_per_s, std::nullopt);  // no nvmlDeviceGetPcieThroughput
  EXPECT_EQ(s.pcie_link_width, 16u);
  // No _v2 memory call: the original counts the reserve as used, the only figure such a driver has.
  EXPECT_EQ(s.memory_used_bytes, (2048 + 479) * kMiB);
  EXPECT_EQ(s.memory_free_bytes, (143771 - 479 - 2048) * kMiB);

  EXPECT_EQ(Describe(SampleOf(*backend, 0).processes), "11:100,22:200,33:na");
}

// A driver without nvmlDeviceGetMemoryInfo_v2 in its kernel module: the original call, reserve included.
TEST_F(NvmlTest, MemoryFallsBackToTheOriginalCall) {
  setenv("FAKE_NVML_FAIL", "nvmlDeviceGetMemoryInfo_v2", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  GpuSample s = SampleOf(*backend, 1);
  EXPECT_EQ(s.memory_used_bytes, (2048 + 479) * kMiB);
  EXPECT_EQ(s.memory_total_bytes, 143771 * kMiB);
}

// An exported versioned name that the driver does not know answers FUNCTION_NOT_FOUND; the next older one
// is used instead.
TEST_F(NvmlTest, FunctionNotFoundFallsBackToOlderName) {
  setenv("FAKE_NVML_FAIL",
         "nvmlInit_v2,nvmlDeviceGetCount_v2,nvmlDeviceGetPciInfo_v3,nvmlDeviceGetComputeRunningProcesses_v3,"
         "nvmlDeviceGetComputeRunningProcesses_v2",
         1);
  setenv("FAKE_NVML_PROCS", "11:100,22:200", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  ASSERT_EQ(backend->DeviceCount(), 2u);
  for (int round = 0; round < 2; ++round) {
    GpuSample s = SampleOf(*backend, 0);
    EXPECT_EQ(s.pci_bus_id, "00000000:18:00.0");
    EXPECT_EQ(Describe(s.processes), "11:100,22:200");
  }
}

TEST_F(NvmlTest, FieldWithNoWorkingNameIsAbsent) {
  setenv("FAKE_NVML_FAIL", "nvmlDeviceGetFanSpeed", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(SampleOf(*backend, 0).fan_pct, std::nullopt);
  EXPECT_EQ(SampleOf(*backend, 0).temperature_c, 35);
}

TEST_F(NvmlTest, NoDriverIsAPlainError) {
  setenv("FAKE_NVML_NO_DRIVER", "1", 1);
  std::string message = OpenError(kFake);
  EXPECT_THAT(message, HasSubstr("no NVIDIA driver loaded"));
  EXPECT_THAT(message, HasSubstr(kFake));
  EXPECT_THAT(message, HasSubstr("Driver Not Loaded"));
}

TEST_F(NvmlTest, InitFailureCarriesNvmlsReason) {
  setenv("FAKE_NVML_PROCS", "not-a-process", 1);
  EXPECT_THAT(OpenError(kFake), HasSubstr("NVML could not start"));
  EXPECT_THAT(OpenError(kFake), HasSubstr("FAKE_NVML_PROCS entry 'not-a-process'"));
}

TEST_F(NvmlTest, MissingLibraryNamesThePath) {
  std::string message = OpenError("/nonexistent/libnvidia-ml.so.1");
  EXPECT_THAT(message, HasSubstr("no NVIDIA driver found (/nonexistent/libnvidia-ml.so.1: "));
}

TEST_F(NvmlTest, LibraryWithoutNvmlIsRejected) {
  EXPECT_THAT(OpenError("libm.so.6"), HasSubstr("libm.so.6 is not a usable NVML library"));
}

TEST_F(NvmlTest, EnvironmentChoosesTheLibrary) {
  EXPECT_EQ(NvmlLibraryPath(), "libnvidia-ml.so.1");

  setenv("SATURATE_NVML_LIBRARY", kFakeOld, 1);
  EXPECT_EQ(NvmlLibraryPath(), kFakeOld);
  Result<std::unique_ptr<GpuBackend>> backend = OpenNvml();
  ASSERT_TRUE(backend) << backend.error().message;
  EXPECT_THAT((*backend)->Description(), HasSubstr(kFakeOld));

  setenv("SATURATE_NVML_LIBRARY", "/nonexistent/libnvml.so", 1);
  Result<std::unique_ptr<GpuBackend>> missing = OpenNvml();
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/libnvml.so"));
}

TEST_F(NvmlTest, SamplesTheGivenDevicesInTheGivenOrder) {
  setenv("FAKE_NVML_DEVICES", "4", 1);
  setenv("FAKE_NVML_UTIL", "90,10", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  ASSERT_EQ(backend->DeviceCount(), 4u);

  std::vector<GpuSample> samples = backend->Sample({3, 0, 2});
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].index, 3u);
  EXPECT_EQ(samples[0].uuid, "GPU-fa4e0000-0000-4000-8000-000000000003");
  EXPECT_EQ(samples[0].util_gpu_pct, 10);
  EXPECT_EQ(samples[1].index, 0u);
  EXPECT_EQ(samples[1].pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(samples[1].util_gpu_pct, 90);
  EXPECT_EQ(samples[2].index, 2u);
  EXPECT_EQ(samples[2].fan_pct, 32);

  EXPECT_TRUE(backend->Sample({4}).empty());
  EXPECT_EQ(backend->Sample({}).size(), 4u);
}

TEST_F(NvmlTest, NoDevicesIsNotAnError) {
  setenv("FAKE_NVML_DEVICES", "0", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->DeviceCount(), 0u);
  EXPECT_TRUE(backend->Sample({}).empty());
}

// GPM needs two samples at least 0.1 s apart: the first sample has no values, nor does one taken sooner; the
// fake's values of device i are SM 60+i, occupancy 30+i, tensor 9+i, DRAM 20+i.
TEST_F(NvmlTest, GpmReadsOverAnIntervalOfTwoSamples) {
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  EXPECT_TRUE(NoGpm(SampleOf(*backend, 1)));
  EXPECT_TRUE(NoGpm(SampleOf(*backend, 1)));  // sooner than 0.1 s: still no interval
  WaitGpmInterval();
  GpuSample s = SampleOf(*backend, 1);
  EXPECT_EQ(s.gpm_sm_active_pct, 61);
  EXPECT_EQ(s.gpm_sm_occupancy_pct, 31);
  EXPECT_EQ(s.gpm_tensor_active_pct, 10);
  EXPECT_EQ(s.gpm_dram_bw_util_pct, 21);
  // A sample sooner than 0.1 s after that one repeats its interval's values.
  EXPECT_EQ(SampleOf(*backend, 1).gpm_sm_active_pct, 61);
  WaitGpmInterval();
  EXPECT_EQ(SampleOf(*backend, 1).gpm_tensor_active_pct, 10);
}

TEST_F(NvmlTest, GpmOfEachDeviceIsItsOwn) {
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  backend->Sample({});
  WaitGpmInterval();
  std::vector<GpuSample> samples = backend->Sample({});
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].gpm_sm_active_pct, 60);
  EXPECT_EQ(samples[1].gpm_sm_active_pct, 61);
}

// No GPM reads absent (N/A), never 0, and the other fields still read: before Hopper (nvmlGpmQueryDeviceSupport
// says no), on a driver from before GPM (no nvmlGpm* entry points), and with an entry point the kernel driver
// does not know (FUNCTION_NOT_FOUND).
TEST_F(NvmlTest, GpmAbsentWithoutSupport) {
  struct Case {
    const char* library;
    const char* variable;
    const char* value;
  };
  for (const Case& c : {Case{kFake, "FAKE_NVML_UNSUPPORTED", "gpm"}, Case{kFakeOld, "FAKE_NVML_DEVICES", "2"},
                        Case{kFake, "FAKE_NVML_FAIL", "nvmlGpmMetricsGet"}}) {
    ClearEnvironment();
    setenv(c.variable, c.value, 1);
    std::unique_ptr<GpuBackend> backend = Open(c.library);
    ASSERT_NE(backend, nullptr);
    GpuSample s = SampleAfterGpmInterval(*backend, 0);
    EXPECT_TRUE(NoGpm(s)) << c.library << " " << c.variable << "=" << c.value;
    EXPECT_EQ(s.util_gpu_pct, 40);
  }
}

TEST_F(NvmlTest, GpmMetricTheGpuDoesNotCountIsAbsentAlone) {
  setenv("FAKE_NVML_UNSUPPORTED", "gpm_tensor", 1);
  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  GpuSample s = SampleAfterGpmInterval(*backend, 0);
  EXPECT_EQ(s.gpm_tensor_active_pct, std::nullopt);
  EXPECT_EQ(s.gpm_sm_active_pct, 60);
  EXPECT_EQ(s.gpm_dram_bw_util_pct, 20);
}

// The test holds its own reference to the library, so the fake's state outlives the backend's dlclose.
TEST_F(NvmlTest, DestroyingTheBackendShutsNvmlDown) {
  void* library = dlopen(kFake, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto count = reinterpret_cast<int (*)(unsigned int*)>(dlsym(library, "nvmlDeviceGetCount_v2"));
  ASSERT_NE(count, nullptr);
  unsigned int devices = 0;
  constexpr int kUninitialized = 1;  // NVML_ERROR_UNINITIALIZED

  std::unique_ptr<GpuBackend> backend = Open(kFake);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(count(&devices), 0);
  backend.reset();
  EXPECT_EQ(count(&devices), kUninitialized);
  dlclose(library);
}

}  // namespace
}  // namespace sat::telemetry
