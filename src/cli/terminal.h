// The width of the terminal a live view is drawn on, for monitor's human view and sweep's live block.
#pragma once

#include <cstddef>

namespace sat::cli {

// The columns of the terminal on `fd` (TIOCGWINSZ), else $COLUMNS (a shell's, when exported), else 120.
size_t TerminalWidth(int fd);

}  // namespace sat::cli
