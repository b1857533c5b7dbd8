#include "cli/terminal.h"

#include <sys/ioctl.h>

#include <cstdlib>

#include "util/strings.h"

namespace sat::cli {

size_t TerminalWidth(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    if (auto v = ParseInt(c); v && *v > 0) return static_cast<size_t>(*v);
  }
  return 120;
}

}  // namespace sat::cli
