// Test fixture: a loader's activity over a stage, for the storage rule's tests (datastore/storage_wait.h).
#pragma once

#include <optional>

#include "datastore/storage_wait.h"

namespace sat::datastore::fixtures {

// `rate` samples/s from `processes` loading processes using `cpu` cores, `blocked` of them in state 'D' on average.
inline LoaderActivity Loader(double rate, double processes, double cpu, double blocked) {
  LoaderActivity a;
  a.samples_per_s = rate;
  a.processes = processes;
  a.cpu_cores = cpu;
  a.blocked = blocked;
  return a;
}

// The rule's evidence for `loader` on a `mount`, with `cold` reads, on a machine of `cores`.
inline StorageEvidence Evidence(const LoaderActivity& loader, MountKind mount,
                                std::optional<ColdReadComparison> cold = std::nullopt, unsigned cores = 0) {
  StorageEvidence e;
  e.loader = loader;
  e.mount = mount;
  e.cold = std::move(cold);
  e.cores = cores;
  return e;
}

}  // namespace sat::datastore::fixtures
