#include "sweep/sweep_journal.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "sweep/bayes.h"
#include "sweep/plan.h"

namespace sat::sweep {

Result<OpenedJournal> OpenSweepJournal(const Spec& spec, const std::string& path, bool resume,
                                       std::optional<uint64_t> seed_option) {
  auto lock = ControllerLock::Acquire(path);
  if (!lock) return lock.error();
  auto journal = Journal::Open(path);
  if (!journal) return journal.error();
  // The seed a journal was started with wins, so that a resume plans the very same runs.
  auto existing = (*journal)->Sweep();
  if (!existing) return existing.error();
  uint64_t seed = 0;
  if (*existing) {
    seed = (*existing)->seed;
  } else if (spec.saturate.seed) {
    seed = *spec.saturate.seed;
  } else if (seed_option) {
    seed = *seed_option;
  } else {
    seed = (static_cast<uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
  }
  auto runs = ExpandRuns(spec, seed);
  if (!runs) return runs.error();

  // A journal with progress in it is continued only on purpose.
  if (*existing && !resume) {
    auto records = (*journal)->Runs();
    if (!records) return records.error();
    const auto begun =
        std::count_if(records->begin(), records->end(), [](const RunRecord& r) { return r.attempts > 0; });
    if (begun > 0) {
      return UsageError(
          fmt::format("journal {} already holds this sweep's progress ({} of {} runs begun): continue "
                      "it with --resume, or give a new --journal",
                      path, begun, records->size()));
    }
  }
  SweepInfo info{spec.source, SpecHash(spec, seed), seed, spec.metric};
  if (auto s = (*journal)->EnsureRuns(info, *runs); !s) return s.error();
  return OpenedJournal{std::move(*lock), std::move(*journal), seed};
}

Result<nlohmann::json> ProposeRunValues(const Spec& spec, Journal& journal, const std::string& key, int64_t index,
                                        const std::vector<nlohmann::json>& pending, uint64_t seed) {
  if (!spec.metric) return UsageError("method 'bayes' models the sweep's metric: the spec needs 'metric'");
  auto records = journal.Runs();
  if (!records) return records.error();
  std::vector<BayesObservation> finished;
  for (const RunRecord& r : *records) {
    const auto value = r.best_metrics.find(spec.metric->name);
    if (r.state == RunState::kDone && value != r.best_metrics.end() && value->is_number()) {
      finished.push_back(BayesObservation{r.params, value->get<double>()});
    }
  }
  nlohmann::json values =
      ProposeBayes(spec.parameters, finished, pending, spec.metric->goal == Goal::kMaximize, seed, index);
  if (auto s = journal.SetParams(key, values); !s) return s.error();
  return values;
}

std::string DefaultJournalPath(const Spec& spec) {
  if (spec.source == "--grid") return fmt::format("saturate-sweep-{}.journal", SpecHash(spec, 0));
  return JournalPathForSpecFile(spec.source);
}

std::string JournalPathForSpecFile(const std::string& spec_path) {
  std::filesystem::path path(spec_path);
  const std::string ext = path.extension().string();
  if (ext == ".yaml" || ext == ".yml") {
    path.replace_extension(".journal");
  } else {
    path += ".journal";
  }
  return path.string();
}

std::string LogDirFor(const std::string& journal_path) {
  constexpr std::string_view kSuffix = ".journal";
  const std::string_view p(journal_path);
  if (p.size() > kSuffix.size() && p.substr(p.size() - kSuffix.size()) == kSuffix) {
    return std::string(p.substr(0, p.size() - kSuffix.size())) + ".logs";
  }
  return journal_path + ".logs";
}

}  // namespace sat::sweep
