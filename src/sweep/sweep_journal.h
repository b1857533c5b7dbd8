// A sweep's journal as every backend and reader finds and opens it: where it goes by default (beside the spec),
// the runs' log folder beside it, opening it to run a sweep (its lock, its seed, its runs recorded), and bayes
// proposals written into it. Shared by the local controller (sweep/controller.h), the Slurm backend
// (slurm/slurm_backend.h) and the commands that only read a journal (`sweep status`, `sweep report`).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/controller_lock.h"
#include "sweep/journal.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

// A sweep's journal opened to run the sweep: the seed it plans with (the journal's, else the spec's, else
// `seed`, else a random one) and its runs recorded (Journal::EnsureRuns). A journal that already holds progress
// is refused (usage error) unless `resume`. The journal's ControllerLock is taken first: a journal another
// controller holds is refused (usage error, naming it). Open attempts are left as they are: the caller requeues or
// adopts them. Shared by the local controller and the Slurm backend (slurm/slurm_backend.h).
struct OpenedJournal {
  std::unique_ptr<ControllerLock> lock;  // held for the controller's life; before the journal is opened
  std::unique_ptr<Journal> journal;
  uint64_t seed = 0;
};
Result<OpenedJournal> OpenSweepJournal(const Spec& spec, const std::string& path, bool resume,
                                       std::optional<uint64_t> seed);

// bayes: the values of the run `key` (planned without values), proposed from the journal's finished runs with
// the runs in flight (`pending`, their values) as constant liars, and journaled. Usage error without a metric.
Result<nlohmann::json> ProposeRunValues(const Spec& spec, Journal& journal, const std::string& key, int64_t index,
                                        const std::vector<nlohmann::json>& pending, uint64_t seed);

// Where a sweep's journal goes by default: beside the spec file, its name with ".journal" for ".yaml"/".yml"
// ("tune/lr.yaml" -> "tune/lr.journal"); for the short form, "saturate-sweep-<plan hash>.journal" in the
// working directory, so that the same command line resumes the same journal.
std::string DefaultJournalPath(const Spec& spec);

// The default journal of the spec file at `spec_path` (what DefaultJournalPath gives for it), for commands that
// read a journal without running the sweep.
std::string JournalPathForSpecFile(const std::string& spec_path);

// The runs' log folder for a journal: "x.journal" -> "x.logs", anything else gets ".logs" appended.
std::string LogDirFor(const std::string& journal_path);

}  // namespace sat::sweep
