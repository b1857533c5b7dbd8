// The NVML GPU backend: NVIDIA's management library (libnvidia-ml.so.1), opened at run time with dlopen.
//
// No SDK header is needed to build: the few NVML types and entry points used are declared in nvml.cc with
// nvml.h's exact ABI. Each entry point is looked up under its newest versioned name first, then the older
// ones (with the record layout each version takes). Only nvmlInit, nvmlShutdown, nvmlDeviceGetCount and
// nvmlDeviceGetHandleByIndex are required; any other missing or unsupported call leaves its field nullopt.
//
// GPM (GPU Performance Monitoring, Hopper and later): a device whose driver exports the nvmlGpm* entry points
// and whose nvmlGpmQueryDeviceSupport says yes gets two sample buffers. Each Sample() of it takes a GPM sample
// and computes SM activity, SM occupancy, tensor activity and DRAM bandwidth (nvmlGpmMetricsGet) over the
// interval since the previous one, as long as that is at least 0.1 s back (NVML's refresh rate); a Sample()
// sooner repeats the previous interval's values. The first Sample() has none. On older GPUs and drivers the
// gpm_* fields stay nullopt, never 0.
#pragma once

#include <memory>
#include <string>

#include "telemetry/gpu.h"
#include "util/result.h"

namespace sat::telemetry {

// The library opened by OpenNvml(): $SATURATE_NVML_LIBRARY when set and not empty, else "libnvidia-ml.so.1"
// (found through the dynamic loader's search path).
std::string NvmlLibraryPath();

// Loads and initialises NVML from NvmlLibraryPath().
Result<std::unique_ptr<GpuBackend>> OpenNvml();

// Loads and initialises NVML from `path` (a file path or a bare soname). Fails, with a message naming `path`,
// when the library cannot be loaded, lacks a required entry point, NVML cannot initialise (no driver), or a
// device cannot be counted. Device handles are taken once here; the backend sees the devices present now.
// The returned backend shuts NVML down and unloads the library when destroyed.
Result<std::unique_ptr<GpuBackend>> OpenNvml(const std::string& path);

}  // namespace sat::telemetry
