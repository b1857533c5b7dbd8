// A stand-in for libnvidia-ml.so.1 on machines without an NVIDIA GPU. It exports the NVML C entry points
// saturate uses, with nvml.h's ABI, and invents deterministic readings, so tests drive saturate's real loader
// (src/telemetry/nvml.cc) through SATURATE_NVML_LIBRARY. It stands in for the hardware only.
//
// Built twice from this file:
//   fake_nvml      a current driver: versioned (_v2/_v3) and unversioned names.
//   fake_nvml_old  (-DFAKE_NVML_OLD) an old driver: no _v2/_v3 names, which take the original PCI and process
//                  records, no nvmlDeviceGetEnforcedPowerLimit, nvmlDeviceGetPcieThroughput or
//                  nvmlDeviceGetTotalEnergyConsumption, and no GPM (nvmlGpm*) entry points.
//
// Behaviour, from the environment read when nvmlInit* first initialises (again after the last nvmlShutdown):
//   FAKE_NVML_DEVICES=N              device count (default 2, at most 64)
//   FAKE_NVML_NO_DRIVER=1            nvmlInit* fails with NVML_ERROR_DRIVER_NOT_LOADED
//   FAKE_NVML_FAIL=sym1,sym2         those entry points answer NVML_ERROR_FUNCTION_NOT_FOUND (exported, but
//                                    unknown to the kernel driver, as when the library is newer than it)
//   FAKE_NVML_UNSUPPORTED=f1,f2      those fields answer NVML_ERROR_NOT_SUPPORTED; fields: name uuid pci util
//                                    memory temperature power enforced_power_limit power_limit energy clocks
//                                    pcie_link pcie_throughput pstate fan processes; and for GPM: gpm (the
//                                    device is not GPM-capable: nvmlGpmQueryDeviceSupport says no, as before
//                                    Hopper), gpm_sm_active gpm_sm_occupancy gpm_tensor gpm_dram (that metric
//                                    answers NVML_ERROR_NOT_SUPPORTED in its nvmlGpmMetric_t)
//   FAKE_NVML_UTIL=u0,u1,...         GPU utilisation % per device (the last repeats); default 40 + index
//   FAKE_NVML_PROCS=pid:MiB,...      compute processes on device 0; MiB "na" is NVML_VALUE_NOT_AVAILABLE
//   FAKE_NVML_GRAPHICS_PROCS=...     graphics processes on device 0, same form
//   FAKE_NVML_MEMORY_MIB=N           every device's total memory in MiB (default 143771); it must exceed what
//                                    device i uses before any process, (i+1) GiB plus the 479 MiB reserve
//   FAKE_NVML_PROCS_DIR=DIR          more compute processes on device 0, read again at every query: a file DIR/PID
//                                    holding a number of MiB is process PID using that much, while PID is alive
//                                    (a process that ended frees its memory, as the driver does). Processes
//                                    that stand in for GPU work write there (bench/gpu/fake_device.py), so
//                                    memory used, free memory and the process list follow them.
// A malformed variable makes nvmlInit* fail with NVML_ERROR_UNKNOWN; nvmlErrorString then says why.
//
// Readings of device i: "Fake NVIDIA H200", UUID GPU-fa4e0000-0000-4000-8000-<i as 12 hex digits>, PCI
// 00000000:<0x18+i>:00.0, memory total 143771 MiB (or FAKE_NVML_MEMORY_MIB) and used (i+1) GiB plus its processes' memory (the original
// nvmlDeviceGetMemoryInfo adds the driver's 479 MiB reserve to used, as a real driver does; _v2 reports it apart), memory
// utilisation half the GPU's, 35+i C, 250+i W drawn (and so an energy counter of 250+i W times the seconds of
// CLOCK_MONOTONIC: every interval's energy is that power times its length), enforced limit 690 W, management
// limit 700 W, SM clock
// 1980-i MHz, memory clock 2619 MHz, PCIe gen 5 x16, TX 1000+i KB/s, RX 2000+i KB/s, P<i mod 16>, fan 30+i %.
// GPM metrics between two samples of device i: SM activity 60+i %, SM occupancy 30+i %, tensor activity 9+i %,
// DRAM bandwidth 20+i %; nvmlGpmMetricsGet refuses (NVML_ERROR_INVALID_ARGUMENT) a pair whose samples are not
// both filled, are of different devices, or whose second was not taken after the first.
// Single-threaded, like the tests that load it.

#include <dirent.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// ---- nvml.h's ABI, as far as saturate uses it ----

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

