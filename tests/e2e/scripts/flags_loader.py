"""An unmodified DataLoader script (no import saturate, no placeholder) whose batch size and worker count come from
its own --batch-size and --workers flags; its samples wait on storage (2 ms each, sleeping, not computing), so more
workers help. --decoy parses the same flags but builds the DataLoader with 64 and 0 written into it, so the flags'
values never reach it. Prints the DataLoader's own settings once, then every 10 steps its clock and the samples
so far ("t 12.345 samples 640"), so a run's throughput can be read without saturate. With FLAGS_LOADER_CLI=click
in its environment it parses the same flags with click instead of argparse."""
import argparse
import os
import time

import torch
import torch.nn.functional as F

if os.environ.get("FLAGS_LOADER_CLI") == "click":
    # The same flags through click, as a click script would have them.
    import click

    @click.command()
    @click.option("--batch-size", type=int, default=64)
    @click.option("--workers", type=int, default=0)
    @click.option("--seconds", type=float, default=1e9, help="stop after this long")
    @click.option("--decoy", is_flag=True)
    def cli(**options):
        return options

    args = argparse.Namespace(**cli(standalone_mode=False))
else:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=1e9, help="stop after this long")
    parser.add_argument("--decoy", action="store_true")
    args = parser.parse_args()


class SlowStorage(torch.utils.data.Dataset):
    def __len__(self):
        return 10_000_000

    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((16,), float(i % 7)), i % 2


if args.decoy:
    loader = torch.utils.data.DataLoader(SlowStorage(), batch_size=64, num_workers=0)
else:
    loader = torch.utils.data.DataLoader(SlowStorage(), batch_size=args.batch_size, num_workers=args.workers)
print("loader batch_size=%d num_workers=%d" % (loader.batch_size, loader.num_workers), flush=True)
model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
start = time.monotonic()
samples = 0
for step, (x, y) in enumerate(loader, 1):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    samples += len(y)
    now = time.monotonic()
    if step % 10 == 0:
        print("t %.4f samples %d" % (now, samples), flush=True)
    if now - start > args.seconds:
        break
