#include "monitor/human_view.h"

#include <fmt/format.h>

#include <utility>

namespace sat::monitor {
namespace {

using telemetry::Opt;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

// `spec` applied to the value, or `missing` when it was not reported.
template <class T>
std::string Or(const Opt<T>& v, std::string_view spec, std::string_view missing = "n/a") {
  if (!v) return std::string(missing);
  return fmt::format(fmt::runtime(spec), *v);
}

template <class T>
Opt<double> Scaled(const Opt<T>& v, double divisor) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v) / divisor;
}

std::string GpuLine(const telemetry::GpuSample& g) {
  std::string label = g.name.empty() ? fmt::format("GPU{}", g.index) : fmt::format("GPU{} {}", g.index, g.name);
  // GPM beside utilisation where the GPU counts it (Hopper and later); nothing on older GPUs.
  std::string util = Or(g.util_gpu_pct, "{:3.0f}%");
  if (g.gpm_sm_active_pct) {
    util += fmt::format(" (SM {:.0f}% tensor {})", *g.gpm_sm_active_pct, Or(g.gpm_tensor_active_pct, "{:.0f}%"));
  }
  return fmt::format("{}  util {}  mem {}/{} MiB  {}  {}/{} W  {}", label, util,
                     Or(Scaled(g.memory_used_bytes, kMiB), "{:.0f}"), Or(Scaled(g.memory_total_bytes, kMiB), "{:.0f}"),
                     Or(g.temperature_c, "{:.0f}°C", "temp n/a"), Or(g.power_draw_w, "{:.0f}"),
                     Or(g.power_limit_w, "{:.0f}"), Or(g.pstate, "P{}", "pstate n/a"));
}

std::string HostLine(const telemetry::HostSample& h) {
  return fmt::format(
      "host cpu {} (iowait {}) load {}  mem {}/{} GiB  disk r {} w {} MiB/s util {}  net rx {} tx {} MiB/s",
      Or(h.cpu_util_pct, "{:.0f}%"), Or(h.cpu_iowait_pct, "{:.0f}%"), Or(h.load1, "{:.1f}"),
      Or(Scaled(h.mem_used_bytes, kGiB), "{:.1f}"), Or(Scaled(h.mem_total_bytes, kGiB), "{:.1f}"),
      Or(Scaled(h.disk_read_bytes_per_s, kMiB), "{:.1f}"), Or(Scaled(h.disk_write_bytes_per_s, kMiB), "{:.1f}"),
      Or(h.disk_busy_pct, "{:.0f}%"), Or(Scaled(h.net_rx_bytes_per_s, kMiB), "{:.1f}"),
      Or(Scaled(h.net_tx_bytes_per_s, kMiB), "{:.1f}"));
}

std::string TreeLine(const telemetry::ProcTreeSample& t) {
  if (!t.alive) return fmt::format("tree pid {}: exited", t.root);
  return fmt::format("tree pid {}: {} procs {} thr cpu {} rss {} GiB read {} write {} MiB/s gpu {} GiB", t.root,
                     t.process_count, t.thread_count, Or(t.cpu_pct, "{:.0f}%"), Or(Scaled(t.rss_bytes, kGiB), "{:.1f}"),
                     Or(Scaled(t.read_bytes_per_s, kMiB), "{:.1f}"), Or(Scaled(t.write_bytes_per_s, kMiB), "{:.1f}"),
                     Or(Scaled(t.gpu_memory_bytes, kGiB), "{:.1f}"));
}

// Only for a command that reports its training (the helper channel).
std::string TrainingLine(const telemetry::ProcTreeSample& t) {
  return fmt::format("train {} samples/s {} steps/s data wait {}", Or(t.samples_per_s, "{:.1f}"),
                     Or(t.steps_per_s, "{:.2f}"), Or(Scaled(t.data_wait_share, 0.01), "{:.0f}%"));
}

// The first `width` characters of a UTF-8 line ("°" is one column, two bytes).
std::string CutToWidth(std::string line, size_t width) {
  size_t chars = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    bool starts_char = (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
    if (starts_char && chars++ == width) {
      line.resize(i);
      break;
    }
  }
  return line;
}

}  // namespace

HumanView::HumanView(HumanOptions options) : options_(std::move(options)) {}

std::vector<std::string> HumanView::Lines(const telemetry::Sample& sample) const {
  std::vector<std::string> lines;
  if (!options_.gpu_backend) {
    lines.push_back(options_.no_backend_reason.empty()
                        ? "note: no GPU backend; showing the host only"
                        : fmt::format("note: no GPU backend ({}); showing the host only", options_.no_backend_reason));
  } else if (sample.gpus.empty()) {
    lines.emplace_back("note: no GPUs to show");
  }
  for (const telemetry::GpuSample& g : sample.gpus) lines.push_back(GpuLine(g));
  lines.push_back(HostLine(sample.host));
  if (sample.tree) {
    lines.push_back(TreeLine(*sample.tree));
    if (sample.tree->samples_per_s || sample.tree->data_wait_share) lines.push_back(TrainingLine(*sample.tree));
  }
  if (options_.width > 0) {
    for (std::string& line : lines) line = CutToWidth(std::move(line), options_.width);
  }
  return lines;
}

std::string RedrawPrefix(size_t previous_lines) {
  if (previous_lines == 0) return "";
  return fmt::format("\x1b[{}A\x1b[J", previous_lines);
}

}  // namespace sat::monitor