enum : nvmlReturn_t {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
const unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
constexpr unsigned long long kReservedMiB = 479;  // what an H100's driver 580 reserves
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
// Filled by nvmlDeviceGetPciInfo and _v2.
typedef struct {
  char busId[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId, reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_v1_t;
// Filled by nvmlDeviceGetPciInfo_v3.
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;

struct nvmlDevice_st {
  unsigned index;
};

// GPM, as nvml.h of CUDA 12 declares it.
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;
enum { NVML_GPM_METRIC_MAX = 98, NVML_GPM_METRICS_GET_VERSION = 1, NVML_GPM_SUPPORT_VERSION = 1 };
enum {
  NVML_GPM_METRIC_SM_UTIL = 2,
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
};
typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char *shortName, *longName, *unit;
  } metricInfo;
} nvmlGpmMetric_t;
typedef struct {
  unsigned int version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
typedef struct {
  unsigned int version, isSupportedDevice;
} nvmlGpmSupport_t;

// What a GPM sample buffer holds here: which device it read, and when (a counter of nvmlGpmSampleGet calls).
struct nvmlGpmSample_st {
  bool filled = false;
  unsigned device = 0;
  unsigned long long sequence = 0;
};

namespace {

constexpr unsigned kMaxDevices = 64;
constexpr unsigned long long kMiB = 1ULL << 20;
constexpr unsigned long long kMemoryTotalMiB = 143771;
constexpr unsigned kPciDeviceId = 0x233510DE;  // H200 device id, NVIDIA vendor id

struct FakeProcess {
  unsigned pid;
  unsigned long long used_bytes;
};

struct Config {
  unsigned devices = 2;
  bool no_driver = false;
  std::set<std::string> failing, unsupported;
  std::vector<unsigned> util;
  std::vector<FakeProcess> compute, graphics;
  unsigned long long memory_total_mib = kMemoryTotalMiB;
  std::string procs_dir;  // FAKE_NVML_PROCS_DIR; empty: none
  std::string error;  // why the environment was rejected; empty when it was not
};

Config g_config;
int g_init_count = 0;
[[maybe_unused]] unsigned long long g_gpm_samples = 0;  // nvmlGpmSampleGet calls so far
nvmlDevice_st g_devices[kMaxDevices];

std::vector<std::string> EnvList(const char* name) {
  std::vector<std::string> items;
  const char* value = std::getenv(name);
  std::stringstream in(value ? value : "");
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

bool ParseNumber(const std::string& text, unsigned long long& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

std::vector<FakeProcess> ParseProcesses(const char* name, std::string& error) {
  std::vector<FakeProcess> processes;
  for (const std::string& item : EnvList(name)) {
    size_t colon = item.find(':');
    unsigned long long pid = 0, mib = 0;
    std::string memory = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (!ParseNumber(item.substr(0, colon), pid) || (memory != "na" && !ParseNumber(memory, mib))) {
      error = std::string("fake_nvml: ") + name + " entry '" + item + "' is not pid:MiB or pid:na";
      continue;
    }
    processes.push_back({static_cast<unsigned>(pid), memory == "na" ? NVML_VALUE_NOT_AVAILABLE : mib * kMiB});
  }
  return processes;
}

Config ReadConfig() {
  Config config;
  const char* devices = std::getenv("FAKE_NVML_DEVICES");
  unsigned long long count = 0;
  if (devices != nullptr && (!ParseNumber(devices, count) || count > kMaxDevices)) {
    config.error = "fake_nvml: FAKE_NVML_DEVICES must be a number from 0 to 64";
  } else if (devices != nullptr) {
    config.devices = static_cast<unsigned>(count);
  }
  const char* no_driver = std::getenv("FAKE_NVML_NO_DRIVER");
  config.no_driver = no_driver != nullptr && std::strcmp(no_driver, "1") == 0;
  for (const std::string& symbol : EnvList("FAKE_NVML_FAIL")) config.failing.insert(symbol);
  for (const std::string& field : EnvList("FAKE_NVML_UNSUPPORTED")) config.unsupported.insert(field);
  for (const std::string& item : EnvList("FAKE_NVML_UTIL")) {
    unsigned long long pct = 0;
    if (!ParseNumber(item, pct) || pct > 100) config.error = "fake_nvml: FAKE_NVML_UTIL entries must be 0..100";
    config.util.push_back(static_cast<unsigned>(pct));
  }
  config.compute = ParseProcesses("FAKE_NVML_PROCS", config.error);
  config.graphics = ParseProcesses("FAKE_NVML_GRAPHICS_PROCS", config.error);
  if (const char* memory = std::getenv("FAKE_NVML_MEMORY_MIB")) {
    unsigned long long mib = 0;
    if (!ParseNumber(memory, mib) || mib <= config.devices * 1024ULL + kReservedMiB) {
      config.error = "fake_nvml: FAKE_NVML_MEMORY_MIB must be a number of MiB above what the last device uses "
                     "before any process ((devices) GiB + 479 MiB)";
    } else {
      config.memory_total_mib = mib;
    }
  }
  if (const char* dir = std::getenv("FAKE_NVML_PROCS_DIR")) config.procs_dir = dir;
  return config;
}

nvmlReturn_t Init(const char* symbol) {
  if (g_init_count == 0) g_config = ReadConfig();
  if (g_config.failing.count(symbol)) return NVML_ERROR_FUNCTION_NOT_FOUND;
  if (g_config.no_driver) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (!g_config.error.empty()) return NVML_ERROR_UNKNOWN;
  for (unsigned i = 0; i < kMaxDevices; ++i) g_devices[i].index = i;
  ++g_init_count;
  return NVML_SUCCESS;
}

// The checks every entry point starts with (other than nvmlInit*): initialised, not made to fail.
nvmlReturn_t Enter(const char* symbol) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (g_config.failing.count(symbol)) return NVML_ERROR_FUNCTION_NOT_FOUND;
  return NVML_SUCCESS;
}

// Enter() for device queries: also a handle this library gave out, an output pointer, a supported field.
nvmlReturn_t EnterDevice(const char* symbol, nvmlDevice_t device, const void* out, const char* field) {
  if (nvmlReturn_t rc = Enter(symbol)) return rc;
  std::less<const nvmlDevice_st*> before;  // a total order, even for pointers from elsewhere
  if (before(device, g_devices) || !before(device, g_devices + g_config.devices) || out == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (g_config.unsupported.count(field)) return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

nvmlReturn_t Count(const char* symbol, unsigned int* count) {
  if (nvmlReturn_t rc = Enter(symbol)) return rc;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = g_config.devices;
  return NVML_SUCCESS;
}

nvmlReturn_t Handle(const char* symbol, unsigned int index, nvmlDevice_t* device) {
  if (nvmlReturn_t rc = Enter(symbol)) return rc;
  if (index >= g_config.devices || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_devices[index];
  return NVML_SUCCESS;
}

// A device query whose answer is one number, `value(device index)`; nullopt stands for an enum argument
// this fake does not know.
template <class T, class Value>
nvmlReturn_t Answer(const char* symbol, nvmlDevice_t device, const char* field, T* out, Value value) {
  if (nvmlReturn_t rc = EnterDevice(symbol, device, out, field)) return rc;
  std::optional<unsigned> answer = value(device->index);
  if (!answer) return NVML_ERROR_INVALID_ARGUMENT;
  *out = static_cast<T>(*answer);
  return NVML_SUCCESS;
}

nvmlReturn_t CopyString(const std::string& value, char* out, unsigned int length) {
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

unsigned Util(unsigned index) {
  if (g_config.util.empty()) return 40 + index;
  return g_config.util[index < g_config.util.size() ? index : g_config.util.size() - 1];
}

enum class Kind { kCompute, kGraphics };

// The processes FAKE_NVML_PROCS_DIR names: each file whose name is the pid of a live process, holding its MiB.
std::vector<FakeProcess> DirProcesses() {
  std::vector<FakeProcess> processes;
  DIR* dir = g_config.procs_dir.empty() ? nullptr : opendir(g_config.procs_dir.c_str());
  if (dir == nullptr) return processes;
  while (const dirent* entry = readdir(dir)) {
    unsigned long long pid = 0, mib = 0;
    if (!ParseNumber(entry->d_name, pid) || pid == 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) continue;
    std::ifstream in(g_config.procs_dir + "/" + entry->d_name);
    std::string text;
    if (!(in >> text) || !ParseNumber(text, mib)) continue;
    processes.push_back({static_cast<unsigned>(pid), mib * kMiB});
  }
  closedir(dir);
  return processes;
}

std::vector<FakeProcess> Processes(unsigned index, Kind kind) {
  if (index != 0) return {};
  if (kind == Kind::kGraphics) return g_config.graphics;
  std::vector<FakeProcess> list = g_config.compute;
  for (const FakeProcess& p : DirProcesses()) list.push_back(p);
  return list;
}

unsigned long long UsedBytes(unsigned index) {
  unsigned long long used = (index + 1) * 1024 * kMiB;
  for (Kind kind : {Kind::kCompute, Kind::kGraphics}) {
    for (const FakeProcess& p : Processes(index, kind)) {
      if (p.used_bytes != NVML_VALUE_NOT_AVAILABLE) used += p.used_bytes;
    }
  }
  return used;
}

template <class Record>
nvmlReturn_t FillPci(const char* symbol, nvmlDevice_t device, Record* pci, char* legacy_bus_id) {
  if (nvmlReturn_t rc = EnterDevice(symbol, device, pci, "pci")) return rc;
  *pci = Record{};
  pci->domain = 0;
  pci->bus = 0x18 + device->index;
  pci->device = 0;
  pci->pciDeviceId = kPciDeviceId;
  std::snprintf(legacy_bus_id, 16, "%04X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
  return NVML_SUCCESS;
}

// NVML's MIG fields outside MIG mode; the v1 record has none.
void SetNoMig(nvmlProcessInfo_v1_t&) {}
[[maybe_unused]] void SetNoMig(nvmlProcessInfo_v2_t& record) { record.gpuInstanceId = record.computeInstanceId = ~0u; }

template <class Record>
nvmlReturn_t ListProcesses(const char* symbol, nvmlDevice_t device, unsigned int* count, Record* infos, Kind kind) {
  if (nvmlReturn_t rc = EnterDevice(symbol, device, count, "processes")) return rc;
  const std::vector<FakeProcess> list = Processes(device->index, kind);
  if (*count < list.size()) {
    *count = static_cast<unsigned int>(list.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (infos == nullptr && !list.empty()) return NVML_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < list.size(); ++i) {
    Record record{};
    record.pid = list[i].pid;
    record.usedGpuMemory = list[i].used_bytes;
    SetNoMig(record);
    infos[i] = record;
  }
  *count = static_cast<unsigned int>(list.size());
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

// ---- Library ----

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument Version Mismatch";
    case NVML_ERROR_UNKNOWN: return g_config.error.empty() ? "Unknown Error" : g_config.error.c_str();
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlInit(void) { return Init(__func__); }

nvmlReturn_t nvmlShutdown(void) {
  if (nvmlReturn_t rc = Enter(__func__)) return rc;
  --g_init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (nvmlReturn_t rc = Enter(__func__)) return rc;
  return CopyString("550.54.15", version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  if (nvmlReturn_t rc = Enter(__func__)) return rc;
  return CopyString("12.550.54.15", version, length);
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return Count(__func__, count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return Handle(__func__, index, device);
}

// ---- Identity ----

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, name, "name")) return rc;
  return CopyString("Fake NVIDIA H200", name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, uuid, "uuid")) return rc;
  char text[64];
  std::snprintf(text, sizeof text, "GPU-fa4e0000-0000-4000-8000-%012x", device->index);
  return CopyString(text, uuid, length);
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_v1_t* pci) {
  return FillPci(__func__, device, pci, pci ? pci->busId : nullptr);
}

// ---- Readings ----

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, utilization, "util")) return rc;
  utilization->gpu = Util(device->index);
  utilization->memory = Util(device->index) / 2;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, memory, "memory")) return rc;
  memory->total = g_config.memory_total_mib * kMiB;
  memory->used = UsedBytes(device->index) + kReservedMiB * kMiB;
  memory->free = memory->used < memory->total ? memory->total - memory->used : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* celsius) {
  return Answer(__func__, device, "temperature", celsius, [sensor](unsigned i) -> std::optional<unsigned> {
    if (sensor != NVML_TEMPERATURE_GPU) return std::nullopt;
    return 35 + i;
  });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  return Answer(__func__, device, "power", milliwatts, [](unsigned i) { return 250000 + 1000 * i; });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* milliwatts) {
  return Answer(__func__, device, "power_limit", milliwatts, [](unsigned) { return 700000u; });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* mhz) {
  return Answer(__func__, device, "clocks", mhz, [type](unsigned i) -> std::optional<unsigned> {
    if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) return 1980 - i;
    if (type == NVML_CLOCK_MEM) return 2619;
    return std::nullopt;
  });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* generation) {
  return Answer(__func__, device, "pcie_link", generation, [](unsigned) { return 5u; });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* lanes) {
  return Answer(__func__, device, "pcie_link", lanes, [](unsigned) { return 16u; });
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, int* pstate) {
  return Answer(__func__, device, "pstate", pstate, [](unsigned i) { return i % 16; });
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* percent) {
  return Answer(__func__, device, "fan", percent, [](unsigned i) { return 30 + i; });
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  return ListProcesses(__func__, device, count, infos, Kind::kCompute);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                   nvmlProcessInfo_v1_t* infos) {
  return ListProcesses(__func__, device, count, infos, Kind::kGraphics);
}

// ---- Entry points a current driver adds ----
#ifndef FAKE_NVML_OLD

nvmlReturn_t nvmlInit_v2(void) { return Init(__func__); }

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, memory, "memory")) return rc;
  if (memory->version != (sizeof(nvmlMemory_v2_t) | (2u << 24))) return NVML_ERROR_INVALID_ARGUMENT;
  memory->total = g_config.memory_total_mib * kMiB;
  memory->reserved = kReservedMiB * kMiB;
  memory->used = UsedBytes(device->index);
  const unsigned long long taken = memory->reserved + memory->used;
  memory->free = taken < memory->total ? memory->total - taken : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { return Count(__func__, count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return Handle(__func__, index, device);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_v1_t* pci) {
  return FillPci(__func__, device, pci, pci ? pci->busId : nullptr);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  nvmlReturn_t rc = FillPci(__func__, device, pci, pci ? pci->busIdLegacy : nullptr);
  if (rc == NVML_SUCCESS) {
    std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
  }
  return rc;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* milliwatts) {
  return Answer(__func__, device, "enforced_power_limit", milliwatts, [](unsigned) { return 690000u; });
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* millijoules) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, millijoules, "energy")) return rc;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const double seconds = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
  *millijoules = static_cast<unsigned long long>((250 + device->index) * seconds * 1000.0);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int* kb_per_s) {
  return Answer(__func__, device, "pcie_throughput", kb_per_s, [counter](unsigned i) -> std::optional<unsigned> {
    if (counter == NVML_PCIE_UTIL_TX_BYTES) return 1000 + i;
    if (counter == NVML_PCIE_UTIL_RX_BYTES) return 2000 + i;
    return std::nullopt;
  });
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  return ListProcesses(__func__, device, count, infos, Kind::kCompute);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  return ListProcesses(__func__, device, count, infos, Kind::kCompute);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                      nvmlProcessInfo_v2_t* infos) {
  return ListProcesses(__func__, device, count, infos, Kind::kGraphics);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                      nvmlProcessInfo_v2_t* infos) {
  return ListProcesses(__func__, device, count, infos, Kind::kGraphics);
}

