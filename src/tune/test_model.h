// A deterministic model of a training script for tests of the search and the reports: throughput as a function
// of the mode and the knob values, out of memory above a batch size. Tests only.
#pragma once

#include <algorithm>
#include <functional>
#include <set>
#include <string>

#include "tune/code_change.h"
#include "tune/command.h"
#include "tune/search.h"
#include "tune/tune.h"

namespace sat::tune::testing {

struct ScriptModel {
  int64_t oom_above = 300;         // batch sizes above this run out of memory
  int64_t crash_above = 1 << 30;   // batch sizes above this fail for another reason
  int64_t oom_above_with_allocator = 0;  // with expandable_segments=on (0: the same as without)
  double per_worker = 500;         // loader samples/s per worker; the main process alone loads as one worker
  double compute_peak = 2000;      // compute samples/s as the batch grows (saturating: b / (b + 8))
  double bf16_speedup = 1.5;       // amp=bf16; amp=fp16 crashes
  double preload_gain = 1.1;       // full training with preload=on
  double per_batch_s = 0;          // full training: the loader's fixed work per batch (collation, a hand-over)
  bool helper = true;              // reports through the helper (loader and compute modes work)
  bool shared_cpu = false;         // full training on the CPU: workers do not overlap the model and cost 30%
  bool in_line = false;            // full training with 0 workers: loading and computing take turns (1/L + 1/C)
  // Compute samples/s at batch b when set, instead of the saturating curve (e.g. a CPU slower at large batches).
  std::function<double(int64_t)> compute_at;
  double wall_s = 10;              // each trial's length in seconds
  std::set<std::string> exposes = {"batch_size", "workers", "amp", "preload"};
  KnobValues defaults = {{"batch_size", 64}, {"workers", 0}, {"amp", "off"}, {"preload", "off"}};
  double mem_total = 1000;         // memory units; each sample of a batch takes one
  double half_width = 0.01;        // each estimate's 95% interval, a share of the rate either way
  // Trials this returns true for end before their estimate settles (too few steady observations).
  std::function<bool(const TrialRequest&)> unsettled = [](const TrialRequest&) { return false; };
  // The script has no flags: the automatic instrumentation reports its knobs ("auto": true) and its loader.
  bool automatic = false;
  // The options the script parsed (sent with every trial), and the knobs whose option really reaches the loader:
  // a knob set by an option not in `flags_reach` keeps the script's default.
  std::vector<measure::FlagOption> script_flags;
  std::set<std::string> flags_reach;
  // The GPU's mean power in watts during a trial of `r` at `rate` samples/s; unset: no energy reading.
  std::function<double(const TrialRequest& r, double rate)> watts;
  // A multiplier on trial `id`'s rate (run-to-run noise), its interval kept around the noisy rate; unset: none.
  std::function<double(int id)> jitter;
  int calls = 0;

  KnobValue Value(const KnobValues& set, const std::string& name) const {
    auto it = set.find(name);
    return it != set.end() ? it->second : defaults.at(name);
  }

  double Compute(const KnobValues& v) const {
    double b = static_cast<double>(Value(v, "batch_size").get<int64_t>());
    double rate = compute_at ? compute_at(Value(v, "batch_size").get<int64_t>()) : compute_peak * b / (b + 8);
    return Value(v, "amp") == "bf16" ? rate * bf16_speedup : rate;
  }
  double Loader(const KnobValues& v) const {
    return per_worker * static_cast<double>(std::max<int64_t>(1, Value(v, "workers").get<int64_t>()));
  }

