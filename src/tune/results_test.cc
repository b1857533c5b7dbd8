#include "tune/results.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tune/html_report.h"
#include "tune/test_model.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Results, JsonCarriesThePicksTrialsAndDecisions) {
  TuneResult r = testing::ModelResult();
  nlohmann::json j = ResultsJson(r);
  EXPECT_EQ(j["recommended"]["batch_size"], 256);
  EXPECT_EQ(j["fastest"]["batch_size"], 300);
  EXPECT_EQ(j["largest_fitting"]["batch_size"], 300);
  EXPECT_EQ(j["trials"].size(), r.search.trials.size());
  EXPECT_EQ(j["decisions"].size(), r.search.decisions.size());
  EXPECT_EQ(j["knobs"][0]["name"], "workers");
  EXPECT_EQ(j["knobs"][0]["exposed"], true);
  EXPECT_EQ(j["knobs"][0]["script_value"], 0);
  EXPECT_GT(j["throughput"]["recommended"].get<double>(), j["throughput"]["baseline"].get<double>());
  EXPECT_TRUE(j["failure"].is_null());
  EXPECT_EQ(j["strategy"], "guided");
  EXPECT_THAT(j["recommended_command"].get<std::string>(), HasSubstr("SATURATE_KNOBS="));
  EXPECT_FALSE(j["needs"]["text"].get<std::string>().empty());
  // Every trial parses back.
  for (const auto& t : j["trials"]) EXPECT_TRUE(TrialFromJson(t));
}

// Every command results.json and report.html carry hides secrets, and so do the script's own options.
TEST(Results, ASecretInsideAShellCommandIsHidden) {
  TuneResult r = testing::ModelResult();
  r.shell = true;
  r.command = {"python3 train.py --api-key sk-456 --batch-size {batch_size} | tee log"};
  for (const std::string& text : {ResultsJson(r).dump(), HtmlReport(r)}) {
    EXPECT_EQ(text.find("sk-456"), std::string::npos);
  }
}

TEST(Results, SecretsAreHiddenInEveryCommandWritten) {
  TuneResult r = testing::ModelResult();
  r.command = {"python3", "train.py", "--api-key", "sk-123", "--batch-size", "{batch_size}"};
  r.recommended_command = "python3 train.py --api-key sk-123 --batch-size 64";
  r.fastest_command = "WANDB_API_KEY=wk-9 python3 train.py --api-key=sk-123 --batch-size 128";
  measure::FlagOption key;
  key.dest = "api_key";
  key.strings = {"--api-key"};
  key.kind = "value";
  key.value = "***";  // as every sender's flags message arrives (helper_message.cc hides it)
  r.search.trials.front().script_flags = {key};
  for (const std::string& text : {ResultsJson(r).dump(), HtmlReport(r)}) {
    EXPECT_EQ(text.find("sk-123"), std::string::npos);
    EXPECT_EQ(text.find("wk-9"), std::string::npos);
  }
  nlohmann::json j = ResultsJson(r);
  EXPECT_EQ(j["recommended_command"], "python3 train.py --api-key *** --batch-size 64");
  EXPECT_EQ(j["command"][3], "***");
}

TEST(Results, JsonSaysWhatWasNotDetermined) {
  testing::ScriptModel model;
  model.exposes = {"workers"};
  TuneResult r = testing::ModelResult(model);
  nlohmann::json j = ResultsJson(r);
  EXPECT_TRUE(j["largest_fitting"].is_null());
  EXPECT_TRUE(j["throughput"]["fastest_compute"].is_null());
  EXPECT_EQ(j["knobs"][2]["name"], "batch_size");
  EXPECT_EQ(j["knobs"][2]["exposed"], false);
  EXPECT_THAT(j["knobs"][2]["note"].get<std::string>(), HasSubstr("does not expose"));
}

TEST(Results, CsvHasOneRowPerTrialAndAColumnPerKnob) {
  TuneResult r = testing::ModelResult();
  std::string csv = ResultsCsv(r);
  std::vector<std::string> lines = Split(csv, '\n');
  ASSERT_EQ(lines.size(), r.search.trials.size() + 2);  // header, rows, the empty piece after the last newline
  EXPECT_EQ(lines[0].rfind("id,step,mode,workers,amp,batch_size,preload,cached,exit_class,samples_per_s", 0), 0u);
  // The baseline set nothing: its cells show what the script reported.
  EXPECT_EQ(lines[1].rfind("1,baseline,full,0,off,64,off,0,stopped,", 0), 0u);
  size_t columns = Split(lines[0], ',').size();
  for (size_t i = 1; i + 1 < lines.size(); ++i) EXPECT_EQ(Split(lines[i], ',').size(), columns) << lines[i];
  EXPECT_THAT(csv, HasSubstr(",gpu_oom,"));
}

