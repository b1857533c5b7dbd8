// Preloaded with valgrind_no_rdtscp.c by auto_overhead.py: callgrind runs with --instr-atstart=no through Python's
// start-up and torch's import, and the benchmark calls these (through ctypes) around what it counts, so that the
// counts are the measured code's alone and each run takes seconds instead of minutes.
//   --loops: saturate_bench_callgrind_start() just before the training script runs;
//   --hooks: start once, then zero and dump around each timed loop of bench/hook_instructions.py (one dump file
//            per loop, named by the string given).
#include <valgrind/callgrind.h>

void saturate_bench_callgrind_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void saturate_bench_callgrind_zero(void) { CALLGRIND_ZERO_STATS; }
void saturate_bench_callgrind_dump(const char* name) { CALLGRIND_DUMP_STATS_AT(name); }
