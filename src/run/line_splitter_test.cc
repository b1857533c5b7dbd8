#include "run/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sat::run {
namespace {

// Feeds `chunks` in order and returns every line delivered, including the unterminated rest.
std::vector<std::string> Lines(std::vector<std::string_view> chunks, size_t max_line_bytes = 1024) {
  LineSplitter splitter(max_line_bytes);
  std::vector<std::string> out;
  auto sink = [&](std::string_view line) { out.emplace_back(line); };
  for (std::string_view c : chunks) splitter.Feed(c, sink);
  splitter.Finish(sink);
  return out;
}

using V = std::vector<std::string>;

TEST(LineSplitter, SplitsOnNewlineAndCarriageReturn) {
  EXPECT_EQ(Lines({"a\nb\rc\r\nd\n"}), (V{"a", "b", "c", "d"}));
}

TEST(LineSplitter, TqdmRedrawsBecomeSeparateLines) {
  EXPECT_EQ(Lines({"\r  0%|     | 0/10", "\r 50%|##   | 5/10", "\r100%|#####| 10/10\n"}),
            (V{"  0%|     | 0/10", " 50%|##   | 5/10", "100%|#####| 10/10"}));
}

TEST(LineSplitter, LinesMayStraddleChunks) {
  EXPECT_EQ(Lines({"hel", "lo\r", "\nwor", "ld"}), (V{"hello", "world"}));
}

TEST(LineSplitter, DropsEmptyLines) { EXPECT_EQ(Lines({"\n\n\r\na\n\n"}), (V{"a"})); }

TEST(LineSplitter, CutsOverlongLines) { EXPECT_EQ(Lines({"abcdefg\n"}, 3), (V{"abc", "def", "g"})); }

// A character that straddles the cut goes whole into the next piece, so every piece of valid text is valid.
TEST(LineSplitter, CutsOverlongLinesBetweenCharacters) {
  EXPECT_EQ(Lines({"abc\xc3\xa9" "def\n"}, 4), (V{"abc", "\xc3\xa9" "de", "f"}));
  EXPECT_EQ(Lines({"ab\xe2\x82\xac", "xyz\n"}, 4), (V{"ab", "\xe2\x82\xac" "x", "yz"}));
}

}  // namespace
}  // namespace sat::run
