#!/usr/bin/env python3
"""What the helper's FLOP count (saturate._flops) costs the one step it counts: a training step of the example
trainer's tiny CNN (or --model resnet18) with and without the count, alternated, and the count itself.

    /usr/bin/python3 bench/flops_count_cost.py [--model tiny|resnet18] [--batch-size 64] [--repeats 20]
"""

import argparse
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "examples"))
from saturate._flops import FlopCount  # noqa: E402
from train_images import build_model  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="tiny")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--image-size", type=int, default=96)
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    model = build_model(args.model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(args.batch_size, 3, args.image_size, args.image_size)
    y = torch.randint(0, 10, (args.batch_size,))

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(3):  # warm-up: allocations, oneDNN primitives
        step()
    plain, counted, fields = [], [], None
    for _ in range(args.repeats):
        t = time.perf_counter()
        step()
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        counting = FlopCount(torch)
        counting.begin()
        step()
        fields = counting.end(args.batch_size)
        counted.append(time.perf_counter() - t)
    med_plain, med_counted = statistics.median(plain), statistics.median(counted)
    print("torch %s, %s, batch %d at %dpx, %d repeats, %d threads" % (
        torch.__version__, args.model, args.batch_size, args.image_size, args.repeats, torch.get_num_threads()))
    print("count: %.4g FLOP per step, %.4g per sample (%s, %s)" % (
        fields["per_step"], fields["per_sample"], fields["method"], fields["dtype"]))
    print("step median: %.2f ms plain, %.2f ms counted (+%.2f ms, %+.1f%%)" % (
        med_plain * 1e3, med_counted * 1e3, (med_counted - med_plain) * 1e3, 100 * (med_counted / med_plain - 1)))


if __name__ == "__main__":
    main()
