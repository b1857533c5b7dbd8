// What report.html costs to make: probe's page for a long probe (2,000 throughput points and 600 GPU samples per
// stage), and a sweep's page of 1,000 runs (1,100 attempts on 8 GPUs, two at a time), from data in memory and
// from a real journal on disk (read-only, as `saturate sweep report` reads it). The counter `bytes` is the page's
// size; the issue asks for under a second and under 2 MB each.
//
// Run: build/report_bench --benchmark_counters_tabular=true
// With SATURATE_REPORT_PAGES=DIR it also writes the two pages there (probe.html, sweep-1000.html), for
// bench/report_render.sh, which times Chromium drawing them.
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "probe/html_report.h"
#include "probe/test_results.h"
#include "sweep/html_report.h"
#include "sweep/journal.h"
#include "sweep/test_page.h"

namespace {

using namespace sat;

void BM_ProbePage(benchmark::State& state) {
  probe::ProbeResult r = probe::results::WithHelper(true, 200, 800, 190);
  r.command = {"python3", "train.py", "--batch-size", "64"};
  r.verdict = probe::Decide(r);
  for (core::StageResult* s : {&r.full, &r.loader, &r.compute}) {
    s->series.clear();
    for (int i = 0; i < 2000; ++i) s->series.push_back({i * 0.25, 200.0 + i % 7});
    for (int i = 0; i < 600; ++i) s->gpu_series.push_back({i * 0.5, 90.0, 40e9, 300.0});
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string html = probe::ProbeHtml(r);
    bytes = html.size();
    benchmark::DoNotOptimize(html);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  if (const char* dir = std::getenv("SATURATE_REPORT_PAGES")) std::ofstream(std::string(dir) + "/probe.html") << probe::ProbeHtml(r);
}
BENCHMARK(BM_ProbePage)->Unit(benchmark::kMillisecond);

void BM_SweepPage(benchmark::State& state) {
  const sweep::SweepPage page = sweep::testing::PackedSweep(static_cast<int>(state.range(0)), 8, 2);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string html = sweep::SweepHtml(page);
    bytes = html.size();
    benchmark::DoNotOptimize(html);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["attempts"] = static_cast<double>(page.attempts.size());
  if (const char* dir = std::getenv("SATURATE_REPORT_PAGES")) {
    std::ofstream(fmt::format("{}/sweep-{}.html", dir, state.range(0))) << sweep::SweepHtml(page);
  }
}
BENCHMARK(BM_SweepPage)->Arg(40)->Arg(1000)->Unit(benchmark::kMillisecond);

// The same runs written to a journal (once, not timed), then read and drawn as `saturate sweep report` does.
void BM_SweepPageFromJournal(benchmark::State& state) {
  const sweep::SweepPage planned = sweep::testing::PackedSweep(static_cast<int>(state.range(0)), 8, 2);
  std::string tmpl = (std::filesystem::exists("/dev/shm") ? std::string("/dev/shm") : std::string("/tmp")) +
                     "/saturate-report-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  const std::string path = dir + "/bench.journal";
  {
    auto journal = sweep::Journal::Open(path);
    if (!journal) {
      state.SkipWithError(journal.error().message.c_str());
      return;
    }
    std::vector<sweep::RunParams> plan;
    for (const sweep::RunRecord& r : planned.status.runs) plan.push_back({r.index, r.key, r.params});
    (void)(*journal)->EnsureRuns({"sweep.yaml", "bench", 1, planned.status.sweep.metric}, plan);
    for (const sweep::AttemptRecord& a : planned.attempts) {
      auto id = (*journal)->BeginAttempt(a.run_key, a.gpu_index, 1, dir + "/logs");
      if (!id) continue;
      sweep::AttemptOutcome outcome;
      outcome.exit_class = a.exit_class == "finished" ? run::ExitClass::kFinished : run::ExitClass::kFailed;
      outcome.exit_code = outcome.exit_class == run::ExitClass::kFinished ? 0 : 1;
      outcome.detail = a.detail;
      outcome.error_line = "boom " + a.run_key + " " + std::to_string(a.attempt_no);
      sweep::Measurements m;
      m.throughput_samples_per_s = 1000;
      m.peak_gpu_memory_bytes = 8ull << 30;
      (void)(*journal)->EndAttempt(*id, outcome, {{"loss", 0.5, 1, sweep::NowUnix()}}, m, sweep::RetryPolicy{});
    }
  }
  size_t bytes = 0, attempts = 0;
  for (auto _ : state) {
    auto page = sweep::ReadSweepPage(path);
    if (!page) {
      state.SkipWithError(page.error().message.c_str());
      break;
    }
    std::string html = sweep::SweepHtml(*page);
    bytes = html.size();
    attempts = page->attempts.size();
    benchmark::DoNotOptimize(html);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["attempts"] = static_cast<double>(attempts);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_SweepPageFromJournal)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
