#!/usr/bin/env python3
"""A DDP job for `torchrun`, knowing nothing of saturate: the GPU checks' stacks part (bench/gpu_checks.sh). Each rank
trains bench/gpu/small_model.py's model on its share of synthetic 32-px images (DistributedSampler). With fewer GPUs
than ranks (two processes on one GPU, which NCCL refuses) the ranks share the GPU through gloo; on a machine
without CUDA they train on the CPU, one thread each.

Each rank's own count every --print-every steps (after reading the loss, a device sync):
    rank R t=<time.monotonic()> samples=S          (S: that rank's samples since its start)

    torchrun --nproc-per-node 2 bench/gpu/stack_torchrun.py --batch-size 128 --steps 600
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

import small_model


def main():
    p = argparse.ArgumentParser()
    small_model.add_loop_flags(p, steps=600)
    args = p.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    gpus = torch.cuda.device_count()
    if gpus:
        device = torch.device("cuda", local_rank % gpus)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(1)
    dist.init_process_group("nccl" if gpus >= world else "gloo")
    data = small_model.synthetic(8 * args.batch_size * world, 32)
    sampler = torch.utils.data.distributed.DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size, sampler=sampler, drop_last=True,
                                         num_workers=args.workers, pin_memory=bool(gpus))
    model = small_model.build_model(args.model).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device] if gpus else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    step = samples = epoch = 0
    while step < args.steps:
        sampler.set_epoch(epoch)
        epoch += 1
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = small_model.train_step(ddp, optimizer, x, y)
            step += 1
            samples += x.shape[0]
            if step % args.print_every == 0:
                loss.item()
                # One write per line, so that ranks sharing the output never interleave inside a line.
                sys.stdout.write(f"rank {rank} t={time.monotonic():.4f} samples={samples}\n")
                sys.stdout.flush()
            if step >= args.steps:
                break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
