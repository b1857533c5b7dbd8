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
