// What a Prometheus scrape of `--serve` costs: rendering the page (RenderExposition over a snapshot of
// LiveFigures) for 1 and 8 GPUs with GPM, the host, a watched tree and 4 runs; and a whole scrape over loopback
// (a cpp-httplib client against serve::MetricsServer on a kept-alive connection, as Prometheus scrapes).
//
// Run: build/exposition_bench
#include <benchmark/benchmark.h>
#include <httplib.h>

#include <cstdlib>

#include "monitor/exposition.h"
#include "live/live_figures.h"
#include "monitor/test_samples.h"
#include "serve/metrics_server.h"
#include "telemetry/sampler.h"

namespace {

using sat::live::LiveFigures;

// A machine with `gpus` busy H200s (the monitor tests' readings, with GPM), a busy host and a watched trainer,
// and four runs reporting.
void Fill(LiveFigures& figures, int gpus) {
  sat::telemetry::Sample s;
  for (int i = 0; i < gpus; ++i) {
    sat::telemetry::GpuSample g = sat::monitor::testing::BusyH200(static_cast<unsigned>(i));
    g.gpm_sm_active_pct = 38.2;
    g.gpm_sm_occupancy_pct = 21.7;
    g.gpm_tensor_active_pct = 9.1;
    g.gpm_dram_bw_util_pct = 64.3;
    s.gpus.push_back(g);
  }
  s.host = sat::monitor::testing::BusyHost();
  s.tree = sat::monitor::testing::BusyTree();
  s.tree->samples_per_s = 2875.5;
  s.tree->steps_per_s = 11.2;
  s.tree->data_wait_share = 0.03;
  figures.SetSample(s);
  figures.SetTreeCommand("python3 train.py --model resnet50 --batch-size 256");
  for (int r = 0; r < 4; ++r) {
    for (int k = 0; k < 50; ++k) {
      figures.ObserveRun("run" + std::to_string(r), {{"command", "sweep"}, {"run", std::to_string(r)}},
                         {.t_end_s = 100 + 0.1 * k, .duration_s = 0.1, .samples = 256, .stream = 1});
    }
  }
}

void BM_RenderPage(benchmark::State& state) {
  LiveFigures figures("node7");
  Fill(figures, static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string page = sat::monitor::RenderExposition(figures.Snapshot(105));
    bytes = page.size();
    benchmark::DoNotOptimize(page);
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderPage)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond);

void BM_Scrape(benchmark::State& state) {
  LiveFigures figures("node7");
  Fill(figures, static_cast<int>(state.range(0)));
  auto server = sat::serve::MetricsServer::Start(
      {"127.0.0.1", 0}, [&] { return sat::monitor::RenderExposition(figures.Snapshot(105)); });
  if (!server) {
    state.SkipWithError(server.error().message.c_str());
    return;
  }
  httplib::Client client((*server)->address().host, (*server)->address().port);
  client.set_keep_alive(true);
  for (auto _ : state) {
    auto response = client.Get("/metrics");
    if (!response || response->status != 200) {
      state.SkipWithError("scrape failed");
      break;
    }
    benchmark::DoNotOptimize(response->body);
  }
}
BENCHMARK(BM_Scrape)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
