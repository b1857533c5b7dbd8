// Preloaded with valgrind_no_rdtscp.c by auto_overhead.py --loops: callgrind runs with --instr-atstart=no through
// Python's start-up and torch's import, and the benchmark calls this (through ctypes) just before the training
// script runs, so that the counts are the script's alone and each run takes seconds instead of minutes.
#include <valgrind/callgrind.h>

void saturate_bench_callgrind_start(void) { CALLGRIND_START_INSTRUMENTATION; }
