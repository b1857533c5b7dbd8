#include "telemetry/nvml.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sat::telemetry {
namespace {

// ---- The slice of nvml.h used here, with the header's exact values and layouts ----

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

constexpr nvmlReturn_t kSuccess = 0;                   // NVML_SUCCESS
constexpr nvmlReturn_t kErrorInsufficientSize = 7;     // NVML_ERROR_INSUFFICIENT_SIZE
constexpr nvmlReturn_t kErrorDriverNotLoaded = 9;      // NVML_ERROR_DRIVER_NOT_LOADED
constexpr nvmlReturn_t kErrorFunctionNotFound = 13;    // NVML_ERROR_FUNCTION_NOT_FOUND

// NVML's enum parameters are passed as int (same size and registers as a C enum).
constexpr int kTemperatureGpu = 0;                     // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1, kClockMem = 2;             // NVML_CLOCK_SM, NVML_CLOCK_MEM
constexpr int kPcieTxBytes = 0, kPcieRxBytes = 1;      // NVML_PCIE_UTIL_TX_BYTES, _RX_BYTES
constexpr int kPstateCount = 16;                       // P0..P15; NVML_PSTATE_UNKNOWN is 32
constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

constexpr unsigned kNameBufferSize = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBufferSize = 96;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE (and NVML version)

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
// nvmlDeviceGetMemoryInfo_v2's record (driver 510+): `used` leaves out the memory the driver reserves, as
// nvidia-smi's memory.used does; the original call counts it as used (479 MiB more on an H100 with driver 580).
struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
constexpr unsigned kMemoryV2Version = sizeof(nvmlMemory_v2_t) | (2u << 24);  // nvmlMemory_v2 in nvml.h
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};

// nvmlDeviceGetPciInfo and _v2 fill the original record; _v3 fills the one with a 32-byte busId.
// domain, bus and device sit at the same offsets in both.
struct nvmlPciInfoV1 {
  char busId[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId, reserved[4];
};
struct nvmlPciInfoV3 {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

// The unversioned process queries fill nvmlProcessInfo_v1_t. _v2 fills nvmlProcessInfo_v2_t, and _v3 fills
// nvml.h's nvmlProcessInfo_t, which has the same four fields.
struct nvmlProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct nvmlProcessInfoV2 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};

// GPM (nvml.h of CUDA 12, "GPM Structs"): two samples taken apart, then metrics computed from the pair.
using nvmlGpmSample_t = struct nvmlGpmSample_st*;
constexpr unsigned kGpmMetricMax = 98;          // NVML_GPM_METRIC_MAX
constexpr unsigned kGpmMetricsGetVersion = 1;   // NVML_GPM_METRICS_GET_VERSION
constexpr unsigned kGpmSupportVersion = 1;      // NVML_GPM_SUPPORT_VERSION
constexpr unsigned kGpmMetricSmUtil = 2;        // NVML_GPM_METRIC_SM_UTIL: % of SMs busy (a warp assigned)
constexpr unsigned kGpmMetricSmOccupancy = 3;   // NVML_GPM_METRIC_SM_OCCUPANCY: % of the warps an SM can hold
constexpr unsigned kGpmMetricAnyTensorUtil = 5;  // NVML_GPM_METRIC_ANY_TENSOR_UTIL: % of time in tensor work
constexpr unsigned kGpmMetricDramBwUtil = 10;   // NVML_GPM_METRIC_DRAM_BW_UTIL: % of peak DRAM bandwidth

struct nvmlGpmMetric_t {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char *shortName, *longName, *unit;
  } metricInfo;
};
struct nvmlGpmMetricsGet_t {
  unsigned int version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[kGpmMetricMax];
};
struct nvmlGpmSupport_t {
  unsigned int version, isSupportedDevice;
};

