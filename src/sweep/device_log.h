// What each device did over a sweep, for its report's lanes (sweep/html_report.h): every GPU's memory and
// utilisation and the host's (the CPU pool's) memory and CPU use, every few seconds, as JSON lines in
// <logs>/devices.jsonl beside the attempts' logs. A resumed sweep appends to it. The journal stays the record of
// runs; this file is a picture's data only, and a sweep without it (an older one, or on Slurm) has no lanes.
//
// Threads: DeviceLog::Add may be called from the sampler's thread; it is not shared between threads.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/sample.h"
#include "util/result.h"

namespace sat::sweep {

inline constexpr const char* kDeviceLogFile = "devices.jsonl";
inline constexpr const char* kCpuPoolLane = "CPU pool";

// The lane name of GPU `index` ("GPU 0"); the CPU pool's is kCpuPoolLane.
std::string GpuLane(int index);

struct DevicePoint {
  double time_unix = 0;
  std::string device;  // GpuLane(i) or kCpuPoolLane
  std::optional<double> mem_used_bytes, mem_total_bytes, util_pct;
};

class DeviceLog {
 public:
  // Opens <log_dir>/devices.jsonl for appending (the folder is created). `every_s`: the least time between two
  // points of one device.
  static Result<std::unique_ptr<DeviceLog>> Open(const std::string& log_dir, double every_s = 5);
  ~DeviceLog();
  DeviceLog(const DeviceLog&) = delete;
  DeviceLog& operator=(const DeviceLog&) = delete;

  // Appends a point per device of `sample` (its GPUs and the host) when `every_s` has passed since that device's
  // last one. A failed write is dropped: the lanes lose a point, the sweep goes on.
  void Add(const telemetry::Sample& sample);

 private:
  DeviceLog(std::FILE* file, double every_s);
  std::FILE* file_;
  double every_s_;
  std::map<std::string, double> last_;  // device -> time of its last point
};

// The points of the file, in file order; empty when there is no file. Lines that do not parse are skipped (a
// line cut off by a kill).
std::vector<DevicePoint> ReadDeviceLog(const std::string& log_dir);

}  // namespace sat::sweep
