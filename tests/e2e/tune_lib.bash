# Shared by the tune end-to-end tests; sourced after lib.bash and probe_lib.bash.
# The stand-in script that runs out of "GPU memory" above a hidden batch size (no torch: starts in milliseconds).
OOM=("$PY" "$SATURATE_SOURCE_DIR/examples/oom_at_batch.py" --steps 100000000 --step-overhead-ms 5)

# For tunes whose checks are which trials ran and what they set, not a rate's last percent: a ±5% interval, where
# tune's default ±3% kept trials running to their cap (about 20-30% of each such test's time), and one reading each
# (--back-to-back off: the readings again that show the machine steady cost two trials a tune, 20-25 s each of these
# tests). tune_objective and tune_slow_steps keep the defaults, so they still run end to end.
TUNE_LOOSE=(--target 0.05 --back-to-back off)

# Runs saturate tune with --json into $WORK/$1.json (results also under $WORK/$1/) and a private cache; the
# remaining arguments go to tune. Progress lines go to $WORK/$1.err.
tune_json() {
  local name=$1; shift
  "$SATURATE" tune --json --out "$WORK/$name" --cache "$WORK/tune.db" "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" || {
    local rc=$?
    echo "saturate tune exited $rc" >&2
    cat "$WORK/$name.err" "$WORK/$name.json" >&2
    return $rc
  }
  cat "$WORK/$name.err"
}

# The same as tune_json, and the console report too, from the one tune: run without --json, its report goes to
# $WORK/$1.txt and its results.json (what --json prints) is copied to $WORK/$1.json. For a test that checks both the
# JSON and the console's words, where a second tune on the cache for the console would re-run the trials that did
# not count, and could recommend something else than the first (tune_ddp did, on a busy machine).
tune_json_and_console() {
  local name=$1; shift
  "$SATURATE" tune --out "$WORK/$name" --cache "$WORK/tune.db" "$@" >"$WORK/$name.txt" 2>"$WORK/$name.err" || {
    local rc=$?
    echo "saturate tune exited $rc" >&2
    cat "$WORK/$name.err" "$WORK/$name.txt" >&2
    return $rc
  }
  cat "$WORK/$name.err"
  cp "$WORK/$name/results.json" "$WORK/$name.json"
}

# Prints every decision of a results.json, for the test log.
show_decisions() { jq_py "$1" '"\n".join(d["text"] for d in j["decisions"])'; }