static_assert(sizeof(nvmlMemory_t) == 24 && sizeof(nvmlMemory_v2_t) == 40 && sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlGpmSupport_t) == 8);
static_assert(sizeof(nvmlPciInfoV1) == 52 && offsetof(nvmlPciInfoV1, domain) == 16);
static_assert(sizeof(nvmlPciInfoV3) == 68 && offsetof(nvmlPciInfoV3, domain) == 16);
static_assert(sizeof(nvmlProcessInfoV1) == 16 && sizeof(nvmlProcessInfoV2) == 24);

using NoArgsFn = nvmlReturn_t();
using CountFn = nvmlReturn_t(unsigned int*);
using HandleFn = nvmlReturn_t(unsigned int, nvmlDevice_t*);
using ErrorStringFn = const char*(nvmlReturn_t);
using SystemStringFn = nvmlReturn_t(char*, unsigned int);
using DeviceStringFn = nvmlReturn_t(nvmlDevice_t, char*, unsigned int);
using DeviceUintFn = nvmlReturn_t(nvmlDevice_t, unsigned int*);
using DeviceUllFn = nvmlReturn_t(nvmlDevice_t, unsigned long long*);
using DeviceTypedUintFn = nvmlReturn_t(nvmlDevice_t, int, unsigned int*);
using PstateFn = nvmlReturn_t(nvmlDevice_t, int*);
using UtilizationFn = nvmlReturn_t(nvmlDevice_t, nvmlUtilization_t*);
using GpmSupportFn = nvmlReturn_t(nvmlDevice_t, nvmlGpmSupport_t*);
using GpmSampleAllocFn = nvmlReturn_t(nvmlGpmSample_t*);
using GpmSampleFreeFn = nvmlReturn_t(nvmlGpmSample_t);
using GpmSampleGetFn = nvmlReturn_t(nvmlDevice_t, nvmlGpmSample_t);
using GpmMetricsGetFn = nvmlReturn_t(nvmlGpmMetricsGet_t*);

// Which record a variant of an entry point reads or fills.
enum class Layout { kOnly, kPciV1, kPciV3, kProcessV1, kProcessV2, kMemoryV1, kMemoryV2 };

constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";
constexpr size_t kInitialProcessSlots = 64;
constexpr int kMaxProcessQueries = 8;
// NVML's GPM documentation: "The interval between these two nvmlGpmSampleGet() calls should be greater than
// 100ms due to the internal sample refresh rate."
constexpr double kGpmMinIntervalS = 0.1;

// One NVML entry point under every name it has had, newest first, resolved in `library` at construction.
// Names the library does not export are dropped. A name that answers NVML_ERROR_FUNCTION_NOT_FOUND (exported,
// but newer than the running kernel driver) is dropped on first use and the next older name is tried.
class Entry {
 public:
  struct Name {
    Name(const char* symbol, Layout layout = Layout::kOnly) : symbol(symbol), layout(layout) {}  // NOLINT
    const char* symbol;
    Layout layout;
  };
  struct Variant {
    Name name;
    void* address;
  };

  Entry(void* library, std::initializer_list<Name> names) : names_(names) {
    for (const Name& name : names_) {
      if (void* address = dlsym(library, name.symbol)) variants_.push_back({name, address});
    }
  }

  bool available() const { return !variants_.empty(); }
  // "nvmlInit_v2 or nvmlInit", for messages about a missing entry point.
  std::string Names() const {
    std::string all;
    for (const Name& name : names_) all += (all.empty() ? "" : " or ") + std::string(name.symbol);
    return all;
  }
  // The name last called, for messages about its answer.
  const char* last_called() const { return last_called_; }

  // Runs `call(variant)` on the newest usable variant and returns its answer, or NVML_ERROR_FUNCTION_NOT_FOUND
  // when no variant is left.
  template <class Call>
  nvmlReturn_t Invoke(Call&& call) {
    while (!variants_.empty()) {
      last_called_ = variants_.front().name.symbol;
      nvmlReturn_t rc = call(variants_.front());
      if (rc != kErrorFunctionNotFound) return rc;
      variants_.erase(variants_.begin());
    }
    return kErrorFunctionNotFound;
  }

