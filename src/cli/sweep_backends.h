// Where a sweep's runs go: the backends `saturate: {backend: NAME}` in the spec (or --slurm) chooses from, one row
// each in one table. A backend is a folder beside the local engine (src/slurm/; a Kubernetes one would be src/k8s/)
// that reads only what every backend shares (sweep/backend.h), and one row here: adding one touches nothing else.
#pragma once

#include <string_view>
#include <vector>

#include "sweep/backend.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::cli {

// What the command line adds for a backend.
struct BackendFlags {
  bool cancel = false;  // --cancel: on Ctrl-C the jobs in flight are cancelled without asking
};

struct SweepBackend {
  std::string_view name;         // as `saturate.backend` spells it
  std::string_view description;  // a few words, for the list of known backends
  // The start line's "sweep of SPEC on ..."; empty: this machine's devices, named as they are found.
  std::string_view on;
  // The runs use this machine's devices: --cpu, --gpus and --mps apply, and report.html gets their lanes. Otherwise
  // the spec's section of the backend says what each run asks for.
  bool this_machine = true;
  // Its jobs outlive saturate on Ctrl-C (they are left for --resume) unless cancelled: --cancel applies.
  bool leaves_jobs = false;
  Result<sweep::SweepResult> (*run)(const sweep::Spec&, const sweep::SweepOptions&, const BackendFlags&) = nullptr;
};

// Every backend, "local" first.
const std::vector<SweepBackend>& SweepBackends();

// The backend the spec names (sweep::SaturateOptions::backend: "local" unless it says), or Slurm's with
// `slurm_flag` (--slurm). A name not in the table is a usage error naming it, where the spec gives it
// ("sweep.yaml:7:12: saturate: unknown backend 'k8s'"), and the known ones with what each does.
Result<const SweepBackend*> ChooseBackend(const sweep::Spec& spec, bool slurm_flag);

}  // namespace sat::cli
