#!/usr/bin/env bash
# Data staging's benchmark, side by side in one run: one sweep of RUNS loader-bound runs (tests/e2e/scripts/
# read_files.py: one file per sample, DataLoader with no workers, a tiny model) on a dataset of many small files
# behind a slow mount (tests/e2e/lib/slowfs.py: DELAY_MS in every read, as a network filesystem's round trip), with
# `--stage-policy never` (every run reads the mount) against `--stage-policy always` (one copy to a local store
# first, then every run reads it) and `auto` (the default: the first run alone on the mount until the storage rule
# judges its first seconds, then the copy, the first run restarted on it where that is sooner). Each sweep gets a
# fresh --stage-dir, so the copy is inside its makespan, and --fresh (no packing record: each policy packs from the
# same knowledge). Prints each makespan, the most runs alive at once, the runs' own read times, never's makespan over
# always's and auto's over always's and never's.
#
#   bench/stage_sweep.sh [SATURATE]   (default build/saturate; needs root and /dev/fuse for the mounts)
#
# Environment: RUNS (8), FILES (400), FILE_KIB (16), DELAY_MS (15), SAMPLES per run (800: each file read twice),
# POLICIES ("never always auto"), SOURCE, where the data is:
#   slowfs         the slow mount through the page cache (its readers wait in state D; the default)
#   slowfs-direct  the slow mount with direct I/O (its readers wait in state S, as on a bucket's FUSE mount)
#   local          the files on local disk, the store's own filesystem
#   tmpfs          the files in /dev/shm (memory; another filesystem than the store's)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SAT=$(realpath "${1:-$ROOT/build/saturate}")
RUNS=${RUNS:-8}
FILES=${FILES:-400}
FILE_KIB=${FILE_KIB:-16}
DELAY_MS=${DELAY_MS:-15}
SAMPLES=${SAMPLES:-800}
POLICIES=${POLICIES:-never always auto}
SOURCE=${SOURCE:-slowfs}
PY=/usr/bin/python3
READ="$ROOT/tests/e2e/scripts/read_files.py"
[ -x "$SAT" ] || { echo "no $SAT: build it first (./scripts/build)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/saturate-stage-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$ROOT/tests/e2e/lib/mounts.bash"  # unmounts before the trap above removes $WORK

"$PY" "$READ" --data "$WORK/src" --make "$FILES" --file-kib "$FILE_KIB" >/dev/null
case $SOURCE in
  slowfs) slowfs_mount "$WORK/src" "$WORK/mnt" "$DELAY_MS" ;;
  slowfs-direct) slowfs_mount "$WORK/src" "$WORK/mnt" "$DELAY_MS" 0 --direct-io ;;
  local) ln -s "$WORK/src" "$WORK/mnt" ;;
  tmpfs)
    SHM=$(mktemp -d /dev/shm/saturate-stage-bench.XXXXXX)
    trap 'rm -rf "$WORK" "$SHM"' EXIT
    cp -r "$WORK/src/." "$SHM"
    ln -s "$SHM" "$WORK/mnt"
    ;;
  *) echo "SOURCE must be slowfs, slowfs-direct, local or tmpfs, not '$SOURCE'" >&2; exit 2 ;;
esac

# One run alone, on the mount and on local disk: what each sweep's runs cost apart from packing.
alone() { "$PY" "$READ" --data "$1" --samples "$SAMPLES" | sed -n 's/^read .* in \([0-9.]*\) s$/\1/p'; }
alone_mnt=$(alone "$WORK/mnt")
alone_local=$(alone "$WORK/src")

now() { date +%s.%N; }
declare -A makespan peak reads where
for policy in $POLICIES; do
  t0=$(now)
  "$SAT" sweep --cpu -q --fresh --journal "$WORK/$policy.journal" --stage "$WORK/mnt" --stage-policy "$policy" \
    --stage-dir "$WORK/store-$policy" --grid "i=$(seq -s, 1 "$RUNS")" \
    -- "$PY" "$READ" --data "$WORK/mnt" --samples "$SAMPLES" --seed '{i}' >"$WORK/$policy.out" 2>&1 ||
    fail "the $policy sweep failed: $(tail -20 "$WORK/$policy.out")"
  makespan[$policy]=$("$PY" -c "print(f'{$(now) - $t0:.1f}')")
  # Most runs alive at once (the journal's attempts), and the runs' own read times (min / median / max).
  peak[$policy]=$("$PY" - "$WORK/$policy.journal" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT started_unix, ended_unix FROM attempts").fetchall()
events = sorted([(s, 1) for s, _ in rows] + [(e, -1) for _, e in rows])
alive = peak = 0
for _, d in events:
    alive += d; peak = max(peak, alive)
print(peak)
PY
)
  reads[$policy]=$(cat "$WORK/$policy".logs/*/attempt-1/stdout.log | "$PY" -c '
import re, statistics, sys
t = sorted(float(m) for m in re.findall(r"^read \d+ samples in ([0-9.]+) s$", sys.stdin.read(), re.M))
print(f"{t[0]:.1f} / {statistics.median(t):.1f} / {t[-1]:.1f} s ({len(t)} runs)" if t else "none")')
  where[$policy]=$(sed -n 's/^data: //p' "$WORK/$policy".logs/*/attempt-1/stdout.log | sort -u | tr '\n' ' ')
done

echo "machine: $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs of $SAMPLES samples," \
  "$FILES files of $FILE_KIB KiB, source $SOURCE$([[ $SOURCE == slowfs* ]] && echo " at $DELAY_MS ms per read")"
echo "one run alone: $alone_mnt s on the mount, $alone_local s on local disk (its own read time)"
printf "| %-6s | %9s | %13s | %-32s |\n" policy makespan "runs at once" "runs' read time min / median / max"
printf "| %-6s | %9s | %13s | %-32s |\n" --- ---: ---: ---
for policy in $POLICIES; do
  printf "| %-6s | %7s s | %13s | %-32s |\n" "$policy" "${makespan[$policy]}" "${peak[$policy]}" "${reads[$policy]}"
done
ratio() { [ -n "${makespan[$1]:-}" ] && [ -n "${makespan[$2]:-}" ] && "$PY" -c "print(f'$1 / $2: {${makespan[$1]} / ${makespan[$2]}:.2f}x')" || true; }
ratio never always
ratio auto always
ratio auto never
for policy in $POLICIES; do echo "$policy: the runs read ${where[$policy]}"; done
for policy in $POLICIES; do
  [ "$policy" = never ] && continue
  grep -hiE "stag|cop(y|ied)|restart" "$WORK/$policy.out" | sed "s/^/  $policy: /" | head -8 || true
done
