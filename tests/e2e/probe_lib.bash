# Shared by the probe end-to-end tests; sourced after lib.bash.
# One small generated JPEG dataset for all tests (generation is atomic, so concurrent tests are safe).
DATA="${TMPDIR:-/tmp}/saturate-e2e-images-600"
TRAIN=("$PY" "$SATURATE_SOURCE_DIR/examples/train_images.py" --data "$DATA" --images 600 --epochs 100000 --log-every 5)

# Runs saturate probe with JSON output into $WORK/$1.json; the remaining arguments go to probe.
probe_json() {
  local name=$1; shift
  "$SATURATE" probe --json --out "$WORK/$name" "$@" >"$WORK/$name.json" || {
    local rc=$?
    echo "saturate probe exited $rc" >&2
    cat "$WORK/$name.json" >&2
    return $rc
  }
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
  probe_json auto --budget 60s -- "${TRAIN[@]}" "$@" --no-helper --log-every 0
  expect_bottleneck "$WORK/auto.json" "$want"
  jq_py "$WORK/auto.json" 'all(j["stages"][s]["ran"] and j["stages"][s]["samples_per_s"] > 0 for s in ("full", "loader", "compute")) or sys.exit("a stage did not measure: %s" % {s: j["stages"][s].get("skipped_why") for s in j["stages"]})' ||
    fail "the unmodified script's three stages should all have measured"
  grep -q "step " "$WORK/auto/full/stdout.log" && fail "the unmodified run printed step lines" || true
}
