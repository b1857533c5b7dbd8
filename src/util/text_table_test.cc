#include "util/text_table.h"

#include <gtest/gtest.h>

#include "util/utf8.h"

namespace sat {
namespace {

using Align = TextColumn::Align;

TEST(DisplayWidth, CountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("samples/s"), 9u);
  EXPECT_EQ(DisplayWidth("±95%"), 4u);           // 5 bytes
  EXPECT_EQ(DisplayWidth("café"), 4u);           // precomposed é
  EXPECT_EQ(DisplayWidth("cafe\xcc\x81"), 4u);   // e + combining acute: no column of its own
  EXPECT_EQ(DisplayWidth("日本語"), 6u);          // wide: two columns each
  EXPECT_EQ(DisplayWidth("ｘ"), 2u);             // fullwidth form
  EXPECT_EQ(DisplayWidth("🚀"), 2u);
  EXPECT_EQ(DisplayWidth("a\xffz"), 3u);         // a malformed byte is one character
  EXPECT_EQ(DisplayWidth("\xe6\x97"), 2u);       // a cut sequence: one replacement per byte
}

TEST(TextTable, PadsLeftAndRightColumnsAndTrimsLineEnds) {
  const std::string table = TextTable({{Align::kLeft}, {Align::kRight}, {Align::kLeft}},
                                      {{"name", "rate", "note"}, {"a", "1,840", ""}, {"longer", "7", "ok"}});
  EXPECT_EQ(table,
            "name     rate  note\n"
            "a       1,840\n"
            "longer      7  ok\n");
}

TEST(TextTable, AlignsByDisplayWidth) {
  // Byte counts would pad the row holding "±" and the CJK name one and three columns short.
  const std::string table = TextTable({{Align::kLeft}, {Align::kRight}, {Align::kLeft}},
                                      {{"run", "±95%", "x"}, {"日本", "±1.2%", "y"}, {"b", "±10%", "z"}});
  EXPECT_EQ(table,
            "run    ±95%  x\n"
            "日本  ±1.2%  y\n"
            "b      ±10%  z\n");
}

TEST(TextTable, MinimumWidthsShortRowsAndLineBreaks) {
  const std::string table = TextTable({{Align::kRight, 3}, {Align::kLeft, 7}, {Align::kRight, 6}},
                                      {{"#", "mode", "time"}, {"1", "two\nlines"}, {"12", "x", "1.5s", "extra"}});
  EXPECT_EQ(table,
            "  #  mode         time\n"
            "  1  two lines\n"
            " 12  x            1.5s\n");
}

TEST(TextTable, NoRowsNoText) { EXPECT_EQ(TextTable({{Align::kLeft}}, {}), ""); }

}  // namespace
}  // namespace sat
