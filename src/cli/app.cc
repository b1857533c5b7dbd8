#include "cli/app.h"

#include <fmt/core.h>

namespace sat::cli {

int Main(int argc, char** argv) {
  fmt::print("saturate {}\n", SATURATE_VERSION);
  return 0;
}

}  // namespace sat::cli
