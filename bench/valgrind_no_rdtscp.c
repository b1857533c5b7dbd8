// Preloaded under valgrind by auto_overhead.py: importing torch loads libhwy, whose static initialiser measures its
// timer with RDTSCP, an instruction valgrind 3.19 cannot run (SIGILL). This wraps that one function,
// hwy::platform::TimerResolution(), and returns a resolution of one tick without running it; nothing the benchmark
// measures calls it.
#include <stdint.h>
#include <valgrind/valgrind.h>

uint64_t I_WRAP_SONAME_FNNAME_ZU(libhwyZdsoZd1, _ZN3hwy8platform15TimerResolutionEv)(void) { return 1; }