TEST(Results, HtmlIsSelfContainedWithTheCharts) {
  TuneResult r = testing::ModelResult();
  std::string html = HtmlReport(r);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("Loader throughput against workers"));
  EXPECT_THAT(html, HasSubstr("compute ceiling"));
  EXPECT_THAT(html, HasSubstr("Throughput against batch size"));
  EXPECT_THAT(html, HasSubstr("memory at peak"));
  EXPECT_THAT(html, HasSubstr("warm-up"));
  EXPECT_THAT(html, HasSubstr("CPU use beside throughput (no GPU)"));
  EXPECT_THAT(html, HasSubstr("Recommended:"));
  // Nothing fetched from anywhere: no links, no external scripts, images or fonts; the one script (sorting the
  // trial table, copying the command) is inline.
  EXPECT_THAT(html, Not(HasSubstr("http")));
  EXPECT_THAT(html, Not(HasSubstr("<script ")));
  EXPECT_THAT(html, HasSubstr("<table class=\"sortable\">"));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  // The command is escaped, not injected.
  r.command = {"train.py", "--tag", "<b>&"};
  EXPECT_THAT(HtmlReport(r), HasSubstr("--tag &lt;b&gt;&amp;"));
  // One chart of throughput over time per successful trial, plus the three overview charts.
  size_t svgs = 0;
  for (size_t pos = 0; (pos = html.find("<svg", pos)) != std::string::npos; ++pos) ++svgs;
  size_t with_series = 0;
  for (const auto& t : r.search.trials) with_series += Succeeded(t);
  EXPECT_LT(with_series, r.search.trials.size());  // failed trials get no chart
  EXPECT_EQ(svgs, with_series + 3);
}

TEST(Results, HtmlOfAFailedTune) {
  TuneResult r = testing::ModelResult();
  r.search = SearchOutcome{};
  r.search.failed = true;
  r.search.failure = "the baseline run failed (failed: exit code 1: boom)";
  std::string html = HtmlReport(r);
  EXPECT_THAT(html, HasSubstr("No recommendation"));
  EXPECT_THAT(html, HasSubstr("boom"));
}

// A script without flags: the automatic instrumentation's knobs, injected.
TuneResult AutomaticResult() {
  testing::ScriptModel model;
  model.automatic = true;
  model.exposes = {"batch_size", "workers", "amp"};
  return testing::ModelResult(model);
}

TEST(Results, JsonSaysWhatWasInjectedAndTheCodeChange) {
  nlohmann::json j = ResultsJson(AutomaticResult());
  EXPECT_EQ(j["auto"], true);
  EXPECT_EQ(j["loader"]["site"], "train.py:57");
  EXPECT_EQ(j["injected"], nlohmann::json({"workers", "amp", "batch_size"}));
  EXPECT_EQ(j["knobs"][0]["delivery"], "injected");
  ASSERT_EQ(j["code_changes"].size(), 2u);
  EXPECT_EQ(j["code_changes"][0]["text"], "DataLoader at train.py:57: DataLoader(..., num_workers=7, batch_size=256)");
  EXPECT_EQ(j["code_changes"][1]["code"], R"(with torch.autocast("cpu", dtype=torch.bfloat16):)");
  // The pasteable command runs the script as it is: injected knobs are not saturate's environment variables.
  EXPECT_EQ(j["recommended_command"], "/usr/bin/python3 train.py --data '/tmp/a b'");
  EXPECT_EQ(j["speedup"]["claim"], "faster");
}

TEST(Results, SpeedUpIsClaimedOnlyWhenDistinguishable) {
  EXPECT_NEAR(ResultsJson(testing::ModelResult())["speedup"]["ratio"].get<double>(), 6.4, 1e-9);
  testing::ScriptModel model;
  model.unsettled = [](const TrialRequest& r) { return r.repeat >= 1; };
  TuneResult r = testing::ModelResult(model);
  nlohmann::json j = ResultsJson(r);
  EXPECT_TRUE(j["speedup"]["ratio"].is_null());
  EXPECT_EQ(j["speedup"]["claim"], "not distinguishable");
  std::string html = HtmlReport(r);
  EXPECT_NE(html.find("not distinguishable from the baseline"), std::string::npos);
  EXPECT_EQ(html.find("× the baseline"), std::string::npos);
  EXPECT_NE(HtmlReport(testing::ModelResult()).find("6.40× the baseline"), std::string::npos);
}

TEST(Results, HtmlSpellsOutTheInjectedKnobs) {
  std::string html = HtmlReport(AutomaticResult());
  EXPECT_THAT(html, HasSubstr("Injected by saturate"));
  EXPECT_THAT(html, HasSubstr("<code>DataLoader(..., num_workers=7, batch_size=256)</code>"));
  EXPECT_THAT(html, HasSubstr("with torch.autocast(&quot;cpu&quot;, dtype=torch.bfloat16):"));
  EXPECT_THAT(html, HasSubstr("<td>injected</td>"));
}

TEST(Results, WritesTheThreeFiles) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("saturate-results-test-" + std::to_string(getpid()));
  TuneResult r = testing::ModelResult();
  ASSERT_TRUE(WriteOutputs(r, (dir / "out").string()));
  for (const char* f : {"results.json", "results.csv", "report.html"})
    EXPECT_TRUE(std::filesystem::exists(dir / "out" / f)) << f;
  std::ifstream in(dir / "out" / "results.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(nlohmann::json::parse(text.str()), ResultsJson(r));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sat::tune
