#include "util/safe_file.h"
#include "sweep/device_log.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/json_text.h"

namespace sat::sweep {
namespace {

namespace fs = std::filesystem;

template <class T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(static_cast<double>(*v)) : nlohmann::json(nullptr);
}

std::optional<double> Number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

std::string GpuLane(int index) { return fmt::format("GPU {}", index); }

DeviceLog::DeviceLog(std::FILE* file, double every_s) : file_(file), every_s_(every_s) {}

DeviceLog::~DeviceLog() { std::fclose(file_); }

Result<std::unique_ptr<DeviceLog>> DeviceLog::Open(const std::string& log_dir, double every_s) {
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  const std::string path = (fs::path(log_dir) / kDeviceLogFile).string();
  auto file = OpenStreamForWriting(path, WriteMode::kAppend);
  if (!file) return Error{fmt::format("no device lanes in the report: {}", file.error().message)};
  return std::unique_ptr<DeviceLog>(new DeviceLog(*file, every_s));
}

void DeviceLog::Add(const telemetry::Sample& s) {
  auto add = [&](const std::string& device, nlohmann::json point) {
    auto last = last_.find(device);
    if (last != last_.end() && s.time_s - last->second < every_s_) return;
    last_[device] = s.time_s;
    point["t"] = s.time_s;
    point["device"] = device;
    const std::string line = JsonText(point) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file_) == line.size()) std::fflush(file_);
  };
  for (const telemetry::GpuSample& g : s.gpus) {
    add(GpuLane(static_cast<int>(g.index)), {{"mem_used", OrNull(g.memory_used_bytes)},
                                             {"mem_total", OrNull(g.memory_total_bytes)},
                                             {"util", OrNull(g.util_gpu_pct)}});
  }
  if (s.host.cpu_util_pct || s.host.mem_used_bytes) {
    add(kCpuPoolLane, {{"mem_used", OrNull(s.host.mem_used_bytes)},
                       {"mem_total", OrNull(s.host.mem_total_bytes)},
                       {"util", OrNull(s.host.cpu_util_pct)}});
  }
}

std::vector<DevicePoint> ReadDeviceLog(const std::string& log_dir) {
  std::vector<DevicePoint> out;
  std::ifstream in(fs::path(log_dir) / kDeviceLogFile);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("device") || !j["device"].is_string()) continue;
    std::optional<double> t = Number(j, "t");
    if (!t) continue;
    out.push_back({*t, j["device"].get<std::string>(), Number(j, "mem_used"), Number(j, "mem_total"),
                   Number(j, "util")});
  }
  return out;
}

}  // namespace sat::sweep
