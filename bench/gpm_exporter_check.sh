#!/usr/bin/env bash
# On an NVIDIA GPU: GPM activity beside utilization.gpu for a running ResNet-50 (AMP off, then on), and the
# `--serve` page beside nvidia-smi for the same GPU. Prints what it sees; docs/benchmarks.md records it.
#
#   bench/gpm_exporter_check.sh [build/saturate] [GPU index]
#
# Needs python3 with torch and torchvision (CUDA builds) and nvidia-smi. On a GPU before Hopper the gpm.* columns
# read [N/A] and the page has no DCGM_FI_PROF_* series: that is the expected result there, not a failure.
set -euo pipefail
SATURATE=${1:-build/saturate}
GPU=${2:-0}
PY=${PYTHON:-python3}
WORK=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill -INT "$server" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# ResNet-50 on synthetic 224x224 images, batch 64, SGD; --amp for bf16 autocast. Runs until killed.
cat >"$WORK/resnet.py" <<'PY'
import sys, torch, torchvision
amp = "--amp" in sys.argv
model = torchvision.models.resnet50().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(64, 3, 224, 224, device="cuda")
y = torch.randint(0, 1000, (64,), device="cuda")
while True:
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
PY

fields=utilization.gpu,gpm.sm_active,gpm.sm_occupancy,gpm.tensor_active,gpm.dram_bw_util,memory.used,power.draw
for amp in "" --amp; do
  echo "== ResNet-50 ${amp:-fp32}: saturate monitor -i $GPU --query-gpu=$fields (1 s samples after 20 s warm-up)"
  CUDA_VISIBLE_DEVICES=$GPU CUDA_DEVICE_ORDER=PCI_BUS_ID "$PY" "$WORK/resnet.py" $amp &
  trainer=$!
  sleep 20
  "$SATURATE" monitor -i "$GPU" --query-gpu="$fields" --format=csv -l 1 -c 10
  kill "$trainer"
  wait "$trainer" 2>/dev/null || true
done

echo "== the --serve page beside nvidia-smi, while ResNet-50 (bf16) trains"
CUDA_VISIBLE_DEVICES=$GPU CUDA_DEVICE_ORDER=PCI_BUS_ID "$PY" "$WORK/resnet.py" --amp &
trainer=$!
sleep 20
"$SATURATE" monitor -i "$GPU" --serve 127.0.0.1:0 2>"$WORK/serve.err" &
server=$!
for _ in $(seq 50); do
  url=$(grep -o 'http://[^ ]*/metrics' "$WORK/serve.err" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
sleep 3
curl -s "$url" | grep '^DCGM_FI_' || true
nvidia-smi -i "$GPU" --query-gpu=utilization.gpu,memory.used,memory.free,power.draw,temperature.gpu,clocks.sm \
  --format=csv
kill "$trainer"
wait "$trainer" 2>/dev/null || true