  // For entry points whose every variant has the signature `Fn`.
  template <class Fn, class... Args>
  nvmlReturn_t Call(Args... args) {
    return Invoke([&](const Variant& v) { return reinterpret_cast<Fn*>(v.address)(args...); });
  }

 private:
  std::vector<Name> names_;
  std::vector<Variant> variants_;
  const char* last_called_ = "";
};

// Every entry point saturate uses, looked up once in the opened library.
struct Api {
  explicit Api(void* library) : library(library) {}

  void* library;
  Entry init{library, {"nvmlInit_v2", "nvmlInit"}};
  Entry shutdown{library, {"nvmlShutdown"}};
  Entry error_string{library, {"nvmlErrorString"}};
  Entry device_count{library, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}};
  Entry device_handle{library, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}};
  Entry driver_version{library, {"nvmlSystemGetDriverVersion"}};
  Entry nvml_version{library, {"nvmlSystemGetNVMLVersion"}};
  Entry name{library, {"nvmlDeviceGetName"}};
  Entry uuid{library, {"nvmlDeviceGetUUID"}};
  Entry pci{library,
            {{"nvmlDeviceGetPciInfo_v3", Layout::kPciV3},
             {"nvmlDeviceGetPciInfo_v2", Layout::kPciV1},
             {"nvmlDeviceGetPciInfo", Layout::kPciV1}}};
  Entry utilization{library, {"nvmlDeviceGetUtilizationRates"}};
  Entry memory{library,
               {{"nvmlDeviceGetMemoryInfo_v2", Layout::kMemoryV2}, {"nvmlDeviceGetMemoryInfo", Layout::kMemoryV1}}};
  Entry temperature{library, {"nvmlDeviceGetTemperature"}};
  Entry power_usage{library, {"nvmlDeviceGetPowerUsage"}};
  Entry enforced_power_limit{library, {"nvmlDeviceGetEnforcedPowerLimit"}};
  Entry power_management_limit{library, {"nvmlDeviceGetPowerManagementLimit"}};
  Entry total_energy{library, {"nvmlDeviceGetTotalEnergyConsumption"}};
  Entry clock{library, {"nvmlDeviceGetClockInfo"}};
  Entry pcie_link_gen{library, {"nvmlDeviceGetCurrPcieLinkGeneration"}};
  Entry pcie_link_width{library, {"nvmlDeviceGetCurrPcieLinkWidth"}};
  Entry pcie_throughput{library, {"nvmlDeviceGetPcieThroughput"}};
  Entry pstate{library, {"nvmlDeviceGetPerformanceState"}};
  Entry fan{library, {"nvmlDeviceGetFanSpeed"}};
  Entry compute_processes{library,
                          {{"nvmlDeviceGetComputeRunningProcesses_v3", Layout::kProcessV2},
                           {"nvmlDeviceGetComputeRunningProcesses_v2", Layout::kProcessV2},
                           {"nvmlDeviceGetComputeRunningProcesses", Layout::kProcessV1}}};
  Entry graphics_processes{library,
                           {{"nvmlDeviceGetGraphicsRunningProcesses_v3", Layout::kProcessV2},
                            {"nvmlDeviceGetGraphicsRunningProcesses_v2", Layout::kProcessV2},
                            {"nvmlDeviceGetGraphicsRunningProcesses", Layout::kProcessV1}}};
  Entry gpm_support{library, {"nvmlGpmQueryDeviceSupport"}};
  Entry gpm_sample_alloc{library, {"nvmlGpmSampleAlloc"}};
  Entry gpm_sample_free{library, {"nvmlGpmSampleFree"}};
  Entry gpm_sample_get{library, {"nvmlGpmSampleGet"}};
  Entry gpm_metrics_get{library, {"nvmlGpmMetricsGet"}};
};

// ---- Readers: each returns nullopt (or an empty string) when NVML declines ----

