// Test fixture: a loader's activity over a stage, for the fetch/prep split's tests and the local-copy what-if's.
#pragma once

#include "stage/fetch_split.h"

namespace sat::stage::fixtures {

// `rate` samples/s from `processes` loading processes using `cpu` cores, `blocked` of them in state 'D' on average.
inline LoaderActivity Loader(double rate, double processes, double cpu, double blocked) {
  LoaderActivity a;
  a.samples_per_s = rate;
  a.processes = processes;
  a.cpu_cores = cpu;
  a.blocked = blocked;
  return a;
}

}  // namespace sat::stage::fixtures
