#include "cli/sweep_backends.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/sweep_slurm.h"
#include "sweep/controller.h"

namespace sat::cli {

const std::vector<SweepBackend>& SweepBackends() {
  static const std::vector<SweepBackend> kBackends = {
      {.name = "local",
       .description = "this machine's GPUs or CPU cores, packed by measurement",
       .on = "",
       .this_machine = true,
       .leaves_jobs = false,
       .run = [](const sweep::Spec& spec, const sweep::SweepOptions& o,
                 const BackendFlags&) { return sweep::RunSweep(spec, o); }},
      {.name = "slurm",
       .description = "Slurm jobs sized from measurement, as saturate.slurm says",
       .on = "Slurm",
       .this_machine = false,
       .leaves_jobs = true,
       .run = [](const sweep::Spec& spec, const sweep::SweepOptions& o, const BackendFlags& flags) {
         return RunSweepOnSlurm(spec, o, flags.cancel);
       }},
  };
  return kBackends;
}

Result<const SweepBackend*> ChooseBackend(const sweep::Spec& spec, bool slurm_flag) {
  const std::vector<SweepBackend>& all = SweepBackends();
  auto find = [&](std::string_view name) -> const SweepBackend* {
    auto it = std::find_if(all.begin(), all.end(), [&](const SweepBackend& b) { return b.name == name; });
    return it == all.end() ? nullptr : &*it;
  };
  const std::string& name = spec.saturate.backend;
  const SweepBackend* chosen = find(name);
  if (!chosen) {
    std::vector<std::string> known;
    for (const SweepBackend& b : all) known.push_back(fmt::format("{} ({})", b.name, b.description));
    const std::string& at = spec.saturate.backend_at.empty() ? spec.source : spec.saturate.backend_at;
    return UsageError(fmt::format("{}: saturate: unknown backend '{}'; known: {}", at, name, fmt::join(known, ", ")));
  }
  return slurm_flag ? find("slurm") : chosen;
}

}  // namespace sat::cli