std::optional<unsigned> ReadUint(Entry& entry, nvmlDevice_t device) {
  unsigned int value = 0;
  if (entry.Call<DeviceUintFn>(device, &value) != kSuccess) return std::nullopt;
  return value;
}

std::optional<unsigned long long> ReadUll(Entry& entry, nvmlDevice_t device) {
  unsigned long long value = 0;
  if (entry.Call<DeviceUllFn>(device, &value) != kSuccess) return std::nullopt;
  return value;
}

std::optional<unsigned> ReadTypedUint(Entry& entry, nvmlDevice_t device, int type) {
  unsigned int value = 0;
  if (entry.Call<DeviceTypedUintFn>(device, type, &value) != kSuccess) return std::nullopt;
  return value;
}

Opt<double> AsDouble(std::optional<unsigned> value, double factor = 1) {
  if (!value) return std::nullopt;
  return *value * factor;
}

// From milli-units (NVML's milliwatts); dividing keeps whole units exact.
Opt<double> FromMilli(std::optional<unsigned> value) {
  if (!value) return std::nullopt;
  return *value / 1000.0;
}

std::string ReadSystemString(Entry& entry) {
  char buffer[kVersionBufferSize] = {};
  if (entry.Call<SystemStringFn>(buffer, kVersionBufferSize) != kSuccess) return "";
  return std::string(buffer, strnlen(buffer, sizeof buffer));
}

std::string ReadDeviceString(Entry& entry, nvmlDevice_t device, unsigned size) {
  std::vector<char> buffer(size, '\0');
  if (entry.Call<DeviceStringFn>(device, buffer.data(), size) != kSuccess) return "";
  return std::string(buffer.data(), strnlen(buffer.data(), size));
}

template <class Record>
nvmlReturn_t QueryPciBusId(void* address, nvmlDevice_t device, std::string& bus_id) {
  Record pci{};
  nvmlReturn_t rc = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, Record*)>(address)(device, &pci);
  // nvidia-smi's form (NVML_DEVICE_PCI_BUS_ID_FMT), built from the fields every layout has; the older
  // records' busId string has a 4-digit domain.
  if (rc == kSuccess) bus_id = fmt::format("{:08X}:{:02X}:{:02X}.0", pci.domain, pci.bus, pci.device);
  return rc;
}

// Total, used and free memory as nvidia-smi reports them: the v2 record where the driver has it, else the original.
void ReadMemory(Entry& entry, nvmlDevice_t device, GpuSample& s) {
  entry.Invoke([&](const Entry::Variant& v) {
    if (v.name.layout == Layout::kMemoryV2) {
      nvmlMemory_v2_t memory{};
      memory.version = kMemoryV2Version;
      auto fn = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*)>(v.address);
      nvmlReturn_t rc = fn(device, &memory);
      if (rc == kSuccess) {
        s.memory_total_bytes = memory.total;
        s.memory_used_bytes = memory.used;
        s.memory_free_bytes = memory.free;
      }
      return rc;
    }
    nvmlMemory_t memory{};
    nvmlReturn_t rc = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>(v.address)(device, &memory);
    if (rc == kSuccess) {
      s.memory_total_bytes = memory.total;
      s.memory_used_bytes = memory.used;
      s.memory_free_bytes = memory.free;
    }
    return rc;
  });
}

std::string ReadPciBusId(Entry& entry, nvmlDevice_t device) {
  std::string bus_id;
  entry.Invoke([&](const Entry::Variant& v) {
    return v.name.layout == Layout::kPciV3 ? QueryPciBusId<nvmlPciInfoV3>(v.address, device, bus_id)
                                           : QueryPciBusId<nvmlPciInfoV1>(v.address, device, bus_id);
  });
  return bus_id;
}

