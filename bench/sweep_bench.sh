#!/usr/bin/env bash
# The makespan of a mixed sweep on the CPU, side by side in one run: sequential, GNU parallel -j2 and -j8, and
# `saturate sweep`, which is not told how many runs to pack. Half the runs need a core each (a busy loop); the
# other half mostly wait (5 ms of CPU per 50 ms step, the rest sleeping, as a run waiting on storage or the
# network does). Every run does a fixed amount of work and reports it through `import saturate`.
#
# Usage: bench/sweep_bench.sh [SATURATE]   (default build/saturate)
#   RUNS_PER_KIND (default 6) runs of each kind, each RUN_SECONDS (default 20) long when alone.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SAT=$(realpath "${1:-$ROOT/build/saturate}")
N=${RUNS_PER_KIND:-6}
S=${RUN_SECONDS:-20}
PY=/usr/bin/python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/saturate-sweep-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PYTHONPATH="$ROOT/python"

cat >"$WORK/mix.py" <<'PY'
import argparse, time
import saturate

p = argparse.ArgumentParser()
p.add_argument("--kind", choices=["cpu", "io"], required=True)
p.add_argument("--i", type=int, required=True)
p.add_argument("--seconds", type=float, required=True)
p.add_argument("--iters", type=int, required=True)  # busy-loop iterations in 50 ms of one core
a = p.parse_args()

def burn(n):
    x = 0
    for _ in range(n):
        x += 1
    return x

for _ in saturate.track(range(int(a.seconds / 0.05))):
    if a.kind == "cpu":
        burn(a.iters)
    else:
        burn(a.iters // 10)
        time.sleep(0.045)
PY

# Busy-loop iterations per 50 ms of one core, the best of five tries.
ITERS=$("$PY" - <<'PY'
import time
def burn(n):
    x = 0
    for _ in range(n):
        x += 1
best = 1e9
for _ in range(5):
    t = time.perf_counter(); burn(1_000_000); best = min(best, time.perf_counter() - t)
print(int(1_000_000 * 0.05 / best))
PY
)

# The same commands, interleaved cpu, io, cpu, io, ... (the order saturate's grid gives too).
for i in $(seq 1 "$N"); do
  for kind in cpu io; do
    echo "$PY $WORK/mix.py --kind $kind --i $i --seconds $S --iters $ITERS"
  done
done >"$WORK/commands"

now() { date +%s.%N; }
elapsed() { "$PY" -c "print(f'{$2 - $1:.1f}')"; }

declare -A makespan
t0=$(now); while read -r cmd; do $cmd; done <"$WORK/commands"; makespan[sequential]=$(elapsed "$t0" "$(now)")
for j in 2 8; do
  t0=$(now); parallel --will-cite -j"$j" <"$WORK/commands"; makespan[parallel -j$j]=$(elapsed "$t0" "$(now)")
done
t0=$(now)
"$SAT" sweep --journal "$WORK/bench.journal" --grid "i=$(seq -s, 1 "$N")" --grid kind=cpu,io \
  -- "$PY" "$WORK/mix.py" --kind '{kind}' --i '{i}' --seconds "$S" --iters "$ITERS" \
  >"$WORK/sat.out" 2>"$WORK/sat.err" &
sat=$!
# saturate's own CPU time (its threads, not its runs): utime + stime of /proc/PID/stat, last seen alive.
ticks=0
while kill -0 $sat 2>/dev/null; do
  t=$(awk '{print $14 + $15}' /proc/$sat/stat 2>/dev/null || true)
  [ -n "$t" ] && ticks=$t
  sleep 0.5
done
wait $sat
makespan[saturate]=$(elapsed "$t0" "$(now)")
sat_cpu=$("$PY" -c "print(f'{$ticks / $(getconf CLK_TCK):.2f}')")

# Most runs alive at once under saturate, from the journal's attempts.
peak=$("$PY" - "$WORK/bench.journal" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT started_unix, ended_unix FROM attempts").fetchall()
events = sorted([(s, 1) for s, _ in rows] + [(e, -1) for _, e in rows], key=lambda x: (x[0], x[1]))
alive = peak = 0
for _, d in events:
    alive += d; peak = max(peak, alive)
print(peak)
PY
)

best_fixed=$("$PY" -c "print(min(${makespan[parallel -j2]}, ${makespan[parallel -j8]}))")
echo "machine: $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg); $((2 * N)) runs of ${S} s alone; busy loop $ITERS iterations / 50 ms"
printf "| %-12s | %9s | %13s | %19s |\n" "schedule" "makespan" "vs sequential" "vs best of -j2, -j8"
printf "| %-12s | %9s | %13s | %19s |\n" "---" "---:" "---:" "---:"
for mode in sequential "parallel -j2" "parallel -j8" saturate; do
  "$PY" -c "m, seq, best = ${makespan[$mode]}, ${makespan[sequential]}, $best_fixed; print(f'| {\"$mode\":<12} | {m:>7.1f} s | {seq / m:>12.2f}x | {m / best:>18.2f}x |')"
done
echo "saturate: at most $peak runs at once; its own CPU time: $sat_cpu s over ${makespan[saturate]} s"
grep -E "raised|changed|held|not growing|out of memory" "$WORK/sat.err" | sed 's/^/  /' || true
grep -E "^held" "$WORK/sat.out" | sed 's/^/  /' || true
