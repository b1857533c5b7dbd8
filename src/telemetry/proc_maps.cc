#include "telemetry/proc_maps.h"

#include <fstream>
#include <string_view>

namespace sat::telemetry {
namespace {

// A maps line names torch when its file is libtorch*.so or the _C extension inside a torch package (another
// package's _C module does not count).
bool LineMapsTorch(std::string_view line) {
  size_t slash = line.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string_view file = line.substr(slash + 1);
  return file.substr(0, 8) == "libtorch" || (file.substr(0, 3) == "_C." && line.find("/torch/_C.") != line.npos);
}

}  // namespace

std::optional<bool> MapsTorch(pid_t pid, const std::string& proc_root) {
  std::ifstream maps(proc_root + "/" + std::to_string(pid) + "/maps");
  if (!maps) return std::nullopt;
  bool read_any = false;
  for (std::string line; std::getline(maps, line);) {
    read_any = true;
    if (LineMapsTorch(line)) return true;
  }
  if (!read_any) return std::nullopt;
  return false;
}

}  // namespace sat::telemetry
