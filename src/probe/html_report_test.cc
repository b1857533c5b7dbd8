#include "probe/html_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/test_results.h"

namespace sat::probe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace results;
using core::StageResult;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = s.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

ProbeResult LoaderBound() {
  ProbeResult r = WithHelper(true, 200, 800, 190);
  r.command = {"python3", "train.py", "--api-key", "sk-secret", "--data", "/data/my images"};
  r.verdict = Decide(r);
  return r;
}

TEST(ProbePipeline, PipesInFlowOrderWithTheVerdictsNarrowest) {
  ProbeResult r = LoaderBound();
  ASSERT_EQ(r.verdict.bottleneck, "loader");
  report::Pipeline p = ProbePipeline(r);
  ASSERT_EQ(p.pipes.size(), 5u);
  EXPECT_EQ(p.pipes[0].name, "storage");
  EXPECT_EQ(p.pipes[1].name, "loader");
  EXPECT_EQ(p.pipes[2].name, "host-to-device");
  EXPECT_EQ(p.pipes[3].name, "compute");
  EXPECT_EQ(p.pipes[4].name, "full training");
  EXPECT_EQ(p.pipes[1].rate, 200);
  EXPECT_EQ(p.pipes[3].rate, 800);
  ASSERT_TRUE(p.narrowest);
  EXPECT_EQ(*p.narrowest, 1u);
  EXPECT_EQ(p.narrowest_why, r.verdict.evidence);
}

TEST(ProbePipeline, AStorageVerdictMarksTheStoragePipe) {
  ProbeResult r = LoaderBound();
  r.verdict.bottleneck = "storage";  // fetch stalls bind the loader (verdict.cc)
  r.verdict.evidence = "the loader waited on reads 70% of its time";
  report::Pipeline p = ProbePipeline(r);
  ASSERT_TRUE(p.narrowest);
  EXPECT_EQ(*p.narrowest, 0u);
  EXPECT_EQ(p.narrowest_why, r.verdict.evidence);
}

TEST(ProbePipeline, StorageAndCopyFromWhatTheSamplerSaw) {
  ProbeResult r = LoaderBound();
  r.loader.telemetry.tree_read_bytes_per_s = Flat(50.0 * 1024 * 1024);
  r.loader.telemetry.disk_busy_pct = Flat(80);
  r.machine.gpu_name = "NVIDIA H100 80GB HBM3";
  r.full.telemetry.gpu_pcie_rx_bytes_per_s = Flat(190.0 * 1e6);  // 1 MB per sample at 190 samples/s
  report::Pipeline p = ProbePipeline(r);
  ASSERT_TRUE(p.pipes[0].rate);
  EXPECT_NEAR(*p.pipes[0].rate, 200 * 100 / 80.0, 1e-6);  // the loader's rate with the disk always busy
  ASSERT_TRUE(p.pipes[2].rate);
  EXPECT_GT(*p.pipes[2].rate, 10000);  // a 64 GB/s link moves tens of thousands of 1 MB samples a second
  // Hardly anything read from disk per sample: the files came from memory, and storage does not limit.
  ProbeResult cached = r;
  cached.loader.telemetry.tree_read_bytes_per_s = Flat(2000);
  EXPECT_FALSE(ProbePipeline(cached).pipes[0].rate);
  EXPECT_EQ(ProbePipeline(cached).pipes[0].rate_text, "not limiting");
  // Data on a network filesystem: the local disk says nothing about it.
  r.data_locations.push_back({});
  r.data_locations.back().network = true;
  EXPECT_FALSE(ProbePipeline(r).pipes[0].rate);
}

TEST(ProbePipeline, NoNarrowestForAFailedRun) {
  ProbeResult r = LoaderBound();
  r.verdict.failed = true;
  r.verdict.bottleneck.clear();
  EXPECT_FALSE(ProbePipeline(r).narrowest);
}

