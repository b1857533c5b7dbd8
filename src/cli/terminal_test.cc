#include "cli/terminal.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace sat::cli {
namespace {

TEST(TerminalWidth, TheTerminalsOwnSizeThenColumnsThen120) {
  // A pseudo-terminal 91 columns wide: its size wins over $COLUMNS, which a shell rarely exports.
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  winsize size{};
  size.ws_col = 91;
  size.ws_row = 30;
  ASSERT_EQ(ioctl(slave, TIOCSWINSZ, &size), 0);
  setenv("COLUMNS", "77", 1);
  EXPECT_EQ(TerminalWidth(slave), 91u);

  // Not a terminal: $COLUMNS, else 120.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_EQ(TerminalWidth(fds[1]), 77u);
  setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(TerminalWidth(fds[1]), 120u);
  unsetenv("COLUMNS");
  EXPECT_EQ(TerminalWidth(fds[1]), 120u);
  for (int fd : {master, slave, fds[0], fds[1]}) close(fd);
}

}  // namespace
}  // namespace sat::cli
