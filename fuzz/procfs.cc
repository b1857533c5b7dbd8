// libFuzzer target: the /proc and /sys file parsers (telemetry/procfs.h, telemetry/proc_tree.h,
// telemetry/mount_table.h, run/cgroup.h) on any text, as a kernel, a container runtime or a /proc root pointed
// elsewhere might present it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "run/cgroup.h"
#include "telemetry/mount_table.h"
#include "telemetry/proc_tree.h"
#include "telemetry/procfs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace t = sat::telemetry;
  (void)t::ParseCpuStat(text);
  (void)t::ParseLoadAvg(text);
  (void)t::ParseMemInfo(text);
  for (const auto& d : t::ParseDiskStats(text)) (void)t::ClassifyDiskByName(d.name);
  (void)t::ParseNetDev(text);
  (void)t::ParsePidStat(text);
  (void)t::ParsePidIo(text);
  (void)t::ParseUptime(text);
  (void)t::ParseMountTable(text);
  if (auto path = sat::run::ParseUnifiedCgroupPath(text)) (void)sat::run::ParseCgroup2Mount(text, *path);
  return 0;
}