// One running-process query, with a buffer grown while NVML answers that it is too small (the list can also
// grow between two calls).
template <class Record>
nvmlReturn_t QueryProcesses(void* address, nvmlDevice_t device, std::vector<GpuProcess>& out) {
  auto query = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, Record*)>(address);
  std::vector<Record> records(kInitialProcessSlots);
  for (int attempt = 0; attempt < kMaxProcessQueries; ++attempt) {
    auto count = static_cast<unsigned int>(records.size());
    nvmlReturn_t rc = query(device, &count, records.data());
    if (rc == kErrorInsufficientSize) {
      records.resize(std::max<size_t>(count, records.size()) * 2);
      continue;
    }
    if (rc != kSuccess) return rc;
    for (size_t i = 0; i < std::min<size_t>(count, records.size()); ++i) {
      GpuProcess process;
      process.pid = static_cast<pid_t>(records[i].pid);
      if (records[i].usedGpuMemory != kValueNotAvailable) process.used_memory_bytes = records[i].usedGpuMemory;
      out.push_back(process);
    }
    return rc;
  }
  return kErrorInsufficientSize;
}

void AppendProcesses(Entry& entry, nvmlDevice_t device, std::vector<GpuProcess>& out) {
  entry.Invoke([&](const Entry::Variant& v) {
    return v.name.layout == Layout::kProcessV1 ? QueryProcesses<nvmlProcessInfoV1>(v.address, device, out)
                                               : QueryProcesses<nvmlProcessInfoV2>(v.address, device, out);
  });
}

// A process with both compute and graphics contexts is in both lists; keep one entry, ordered by pid.
std::vector<GpuProcess> MergeByPid(std::vector<GpuProcess> processes) {
  std::sort(processes.begin(), processes.end(),
            [](const GpuProcess& a, const GpuProcess& b) { return a.pid < b.pid; });
  std::vector<GpuProcess> merged;
  for (const GpuProcess& p : processes) {
    if (merged.empty() || merged.back().pid != p.pid) {
      merged.push_back(p);
      continue;
    }
    Opt<uint64_t>& memory = merged.back().used_memory_bytes;
    if (p.used_memory_bytes && (!memory || *p.used_memory_bytes > *memory)) memory = p.used_memory_bytes;
  }
  return merged;
}

// The GPM metrics saturate reads, each with where its value goes.
struct GpmField {
  unsigned metric;
  Opt<double> GpuSample::*field;
};
constexpr GpmField kGpmFields[] = {
    {kGpmMetricSmUtil, &GpuSample::gpm_sm_active_pct},
    {kGpmMetricSmOccupancy, &GpuSample::gpm_sm_occupancy_pct},
    {kGpmMetricAnyTensorUtil, &GpuSample::gpm_tensor_active_pct},
    {kGpmMetricDramBwUtil, &GpuSample::gpm_dram_bw_util_pct},
};
constexpr size_t kGpmFieldCount = std::size(kGpmFields);

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct LibraryCloser {
  void operator()(void* library) const { dlclose(library); }
};
using LibraryHandle = std::unique_ptr<void, LibraryCloser>;

class NvmlBackend final : public GpuBackend {
 public:
  NvmlBackend(std::string path, LibraryHandle library)
      : path_(std::move(path)), library_(std::move(library)), api_(library_.get()) {}

  ~NvmlBackend() override {
    if (!initialized_) return;
    for (Device& device : devices_) {
      for (nvmlGpmSample_t buffer : {device.gpm.start, device.gpm.next}) {
        if (buffer != nullptr) api_.gpm_sample_free.Call<GpmSampleFreeFn>(buffer);
      }
    }
    api_.shutdown.Call<NoArgsFn>();
  }

  // Initialises NVML, then takes the device handles and the version strings.
  Status Start();

  unsigned DeviceCount() const override { return static_cast<unsigned>(devices_.size()); }
  std::vector<GpuSample> Sample(const std::vector<unsigned>& indices) override;
  std::string Description() const override;

