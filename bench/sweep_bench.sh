#!/usr/bin/env bash
# The makespan of a mixed sweep on the CPU, side by side in one run: sequential, GNU parallel -j2 and -j8, and
# `saturate sweep`, which is not told how many runs to pack. Half the runs need a core each (a busy loop); the
# other half mostly wait (5 ms of CPU per 50 ms step, the rest sleeping, as a run waiting on storage or the
# network does). Every run does a fixed amount of work and reports it through `import saturate`.
#
# Usage: bench/sweep_bench.sh [SATURATE]   (default build/saturate)
#   RUNS_PER_KIND (default 6) runs of each kind, each RUN_SECONDS (default 20) long when alone; JOBS (default
#   "2 4 8") the fixed counts. saturate runs twice: first with an empty packing record, then the same sweep again,
#   starting from the degree the first settled on (issue 44). Short runs: RUNS_PER_KIND=8 RUN_SECONDS=2.
#   SEQUENTIAL=0 leaves out the one-after-another row (a third of the time; not the hindsight reference).
#   KEEP_WORK=1 keeps the work folder (printed first): GNU parallel's joblogs (jJ.joblog) and saturate's journals,
#   each run's start and end, to compare one run's duration under both.
#   ROUNDS=R alternates instead (issue 44's check): R rounds of [fixed counts, saturate with an empty record, fixed
#   counts, saturate again from that record], then the fixed counts once more. Each saturate sweep is compared with the
#   best count's mean over the fixed runs just before and just after it: this machine slows by 15-23% within minutes of
#   sustained load, so a single pass, where saturate always runs last, charges it for that drift. SEQUENTIAL is
#   ignored. The summary says in how many rounds each sweep came within 2%.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SAT=$(realpath "${1:-$ROOT/build/saturate}")
N=${RUNS_PER_KIND:-6}
S=${RUN_SECONDS:-20}
JOBS=${JOBS:-2 4 8}
SEQUENTIAL=${SEQUENTIAL:-1}  # the fixed counts GNU parallel runs with; the best of them is the hindsight reference
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
PY=/usr/bin/python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/saturate-sweep-bench.XXXXXX")
if [ "${KEEP_WORK:-0}" = 1 ]; then echo "WORK=$WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
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

declare -A makespan peak sat_cpu
# Each fixed count once, its joblog jJ[.TAG].joblog and its row "parallel -jJ[ TAG]".
fixed_counts() {
  local tag=${1:-} t0
  for j in $JOBS; do
    t0=$(now); parallel --will-cite -j"$j" --joblog "$WORK/j$j${tag:+.$tag}.joblog" <"$WORK/commands"
    makespan[parallel -j$j${tag:+ $tag}]=$(elapsed "$t0" "$(now)")
  done
}
ROUNDS=${ROUNDS:-0}
if [ "$SEQUENTIAL" = 1 ] && [ "$ROUNDS" = 0 ]; then
  t0=$(now); while read -r cmd; do $cmd; done <"$WORK/commands"; makespan[sequential]=$(elapsed "$t0" "$(now)")
fi

