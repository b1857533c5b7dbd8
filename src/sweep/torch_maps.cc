#include "sweep/torch_maps.h"

#include <fmt/format.h>

#include <fstream>
#include <string>

namespace sat::sweep {
namespace {

bool MapsTorch(pid_t pid, std::string_view proc_root) {
  std::ifstream maps(fmt::format("{}/{}/maps", proc_root, pid));
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string_view file = std::string_view(line).substr(slash + 1);
    if (file.substr(0, 8) == "libtorch" || (file.substr(0, 3) == "_C." && line.find("/torch/_C.") != line.npos)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool AnyMapsTorch(const std::vector<pid_t>& pids, std::string_view proc_root) {
  for (pid_t pid : pids) {
    if (MapsTorch(pid, proc_root)) return true;
  }
  return false;
}

}  // namespace sat::sweep
