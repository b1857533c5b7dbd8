#!/usr/bin/env bash
# `saturate monitor --serve` is a Prometheus scrape target. A real Prometheus (Debian's package), started here on
# loopback with its own storage and a 1 s scrape interval, scrapes two saturate exporters: one watching a training
# command (host series and the command's samples/s), one reading GPUs through the stand-in NVML (dcgm-exporter's
# names and labels, GPM as DCGM_FI_PROF_*). Its query API must return those series, and `promtool check metrics`
# must accept the pages. `probe --serve` and `sweep --serve` show each run's samples/s while it runs. A port in
# use and a malformed address are clear errors. Skips (77) only when Prometheus cannot start at all.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

PROMETHEUS=$(command -v prometheus || true)
PROMTOOL=$(command -v promtool || true)
if [ -z "$PROMETHEUS" ] || [ -z "$PROMTOOL" ]; then
  echo "SKIP: prometheus and promtool are not installed (Debian package prometheus; scripts/install-deps)"
  exit 77
fi

# Waits up to $2 seconds for `$1` (a command) to succeed.
wait_for() {
  local deadline=$((SECONDS + $2))
  until eval "$1" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# A command that trains for up to a minute and reports its steps (8 samples per step, about 400 samples/s).
train=$'import saturate, time\nend = time.time() + 60\ndef batches():\n    while time.time() < end:\n        time.sleep(0.005)\n        yield [0] * 8\nfor b in saturate.track(batches()):\n    time.sleep(0.015)\n'

PORT_TRAIN=$(free_port)
PORT_GPU=$(free_port)
PORT_PROM=$(free_port)

"$SATURATE" monitor --serve "127.0.0.1:$PORT_TRAIN" -lms 500 -- "$PY" -c "$train" \
  >"$WORK/train.out" 2>"$WORK/train.err" &
pids+=($!)
SATURATE_NVML_LIBRARY="$FAKE_NVML" "$SATURATE" monitor --serve "127.0.0.1:$PORT_GPU" -lms 250 \
  >"$WORK/gpu.out" 2>"$WORK/gpu.err" &
pids+=($!)

# Both pages up; the trainer's once it has reported a rate.
wait_for "curl -sf http://127.0.0.1:$PORT_TRAIN/metrics | grep -q '^saturate_process_samples_per_second{'" 30 ||
  fail "no samples/s on the trainer's page: $(curl -s "http://127.0.0.1:$PORT_TRAIN/metrics"; cat "$WORK/train.err")"
wait_for "curl -sf http://127.0.0.1:$PORT_GPU/metrics | grep -q '^DCGM_FI_PROF_SM_ACTIVE{'" 15 ||
  fail "no GPM on the GPU page: $(curl -s "http://127.0.0.1:$PORT_GPU/metrics"; cat "$WORK/gpu.err")"
expect_contains "$(cat "$WORK/train.err")" \
  "saturate: serving Prometheus metrics at http://127.0.0.1:$PORT_TRAIN/metrics"
[ ! -s "$WORK/gpu.out" ] || fail "--serve alone must print nothing per sample: $(head -3 "$WORK/gpu.out")"

curl -sf -D "$WORK/headers" "http://127.0.0.1:$PORT_TRAIN/metrics" >"$WORK/train.prom"
curl -sf "http://127.0.0.1:$PORT_GPU/metrics" >"$WORK/gpu.prom"
expect_contains "$(cat "$WORK/headers")" "Content-Type: text/plain; version=0.0.4; charset=utf-8"
page=$(cat "$WORK/gpu.prom")
expect_contains "$page" "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"
labels='gpu="0",UUID="GPU-fa4e0000-0000-4000-8000-000000000000",pci_bus_id="00000000:18:00.0",device="nvidia0"'
expect_contains "$page" "DCGM_FI_DEV_GPU_UTIL{$labels,modelName=\"Fake NVIDIA H200\",Hostname=\""
expect_contains "$page" "DCGM_FI_PROF_SM_ACTIVE{gpu=\"1\""
expect_contains "$page" "} 0.61"
expect_not_contains "$(cat "$WORK/train.prom")" "DCGM_FI_"

# promtool: the training page as it is. The GPU page's one complaint is dcgm-exporter's own label modelName,
# which promtool's lint would have in snake_case; it is kept for dashboards built on dcgm-exporter.
"$PROMTOOL" check metrics <"$WORK/train.prom" || fail "promtool rejects the page: $(cat "$WORK/train.prom")"
set +e
lint=$("$PROMTOOL" check metrics <"$WORK/gpu.prom" 2>&1)
set -e
echo "$lint"
# dcgm-exporter's own names, kept so dashboards work: its camelCase label, and its energy counter without _total.
others=$(echo "$lint" | grep -v "label names should be written in 'snake_case' not 'camelCase'" |
  grep -v '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter metrics should have "_total" suffix$' | grep -v '^$' || true)
[ -z "$others" ] || fail "promtool finds more than modelName on the GPU page: $others"

# A real Prometheus scrapes both every second.
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: saturate
    static_configs:
      - targets: ["127.0.0.1:$PORT_TRAIN", "127.0.0.1:$PORT_GPU"]
EOF
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PORT_PROM" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
pids+=($!)
if ! wait_for "curl -sf http://127.0.0.1:$PORT_PROM/-/ready" 30; then
  echo "SKIP: prometheus did not start: $(tail -5 "$WORK/prometheus.log")"
  exit 77
fi

# The series Prometheus holds for `$1`, as "labels value" lines.
query() {
  curl -sfG "http://127.0.0.1:$PORT_PROM/api/v1/query" --data-urlencode "query=$1" |
    "$PY" -c 'import json, sys
doc = json.load(sys.stdin)
assert doc["status"] == "success", doc
for r in doc["data"]["result"]:
    print(json.dumps(r["metric"], sort_keys=True), r["value"][1])'
}
for q in saturate_host_cpu_utilization_ratio saturate_host_memory_total_bytes saturate_process_samples_per_second \
  saturate_process_cpu_cores DCGM_FI_DEV_FB_USED DCGM_FI_PROF_PIPE_TENSOR_ACTIVE; do
  wait_for "query $q | grep -q ." 30 || fail "Prometheus has no $q: $(tail -5 "$WORK/prometheus.log")"
done
query 'up{job="saturate"}'
[ "$(query 'up{job="saturate"} == 1' | wc -l)" -eq 2 ] || fail "both targets must be up"

rate=$(query saturate_process_samples_per_second)
echo "$rate"
expect_contains "$rate" "\"command\": \"$PY -c import saturate, time"
"$PY" - "$rate" <<'PY'
import sys
value = float(sys.argv[1].split()[-1])
assert 100 < value < 500, f"samples/s {value}, expected about 400"
PY
gpu=$(query 'DCGM_FI_DEV_FB_USED{gpu="1"}')
echo "$gpu"
expect_contains "$gpu" "\"modelName\": \"Fake NVIDIA H200\""
expect_contains "$gpu" "\"UUID\": \"GPU-fa4e0000-0000-4000-8000-000000000001\""
expect_contains "$gpu" " 2048"

# probe and sweep with --serve: each run's samples/s while it runs (stopped with Ctrl-C once seen).
# Waits until the page at port $1 has a series matching $2, then interrupts process $3.
serve_shows() {
  wait_for "curl -sf http://127.0.0.1:$1/metrics | grep -q '$2'" 40 ||
    fail "no $2 on the page: $(curl -s "http://127.0.0.1:$1/metrics" | grep -v '^#'; cat "$WORK/run.err")"
  curl -sf "http://127.0.0.1:$1/metrics" | grep '^saturate_run_samples_per_second'
  kill -INT "$3"
  wait "$3" || true
}
PORT_RUN=$(free_port)
"$SATURATE" probe --serve "127.0.0.1:$PORT_RUN" --budget 30s -- "$PY" -c "$train" >/dev/null 2>"$WORK/run.err" &
serve_shows "$PORT_RUN" '^saturate_run_samples_per_second{command="probe",stage="full"} [1-9]' $!
PORT_RUN=$(free_port)
(cd "$WORK" && exec "$SATURATE" sweep --serve "127.0.0.1:$PORT_RUN" --cpu -q --grid n=1,2 -- "$PY" -c "$train" '{n}') \
  >/dev/null 2>"$WORK/run.err" &
serve_shows "$PORT_RUN" \
  '^saturate_run_samples_per_second{command="sweep",run="[^"]*",index="[0-9]*",device="cpu"} [1-9]' $!

# The same GPM as monitor fields: values through the stand-in NVML, [N/A] (never 0) on a GPU without GPM.
out=$(SATURATE_NVML_LIBRARY="$FAKE_NVML" "$SATURATE" monitor -i 1 \
  --query-gpu=utilization.gpu,gpm.sm_active,gpm.tensor_active --format=csv,noheader)
[ "$out" = "41 %, 61.0 %, 10.0 %" ] || fail "gpm fields: $out"
out=$(FAKE_NVML_UNSUPPORTED=gpm SATURATE_NVML_LIBRARY="$FAKE_NVML" "$SATURATE" monitor -i 1 \
  --query-gpu=utilization.gpu,gpm.sm_active --format=csv,noheader)
[ "$out" = "41 %, [N/A]" ] || fail "gpm fields on a GPU without GPM: $out"

# A port in use names the address; a malformed one is a usage error.
expect_exit 1 "$SATURATE" monitor --serve "127.0.0.1:$PORT_TRAIN" -c 1
expect_contains "$ERR" "cannot serve on 127.0.0.1:$PORT_TRAIN: Address already in use"
expect_exit 2 "$SATURATE" monitor --serve "localhost:http" -c 1
expect_contains "$ERR" "--serve 'localhost:http': 'http' is not a port"
echo "ok"
