"""Prints only its step times ("step 12 time 0.052"), with a known throughput: a step takes --base-s plus 0.5 ms
per sample of --batch-size, so larger batches are faster per sample. Knows nothing of saturate, never imports torch."""
import argparse
import time

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, required=True)
parser.add_argument("--base-s", type=float, default=0.02)
args = parser.parse_args()
step_s = args.base_s + 0.0005 * args.batch_size
# Steps end on a fixed schedule, so a late wake-up is made up by the next step and the mean step time is exact.
last = deadline = time.perf_counter()
for i in range(10**9):
    deadline += step_s
    time.sleep(max(0.0, deadline - time.perf_counter()))
    now = time.perf_counter()
    print(f"step {i} time {now - last:.6f}", flush=True)
    last = now
