#include "util/host.h"

#include <unistd.h>

namespace sat {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

}  // namespace sat