 private:
  // A device's GPM buffers: `start` holds the sample that opens the current interval, `next` is filled at its
  // end; they swap after each interval. `last` keeps the latest interval's values.
  struct Gpm {
    enum class State { kUnknown, kOn, kOff };
    State state = State::kUnknown;
    nvmlGpmSample_t start = nullptr, next = nullptr;
    bool have_start = false;
    double start_s = 0;  // steady clock
    std::array<Opt<double>, kGpmFieldCount> last;
  };

  // A device's handle (null when NVML would not give one), its identity strings, cached once read, and GPM.
  struct Device {
    nvmlDevice_t handle = nullptr;
    std::string name, uuid, pci_bus_id;
    Gpm gpm;
  };

  // "Driver Not Loaded (NVML error 9)"
  std::string ErrorText(nvmlReturn_t rc);
  std::string MissingEntry(const Entry& entry) const;
  GpuSample ReadDevice(unsigned index);
  // Turns GPM on for the device when every GPM entry point is there, NVML says the device supports it and both
  // buffers can be allocated; off for good otherwise (older GPUs and drivers).
  void StartGpm(Device& device);
  // Fills the sample's gpm_* fields (see GpuSample) and advances the device's interval.
  void ReadGpm(Device& device, GpuSample& s);
  std::array<Opt<double>, kGpmFieldCount> GpmMetrics(nvmlGpmSample_t first, nvmlGpmSample_t second);

  std::string path_;
  LibraryHandle library_;
  Api api_;
  bool initialized_ = false;
  std::vector<Device> devices_;
  std::string driver_version_, nvml_version_;
};

std::string NvmlBackend::ErrorText(nvmlReturn_t rc) {
  const char* text = nullptr;
  api_.error_string.Invoke([&](const Entry::Variant& v) {
    text = reinterpret_cast<ErrorStringFn*>(v.address)(rc);
    return kSuccess;
  });
  return text ? fmt::format("{} (NVML error {})", text, rc) : fmt::format("NVML error {}", rc);
}

std::string NvmlBackend::MissingEntry(const Entry& entry) const {
  return fmt::format("{} is not a usable NVML library: it exports no {}", path_, entry.Names());
}

Status NvmlBackend::Start() {
  // The four entry points without which no device can be reached.
  for (const Entry* required : {&api_.init, &api_.shutdown, &api_.device_count, &api_.device_handle}) {
    if (!required->available()) return Error{MissingEntry(*required)};
  }

  if (nvmlReturn_t rc = api_.init.Call<NoArgsFn>(); rc != kSuccess) {
    std::string what = rc == kErrorDriverNotLoaded ? "no NVIDIA driver loaded" : "NVML could not start";
    return Error{fmt::format("{} ({}: {}: {})", what, path_, api_.init.last_called(), ErrorText(rc))};
  }
  initialized_ = true;

  unsigned int count = 0;
  if (nvmlReturn_t rc = api_.device_count.Call<CountFn>(&count); rc != kSuccess) {
    return Error{fmt::format("cannot count GPUs ({}: {}: {})", path_, api_.device_count.last_called(),
                             ErrorText(rc))};
  }

  // A device NVML will not hand out (no permission, fallen off the bus) stays listed with no readings, so
  // the indices of the others keep matching nvidia-smi's.
  devices_.resize(count);
  for (unsigned i = 0; i < count; ++i) {
    if (api_.device_handle.Call<HandleFn>(i, &devices_[i].handle) != kSuccess) devices_[i].handle = nullptr;
  }

  driver_version_ = ReadSystemString(api_.driver_version);
  nvml_version_ = ReadSystemString(api_.nvml_version);
  return Status::Ok();
}

std::vector<GpuSample> NvmlBackend::Sample(const std::vector<unsigned>& indices) {
  std::vector<GpuSample> samples;
  if (indices.empty()) {
    for (unsigned i = 0; i < DeviceCount(); ++i) samples.push_back(ReadDevice(i));
    return samples;
  }
  // Indices past DeviceCount() name no device and are skipped; callers validate selections against it.
  for (unsigned i : indices) {
    if (i < DeviceCount()) samples.push_back(ReadDevice(i));
  }
  return samples;
}

