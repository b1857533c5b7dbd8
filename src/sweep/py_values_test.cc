#include "sweep/py_values.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sat::sweep {
namespace {

using nlohmann::json;

// What PyYAML 6.0's safe_load gives for `v: TEXT` (checked against it when these cases were written).
TEST(ResolvePlainScalar, TypesLikePyYaml) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"0.01", 0.01},
      {"32", 32},
      {"1e-3", "1e-3"},
      {"1.0e-3", 0.001},
      {"1.0e3", "1.0e3"},
      {"1.e+3", 1000.0},
      {".5", 0.5},
      {"-.5", "-.5"},
      {"+.5", "+.5"},
      {"-0.5", -0.5},
      {"1_000", 1000},
      {"0x1F", 31},
      {"017", 15},
      {"08", "08"},
      {"0b101", 5},
      {"0o17", "0o17"},
      {"yes", true},
      {"No", false},
      {"on", true},
      {"OFF", false},
      {"true", true},
      {"~", nullptr},
      {"null", nullptr},
      {"", nullptr},
      {"adam", "adam"},
      {"1:30", 90},
      {"-0", 0},
      {"+7", 7},
      {"1__0", 10},
      {"0_", 0},
      {"0.", 0.0},
      {"3.", 3.0},
      {"1_0.5_", 10.5},
      {"1.0e+3_", "1.0e+3_"},
      {"1.5e+16", 1.5e16},
      {"2001-12-14", "2001-12-14"},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
      {"9223372036854775808", "9223372036854775808"},
  };
  for (const auto& [text, expected] : cases) {
    const json got = ResolvePlainScalar(text);
    EXPECT_EQ(got.type_name(), std::string(expected.type_name())) << "'" << text << "'";
    EXPECT_EQ(got, expected) << "'" << text << "'";
  }
  EXPECT_TRUE(std::isinf(ResolvePlainScalar("-.inf").get<double>()));
  EXPECT_LT(ResolvePlainScalar("-.inf").get<double>(), 0);
  EXPECT_TRUE(std::isnan(ResolvePlainScalar(".NaN").get<double>()));
}

// What Python 3's str() prints.
TEST(PyFloatRepr, MatchesPython) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.01, "0.01"},
      {1.0, "1.0"},
      {0.0001, "0.0001"},
      {1e-05, "1e-05"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {123456789.123, "123456789.123"},
      {-2.5e-07, "-2.5e-07"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1.0 / 3, "0.3333333333333333"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {1.5e16, "1.5e+16"},
      {-0.0, "-0.0"},
      {0.0, "0.0"},
      {std::numeric_limits<double>::infinity(), "inf"},
  };
  for (const auto& [v, expected] : cases) EXPECT_EQ(PyFloatRepr(v), expected);
}

TEST(PyStr, MatchesPythonStr) {
  EXPECT_EQ(PyStr(json(0.01)), "0.01");
  EXPECT_EQ(PyStr(json(32)), "32");
  EXPECT_EQ(PyStr(json(true)), "True");
  EXPECT_EQ(PyStr(json(false)), "False");
  EXPECT_EQ(PyStr(json(nullptr)), "None");
  EXPECT_EQ(PyStr(json("adam")), "adam");
  EXPECT_EQ(PyStr(json::parse(R"([64, "relu", 0.1, true, null, "it's", "say \"hi\"", "a\nb"])")),
            R"([64, 'relu', 0.1, True, None, "it's", 'say "hi"', 'a\nb'])");
  EXPECT_EQ(PyStr(json::parse(R"({"b": 1, "a": [2]})")), "{'a': [2], 'b': 1}");  // keys sorted, see header
}

TEST(PyJsonDumps, MatchesPythonJsonDumps) {
  const json v = json::parse(
      R"({"bs": 32, "e": "\ud83d\ude00\t\"q\"", "f": true, "l": [1, 2.5], "lr": 0.01, "n": null, "name": "résumé☃"})");
  EXPECT_EQ(PyJsonDumps(v),
            R"({"bs": 32, "e": "\ud83d\ude00\t\"q\"", "f": true, "l": [1, 2.5], "lr": 0.01, "n": null, )"
            R"("name": "r\u00e9sum\u00e9\u2603"})");
  EXPECT_EQ(PyJsonDumps(json::object()), "{}");
  EXPECT_EQ(PyJsonDumps(json(1e-05)), "1e-05");
}

}  // namespace
}  // namespace sat::sweep
