#!/usr/bin/env python3
"""A training script that runs out of GPU memory above a batch size, for tests of saturate's tune and probe.

With a batch size (--batch-size, or the saturate knob "batch_size") above the hidden limit (--limit, else
$OOM_BATCH_LIMIT, default 96) its first step raises the RuntimeError PyTorch's CUDA allocator raises, message
and all. Otherwise it trains a tiny model for --steps steps: logistic regression in pure Python on synthetic
data, so it needs neither torch nor a GPU and starts in milliseconds. Each step also pays --step-overhead-ms
of fixed cost, standing in for launching GPU work, so throughput grows with the batch size up to the limit.

Prints "step N loss L samples/s R step_s S data_s D" every --log-every steps and "done: N steps, S samples,
X samples/s" at the end, like train_images.py.
"""

import argparse
import math
import os
import random
import sys
import time

from support import StepLog, load_helper

FEATURES = 16

# PyTorch 2.x's allocator message (c10/cuda/CUDACachingAllocator.cpp) for an 80 GB GPU that is full.
OOM_MESSAGE = (
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB "
    "is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use. Of the allocated memory "
    "75.92 GiB is allocated by PyTorch, and 1.66 GiB is reserved by PyTorch but unallocated. If reserved but "
    "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
    "fragmentation.  See documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def batches(batch_size, seed):
    """Endless batches of (features, label) pairs from a fixed linear rule with 10% label noise."""
    rng = random.Random(seed)
    truth = [rng.uniform(-1, 1) for _ in range(FEATURES)]
    while True:
        batch = []
        for _ in range(batch_size):
            x = [rng.gauss(0, 1) for _ in range(FEATURES)]
            label = int(sum(w * v for w, v in zip(truth, x)) > 0)
            batch.append((x, label if rng.random() > 0.1 else 1 - label))
        yield batch


def sgd_step(weights, batch, lr):
    """One step of logistic regression; returns the batch's mean loss."""
    grad = [0.0] * FEATURES
    loss = 0.0
    for x, label in batch:
        z = sum(w * v for w, v in zip(weights, x))
        p = 1 / (1 + math.exp(-max(min(z, 30), -30)))
        loss -= math.log(max(p if label else 1 - p, 1e-12))
        for i, v in enumerate(x):
            grad[i] += (p - label) * v
    for i in range(FEATURES):
        weights[i] -= lr * grad[i] / len(batch)
    return loss / len(batch)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--limit", type=int, default=int(os.environ.get("OOM_BATCH_LIMIT", "96")),
                   help="largest batch size that fits (default $OOM_BATCH_LIMIT or 96)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--step-overhead-ms", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--no-helper", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    helper, helper_name = load_helper(args.no_helper)
    batch_size = helper.knob("batch_size", args.batch_size)
    if batch_size < 1 or args.steps < 1:
        sys.exit("oom_at_batch.py: batch size and --steps must be positive")
    print("config: batch_size=%d limit=%d steps=%d helper=%s" % (batch_size, args.limit, args.steps, helper_name),
          flush=True)

    weights = [0.0] * FEATURES
    log = StepLog(args.log_every, helper)
    ready = time.perf_counter()
    for batch in helper.track(batches(batch_size, args.seed)):
        log.waited(time.perf_counter() - ready)
        if batch_size > args.limit:
            raise RuntimeError(OOM_MESSAGE)
        loss = sgd_step(weights, batch, args.lr)
        time.sleep(args.step_overhead_ms / 1000)
        log.step(len(batch), loss)
        if log.steps >= args.steps:
            break
        ready = time.perf_counter()
    log.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
