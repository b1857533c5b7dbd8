#include "util/utf8.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>

#include "util/json_text.h"

namespace sat {
namespace {

TEST(Utf8, PrefixNeverEndsInsideACharacter) {
  const std::string line = std::string(299, 'x') + "é tail";  // 'é' is bytes 299 and 300
  EXPECT_EQ(Utf8PrefixLength(line, 300), 299u);
  EXPECT_EQ(Utf8PrefixLength(line, 301), 301u);
  EXPECT_EQ(Utf8PrefixLength("short", 300), 5u);
  EXPECT_EQ(Utf8PrefixLength(std::string(10, '\xff'), 4), 4u);  // bytes that are no UTF-8 count one each
}

TEST(Utf8, VisibleTextShowsControlBytesAndKeepsCharacters) {
  EXPECT_EQ(VisibleText("plain text, caf\xc3\xa9 \xe2\x82\xac"), "plain text, caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(VisibleText("\x1b[2Jtab\there\r\n\x7f"), "\\x1b[2Jtab\\x09here\\x0d\\x0a\\x7f");
  // A C1 control (U+009B, CSI) and bytes that are no UTF-8 are shown byte by byte.
  EXPECT_EQ(VisibleText("\xc2\x9b" "1m \xff\xe2\x82"), "\\xc2\\x9b1m \\xff\\xe2\\x82");
}

TEST(Utf8, ClipKeepsValidTextValid) {
  const std::string line = std::string(299, 'x') + "é tail";
  const std::string clipped = ClipText(line, 300);
  EXPECT_EQ(clipped, std::string(299, 'x') + "...");
  EXPECT_NO_THROW(nlohmann::json(clipped).dump());
}

TEST(Utf8, ValidUtf8ReplacesOnlyMalformedBytes) {
  EXPECT_EQ(ValidUtf8("plain é ü €"), "plain é ü €");
  EXPECT_EQ(ValidUtf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(ValidUtf8("\xc3"), "\xef\xbf\xbd");          // truncated two-byte sequence
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a UTF-16 surrogate
}

TEST(Utf8, JsonTextReplacesWhereDumpThrows) {
  nlohmann::json j = {{"line", std::string("Fehler: ung\xfcltig")}};  // Latin-1 'ü'
  EXPECT_THROW(j.dump(), nlohmann::json::type_error);
  EXPECT_EQ(JsonText(j), "{\"line\":\"Fehler: ung\xef\xbf\xbdltig\"}");
}

// Seeded random bytes: whatever a child prints, the helpers' results are valid UTF-8 that nlohmann accepts.
TEST(Utf8, RandomBytesAlwaysComeOutValid) {
  std::mt19937 rng(19);
  for (int round = 0; round < 5000; ++round) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0x80 + rng() % 0x80 : rng() % 256);
    const std::string valid = ValidUtf8(s);
    EXPECT_EQ(ValidUtf8(valid), valid);
    EXPECT_NO_THROW(nlohmann::json(valid).dump());
    const size_t cut = rng() % 45;
    EXPECT_LE(Utf8PrefixLength(valid, cut), cut);
    EXPECT_NO_THROW(nlohmann::json(valid.substr(0, Utf8PrefixLength(valid, cut))).dump());
  }
}

}  // namespace
}  // namespace sat