# One saturate sweep of the same commands into journal $WORK/NAME.journal; the packing record lives in CACHE (default
# $WORK/cache; empty at the first, what the first learnt at the second: sweep/degree_record.h).
sat_sweep() {
  local name=$1 cache=${2:-$WORK/cache}
  local t0; t0=$(now)
  XDG_CACHE_HOME="$cache" "$SAT" sweep --journal "$WORK/$name.journal" --grid "i=$(seq -s, 1 "$N")" \
    --grid kind=cpu,io -- "$PY" "$WORK/mix.py" --kind '{kind}' --i '{i}' --seconds "$S" --iters "$ITERS" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local sat=$!
  # saturate's own CPU time (its threads, not its runs): utime + stime of /proc/PID/stat, last seen alive.
  local ticks=0 t
  while kill -0 $sat 2>/dev/null; do
    t=$(awk '{print $14 + $15}' /proc/$sat/stat 2>/dev/null || true)
    [ -n "$t" ] && ticks=$t
    sleep 0.5
  done
  wait $sat
  makespan[$name]=$(elapsed "$t0" "$(now)")
  sat_cpu[$name]=$("$PY" -c "print(f'{$ticks / $(getconf CLK_TCK):.2f}')")
  # Most runs alive at once, from the journal's attempts.
  peak[$name]=$("$PY" - "$WORK/$name.journal" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT started_unix, ended_unix FROM attempts").fetchall()
events = sorted([(s, 1) for s, _ in rows] + [(e, -1) for _, e in rows], key=lambda x: (x[0], x[1]))
alive = peak = 0
for _, d in events:
    alive += d; peak = max(peak, alive)
print(peak)
PY
)
}
if [ "$ROUNDS" -gt 0 ]; then
  # F0 S1 F1 S2 F2 S1 F3 ...: every saturate sweep between two sets of fixed runs.
  best_around() {  # the best count's mean over fixed sets $1 and $2
    for j in $JOBS; do "$PY" -c "print((${makespan[parallel -j$j f$1]} + ${makespan[parallel -j$j f$2]}) / 2)"; done |
      sort -g | head -1
  }
  fixed_counts f0
  for r in $(seq 1 "$ROUNDS"); do
    mkdir -m700 "$WORK/cache$r"
    sat_sweep "saturate r$r" "$WORK/cache$r"
    fixed_counts "f$((2 * r - 1))"
    sat_sweep "saturate again r$r" "$WORK/cache$r"
    fixed_counts "f$((2 * r))"
  done
  echo "machine: $(nproc) cores, load before: $LOAD_BEFORE; $((2 * N)) runs of ${S} s alone; busy loop $ITERS iterations / 50 ms"
  printf "| %-5s | %-28s | %9s | %-32s | %16s |\n" round sweep makespan "fixed -j before / after (s)" "vs best fixed -j"
  printf "| %-5s | %-28s | %9s | %-32s | %16s |\n" --- --- ---: --- ---:
  declare -A within
  for r in $(seq 1 "$ROUNDS"); do
    for which in first second; do
      if [ $which = first ]; then name="saturate r$r" a=$((2 * r - 2)) b=$((2 * r - 1)); what="first (empty record)"
      else name="saturate again r$r" a=$((2 * r - 1)) b=$((2 * r)); what="second (from the record)"; fi
      around=$(for j in $JOBS; do printf -- "-j%s %s / %s  " "$j" "${makespan[parallel -j$j f$a]}" "${makespan[parallel -j$j f$b]}"; done)
      ratio=$("$PY" -c "print(f'{${makespan[$name]} / $(best_around $a $b):.3f}')")
      "$PY" -c "import sys; sys.exit(0 if $ratio <= 1.02 else 1)" && within[$which]=$((${within[$which]:-0} + 1))
      printf "| %-5s | %-28s | %7.1f s | %-32s | %15sx |\n" "$r" "$what" "${makespan[$name]}" "$around" "$ratio"
    done
  done
  echo "within 2% of the best fixed -j: first sweep in ${within[first]:-0} of $ROUNDS rounds, second sweep in ${within[second]:-0} of $ROUNDS"
  for r in $(seq 1 "$ROUNDS"); do
    for name in "saturate r$r" "saturate again r$r"; do
      echo "$name: at most ${peak[$name]} runs at once; its own CPU time: ${sat_cpu[$name]} s over ${makespan[$name]} s"
      grep -E "raised|changed|held|not growing|out of memory|starting at|clock" "$WORK/$name.err" | sed 's/^/  /' || true
    done
  done
  exit 0
fi

fixed_counts
sat_sweep saturate
sat_sweep "saturate again"

best_fixed=$(for j in $JOBS; do echo "${makespan[parallel -j$j]}"; done | sort -g | head -1)
echo "machine: $(nproc) cores, load before: $LOAD_BEFORE; $((2 * N)) runs of ${S} s alone; busy loop $ITERS iterations / 50 ms"
printf "| %-20s | %9s | %13s | %17s |\n" "schedule" "makespan" "vs sequential" "vs best fixed -j"
printf "| %-20s | %9s | %13s | %17s |\n" "---" "---:" "---:" "---:"
modes=()
[ "$SEQUENTIAL" = 1 ] && modes+=(sequential)
for j in $JOBS; do modes+=("parallel -j$j"); done
modes+=(saturate "saturate again")
for mode in "${modes[@]}"; do
  "$PY" -c "m, seq, best = ${makespan[$mode]}, ${makespan[sequential]:-0}, $best_fixed; vs = f'{seq / m:>12.2f}x' if seq else f'{\"-\":>13}'; print(f'| {\"$mode\":<20} | {m:>7.1f} s | {vs} | {m / best:>16.3f}x |')"
done
for name in saturate "saturate again"; do
  echo "$name: at most ${peak[$name]} runs at once; its own CPU time: ${sat_cpu[$name]} s over ${makespan[$name]} s"
  grep -E "raised|changed|held|not growing|out of memory|starting at|clock" "$WORK/$name.err" | sed 's/^/  /' || true
  grep -E "^held" "$WORK/$name.out" | sed 's/^/  /' || true
done
