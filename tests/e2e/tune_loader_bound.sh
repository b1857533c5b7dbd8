#!/usr/bin/env bash
# A loader-bound setup ends with more than zero workers: a small trainer whose samples wait on storage (2 ms
# each, no CPU), so the loader alone is far below the model; the loader-only scan finds the workers that help,
# and full training confirms them.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

cat >"$WORK/slow_storage.py" <<'PY'
import time
import torch
import torch.nn.functional as F
import saturate


class SlowStorage(torch.utils.data.Dataset):
    """Samples that take 2 ms each to arrive, as from a remote file system: waiting, not computing."""

    def __len__(self):
        return 1_000_000

    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((16,), float(i % 7)), i % 2


batch_size = saturate.knob("batch_size", 32)
workers = saturate.knob("workers", 0)
loader = torch.utils.data.DataLoader(SlowStorage(), batch_size=batch_size, num_workers=workers,
                                     persistent_workers=workers > 0)
model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in saturate.track(loader):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
PY

tune_json lb --budget 3m --trial-budget 12s --knob workers=0:4 -- "$PY" "$WORK/slow_storage.py"
R="$WORK/lb.json"
show_decisions "$R"
workers=$(jq_py "$R" 'j["recommended"]["workers"]')
[ "$workers" -gt 0 ] || fail "a loader-bound setup should end with workers, got $workers"
jq_py "$R" 'j["throughput"]["compute_ceiling"] > 3 * j["throughput"]["loader_ceiling"] or sys.exit("not loader-bound")'
jq_py "$R" 'sum(1 for t in j["trials"] if t["mode"] == "loader") >= 3 or sys.exit("no loader scan")'
# The recommendation trains clearly faster than the script's own setting (0 workers).
jq_py "$R" 'j["throughput"]["recommended"] > 1.5 * j["throughput"]["baseline"] or sys.exit("workers did not help")'
expect_contains "$(cat "$WORK/lb/report.html")" "Loader throughput against workers"
echo ok
