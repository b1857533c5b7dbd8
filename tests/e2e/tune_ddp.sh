#!/usr/bin/env bash
# Tune on a distributed job (issue 18): an unmodified DDP script (2 ranks on CPU, gloo, started by
# torch.multiprocessing.spawn) whose --batch-size is each rank's. Every trial reports both ranks; the batch knob
# is per device, and the recommendation states the per-device and the global batch; the script's own flags carry it.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"
DDP=("$PY" "$SATURATE_SOURCE_DIR/tests/e2e/scripts/ddp_train.py" --start spawn --samples 8192 --width 256 --log-every 0)

# One tune: its results.json for the trials and the recommendation, its console for the words. The range starts at
# the script's own 32, so the run that proves --batch-size (step "flags") trains at 64, and its full-training rate at
# 64 is the one the search needs next: no trial repeats it (with 16:64 it proved the flag at 16, a batch nothing else
# needed, and then trained 64 in full again, ~10 s on both cores).
tune_json_and_console ddp --budget 2m30s "${TUNE_LOOSE[@]}" --knob batch_size=32:64 -- "${DDP[@]}" --batch-size 32
file="$WORK/ddp.json"
show_decisions "$file"
jq_py "$file" 'all(t["world_size"] == 2 for t in j["trials"] if t["samples_per_s"]) or sys.exit([t["world_size"] for t in j["trials"]])' ||
  fail "every measured trial should see both ranks"
jq_py "$file" 'j["global_batch"] and j["global_batch"]["world_size"] == 2 and j["global_batch"]["global"] == 2 * j["global_batch"]["per_device"] or sys.exit(j["global_batch"])' ||
  fail "the recommendation should state the per-device and the global batch"
per_device=$(jq_py "$file" 'j["global_batch"]["per_device"]')
expect_contains "$(cat "$WORK/ddp.txt")" "is per device: 2 ranks train on a global batch of $((2 * per_device))"
echo "PASS in $SECONDS s"