  Trial operator()(int id, const TrialRequest& r) {
    ++calls;
    Trial t;
    t.id = id;
    t.request = r;
    t.helper_seen = helper;
    t.auto_seen = helper && automatic;
    for (const auto& name : exposes) {
      if (!helper || !defaults.count(name)) continue;
      t.knobs_seen[name] = r.flags.count(name) && !flags_reach.count(name) ? defaults.at(name) : Value(r.knobs, name);
      if (automatic) t.knobs_auto.insert(name);
    }
    t.script_flags = script_flags;
    if (t.auto_seen) {
      t.loader_key = "train.py:57#0";
      t.loader_site = "train.py:57";
    }
    int64_t b = Value(r.knobs, "batch_size").get<int64_t>();
    t.mem_total_bytes = mem_total;
    t.mem_peak_bytes = static_cast<double>(b);
    t.wall_s = wall_s;
    auto alloc = r.knobs.find("expandable_segments");
    bool expandable = alloc != r.knobs.end() && alloc->second == "on" && oom_above_with_allocator > 0;
    if (r.mode != core::StageKind::kLoader && b > (expandable ? oom_above_with_allocator : oom_above)) {
      t.exit_class = run::ExitClass::kGpuOom;
      t.detail = "GPU out of memory: CUDA out of memory";
      return t;
    }
    if (b > crash_above) {
      t.exit_class = run::ExitClass::kFailed;
      t.detail = "exited with code 1: batch size larger than the dataset";
      return t;
    }
    if (r.mode != core::StageKind::kLoader && Value(r.knobs, "amp") == "fp16") {
      t.exit_class = run::ExitClass::kFailed;
      t.detail = "exit code 1: fp16 needs CUDA";
      return t;
    }
    double rate = 0;
    switch (r.mode) {
      case core::StageKind::kLoader: rate = Loader(r.knobs); break;
      case core::StageKind::kCompute: rate = Compute(r.knobs); break;
      case core::StageKind::kFull:
        rate = shared_cpu ? 1 / (1 / per_worker + 1 / Compute(r.knobs)) /
                                (Value(r.knobs, "workers").get<int64_t>() > 0 ? 1.3 : 1)
               : in_line && Value(r.knobs, "workers").get<int64_t>() == 0
                   ? 1 / (1 / Loader(r.knobs) + 1 / Compute(r.knobs))
                   : std::min(Loader(r.knobs), Compute(r.knobs));
        rate *= Value(r.knobs, "preload") == "on" ? preload_gain : 1;
        rate = 1 / (1 / rate + per_batch_s / static_cast<double>(b));
        break;
    }
    if (!helper && r.mode != core::StageKind::kFull) rate = 0;
    if (jitter) rate *= jitter(id);
    t.exit_class = run::ExitClass::kStopped;
    t.samples_per_s = rate;
    t.ci_low = rate * (1 - half_width);
    t.ci_high = rate * (1 + half_width);
    t.converged = rate > 0 && half_width <= 0.03;
    t.settled = rate > 0;
    t.observations = 60;
    t.steady_steps = 50;
    if (unsettled(r)) {
      t.converged = t.settled = false;
      t.unsettled_why = "still drifting";
      t.steady_steps = 8;
    }
    t.warmup_s = 2;
    t.steady_s = 5;
    t.series = {{1, rate * 0.5}, {3, rate}, {5, rate}};
    t.cpu_pct = 150;
    t.cpu_pct_p95 = 170;
    t.rss_peak_bytes = 1e9 + 1e8 * static_cast<double>(Value(r.knobs, "workers").get<int64_t>());
    if (watts && rate > 0) {
      t.watts = watts(r, rate);
      t.joules_per_sample = *t.watts / rate;
    }
    return t;
  }
};

// The knobs the model's script has, as `saturate tune --knob ...` would give them on a 8-core CPU machine.
inline std::vector<KnobSpec> ModelKnobs(std::vector<std::string> names = {"batch_size", "workers", "amp", "preload"}) {
  MachineFacts m{8, false};
  std::vector<KnobSpec> out;
  for (const auto& n : names) {
    KnobSpec k = *DefaultKnob(n, m);
    if (k.role == KnobRole::kAmp) k.choices = {"off", "bf16", "fp16"};
    out.push_back(k);
  }
  std::stable_sort(out.begin(), out.end(), [](const KnobSpec& a, const KnobSpec& b) { return a.role < b.role; });
  return out;
}

// A whole tune of the model, as RunTune would return it, for the report tests.
inline TuneResult ModelResult(ScriptModel model = {}) {
  TuneResult r;
  r.command = {"/usr/bin/python3", "train.py", "--data", "/tmp/a b"};
  r.machine.hostname = "box";
  r.machine.cpu_count = r.machine.usable_cores = 8;
  r.machine.mem_total_bytes = 32ull << 30;
  r.budget_s = 600;
  r.wall_s = 250;
  r.python_dir = "/opt/saturate/python";
  SearchOptions o;
  o.knobs = ModelKnobs();
  r.search = RunSearch(o, [&](int id, const TrialRequest& req) -> std::optional<Trial> { return model(id, req); });
  r.trials_run = static_cast<int>(r.search.trials.size());
  r.needs = NeedsOf(r.search);
  std::vector<KnobSpec> final_knobs;
  for (const auto& k : r.search.knobs) final_knobs.push_back(k.spec);
  if (!r.search.recommended.empty()) {
    r.recommended_command = PasteableCommand(r.command, false, final_knobs, r.search.recommended, r.python_dir);
    r.code_changes = CodeChanges(r.search, r.search.recommended, r.machine.gpu_index >= 0);
  }
  return r;
}

}  // namespace sat::tune::testing
