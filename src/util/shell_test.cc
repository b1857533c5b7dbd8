#include "util/shell.h"

#include <gtest/gtest.h>

namespace sat {
namespace {

TEST(ShellQuote, SafeWordsStayAndTheRestIsQuoted) {
  EXPECT_EQ(ShellQuote("train.py"), "train.py");
  EXPECT_EQ(ShellQuote("--lr=0.1"), "--lr=0.1");
  EXPECT_EQ(ShellQuote("user@host:/data,x+y%"), "user@host:/data,x+y%");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote(R"({"a":1})"), R"('{"a":1}')");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote("a\nb"), "'a\nb'");
}

TEST(ShellJoin, EachWordQuotedOneSpaceBetween) {
  EXPECT_EQ(ShellJoin({"python3", "train.py", "--name", "my run", ""}), "python3 train.py --name 'my run' ''");
  EXPECT_EQ(ShellJoin({}), "");
}

}  // namespace
}  // namespace sat
