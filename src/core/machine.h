// The machine a probe or a tune measures on: shown in both reports; tune's default knob ranges come from it, and its
// fingerprint keys tune's trial cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "telemetry/sample.h"

namespace sat::core {

struct Machine {
  std::string hostname, cpu_model;
  unsigned cpu_count = 0;     // online CPUs
  unsigned usable_cores = 0;  // CPUs this process may run on (its affinity mask)
  std::optional<uint64_t> mem_total_bytes;
  int gpu_index = -1;         // -1: no GPU
  std::string gpu_name;
  std::optional<uint64_t> gpu_mem_total_bytes;

  // "host|cpu model|usable cores|memory GiB|gpu index|gpu name|gpu memory GiB": trials measured under another
  // fingerprint are not reused.
  std::string Fingerprint() const;
};

// The machine from one sample (host memory, the name and memory of GPU `gpu_index`, -1 for none) and this
// process's view of its CPUs.
// `cpuinfo_path` is read for the CPU model ("model name").
Machine DescribeMachine(const telemetry::Sample& sample, int gpu_index,
                        const std::string& cpuinfo_path = "/proc/cpuinfo");

}  // namespace sat::core