TEST(ProbeHtml, VerdictCommandChartsAndNoSecrets) {
  ProbeResult r = LoaderBound();
  r.full.data_wait_share = 0.6;
  r.full.phase_shares = {{"after_step", 0.1}};
  r.full.auto_seen = true;
  r.full.gpu_series = {{0, 50.0, 4.0e9, 200.0}, {1, 60.0, 4.1e9, 210.0}};
  std::string html = ProbeHtml(r);
  EXPECT_THAT(html, HasSubstr("Verdict: loader"));
  EXPECT_THAT(html, HasSubstr("<div class=\"pipe narrowest\"><div class=\"name\">loader"));
  EXPECT_THAT(html, HasSubstr("<pre>saturate tune -- python3 train.py --api-key '***' --data '/data/my images'</pre>"));
  EXPECT_THAT(html, Not(HasSubstr("sk-secret")));
  EXPECT_THAT(html, HasSubstr(">data wait 60%</div>"));
  EXPECT_THAT(html, HasSubstr("full: throughput over time"));
  EXPECT_THAT(html, HasSubstr(">steady</text>"));
  EXPECT_THAT(html, HasSubstr("GPU utilisation (full)"));
  EXPECT_THAT(html, HasSubstr("GPU power (full)"));
  EXPECT_THAT(html, Not(HasSubstr("nan")));
  EXPECT_THAT(html, Not(HasSubstr("<script ")));
}

TEST(ProbeHtml, NoGpuLanesWithoutAGpu) {
  ProbeResult r = WithHelper(false, 200, 800, 190);
  r.verdict = Decide(r);
  std::string html = ProbeHtml(r);
  EXPECT_THAT(html, Not(HasSubstr("The GPU over time")));
  EXPECT_THAT(html, HasSubstr("no GPU"));
}

TEST(ProbeHtml, OneRowPerRankWithTheStragglerMarked) {
  ProbeResult r = LoaderBound();
  auto rank = [](int64_t k, double wait_ms) {
    measure::ProcessTotals p;
    p.pid = 1000 + k;
    p.rank = k;
    p.steps = 100;
    p.samples = 3200;
    p.wait_s = wait_ms / 10;
    p.step_s = 5;
    p.samples_per_s = 300;
    return p;
  };
  r.full.world_size = 3;
  r.full.totals.per_process = {rank(0, 5), rank(1, 60), rank(2, 5)};
  std::string html = ProbeHtml(r);
  EXPECT_EQ(Count(html, "<tr class=\"bad straggler\">"), 1u);
  EXPECT_THAT(html, HasSubstr("Straggler: rank 1"));
  // ranks table rows: one per rank
  size_t table = html.find("<table id=\"ranks\"");
  ASSERT_NE(table, std::string::npos);
  std::string ranks = html.substr(table, html.find("</table>", table) - table);
  EXPECT_EQ(Count(ranks, "<tr"), 4u);  // the header and three ranks
}

TEST(ProbeHtml, WhatIfAndCostAsTables) {
  ProbeResult r = LoaderBound();
  r.price_per_gpu_hour = 2.5;
  r.what_if = {{"a100", 1, std::nullopt}};
  std::string html = ProbeHtml(r);
  EXPECT_THAT(html, HasSubstr("What if (estimates)"));
  EXPECT_THAT(html, HasSubstr("Energy and cost"));
  EXPECT_THAT(html, HasSubstr("per million samples"));
}

TEST(ProbeHtml, UnknownVerdictSuggestsALongerProbe) {
  ProbeResult r = Silent(false);
  r.command = {"python3", "train.py"};
  r.budget_s = 120;
  r.verdict = Decide(r);
  ASSERT_TRUE(r.verdict.bottleneck.empty());
  EXPECT_EQ(NextCommand(r), "saturate probe --budget 240s -- python3 train.py");
  r.command = {"python3 train.py | tee log"};
  EXPECT_EQ(NextCommand(r), "saturate probe --budget 240s --shell -- 'python3 train.py | tee log'");
}

// A long probe (every series at its longest) stays a small page.
TEST(ProbeHtml, StaysSmall) {
  ProbeResult r = LoaderBound();
  for (StageResult* s : {&r.full, &r.loader, &r.compute}) {
    s->series.clear();
    s->gpu_series.clear();
    for (int i = 0; i < 2000; ++i) s->series.push_back({i * 0.25, 200.0 + i % 7});
    for (int i = 0; i < 600; ++i) s->gpu_series.push_back({i * 0.5, 90.0, 40e9, 300.0});
  }
  EXPECT_LT(ProbeHtml(r).size(), 2u * 1024 * 1024);
}

}  // namespace
}  // namespace sat::probe
