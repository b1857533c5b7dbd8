# Shared by the probe end-to-end tests; sourced after lib.bash.
# One small generated JPEG dataset for all tests (generation is atomic, so concurrent tests are safe).
DATA="${TMPDIR:-/tmp}/saturate-e2e-images-600"
TRAIN=("$PY" "$SATURATE_SOURCE_DIR/examples/train_images.py" --data "$DATA" --images 600 --epochs 100000 --log-every 5)

# Runs saturate probe with JSON output into $WORK/$1.json and its console (stderr) into $WORK/$1.err, shown after;
# the remaining arguments go to probe.
probe_json() {
  local name=$1; shift
  # shellcheck disable=SC2086  # PROBE_PREFIX: words put before saturate (a taskset), split on purpose
  ${PROBE_PREFIX:-} "$SATURATE" probe --json --out "$WORK/$name" "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" || {
    local rc=$?
    cat "$WORK/$name.err" >&2
    echo "saturate probe exited $rc" >&2
    cat "$WORK/$name.json" >&2
    return $rc
  }
  cat "$WORK/$name.err" >&2
}

# Prints a field of a probe.json with a Python expression over `j`.
jq_py() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

expect_bottleneck() {
  local file=$1 want=$2
  local got
  got=$(jq_py "$file" 'j["verdict"]["bottleneck"]')
  echo "verdict: $(jq_py "$file" 'j["verdict"]')"
  [ "$got" = "$want" ] || fail "expected bottleneck '$want', got '$got' in $file"
}

# Probes the example trainer unmodified: no `import saturate` (--no-helper) and no step lines (--log-every 0), so
# only the automatic instrumentation can see inside it. Expects bottleneck $1 and all three stages measured.
# Remaining arguments: the trainer's.
probe_unmodified() {
  local want=$1; shift
  probe_json auto --budget 60s ${PROBE_TARGET:+--target "$PROBE_TARGET"} -- "${TRAIN[@]}" "$@" --no-helper --log-every 0
  expect_bottleneck "$WORK/auto.json" "$want"
  jq_py "$WORK/auto.json" 'all(j["stages"][s]["ran"] and j["stages"][s]["samples_per_s"] > 0 for s in ("full", "loader", "compute")) or sys.exit("a stage did not measure: %s" % {s: j["stages"][s].get("skipped_why") for s in j["stages"]})' ||
    fail "the unmodified script's three stages should all have measured"
  grep -q "step " "$WORK/auto/full/stdout.log" && fail "the unmodified run printed step lines" || true
}

# A script's own samples/s from its `[rank R ]t=T [steps=N ]samples=S` lines (stdout.log of the stage), over the stage's
# steady part as probe.json gives it on the same clock (time.monotonic): per rank, the samples between its last
# line before the window and its last line in it, over the time between them; summed over ranks.
# Usage: own_rate STDOUT_LOG PROBE_JSON
own_rate() {
  "$PY" - "$1" "$2" <<'PY'
import collections, json, re, sys
stage = json.load(open(sys.argv[2]))["stages"]["full"]
t_from, t_to = stage["steady_from_t"], stage["steady_to_t"]
lines = collections.defaultdict(list)
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(?:rank (\d+) )?t=(\S+) (?:steps=\d+ )?samples=(\d+)", line)
    if m:
        lines[int(m.group(1) or 0)].append((float(m.group(2)), int(m.group(3))))
total = 0.0
for rank, points in lines.items():
    before = [p for p in points if p[0] <= t_from] or points[:1]
    inside = [p for p in points if p[0] <= t_to]
    (t0, s0), (t1, s1) = before[-1], inside[-1]
    total += (s1 - s0) / (t1 - t0)
print(total)
PY
}

# Fails unless NAME's full stage (in $WORK/NAME.json) is within 5% of the script's own count in its full stage's
# stdout.log (own_rate), and prints both.
expect_full_near_own() {
  local name=$1 own got
  own=$(own_rate "$WORK/$name/full/stdout.log" "$WORK/$name.json")
  got=$(jq_py "$WORK/$name.json" 'j["stages"]["full"]["samples_per_s"]')
  echo "$name: probe full $got samples/s, the script's own count $own"
  "$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a / b - 1) > 0.05)" "$got" "$own" ||
    fail "$name: probe's full stage $got is not within 5% of the script's own $own"
}

# Fails unless all three of NAME's stages (in $WORK/NAME.json) measured a rate and a bottleneck was named.
expect_three_stages_and_verdict() {
  local file="$WORK/$1.json"
  echo "$1: $(jq_py "$file" 'j["verdict"]')"
  jq_py "$file" 'all(j["stages"][s]["ran"] and (j["stages"][s]["samples_per_s"] or 0) > 0 for s in ("full", "loader", "compute")) or sys.exit({s: (j["stages"][s].get("samples_per_s"), j["stages"][s].get("skipped_why") or j["stages"][s]["outcome"], j["stages"][s].get("notes")) for s in j["stages"]})' ||
    fail "$1: all three stages should measure"
  [ -n "$(jq_py "$file" 'j["verdict"]["bottleneck"] or ""')" ] || fail "$1: no verdict"
}
