#!/usr/bin/env python3
"""A training script for `accelerate launch` (bench/gpu/small_model.py's ResNet-18 on synthetic 32-px images), knowing
nothing of saturate: the GPU checks' stacks part (bench/gpu_checks.sh). Written against accelerate 1.x
(Accelerator(), prepare(), backward()).

Its own count every --print-every steps, summed over the processes (after reading the loss, a device sync):
    step N t=<time.monotonic()> samples=S

    accelerate launch --num_processes 1 --num_machines 1 --mixed_precision no --dynamo_backend no \
        bench/gpu/stack_accelerate.py --batch-size 128 --steps 600
"""

import argparse
import time

import torch
from accelerate import Accelerator

import small_model


def main():
    p = argparse.ArgumentParser()
    small_model.add_loop_flags(p, steps=600)
    args = p.parse_args()

    accelerator = Accelerator()
    model = small_model.build_model(args.model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = torch.utils.data.DataLoader(small_model.synthetic(8 * args.batch_size, 32), batch_size=args.batch_size,
                                         shuffle=True, drop_last=True, num_workers=args.workers)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    step = samples = 0
    while step < args.steps:
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            samples += x.shape[0] * accelerator.num_processes
            if step % args.print_every == 0 and accelerator.is_main_process:
                loss_value = loss.item()
                print(f"step {step} t={time.monotonic():.4f} samples={samples} loss={loss_value:.3f}", flush=True)
            if step >= args.steps:
                break
    accelerator.end_training()


if __name__ == "__main__":
    main()
