#!/usr/bin/env bash
# `monitor --serve` under hostile clients on 127.0.0.1 (issue 30): slowloris connections sending a header byte a
# second, a few hundred idle connections, and 2 MiB header blocks, all at once for 15 s, while a scraper scrapes
# every 0.2 s: every scrape is answered within 2 s, and saturate's resident memory grows by less than 50 MB. Then
# a sweep with --serve under `ulimit -n 512` while 460 idle connections are held against it: every run succeeds
# (the exporter holds at most its cap, and none of the descriptors kept for the runs). Loopback only; every client
# loop is bounded in count and time (tests/e2e/lib/hostile_client.py).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
HOSTILE="$SATURATE_SOURCE_DIR/tests/e2e/lib/hostile_client.py"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# A sweep's runs keep their descriptors: 460 idle connections against its exporter, under a limit of 512. It runs
# beside the attack on the monitor (started just before it, checked after it): the two share nothing but loopback, and
# one after the other they were 27 s of waiting, the attack's 15 s and the idle clients' 12 s.
sweep_under_idle_clients() {
  local port sweep
  port=$(free_port)
  (
    ulimit -n 512
    cd "$WORK" && exec "$SATURATE" sweep --serve "127.0.0.1:$port" --cpu -q --json --grid n=1,2,3,4,5,6 -- \
      "$PY" -c 'import sys, time; time.sleep(3); print("done", sys.argv[1])' '{n}'
  ) >"$WORK/sweep.json" 2>"$WORK/sweep.err" &
  sweep=$!
  for _ in $(seq 40); do
    curl -sf -m 1 "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && break
    sleep 0.25
  done
  "$PY" "$HOSTILE" "$port" 12 --idle 460 --no-scrape >"$WORK/idle_clients.txt" 2>&1 || true
  wait "$sweep"
}

PORT=$(free_port)
"$SATURATE" monitor --serve "127.0.0.1:$PORT" -lms 500 >"$WORK/monitor.out" 2>"$WORK/monitor.err" &
monitor=$!
pids+=("$monitor")
for _ in $(seq 60); do
  curl -sf -m 2 "http://127.0.0.1:$PORT/metrics" | grep -q '^saturate_host_' && break
  sleep 0.5
done
curl -sf -m 2 "http://127.0.0.1:$PORT/metrics" >/dev/null || fail "the exporter did not come up: $(cat "$WORK/monitor.err")"

before=$(rss_kib "$monitor")
sweep_under_idle_clients &
idle_sweep=$!
pids+=("$idle_sweep")
set +e
report=$("$PY" "$HOSTILE" "$PORT" 15 --slow 20 --idle 300 --large 100 2>&1)
rc=$?
set -e
after=$(rss_kib "$monitor")
echo "$report"
echo "saturate RSS: $((before / 1024)) MiB before, $((after / 1024)) MiB after"
[ "$rc" -eq 0 ] || fail "scrapes failed or were late under attack: $report"
kill -0 "$monitor" 2>/dev/null || fail "saturate monitor ended under attack: $(cat "$WORK/monitor.err")"
[ $((after - before)) -lt $((50 * 1024)) ] || fail "RSS grew by $(((after - before) / 1024)) MiB (at most 50)"
expect_contains "$report" "slow: 20 connections, 20 closed by the server"
curl -sf -m 2 "http://127.0.0.1:$PORT/metrics" | grep -q '^saturate_host_' || fail "no page after the attack"

set +e
wait "$idle_sweep"
rc=$?
set -e
cat "$WORK/idle_clients.txt"
[ "$rc" -eq 0 ] || fail "the sweep failed (exit $rc) with idle exporter clients: $(tail -5 "$WORK/sweep.err")"
expect_not_contains "$(cat "$WORK/sweep.err" "$WORK/sweep.json")" "Too many open files"
"$PY" - "$WORK/sweep.json" <<'PY'
import json, sys
counts = json.load(open(sys.argv[1]))["counts"]
assert counts["done"] == 6 and counts["failed"] == 0 and counts["retrying"] == 0, counts
PY
echo "ok"