// ---- GPM ----

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* support) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, support, "")) return rc;
  if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  support->isSupportedDevice = g_config.unsupported.count("gpm") ? 0 : 1;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  if (nvmlReturn_t rc = Enter(__func__)) return rc;
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *sample = new nvmlGpmSample_st;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  if (nvmlReturn_t rc = Enter(__func__)) return rc;
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  delete sample;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  if (nvmlReturn_t rc = EnterDevice(__func__, device, sample, "gpm")) return rc;
  sample->filled = true;
  sample->device = device->index;
  sample->sequence = ++g_gpm_samples;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* request) {
  if (nvmlReturn_t rc = Enter(__func__)) return rc;
  if (request == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (request->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const nvmlGpmSample_st* first = request->sample1;
  const nvmlGpmSample_st* second = request->sample2;
  if (request->numMetrics > NVML_GPM_METRIC_MAX || first == nullptr || second == nullptr || !first->filled ||
      !second->filled || first->device != second->device || second->sequence <= first->sequence) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const unsigned i = first->device;
  for (unsigned k = 0; k < request->numMetrics; ++k) {
    nvmlGpmMetric_t& metric = request->metrics[k];
    const char* field = "";
    double value = 0;
    switch (metric.metricId) {
      case NVML_GPM_METRIC_SM_UTIL: field = "gpm_sm_active", value = 60 + i; break;
      case NVML_GPM_METRIC_SM_OCCUPANCY: field = "gpm_sm_occupancy", value = 30 + i; break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL: field = "gpm_tensor", value = 9 + i; break;
      case NVML_GPM_METRIC_DRAM_BW_UTIL: field = "gpm_dram", value = 20 + i; break;
      default: metric.nvmlReturn = NVML_ERROR_NOT_SUPPORTED; continue;
    }
    metric.nvmlReturn = g_config.unsupported.count(field) ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
    metric.value = metric.nvmlReturn == NVML_SUCCESS ? value : 0;
    metric.metricInfo = {};
  }
  return NVML_SUCCESS;
}

#endif  // FAKE_NVML_OLD

}  // extern "C"