GpuSample NvmlBackend::ReadDevice(unsigned index) {
  GpuSample s;
  s.index = index;
  s.driver_version = driver_version_;
  Device& device = devices_[index];
  nvmlDevice_t h = device.handle;
  if (h == nullptr) return s;

  // Identity does not change while the driver is loaded: read until NVML answers once.
  if (device.name.empty()) device.name = ReadDeviceString(api_.name, h, kNameBufferSize);
  if (device.uuid.empty()) device.uuid = ReadDeviceString(api_.uuid, h, kUuidBufferSize);
  if (device.pci_bus_id.empty()) device.pci_bus_id = ReadPciBusId(api_.pci, h);
  s.name = device.name;
  s.uuid = device.uuid;
  s.pci_bus_id = device.pci_bus_id;

  nvmlUtilization_t utilization{};
  if (api_.utilization.Call<UtilizationFn>(h, &utilization) == kSuccess) {
    s.util_gpu_pct = utilization.gpu;
    s.util_memory_pct = utilization.memory;
  }
  ReadMemory(api_.memory, h, s);
  s.temperature_c = AsDouble(ReadTypedUint(api_.temperature, h, kTemperatureGpu));

  // NVML reports power in milliwatts. The enforced limit is what the board holds to; older drivers only
  // know the management limit.
  s.power_draw_w = FromMilli(ReadUint(api_.power_usage, h));
  std::optional<unsigned> limit_mw = ReadUint(api_.enforced_power_limit, h);
  if (!limit_mw) limit_mw = ReadUint(api_.power_management_limit, h);
  s.power_limit_w = FromMilli(limit_mw);
  if (std::optional<unsigned long long> mj = ReadUll(api_.total_energy, h)) s.energy_j = *mj / 1000.0;  // mJ

  s.clock_sm_mhz = AsDouble(ReadTypedUint(api_.clock, h, kClockSm));
  s.clock_memory_mhz = AsDouble(ReadTypedUint(api_.clock, h, kClockMem));
  s.pcie_link_gen = ReadUint(api_.pcie_link_gen, h);
  s.pcie_link_width = ReadUint(api_.pcie_link_width, h);
  // PCIe throughput comes in KB/s.
  s.pcie_tx_bytes_per_s = AsDouble(ReadTypedUint(api_.pcie_throughput, h, kPcieTxBytes), 1024);
  s.pcie_rx_bytes_per_s = AsDouble(ReadTypedUint(api_.pcie_throughput, h, kPcieRxBytes), 1024);

  int pstate = 0;
  if (api_.pstate.Call<PstateFn>(h, &pstate) == kSuccess && pstate >= 0 && pstate < kPstateCount) {
    s.pstate = static_cast<unsigned>(pstate);
  }
  s.fan_pct = AsDouble(ReadUint(api_.fan, h));

  std::vector<GpuProcess> processes;
  AppendProcesses(api_.compute_processes, h, processes);
  AppendProcesses(api_.graphics_processes, h, processes);
  s.processes = MergeByPid(std::move(processes));
  ReadGpm(device, s);
  return s;
}

void NvmlBackend::StartGpm(Device& device) {
  Gpm& gpm = device.gpm;
  gpm.state = Gpm::State::kOff;
  for (const Entry* entry : {&api_.gpm_support, &api_.gpm_sample_alloc, &api_.gpm_sample_free, &api_.gpm_sample_get,
                             &api_.gpm_metrics_get}) {
    if (!entry->available()) return;
  }
  nvmlGpmSupport_t support{kGpmSupportVersion, 0};
  if (api_.gpm_support.Call<GpmSupportFn>(device.handle, &support) != kSuccess || support.isSupportedDevice == 0) {
    return;
  }
  for (nvmlGpmSample_t* buffer : {&gpm.start, &gpm.next}) {
    if (api_.gpm_sample_alloc.Call<GpmSampleAllocFn>(buffer) != kSuccess) *buffer = nullptr;
  }
  if (gpm.start != nullptr && gpm.next != nullptr) {
    gpm.state = Gpm::State::kOn;
    return;
  }
  for (nvmlGpmSample_t* buffer : {&gpm.start, &gpm.next}) {
    if (*buffer != nullptr) api_.gpm_sample_free.Call<GpmSampleFreeFn>(*buffer);
    *buffer = nullptr;
  }
}

