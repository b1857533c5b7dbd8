#!/usr/bin/env bash
# A sweep of an unmodified PyTorch script (no `import saturate`, nothing parseable printed) measures each run by
# the training steps the automatic instrumentation reports: the journal holds samples/s. --no-auto and
# `saturate: {auto: false}` give the runs SATURATE_AUTO=0, and then nothing reports steps.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
cd "$WORK"

cat >"$WORK/plain.py" <<'PY'
import argparse, time
import torch
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, required=True)
p.add_argument("--out", default="")
a = p.parse_args()
if a.out:
    import os
    with open(a.out, "w") as f:
        f.write(os.environ.get("SATURATE_AUTO", "unset"))
data = torch.utils.data.TensorDataset(torch.randn(1024, 16), torch.randint(0, 2, (1024,)))
loader = torch.utils.data.DataLoader(data, batch_size=32, shuffle=True)
model = torch.nn.Linear(16, 2)
opt = torch.optim.SGD(model.parameters(), lr=a.lr)
for epoch in range(3):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(0.01)
PY

"$SATURATE" sweep --cpu -q --journal "$WORK/auto.journal" --grid lr=0.1,0.01 -- "$PY" "$WORK/plain.py" --lr '{lr}'
rates=$(journal_query "$WORK/auto.journal" "SELECT throughput_samples_per_s FROM runs ORDER BY idx")
echo "samples/s per run: $rates"
"$PY" - "$rates" <<'PY'
import sys
values = [float(v) for v in sys.argv[1].split()]
assert len(values) == 2, values
# 32 samples per step of a little over 10 ms: at most 3200 samples/s.
assert all(500 < v < 3300 for v in values), values
PY

# Off: from the command line, and from the spec.
"$SATURATE" sweep --cpu -q --no-auto --journal "$WORK/noauto.journal" --grid lr=0.1 -- \
  "$PY" "$WORK/plain.py" --lr '{lr}' --out "$WORK/off.txt"
[ "$(cat "$WORK/off.txt")" = "0" ] || fail "--no-auto: the run saw SATURATE_AUTO=$(cat "$WORK/off.txt")"
rate=$(journal_query "$WORK/noauto.journal" "SELECT throughput_samples_per_s FROM runs")
[ -z "$rate" ] || fail "--no-auto: nothing should report steps, yet the journal has $rate samples/s"
printf 'program: %s\nmethod: grid\nparameters:\n  lr: {value: 0.1}\n  out: {value: %s}\ncommand: [%s, "${program}", "${args}"]\nsaturate:\n  auto: false\n' \
  "$WORK/plain.py" "$WORK/spec.txt" "$PY" >"$WORK/off.yaml"
"$SATURATE" sweep --cpu -q "$WORK/off.yaml" >/dev/null
[ "$(cat "$WORK/spec.txt")" = "0" ] || fail "auto: false: the run saw SATURATE_AUTO=$(cat "$WORK/spec.txt")"
printf 'program: t.py\nmethod: grid\nparameters:\n  lr: {value: 0.1}\nsaturate:\n  auto: maybe\n' >"$WORK/bad.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/bad.yaml"
expect_contains "$ERR" "saturate: 'auto' must be true or false, not 'maybe'"
echo PASS
