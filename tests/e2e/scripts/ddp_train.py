"""A DDP training script that knows nothing of saturate: 2 ranks on CPU (gloo), a DistributedSampler, a small
model with BatchNorm. Each rank prints its own count, `rank R t=<monotonic s> samples=<cumulative>`, every
--log-every steps: the count tests compare saturate's figures with.

Ranks are started the way real jobs start them:
  --start spawn   torch.multiprocessing.spawn (the parent waits)
  --start fork    torch.multiprocessing.start_processes(start_method="fork"), as notebook launchers and
                  Lightning's ddp_fork do
  --start forkserver  torch.multiprocessing.start_processes(start_method="forkserver")
  --start env     this process is one rank: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT from the
                  environment, as torchrun, accelerate launch and srun leave them (see launch_ranks.py)
  --start rerun   the script runs itself again once per other rank with RANK/WORLD_SIZE/LOCAL_RANK set and is
                  rank 0 itself, as Lightning's ddp strategy does
--slow-rank R --slow-ms X makes rank R's data loading X ms slower per batch: a straggler the others wait for.
"""

import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Samples(Dataset):
    def __init__(self, n, delay_s):
        self.n = n
        self.delay_s = delay_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay_s:
            time.sleep(self.delay_s)
        return torch.full((64,), float(i % 13) / 13), i % 8


def train(rank, world, args):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    delay = args.slow_ms / 1000.0 / args.batch_size if rank == args.slow_rank else 0.0
    data = Samples(args.samples, delay)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, num_workers=args.workers)
    model = torch.nn.Sequential(torch.nn.Linear(64, args.width), torch.nn.BatchNorm1d(args.width), torch.nn.ReLU(),
                                torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
                                torch.nn.Linear(args.width, 8))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    samples = 0
    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            samples += x.shape[0]
            step += 1
            if args.log_every and step % args.log_every == 0:
                # One write per line, so that ranks sharing the output never interleave inside a line.
                sys.stdout.write("rank %d t=%.6f samples=%d\n" % (rank, time.monotonic(), samples))
                sys.stdout.flush()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--start", choices=("spawn", "fork", "forkserver", "env", "rerun"), default="spawn")
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--epochs", type=int, default=100000)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-ms", type=float, default=0.0)
    args = p.parse_args()
    if args.start == "env" or (args.start == "rerun" and "RANK" in os.environ):
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    try:
        if args.start == "spawn":
            mp.spawn(train, args=(args.world, args), nprocs=args.world)
        elif args.start == "rerun":
            import subprocess

            others = [subprocess.Popen([sys.executable] + sys.argv,
                                       env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(args.world)))
                      for r in range(1, args.world)]
            os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE=str(args.world))
            train(0, args.world, args)
            sys.exit(max(p.wait() for p in others))
        else:
            mp.start_processes(train, args=(args.world, args), nprocs=args.world, start_method=args.start)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
