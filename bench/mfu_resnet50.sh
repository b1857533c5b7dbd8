#!/usr/bin/env bash
# MFU of an unmodified torchvision ResNet-50 training loop (bench/mfu_resnet50.py) with mixed precision off and on,
# as `saturate probe --trace` measures it on the first GPU: achieved FLOP/s of the full and compute stages, MFU
# against the GPU's dense peak for the precision in use, GPU utilisation (and GPM SM activity where the GPU has it)
# beside it, and the trace's GPU idle / kernel / copy shares. Prints a table for docs/benchmarks.md.
#
# Run on a machine with an NVIDIA GPU: bench/mfu_resnet50.sh [build/saturate] [batch size, default 128]
# KEEP=DIR keeps each probe's probe.json, trace.json and logs under DIR/amp-<off|bf16>.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SATURATE=${1:-$here/build/saturate}
BATCH=${2:-128}
PY=${PYTHON:-python3}  # the interpreter with CUDA torch (on the GPU machines: python3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keep=${KEEP:-$work}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
printf '| amp | precision | full samples/s | full FLOP/s | full MFU | compute FLOP/s | compute MFU | GPU util (full, p50) | SM active (full, p50) | trace: idle / kernels / copies | FLOPs counted by |\n'
printf '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n'
for amp in off bf16; do
  out="$keep/amp-$amp"
  "$SATURATE" probe --budget 3m --trace --out "$out" -- "$PY" "$here/bench/mfu_resnet50.py" --amp "$amp" \
    --batch-size "$BATCH" >"$out.txt" 2>&1 || { cat "$out.txt" >&2; exit 1; }
  "$PY" - "$out/probe.json" "$amp" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
full, compute = j["stages"]["full"], j["stages"]["compute"]
def num(v, fmt):
    return fmt.format(v) if isinstance(v, (int, float)) else "n/a"
def tflops(stage):
    return num((stage["flops_rate"] or {}).get("flops_per_s") and stage["flops_rate"]["flops_per_s"] / 1e12, "{:.1f} T")
def mfu(stage):
    return num((stage["flops_rate"] or {}).get("mfu") and 100 * stage["flops_rate"]["mfu"], "{:.1f}%")
def p50(stage, field):
    s = stage["telemetry"].get(field)
    return num(s and s["p50"], "{:.0f}%")
t = (j.get("trace") or {}).get("summary") or {}
shares = "n/a" if not t.get("gpu") else "%.0f%% / %.0f%% / %.0f%%" % (
    100 * t["idle_share"], 100 * t["kernel_share"], 100 * t["memcpy_share"])
print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
    sys.argv[2], (full["flops_rate"] or {}).get("precision") or "n/a", num(full["samples_per_s"], "{:.0f}"),
    tflops(full), mfu(full), tflops(compute), mfu(compute), p50(full, "gpu_util_pct"),
    p50(full, "gpm_sm_active_pct"), shares, (full["flops"] or {}).get("method", "n/a")))
PYEOF
done
echo
echo "verdicts:"
for amp in off bf16; do grep '^verdict:' "$keep/amp-$amp.txt" | sed "s/^/  amp $amp: /"; done