void NvmlBackend::ReadGpm(Device& device, GpuSample& s) {
  Gpm& gpm = device.gpm;
  if (gpm.state == Gpm::State::kUnknown) StartGpm(device);
  if (gpm.state != Gpm::State::kOn) return;

  // Sooner than NVML can resolve after the interval's start: the previous interval's values stand.
  const double now = SteadySeconds();
  if (!gpm.have_start || now - gpm.start_s >= kGpmMinIntervalS) {
    if (api_.gpm_sample_get.Call<GpmSampleGetFn>(device.handle, gpm.next) == kSuccess) {
      if (gpm.have_start) gpm.last = GpmMetrics(gpm.start, gpm.next);
      std::swap(gpm.start, gpm.next);
      gpm.start_s = now;
      gpm.have_start = true;
    } else {
      // No values until two samples in a row succeed again.
      gpm.last = {};
      gpm.have_start = false;
    }
  }
  for (size_t i = 0; i < kGpmFieldCount; ++i) s.*kGpmFields[i].field = gpm.last[i];
  // A driver older than the library answers FUNCTION_NOT_FOUND once; GPM stays off from then on.
  if (!api_.gpm_sample_get.available() || !api_.gpm_metrics_get.available()) gpm.state = Gpm::State::kOff;
}

std::array<Opt<double>, kGpmFieldCount> NvmlBackend::GpmMetrics(nvmlGpmSample_t first, nvmlGpmSample_t second) {
  std::array<Opt<double>, kGpmFieldCount> values;
  auto request = std::make_unique<nvmlGpmMetricsGet_t>();
  request->version = kGpmMetricsGetVersion;
  request->numMetrics = static_cast<unsigned>(kGpmFieldCount);
  request->sample1 = first;
  request->sample2 = second;
  for (size_t i = 0; i < kGpmFieldCount; ++i) request->metrics[i].metricId = kGpmFields[i].metric;
  if (api_.gpm_metrics_get.Call<GpmMetricsGetFn>(request.get()) != kSuccess) return values;
  // Each metric has its own answer: one the GPU does not count stays N/A while the others read.
  for (size_t i = 0; i < kGpmFieldCount; ++i) {
    const nvmlGpmMetric_t& metric = request->metrics[i];
    if (metric.nvmlReturn == kSuccess && std::isfinite(metric.value)) values[i] = metric.value;
  }
  return values;
}

std::string NvmlBackend::Description() const {
  auto or_unknown = [](const std::string& s) { return s.empty() ? std::string("unknown") : s; };
  return fmt::format("{} (NVML {}, driver {})", path_, or_unknown(nvml_version_), or_unknown(driver_version_));
}

}  // namespace

std::string NvmlLibraryPath() {
  const char* configured = std::getenv("SATURATE_NVML_LIBRARY");
  return configured != nullptr && *configured != '\0' ? configured : kDefaultLibrary;
}

Result<std::unique_ptr<GpuBackend>> OpenNvml() { return OpenNvml(NvmlLibraryPath()); }

Result<std::unique_ptr<GpuBackend>> OpenNvml(const std::string& path) {
  LibraryHandle library(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!library) {
    const char* why = dlerror();
    return Error{fmt::format("no NVIDIA driver found ({})", why ? std::string(why) : path + ": cannot be loaded")};
  }
  auto backend = std::make_unique<NvmlBackend>(path, std::move(library));
  if (Status status = backend->Start(); !status) return status.error();
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

}  // namespace sat::telemetry
