#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>

namespace sat::sim {

namespace {

struct TimeUnit {
  const char* name;
  double seconds;
};

TimeUnit UnitFor(double longest_s) {
  if (longest_s >= 2 * 3600) return {"h", 3600};
  if (longest_s >= 120) return {"min", 60};
  return {"s", 1};
}

}  // namespace

std::string FormatTable(const std::vector<PolicyResult>& results, Policy baseline) {
  double longest = 0;
  const PolicyResult* base = nullptr;
  for (const PolicyResult& r : results) {
    longest = std::max(longest, r.makespan_s);
    if (r.policy == baseline && base == nullptr) base = &r;
  }
  TimeUnit unit = UnitFor(longest);
  std::string makespan_title = fmt::format("makespan ({})", unit.name);
  std::string out = fmt::format("{:<12} {:>14}", "policy", makespan_title);
  if (base != nullptr) out += fmt::format(" {:>8}", "speedup");
  out += fmt::format(" {:>10} {:>9} {:>8} {:>7} {:>6} {:>11}\n", "GPU-hours", "occupancy", "runs/GPU", "max/GPU",
                     "OOMs", "completed");
  for (const PolicyResult& r : results) {
    out += fmt::format("{:<12} {:>14.2f}", PolicyName(r.policy), r.makespan_s / unit.seconds);
    if (base != nullptr) {
      out += r.makespan_s > 0 ? fmt::format(" {:>7.2f}x", base->makespan_s / r.makespan_s) : fmt::format(" {:>8}", "-");
    }
    out += fmt::format(" {:>10.1f} {:>8.1f}% {:>8.2f} {:>7} {:>6} {:>11}\n", r.gpu_hours, 100 * r.mean_occupancy,
                       r.mean_runs_per_busy_gpu, r.max_runs_on_a_gpu, r.oom_events,
                       fmt::format("{}/{}", r.runs_completed, r.runs_total));
  }
  for (const PolicyResult& r : results) {
    if (r.held_degree.empty()) continue;
    std::vector<std::string> held;
    for (const auto& [shape, degree] : r.held_degree) held.push_back(fmt::format("{} {}", shape, degree));
    out += fmt::format("{} held runs per GPU: {}\n", PolicyName(r.policy), fmt::join(held, ", "));
  }
  return out;
}

nlohmann::json ToJson(const SimConfig& config, const PolicyParams& params, const std::vector<PolicyResult>& results) {
  nlohmann::json doc;
  doc["cluster"] = {{"gpus", config.gpus},
                    {"gpus_per_node", config.gpus_per_node},
                    {"gpu_mem_gib", config.gpu_mem_gib},
                    {"cpu_cores_per_node", config.cpu_cores_per_node},
                    {"gpu_capacity", config.gpu_capacity},
                    {"switch_overhead", config.switch_overhead},
                    {"oom_retry_s", config.oom_retry_s}};
  doc["params"] = {{"fixed_k", params.fixed_k},
                   {"free_fraction", params.free_fraction},
                   {"max_runs_per_gpu", params.max_runs_per_gpu},
                   {"margin", params.margin},
                   {"min_gain", params.min_gain},
                   {"cpu_limit", params.cpu_limit},
                   {"shards_per_gpu", params.shards_per_gpu},
                   {"slurm_margin", params.slurm_margin}};
  doc["results"] = nlohmann::json::array();
  for (const PolicyResult& r : results) {
    doc["results"].push_back({{"policy", PolicyName(r.policy)},
                              {"makespan_s", r.makespan_s},
                              {"gpu_hours", r.gpu_hours},
                              {"mean_occupancy", r.mean_occupancy},
                              {"mean_runs_per_busy_gpu", r.mean_runs_per_busy_gpu},
                              {"max_runs_on_a_gpu", r.max_runs_on_a_gpu},
                              {"oom_events", r.oom_events},
                              {"runs_completed", r.runs_completed},
                              {"runs_total", r.runs_total},
                              {"held_degree", r.held_degree}});
  }
  return doc;
}

}  // namespace sat::sim
