#include "probe/outputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "probe/html_report.h"
#include "probe/report.h"
#include "probe/test_results.h"
#include "probe/verdict.h"
#include "util/json_text.h"
#include "util/test_dir.h"

namespace sat::probe {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ProbeOutputs, ProbeJsonAndReportHtmlAreTheResultsFormatted) {
  ProbeResult r = results::WithHelper(true, 200, 800, 190);
  r.verdict = Decide(r);
  TempDir dir;
  const std::string out = dir.File("out/nested");  // created
  ASSERT_TRUE(WriteProbeOutputs(r, out));
  EXPECT_EQ(Read(out + "/probe.json"), JsonText(ProbeJson(r), 2) + "\n");
  EXPECT_EQ(Read(out + "/report.html"), ProbeHtml(r));
  EXPECT_EQ(nlohmann::json::parse(Read(out + "/probe.json"))["verdict"]["bottleneck"], "loader");
}

TEST(ProbeOutputs, AFolderThatCannotBeMadeIsAnError) {
  TempDir dir;
  std::ofstream(dir.File("file")) << "x";
  EXPECT_FALSE(WriteProbeOutputs(results::WithHelper(true, 200, 800, 190), dir.File("file/out")));
}

}  // namespace
}  // namespace sat::probe
