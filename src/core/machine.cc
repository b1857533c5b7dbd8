#include "core/machine.h"

#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <fstream>

#include "util/strings.h"

namespace sat::core {
namespace {

unsigned UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

std::string CpuModel(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!StartsWith(line, "model name")) continue;
    size_t colon = line.find(':');
    if (colon != std::string::npos) return std::string(Trim(line.substr(colon + 1)));
  }
  return "";
}

std::string GiB(const std::optional<uint64_t>& bytes) {
  return bytes ? fmt::format("{:.0f}", static_cast<double>(*bytes) / (1ull << 30)) : "?";
}

}  // namespace

std::string Machine::Fingerprint() const {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", hostname, cpu_model, usable_cores, GiB(mem_total_bytes), gpu_index,
                     gpu_name, GiB(gpu_mem_total_bytes));
}

Machine DescribeMachine(const telemetry::Sample& s, int gpu_index, const std::string& cpuinfo_path) {
  Machine m;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) m.hostname = host;
  m.cpu_model = CpuModel(cpuinfo_path);
  m.cpu_count = s.host.cpu_count ? s.host.cpu_count : static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
  m.usable_cores = UsableCores();
  m.mem_total_bytes = s.host.mem_total_bytes;
  m.gpu_index = gpu_index;
  if (const telemetry::GpuSample* g = telemetry::GpuOf(s, gpu_index)) {
    m.gpu_name = g->name;
    m.gpu_mem_total_bytes = g->memory_total_bytes;
  }
  return m;
}

}  // namespace sat::core
